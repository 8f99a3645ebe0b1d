"""Hand-computed METEOR values for small Russian cases, one per rule of contract section 4; and the cases that
mutants of the engine survived elsewhere (the branch-and-bound's re-check, ``best_variant`` with the penalty
and several variants, the alignment a gamma-0 sentence keeps, the compiled key table's array growth on long
texts, the words of a turn whose keys both engines look up), each on both engines where both are there."""

import pymorphy3
import pytest
from bruteforce import chunk_count as brute_chunks
from bruteforce import exhaustive_align
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.metric import morphology
from scorer.metric.engine import accelerator, alignment, counting, links
from scorer.metric.engine.accelerator import Engine
from scorer.metric.matcher import Matcher
from scorer.metric.meteor import MeteorParams, MeteorRu, best_variant, best_variants, meteor_ru, meteor_tokens
from scorer.metric.text import tokenise

EXACT = MeteorParams(stages=("exact",))
NO_SYN = MeteorParams(stages=("exact", "lemma"))
PENALTY = MeteorParams(gamma=0.5, beta=3.0)


def score(cand, ref, matcher, params=MeteorParams()):
    return meteor_tokens(tokenise(cand), tokenise(ref), matcher, params, with_alignment=True)


def test_exact_fmean_by_hand(matcher):
    # m=1, t=3, r=1: P=1/3, R=1, Fmean = PR / (0.9P + 0.1R) = (1/3) / 0.4 = 5/6
    s = score("На картинке кот.", "Кот.", matcher)
    assert (s.matches, s.cand_len, s.ref_len) == (1, 3, 1)
    assert s.score == pytest.approx(5 / 6, abs=1e-12)
    # m=3, t=3, r=4: P=1, R=3/4, Fmean = 0.75 / (0.9 + 0.075) = 10/13
    assert score("На картинке кот", "На картинке рыжий кот", matcher).score == pytest.approx(
        10 / 13, abs=1e-12
    )


def test_identical_text_scores_one(matcher):
    assert score("Кот сидит на окне.", "кот  СИДИТ на окне", matcher).score == 1.0


def test_lemma_stage_takes_a_maximum_matching(matcher):
    # стали {сталь, стать}, стал {стать} vs стать {стать}, сталью {сталь}: a greedy left-to-right
    # scan pairs стали-стать and strands стал; the maximum matching pairs both.
    s = score("стали стал", "стать сталью", matcher)
    assert s.matches == 2 and s.score == 1.0
    assert [(m.cand, m.ref, m.stage) for m in s.alignment] == [(0, 1, "lemma"), (1, 0, "lemma")]
    assert s.chunks == 2
    assert score("стали стал", "стать сталью", matcher, EXACT).score == 0.0


def test_lemma_uses_all_parses(matcher):
    # "дома" parses as дом (noun) and дома (adverb); "дом" shares the first.
    assert score("дома", "дом", matcher).score == 1.0


def test_an_abbreviation_is_not_expanded(matcher):
    # pymorphy3 reads «к» as an abbreviation of «как», «т» of «так» and «то», «д» of «далее»: no lemma link
    assert morphology.lemmas("к") == {"к"} and morphology.lemmas("т") == {"т"}
    assert "как" in morphology.analyzer().normal_forms("к")  # what the rule leaves out
    assert score("к", "как", matcher).score == 0.0
    # «и т. д.» against «и так далее»: «и» alone links (m=1, t=3, r=3): Fmean = (1/3)(1/3) / (1/3) = 1/3
    s = score("и т. д.", "и так далее", matcher)
    assert [(m.cand, m.ref, m.stage) for m in s.alignment] == [(0, 0, "exact")]
    assert s.score == pytest.approx(1 / 3, abs=1e-12)
    # a word with an abbreviation's parse keeps its own lemma; other words keep every parse's
    assert score("сша", "США", matcher).score == 1.0 and score("могут", "может", matcher).score == 1.0


def test_synonym_stage_uses_ruwordnet(matcher):
    # ЗЕЛЕНЫЙ and НЕДОЗРЕЛЫЙ share synset 900101-A; reached through the lemmas of inflected forms.
    s = score("Зелёные яблоки", "недозрелые яблоки", matcher)
    assert s.score == 1.0
    assert {(m.cand, m.stage) for m in s.alignment} == {(0, "synonym"), (1, "exact")}
    assert score("Зелёные яблоки", "недозрелые яблоки", matcher, NO_SYN).score == pytest.approx(
        0.5 * 0.5 / (0.9 * 0.5 + 0.1 * 0.5), abs=1e-12
    )


def test_synonym_needs_a_shared_synset(matcher):
    assert score("зеленый", "красный", matcher).score == 0.0


def test_stages_run_in_order_exact_first(matcher):
    # "стал" could match "стать" by lemma, but the exact "стал" is taken first.
    s = score("стал", "стать стал", matcher)
    assert [(m.ref, m.stage) for m in s.alignment] == [(1, "exact")]


def test_fragmentation_penalty_by_hand(matcher):
    # кот->3, сидит->2, на->0, окне->1: chunks {кот}, {сидит}, {на окне} = 3, m = 4.
    s = score("кот сидит на окне", "на окне сидит кот", matcher, PENALTY)
    assert (s.matches, s.chunks) == (4, 3)
    assert s.penalty == pytest.approx(0.5 * (3 / 4) ** 3, abs=1e-15)
    assert s.score == pytest.approx(1 - 0.5 * (3 / 4) ** 3, abs=1e-15)
    # default gamma = 0: no penalty
    assert score("кот сидит на окне", "на окне сидит кот", matcher).score == 1.0


def test_one_chunk_penalty(matcher):
    s = score("рыжий кот спит", "рыжий кот спит", matcher, PENALTY)
    assert s.chunks == 1 and s.score == pytest.approx(1 - 0.5 * (1 / 3) ** 3, abs=1e-15)


def test_no_match_or_no_tokens_gives_zero(matcher):
    assert score("собака", "кот", matcher).score == 0.0
    assert score("", "кот", matcher).score == 0.0
    assert score("?!", "кот", matcher).score == 0.0


def test_best_variant_takes_the_maximum(matcher):
    refs = [tokenise(r) for r in ["Кот.", "На картинке рыжий кот."]]
    # against "кот": m=1, t=3, r=1 -> 5/6; against the long form: m=3, t=3, r=4 -> 10/13
    index, s = best_variant(tokenise("На картинке кот"), refs, matcher)
    assert index == 0 and s.score == pytest.approx(5 / 6, abs=1e-12)
    # against "кот": m=1, t=4, r=1 -> 10/13; against the long form: all 4 match -> 1
    index, s = best_variant(tokenise("рыжий кот на картинке"), refs, matcher)
    assert index == 1 and s.score == 1.0
    index, s = best_variant(tokenise("кот"), refs, matcher)
    assert index == 0 and s.score == 1.0


def test_best_variant_skips_tokenless_variants_and_ties_go_first(matcher):
    assert best_variant(["кот"], [[], ["кот"], ["кот"]], matcher)[0] == 1
    assert best_variant(["пес"], [["кот"], [], ["мышь"]], matcher)[0] == 0
    with pytest.raises(ValueError):
        best_variant(["кот"], [[], []], matcher)


def test_meteor_ru_api(rwn):
    assert meteor_ru("На картинке кот.", ["Кот.", "На картинке рыжий кот."], thesaurus=rwn) == pytest.approx(
        5 / 6
    )
    assert meteor_ru("зеленый", "недозрелый", thesaurus=rwn) == 1.0
    assert meteor_ru("зеленый", "недозрелый", synonyms=False) == 0.0
    assert meteor_ru("зеленый", "недозрелый") == 1.0  # RUWORDNET_PATH, loaded once and kept
    assert meteor_ru("зеленый", ["недозрелый"], thesaurus=str(rwn_path())) == 1.0


def rwn_path():
    import os

    return os.environ["RUWORDNET_PATH"]


def test_score_tokens_defaults_and_rwn_none_without_synonyms(matcher):
    metric = MeteorRu(matcher=matcher)
    s = metric.score_tokens(["кот", "спит"], ["кот", "спал", "дома"])
    # defaults: alpha 0.9, gamma 0 (no chunks computed), no alignment returned; m = 2 (exact + lemma)
    assert (s.matches, s.chunks, s.alignment, s.penalty) == (2, None, (), 0.0)
    assert s.score == (2 / 2) * (2 / 3) / (0.9 * (2 / 2) + 0.1 * (2 / 3))
    fields = dict(MeteorRu(MeteorParams(stages=("exact", "lemma")), matcher=matcher).signature_fields())
    assert fields["rwn"] == "none" and fields["stages"] == "exact+lemma"


def test_score_tokens_takes_any_sequence(matcher):
    # the compiled core once required lists: a tuple of tokens raised TypeError
    metric = MeteorRu(MeteorParams(stages=("exact", "lemma")), matcher=matcher)
    as_lists = metric.score_tokens(["кот", "спит"], ["кот", "спал", "дома"])
    as_tuples = metric.score_tokens(("кот", "спит"), ("кот", "спал", "дома"))
    assert as_tuples == as_lists and as_tuples.matches == 2


def test_the_penalty_needs_the_chunk_count():
    from scorer.metric.meteor import score_from_counts

    assert score_from_counts(1, 1, 2, 2, PENALTY).penalty == pytest.approx(0.5 * 1.0**3)
    assert score_from_counts(1, None, 2, 2, MeteorParams()).penalty == 0.0
    with pytest.raises(ValueError, match="chunk count"):
        score_from_counts(1, None, 2, 2, PENALTY)


def test_metric_object_states_its_signature(matcher):
    metric = MeteorRu(MeteorParams(gamma=0.5), matcher=matcher)
    fields = dict(metric.signature_fields())
    assert fields["align"] == "rules1-5-bnb50000" and fields["gamma"] == "0.5"
    assert fields["stages"] == "exact+lemma+synonym" and fields["rwn"].startswith("rwn-xml-")
    assert (
        dict(MeteorRu(MeteorParams(stages=("exact",)), matcher=matcher).signature_fields())["morph"] == "none"
    )
    assert dict(MeteorRu(matcher=matcher).signature_fields())["align"] == "rule1-count"
    # without synonyms (--no-synonyms) the lemma stage still uses the morphology, and the signature says which
    lemma_only = dict(MeteorRu(MeteorParams(stages=("exact", "lemma")), matcher=matcher).signature_fields())
    assert lemma_only["morph"].startswith("pymorphy3-") and "+dicts-ru-" in lemma_only["morph"]
    assert lemma_only["rwn"] == "none"
    with pytest.raises(ValueError, match="needs a thesaurus"):
        MeteorRu(MeteorParams(), thesaurus=None, matcher=None)


def test_alpha_weights_precision_and_recall(matcher):
    # m=1, t=1, r=4: P=1, R=1/4
    for alpha in (0.0, 0.5, 0.9, 1.0):
        s = score("кот", "на картинке рыжий кот", matcher, MeteorParams(alpha=alpha))
        assert s.score == pytest.approx(0.25 / (alpha * 1 + (1 - alpha) * 0.25), abs=1e-12)


WORDS = [
    "стали",
    "стал",
    "стать",
    "сталью",
    "сталь",
    "зеленый",
    "зелёные",
    "недозрелый",
    "незрелый",
    "дом",
    "дома",
    "домов",
    "кот",
    "кота",
    "и",
    "на",
    "изменять",
    "изменить",
]
phrases = st.lists(st.sampled_from(WORDS), min_size=0, max_size=7)


@settings(max_examples=200, deadline=None)
@given(phrases, phrases, st.sampled_from([0.0, 0.5, 1.0]))
def test_score_in_unit_interval(matcher, cand, ref, gamma):
    s = meteor_tokens(cand, ref, matcher, MeteorParams(gamma=gamma))
    assert 0.0 <= s.score <= 1.0
    assert s.matches <= min(len(cand), len(ref))


@settings(max_examples=200, deadline=None)
@given(phrases)
def test_self_match_is_perfect(matcher, words):
    expected = 1.0 if words else 0.0
    assert meteor_tokens(words, words, matcher).score == expected


@settings(max_examples=200, deadline=None)
@given(phrases, phrases)
def test_balanced_fmean_is_symmetric(matcher, a, b):
    params = MeteorParams(alpha=0.5, stages=("exact", "lemma"))
    assert meteor_tokens(a, b, matcher, params).score == pytest.approx(
        meteor_tokens(b, a, matcher, params).score, abs=1e-15
    )


def _brute_best(cand, variants, matcher, params) -> tuple[int, float]:
    """The best variant by the brute force (``tests/bruteforce.py``) and the contract's formula; variants
    without tokens skipped, the first of equal scores kept."""
    best: tuple[int, float] | None = None
    for k, ref in enumerate(variants):
        if not ref:
            continue
        links = exhaustive_align(cand, ref, matcher, params.stages)
        m, score = len(links), 0.0
        if m:
            p, r = m / len(cand), m / len(ref)
            fmean = p * r / (params.alpha * p + (1 - params.alpha) * r)
            score = fmean * (1 - params.gamma * (brute_chunks(links) / m) ** params.beta)
        if best is None or score > best[1]:
            best = (k, score)
    assert best is not None
    return best


def test_best_variants_is_best_variant_turn_by_turn(matcher):
    from scorer.metric.meteor import best_variants

    cands = [["кот", "спит"], [], ["собака", "лает"], ["мы", "летим", "домой"]]
    variants = [
        [["кошка", "спит"], ["кот", "спал"]],
        [["да"]],
        [[], ["пес", "лает"]],
        [["мы", "мчимся", "домой"]],
    ]
    for params in (MeteorParams(), MeteorParams(gamma=0.5, beta=3.0)):
        found = best_variants(cands, variants, matcher, params)
        # against the brute force: every alignment listed, the best variant the first of the highest scores
        expected = [_brute_best(c, v, matcher, params) for c, v in zip(cands, variants)]
        assert [k for k, _ in found] == [k for k, _ in expected]
        assert [s.score for _, s in found] == pytest.approx([s for _, s in expected], abs=1e-12)
        assert found == [best_variant(c, v, matcher, params) for c, v in zip(cands, variants)]
    assert [(k, s.matches) for k, s in best_variants(cands, variants, matcher)] == [
        (1, 2),
        (0, 0),
        (1, 2),
        (0, 3),
    ]


def test_the_lemma_sets_are_those_of_pymorphy3s_parse_objects():
    """The analyser makes plain tuples, not ``Parse`` objects: every word's normal forms are the same."""
    reference = pymorphy3.MorphAnalyzer(lang="ru", probability_estimator_cls=None)
    words = tokenise(
        "стали мыла печь пила три косой лук коса ели Ёлки бегущие хрустальный zzz 12 "
        "пёс спим синее ааааабвг прекраснейшие перевыполнившими кот-то к т е д г сша мвд"
    )
    for word in words:
        # contract section 4: an Abbr parse gives its normal form only when it is the token itself
        expected = {
            p.normal_form.replace("ё", "е")
            for p in reference.parse(word)
            if p.normal_form.replace("ё", "е") == word or "Abbr" not in p.tag
        }
        assert morphology.lemmas(word) == frozenset(expected), word
    assert morphology.lemmas("стали") == {"стать", "сталь"}


# --- cases that mutants of the engine survived elsewhere, on both engines where both are there ----------


ENGINES = ["pure", "compiled"]


READ = tuple(
    "читаю читаешь читает читаем читаете читают читал читала читало читали читай читайте читать "
    "читающий читающая читая читавший".split()
)


def make_engine(kind: str) -> Engine:
    if kind == "pure":
        return Engine("pure Python", links, counting, alignment)
    if not accelerator.compiled():
        pytest.skip("the compiled engine is not built here (no C compiler): the pure engine's tests cover it")
    built = accelerator._built()[0]
    return Engine(
        "compiled (Cython)",
        *(built[m] for m in ("links", "counting", "alignment", "id_counts")),
        formula=built["formula"],
    )


@pytest.fixture(params=ENGINES)
def metric_of(request, matcher):
    engine = make_engine(request.param)
    return lambda params: MeteorRu(params, matcher=matcher, engine=engine)


def test_the_branch_and_bound_recheck_keeps_the_two_chunk_alignment(metric_of):
    # «дом кот сыр» is found as two chunks (кот сыр | дом): a bound that adds delta twice prunes it
    s = metric_of(PENALTY).score_tokens(
        tokenise("кот пес сыр и дом кот пес дом пес"), tokenise("дом кот сыр"), with_alignment=True
    )
    assert (s.matches, s.chunks) == (3, 2)
    # P = 3/9, R = 1, Fmean = (1/3) / (0.3 + 0.1) = 5/6; penalty 0.5 (2/3)^3 = 4/27
    assert s.score == pytest.approx(5 / 6 * (1 - 4 / 27), abs=1e-12)
    assert s.score == pytest.approx(0.709877, abs=1e-6)


def test_best_variant_with_the_penalty_takes_the_higher_score_not_the_more_links(metric_of):
    metric = metric_of(PENALTY)
    cand = tokenise("мама мыла раму утром")
    variants = [tokenise("мыла мама"), tokenise("утром раму мыла мама")]
    # variant 0: m=2, P=1/2, R=1, Fmean 10/11, 2 chunks of 2 links: 0.5 penalty -> 5/11 = 0.4545
    # variant 1: m=4, Fmean 1, 4 chunks of 4 links: 0.5 penalty -> 0.5
    index, s = metric.best_variant(cand, variants, with_alignment=True)
    assert index == 1 and s.score == 0.5 and (s.matches, s.chunks) == (4, 4)
    assert metric.score_tokens(cand, variants[0]).score == pytest.approx(5 / 11, abs=1e-12)
    # the same variants the other way round: still the higher score, and its own index
    index, s = metric.best_variant(cand, variants[::-1], with_alignment=True)
    assert index == 0 and s.score == 0.5
    # equal scores: the first such variant
    index, s = metric.best_variant(cand, [variants[1], variants[0], variants[1]])
    assert index == 0 and s.score == 0.5


def test_best_variant_with_the_penalty_keeps_the_best_when_a_lower_index_aligned_after_scores_less(metric_of):
    """With the penalty, variants are aligned from the highest F-mean bound down: a variant of a lower index
    aligned after the best one, with a lower score, does not replace it (an equal score would)."""
    metric = metric_of(PENALTY)
    cand = tokenise("мама мыла раму утром")
    variants = [tokenise("мыла мама"), tokenise("утром раму мыла мама")]
    # bounds: variant 1 Fmean 1, variant 0 Fmean 10/11, so variant 1 is aligned first: 4 chunks of 4 links,
    # 0.5 penalty -> 0.5. Variant 0's bound 10/11 is above 0.5, so it is aligned too: 2 chunks of 2 links,
    # 0.5 penalty -> 5/11 = 0.4545, lower: variant 1 stays the best
    index, s = metric.best_variant(cand, variants)
    assert (index, s.score, s.matches, s.chunks) == (1, 0.5, 4, 4)
    turns = best_variants([cand], [variants], metric.matcher, PENALTY, engine=metric.engine)
    assert [(k, s.score, s.matches, s.chunks) for k, s in turns] == [(1, 0.5, 4, 4)]


@pytest.mark.parametrize("kind", ENGINES)
def test_every_word_of_a_turn_with_an_answer_is_analysed_on_both_engines(kind, rwn):
    """The compiled engine's token table looks up the keys of every word of a turn with an answer; the pure
    engine does too, though the definition needs only the words the exact stage leaves: so the words the
    morphology cannot analyse, which the run warns about, are the same on both."""
    long = ["не" * 60 + f"кот{k}" for k in range(3)]  # longer than 100 characters: never analysed
    metric = MeteorRu(MeteorParams(), matcher=Matcher(rwn, persistent=False), engine=make_engine(kind))
    # every reference word matched exactly: no key of the answer's other word is needed
    index, s = metric.best_variant(["кот", long[0], "спит"], [["кот", "спит"]])
    # m=2, t=3, r=2: P=2/3, R=1, Fmean = (2/3) / (0.6 + 0.1) = 20/21
    assert (index, s.matches) == (0, 2) and s.score == pytest.approx(20 / 21, abs=1e-12)
    # every answer word matched exactly (turn by turn, as runs score); no word of an empty answer's turn
    turns = best_variants(
        [["кот"], []], [[["кот", long[1]]], [[long[2]]]], metric.matcher, engine=metric.engine
    )
    assert [(k, s.matches) for k, s in turns] == [(0, 1), (0, 0)]
    assert metric.matcher.unanalysed == {word: "longer than 100 characters" for word in long[:2]}


def test_a_gamma_0_sentence_keeps_its_alignment_and_chunks(metric_of):
    index, s = metric_of(MeteorParams()).sentence(
        "кот спит на окне", ["на окне спит кот"], with_alignment=True
    )
    assert index == 0 and s.score == 1.0 and s.penalty == 0.0
    assert [(link.cand, link.ref, link.stage) for link in s.alignment] == [
        (0, 3, "exact"),
        (1, 2, "exact"),
        (2, 0, "exact"),
        (3, 1, "exact"),
    ]
    assert s.chunks == 3  # «на окне» one chunk, «спит» and «кот» one each


def _stage_counts(s):
    return sorted((link.stage, 1) for link in s.alignment)


WRITE = tuple("пишу пишешь пишет пишем пишете пишут писал писала писало писали пиши пишите писать".split())


@pytest.mark.parametrize(
    "cand, ref, matches",
    [
        # key-id data past 16,384 entries: a candidate of 16,400 distinct words; кот and слово7 link
        ([f"слово{n}" for n in range(16_400)] + ["кот"], ["кот", "слово7", "пес"], 2),
        # work arrays with 4n <= len < 5n: 17 forms of «читать» and 111 shared fillers a side
        (list(READ) + [f"x{n}" for n in range(111)], list(READ[::-1]) + [f"x{n}" for n in range(111)], 128),
        # 30 forms against 30 forms, linked by lemma where they differ: every token of each side
        (list(READ) + list(WRITE), list(WRITE[::-1]) + list(READ[1:]) + ["читать"], 30),
    ],
    ids=["16400-tokens", "work-arrays-4n-5n", "30-against-30"],
)
def test_the_compiled_key_table_grows_as_the_definition_counts(matcher, cand, ref, matches):
    params = MeteorParams(stages=("exact", "lemma", "synonym"))
    pure = MeteorRu(params, matcher=matcher, engine=make_engine("pure"))
    compiled = MeteorRu(params, matcher=matcher, engine=make_engine("compiled"))
    expected = pure.score_tokens(cand, ref, with_alignment=True)
    for _ in range(2):  # a second time on the grown table
        found = compiled.score_tokens(cand, ref, with_alignment=True)
        assert (found.matches, found.score) == (expected.matches, expected.score)
        assert _stage_counts(found) == _stage_counts(expected)
    assert expected.matches == matches
