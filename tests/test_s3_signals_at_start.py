"""Contract section 3: a signal at any moment of a run, the first moments included (while ``python -m
scorer`` is still importing its modules), gives 130 (SIGINT) or 143 (SIGTERM), never death by the signal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLES, PUBLIC, ROOT, has_sigterm_handler, run_cli, toy_team

pytestmark = pytest.mark.slow


#: The console script installed beside this Python (the suite runs from an install: ``run_tests.sh``).
CONSOLE_SCRIPT = Path(sys.executable).parent / "scorer"


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["int", "term"])
@pytest.mark.parametrize("module", ["scorer.metric.text", "scorer.api"])
@pytest.mark.parametrize("entry", ["python -m scorer", "scorer"])
def test_a_signal_while_the_package_is_imported_gives_its_exit_code(tmp_path, signum, code, module, entry):
    if entry == "scorer" and not CONSOLE_SCRIPT.exists():
        pytest.skip("the console script is not installed beside this Python")
    start = [sys.executable, "-m", "scorer"] if entry != "scorer" else [str(CONSOLE_SCRIPT)]
    process = subprocess.Popen(
        [*start, "score", "--data", str(PUBLIC), "--submission", str(EXAMPLES / "realistic"), "--output",
         str(tmp_path / "out"), "--no-synonyms", "--quiet"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},  # each import said as it ends (-X importtime)
    )  # fmt: skip
    assert process.stderr is not None
    for line in process.stderr:  # each import as it ends: the package is still importing the rest
        if line.split("|")[-1].strip() == module:
            break
    else:
        raise AssertionError(f"{module} was never imported")
    process.send_signal(signum)
    _, err = process.communicate(timeout=120)
    assert process.returncode == code, err[-2000:]
    assert "Traceback" not in err
    assert not (tmp_path / "out" / "scores.json").exists()


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["int", "term"])
def test_a_signal_at_any_moment_of_a_run_with_a_report_gives_its_code_and_the_previous_outputs(
    tmp_path, signum, code
):
    import json
    import time

    out = tmp_path / "out"
    command = [sys.executable, "-m", "scorer", "score", "--data", str(PUBLIC), "--submission",
               str(EXAMPLES / "realistic"), "--output", str(out), "--no-synonyms", "--quiet",
               "--report"]  # fmt: skip
    started = time.monotonic()
    assert subprocess.run(command, cwd=ROOT, capture_output=True, timeout=120).returncode == 0
    whole = time.monotonic() - started
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    marker = json.loads(before["scores.json"])
    assert marker["status"] == "ok"
    for k in range(1, 7):  # six moments spread over a whole run, the report's writing among them
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        begun = time.monotonic()
        # Python's own start-up is not the run's
        while not has_sigterm_handler(process.pid) and process.poll() is None:
            time.sleep(0.001)
        time.sleep(max(whole * k / 7 - (time.monotonic() - begun), 0))
        process.send_signal(signum)
        _, err = process.communicate(timeout=120)
        assert process.returncode in (code, 0), (k, process.returncode, err[-500:])
        assert "Traceback" not in err
        after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
        # the same inputs: a stopped run leaves the previous outputs, a finished one equal ones
        assert after == before


def test_a_stop_wrapped_in_another_error_is_still_a_stop():
    from scorer.stop import STOP

    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as stop:
            raise RuntimeError("__init_subclass__ of a class being made") from stop
    except RuntimeError as wrapped:
        found = STOP.within(wrapped)
    assert isinstance(found, KeyboardInterrupt)
    assert STOP.within(ValueError("a bug")) is None


def test_an_error_that_follows_a_stop_ends_the_run_as_the_stop(monkeypatch):
    from scorer.stop import STOP, Terminated

    monkeypatch.setattr(STOP, "signum", signal.SIGTERM)
    with pytest.raises(Terminated):
        STOP.raise_received()  # a library turned the stop into its own ValueError: still 143
    monkeypatch.setattr(STOP, "signum", None)
    STOP.raise_received()  # no stop: the error is the run's


def _swallowed_stop() -> None:
    """The stop's handler run where Python can only report what it raises and go on: a weakref callback."""
    import weakref

    from scorer.stop import STOP

    class Thing:
        pass

    thing = Thing()
    ref = weakref.ref(thing, lambda _: STOP._stop(signal.SIGTERM, None))
    del thing  # the callback runs and raises; Python reports it and goes on
    assert ref() is None


def test_a_stop_python_could_only_report_is_not_printed_and_ends_the_run_at_its_end(monkeypatch):
    from scorer.stop import STOP, Terminated

    reported: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)  # what Python would print
    went_on = []
    with pytest.raises(Terminated), STOP.taken():
        _swallowed_stop()
        went_on.append(True)  # the run went on past it ...
        STOP.raise_received()  # ... to the command's end, which stops it (run_command)
    assert went_on == [True] and reported == []
    assert sys.unraisablehook == reported.append  # the hook before is back


def test_a_run_that_went_on_past_a_stop_publishes_nothing(tmp_path):
    from scorer.outputs.output_dir import publish
    from scorer.stop import STOP, Terminated

    (tmp_path / "scores.json").write_text("previous", encoding="utf-8")
    with pytest.raises(Terminated), STOP.taken():
        _swallowed_stop()
        publish(tmp_path, {"scores.json": b"new", "scores.txt": b"new"}, ["scores.txt"], "scores.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.json"]
    assert (tmp_path / "scores.json").read_text(encoding="utf-8") == "previous"


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["int", "term"])
def test_a_stop_held_before_the_runner_takes_the_signals_ends_its_run(tmp_path, capsys, signum, code):
    """The runner's ``__main__`` holds SIGINT and SIGTERM from its first line while its modules are imported,
    and ``scorer run`` those held since the package's first import: ``main`` ends the run on the first, with
    its code and one line, before anything is read or started."""

    from scorer.runner.main import main

    out = tmp_path / "out"
    argv = ["--data", str(PUBLIC), "--code", str(toy_team(tmp_path / "t")), "--output", str(out)]
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    assert main(argv, held=[signum, signal.SIGINT]) == code
    assert {sig: signal.getsignal(sig) for sig in before} == before  # the handlers before are put back
    said = capsys.readouterr().err
    assert said.splitlines()[-1].startswith(f"run: stopped by {signal.Signals(signum).name}")
    assert "config:" not in said and not (out / "submission.jsonl").exists()
    assert main([*argv[:-1], str(tmp_path / "again"), "--quiet"], held=[]) == 2  # nothing held: runs (and
    # refuses to generate beside the answers)


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["int", "term"])
def test_the_runners_one_file_stopped_as_it_starts_gives_its_code(tmp_path, signum, code):
    """``python3 runner.py``, the shipped file, stopped the moment it holds the signals (while its modules are
    compiled from the archive, or just after): 130 or 143 and one line, never death by the signal."""
    import os
    import time

    from scorer.bundle.runner_file import runner_file

    runner = tmp_path / "runner.py"
    runner.write_bytes(runner_file())
    team = toy_team(tmp_path / "t")
    for k in range(3):
        process = subprocess.Popen(
            [sys.executable, "-I", str(runner), "--data", str(PUBLIC), "--code", str(team), "--output",
             str(tmp_path / f"o{k}"), "--trusted-code"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        while not has_sigterm_handler(process.pid) and process.poll() is None:
            time.sleep(0.0005)
        os.kill(process.pid, signum)
        _, err = process.communicate(timeout=60)
        assert process.returncode == code, err[-1000:]
        assert "Traceback" not in err and err.splitlines()[-1].startswith("run: stopped by")


def test_a_stop_the_scorer_held_before_run_ends_the_run(tmp_path, capsys, monkeypatch):
    """``scorer run``: a SIGTERM held since the package's first import (``Stop.held``) is the runner's stop
    (143, one line), not lost."""

    from scorer.stop import STOP

    monkeypatch.setattr(STOP, "held", [signal.SIGTERM])
    out = tmp_path / "out"
    assert run_cli("run", "--data", PUBLIC, "--code", toy_team(tmp_path / "t"), "--output", out) == 143
    assert capsys.readouterr().err.splitlines()[-1].startswith("run: stopped by SIGTERM")
    assert not (out / "submission.jsonl").exists()


# --- a program that imports the library keeps its signals --------------------------------------------------


def _caller(tmp_path: Path, how: str, name: str, statement: str) -> list[str]:
    """A caller's program that imports the library (``statement``), says so on stdout, then sleeps: a script
    named ``name`` run by its ``#!`` line, or its package ``name`` run by ``python -m`` (the package's
    ``__init__`` imports the library while Python's ``-m`` imports it)."""
    said = "import sys, time\nprint('imported', flush=True)\ntime.sleep(120)\n"
    if how == "script":
        script = tmp_path / "bin" / name
        script.parent.mkdir()
        script.write_text(f"#!{sys.executable}\n{statement}\n{said}", encoding="utf-8")
        script.chmod(0o755)
        return [str(script)]
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text(f"{statement}\n", encoding="utf-8")
    (package / "__main__.py").write_text(said, encoding="utf-8")
    return [sys.executable, "-m", name]


@pytest.mark.parametrize("statement", ["import scorer", "import scorer.api", "import scorer.cli"])
@pytest.mark.parametrize("how, name", [("script", "scorer"), ("script", "backend"), ("python -m", "backend")])
def test_a_program_that_imports_the_library_ends_on_sigterm_by_its_default_action(
    tmp_path, how, name, statement
):
    """Only the command line's own entry points hold SIGINT and SIGTERM from their first line (``python -m
    scorer``, the ``scorer`` console script, the runner's); a caller's program of any name, its own script
    called ``scorer`` too, that imports the library keeps the signals' actions it had: SIGTERM kills it."""
    process = subprocess.Popen(
        _caller(tmp_path, how, name, statement),
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "imported\n"  # its imports are over
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError("SIGTERM did not end the program: the library held it") from None
    finally:
        process.kill()
        _, err = process.communicate()
    assert process.returncode == -signal.SIGTERM, err[-2000:]
