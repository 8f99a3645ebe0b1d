"""Contract sections 2, 3 and 7 for the organizer: every error of the reference data and its configuration in
one run (up to the cap), and ``check-data``, which checks them alone."""

import json
import shutil

from conftest import PUBLIC, run_cli

from scorer import api
from scorer.errors import ReferenceDataError


def three_mistakes(tmp_path):
    """A copy of the bundled data with a mistake in each of its three files."""
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    lines = (data / "dialogues.jsonl").read_text("utf-8").splitlines()
    row = json.loads(lines[1])
    row["type"] = "Video2Text"
    lines[1] = json.dumps(row, ensure_ascii=False)
    (data / "dialogues.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    answers = (data / "answers.jsonl").read_text("utf-8").splitlines()
    row = json.loads(answers[2])
    row["references"][1] = []
    answers[2] = json.dumps(row, ensure_ascii=False)
    (data / "answers.jsonl").write_text("\n".join(answers) + "\n", encoding="utf-8")
    (data / "config.toml").write_text("[meteor]\nalpha = 2\n", encoding="utf-8")
    return data


EXPECTED = [
    "error: reference data is invalid (3 error(s)):",
    "  - config.toml: config key meteor.alpha must be at most 1, got 2.0",
    '  - dialogues.jsonl, line 2, dialog_id \'d-0002\': type must be one of "Text2Text", "Image2Text", '
    '"Audio2Text", "Image-Audio2Text", not "Video2Text"',
    "  - answers.jsonl, line 3, dialog_id 'd-0003', turn 1: references[1] must not be an empty list",
]


def test_check_data_lists_the_three_mistakes_in_one_run(tmp_path, capsys):
    data = three_mistakes(tmp_path)
    assert run_cli("check-data", "--data", data) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.splitlines() == EXPECTED


def test_check_data_of_valid_data(capsys):
    assert run_cli("check-data", "--data", PUBLIC) == 0
    assert capsys.readouterr().out == (
        "reference data valid: 40 dialogues (Text2Text 10, Image2Text 10, Audio2Text 10, "
        "Image-Audio2Text 10), 66 turns; config: built-in default\n"
    )


def test_score_reports_both_files_errors_at_once(tmp_path, capsys):
    data = three_mistakes(tmp_path)
    (data / "config.toml").unlink()
    try:
        api.load_reference(data)
    except ReferenceDataError as exc:
        assert [(i.file, i.line, i.turn) for i in exc.issues] == [
            ("dialogues.jsonl", 2, None),
            ("answers.jsonl", 3, 1),
        ]
    else:
        raise AssertionError("no error")


def test_the_answers_of_a_rejected_dialogue_are_not_called_unknown(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    lines = (data / "dialogues.jsonl").read_text("utf-8").splitlines()
    row = json.loads(lines[0])
    row["turns"] = []
    lines[0] = json.dumps(row, ensure_ascii=False)
    (data / "dialogues.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        api.check_reference_data(data)
    except ReferenceDataError as exc:
        # the dialogue's own fault alone: its answers.jsonl line is not called an unknown dialog_id too
        assert [(i.file, i.line, i.code) for i in exc.issues] == [("dialogues.jsonl", 1, "schema_minItems")]
        assert not [i for i in exc.issues if i.file == "answers.jsonl" or "unknown" in i.code]
    else:
        raise AssertionError("no error")
