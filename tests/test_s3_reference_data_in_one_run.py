"""Contract sections 2, 3 and 7 for the organizer: every error of the reference data and its configuration in
one run (up to the cap), and ``check-data``, which checks them alone: with the media files the dialogues
name and what the configuration asks of the data, everything ``score`` and ``bundle`` check of it."""

import json
import os
import shutil

import pytest
from helpers import EXAMPLES, PUBLIC, bundle_cli, run_cli

from scorer import api
from scorer.errors import ConfigError, ReferenceDataError
from scorer.inputs.reference import load_reference_and_media


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


# --- check-data checks what score and bundle check: the media, and what the configuration asks of the data --

IMAGE = "docker.io/org/scorer:1.0"


def rewrite_line(data, index, change):
    """``data/dialogues.jsonl`` with the line at ``index`` (0-based) passed through ``change``."""
    lines = (data / "dialogues.jsonl").read_text("utf-8").splitlines()
    row = json.loads(lines[index])
    change(row)
    lines[index] = json.dumps(row, ensure_ascii=False)
    (data / "dialogues.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_check_data_lists_the_media_errors_with_every_other_in_one_run(tmp_path, capsys):
    data = three_mistakes(tmp_path)
    (data / "images" / "0011.jpg").unlink()  # named by line 11
    (data / "audio" / "0021.wav").unlink()  # named by line 21: a link, never followed
    (tmp_path / "outside.wav").write_bytes(b"RIFF outside the data folder")
    (data / "audio" / "0021.wav").symlink_to(tmp_path / "outside.wav")
    (data / "images" / "0012.jpg").unlink()  # named by line 12, whose dialogue has an error of its own
    rewrite_line(data, 11, lambda row: row.update(type="Video2Text"))
    # a malformed part is the line's own error, not a media error too
    rewrite_line(data, 12, lambda row: row["turns"][0].append({"type": "image", "content": 5}))
    assert run_cli("check-data", "--data", data) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "error: reference data is invalid (8 error(s)):",
        EXPECTED[1],
        EXPECTED[2],
        "  - dialogues.jsonl, line 12, dialog_id 'd-0012': type must be one of \"Text2Text\", "
        '"Image2Text", "Audio2Text", "Image-Audio2Text", not "Video2Text"',
        "  - dialogues.jsonl, line 13, dialog_id 'd-0013', turn 0: turns[0][2].content must be a string, not "
        "a number",
        EXPECTED[3],
        "  - dialogues.jsonl, line 11, dialog_id 'd-0011', turn 0: images/0011.jpg is missing",
        "  - dialogues.jsonl, line 12, dialog_id 'd-0012', turn 0: images/0012.jpg is missing",
        "  - dialogues.jsonl, line 21, dialog_id 'd-0021', turn 0: audio/0021.wav is a symbolic link; the "
        "bundle publishes regular files only, never a link",
    ]


@pytest.mark.parametrize(
    "name, make, message",
    [
        ("images/0011.jpg", lambda data, path: path.unlink(), "images/0011.jpg is missing"),
        (
            "images/0011.jpg",
            lambda data, path: (path.unlink(), path.mkdir()),
            "images/0011.jpg is a folder, not a media file",
        ),
        (
            "images/0011.jpg",
            lambda data, path: os.truncate(path, (256 << 20) + 1),  # sparse: nothing is read
            "images/0011.jpg is 268,435,457 bytes; the limit is 256 MiB",
        ),
        (
            "images/../../outside.jpg",
            None,
            "'images/../../outside.jpg' leads out of the data folder ('..'); name a file in it",
        ),
        ("answers.jsonl", None, "'answers.jsonl' names a reference file, not a media file"),
    ],
)
def test_check_data_refuses_each_media_file_bundle_refuses_with_its_message(
    tmp_path, capsys, name, make, message
):
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    if make is None:
        rewrite_line(data, 10, lambda row: row["turns"][0].__setitem__(1, {"type": "image", "content": name}))
    else:
        make(data, data / name)
    assert run_cli("check-data", "--data", data) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: reference data is invalid (1 error(s)):",
        f"  - dialogues.jsonl, line 11, dialog_id 'd-0011', turn 0: {message}",
    ]
    assert bundle_cli(tmp_path / "out", "--image", IMAGE, data=data) == 2
    bundled = capsys.readouterr().err.splitlines()
    assert f"  - dialogues.jsonl, line 11, dialog_id 'd-0011', turn 0: {message}" in bundled


def test_check_data_refuses_weights_that_score_cannot_combine(tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    (data / "config.toml").write_text(
        '[weights]\nText2Text = 0\nImage2Text = 0\nAudio2Text = 0\n"Image-Audio2Text" = 0\n', encoding="utf-8"
    )
    message = (
        "the weights of the dialogue types present sum to 0; give one of Text2Text, Image2Text, Audio2Text, "
        "Image-Audio2Text a positive weight"
    )
    assert run_cli("check-data", "--data", data) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: reference data is invalid (1 error(s)):",
        f"  - config.toml: {message}",
    ]
    with pytest.raises(ConfigError) as caught:  # what score says, after scoring every turn
        api.score_submission(data, EXAMPLES / "realistic", synonyms=False)
    assert str(caught.value) == message
    # a weight of 0 for a type the data does not hold is no error
    (data / "config.toml").write_text('[weights]\n"Image-Audio2Text" = 0\n', encoding="utf-8")
    assert run_cli("check-data", "--data", data) == 0


def test_check_data_refuses_a_final_that_cannot_hold_out_every_type(tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    for index in (21, 22, 23, 24, 25, 26, 27, 28, 29):  # d-0022..d-0030: Audio2Text, made Text2Text
        rewrite_line(data, index, lambda row: row.update(type="Text2Text"))
    for index in (31, 32, 33, 34, 35, 36, 37, 38, 39):  # d-0032..d-0040: Image-Audio2Text, likewise
        rewrite_line(data, index, lambda row: row.update(type="Image2Text"))
    (data / "images" / "0011.jpg").unlink()
    (data / "config.toml").write_text(
        '[platform]\nfinal_start = "2030-01-01"\n\n[competition]\nsubmissions = "code"\n', encoding="utf-8"
    )
    assert run_cli("check-data", "--data", data) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "error: reference data is invalid (3 error(s)):"
    assert lines[3] == "  - dialogues.jsonl, line 11, dialog_id 'd-0011', turn 0: images/0011.jpg is missing"
    start = "  - config.toml: config key platform.final_start: the data has one"
    assert lines[1].startswith(f"{start} Audio2Text dialogue ('d-0021')")
    assert lines[2].startswith(f"{start} Image-Audio2Text dialogue ('d-0031')")
    # each in the words bundle --code stops with, a type at a time
    (data / "images" / "0011.jpg").write_bytes((PUBLIC / "images" / "0011.jpg").read_bytes())
    assert bundle_cli(tmp_path / "out", "--image", IMAGE, "--code", data=data) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "error: " + lines[1].removeprefix("  - config.toml: ")
    rewrite_line(data, 21, lambda row: row.update(type="Audio2Text"))  # d-0022: two Audio2Text dialogues now
    assert bundle_cli(tmp_path / "out", "--image", IMAGE, "--code", data=data) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "error: " + lines[2].removeprefix("  - config.toml: ")


def test_the_reference_data_and_its_media_are_checked_in_one_run_for_the_bundle(tmp_path):
    """load_reference_and_media, the one call that reads the data and the media a bundle publishes: every
    error of both at once, the media's headline when they are its only errors."""
    data = three_mistakes(tmp_path)
    (data / "config.toml").unlink()
    (data / "images" / "0011.jpg").unlink()
    with pytest.raises(ReferenceDataError) as caught:
        load_reference_and_media(data)
    assert caught.value.headline == "reference data is invalid (3 error(s))"
    assert [(i.file, i.line, i.dialog_id, i.turn, i.code) for i in caught.value.issues] == [
        ("dialogues.jsonl", 2, "d-0002", None, "schema_enum"),
        ("answers.jsonl", 3, "d-0003", 1, "schema_minItems"),
        ("dialogues.jsonl", 11, "d-0011", 0, "media_missing"),
    ]
    shutil.rmtree(data)
    shutil.copytree(PUBLIC, data)
    (data / "images" / "0011.jpg").unlink()
    with pytest.raises(ReferenceDataError) as caught:
        load_reference_and_media(data)
    assert caught.value.headline == f"1 media file(s) that dialogues.jsonl names are missing from {data}"
    (data / "images" / "0011.jpg").write_bytes(b"\xff\xd8 an image")
    reference, media = load_reference_and_media(data)
    assert len(reference.dialogues) == 40 and media["images/0011.jpg"] == b"\xff\xd8 an image"
    assert len(media) == 40 and list(media) == sorted(media)
