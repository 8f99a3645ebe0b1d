"""Each defence of contract section 3 against hostile uploads and a faulty environment, one test a class."""

import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from helpers import (
    EXAMPLES,
    PUBLIC,
    ROOT,
    ROWS,
    VALID_PPL,
    VALID_SUB,
    has_sigterm_handler,
    score_into,
    upload,
    validate_cli,
)

from scorer.errors import SubmissionInvalid
from scorer.inputs.config import Limits
from scorer.inputs.intake import read_submission
from scorer.metric import morphology
from scorer.outputs.output_dir import locked, prepare


def submission_dir(root: Path, sub: bytes = VALID_SUB, ppl: bytes = VALID_PPL) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "submission.jsonl").write_bytes(sub)
    (root / "ppl_output.json").write_bytes(ppl)
    return root


def score_popen(
    submission: Path, output: Path, *extra, data: Path = PUBLIC, limit_kib: int | None = None, **kwargs
) -> subprocess.Popen:
    """``score`` of ``submission`` against ``data`` into ``output``, ``extra`` added, started in a process of
    its own (its output piped, as text), under ``ulimit -v limit_kib`` where given; ``kwargs`` go to
    :class:`subprocess.Popen`."""
    args = ["score", "--data", data, "--submission", submission, "--output", output, *extra]
    command = [sys.executable, "-m", "scorer", *map(str, args)]
    if limit_kib:
        command = ["bash", "-c", f'ulimit -v {limit_kib} && exec "$@"', "scorer", *command]
    return subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs
    )


# --- nothing outside the submission is read ------------------------------------------------


def test_a_symlinked_folder_in_a_submission_is_refused(tmp_path):
    outside = submission_dir(tmp_path / "outside")
    upload = tmp_path / "upload"
    upload.mkdir()
    os.symlink(outside, upload / "team")
    code, scores = score_into(tmp_path, upload)
    assert code == 1 and scores["status"] == "invalid"
    assert scores["errors"][0]["code"] == "symlink" and "symbolic link" in scores["errors"][0]["message"]


def test_a_symlinked_file_is_refused_in_every_mode(tmp_path):
    outside = submission_dir(tmp_path / "outside")
    upload = tmp_path / "upload"
    upload.mkdir()
    os.symlink(outside / "submission.jsonl", upload / "submission.jsonl")
    (upload / "ppl_output.json").write_bytes(VALID_PPL)
    for given, code in ((upload, "symlink"), (upload / "submission.jsonl", "not_a_file")):
        with pytest.raises(SubmissionInvalid) as info:
            read_submission(given, None, Limits())
        assert info.value.issues[0].code == code and "symbolic link" in info.value.issues[0].message


def test_a_fifo_is_refused_without_opening_it(tmp_path):
    fifo = tmp_path / "sub.jsonl"
    os.mkfifo(fifo)
    (tmp_path / "ppl_output.json").write_bytes(VALID_PPL)
    code, scores = score_into(tmp_path, fifo)  # a read would block for ever: returning at all is the check
    assert code == 1 and "FIFO" in scores["errors"][0]["message"]
    folder = tmp_path / "dir"
    folder.mkdir()
    os.mkfifo(folder / "submission.jsonl")
    (folder / "ppl_output.json").write_bytes(VALID_PPL)
    with pytest.raises(SubmissionInvalid) as info:
        read_submission(folder, None, Limits())
    assert info.value.issues[0].code == "not_a_file"


def test_a_device_is_refused(tmp_path):
    code, scores = score_into(tmp_path, "/dev/zero")
    assert code == 1 and "character device" in scores["errors"][0]["message"]


# --- numbers and messages ------------------------------------------------------------------


@pytest.mark.parametrize("number", ["1" * 400, "-" + "9" * 4300, "1e400"])
def test_a_number_beyond_a_double_is_invalid_and_located(tmp_path, number, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    ppl = json.loads(VALID_PPL)
    first = next(iter(ppl))
    text = json.dumps(ppl).replace(
        json.dumps(ppl[first]), f"[{number}" + ", 2.0" * (len(ppl[first]) - 1) + "]", 1
    )
    code, scores = score_into(tmp_path, submission_dir(tmp_path / "s", ppl=text.encode()))
    assert code == 1
    (error,) = scores["errors"]
    assert (error["dialog_id"], error["turn"], error["line"], error["column"]) == (
        first,
        0,
        1,
        len(first) + 7,
    )
    assert "too large" in error["message"] and len(error["message"]) < 120
    assert validate_cli(tmp_path / "s") == 1
    assert list((tmp_path / "tmp").iterdir()) == []  # no log written anywhere


# --- bounded work ----------------------------------------------------------------------------


def _bounded(tmp_path, submission: Path, expect: int, limit_kib=1 << 20, cpu_seconds=10.0) -> str:
    """Run ``score`` under a memory limit; its CPU time (not wall time: machines are shared) is bounded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = score_popen(submission, tmp_path / "o", "--quiet", "--no-synonyms", limit_kib=limit_kib)
    out, err = process.communicate(timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert process.returncode == expect, err
    used = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert used < cpu_seconds and "Traceback" not in err
    return err


@pytest.mark.slow
def test_a_million_bad_perplexities_cost_bounded_time_and_memory(tmp_path):
    bad = b'{"d-0001": [' + b", ".join([b"0.5"] * 1_000_000) + b"]}"
    err = _bounded(tmp_path, submission_dir(tmp_path / "s", ppl=bad), 1)
    # the values past the dialogue's two turns are counted, not checked one by one
    assert "dialog_id 'd-0001': 1,000,000 perplexities given, but the dialogue has 2 turns" in err
    assert "turn 2: perplexity 0.5 is below 1" in err and "turn 3:" not in err


@pytest.mark.slow
def test_a_million_empty_objects_cost_bounded_memory(tmp_path):
    err = _bounded(tmp_path, submission_dir(tmp_path / "s", sub=b"{}\n" * 1_000_000), 1)
    assert "missing required key" in err


@pytest.mark.slow
def test_a_valid_file_padded_to_the_limit_scores_under_one_gib(tmp_path):
    folder = submission_dir(tmp_path / "s")
    data = VALID_SUB + b"\n" * (256 * 1024 * 1024 - len(VALID_SUB))
    (folder / "submission.jsonl").write_bytes(data)
    _bounded(tmp_path, folder, 0, cpu_seconds=20)
    assert json.loads((tmp_path / "o" / "scores.json").read_text())["status"] == "ok"


# --- zip -------------------------------------------------------------------------------------


def test_a_zip_with_a_repeated_name_is_invalid(tmp_path):
    path = tmp_path / "s.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("submission.jsonl", VALID_SUB)
        archive.writestr("ppl_output.json", VALID_PPL)
        with pytest.warns(UserWarning):
            archive.writestr("submission.jsonl", b"{}\n")
    with pytest.raises(SubmissionInvalid) as info:
        read_submission(path, None, Limits())
    assert info.value.issues[0].code == "zip_duplicate"


def test_the_entry_cap_holds_before_the_directory_is_parsed(tmp_path, monkeypatch):
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for k in range(1001):
            archive.writestr(f"f{k}", b"")

    def no_parsing(*args, **kwargs):
        raise AssertionError("the central directory was parsed")

    monkeypatch.setattr(zipfile, "ZipFile", no_parsing)
    with pytest.raises(SubmissionInvalid) as info:
        read_submission(path, None, Limits())
    assert info.value.issues[0].code == "zip_entries"


def test_the_zip_file_itself_is_size_checked(tmp_path):
    path = tmp_path / "s.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("submission.jsonl", os.urandom(2 * 1024 * 1024))
    with pytest.raises(SubmissionInvalid) as info:
        read_submission(path, None, Limits(max_file_mib=1))
    assert info.value.issues[0].code == "file_too_large" and info.value.issues[0].file == "s.zip"


# --- environment faults ----------------------------------------------------------------------


def test_an_output_that_is_a_file_is_a_usage_error(tmp_path, capsys):
    target = tmp_path / "taken"
    target.write_text("x")
    code, _ = score_into(tmp_path, EXAMPLES / "realistic", "--output", str(target))
    assert code == 2 and str(target) in capsys.readouterr().err
    assert target.read_text() == "x"


def test_an_unwritable_output_is_a_usage_error(tmp_path, monkeypatch):
    import tempfile as tf

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tf, "mkstemp", refuse)
    from scorer.errors import UsageError

    with pytest.raises(UsageError, match="cannot be written"):
        prepare(tmp_path / "o")


def test_an_unreadable_data_directory_is_a_usage_error(tmp_path, capsys):
    code, _ = score_into(tmp_path, EXAMPLES / "realistic", "--data", str(tmp_path / "nowhere"))
    assert code == 2 and "nowhere" in capsys.readouterr().err


# --- concurrency and signals -----------------------------------------------------------------


@pytest.mark.slow
def test_a_second_run_waits_for_the_lock(tmp_path):
    out = prepare(tmp_path / "o")
    with locked(out):
        process = score_popen(EXAMPLES / "realistic", out, "--quiet", "--jobs", "1")
        assert process.stderr is not None
        # --quiet: its one line while it waits, then nothing till the end; never waited on for ever
        assert select.select([process.stderr], [], [], 60)[0], "no line from the second run in 60 s"
        said = process.stderr.readline()
        assert said.startswith("waiting: another run is writing"), said
        time.sleep(0.5)
        assert process.poll() is None and not (out / "scores.json").exists()
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0 and "waiting" not in err and (out / "scores.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_cleanly_and_keeps_the_previous_outputs(tmp_path, signum, code):
    out = tmp_path / "o"
    out.mkdir()
    (out / "scores.json").write_text('{"status": "previous"}')
    big = tmp_path / "big"
    rows = [json.loads(x) for x in VALID_SUB.decode().splitlines()]
    data = tmp_path / "data"
    data.mkdir()
    dialogues = [json.loads(x) for x in (PUBLIC / "dialogues.jsonl").read_text().splitlines()]
    answers = [json.loads(x) for x in (PUBLIC / "answers.jsonl").read_text().splitlines()]
    ppl = json.loads(VALID_PPL)
    copies = 3000
    (data / "dialogues.jsonl").write_text(
        "".join(
            json.dumps({**d, "dialog_id": f"{d['dialog_id']}-{k}"}) + "\n"
            for k in range(copies)
            for d in dialogues
        )
    )
    (data / "answers.jsonl").write_text(
        "".join(
            json.dumps({**a, "dialog_id": f"{a['dialog_id']}-{k}"}) + "\n"
            for k in range(copies)
            for a in answers
        )
    )
    submission_dir(
        big,
        "".join(
            json.dumps({**r, "dialog_id": f"{r['dialog_id']}-{k}"}) + "\n"
            for k in range(copies)
            for r in rows
        ).encode(),
        json.dumps({f"{d}-{k}": v for k in range(copies) for d, v in ppl.items()}).encode(),
    )
    config = tmp_path / "c.toml"
    config.write_text("[meteor]\ngamma = 0.5\n")
    # SIGINT as a terminal delivers it: a shell's background job (a CI runner's, say) starts with it ignored,
    # and Python then keeps it ignored
    process = score_popen(
        big,
        out,
        "--quiet",
        "--config",
        config,
        data=data,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    while not has_sigterm_handler(process.pid) and process.poll() is None:  # start-up is not the run
        time.sleep(0.001)
    time.sleep(0.5)  # into the run: reading and scoring 3,000 copies of the example take seconds
    assert process.poll() is None
    os.killpg(process.pid, signum)
    _, err = process.communicate(timeout=60)
    assert process.returncode == code
    lines = err.strip().splitlines()  # --quiet: no config line; the one line that says why it stopped
    assert len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith(("interrupted (SIGINT)", "terminated (SIGTERM)"))
    assert (out / "scores.json").read_text() == '{"status": "previous"}'
    assert sorted(p.name for p in out.iterdir()) == ["scores.json"]


# --- normalisation and rejection are bounded ----------------------------------------------------------


def test_a_long_prefix_run_scores_in_linear_time():
    """pymorphy3's time on a prefix run grows with its square; the cap keeps a token's cost bounded."""
    start = time.process_time()
    for k in range(20):
        morphology.analyse("не" * 10_000 + f"кот{k}")
    assert time.process_time() - start < 1.0  # each is refused by its length, not analysed (2 s each)


def test_a_long_run_of_combining_marks_is_an_invalid_answer_with_its_place(tmp_path):
    marks = "\u0301\u0316" * 10_000
    code, scores = score_into(tmp_path, upload(tmp_path / "s", "а" + marks[:19_999]), "--no-synonyms")
    assert code == 1 and scores["status"] == "invalid"
    [error] = scores["errors"]
    assert (error["code"], error["line"], error["dialog_id"], error["turn"]) == (
        "combining_run",
        1,
        "d-0001",
        0,
    )
    assert "19,999 combining marks in a row from character 2; at most 30" in error["message"]
    # 30 in a row is within the bound, and is scored
    assert score_into(tmp_path, upload(tmp_path / "t", "а" + marks[:30]), "--no-synonyms", out="o2")[0] == 0


def test_many_answers_of_combining_marks_are_rejected_in_bounded_cpu(tmp_path):
    rows = json.loads(json.dumps(ROWS))
    for row in rows:
        row["answers"] = ["а" + ("\u0301\u0316" * 10_000)[:19_999] for _ in row["answers"]]
    start = time.process_time()
    code, scores = score_into(tmp_path, upload(tmp_path / "s", rows=rows), "--no-synonyms")
    assert code == 1 and scores["errors"][0]["code"] == "combining_run"
    assert time.process_time() - start < 5.0  # NFKC over them would take about 0.6 s each, 35 s in all


def test_four_million_lines_that_are_not_json_are_rejected_fast(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "submission.jsonl").write_bytes(b"x\n" * 4_000_000)
    (folder / "ppl_output.json").write_bytes(VALID_PPL)
    start = time.process_time()
    code, scores = score_into(tmp_path, folder, "--no-synonyms")
    assert code == 1 and len(scores["errors"]) == 100
    assert scores["unchecked"] == [
        {"file": "submission.jsonl", "from_line": 101, "lines": 3_999_900},
        {"file": "ppl_output.json", "from_line": 1, "lines": len(VALID_PPL.splitlines())},
    ]
    assert time.process_time() - start < 5.0  # CPU time: 25 s when every line was parsed


def _checked(dialogues, data, monkeypatch, plain):
    """What check_submission makes of ``data`` (its result or its issues) and the progress it reports, read
    a piece at a time where the file is plain (``plain``) or line by line throughout."""
    from scorer.inputs import jsonio, validation

    monkeypatch.setattr(jsonio, "REPORT_BYTES", 256)  # many pieces, many reports
    if not plain:
        monkeypatch.setattr(validation, "plain_lines", lambda *args, **keywords: iter(()))
    reports = []
    try:
        valid = validation.check_submission(
            dialogues, data, None, Limits(), progress=lambda *step: reports.append(step)
        )
        outcome = ("valid", valid.answers, [w.to_dict() for w in valid.warnings])
    except SubmissionInvalid as exc:
        outcome = ("invalid", [i.to_dict() for i in exc.listed()], exc.not_listed, exc.unchecked)
    monkeypatch.undo()
    return outcome, reports


def test_plain_pieces_read_as_the_line_by_line_path_reads_them(monkeypatch):
    """The submission read a piece at a time (``jsonio.plain_lines``) gives what reading it line by line
    gives: the same values, issues, unchecked lines and progress, on plain files and on every kind of line
    that sends the reader back to the line-by-line path, early, late and in the middle of a piece."""
    from scorer.inputs.validation import Dialogue

    ids = [f"d-{k:03d}" for k in range(40)]
    dialogues = [Dialogue(d, "Text2Text", 2) for d in ids]

    def line(d, answers=("кот сидит", "дом")):
        return json.dumps({"dialog_id": d, "answers": list(answers)}, ensure_ascii=False)

    good = [line(d) for d in ids]
    odd_lines = [
        "",
        "   ",
        " " + good[0],
        good[0] + "  \t",
        good[0] + " x",
        '{"dialog_id": "d-000", "dialog_id": "d-001", "answers": ["a", "b"]}',
        '{"dialog_id": "d-000", "answers": [NaN, "b"]}',
        '{"dialog_id": "d-000", "answers": ["\\ud800", "b"]}',
        '{"dialog_id": "d-000", "answers": ["a", "b"], "x": ' + "[" * 70 + "]" * 70 + "}",
        '{"dialog_id": "d-000", "answers": ["a", "b"], "x": ' + "[" * 60 + "]" * 60 + "}",
        '{"dialog_id": "d-000", "answers": ["a", "b"], "n": ' + "9" * 400 + "}",
        '{"dialog_id": "d-000", "answers": ["a' + "\u0301" * 40 + '", "b"]}',
        '{"dialog_id": "d-000", "answers": ["a' + "\\u0301" * 40 + '", "b"]}',
        '{"dialog_id": "d-000", "answers": ["a", "b"]',
        "[1, 2]",
        "{'dialog_id': 'd-000'}",
        '{"x": 1}',
        good[0] + good[1],  # two values on one line
        good[0] + "," + good[1],
        '{"dialog_id": "d-000", "answers": ["' + "[{" * 40 + '", "b"]}',  # brackets in a string: not deep
        '{"dialog_id": "d-000", "answers": ["' + "[" * 600 + '", "b"]}',  # more than a piece's lines hold
    ]
    files = [
        "\n".join(good) + "\n",
        "\n".join(good),
        "\ufeff" + "\n".join(good) + "\n",
        "\r\n".join(good) + "\r\n",
        "\n".join(good) + "\n\n\n",
        "",
        "\n".join(good[:5] + ['{"x": 1}'] * 150 + good[5:]) + "\n",  # the list fills: the rest is counted
    ]
    for odd in odd_lines:
        for at in (0, 7, 25, 39):
            files.append("\n".join(good[:at] + [odd] + good[at + 1 :]) + "\n")
    cases = [text.encode("utf-8") for text in files]
    not_utf8 = b'{"dialog_id": "d-020", "answers": ["\xff", "b"]}\n'
    cases.append(("\n".join(good[:20]) + "\n").encode() + not_utf8)
    for data in cases:
        assert _checked(dialogues, data, monkeypatch, True) == _checked(dialogues, data, monkeypatch, False)
