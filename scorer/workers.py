"""The worker pool (contract section 3): forked worker processes, for scoring turns and building the
thesaurus index alike. It is one of the two kinds of process the scorer starts; the other is the runner's
children (``Child`` of ``scorer/runner/process.py``), a fresh interpreter a phase that runs a team's code
(docs/architecture.md, "Processes").

* Workers are started with SIGINT and SIGTERM held and set their own handlers before taking them: SIGINT
  is the parent's to handle (ignored), SIGTERM ends a worker at once, so a signal to the whole process
  group never runs the parent's handler in a worker.
* On Linux each worker asks the kernel to kill it when the run's process ends, however it ends.
* A worker that dies (SIGKILL, the out-of-memory killer) ends the run with :class:`WorkerDied` (exit 2)
  naming it, never a hang; leaving the pool stops and reaps every worker.

A worker is given one payload when it starts (by fork: nothing is copied): :func:`worker_payload` returns it
there.
While a run builds its objects the process's cycle collector is paused (:func:`no_cycle_collection`).
"""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, InvalidStateError
from contextlib import contextmanager
from typing import Any

from scorer.errors import EXIT_USAGE, ScorerError
from scorer.runner.names import signal_name
from scorer.stop import as_worker, blocked


class WorkerDied(ScorerError):
    """A worker process ended without answering (killed by the kernel's out-of-memory killer, say)."""

    exit_code = EXIT_USAGE
    kind = "worker_died"


class WorkerPool:
    """A pool of worker processes (``concurrent.futures`` on ``fork``), given ``payload`` by its initializer's
    argument (:func:`worker_payload` in a worker), ``on_start(payload)`` run in each worker first.

    * Workers are started with SIGINT and SIGTERM held, and set their own handlers before taking them:
      SIGINT is the parent's to handle (ignored), SIGTERM ends a worker at once (the default action), so a
      signal to the whole process group never runs the parent's handler in a worker.
    * A worker that dies (SIGKILL, the out-of-memory killer) breaks the pool: :meth:`results` raises
      :class:`WorkerDied` naming it, within the time the pool takes to notice (well under a second). It is
      watched from here too (:meth:`_result`): a worker killed while it was sending a result leaves the
      pool's own manager thread waiting for the rest of that message for ever.
    * Leaving the ``with`` block, normally or by an exception (SIGINT, SIGTERM), stops every worker that is
      still there and waits for it (:func:`_wind_up`).
    """

    def __init__(self, workers: int, payload: Any = None, on_start: Callable[[Any], None] | None = None):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.executor: ProcessPoolExecutor | None = None
        self.processes: dict[int, Any] = {}
        _quiet_broken_pools()
        try:
            with blocked() as held:  # a signal held meanwhile is handled once the workers are there
                self.executor = ProcessPoolExecutor(
                    workers,
                    mp_context=multiprocessing.get_context("fork"),
                    initializer=_start_worker,
                    initargs=(payload, on_start, held, os.getpid()),
                )
                self.executor.submit(int)  # forks every worker now, while the signals are held
                self.processes = dict(getattr(self.executor, "_processes", None) or {})
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def settle(self, future: Future[Any]) -> None:
        """Wait for ``future``, whatever comes of it: for work whose failure changes nothing (the caller does
        it again, and reports what goes wrong, in its own place)."""
        try:
            self._result(future)
        except Exception:  # noqa: BLE001 - a failed or broken helper only costs the time it saved
            pass

    def submit_all(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Future[Any]]:
        """``fn(item)`` of each item submitted to the workers; :class:`WorkerDied` when a worker is gone."""
        from concurrent.futures.process import BrokenProcessPool

        if self.executor is None:
            raise RuntimeError("the pool is closed")
        try:
            return [self.executor.submit(fn, item) for item in items]
        except BrokenProcessPool:
            raise self._died() from None

    def results(self, futures: Sequence[Future[Any]]) -> Iterator[Any]:
        """Each future's result, in order; :class:`WorkerDied` when a worker died."""
        from concurrent.futures.process import BrokenProcessPool

        for future in futures:
            try:
                yield self._result(future)
            except BrokenProcessPool:
                raise self._died() from None

    def check(self) -> None:
        """:class:`WorkerDied` when a worker is gone (for this process to call between its own pieces)."""
        if any(p.exitcode is not None for p in self.processes.values()):
            raise self._died()

    def _died(self) -> WorkerDied:
        return WorkerDied(
            f"a worker process died ({self._deaths()}); the run was stopped. If the system "
            "ran out of memory, give fewer --jobs or more memory"
        )

    def _result(self, future: Future[Any]) -> Any:
        """``future``'s result; BrokenProcessPool as soon as a worker is gone, whether or not the pool's
        manager thread noticed."""
        from concurrent.futures.process import BrokenProcessPool

        while True:
            try:
                return future.result(timeout=0.1)
            except TimeoutError:
                if any(p.exitcode is not None for p in self.processes.values()):
                    raise BrokenProcessPool("a worker process ended") from None

    def _deaths(self) -> str:
        """How the workers that are gone ended (the pool stops the others by SIGTERM once one died: a worker
        that ended otherwise is named first)."""
        deadline = time.monotonic() + 2.0
        while any(p.exitcode is None for p in self.processes.values()) and time.monotonic() < deadline:
            time.sleep(0.01)  # the pool is reaping them: their exit codes are known within moments
        ended = sorted(
            (
                (p.exitcode == -signal.SIGTERM, pid, _ending(p.exitcode))
                for pid, p in self.processes.items()
                if p.exitcode not in (None, 0)
            )
        )
        return ", ".join(f"pid {pid}: {how}" for _, pid, how in ended) or "killed"

    def close(self) -> None:
        """Stop the workers that are still there and wait for them (idempotent)."""
        executor = self.executor
        if executor is None:
            return
        self.executor = None
        for process in self.processes.values():
            if process.exitcode is None:
                process.kill()
        thread = getattr(executor, "_executor_manager_thread", None)  # shutdown(wait=False) forgets both
        writer = getattr(getattr(executor, "_result_queue", None), "_writer", None)
        executor.shutdown(wait=False, cancel_futures=True)
        _wind_up(thread, writer)


#: Where uncaught exceptions of threads went before :func:`_quiet_broken_pools` (set once, in this process).
_previous_hook: Callable[[Any], Any] | None = None


def _quiet_broken_pools() -> None:
    """Have :func:`_broken_pool_hook` see the uncaught exceptions of this process's threads (once)."""
    global _previous_hook
    if threading.excepthook is not _broken_pool_hook:
        _previous_hook, threading.excepthook = threading.excepthook, _broken_pool_hook


def _broken_pool_hook(args: Any) -> None:
    """CPython's pool manager thread, winding up a pool one of whose workers died, sets the error on every
    pending future and raises InvalidStateError on one this process cancelled meanwhile (a piece it took
    back to score itself, or the pool's close). The pool is broken either way and the run says so in its one
    line (:class:`WorkerDied`), so that error is not printed; any other goes where it went before."""
    manager = type(args.thread).__module__ == "concurrent.futures.process"
    if manager and isinstance(args.exc_type, type) and issubclass(args.exc_type, InvalidStateError):
        return
    (_previous_hook or threading.__excepthook__)(args)


def _wind_up(thread: Any, writer: Any) -> None:
    """Wait for the pool's manager thread to end, its workers all killed. A worker killed while it was
    writing a result to the pool's result pipe leaves a message cut short there, which the manager thread
    (CPython's ``ProcessPoolExecutor``) waits to read to its end for ever, and the interpreter's exit waits
    for that thread. No worker is left to write, so bytes written into the pipe from here end that read:
    the message does not unpickle, and the thread winds the pool up as broken. ``thread`` and ``writer``:
    the pool's manager thread and its result pipe's writing end (None where this Python has none)."""
    if thread is None:
        return
    thread.join(0.05)
    if thread.is_alive() and writer is not None:
        os.set_blocking(writer.fileno(), False)
    while thread.is_alive():
        if writer is not None:
            try:
                os.write(writer.fileno(), bytes(4096))
            except OSError:  # the pipe is full (the thread is not reading) or closed
                pass
        thread.join(0.05)


def _ending(exitcode: int | None) -> str:
    """How a worker ended, from its exit code (negative: the signal that killed it)."""
    if exitcode is not None and exitcode < 0:
        return f"killed by {signal_name(-exitcode)}"
    return f"exit code {exitcode}"


def can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


#: The payload this worker process was given by :func:`_start_worker`: set once, in a worker only (a forked
#: process's own state, which the pool's initializer can only leave at module level).
_payload: Any = None


def worker_payload() -> Any:
    """In a worker: the pool's payload."""
    return _payload


def _start_worker(
    payload: Any, on_start: Callable[[Any], None] | None, held: set[int | signal.Signals], run: int
) -> None:
    """A worker's start: tied to the run's process ``run`` (:func:`_end_with`); its signal handlers set while
    SIGINT and SIGTERM are still held (it was forked with them held), then the parent's mask back; the
    payload kept, and ``on_start(payload)`` run."""
    global _payload
    _end_with(run)
    as_worker(held)
    _payload = payload
    if on_start is not None:
        on_start(payload)


def _end_with(run: int) -> None:
    """On Linux, have the kernel kill this worker when the run's process ``run`` ends, however it ends: a run
    killed by SIGKILL (or the out-of-memory killer) would otherwise leave its workers behind, each blocked for
    ever writing a result into a pipe that only it still holds open. Elsewhere, nothing."""
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux: no such call
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != run:  # the run ended before the call above: nobody is left to kill this worker
        os.kill(os.getpid(), signal.SIGKILL)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Pause Python's cycle collector: reading and scoring build millions of small
    acyclic objects (freed by reference counting anyway), and repeated full
    collections over them cost a fifth of a run."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
