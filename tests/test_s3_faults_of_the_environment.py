"""A hostile environment (contract section 3): closed, full and broken standard streams, encodings that
cannot show a character, full disks, a central directory that lies about its size, links in an upload."""

import errno
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from helpers import (
    EXAMPLES,
    PUBLIC,
    ROOT,
    make_split,
    score_cli,
    score_process,
    scores_of,
    write_json,
    write_jsonl,
)

from scorer.cli import exits

SCORE = ("score", "--data", PUBLIC, "--submission", EXAMPLES / "realistic")


def shell(command: str, **kwargs) -> subprocess.CompletedProcess:
    """``command`` in sh, where ``SCORER`` runs the scorer."""
    env = {**os.environ, "SCORER": f"{sys.executable} -m scorer", **kwargs.pop("env", {})}
    return subprocess.run(
        ["sh", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env, **kwargs
    )


def args(*items) -> str:
    return " ".join(f"'{item}'" for item in items)


@pytest.mark.slow
@pytest.mark.parametrize("redirect", [">&-", "2>&-", ">&- 2>&-", "> /dev/full", "2> /dev/full"])
def test_closed_or_full_streams_keep_the_outputs_exit_code(tmp_path, redirect):
    out = tmp_path / "out"
    done = shell(f"$SCORER {args(*SCORE, '--output', out)} {redirect}")
    assert done.returncode == 0, done.stderr
    assert scores_of(out)["status"] == "ok" and "Traceback" not in done.stderr
    # an invalid upload keeps its 1
    bad = tmp_path / "bad"
    done = shell(
        f"$SCORER score --data {PUBLIC} --submission {EXAMPLES / 'invalid' / 'nan_perplexity'} "
        f"--output {bad} {redirect}"
    )
    assert done.returncode == 1 and scores_of(bad)["status"] == "invalid" and "Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_broken_pipe_keeps_the_outputs_exit_code(tmp_path, stream):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    try:
        done = subprocess.run(
            [sys.executable, "-m", "scorer", *map(str, SCORE), "--output", str(tmp_path / "o")],
            cwd=ROOT,
            timeout=300,
            **{stream: write},
        )
    finally:
        os.close(write)
    assert done.returncode == 0
    assert scores_of(tmp_path / "o")["status"] == "ok"


@pytest.fixture
def cyrillic_upload(tmp_path):
    """A reference directory whose ids are Cyrillic, and an upload that gets one of them wrong."""
    data = make_split(
        tmp_path, [("диалог-1", "Text2Text", [["кот спит"]]), ("диалог-2", "Text2Text", [["пёс"]])]
    )
    sub = tmp_path / "sub"
    write_jsonl(
        sub / "submission.jsonl",
        [{"dialog_id": "диалог-1", "answers": ["кот"]}, {"dialog_id": "диалог-9", "answers": ["пёс"]}],
    )
    write_json(sub / "ppl_output.json", {"диалог-1": [2.0], "диалог-9": [3.0]})
    return data, sub


ASCII_ENVIRONMENTS = [
    {"PYTHONIOENCODING": "ascii"},
    {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"},
]


@pytest.mark.slow
@pytest.mark.parametrize("env", ASCII_ENVIRONMENTS, ids=["ascii", "C-locale"])
def test_characters_the_encoding_cannot_show_are_escaped(tmp_path, cyrillic_upload, env):
    data, sub = cyrillic_upload
    done = shell(f"$SCORER validate --json --data {data} --submission {sub}", env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr and "internal error" not in done.stderr
    payload = json.loads(done.stdout)  # escaped as \u0434...: still the same JSON
    assert payload["status"] == "invalid"
    assert any("диалог-9" in (e.get("dialog_id") or "") + e["message"] for e in payload["errors"])
    assert "\\u0434" in done.stderr  # the error's dialog_id, escaped
    # leaderboard: the table names an invalid entry's Cyrillic id; exit 0 once leaderboard.json is written
    board = tmp_path / "uploads"
    shutil.copytree(sub, board / "команда")
    done = shell(
        f"$SCORER leaderboard --data {data} --submissions {board} --output {tmp_path / 'lb'} "
        "--no-report --resamples 40",
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "\\u043a" in done.stdout
    done = shell("$SCORER explain --candidate 'кот спит' --reference 'кошка спала' --no-synonyms", env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr and "\\u043a" in done.stdout
    out = tmp_path / "scored"
    good = tmp_path / "good"
    write_jsonl(
        good / "submission.jsonl",
        [{"dialog_id": "диалог-1", "answers": ["кот"]}, {"dialog_id": "диалог-2", "answers": ["пёс"]}],
    )
    write_json(good / "ppl_output.json", {"диалог-1": [2.0], "диалог-2": [3.0]})
    done = shell(f"$SCORER score --data {data} --submission {good} --output {out} --no-synonyms", env=env)
    assert done.returncode == 0 and scores_of(out)["status"] == "ok"


def _file_size_limit(limit: int):
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.slow
def test_a_full_disk_names_the_path_and_keeps_the_previous_outputs(tmp_path):
    out = tmp_path / "out"
    assert score_cli(EXAMPLES / "realistic", out, "--quiet") == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    done = score_process(
        EXAMPLES / "realistic", out, "--quiet", timeout=300, preexec_fn=_file_size_limit(4096)
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    message = done.stderr.strip().splitlines()[-1]
    assert message.startswith(f"error: {out / 'details.csv'}: File too large"), message
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_fault_without_a_path_names_the_output_directory(tmp_path):
    fault = OSError(errno.EMFILE, "Too many open files")
    assert exits.environment_fault(fault, exits.RunState(output=tmp_path)) == (
        f"{tmp_path}: Too many open files (raise the limit, ulimit -n, or give fewer --jobs)"
    )
    full = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "scores.json"))
    assert exits.environment_fault(full, exits.RunState()) == (
        f"{tmp_path / 'scores.json'}: No space left on device (free some space, or give another --output)"
    )


def lying_zip(path: Path, records: int) -> Path:
    """A zip whose end record says it holds 2 entries while its central directory holds ``records``."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("submission.jsonl", b"{}\n")
    data = path.read_bytes()
    end = data.rindex(b"PK\x05\x06")
    start = struct.unpack("<I", data[end + 16 : end + 20])[0]
    record = data[start:end]
    directory = record * records
    tail = bytearray(data[end : end + 22])
    tail[8:12] = struct.pack("<HH", 2, 2)
    tail[12:16] = struct.pack("<I", len(directory))
    path.write_bytes(data[:start] + directory + bytes(tail))
    return path


def test_a_central_directory_that_lies_about_its_count_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    upload = lying_zip(tmp_path / "upload.zip", 20_000)
    parsed = []
    monkeypatch.setattr(zipfile, "ZipFile", lambda *a, **k: parsed.append(a) or pytest.fail("parsed"))
    out = tmp_path / "out"
    assert score_cli(upload, out, "--quiet") == 1
    (error,) = scores_of(out)["errors"]
    assert error["code"] == "zip_entries" and "more than 1,000 entries" in error["message"] and not parsed


@pytest.mark.slow
def test_the_lying_zip_costs_little_memory(tmp_path):
    upload = lying_zip(tmp_path / "upload.zip", 2_000_000)
    assert upload.stat().st_size > 90_000_000
    # VmHWM is this process's own peak (ru_maxrss would carry the forking test process's over the exec)
    code = (
        "from scorer.cli import main\n"
        f"code = main(['score', '--data', {str(PUBLIC)!r}, '--submission', {str(upload)!r}, "
        f"'--output', {str(tmp_path / 'o')!r}, '--quiet'])\n"
        "peak = next(line for line in open('/proc/self/status') if line.startswith('VmHWM:')).split()[1]\n"
        "print(code, peak)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    exit_code, peak_kib = map(int, done.stdout.split())
    assert exit_code == 1 and peak_kib < 200 * 1024, (exit_code, peak_kib)


def test_a_link_beside_the_two_files_is_refused(tmp_path):
    sub = tmp_path / "sub"
    shutil.copytree(EXAMPLES / "realistic", sub)
    (sub / "README").symlink_to("/etc/passwd")
    out = tmp_path / "out"
    assert score_cli(sub, out) == 1
    (error,) = scores_of(out)["errors"]
    assert error["code"] == "symlink" and error["message"].startswith("README is a symbolic link")
    # deeper too, and a link to a folder
    (sub / "README").unlink()
    (sub / "notes" / "more").mkdir(parents=True)
    (sub / "notes" / "more" / "etc").symlink_to("/etc")
    assert score_cli(sub, out) == 1
    assert scores_of(out)["errors"][0]["message"].startswith("notes/more/etc is a symbolic link")


@pytest.mark.slow
def test_validate_json_into_a_closed_pipe_keeps_its_exit_code(tmp_path):
    command = (
        f"{sys.executable} -m scorer validate --data {PUBLIC} --submission {EXAMPLES / 'realistic'} "
        "--json | head -c0; echo ${PIPESTATUS[0]}"
    )
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "0" and "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


@pytest.mark.slow
def test_the_console_script_is_the_process_python_m_scorer_runs(tmp_path):
    """``scorer`` (the console script) runs ``scorer.cli:run``, as ``python -m scorer`` does, from a module
    beside the package that holds the signals before importing it (``scorer_console.py``): closed standard
    descriptors are given /dev/null before anything is opened, and the signals are held until the command
    takes them."""
    with open(ROOT / "pyproject.toml", "rb") as fh:
        project = tomllib.load(fh)
    assert project["project"]["scripts"] == {"scorer": "scorer_console:run"}
    assert project["tool"]["setuptools"]["py-modules"] == ["scorer_console"]
    script = Path(sys.executable).parent / "scorer"
    if not script.exists():  # the project run from its checkout, not installed
        pytest.skip("the console script is not installed beside this Python")
    out = tmp_path / "out"
    done = shell(f"$SCORER {args(*SCORE, '--output', out)} >&- 2>&-", env={"SCORER": str(script)})
    assert done.returncode == 0
    assert scores_of(out)["status"] == "ok"
