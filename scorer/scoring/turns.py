"""METEOR of every turn: the answer tokenised once, best variant per turn, on one or more processes.

Turns are independent and each is computed the same way wherever it runs,
so the result list is identical for any number of jobs. With several jobs
this process scores the first share of the turns and the one pool of worker
processes the others, meanwhile (:class:`WorkerPool`, forked, one worker
fewer than the jobs: they share the loaded dictionary and thesaurus, and
hand back the token keys they computed, for the token cache); where
``fork`` is not available, or the work is small, everything runs in this
process.
When the matcher knows no token yet (an empty token cache), this process
and the workers first compute the keys of every type of the turns, each
type once, a share each, and the turns are then scored knowing them all:
otherwise every worker would analyse nearly every type itself. Without
the penalty, on the compiled engine, turns are scored on workers only when
there are many (:data:`MIN_TURNS_PER_JOB_WITHOUT_PENALTY`).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any, NamedTuple

from scorer.errors import EXIT_USAGE, ScorerError
from scorer.metric.meteor import MeteorRu, MeteorScore, best_variants
from scorer.metric.text import tokenise

#: Below this many turns the cost of starting workers outweighs the gain.
MIN_TURNS_PER_JOB = 500
PIECES_PER_JOB = 8  # smaller pieces even out uneven turns and let progress move
#: Without the penalty, on the compiled engine, a turn costs about 15 microseconds in one process (rule 1's
#: counts on ids), and a worker must first be started and its results handed back: the turns are shared
#: only when each job has at least this many (WMT21 turns on 2 cores, whole process, this process and one
#: worker against this process alone: 10,000 turns 0.446 s and 0.462 s; 20,000 turns 0.756 s and 0.802 s).
MIN_TURNS_PER_JOB_WITHOUT_PENALTY = 10_000


class WorkerDied(ScorerError):
    """A worker process ended without answering (killed by the kernel's out-of-memory killer, say)."""

    exit_code = EXIT_USAGE
    kind = "worker_died"


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def score_turns(
    answers: Sequence[str],
    variants: Sequence[Sequence[list[str]]],
    metric: MeteorRu,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[tuple[int, MeteorScore]]:
    """For each turn, the index and score of the best reference variant of ``answers[k]``; ``variants[k]``
    are that turn's reference variants, tokenised.

    ``progress(done)`` is called with the number of turns scored so far. Raises :class:`WorkerDied` when a
    worker process dies.
    """
    jobs = min(jobs, len(answers) // MIN_TURNS_PER_JOB)
    learners = jobs if jobs > 1 and not metric.matcher.knows_tokens() else 0
    if not metric.params.gamma and metric.engine.counts_on_ids:
        jobs = min(jobs, len(answers) // MIN_TURNS_PER_JOB_WITHOUT_PENALTY)
    if not _can_fork():
        jobs, learners = 1, 0
    pieces = jobs * PIECES_PER_JOB if jobs > 1 else PIECES_PER_JOB
    bounds = [len(answers) * k // pieces for k in range(pieces + 1)]
    spans = [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]
    tokens: list[list[str]] | None = None
    new_types: list[str] = []
    if learners:  # nothing known yet: every type's keys computed once, spread over the workers
        tokens = [tokenise(a) for a in answers]
        new_types = sorted(_types(tokens, variants))
        metric.matcher.prepare(metric.params.stages)  # the analyser loaded once, before the fork
    work = Work(answers, tokens, variants, metric)
    results: list[tuple[int, MeteorScore]]
    if learners:  # this process takes the first share itself, the workers the others meanwhile
        shares = [new_types[k::learners] for k in range(learners)]
        with WorkerPool(learners - 1, work) as pool:
            found = pool.submit_all(_keys_of, shares[1:])
            _compute_keys(metric, shares[0])
            for new_keys in pool.results(found):
                metric.matcher.absorb(*new_keys)
    results = []
    if jobs > 1:  # workers forked now share every key learnt so far; this process takes the first share
        own = len(spans) // jobs
        with WorkerPool(jobs - 1, work) as pool:
            found = pool.submit_all(_score_on_worker, spans[own:])
            for span in spans[:own]:
                pool.check()  # a worker that died is named now, not once this process's share is done
                results.extend(work.score_span(span))
                if progress:
                    progress(len(results))
            for part, new_keys in pool.results(found):
                results.extend(part)
                metric.matcher.absorb(*new_keys)
                if progress:
                    progress(len(results))
    else:
        for span in spans:
            results.extend(work.score_span(span))
            if progress:
                progress(len(results))
    return results


class Work(NamedTuple):
    """What the workers are given when they start (by fork: nothing is copied): the turns and the metric."""

    answers: Sequence[str]
    tokens: list[list[str]] | None
    variants: Sequence[Sequence[list[str]]]
    metric: MeteorRu

    def score_span(self, span: tuple[int, int]) -> list[tuple[int, MeteorScore]]:
        start, stop = span
        cands = (
            [tokenise(a) for a in self.answers[start:stop]]
            if self.tokens is None
            else self.tokens[start:stop]
        )
        return best_variants(
            cands,
            self.variants[start:stop],
            self.metric.matcher,
            self.metric.params,
            engine=self.metric.engine,
        )


_HELD = {signal.SIGINT, signal.SIGTERM}


class WorkerPool:
    """The one pool of worker processes (``concurrent.futures`` on ``fork``), given the :class:`Work` by its
    initializer's argument.

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

    def __init__(self, workers: int, work: Work | None):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.executor: ProcessPoolExecutor | None = None
        self.processes: dict[int, Any] = {}
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
        try:
            try:
                self.executor = ProcessPoolExecutor(
                    workers,
                    mp_context=multiprocessing.get_context("fork"),
                    initializer=_start_worker,
                    initargs=(work, held, os.getpid()),
                )
                self.executor.submit(int)  # forks every worker now, while the signals are held
                self.processes = dict(getattr(self.executor, "_processes", None) or {})
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a signal held meanwhile is handled here
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def settle(self, future: Future) -> None:
        """Wait for ``future``, whatever comes of it: for work whose failure changes nothing (the caller does
        it again, and reports what goes wrong, in its own place)."""
        try:
            self._result(future)
        except Exception:  # noqa: BLE001 - a failed or broken helper only costs the time it saved
            pass

    def submit_all(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Future]:
        if self.executor is None:
            raise RuntimeError("the pool is closed")
        return [self.executor.submit(fn, item) for item in items]

    def results(self, futures: Sequence[Future]) -> Iterator[Any]:
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

    def _result(self, future: Future) -> Any:
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
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit code {exitcode}"


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _types(tokens: Sequence[list[str]], variants: Sequence[Sequence[list[str]]]) -> set[str]:
    """Every token type of the answers (``tokens``) and of the references."""
    found: set[str] = set()
    for answer in tokens:
        found.update(answer)
    for turn in variants:
        for variant in turn:
            found.update(variant)
    return found


def _compute_keys(metric: MeteorRu, types: list[str]) -> None:
    """The keys of ``types`` at every stage of the metric, computed into its matcher."""
    for keys in metric.matcher.key_functions(metric.params.stages):
        if keys is not None:
            for token in types:
                keys(token)


#: The work this worker process was given by :func:`_start_worker` (set in workers only).
_given: Work | None = None


def _start_worker(work: Work | None, held: set[int | signal.Signals], run: int) -> None:
    """A worker's start: tied to the run's process ``run`` (:func:`_end_with`); its signal handlers set while
    SIGINT and SIGTERM are still held (it was forked with them held), then the parent's mask back; the work
    kept; only keys computed from now on handed back."""
    global _given
    _end_with(run)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, held)
    _given = work
    if work is not None:
        work.metric.matcher.take_new()


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


def _work() -> Work:
    if _given is None:
        raise RuntimeError("not a worker process")
    return _given


def _keys_of(types: list[str]) -> tuple:
    """In a worker: the keys of ``types`` at every stage of the metric, computed and handed back."""
    metric = _work().metric
    _compute_keys(metric, types)
    return metric.matcher.take_new()


def _score_on_worker(span: tuple[int, int]) -> tuple[list[tuple[int, MeteorScore]], tuple]:
    work = _work()
    return work.score_span(span), work.metric.matcher.take_new()
