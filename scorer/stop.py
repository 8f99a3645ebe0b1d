"""A received stop (contract section 3): SIGINT or SIGTERM ends the command line's run with 130 or 143, one
line on stderr and the previous outputs left as they were, at any instant and however often it comes.

:data:`STOP` is the process's one :class:`Stop`. Every module of the package asks it (the runner, which ships
alone, keeps its own); its states are written in docs/architecture.md ("The stop"):

* **idle**: the handlers are not the scorer's (the library in someone else's process);
* **holding** (:meth:`Stop.hold`): the command line's process, from the package's first line until its run
  takes the signals: one received is recorded, not acted on;
* **running** (:meth:`Stop.taken`): the first SIGINT or SIGTERM raises its stop (:class:`Interrupted`, a
  KeyboardInterrupt, or :class:`Terminated`), a held one at once;
* **deferred** (:meth:`Stop.deferred`): while the output folder renames its outputs into place, or the
  charts' library is imported, a signal is recorded and delivered again once that is over;
* **stopped**: the stop was raised; any signal that follows is ignored, and an error that follows it ends
  the run as the stop (:meth:`Stop.within`, :meth:`Stop.raise_received`);
* **exiting** (:meth:`Stop.exit`): the run's code is known; both signals are ignored by the kernel itself
  while the process ends: its streams flushed and its exit handlers run, then ended at once.

Beside it: the signals held while the worker pool forks (:func:`blocked`, :func:`as_worker`), and the
scoring step's rule that every catchable signal is a surprise (:class:`Surprises`).
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from scorer.runner.names import HELD_SIGNALS, signal_name

EXIT_SIGINT, EXIT_SIGTERM = 130, 143

#: The signals that stop a run.
SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: The modules whose ``python -m`` is the command line (the scorer's, and the runner's alone): while Python
#: imports the package for them, the signals are held (:meth:`Stop.hold_for_the_command_line`).
COMMAND_LINE_MODULES = ("scorer", "scorer.__main__", "scorer.runner", "scorer.runner.__main__")

IDLE, HOLDING, RUNNING, DEFERRED, STOPPED, EXITING = (
    "idle",
    "holding",
    "running",
    "deferred",
    "stopped",
    "exiting",
)


class Terminated(BaseException):
    """SIGTERM, raised in the main thread like KeyboardInterrupt is for SIGINT."""


class Interrupted(KeyboardInterrupt):
    """SIGINT's stop: a KeyboardInterrupt of a class of its own. ``python -m`` ends its process by SIGINT
    itself, after the interpreter's exit, once a KeyboardInterrupt of the built-in class itself has left code
    that ``exec`` or ``eval`` ran from a source string, even when it was caught after (CPython keeps a flag
    for it; the methods dataclasses and namedtuple make are run so): a stop landing there would end the run
    killed by SIGINT instead of with 130. CPython compares the class itself, so a subclass never sets it."""


def in_main_thread() -> bool:
    """Signal handlers and masks belong to the main thread only."""
    return threading.current_thread() is threading.main_thread()


def _stop_of(signum: int) -> BaseException:
    return Interrupted() if signum == signal.SIGINT else Terminated()


class Stop:
    """The process's received stop: its handler, the deferral of the output folder's renames, the walk that
    finds a stop wrapped in another error, and the exit."""

    def __init__(self, held: list[int] | None = None) -> None:
        self.state = IDLE
        #: The stop raised in this run (its signal), if any: an error that follows it ends the run as it.
        self.signum: int | None = None
        #: Signals received while holding, acted on once the run takes them.
        self.held: list[int] = [] if held is None else held

    def hold(self, before: Sequence[int] = ()) -> None:
        """Record SIGINT and SIGTERM from now on, acting on neither (the command line's process). ``before``:
        those an entry point recorded itself until now (the console script's, ``scorer_console.py``, while
        the package was imported), kept first: read once this handler is set, so that none is lost."""
        if not in_main_thread():
            return
        for sig in SIGNALS:
            signal.signal(sig, self._record)
        self.held[:0] = list(before)
        self.state = HOLDING

    def hold_for_the_command_line(self) -> None:
        """:meth:`hold` when this process is ``python -m scorer`` or ``python -m scorer.runner``, whose
        ``__main__`` runs only once Python has imported the package (a while): while Python's ``-m`` imports
        it, ``sys.argv`` is ``["-m", ...]``, and the module it runs is the one its own command line
        (``sys.orig_argv``) names (:func:`module_run`). Any other process that imports the package (a
        program of any name that uses the library; the console script, which holds them itself) keeps its
        own handlers."""
        if sys.argv[:1] == ["-m"] and module_run(sys.orig_argv) in COMMAND_LINE_MODULES:
            self.hold()

    def _record(self, signum: int, frame: object) -> None:
        self.held.append(signum)

    @contextmanager
    def taken(self) -> Iterator[None]:
        """The run: the first SIGINT or SIGTERM raises its stop (:meth:`act_on_held` for one held before);
        the handlers before are put back after."""
        previous: dict[int, Any] = {}
        self.signum = None
        unraisable = sys.unraisablehook
        try:
            if in_main_thread():
                previous = {sig: signal.signal(sig, self._stop) for sig in SIGNALS}
                sys.unraisablehook = self._unraisable(unraisable)
            self.state = RUNNING
            yield
        finally:
            for sig, before in previous.items():
                signal.signal(sig, before)
            sys.unraisablehook = unraisable
            self.state = HOLDING if self._record in previous.values() else IDLE

    def _unraisable(self, before: Any) -> Any:
        """A stop raised where Python can only report it and go on (a weakref callback, a compiled function
        that cannot raise) is not printed: it stays recorded in :attr:`signum`, and the run stops at its
        next check (:meth:`raise_received`: before any output is published, and when the command ends)."""

        def hook(unraisable: Any) -> None:
            if isinstance(unraisable.exc_value, (Interrupted, Terminated)) and self.signum is not None:
                return
            before(unraisable)

        return hook

    def act_on_held(self) -> None:
        """Stop now, as the first signal held before the run would have (none: nothing)."""
        for signum in self.held[:1]:
            self.held.clear()
            self._stop(signum, None)

    def _stop(self, signum: int, frame: object) -> None:
        """The first SIGINT or SIGTERM stops the run; any that follow, however many and however soon, are
        ignored while it stops."""
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        if self.signum is None:
            self.signum = signum
        self.state = STOPPED
        raise _stop_of(signum)

    def received(self) -> BaseException | None:
        """The stop raised in this run, made anew, if any."""
        return None if self.signum is None else _stop_of(self.signum)

    def raise_received(self) -> None:
        """Raise the stop received while the run went on to the error being handled, if any (a signal gives
        130 or 143, whatever error it caused on its way: a library that turned it into an error of its own,
        a matplotlib transform's ValueError say)."""
        stop = self.received()
        if stop is not None:
            raise stop

    def within(self, exc: BaseException) -> BaseException | None:
        """The SIGINT or SIGTERM stop an error carries as its cause or context (one that landed where Python
        wraps what is raised: a class being made), or the one received while the run went on to this
        error, if any."""
        received = self.received()
        if received is not None:
            return received
        seen: set[int] = set()
        current: BaseException | None = exc
        while current is not None and id(current) not in seen:
            if isinstance(current, (KeyboardInterrupt, Terminated)):
                return current
            seen.add(id(current))
            current = current.__cause__ or current.__context__
        return None

    def stopped(self, stop: BaseException) -> int:
        """Say on stderr that the run stopped (one line), and return its exit code."""
        if isinstance(stop, KeyboardInterrupt):
            print("interrupted (SIGINT): stopped; earlier outputs are left as they were", file=sys.stderr)
            return EXIT_SIGINT
        print("terminated (SIGTERM): stopped; earlier outputs are left as they were", file=sys.stderr)
        return EXIT_SIGTERM

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """SIGINT and SIGTERM held back meanwhile, then delivered again to the handlers they had: while the
        outputs are renamed into place, and while the charts' library is imported (its compiled module cut
        short in its initialisation would end the process in a fatal error; see ``_pyplot`` of
        :mod:`scorer.outputs.html_report`). The mask holds back a signal the kernel has not yet delivered;
        the recording handler one it delivered just before, whose Python handler would otherwise run between
        two renames. In a thread other than the main one, nothing (signals are the main thread's)."""
        if not in_main_thread():
            yield
            return
        received: list[int] = []
        record = lambda signum, frame: received.append(signum)  # noqa: E731
        before = {sig: signal.signal(sig, record) for sig in SIGNALS}
        state, self.state = self.state, DEFERRED
        mask = (
            signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS) if hasattr(signal, "pthread_sigmask") else None
        )
        try:
            yield
        finally:
            if mask is not None:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            for sig, handler in before.items():
                signal.signal(sig, signal.SIG_DFL if handler is None else handler)
            self.state = state
            for signum in received[:1]:
                signal.raise_signal(signum)

    def exit(self, code: int) -> None:
        """End the command line's process with ``code``, a stopped run's too, SIGINT and SIGTERM ignored by
        the kernel itself meanwhile, in the steps of the interpreter's own exit: the threads joined (a run
        leaves none), the exit handlers run (``atexit``: temporary folders removed, child processes joined),
        the standard streams flushed (one that cannot be makes the code 120, as the interpreter's exit
        does), then the process ended at once (``os._exit``). The interpreter's finalization, which would
        free one by one the objects a run leaves (13 ms at 20,000 turns, docs/performance.md), and the C
        library's exit are skipped: every output is written, closed and made durable by then, and the
        caches' database committed."""
        for sig in SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        self.state = EXITING
        threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter's exit runs first
        atexit._run_exitfuncs()
        flushed = True
        for stream in (sys.stdout, sys.stderr):
            if stream is not None and not getattr(stream, "closed", False):
                try:
                    stream.flush()
                except Exception:  # noqa: BLE001  closed underneath, full, or gone: as the interpreter
                    flushed = False
        os._exit(code if flushed else 120)


#: The process's stop. What it holds is the runner's list of held signals, which ``python -m scorer.runner``
#: hands on to the runner (the runner, which ships alone, never imports this module).
STOP = Stop(HELD_SIGNALS)


def module_run(argv: Sequence[str]) -> str | None:
    """The module ``python -m`` runs, by the interpreter's own command line ``argv`` (``sys.orig_argv``):
    the value of its ``-m`` option (``-m scorer``, ``-mscorer``, ``-Im scorer``), or None (a script, ``-c``,
    standard input)."""
    rest = iter(argv[1:])
    for arg in rest:
        if arg == "--check-hash-based-pycs":  # the one long option with a value
            next(rest, None)
            continue
        if arg in ("-", "--") or not arg.startswith("-"):
            return None
        if arg.startswith("--"):
            continue
        for at, option in enumerate(arg[1:], 2):
            if option in "cmWX":  # the options with a value: the rest of this argument, else the next one
                value = arg[at:] or next(rest, None)
                if option == "m":
                    return value
                if option == "c":
                    return None
                break
    return None


@contextmanager
def blocked() -> Iterator[set[int | signal.Signals]]:
    """SIGINT and SIGTERM blocked meanwhile (the worker pool forks its workers so): the mask before is given,
    for a worker to take back once its handlers are set (:func:`as_worker`), and put back here after (a
    signal held meanwhile is handled then)."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield mask
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def as_worker(mask: set[int | signal.Signals]) -> None:
    """In a worker forked in :func:`blocked`: SIGINT is the parent's to handle (ignored), SIGTERM ends the
    worker at once (the default action), set while both are still blocked; then the parent's ``mask``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)


#: Signals whose default action ends or stops a process: each is a surprise during the scoring step.
CATCHABLE = sorted(
    {
        getattr(signal, name)
        for name in (
            "SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM",
            "SIGPROF", "SIGXCPU", "SIGXFSZ", "SIGIO", "SIGPWR", "SIGSYS", "SIGTRAP", "SIGTSTP", "SIGTTIN",
            "SIGTTOU", "SIGABRT", "SIGSTKFLT",
        )
        if hasattr(signal, name)
    }
    | set(range(signal.SIGRTMIN, signal.SIGRTMAX + 1))
)  # fmt: skip


class Surprises:
    """Every catchable signal recorded as a surprise from :meth:`install` to :meth:`restore` (the scoring
    step of a code competition: contract section 10); the first one raises ``surprise(what)`` while
    ``raising`` is on."""

    def __init__(self, surprise: Callable[[str], BaseException]) -> None:
        self.received: list[int] = []
        self.raising = False
        self.raised = False
        self._surprise = surprise
        self._before: dict[int, Any] = {}

    def __call__(self, signum: int, frame: object) -> None:
        self.received.append(signum)
        if self.raising and not self.raised:
            self.raised = True
            raise self._surprise(f"it received {signal_name(signum)}")

    def install(self) -> None:
        self._before = {sig: signal.signal(sig, self) for sig in CATCHABLE}

    def restore(self) -> None:
        for sig, before in self._before.items():
            signal.signal(sig, before)
        self._before = {}

    def names(self) -> list[str]:
        """The signals received so far, as surprises."""
        return [f"it received {signal_name(s)}" for s in self.received]
