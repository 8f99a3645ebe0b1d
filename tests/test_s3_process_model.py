"""The one process model (contract section 3): a worker killed by SIGKILL ends the run with exit 2 naming it,
and SIGINT or SIGTERM sent to the whole process group, as the workers start or repeated while they work, ends
it with 130 or 143 and one line on stderr, never a traceback or a hang. The cases are those of
``scripts/process_model_check.py`` (which runs each 30 times), here once each."""

import sys
import threading
from concurrent.futures import InvalidStateError
from pathlib import Path

import pytest
from helpers import ROOT

from scorer import workers

sys.path.insert(0, str(ROOT / "scripts"))
from process_model_check import one, penalty_command  # noqa: E402  the cases, as the script runs them

pytestmark = pytest.mark.slow  # every test here starts processes

TRIES = 1  # scripts/process_model_check.py runs each case 30 times: the stress test, this the guard


@pytest.fixture(scope="module")
def penalty_run(tmp_path_factory):
    """A penalty-mode run with two jobs long enough to be caught while they work (the pure engine)."""
    return penalty_command(tmp_path_factory.mktemp("big"))


@pytest.mark.parametrize("case", ["kill", "term", "int", "termx8", "intx8", "killrun"])
def test_the_process_model_ends_every_case_as_the_contract_says(penalty_run, tmp_path: Path, case):
    """kill: a worker SIGKILLed mid-run, exit 2 naming it; term/int: SIGTERM/SIGINT to the process group as
    the workers start, 143/130; x8: eight of them 10 ms apart. One line on stderr, no traceback, no hang.
    killrun: the run's own process SIGKILLed mid-run (the out-of-memory killer may choose it), and no worker
    left behind, waiting for ever to hand back a result nobody reads."""
    outcomes = [one(penalty_run, case, tmp_path / f"out{k}") for k in range(TRIES)]
    assert outcomes == ["ok"] * TRIES


class _Manager:
    """Stands for CPython's pool manager thread (a class of ``concurrent.futures.process``)."""


_Manager.__module__ = "concurrent.futures.process"


def _uncaught(exc: BaseException, thread: object) -> None:
    threading.excepthook(threading.ExceptHookArgs([type(exc), exc, None, thread]))


def test_the_pool_threads_error_on_a_future_this_process_cancelled_is_not_printed(monkeypatch, capsys):
    """A worker dies while this process takes a piece back (cancels its future): the pool's manager thread,
    winding the broken pool up, raises InvalidStateError on that future. The run's one line says what
    happened; that error is not printed. Any other error of a thread is, as before."""
    monkeypatch.setattr(threading, "excepthook", threading.__excepthook__)
    monkeypatch.setattr(workers, "_previous_hook", None)
    workers._quiet_broken_pools()
    _uncaught(InvalidStateError("CANCELLED: <Future at 0x1 state=cancelled>"), _Manager())
    assert capsys.readouterr().err == ""
    _uncaught(ValueError("another error"), _Manager())
    assert "ValueError: another error" in capsys.readouterr().err
    _uncaught(InvalidStateError("not the pool's"), threading.current_thread())
    assert "InvalidStateError: not the pool's" in capsys.readouterr().err
