"""Contract section 8, the organizer's inputs to the meta-evaluation: a bad human-ratings CSV is an error
located by its line (exit 2), an entry's name wins over a zip without its suffix, means of finite
ratings stay finite, and bootstrap settings out of range are usage errors; the bootstrap's statistics: the
paired p-value as sacreBLEU computes it on the same resamples, the 95% interval's order statistics at any
number of resamples, and no scipy warning on stderr."""

import math
import random
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import EXAMPLES, leaderboard_cli
from sacrebleu.significance import Result, _compute_p_value, _paired_bs_test

from scorer.inputs.human_ratings import HumanRatingsError, finite_mean, read_human
from scorer.scoring import correlation
from scorer.scoring.competition import mean
from scorer.scoring.significance import (
    interval,
    interval_positions,
    make_strata,
    paired_p_value,
    resampled_integrals,
)


def _human(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "human.csv"
    path.write_bytes(content)
    return path


BOARD = {"team": {"d-0001": 2}, "team.zip": {"d-0001": 2}, "other.zip": {"d-0001": 2}}


@pytest.mark.parametrize(
    "content, line, words",
    [
        ("submission,dialog_id,turn,score\nteam,d-0001,²,1\n".encode(), 2, "turn '²' is not a turn"),
        (b"submission,dialog_id,turn,score\nteam,d-0001," + b"1" * 5000 + b",1\n", 2, "is not a turn"),
        (b'submission,score\nteam,1\n"other,' + b"x" * 200_000 + b"\n", 3, "stray double quote"),
        (b"submission,score\nteam,1\n\xcf\xf0\xe8,2\n", 3, "not valid UTF-8"),
    ],
)
def test_bad_human_ratings_are_located_errors(tmp_path, content, line, words):
    with pytest.raises(HumanRatingsError) as info:
        read_human(_human(tmp_path, content), BOARD)
    [issue] = info.value.issues
    assert issue.line == line and words in issue.message and len(issue.message) < 300


def test_an_entry_name_wins_over_a_zip_without_its_suffix(tmp_path):
    ratings = read_human(_human(tmp_path, b"submission,score\nteam,1\nteam.zip,2\nother,3\n"), BOARD)
    assert ratings.scores == {("team",): 1.0, ("team.zip",): 2.0, ("other.zip",): 3.0}


def test_means_of_finite_ratings_stay_finite(tmp_path):
    ratings = read_human(_human(tmp_path, b"submission,score\nteam,1e308\nteam,1e308\n"), BOARD)
    assert ratings.scores == {("team",): 1e308}
    assert finite_mean([0.1, 0.2, 0.3]) == (0.1 + 0.2 + 0.3) / 3  # the same bits as before where finite


@pytest.mark.parametrize(
    "option, value, words",
    [
        ("--seed", "-1", "seed = -1"),
        ("--resamples", str(10**8), "resamples = 100000000"),
        ("--resamples", "39", "resamples = 39"),
    ],
)
def test_bootstrap_settings_out_of_range_are_usage_errors(tmp_path, option, value, words, capsys):
    code = leaderboard_cli(EXAMPLES, tmp_path / "b", "--no-synonyms", option, value)
    assert code == 2 and words in capsys.readouterr().err


# --- the bootstrap's statistics: the paired p-value, the 95% interval, no scipy warning --------------------


class _Figure:
    """A score sacreBLEU's paired bootstrap can resample: its statistic is one S_i a dialogue, its figure the
    mean of the S_i drawn (the integral of a competition with one dialogue type)."""

    def __init__(self, n: int):
        self.n = n

    def _extract_corpus_statistics(self, hypotheses, references):
        return [[s] for s in hypotheses]

    def _aggregate_and_compute(self, stats):
        return SimpleNamespace(score=mean([s for (s,) in stats]))

    def _compute_score_from_stats(self, sums):
        return SimpleNamespace(score=float(sums[0]) / self.n)


@pytest.mark.parametrize("resamples", [200, 1000, 4000])
def test_the_paired_p_value_is_sacrebleus_on_the_same_resamples(resamples):
    """sacreBLEU's paired bootstrap draws its indices as ``default_rng(seed).choice(n, (R, n))``, which are
    those of one dialogue type in ``make_strata`` with the same seed; on S_i that are multiples of 1/64 (its
    float32 sums are exact) every resampled figure is the same float, and so is the p-value."""
    rng = random.Random(3)
    baseline = [rng.randint(0, 64) / 64 for _ in range(30)]
    system = [min(1.0, max(0.0, b + rng.randint(-12, 14) / 64)) for b in baseline]
    figure = _Figure(len(system))
    stats = figure._extract_corpus_statistics(baseline, None)
    known = {"integral": (stats, Result(figure._aggregate_and_compute(stats).score))}
    _, results = _paired_bs_test(known, "system", system, None, {"integral": figure}, resamples, -1, 12345)
    theirs = results["integral"]

    strata = make_strata({"Text2Text": 30}, {"Text2Text": 1.0}, resamples, seed=12345)
    ours = resampled_integrals(strata, {"Text2Text": system})
    base = resampled_integrals(strata, {"Text2Text": baseline})
    assert theirs.score == mean(system) and theirs.mean == np.sort(ours).mean()  # the same resamples
    p = paired_p_value(ours, base, mean(system), mean(baseline))
    assert p == theirs.p_value and 0.05 < p < 0.1  # a p neither 1 nor at its floor: its formula shows
    low, high = interval(ours)
    assert theirs.ci == 0.5 * (high - low)  # sacreBLEU's interval, as a half-width


def test_the_paired_p_value_by_hand():
    # |a - b| = [0, 2, 4, 6], mean 3, centred [-3, -1, 1, 3]; the observed difference |1 - 0| = 1: one
    # centred difference is strictly above it, p = (1 + 1) / (4 + 1)
    a, b = np.array([1.0, 3.0, 5.0, 7.0]), np.array([1.0, 1.0, 1.0, 1.0])
    assert paired_p_value(a, b, 1.0, 0.0) == 2 / 5
    assert paired_p_value(b, a, 0.0, 1.0) == 2 / 5  # the difference's sign does not matter
    assert _compute_p_value(np.array([-3.0, -1.0, 1.0, 3.0]), 1.0) == 2 / 5  # sacreBLEU's count
    assert paired_p_value(a, b, 2.5, 0.0) == 2 / 5 and paired_p_value(a, b, 3.0, 0.0) == 1 / 5


# The 95% percentile interval of `count` resampled values (README, "Intervals"; sacreBLEU's rule): the
# order statistics count // 40 and count - count // 40 - 1, 2.5% of the values (rounded down) left out at
# either end.
POSITIONS = [
    (40, 1, 38),  # 2.5% of 40 = 1
    (79, 1, 77),  # 1.975 -> 1
    (80, 2, 77),  # 2
    (200, 5, 194),  # 5
    (999, 24, 974),  # 24.975 -> 24
    (1000, 25, 974),  # 25
    (1001, 25, 975),  # 25.025 -> 25
    (4000, 100, 3899),  # 100
]


@pytest.mark.parametrize("count, low, high", POSITIONS)
def test_the_95_percent_interval_leaves_out_2_5_percent_at_either_end(count, low, high):
    assert interval_positions(count) == (low, high)
    values = np.arange(count, dtype=np.float64)  # the value at position k of the sorted values is k
    np.random.default_rng(count).shuffle(values)
    assert interval(values) == (float(low), float(high))  # the leaderboard's
    # correlation's: of the defined values only, widened to hold the estimate (here inside the interval)
    with_undefined = [math.nan] * 7 + values.tolist()
    assert correlation.interval(with_undefined, count / 2) == (float(low), float(high))


def test_correlation_coefficients_let_no_scipy_warning_out(capfd):
    """scipy warns of a constant input (its coefficient is undefined, NaN here); the warnings are the scorer's
    to silence, not to print on stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        constant = correlation.coefficients([2.0, 2.0, 2.0, 2.0], [1.0, 2.0, 3.0, 4.0])
        # x = y's ranks but one swap: Pearson = Spearman = 4 / 5, Kendall = (5 - 1) / 6
        defined = correlation.coefficients([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0])
        rows = correlation.resampled_coefficients(
            np.array([[2.0, 2.0, 2.0, 2.0], [1.0, 2.0, 3.0, 4.0]]),
            np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]]),
        )
    assert all(math.isnan(c) for c in constant)
    assert defined == (pytest.approx(0.8), pytest.approx(0.8), pytest.approx(2 / 3))
    assert all(math.isnan(r[0]) for r in rows) and [float(r[1]) for r in rows] == list(defined)
    assert [str(w.message) for w in caught] == []
    assert capfd.readouterr().err == ""
