"""The stage alignment equals a brute-force search over all matchings (SPEC section 4)."""
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.alignment import best_stage_matching, crossings, maximum_matching_size
from scorer.meteor import MeteorParams, align, count_chunks, meteor_tokens, Match

from bruteforce import best_stage, brute_align


@st.composite
def stage_graphs(draw):
    n_c, n_r = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    n_fixed = draw(st.integers(0, 2))
    cand_pos = draw(st.permutations(range(n_c + n_fixed)))
    ref_pos = draw(st.permutations(range(n_r + n_fixed)))
    fixed = list(zip(cand_pos[:n_fixed], ref_pos[:n_fixed]))
    free_c, free_r = sorted(cand_pos[n_fixed:]), sorted(ref_pos[n_fixed:])
    if draw(st.booleans()):  # token-like: compatibility by equal labels (twins abound)
        lab_c = {i: draw(st.integers(0, 2)) for i in free_c}
        lab_r = {j: draw(st.integers(0, 2)) for j in free_r}
        options = {i: tuple(j for j in free_r if lab_r[j] == lab_c[i]) for i in free_c}
    else:  # lemma-like: any bipartite graph
        options = {i: tuple(j for j in free_r if draw(st.booleans())) for i in free_c}
    return {i: o for i, o in options.items() if o}, fixed


@settings(max_examples=600, deadline=None)
@given(stage_graphs())
def test_stage_matching_equals_brute_force(graph):
    options, fixed = graph
    result = best_stage_matching(options, fixed)
    assert result.exact
    expected = best_stage(options, fixed) if options else []
    assert sorted(result.pairs) == sorted(expected)
    assert len(result.pairs) == maximum_matching_size(options)


def test_crossings():
    assert crossings([(0, 1), (1, 0)]) == 1
    assert crossings([(0, 0), (1, 1), (2, 2)]) == 0
    assert crossings([(0, 2), (1, 1), (2, 0)]) == 3


def test_repeated_word_is_aligned_monotonically():
    n = 2000
    result = best_stage_matching({i: tuple(range(n)) for i in range(n)})
    assert result.exact and result.pairs == [(i, i) for i in range(n)]


def test_fewer_references_than_candidates():
    result = best_stage_matching({i: tuple(range(1000)) for i in range(2000)})
    assert result.exact and result.pairs == [(i, i) for i in range(1000)]


def test_crossings_with_earlier_stages_count():
    # fixed (1, 1): cand 0 may take ref 0 or 2; (0, 2) would cross (1, 1).
    assert best_stage_matching({0: (0, 2)}, [(1, 1)]).pairs == [(0, 0)]
    # cand 2 may take ref 0 or 2; (2, 0) crosses (1, 1), so ref 2 wins despite order
    assert best_stage_matching({2: (0, 2)}, [(1, 1)]).pairs == [(2, 2)]


def test_displacement_breaks_crossing_ties():
    # one ref, cands 0 and 3 both fit ref 2: no crossings either way; |3-2| < |0-2|
    assert best_stage_matching({0: (2,), 3: (2,)}).pairs == [(3, 2)]


WORDS = ["стали", "стал", "стать", "сталью", "сталь", "зеленый", "зелёные", "недозрелый", "незрелый",
         "дом", "дома", "домов", "кот", "кота", "на"]
phrases = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6)


@settings(max_examples=300, deadline=None)
@given(phrases, phrases)
def test_whole_alignment_equals_brute_force(matcher, cand, ref):
    cand = [w.replace("ё", "е") for w in cand]
    ref = [w.replace("ё", "е") for w in ref]
    stages = ("exact", "lemma", "synonym")
    matches, exact = align(cand, ref, matcher, stages)
    assert exact
    expected = brute_align(cand, ref, matcher, stages)
    assert sorted((m.cand, m.ref, m.stage) for m in matches) == expected
    s = meteor_tokens(cand, ref, matcher, MeteorParams(gamma=0.5))
    assert s.chunks == count_chunks([Match(i, j, st_) for i, j, st_ in expected])


def test_long_repetitive_answer_scores_exactly(matcher):
    words = ["да"] * 2000
    s = meteor_tokens(words, words, matcher, MeteorParams(gamma=0.5))
    assert (s.matches, s.chunks, s.exact_search) == (2000, 1, True)
    s = meteor_tokens(["да", "нет"] * 600, ["нет", "да"] * 600, matcher, MeteorParams(gamma=0.5))
    assert s.matches == 1200 and 0 < s.score < 1


def test_budget_fallback_is_a_deterministic_maximum_matching():
    options = {i: tuple(range(0, 60, 2)) if i % 2 else tuple(range(1, 60, 2)) for i in range(60)}
    fixed = [(100, 100)]
    cut = best_stage_matching(options, fixed, node_budget=5)
    assert not cut.exact and len(cut.pairs) == maximum_matching_size(options) == 60
    assert len({j for _, j in cut.pairs}) == 60 and all(j in options[i] for i, j in cut.pairs)
    assert best_stage_matching(options, fixed, node_budget=5) == cut
    flow_only = best_stage_matching(options, fixed, node_budget=0)
    assert not flow_only.exact and len(flow_only.pairs) == 60
