"""Contract section 10: a run's output holding ``run_fault.json`` is invalid with the fault as its one error,
for ``validate``, ``score``, ``leaderboard`` and ``codalab`` in a files competition; the record is read as
untrusted (anything the runner does not write is ignored)."""

import json
import shutil

import pytest
from helpers import EXAMPLES, PUBLIC, leaderboard_into, run_cli, score_cli, validate_cli

FAULT = {"kind": "exception", "phase": "ppl", "function": "get_ppl", "dialog_id": "d-0003", "turn": 1}
SAID = (
    "run_fault.json: the run of the team's code failed (exception; phase ppl, function get_ppl, "
    "dialog_id 'd-0003', turn 1), so its files are not scored; mend the code and run it again"
)


def run_output(folder, record=FAULT, with_files=True):
    """A run's output folder: what the generate phase left, and the fault of the ppl phase."""
    folder.mkdir(parents=True)
    if with_files:
        shutil.copy(EXAMPLES / "realistic" / "submission.jsonl", folder / "submission.jsonl")
    (folder / "run_fault.json").write_text(json.dumps(record), encoding="utf-8")
    return folder


def test_validate_and_score_repeat_the_fault_as_the_one_error(tmp_path, capsys):
    out = run_output(tmp_path / "run")
    assert validate_cli(out) == 1
    err = capsys.readouterr().err
    assert SAID in err and "must be named" not in err
    assert score_cli(out, tmp_path / "o", "--quiet") == 1
    scores = json.loads((tmp_path / "o" / "scores.json").read_text("utf-8"))
    assert scores["status"] == "invalid" and len(scores["errors"]) == 1
    assert scores["errors"][0]["code"] == "run_fault" and str(scores["errors"][0]["message"]) in SAID


def test_a_fault_with_no_file_of_the_run_is_still_the_one_error(tmp_path, capsys):
    out = run_output(tmp_path / "run", with_files=False)
    assert validate_cli(out) == 1
    err = capsys.readouterr().err
    assert SAID in err and "submission directory has no" not in err


def test_the_leaderboard_lists_the_entry_as_invalid(tmp_path):
    subs = tmp_path / "subs"
    shutil.copytree(EXAMPLES / "realistic", subs / "good")
    run_output(subs / "failed")
    assert leaderboard_into(PUBLIC, subs, tmp_path / "lb") == 0
    rows = json.loads((tmp_path / "lb" / "leaderboard.json").read_text("utf-8"))["submissions"]
    failed = next(r for r in rows if r["submission"] == "failed")
    assert failed["status"] == "invalid" and [e["code"] for e in failed["errors"]] == ["run_fault"]


def test_codalab_in_a_files_competition_does_the_same(tmp_path, capsys):
    shutil.copytree(PUBLIC, tmp_path / "input" / "ref")
    run_output(tmp_path / "input" / "res")
    assert run_cli("codalab", tmp_path / "input", tmp_path / "out", "--quiet", "--jobs", "1") == 1
    assert SAID in capsys.readouterr().err
    scores = json.loads((tmp_path / "out" / "scores.json").read_text("utf-8"))
    assert scores["status"] == "invalid" and [e["code"] for e in scores["errors"]] == ["run_fault"]


@pytest.mark.parametrize(
    "record",
    [
        {**FAULT, "kind": "made_up"},
        {**FAULT, "dialog_id": "not-in-the-data"},
        {**FAULT, "turn": 99},
        {**FAULT, "extra": 1},
        "a string",
    ],
)
def test_a_record_the_runner_does_not_write_is_ignored(tmp_path, record, capsys):
    out = run_output(tmp_path / "run", record)
    shutil.copy(EXAMPLES / "realistic" / "ppl_output.json", out / "ppl_output.json")
    assert validate_cli(out) == 0
