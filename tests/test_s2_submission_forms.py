"""A submission as two files, a directory, or a zip (root or one top-level folder)."""

import zipfile

import pytest
from helpers import make_zip

from scorer.errors import SubmissionInvalid, UsageError
from scorer.inputs.config import Limits
from scorer.inputs.intake import read_submission

SUB, PPL = b'{"dialog_id": "d", "answers": ["x"]}\n', b'{"d": [2]}'


def content(source) -> bytes:
    """A file's content as the intake hands it on: bytes, or a checked path to stream from."""
    return source if isinstance(source, bytes) else source.read_bytes()


def test_two_files_and_sibling_default(tmp_path):
    (tmp_path / "a.jsonl").write_bytes(SUB)
    (tmp_path / "p.json").write_bytes(PPL)
    files = read_submission(tmp_path / "a.jsonl", tmp_path / "p.json", Limits())
    assert content(files.ppl) == PPL and files.names == ("a.jsonl", "p.json")
    with pytest.raises(UsageError, match="perplexities not found"):
        read_submission(tmp_path / "a.jsonl", None, Limits())
    (tmp_path / "ppl_output.json").write_bytes(PPL)
    assert content(read_submission(tmp_path / "a.jsonl", None, Limits()).submission) == SUB


def test_directory_root_or_one_folder(tmp_path):
    for folder in (tmp_path / "flat", tmp_path / "nested" / "team"):
        folder.mkdir(parents=True)
        (folder / "submission.jsonl").write_bytes(SUB)
        (folder / "ppl_output.json").write_bytes(PPL)
    assert content(read_submission(tmp_path / "flat", None, Limits()).submission) == SUB
    assert content(read_submission(tmp_path / "nested", None, Limits()).ppl) == PPL


def test_directory_missing_a_file(tmp_path):
    (tmp_path / "submission.jsonl").write_bytes(SUB)
    with pytest.raises(SubmissionInvalid) as info:
        read_submission(tmp_path, None, Limits())
    assert [(i.file, i.code) for i in info.value.issues] == [("ppl_output.json", "missing_file")]


@pytest.mark.parametrize("prefix", ["", "my_team/"])
def test_zip_root_or_one_folder(tmp_path, prefix):
    z = make_zip(
        tmp_path / "s.zip",
        {f"{prefix}submission.jsonl": SUB, f"{prefix}ppl_output.json": PPL, "__MACOSX/._x": b"junk"},
        zipfile.ZIP_DEFLATED,
    )
    files = read_submission(z, None, Limits())
    assert (files.submission, files.ppl) == (SUB, PPL)


@pytest.mark.parametrize(
    "entries, code",
    [
        ({"submission.jsonl": SUB}, "missing_file"),
        ({"../submission.jsonl": SUB, "ppl_output.json": PPL}, "zip_path"),
        ({"/abs/submission.jsonl": SUB, "ppl_output.json": PPL}, "zip_path"),
        ({"submission.jsonl": SUB, "ppl_output.json": PPL, "inner.zip": b"PK"}, "zip_nested"),
        ({"a/submission.jsonl": SUB, "b/submission.jsonl": SUB, "a/ppl_output.json": PPL}, "zip_ambiguous"),
        ({"a/b/submission.jsonl": SUB, "a/b/ppl_output.json": PPL}, "missing_file"),
    ],
)
def test_zip_rejections(tmp_path, entries, code):
    z = make_zip(tmp_path / "s.zip", entries, zipfile.ZIP_DEFLATED)
    with pytest.raises(SubmissionInvalid) as info:
        read_submission(z, None, Limits())
    assert code in [i.code for i in info.value.issues]


def test_zip_bomb_and_size_limits(tmp_path):
    entries = {"submission.jsonl": b" " * (64 << 20), "ppl_output.json": PPL}
    z = make_zip(tmp_path / "bomb.zip", entries, zipfile.ZIP_DEFLATED)
    assert z.stat().st_size < 1 << 20
    with pytest.raises(SubmissionInvalid) as info:
        read_submission(z, None, Limits())
    assert info.value.issues[0].code == "zip_ratio"
    with pytest.raises(SubmissionInvalid) as info:
        read_submission(z, None, Limits(max_file_mib=1))
    assert info.value.issues[0].code == "file_too_large"


def test_file_size_limit_before_reading(tmp_path):
    (tmp_path / "submission.jsonl").write_bytes(b"x" * (1 << 20 + 1))
    (tmp_path / "ppl_output.json").write_bytes(PPL)
    with pytest.raises(SubmissionInvalid) as info:
        read_submission(tmp_path, None, Limits(max_file_mib=1))
    assert [(i.file, i.code) for i in info.value.issues] == [("submission.jsonl", "file_too_large")]


def test_not_a_zip_and_missing_path(tmp_path):
    (tmp_path / "s.zip").write_bytes(b"PK\x03\x04 broken")
    with pytest.raises(SubmissionInvalid):
        read_submission(tmp_path / "s.zip", None, Limits())
    with pytest.raises(UsageError):
        read_submission(tmp_path / "nothing", None, Limits())
