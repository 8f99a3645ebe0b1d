"""The one process model (contract section 3): a worker killed by SIGKILL ends the run with exit 2 naming it,
and SIGINT or SIGTERM sent to the whole process group, as the workers start or repeated while they work, ends
it with 130 or 143 and one line on stderr, never a traceback or a hang. ``scripts/process_model_check.py``
runs
the same cases 30 times each."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, big_split

TRIES = 4


@pytest.fixture(scope="module")
def penalty_run(tmp_path_factory):
    """A penalty-mode run on two workers long enough to be caught while they work."""
    root = tmp_path_factory.mktemp("big")
    data, sub = big_split(root, copies=600)  # 39,600 turns: about 2 s of scoring on two workers
    config = root / "penalty.toml"
    config.write_text("[meteor]\ngamma = 0.5\nbeta = 3.0\n", encoding="utf-8")
    return [
        sys.executable,
        "-m",
        "scorer",
        "score",
        "--data",
        str(data),
        "--submission",
        str(sub),
        "--config",
        str(config),
        "--jobs",
        "2",
        "--quiet",
        "--no-synonyms",
    ]


def start(command, out: Path) -> subprocess.Popen:
    env = {**os.environ, "SCORER_PURE_PYTHON": "1"}  # the pure engine: a run of a few seconds
    return subprocess.Popen(
        [*command, "--output", str(out)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def workers(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def wait_for_workers(process: subprocess.Popen, count: int = 1, timeout: float = 60) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = workers(process.pid)
        if len(found) >= count:
            return found
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.002)
    pytest.fail("no worker started")


def finish(process: subprocess.Popen, timeout: float = 30) -> tuple[int, list[str]]:
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("the run hung")
    return process.returncode, err.splitlines()


@pytest.mark.parametrize("attempt", range(TRIES))
def test_a_worker_killed_by_sigkill_ends_the_run_with_exit_2_naming_it(penalty_run, tmp_path, attempt):
    process = start(penalty_run, tmp_path / "out")
    victim = wait_for_workers(process, 2)[attempt % 2]
    time.sleep(0.3)  # working
    os.kill(victim, signal.SIGKILL)
    begun = time.monotonic()
    code, err = finish(process)
    assert time.monotonic() - begun < 10
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("error: a worker process died (") and "killed by SIGKILL" in err[0]
    assert '"status": "error"' in (tmp_path / "out" / "scores.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("sig, expected", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
@pytest.mark.parametrize("when", ["as the workers start", "eight times 10 ms apart"])
def test_a_signal_to_the_process_group_ends_the_run_cleanly(penalty_run, tmp_path, sig, expected, when):
    for attempt in range(TRIES):
        process = start(penalty_run, tmp_path / f"out{attempt}")
        wait_for_workers(process, 1)
        for _ in range(1 if when == "as the workers start" else 8):
            os.killpg(process.pid, sig)
            time.sleep(0.01)
        code, err = finish(process)
        assert code == expected and len(err) == 1, (attempt, code, err)
        assert err[0].startswith(("interrupted (SIGINT)", "terminated (SIGTERM)"))
        assert not workers(process.pid)
