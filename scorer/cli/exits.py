"""A command run to its exit code (contract section 6): the cache's notice before it, the cycle collector
paused meanwhile, and each way it can fail turned into its code, its stderr line, and its verdict where a
reader looks for one (the output directory's commit marker, ``validate --json``'s stdout); a
:class:`RunState`, not the parsed arguments, carries what these failure paths need. A stop (SIGINT,
SIGTERM) found on the way is :mod:`scorer.stop`'s."""

from __future__ import annotations

import argparse
import errno
import gc
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from scorer.errors import (
    EXIT_INTERNAL,
    IssuesError,
    PerplexitiesNotFound,
    ScorerError,
    ThesaurusError,
    UsageError,
)
from scorer.inputs.contract import SCORES_JSON
from scorer.inputs.jsonio import shorten
from scorer.outputs.report import ERROR_LOG, failure_payload, issue_lines, utf8, write_failure
from scorer.progress import ProgressDisplay
from scorer.stop import STOP
from scorer.workers import no_cycle_collection

from .terminal import cache_notice, emit_json


@dataclass
class RunState:
    """What a command has set up that its failure paths need (in place of attributes added to the parsed
    arguments): the output directory once prepared, the page a failure writes there (``codalab``'s), the
    commit marker that holds the verdict, and whether the verdict is printed as JSON (``validate --json``)."""

    output: Path | None = None
    failure_page: str | None = None
    marker: str = SCORES_JSON
    json: bool = False


#: A command's handler: the parsed arguments and the run's state -> the exit code.
Handler = Callable[[argparse.Namespace, RunState], int]

#: The options that mend an error the library raises (the library names no flags; the command line does).
_OPTION_HINTS: dict[type[ScorerError], str] = {
    ThesaurusError: "--thesaurus PATH, or --no-synonyms",
    PerplexitiesNotFound: "--ppl FILE",
}

#: The commands that read or write the persistent caches.
_CACHED = {"score", "codalab", "leaderboard", "correlate", "explain"}


def run_command(handler: Handler, args: argparse.Namespace) -> int:
    """``handler`` on ``args``, and its exit code, whatever becomes of it (but a stop, which goes on up)."""
    state = RunState(json=bool(getattr(args, "json", False)))
    try:
        if args.command in _CACHED:
            cache_notice()
        with no_cycle_collection():  # one command, then exit: nothing is left for a collection to free
            code = handler(args, state)
            STOP.raise_received()  # a stop the run went on past (Python reported it and carried on)
            # before the collector resumes: its next collection, and the exit's, skip every object the run
            # left (0.13 s at 20,000 turns)
            gc.freeze()
            return code
    except IssuesError as exc:
        _json_verdict(state, exc)
        print(f"error: {exc.headline}:", file=sys.stderr)
        print(issue_lines(exc.listed(), exc.not_listed, exc.unchecked_notes()), file=sys.stderr)
        return exc.exit_code
    except ScorerError as exc:
        STOP.raise_received()  # an error the stop caused on its way: 130 or 143
        _json_verdict(state, exc)
        hint = next(
            (f" (on the command line: {h})" for kind, h in _OPTION_HINTS.items() if isinstance(exc, kind)), ""
        )
        print(f"error: {exc}{hint}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # a fault of the environment: a path too long, unreadable, on a full disk ...
        STOP.raise_received()  # an error the stop caused on its way: 130 or 143
        error = UsageError(environment_fault(exc, state))
        _json_verdict(state, error)
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except MemoryError:
        STOP.raise_received()  # an error the stop caused on its way: 130 or 143
        error = UsageError("the run ran out of memory; give it more memory, or fewer --resamples or --jobs")
        _json_verdict(state, error)
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except Exception as exc:  # noqa: BLE001 - the one place that turns bugs into exit 3
        stop = STOP.within(exc)
        if stop is not None:  # a stop that landed where Python wraps what is raised (a class being made)
            raise stop from None
        _json_verdict(state, RuntimeError("internal error"))
        return _internal_error(state)


def environment_fault(exc: OSError, state: RunState) -> str:
    """A sentence naming the path of a fault of the environment: the file's when the error names one, else
    the output directory's (the run was writing there), with what to do when the fault is a known one."""
    path = shorten(str(exc.filename), 200) if exc.filename else None
    where = state.output
    if path is None:
        path = str(where) if where is not None else "a file"
    reason = exc.strerror or str(exc)
    if exc.errno == errno.EMFILE:
        reason += " (raise the limit, ulimit -n, or give fewer --jobs)"
    elif exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        reason += " (free some space, or give another --output)"
    return f"{path}: {reason}"


def _json_verdict(state: RunState, error: Exception) -> None:
    """``validate --json`` prints one JSON document whatever the exit code: here, the error's."""
    if state.json:
        payload = failure_payload(error, "error")
        payload["warnings"] = []
        emit_json(payload)


def try_write_failure(
    exc: Exception, output: Path, log: str | None = None, page: str | None = None, marker: str = SCORES_JSON
) -> None:
    """The verdict of a run that failed, in its output directory when it can be written there."""
    try:
        write_failure(exc, "error", output, {ERROR_LOG: utf8(log)} if log else None, page, marker)
    except OSError:
        pass


@contextmanager
def verdict_on_failure(state: RunState, display: ProgressDisplay) -> Iterator[None]:
    """A usage, configuration, thesaurus or reference-data error of ``leaderboard`` or ``correlate`` leaves
    its verdict in the output directory's commit marker (as ``score`` does in ``scores.json``), then goes
    on."""
    try:
        yield
    except ScorerError as exc:
        display.close()
        if state.output is not None:
            try_write_failure(exc, state.output, marker=state.marker)
        raise


def _internal_error(state: RunState) -> int:
    """Exit 3: one line on stderr; the traceback goes to ``scorer-error.log`` in the output directory
    when the run has one (nothing is written anywhere else), else to stderr only with SCORER_DEBUG=1."""
    output = state.output
    text = traceback.format_exc()
    where = ""
    if output is not None:
        try_write_failure(
            RuntimeError("internal error; see " + ERROR_LOG),
            output,
            text,
            state.failure_page,
            state.marker,
        )
        if (output / ERROR_LOG).is_file():
            where = f"; traceback in {output / ERROR_LOG}"
    elif os.environ.get("SCORER_DEBUG"):
        print(text, file=sys.stderr)
    else:
        where = "; set SCORER_DEBUG=1 to see the traceback"
    print(f"internal error: {sys.exc_info()[1]!r:.300}{where}", file=sys.stderr)
    return EXIT_INTERNAL
