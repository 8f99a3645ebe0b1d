"""Contract section 3, what is written for programs and what people read on stderr: a JSON output is valid
JSON whatever the names hold (escaped by JSON's own rules, never by the terminal's), no stderr line holds
more than 1,000 characters, and no name starts a line of its own."""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
import unicodedata

import pytest
from helpers import EXAMPLES, leaderboard_cli, process, score_cli, validate_cli

from scorer.cli import commands
from scorer.progress import ProgressDisplay, render
from scorer.safe_text import LINE_LIMIT, json_text, shown, shown_name
from scorer.scoring.audit import Audit, Flag, flagged_lines
from scorer.streams import Forgiving

#: A dialog_id that the terminal's escaping would touch: NEL, the line separator, a character beyond U+FFFF
#: (not a lone surrogate), ESC, a newline, a right-to-left override, a byte-order mark, a quote, a backslash.
ODD_ID = 'x\x85y\u2028z\U0001f600\x1bq\nr\u202e\ufeff"\\'
#: The same as JSON writes it: JSON's own escapes, nothing raw that a terminal would act on.
ODD_ID_JSON = '"x\\u0085y\\u2028z\U0001f600\\u001bq\\nr\\u202e\\ufeff\\"\\\\"'
#: A folder's name that a file system allows (no slash, no NUL) holding the same kind of characters.
ODD_NAME = "team\x85\u2028\x1b[2J\n\U0001f600\u202eexe"
RAW = ("\x85", "\u2028", "\x1b", "\u202e", "\ufeff")
FORGED = "evil\naudit: team-alpha: ppl_at_one: 66 of 66 turns report perplexity 1"


def _submission_with_id(folder, dialog_id):
    """The realistic example with the id of its first dialogue replaced by ``dialog_id``."""
    rows = [
        json.loads(line)
        for line in (EXAMPLES / "realistic" / "submission.jsonl").read_text("utf-8").splitlines()
    ]
    ppl = json.loads((EXAMPLES / "realistic" / "ppl_output.json").read_text("utf-8"))
    first = rows[0]["dialog_id"]
    rows[0]["dialog_id"] = dialog_id
    ppl = {dialog_id if key == first else key: value for key, value in ppl.items()}
    folder.mkdir(parents=True)
    (folder / "submission.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    (folder / "ppl_output.json").write_text(json.dumps(ppl, ensure_ascii=False), encoding="utf-8")
    return folder


def _no_raw(text):
    return not any(char in text for char in RAW)


# --- 1. JSON for programs ------------------------------------------------------------------------------


def test_validate_json_gives_every_dialog_id_back_exactly(tmp_path, capsys):
    submission = _submission_with_id(tmp_path / "sub", ODD_ID)
    assert validate_cli(submission, "--json") == 1
    out = capsys.readouterr().out
    payload = json.loads(out)
    assert payload["status"] == "invalid"
    assert [(e["file"], e["code"], e["dialog_id"]) for e in payload["errors"]] == [
        ("submission.jsonl", "unknown_id", ODD_ID),
        ("submission.jsonl", "missing_id", "d-0001"),
        ("ppl_output.json", "unknown_id", ODD_ID),
        ("ppl_output.json", "missing_id", "d-0001"),
    ]
    assert out.count(f'"dialog_id": {ODD_ID_JSON},') == 2
    assert _no_raw(out)


def test_validate_json_of_a_usage_error_gives_the_path_back_exactly(tmp_path, capsys):
    missing = tmp_path / ODD_NAME
    assert validate_cli(missing, "--json") == 2
    out = capsys.readouterr().out
    assert json.loads(out)["errors"][0]["message"] == f"submission {missing}: no such file or directory"
    assert _no_raw(out)


def test_validate_json_is_plain_ascii_where_stdout_cannot_show_more(tmp_path, monkeypatch):
    submission = _submission_with_id(tmp_path / "sub", ODD_ID)
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", stdout)
    assert validate_cli(submission, "--json") == 1
    stdout.flush()
    data = stdout.buffer.getvalue()
    assert data.isascii()
    assert json.loads(data)["errors"][0]["dialog_id"] == ODD_ID


def test_scores_json_and_audit_json_give_the_names_back_exactly(tmp_path):
    # an invalid submission: scores.json lists its errors, each with its dialog_id
    out = tmp_path / "invalid-out"
    assert score_cli(_submission_with_id(tmp_path / "sub", ODD_ID), out) == 1
    text = (out / "scores.json").read_text(encoding="utf-8")
    assert [e["dialog_id"] for e in json.loads(text)["errors"]] == [ODD_ID, "d-0001", ODD_ID, "d-0001"]
    assert text.count(f'"dialog_id": {ODD_ID_JSON},') == 2 and _no_raw(text)
    # a scored one, from a folder with an odd name: audit.json names it
    folder = tmp_path / ODD_NAME
    shutil.copytree(EXAMPLES / "realistic", folder)
    out = tmp_path / "scored-out"
    assert score_cli(folder, out) == 0
    for name in ("scores.json", "audit.json"):
        text = (out / name).read_text(encoding="utf-8")
        assert _no_raw(text)
        payload = json.loads(text)
    assert list(payload["submissions"]) == [ODD_NAME]
    assert json.dumps(ODD_NAME, ensure_ascii=False) not in text
    assert '"team\\u0085\\u2028\\u001b[2J\\n\U0001f600\\u202eexe": {' in text


def test_json_text_escapes_by_jsons_own_rules():
    value = {"id": ODD_ID, "tag": "\U000e0001", "name": "Команда"}
    text = json_text(value, indent=None)
    assert text == f'{{"id": {ODD_ID_JSON}, "tag": "\\udb40\\udc01", "name": "Команда"}}'
    assert json.loads(text) == value
    assert json.loads(json_text(value, ascii_only=True)) == value


# --- 2. stderr lines of at most 1,000 characters ------------------------------------------------------


def _stderr_lines(text):
    return re.split(r"[\r\n]", text)


def test_no_stderr_line_exceeds_1000_characters(tmp_path, monkeypatch, capsys):
    # a cache directory that cannot be used: its name is 5,000 characters, one folder too long for any disk
    cache = str(tmp_path / ("c" * 5000))
    monkeypatch.setenv("SCORER_CACHE_DIR", cache)
    # one process: a run allowed two builds the thesaurus index on a forked worker when the cache has none
    assert score_cli(EXAMPLES / "realistic", tmp_path / "out", "--jobs", "1") == 0
    err = capsys.readouterr().err
    mark = f"… ({len(cache):,} characters)"
    assert (
        f"warning: the cache directory {cache[: 200 - len(mark)]}{mark} is not used (it cannot be made or "
        "read (File name too long)); the run goes on without a persistent cache"
    ) in _stderr_lines(err)
    assert max(len(line) for line in _stderr_lines(err)) <= LINE_LIMIT
    # a submission path of 3,000 characters
    path = str(tmp_path / ("p" * 3000))
    assert validate_cli(path) == 2
    err = capsys.readouterr().err
    mark, end = f"… ({len(path):,} characters)", ": File name too long"
    start = "error: submission "
    assert f"{start}{path[: LINE_LIMIT - len(start) - len(mark) - len(end)]}{mark}{end}" in _stderr_lines(err)
    assert max(len(line) for line in _stderr_lines(err)) <= LINE_LIMIT
    # a dialog_id of 3,000 characters in a validation error
    long_id = "q" * 3000
    submission = _submission_with_id(tmp_path / "long-id", long_id)
    assert validate_cli(submission) == 1
    err = capsys.readouterr().err
    assert f"dialog_id '{long_id[:59]}…'" in err
    assert max(len(line) for line in _stderr_lines(err)) <= LINE_LIMIT


def test_the_stderr_stream_bounds_any_line():
    target = io.StringIO()
    stream = Forgiving(target, line_limit=LINE_LIMIT)
    name = "n" * 5000
    stream.write("error: ")
    stream.write(name)
    stream.write(": gone\nnext line\n")
    stream.write("x" * 100_000 + "\n")  # beyond what is held of one line
    stream.write("a partial ")
    stream.flush()
    stream.write("y" * 2000 + "\n")
    lines = target.getvalue().split("\n")
    mark = "… (5,000 characters)"
    assert (
        lines[0]
        == "error: " + name[: LINE_LIMIT - len("error: ") - len(mark) - len(": gone")] + mark + ": gone"
    )
    assert lines[1] == "next line"
    assert lines[2] == "x" * (LINE_LIMIT - len("… (100,000 characters)")) + "… (100,000 characters)"
    assert len(lines[3]) == LINE_LIMIT and lines[3].startswith("a partial yyy")
    assert lines[3].endswith("… (2,000 characters)")
    assert lines[4] == ""


def test_a_progress_line_cuts_a_long_name():
    name = "n" * 3000
    line = render(f"{name}: scoring", 1, 2, 0.5)
    mark = "… (3,000 characters)"
    assert (
        line
        == f"{name[: 200 - len(mark)]}{mark}: scoring [###############               ]  50%  1/2  0s left"
    )


# --- 3. no name forges a line -------------------------------------------------------------------------


def test_shown_escapes_every_format_character_and_line_separator():
    assert shown("a\u2028b\u2029c\u200bd\ufeffe\u00adf\U000e0001g") == (
        "a\\u2028b\\u2029c\\u200bd\\ufeffe\\xadf\\U000e0001g"
    )
    assert shown_name(FORGED) == FORGED.replace("\n", "\\n")
    for code in range(0x110000):
        char = chr(code)
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            assert shown(char) != char, hex(code)


def test_a_leaderboard_name_with_a_newline_forges_no_line(tmp_path, monkeypatch, capsys):
    uploads = tmp_path / "uploads"
    for name in (FORGED, "one", "two"):
        shutil.copytree(EXAMPLES / "realistic", uploads / name)
    ppl_file = uploads / "two" / "ppl_output.json"
    ppl = json.loads(ppl_file.read_text(encoding="utf-8"))
    ppl_file.write_text(json.dumps({k: [1.0] * len(v) for k, v in ppl.items()}), encoding="utf-8")
    # the progress line drawn as on a terminal, from the start
    monkeypatch.setattr(commands, "progress_display", lambda quiet: ProgressDisplay(enabled=True, delay=0.0))
    out = tmp_path / "out"
    assert leaderboard_cli(uploads, out, "--resamples", "100") == 0
    captured = capsys.readouterr()
    escaped = FORGED.replace("\n", "\\n")
    for text in (captured.out, captured.err):
        assert not [line for line in _stderr_lines(text) if line.lstrip().startswith("audit: team-alpha")]
    lines = _stderr_lines(captured.err)
    same = ": same_ppl_as: its perplexities equal those of "
    tail = " on nearly every turn: the same model scored twice, or values copied from another entry"
    assert f"audit: one{same}{escaped}{tail}" in lines
    assert f"audit: {escaped}{same}one{tail}" in lines
    assert [line for line in lines if line.startswith("audit: two: ppl_at_one: ")]
    assert any(line.startswith(f"{escaped} (1/3): ") for line in lines)  # the progress line, escaped
    assert max(len(line) for line in lines) <= LINE_LIMIT
    # leaderboard.json and audit.json give the name back exactly
    board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    assert sorted(row["submission"] for row in board["submissions"]) == sorted([FORGED, "one", "two"])
    audit = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    assert sorted(audit["submissions"]) == sorted([FORGED, "one", "two"])
    assert audit["submissions"]["one"]["figures"]["same_ppl_as"] == [FORGED]


def test_a_flagged_line_is_bounded_whatever_the_names():
    long = "L" * 3000 + "\nforged"
    flag = Flag("same_ppl_as", f"its perplexities equal those of {long} on nearly every turn")
    audit = Audit(1, 0.0, 1, None, None, None, 0, flags=(flag,), same_ppl_as=(long,))
    audits = {long: audit}
    (line,) = flagged_lines(audits)
    assert len(line) <= LINE_LIMIT and "\n" not in line
    shown_long = shown_name(long)
    said = f"its perplexities equal those of {shown_long} on nearly every turn"
    assert line == f"audit: {shown_long}: same_ppl_as: {said}"


@pytest.mark.slow
def test_validate_json_prints_one_document_on_exit_2(tmp_path):
    done = process(
        "validate", "--data", tmp_path / "missing", "--submission", EXAMPLES / "realistic", "--json"
    )
    assert done.returncode == 2
    payload = json.loads(done.stdout)
    assert payload["status"] == "error" and "missing" in payload["errors"][0]["message"]
