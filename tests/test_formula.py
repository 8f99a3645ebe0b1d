"""METEOR's formula (contract section 4), as Python and compiled: hand values, and the two builds giving
the same figures, bit for bit, on many pairs."""

from __future__ import annotations

import random
import struct
from functools import partial

import pytest

from scorer.metric.engine import accelerator, formula
from scorer.metric.meteor import MeteorParams, MeteorScore, score_from_counts

BUILDS = [formula] + ([accelerator._built()[0]["formula"]] if accelerator.compiled() else [])


@pytest.fixture(params=BUILDS, ids=lambda m: "python" if m is formula else "compiled")
def build(request):
    return request.param


def bits(values):
    """Each float as its 8 bytes (equal figures, bit for bit), others as they are."""
    return [struct.pack("<d", v) if type(v) is float else v for v in values]


def test_hand_values(build):
    # 3 links, 4 candidate and 6 reference tokens, alpha 0.9: P = 0.75, R = 0.5, F = 0.375 / 0.725
    assert build.fmean(0.75, 0.5, 0.9) == 0.75 * 0.5 / (0.9 * 0.75 + 0.1 * 0.5)
    assert build.links_fmean(3, 4, 6, 0.9) == build.fmean(0.75, 0.5, 0.9)
    assert build.links_fmean(0, 4, 6, 0.9) == 0.0
    f = 0.375 / (0.9 * 0.75 + (1 - 0.9) * 0.5)
    assert build.figures(3, None, 4, 6, 0.9, 0.0, 3.0, False) == (f, 0.75, 0.5, f, 0.0, 3, None, 4, 6)
    # 2 chunks of 3 links, gamma 0.5, beta 3: penalty 0.5 (2/3)^3
    penalty = 0.5 * (2 / 3) ** 3.0
    assert build.figures(3, 2, 4, 6, 0.9, 0.5, 3.0, True) == (
        f * (1 - penalty),
        0.75,
        0.5,
        f,
        penalty,
        3,
        2,
        4,
        6,
    )
    assert build.figures(0, 0, 4, 6, 0.9, 0.5, 3.0, True) == (0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, 4, 6)
    assert build.figures(0, None, 4, 6, 0.9, 0.5, 3.0, False) == (0.0, 0.0, 0.0, 0.0, 0.0, 0, None, 4, 6)
    with pytest.raises(ValueError, match="chunk count"):
        build.figures(3, None, 4, 6, 0.9, 0.5, 3.0, True)


def test_the_best_variant_is_the_first_of_highest_f_mean(build):
    variants = [["a"] * 6, [], ["a"] * 3, ["a"] * 3]
    # 3 links of 4 against 6 tokens (P 0.75, R 0.5), none, then 2 of 3 twice (P 0.5, R 2/3): at alpha 0.5
    # F is 0.6 against 4/7; at alpha 0.9, where recall weighs more, 0.517 against 0.645 (the first of two)
    counts = [[1, 2, 0], None, [2, 0, 0], [1, 1, 0]]
    assert build.best_by_counts(4, variants, counts, 0.5) == (0, 3)
    assert build.best_by_counts(4, variants, counts, 0.9) == (2, 2)
    assert build.best_by_counts(4, variants, [[0, 0, 0], None, [0], [0]], 0.9) == (0, 0)  # all 0: the first
    with pytest.raises(ValueError, match="every reference variant is empty"):
        build.best_by_counts(4, [[], []], [None, None], 0.9)


def test_best_scores_are_the_scores_of_the_definition(build):
    cands = [["a"] * 4, ["b"] * 5]
    variants = [[["a"] * 6, ["a"] * 3], [["b"]]]
    counted = [[[1, 2, 0], [2, 0, 0]], [[1, 0, 0]]]
    params = MeteorParams(alpha=0.5)
    found = build.best_scores(cands, variants, counted, 0.5, partial(tuple.__new__, MeteorScore))
    assert found == [
        (0, score_from_counts(3, None, 4, 6, params)),
        (0, score_from_counts(1, None, 5, 1, params)),
    ]
    assert all(type(score) is MeteorScore for _, score in found)


@pytest.mark.skipif(len(BUILDS) < 2, reason="the compiled engine is not built")
def test_both_builds_give_the_same_figures_bit_for_bit():
    python, compiled = BUILDS
    rng = random.Random(20261129)
    for _ in range(20_000):
        t, r = rng.randint(1, 300), rng.randint(1, 300)
        m = rng.randint(0, min(t, r))
        chunks = rng.randint(1, m) if m else 0
        alpha, gamma, beta = rng.random(), rng.random(), rng.uniform(0.5, 6.0)
        for penalised in (False, True):
            args = (m, chunks if penalised else None, t, r, alpha, gamma, beta, penalised)
            assert bits(python.figures(*args)) == bits(compiled.figures(*args)), args
        assert bits([python.links_fmean(m, t, r, alpha)]) == bits([compiled.links_fmean(m, t, r, alpha)])
