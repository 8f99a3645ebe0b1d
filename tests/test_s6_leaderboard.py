"""Leaderboard: ranks, bootstrap intervals and paired p-values, outputs; significance by hand."""

import csv
import io
import json
import shutil
import zipfile

import numpy as np
import pytest
from helpers import EXAMPLES, PUBLIC, leaderboard_cli

from scorer.scoring.significance import interval, make_strata, paired_p_value, resampled_integrals


def test_resampled_integral_by_hand():
    strata = make_strata({"Text2Text": 2, "Audio2Text": 3}, {"Text2Text": 0.1, "Audio2Text": 0.3}, 50, seed=7)
    scores = {"Text2Text": [0.0, 1.0], "Audio2Text": [0.2, 0.4, 0.9]}
    got = resampled_integrals(strata, scores)
    t, a = strata.indices["Text2Text"], strata.indices["Audio2Text"]
    assert t.shape == (50, 2) and a.shape == (50, 3)
    for r in (0, 17, 49):
        expected = (
            0.1 * np.mean([scores["Text2Text"][i] for i in t[r]])
            + 0.3 * np.mean([scores["Audio2Text"][i] for i in a[r]])
        ) / 0.4
        assert got[r] == pytest.approx(expected, abs=1e-15)
    again = make_strata({"Text2Text": 2, "Audio2Text": 3}, {"Text2Text": 0.1, "Audio2Text": 0.3}, 50, seed=7)
    assert np.array_equal(again.indices["Audio2Text"], a)  # the seed fixes everything


def test_interval_takes_the_2_5_and_97_5_percent_order_statistics():
    samples = np.arange(80, dtype=float)[::-1]  # 80 // 40 = 2: the 3rd smallest and 3rd largest
    assert interval(samples) == (2.0, 77.0)


def test_paired_p_value_by_hand():
    # |a - b| = [0, 2, 4, 6] (mean 3) -> centred [-3, -1, 1, 3]; observed |0.5 - 0.0| = 0.5
    a, b = np.array([1.0, 3.0, 5.0, 7.0]), np.array([1.0, 1.0, 1.0, 1.0])
    assert paired_p_value(a, b, 0.5, 0.0) == (2 + 1) / (4 + 1)
    assert paired_p_value(a, b, 10.0, 0.0) == 1 / 5
    assert paired_p_value(a, b, 0.3, 0.3) == 1.0  # equal integrals: nothing to explain


@pytest.fixture()
def folder(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copytree(EXAMPLES / "realistic", subs / "realistic")
    shutil.copytree(EXAMPLES / "realistic", subs / "realistic-copy")
    shutil.copytree(EXAMPLES / "echo_first_variant", subs / "echo")
    with zipfile.ZipFile(subs / "empty.zip", "w") as z:
        for name in ("submission.jsonl", "ppl_output.json"):
            z.write(EXAMPLES / "empty_answers" / name, name)
    shutil.copytree(EXAMPLES / "invalid" / "duplicate_dialogue", subs / "broken")
    (subs / "notes.txt").write_text("not a submission", encoding="utf-8")
    (subs / ".hidden").mkdir()
    return subs


#: leaderboard.csv's header as README.md ("Leaderboard") documents it.
HEADER = (
    "rank,submission,integral,ci_low,ci_high,meteor,hidden_metric,status,Text2Text,Image2Text,Audio2Text,"
    "Image-Audio2Text,p_value,compared_with,errors,flags"
)


def run_board(folder, out, *extra):
    return leaderboard_cli(folder, out, "--quiet", *extra)


def test_leaderboard_ranks_scores_and_lists_invalid(folder, tmp_path):
    out = tmp_path / "out"
    assert run_board(folder, out, "--resamples", "200") == 0
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text(encoding="utf-8"))))
    assert ",".join(rows[0]) == HEADER  # the columns README.md lists, in its order
    assert [r["submission"] for r in rows] == ["echo", "realistic", "realistic-copy", "empty.zip", "broken"]
    assert [r["rank"] for r in rows] == ["1", "2", "2", "4", ""]  # equal integrals share a rank
    assert [r["status"] for r in rows] == ["ok", "ok", "ok", "ok", "invalid"]
    assert float(rows[0]["integral"]) == 1.0
    assert float(rows[1]["integral"]) == 0.3769621616774081  # the same number `score` gives
    assert "dialog_id appears again" in rows[4]["errors"] and rows[4]["integral"] == ""
    for r in rows[:4]:
        assert float(r["ci_low"]) <= float(r["integral"]) <= float(r["ci_high"])
    assert rows[0]["p_value"] == "" and rows[1]["compared_with"] == "echo"
    assert float(rows[1]["p_value"]) == 1 / 201  # far below a perfect score in every resample
    assert float(rows[2]["p_value"]) == 1.0  # identical to the one above
    board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    assert board["bootstrap"]["resamples"] == 200 and board["bootstrap"]["seed"] == 12345
    assert board["skipped"] == ["notes.txt"]
    assert board["submissions"][4]["errors"][0]["code"] == "duplicate_id"
    single = json.loads((out / "submissions" / "realistic" / "scores.json").read_text(encoding="utf-8"))
    assert single["integral"] == 0.3769621616774081
    assert json.loads((out / "submissions" / "broken" / "scores.json").read_text())["status"] == "invalid"
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("<svg") == 3 and "<script" not in page and "realistic-copy" in page  # + the audit


def test_leaderboard_is_reproducible_and_independent_of_jobs(folder, tmp_path):
    for name, jobs in (("a", "1"), ("b", "2")):
        assert run_board(folder, tmp_path / name, "--resamples", "100", "--jobs", jobs, "--no-report") == 0
    for file in ("leaderboard.csv", "leaderboard.json"):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()
    assert run_board(folder, tmp_path / "c", "--resamples", "100", "--seed", "1", "--no-report") == 0
    assert (tmp_path / "a" / "leaderboard.csv").read_bytes() != (
        tmp_path / "c" / "leaderboard.csv"
    ).read_bytes()


def test_leaderboard_usage_errors(tmp_path, capsys):
    (tmp_path / "none").mkdir()
    assert run_board(tmp_path / "none", tmp_path / "out") == 2
    assert "no subdirectory or .zip" in capsys.readouterr().err
    assert run_board(tmp_path / "missing", tmp_path / "out") == 2


def test_an_unranked_entry_has_no_result_or_interval():
    from pathlib import Path

    from scorer.errors import Issue
    from scorer.inputs.reference import ReferenceData
    from scorer.scoring.leaderboard_result import Entry, Standing

    entry = Entry("team-x", Path("team-x"), errors=(Issue("team-x", "broken", "unreadable"),))
    standing = Standing(entry)
    assert (entry.status, standing.rank, standing.integral) == ("invalid", None, None)
    with pytest.raises(ValueError, match="team-x was not scored \\(invalid\\)"):
        standing.scored()
    with pytest.raises(ValueError, match="team-x is not ranked"):
        standing.interval()
    with pytest.raises(ValueError, match="references were not read"):
        ReferenceData([], None).variants()


def test_the_bootstrap_reports_its_progress():
    from scorer.progress import BOOTSTRAP
    from scorer.scoring.leaderboard import rank

    heard = []
    board = api_board(lambda step, done, total: heard.append((step, done, total)))
    boot = [(done, total) for step, done, total in heard if step == BOOTSTRAP]
    assert boot == [(0, 2), (1, 2), (2, 2)] and len(board.ranked) == 2
    assert rank([], {}, 40, 1, "sig", []).entries == ()


def api_board(progress):
    import shutil
    import tempfile
    from pathlib import Path

    from scorer import api

    subs = Path(tempfile.mkdtemp())
    shutil.copytree(EXAMPLES / "realistic", subs / "a")
    shutil.copytree(EXAMPLES / "echo_first_variant", subs / "b")
    try:
        return api.score_leaderboard(PUBLIC, subs, resamples=40, progress=progress, synonyms=False)
    finally:
        shutil.rmtree(subs)
