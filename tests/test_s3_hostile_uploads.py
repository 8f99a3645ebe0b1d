"""Hostile and odd uploads: clean rejections (exit 1), never a traceback, a hang or a score."""

import json
import os
import tempfile
import zipfile
from pathlib import Path

import pytest
from helpers import PUBLIC, VALID_PPL, VALID_SUB, score_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorer.errors import SubmissionInvalid
from scorer.inputs.config import Limits
from scorer.inputs.intake import read_submission
from scorer.inputs.validation import check_submission, read_reference_dialogues

DIALOGUES = read_reference_dialogues((PUBLIC / "dialogues.jsonl").read_bytes())


def verdict(sub: bytes, ppl: bytes):
    """'ok' or the list of issues; anything else (an exception) fails the test."""
    try:
        check_submission(DIALOGUES, sub, ppl, Limits())
        return "ok"
    except SubmissionInvalid as exc:
        assert exc.issues and all(i.message for i in exc.issues)
        return exc.issues


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=3000), st.binary(max_size=300))
def test_random_bytes_are_rejected_cleanly(sub, ppl):
    assert verdict(sub, ppl) != "ok"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_valid_files_never_crash(data):
    sub, ppl = bytearray(VALID_SUB), bytearray(VALID_PPL)
    target = data.draw(st.sampled_from(["sub", "ppl"]))
    buf = sub if target == "sub" else ppl
    for _ in range(data.draw(st.integers(1, 5))):
        pos = data.draw(st.integers(0, len(buf) - 1))
        action = data.draw(st.sampled_from(["flip", "delete", "insert", "duplicate"]))
        if action == "flip":
            buf[pos] = data.draw(st.integers(0, 255))
        elif action == "delete":
            del buf[pos : pos + data.draw(st.integers(1, 40))]
        elif action == "insert":
            buf[pos:pos] = data.draw(
                st.sampled_from(
                    [
                        b"\x00",
                        b"NaN",
                        b"\\ud800",
                        b"[",
                        b"{",
                        b'"',
                        b"\n",
                        b"\xff",
                        b"1e999",
                        b"true",
                        b",",
                        b"\r\n",
                    ]
                )
            )
        else:
            buf[pos:pos] = buf[pos : pos + 50]
        if not buf:
            buf += b"x"
    result = verdict(bytes(sub), bytes(ppl))
    # either valid, or every issue located in one of the two files (verdict checks each has a message)
    assert result == "ok" or (
        result and all(i.file in ("submission.jsonl", "ppl_output.json") for i in result)
    ), result


@pytest.mark.parametrize(
    "answer", ["\x00\x01\x1f", "a\u2028b\u2029c", "кот\tсидит\r\nна окне", '"; DROP', "=1+1"]
)
def test_odd_characters_in_answers_are_scored(tmp_path, answer):
    rows = [json.loads(line) for line in VALID_SUB.decode().splitlines()]
    rows[0]["answers"][0] = answer
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "submission.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    (tmp_path / "s" / "ppl_output.json").write_bytes(VALID_PPL)
    assert score_cli(tmp_path / "s", tmp_path / "o", "--quiet") == 0
    import pandas as pd

    frame = pd.read_csv(tmp_path / "o" / "details.csv", keep_default_na=False)
    assert len(frame) == 66 and frame.loc[0, "dialog_id"] == "d-0001"


def test_extremely_long_dialog_id_is_shortened_in_messages():
    long_id = "x" * 1_000_000
    issues = verdict(
        VALID_SUB + json.dumps({"dialog_id": long_id, "answers": ["a"]}).encode() + b"\n", VALID_PPL
    )
    assert len(issues) == 1 and len(issues[0].dialog_id) <= 60 and len(str(issues[0])) < 300


def test_a_huge_single_line_is_read_and_rejected(tmp_path):
    line = b'{"dialog_id": "d-0001", "answers": ["' + b"\xd0\xb0" * 3_000_000 + b'"]}\n'
    issues = verdict(line + VALID_SUB.split(b"\n", 1)[1], VALID_PPL)
    assert [i.code for i in issues] == ["turn_count"] or any(i.code == "schema_maxLength" for i in issues)


def test_nested_zip_symlink_and_many_entries(tmp_path):
    z = tmp_path / "many.zip"
    with zipfile.ZipFile(z, "w") as archive:
        for k in range(1500):
            archive.writestr(f"f{k}.txt", b"")
    with pytest.raises(SubmissionInvalid) as info:
        read_submission(z, None, Limits())
    assert info.value.issues[0].code == "zip_entries"
    link = tmp_path / "link.zip"
    with zipfile.ZipFile(link, "w") as archive:
        entry = zipfile.ZipInfo("submission.jsonl")
        entry.external_attr = 0o120777 << 16
        archive.writestr(entry, "/etc/passwd")
        archive.writestr("ppl_output.json", VALID_PPL)
    with pytest.raises(SubmissionInvalid) as info:
        read_submission(link, None, Limits())
    assert info.value.issues[0].code == "zip_symlink"


def test_directory_with_symlinked_file_is_refused(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "secret.jsonl").write_bytes(VALID_SUB)
    os.symlink(tmp_path / "secret.jsonl", tmp_path / "s" / "submission.jsonl")
    (tmp_path / "s" / "ppl_output.json").write_bytes(VALID_PPL)
    with pytest.raises(SubmissionInvalid) as info:
        read_submission(tmp_path / "s", None, Limits())
    assert info.value.issues[0].code == "symlink"


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.binary(max_size=500), st.booleans())
def test_whole_command_never_exits_3(tmp_path, junk, as_zip):
    case = Path(tempfile.mkdtemp(dir=tmp_path))
    if as_zip:
        sub = case / "s.zip"
        with zipfile.ZipFile(sub, "w") as archive:
            archive.writestr("submission.jsonl", junk)
            archive.writestr("ppl_output.json", junk[:50])
    else:
        sub = case / "s"
        sub.mkdir()
        (sub / "submission.jsonl").write_bytes(junk)
        (sub / "ppl_output.json").write_bytes(junk[:50])
    code = score_cli(sub, case / "o", "--quiet")
    assert code == 1
    assert json.loads((case / "o" / "scores.json").read_text(encoding="utf-8"))["status"] == "invalid"
