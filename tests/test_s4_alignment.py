"""The engine against contract section 4 read literally (every link set, rules 1-5), on Russian words of up to
9 tokens."""

import random

import pytest
from bruteforce import brute_align, exhaustive_align
from bruteforce import chunk_count as brute_chunks
from helpers import STAGE_ORDERS, WORDS, counted
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.metric.engine.alignment import (
    Alignment,
    align,
    chunk_count,
    chunk_runs,
    crossings,
)
from scorer.metric.engine.counting import stage_counts
from scorer.metric.engine.links import counts_of, type_graph
from scorer.metric.meteor import MeteorParams, meteor_tokens


@st.composite
def texts(draw, min_size=0, max_size=9):
    """Two texts drawn from a few of the words, so that links and repeats abound."""
    pool = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5, unique=True))
    side = st.lists(st.sampled_from(pool), min_size=min_size, max_size=max_size)
    return draw(side), draw(side)


def engine(cand, ref, matcher, stages) -> Alignment:
    return align(cand, ref, matcher.key_functions(stages))


@settings(max_examples=300, deadline=None)
@given(texts(max_size=6), st.sampled_from(STAGE_ORDERS))
def test_the_two_brute_forces_agree(matcher, pair, stages):
    """Every link set listed (up to 6 tokens) and every link set walked position by position."""
    cand, ref = pair
    assert exhaustive_align(cand, ref, matcher, stages) == brute_align(cand, ref, matcher, stages)


@settings(max_examples=500, deadline=None)
@given(texts(), st.sampled_from(STAGE_ORDERS))
def test_alignment_equals_brute_force(matcher, pair, stages):
    cand, ref = pair
    expected = exhaustive_align(cand, ref, matcher, stages)
    if not cand or not ref:
        assert expected == []
        return
    found = engine(cand, ref, matcher, stages)
    assert found.exact
    assert list(found.links) == expected
    assert found.chunks == brute_chunks(expected)


@settings(max_examples=100, deadline=None)
@given(texts(min_size=8, max_size=9), st.sampled_from(STAGE_ORDERS))
def test_alignment_of_long_texts_equals_brute_force(matcher, pair, stages):
    cand, ref = pair
    found = engine(cand, ref, matcher, stages)
    assert found.exact and list(found.links) == exhaustive_align(cand, ref, matcher, stages)


@settings(max_examples=300, deadline=None)
@given(texts(), st.sampled_from([0.0, 0.5]), st.sampled_from([1.0, 3.0]))
def test_scores_equal_brute_force_in_both_modes(matcher, pair, gamma, beta):
    cand, ref = pair
    params = MeteorParams(gamma=gamma, beta=beta)
    expected = exhaustive_align(cand, ref, matcher, params.stages)
    m, chunks, t, r = len(expected), brute_chunks(expected), len(cand), len(ref)
    if m == 0:
        want = 0.0
    else:
        p, rec = m / t, m / r
        want = p * rec / (0.9 * p + 0.1 * rec) * (1 - gamma * (chunks / m) ** beta)
    assert meteor_tokens(cand, ref, matcher, params).score == pytest.approx(want, abs=1e-12)


def test_contract_example_links_by_lemma_and_synonym(matcher):
    # лечу-лечить (lemma) and мчаться-лететь (synonym): m = 2 whatever the order of either text.
    for ref in (["лететь", "лечить"], ["лечить", "лететь"]):
        found = engine(["лечу", "мчаться"], ref, matcher, STAGE_ORDERS[0])
        assert sorted((i, ref[j], s) for i, j, s in found.links) == [(0, "лечить", 1), (1, "лететь", 2)]
    assert meteor_tokens(["лечу", "мчаться"], ["лететь", "лечить"], matcher).score == 1.0


def test_rule_2_fewest_crossings_before_displacement(matcher):
    # кот кот vs кот: rule 1 gives one exact link; no crossings either way, the chunk count is 1
    # either way, |0-0| < |1-0|: the first кот is linked.
    assert engine(["кот", "кот"], ["кот"], matcher, STAGE_ORDERS[0]).links == ((0, 0, 0),)
    # дом кот vs кот дом кот: linking кот to ref 0 crosses дом-дом; ref 2 does not.
    assert engine(["дом", "кот"], ["кот", "дом", "кот"], matcher, STAGE_ORDERS[0]).links == (
        (0, 1, 0),
        (1, 2, 0),
    )


def test_rule_3_fewest_chunks_before_displacement(matcher):
    # кот дом vs кот X кот дом: both кот links are crossing-free; (0,2),(1,3) is one chunk,
    # (0,0),(1,3) two chunks although its displacement (0 + 2) is smaller than (2 + 2).
    found = engine(["кот", "дом"], ["кот", "стал", "кот", "дом"], matcher, STAGE_ORDERS[0])
    assert found.links == ((0, 2, 0), (1, 3, 0)) and found.chunks == 1


def test_rule_5_lexicographic_tie_break(matcher):
    # кот кот vs кот X X кот... two cands, one ref: (0,0) and (1,0) tie on rules 2-4? no: |1-0| > |0-0|.
    # Symmetric case: one cand between two refs at equal distance: ref 0 and ref 2 around cand 1.
    found = engine(["стал", "кот"], ["кот", "стал", "кот"], matcher, ("exact",))
    # (0,1) is forced; кот->0 crosses it, кот->2 does not.
    assert found.links == ((0, 1, 0), (1, 2, 0))
    found = engine(["кот"], ["кот", "кот"], matcher, ("exact",))
    assert found.links == ((0, 0, 0),)


def test_crossings_and_chunks_helpers():
    assert crossings([(0, 1), (1, 0)]) == 1
    assert crossings([(0, 0), (1, 1), (2, 2)]) == 0
    assert crossings([(0, 2), (1, 1), (2, 0)]) == 3
    assert chunk_count([]) == 0
    assert chunk_count([(0, 0, 0), (1, 1, 0), (2, 5, 1)]) == 2
    assert chunk_runs([(0, 0, 0), (1, 1, 0), (2, 5, 1)]) == [[(0, 0, 0), (1, 1, 0)], [(2, 5, 1)]]
    # a run needs both positions to advance by one: the candidate's alone or the reference's alone breaks it
    assert chunk_runs([(0, 1, 0), (1, 2, 2), (2, 4, 0), (4, 5, 1), (5, 6, 0), (6, 0, 0)]) == [
        [(0, 1, 0), (1, 2, 2)],
        [(2, 4, 0)],
        [(4, 5, 1), (5, 6, 0)],
        [(6, 0, 0)],
    ]
    assert chunk_runs([(3, 3, 0)]) == [[(3, 3, 0)]] and chunk_runs([]) == []
    for links in ([(0, 1, 0), (1, 2, 2), (2, 4, 0), (4, 5, 1), (5, 6, 0), (6, 0, 0)], [(1, 0, 0), (2, 1, 0)]):
        assert len(chunk_runs(links)) == chunk_count(links) == brute_chunks(links)


def test_penalty_by_hand(matcher):
    # кот->3, сидит->2, на->0, окне->1: chunks {кот}, {сидит}, {на окне} = 3, m = 4.
    s = meteor_tokens(
        ["кот", "сидит", "на", "окне"], ["на", "окне", "сидит", "кот"], matcher, MeteorParams(gamma=0.5)
    )
    assert (s.matches, s.chunks) == (4, 3)
    assert s.score == pytest.approx(1 - 0.5 * (3 / 4) ** 3, abs=1e-15)


def test_long_repetitive_answer_scores_exactly(matcher):
    words = ["да"] * 2000
    s = meteor_tokens(words, words, matcher, MeteorParams(gamma=0.5))
    assert (s.matches, s.chunks, s.exact_search) == (2000, 1, True)


def test_budget_fallback_keeps_rule_1_and_is_deterministic(matcher):
    rng = random.Random(7)
    cand = [rng.choice(["да", "нет", "кот"]) for _ in range(120)]
    ref = [rng.choice(["да", "нет", "кот"]) for _ in range(100)]
    stages = STAGE_ORDERS[0]
    keys = matcher.key_functions(stages)
    cut = align(cand, ref, keys, budget=50)
    assert not cut.exact
    assert cut == align(cand, ref, keys, budget=50)
    assert len(cut.links) == sum(min(cand.count(w), ref.count(w)) for w in set(cand))
    assert len({j for _, j, _ in cut.links}) == len(cut.links)
    assert all(cand[i] == ref[j] and s == 0 for i, j, s in cut.links)  # equal words: the exact stage (0)
    none_found = align(cand, ref, keys, budget=0)
    assert not none_found.exact and len(none_found.links) == len(cut.links)
    s = meteor_tokens(cand, ref, matcher, MeteorParams(gamma=0.5, budget=50))
    assert not s.exact_search and s.matches == len(cut.links)


# --- regressions: cases that engine mutants got wrong while the random tests passed
# --------------------------


def test_the_lower_bound_for_partly_exact_types_keeps_the_best_branch(matcher):
    cand = "зеленый зеленый зеленый зеленый дом зеленый дом дом зеленый".split()
    ref = "зеленый зеленый дом зеленый дом дом".split()
    found = engine(cand, ref, matcher, ("exact", "lemma", "synonym"))
    assert found.chunks == 1 and list(found.links) == brute_align(
        cand, ref, matcher, ("exact", "lemma", "synonym")
    )


def test_the_starting_bound_keeps_the_tie_break(matcher):
    cand, ref = "на пить пить пить пить".split(), "на пить стал на пить пить".split()
    found = engine(cand, ref, matcher, ("exact", "lemma", "synonym"))
    assert [(i, j) for i, j, _ in found.links][-2:] == [(3, 4), (4, 5)]
    assert list(found.links) == brute_align(cand, ref, matcher, ("exact", "lemma", "synonym"))


def test_exact_after_synonym_keeps_its_links_for_a_word_without_synsets(matcher):
    stages = ("synonym", "exact")
    keys = matcher.key_functions(stages)
    assert matcher.synsets["окне"] == frozenset()  # no synset: only the exact stage can link it
    graph = type_graph(counts_of(["окне"] * 8), counts_of(["окне"] * 5), keys)
    assert stage_counts(graph, 2) == [0, 5]
    assert meteor_tokens(["окне"] * 8, ["окне"] * 5, matcher, MeteorParams(stages=stages)).matches == 5
    graph = type_graph(counts_of(["стали"] * 8), counts_of(["стали"] * 5), keys)
    assert stage_counts(graph, 2) == [5, 0]  # стали has synsets (стать, сталь): the synonym stage comes first


# Cases a deeper random search found where engine mutants differ from the brute force while the tests above
# passed (scripts/mutation.py --deep); each is checked against the brute force and its counts by hand.
DEEP_CASES = [
    # the flow's weight base must exceed every count: 3 lemma links (кот, мчаться, лететь), no synonym
    (
        ["кот", "кот", "мчаться", "дом", "недозрелый", "кот", "лететь", "дом"],
        ["кот", "лететь", "лететь", "пила", "мчаться", "пила"],
        ("lemma", "synonym"),
        [3, 0],
    ),
    # a partly exact type (стали) and its lower-bound table: 1 exact, 1 lemma, rule 2-5 choose the positions
    (["стали", "коты", "коты", "стали"], ["стал", "стали", "стал"], ("exact", "lemma"), [1, 1]),
    (
        ["пила", "зеленый", "пила"],
        ["пить", "пить", "зеленый", "зеленый", "пить", "дом", "мчаться", "пить"],
        ("exact", "synonym", "lemma"),
        [1, 2, 0],
    ),
    (
        ["стал", "выпивать", "выпивать", "стал", "стал", "выпивать", "выпивать", "выпивать", "стали"],
        ["стали", "лечу", "лечу", "стали", "коты", "стали", "лечу"],
        ("exact", "synonym", "lemma"),
        None,
    ),
    (
        ["лечить"] * 6 + ["лечу"],
        ["лечить", "лечить", "лечу", "лечить", "лечу", "лечу"],
        ("exact", "lemma", "synonym"),
        [4, 2, 0],
    ),
    # 12 against 9 tokens: the lower-bound table of a partly exact type (лечу, лететь) and its base cases
    (
        [
            "лечу",
            "лететь",
            "лечу",
            "лететь",
            "лететь",
            "лечу",
            "лететь",
            "лететь",
            "лететь",
            "лететь",
            "лететь",
            "лечу",
        ],
        ["лечу", "лечу", "лечу", "лечу", "лечу", "лететь", "лечу", "лететь", "лететь"],
        ("exact", "lemma", "synonym"),
        [7, 2, 0],
    ),
]


@pytest.mark.parametrize("cand,ref,stages,counts", DEEP_CASES)
def test_cases_found_by_the_deeper_search(matcher, cand, ref, stages, counts):
    expected = exhaustive_align(cand, ref, matcher, stages)
    found = engine(cand, ref, matcher, stages)
    assert found.exact and list(found.links) == expected and found.chunks == brute_chunks(expected)
    keys = matcher.key_functions(stages)
    got = stage_counts(type_graph(counts_of(cand), counts_of(ref), keys), len(stages))
    assert got == [sum(1 for _, _, s in expected if s == k) for k in range(len(stages))]
    if counts is not None:
        assert got == counts


def test_the_budget_counts_search_nodes_one_by_one(matcher):
    """A search that needs exactly 984 nodes: with 983 it stops inside the exact search (after the greedy
    descent found its first alignment), keeps the best found and says the result is not proven."""
    cand = ["нет", "кот", "нет", "нет", "кот", "кот", "да", "да", "кот", "нет"]
    ref = ["кот", "кот", "да", "да", "нет", "нет", "да", "да", "кот"]
    stages = STAGE_ORDERS[0]
    keys = matcher.key_functions(stages)
    proven, cut = align(cand, ref, keys, budget=984), align(cand, ref, keys, budget=983)
    assert proven.exact and not cut.exact
    assert proven.links == cut.links == tuple(exhaustive_align(cand, ref, matcher, stages))


@pytest.mark.parametrize(
    "cand, ref, fallback",
    [
        # a star centred on the reference side: x y against b b
        (["выпивать", "пила"], ["пить", "пить"], ((0, 1, 2), (1, 0, 1))),
        # and on the candidate side: b b against x y
        (["пить", "пить"], ["выпивать", "пила"], ((0, 1, 1), (1, 0, 2))),
    ],
)
def test_a_star_keeps_its_budget_fallback(matcher, cand, ref, fallback):
    """x y against b b, y-b by lemma (пила: пить), x-b by synonym (выпивать ~ пить): rule 1 gives 2 links.
    With no search budget the alignment is read off rule 1's flow, the star's links by stage (the lemma link
    first): 2 chunks, METEOR 1 * (1 - 0.5 * (2 / 2)^3) = 0.5. The search: 1 chunk, 1 - 0.5 / 8 = 0.9375."""
    stages = ("exact", "lemma", "synonym")
    cut = meteor_tokens(cand, ref, matcher, MeteorParams(gamma=0.5, beta=3.0, budget=0))
    assert (cut.matches, cut.chunks, cut.exact_search, cut.score) == (2, 2, False, 0.5)
    assert align(cand, ref, matcher.key_functions(stages), budget=0).links == fallback
    found = meteor_tokens(cand, ref, matcher, MeteorParams(gamma=0.5, beta=3.0))
    assert (found.matches, found.chunks, found.exact_search, found.score) == (2, 1, True, 0.9375)


def test_the_fallback_alignment_satisfies_rule_1_on_its_own(matcher):
    """With no budget, the alignment read off rule 1's flow, on the pure path as on the compiled one."""
    stages = ("exact", "lemma", "synonym")
    keys = matcher.key_functions(stages)
    cand, ref = ["мчаться", "лечу"], ["лететь", "лететь"]
    fallback = align(cand, ref, keys, budget=0)
    assert fallback == Alignment(((0, 1, 2), (1, 0, 1)), 2, False)
    assert [sum(1 for *_, s in fallback.links if s == k) for k in range(3)] == counted(
        cand, ref, matcher, stages
    )
    assert counted(cand, ref, matcher, stages) == [0, 1, 1]
