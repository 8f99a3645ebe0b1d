"""Cases that mutants of the engine survived elsewhere: the branch-and-bound's re-check, ``best_variant``
with the penalty and several variants, the alignment a gamma-0 sentence keeps, the compiled key table's
array growth on long texts, and the words of a turn whose keys both engines look up. Each runs on both
engines (the pure definition and the compiled one) where both are there."""

from __future__ import annotations

import pytest

from scorer.metric.engine import accelerator, alignment, counting, links
from scorer.metric.engine.accelerator import Engine
from scorer.metric.matcher import Matcher
from scorer.metric.meteor import MeteorParams, MeteorRu, best_variants
from scorer.metric.text import tokenise

ENGINES = ["pure", "compiled"]
PENALTY = MeteorParams(gamma=0.5, beta=3.0)
READ = tuple(
    "читаю читаешь читает читаем читаете читают читал читала читало читали читай читайте читать "
    "читающий читающая читая читавший".split()
)


def make_engine(kind: str) -> Engine:
    if kind == "pure":
        return Engine("pure Python", links, counting, alignment)
    if not accelerator.compiled():
        pytest.skip("the compiled engine is not built here (no C compiler): the pure engine's tests cover it")
    return Engine(
        "compiled (Cython)",
        *(accelerator._built()[0][m] for m in ("links", "counting", "alignment", "id_counts")),
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
