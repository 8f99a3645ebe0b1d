"""Contract section 10, what a team meets when its code runs: an import the runner's Python cannot satisfy
names that Python and how to run the runner with the team's own; the import and setup are reported once a
phase and left out of the time left; a missing function or package names what is missing and where."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PUBLIC, ROOT, TOY_TEAM, run_process, toy_team

pytestmark = pytest.mark.slow


def run_every_progress_line(*args: object, data: Path) -> subprocess.CompletedProcess:
    """The runner with a progress line after every turn (``PROGRESS_SECONDS`` 0), as a process."""
    program = "; ".join(
        [
            "import sys",
            "from scorer.runner import main, phases",
            "phases.PROGRESS_SECONDS = 0",
            "sys.exit(main.main())",
        ]
    )
    return subprocess.run(
        [sys.executable, "-c", program, "--data", str(data), *map(str, args)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip


# --- the interpreter that ran the code ----------------------------------------------------------------------


def test_a_package_the_runners_python_lacks_names_that_python_and_the_runner_alone(tmp_path):
    code = toy_team(tmp_path / "t", "import torch_not_installed_xyz\n" + TOY_TEAM)
    done = run_process("--data", PUBLIC, "--trusted-code", "--code", code, "--output", tmp_path / "out")
    assert done.returncode == 1, done.stderr
    assert "(exception; phase generate, function import team_code.generate)" in done.stderr
    assert "No module named 'torch_not_installed_xyz'" in done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("run: the code ran under ")]
    assert f"the code ran under {sys.executable};" in line
    assert "python3 runner.py" in line


def test_an_exception_of_the_codes_own_names_no_interpreter(tmp_path):
    code = toy_team(tmp_path / "t", "raise ValueError('a bug of its own')\n" + TOY_TEAM)
    done = run_process("--data", PUBLIC, "--trusted-code", "--code", code, "--output", tmp_path / "out")
    assert done.returncode == 1 and "ValueError: a bug of its own" in done.stderr
    assert "the code ran under" not in done.stderr


# --- the setup's duration, and the time left from the turns alone -------------------------------------------


def twenty_turns(folder: Path) -> Path:
    """A data folder of 2 dialogues of 10 text turns each, without answers."""
    folder.mkdir()
    rows = [
        {
            "dialog_id": f"d-{n}",
            "type": "Text2Text",
            "turns": [[{"type": "text", "content": f"Вопрос {n}.{i}"}] for i in range(10)],
        }
        for n in (1, 2)
    ]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (folder / "dialogues.jsonl").write_text(text, encoding="utf-8")
    return folder


def test_the_setup_is_reported_once_a_phase_and_the_time_left_counts_the_turns_alone(tmp_path):
    slow_setup = TOY_TEAM.replace(
        "    return {}, None", "    import time\n    time.sleep(0.8)\n    return {}, None"
    )
    code = toy_team(tmp_path / "t", slow_setup)
    done = run_every_progress_line(
        "--code", code, "--output", tmp_path / "out", data=twenty_turns(tmp_path / "d")
    )
    assert done.returncode == 0, done.stderr
    # 18 turns left after the second, each a few milliseconds: never the setup's 0.8 s a turn (14 s)
    left = [int(s) for s in re.findall(r", (\d+) s left$", done.stderr, re.MULTILINE)]
    assert left and max(left) <= 10, done.stderr
    for phase in ("generate", "ppl"):
        took = re.findall(rf"^run: {phase}: import and setup took ([0-9.]+) s$", done.stderr, re.MULTILINE)
        assert len(took) == 1, done.stderr
        assert float(took[0]) >= 0.75
        lines = re.findall(rf"^run: {phase}: \d+/2 dialogues, \d+/20 turns.*$", done.stderr, re.MULTILINE)
        assert len(lines) >= 19, done.stderr  # a line a turn, and the last one again


# --- what is missing, and where -----------------------------------------------------------------------------


def test_a_missing_function_is_named_with_what_the_module_defines(tmp_path):
    source = TOY_TEAM.split("def get_ppl")[0] + "def helper():\n    return 1\n\nCONSTANT = 3\n"
    done = run_process(
        "--data", PUBLIC, "--trusted-code", "--code", toy_team(tmp_path / "t", source),
        "--output", tmp_path / "out",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert (
        "team_code/generate.py defines no get_ppl; it defines: CONSTANT, generate_text, helper, "
        "setup_model_and_tokenizer"
    ) in done.stderr
    assert "(missing; phase generate, function import team_code.generate)" in done.stderr
    fault = json.loads((tmp_path / "out" / "run_fault.json").read_text(encoding="utf-8"))
    assert fault["kind"] == "missing" and fault["phase"] == "generate"


def test_an_upload_without_the_package_is_missing_with_no_empty_place(tmp_path):
    upload = tmp_path / "upload"
    (upload / "code").mkdir(parents=True)
    (upload / "code" / "model.py").write_text("", encoding="utf-8")
    (upload / "notes.txt").write_text("", encoding="utf-8")
    done = run_process("--data", PUBLIC, "--trusted-code", "--code", upload, "--output", tmp_path / "out")
    assert done.returncode == 1, done.stderr
    assert "(missing; )" not in done.stderr and "; )" not in done.stderr
    assert "error: the team's code failed (missing): the upload holds no package team_code/" in done.stderr
    assert "it holds: code/model.py, notes.txt" in done.stderr  # in name order
    fault = json.loads((tmp_path / "out" / "run_fault.json").read_text(encoding="utf-8"))
    assert fault == {"kind": "missing", "phase": None, "function": None, "dialog_id": None, "turn": None}
