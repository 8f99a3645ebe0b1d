"""The one process model (contract section 3): a worker killed by SIGKILL ends the run with exit 2 naming it,
and SIGINT or SIGTERM sent to the whole process group, as the workers start or repeated while they work, ends
it with 130 or 143 and one line on stderr, never a traceback or a hang. The cases are those of
``scripts/process_model_check.py`` (which runs each 30 times), here a few times each."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from process_model_check import children, one, penalty_command  # noqa: E402  the cases, as the script runs them

TRIES = 4


@pytest.fixture(scope="module")
def penalty_run(tmp_path_factory):
    """A penalty-mode run with two jobs long enough to be caught while they work (the pure engine)."""
    return penalty_command(tmp_path_factory.mktemp("big"))


@pytest.mark.parametrize("case", ["kill", "term", "int", "termx8", "intx8"])
def test_the_process_model_ends_every_case_as_the_contract_says(penalty_run, tmp_path: Path, case):
    """kill: a worker SIGKILLed mid-run, exit 2 naming it; term/int: SIGTERM/SIGINT to the process group as
    the workers start, 143/130; x8: eight of them 10 ms apart. One line on stderr, no traceback, no hang."""
    outcomes = [one(penalty_run, case, tmp_path / f"out{k}") for k in range(TRIES)]
    assert outcomes == ["ok"] * TRIES


def test_a_run_killed_by_sigkill_leaves_no_worker_behind(penalty_run, tmp_path: Path):
    """SIGKILL to the run's own process (the out-of-memory killer may choose it rather than a worker): its
    workers end with it instead of waiting for ever to hand back a result nobody reads."""
    env = {**os.environ, "SCORER_PURE_PYTHON": "1"}
    subprocess.run([*penalty_run, "--output", str(tmp_path / "first")], cwd=ROOT, env=env, check=True)
    run = subprocess.Popen(  # the caches now warm: one pool, whose worker scores from the start
        [*penalty_run, "--output", str(tmp_path / "out")],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while not workers and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
            workers = children(run.pid)
        assert workers, "the run started no worker"
        time.sleep(0.3)
        run.kill()
        run.wait()
        deadline = time.monotonic() + 10
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [pid for pid in workers if _alive(pid)] == []
    finally:
        try:
            os.killpg(run.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, ended but not yet reaped by its new parent, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
