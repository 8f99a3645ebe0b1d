"""Meta-evaluation (contract section 8): coefficients by hand and against scipy, ratings CSV rules, bootstrap,
outputs."""

import csv
import json
import math
import random

import pytest
from helpers import EXAMPLES, PUBLIC, run_cli, score_cli
from scipy import stats

from scorer.inputs.human_ratings import read_human
from scorer.scoring.correlation import coefficients, interval, pairwise_accuracy

SUBMISSIONS = {"team-a": {"d-1": 2, "d-2": 1}, "team-b.zip": {"d-1": 2, "d-2": 1}}


#: correlation.csv's header, as contract section 8 writes it.
HEADER = (
    "level,figure,n,pearson,pearson_low,pearson_high,spearman,spearman_low,spearman_high,kendall,kendall_low,"
    "kendall_high,pairwise_accuracy"
)


def test_coefficients_by_hand():
    # x = 1 2 3 4, y = 1 3 2 4: deviations +-1.5, +-0.5; covariance sum 4, variance sums 5 -> r = 0.8;
    # ranks equal the values -> rho = 0.8; 5 concordant, 1 discordant pair -> tau = 4 / 6.
    r, rho, tau = coefficients([1, 2, 3, 4], [1, 3, 2, 4])
    assert (r, rho) == (pytest.approx(0.8, abs=1e-12), pytest.approx(0.8, abs=1e-12))
    assert tau == pytest.approx(4 / 6, abs=1e-12)


def test_coefficients_agree_with_scipy_on_random_data():
    rng = random.Random(5)
    for n in (3, 10, 57):
        x = [rng.random() for _ in range(n)]
        y = [v + rng.gauss(0, 0.3) for v in x]
        y[0] = y[1]  # a tie, for tau-b
        ours = coefficients(x, y)
        assert ours == (stats.pearsonr(x, y)[0], stats.spearmanr(x, y)[0], stats.kendalltau(x, y)[0])


@pytest.mark.parametrize("n", [2, 3, 9, 40])
def test_resampled_coefficients_are_the_row_by_row_values_to_the_last_bit(n):
    import numpy as np

    from scorer.scoring.correlation import resampled_coefficients

    rng = np.random.default_rng(n)
    x = np.round(rng.random(n) * 4) / 4  # many ties
    y = x + np.round(rng.normal(0, 0.3, n), 1)
    idx = rng.integers(0, n, size=(300, n))
    xs, ys = x[idx], y[idx]
    xs[0] = 0.5  # a constant row: every coefficient undefined
    ys[1, 0] = math.nan  # a row holding NaN
    together = resampled_coefficients(xs, ys)
    for r in range(300):
        one = coefficients(xs[r].tolist(), ys[r].tolist())
        for k in range(3):
            assert together[k][r] == one[k] or (math.isnan(together[k][r]) and math.isnan(one[k])), (r, k)
    assert all(math.isnan(c[0]) for c in together)


def test_pairwise_accuracy_by_hand_on_four_systems():
    human = [4.0, 3.0, 2.0, 2.0]  # pairs with unequal human scores: 5 of 6 (the last two tie)
    figure = [0.9, 0.5, 0.6, 0.1]  # (0,1) ok (0,2) ok (0,3) ok (1,2) wrong (1,3) ok -> 4 / 5
    assert pairwise_accuracy(figure, human) == 4 / 5
    assert pairwise_accuracy([1, 1, 1, 1], human) == 0.0  # ties in the figure order nothing


def test_interval_holds_the_estimate_and_skips_undefined_draws():
    assert interval([0.1, 0.2, math.nan, 0.3], 0.5) == (0.1, 0.5)
    low, high = interval([math.nan], 0.5)  # no defined draw: no interval (nan == nan is never true)
    assert math.isnan(low) and math.isnan(high)


def write(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return path


def test_repeated_raters_are_averaged_and_zip_suffixes_may_be_left_out(tmp_path):
    path = write(
        tmp_path / "h.csv",
        [
            ["submission", "dialog_id", "turn", "score"],
            ["team-a", "d-1", "0", "1"],
            ["team-a", "d-1", "0", "4"],
            ["team-b", "d-2", "0", "2.5"],
        ],
    )
    ratings = read_human(path, SUBMISSIONS)
    assert ratings.level == "turn"
    assert ratings.scores == {("team-a", "d-1", 0): 2.5, ("team-b.zip", "d-2", 0): 2.5}


@pytest.mark.parametrize(
    "row, code",
    [
        (["team-x", "d-1", "0", "3"], "unknown_submission"),
        (["team-a", "d-9", "0", "3"], "unknown_id"),
        (["team-a", "d-2", "1", "3"], "unknown_turn"),
        (["team-a", "d-1", "x", "3"], "unknown_turn"),
        (["team-a", "d-1", "0", "nan"], "bad_score"),
        (["team-a", "d-1", "0", "inf"], "bad_score"),
        (["team-a", "d-1", "0", "good"], "bad_score"),
        (["team-a", "d-1", "3"], "bad_row"),
    ],
)
def test_every_ratings_error_names_its_line(tmp_path, row, code):
    from scorer.inputs.human_ratings import HumanRatingsError

    path = write(
        tmp_path / "h.csv", [["submission", "dialog_id", "turn", "score"], ["team-a", "d-1", "1", "2"], row]
    )
    with pytest.raises(HumanRatingsError) as info:
        read_human(path, SUBMISSIONS)
    assert info.value.exit_code == 2
    assert [(i.line, i.code) for i in info.value.issues] == [(3, code)]


def correlate_cli(human, output, *extra):
    """``correlate`` of the bundled examples against the public data and the ratings ``human`` into
    ``output``, ``extra`` added, run by :func:`run_cli`: its exit code."""
    given = ("--data", PUBLIC, "--submissions", EXAMPLES, "--human", human, "--output", output)
    return run_cli("correlate", *given, *extra)


def run_correlate(tmp_path, human, *extra):
    out = tmp_path / "meta"
    return correlate_cli(human, out, "--quiet", "--resamples", "200", "--jobs", "1", *extra), out


def test_the_bundled_turn_ratings_give_every_level(tmp_path):
    code, out = run_correlate(tmp_path, PUBLIC / "human_turns.csv", "--baselines", "chrf,bleu")
    assert code == 0
    lines = (out / "correlation.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == HEADER
    rows = list(csv.DictReader(lines))
    assert [(r["level"], r["figure"]) for r in rows][:5] == [
        ("turn", f) for f in ("meteor", "hidden_metric", "turn_score", "chrf", "bleu")
    ]
    assert {r["level"] for r in rows} == {"turn", "dialog", "system"}
    for r in rows:
        for k in ("pearson", "spearman", "kendall"):
            assert float(r[f"{k}_low"]) <= float(r[k]) <= float(r[f"{k}_high"])
        assert (r["pairwise_accuracy"] == "") == (r["level"] != "system")
    turn_meteor = rows[0]
    assert int(turn_meteor["n"]) == 3 * 66
    payload = json.loads((out / "correlation.json").read_text(encoding="utf-8"))
    assert payload["settings"]["resamples"] == 200 and payload["rows"][0]["figure"] == "meteor"
    assert "<svg" in (out / "report.html").read_text(encoding="utf-8")
    again = tmp_path / "again"
    again.mkdir()
    assert run_correlate(again, PUBLIC / "human_turns.csv", "--baselines", "chrf,bleu")[0] == 0
    assert (again / "meta" / "correlation.csv").read_bytes() == (out / "correlation.csv").read_bytes()


def test_turn_coefficients_equal_scipy_on_the_rated_turns(tmp_path):
    code, out = run_correlate(tmp_path, PUBLIC / "human_turns.csv")
    rows = list(csv.DictReader((out / "correlation.csv").read_text(encoding="utf-8").splitlines()))
    sums = {}
    for row in csv.DictReader((PUBLIC / "human_turns.csv").read_text(encoding="utf-8").splitlines()):
        key = (row["submission"], row["dialog_id"], int(row["turn"]))
        sums.setdefault(key, []).append(float(row["score"]))
    meteor = {}
    for name in ("echo_first_variant", "empty_answers", "realistic"):
        score_cli(EXAMPLES / name, tmp_path / name, "--quiet")
        for row in csv.DictReader((tmp_path / name / "details.csv").read_text(encoding="utf-8").splitlines()):
            meteor[(name, row["dialog_id"], int(row["turn"]))] = float(row["meteor"])
    keys = sorted(sums)
    x, y = [meteor[k] for k in keys], [sum(sums[k]) / len(sums[k]) for k in keys]
    assert float(rows[0]["pearson"]) == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-9)
    assert float(rows[0]["kendall"]) == pytest.approx(stats.kendalltau(x, y)[0], abs=1e-9)


def test_a_level_with_fewer_than_three_items_is_left_out(tmp_path, capsys):
    path = write(tmp_path / "h.csv", [["submission", "score"], ["realistic", "3"], ["empty_answers", "1"]])
    code, out = run_correlate(tmp_path, path)
    assert code == 0 and "system level left out: 2 rated item(s)" in capsys.readouterr().err
    assert (out / "correlation.csv").read_text(encoding="utf-8").splitlines() == [HEADER]


def test_entries_left_out_and_names_skipped_are_listed_everywhere(tmp_path, capsys):
    out = tmp_path / "meta"
    assert correlate_cli(PUBLIC / "human_turns.csv", out, "--no-synonyms", "--resamples", "40") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-3:] == [
        "left out: board (invalid; see `scorer validate` or the leaderboard for its errors)",
        "left out: invalid (invalid; see `scorer validate` or the leaderboard for its errors)",
        "skipped (not a folder or .zip): README.md",
    ]
    payload = json.loads((out / "correlation.json").read_text(encoding="utf-8"))
    assert payload["left_out"] == [
        {"submission": "board", "status": "invalid"},
        {"submission": "invalid", "status": "invalid"},
    ]
    assert payload["skipped"] == ["README.md"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert (
        "<li>left out: invalid (invalid; see `scorer validate` or the leaderboard for its errors)</li>"
        in page
    )
    assert "<li>skipped (not a folder or .zip): README.md</li>" in page


def test_the_coefficients_are_passed_in():
    """correlate takes its statistics as a value: constants in, constants out (the interval widened to hold
    them); by default the contract's three coefficients."""
    import numpy as np

    from scorer.scoring.correlation import CONTRACT_STATISTICS, LevelData, Statistics, correlate

    human, figure = [1.0, 2.0, 3.0, 5.0], [0.1, 0.3, 0.2, 0.9]
    draws = np.array([[0, 1, 2, 3], [3, 2, 1, 0], [0, 0, 1, 3]])
    level = LevelData(
        "turn",
        human,
        {"meteor": figure},
        lambda: ({"meteor": np.asarray(figure)[draws]}, np.asarray(human)[draws]),
    )
    constant = Statistics(
        lambda x, y: (0.5, 0.25, 0.125),
        lambda x, y: (np.full(len(x), 0.5), np.full(len(x), 0.25), np.full(len(x), 0.125)),
    )
    (row,) = correlate([level], statistics=constant)
    assert (row.pearson, row.spearman, row.kendall) == (0.5, 0.25, 0.125)
    assert (row.pearson_low, row.pearson_high, row.kendall_low, row.kendall_high) == (0.5, 0.5, 0.125, 0.125)
    (default,) = correlate([level])
    assert (default.pearson, default.spearman, default.kendall) == CONTRACT_STATISTICS.point(figure, human)
    assert abs(default.spearman - 0.8) < 1e-12 and default.n == 4  # ranks 1,3,2,4: 1 - 6 * 2 / (4 * 15)


@pytest.mark.parametrize("name", ["chrf", "bleu"])
def test_baseline_statistics_give_sacrebleus_public_corpus_score(name):
    """The two calls outside sacreBLEU's public API (per-turn statistics, the score of their sums)
    give what its public ``corpus_score`` gives, whole and on a subset with a turn drawn twice."""
    import sacrebleu

    from scorer.scoring.correlation import _corpus_metric, _corpus_stats, _score_of_stats

    answers = [
        json.loads(line) for line in (PUBLIC / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    refs = [turn for dialog in answers for turn in dialog["references"]]
    hyps = [turn[-1] + " и ещё" if k % 3 else turn[0][:20] for k, turn in enumerate(refs)]
    public = {"chrf": sacrebleu.corpus_chrf, "bleu": sacrebleu.corpus_bleu}[name]
    width = max(map(len, refs))

    def streams(rows):
        return [[r[k] if k < len(r) else None for r in rows] for k in range(width)]

    metric = _corpus_metric(name, refs)
    stats = _corpus_stats(metric, hyps)
    assert _score_of_stats(metric, [sum(col) for col in zip(*stats)]) == public(hyps, streams(refs)).score
    drawn = [0, 0, 3, 5, 8]
    totals = [sum(col) for col in zip(*(stats[k] for k in drawn))]
    assert (
        _score_of_stats(metric, totals)
        == public([hyps[k] for k in drawn], streams([refs[k] for k in drawn])).score
    )


def test_the_terminal_table_shows_spearman_and_warns_of_three_systems(tmp_path, capsys):
    code, out = run_correlate(tmp_path, PUBLIC / "human_turns.csv")
    assert code == 0
    correlate_cli(PUBLIC / "human_turns.csv", tmp_path / "again", "--resamples", "200")
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split()[:6] == ["level", "figure", "n", "pearson", "[95%]", "spearman"]
    rows = list(csv.DictReader((out / "correlation.csv").read_text(encoding="utf-8").splitlines()))
    first = next(line for line in printed if line.startswith("turn   meteor"))
    assert f"{float(rows[0]['spearman']):6.3f}" in first
    assert any(line.startswith("note: the system level has 3 items") for line in printed)
