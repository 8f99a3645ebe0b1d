"""The command line (contract section 6): ``scorer`` and ``python -m scorer``.

Exit codes: 0 scored / valid, 1 submission invalid, 2 usage, configuration, thesaurus or reference-data
error, 3 unexpected internal error (one line on stderr, the traceback in ``scorer-error.log`` in the output
directory); 130 and 143 a stop (SIGINT, SIGTERM), which :mod:`scorer.stop` owns.

Not a shell over :mod:`scorer.api` alone: besides the API, a command writes its outputs
(:mod:`scorer.outputs`), and the command line checks the dependencies, finds and says the configuration,
decides the audience and hands ``run`` whole to the runner. Its modules, each importing only those before
it: ``parser`` (the arguments and each command's help), ``terminal`` (what is printed), ``exits`` (a command
run to its exit code: each failure's code, stderr line and verdict), ``commands`` (the handlers of the
scoring and checking commands), ``platform_step`` (``codalab``, with a code competition's scoring step) and
``bundle_command`` (``bundle``); this module holds the entry points, :func:`main` and :func:`run`, and the
command dispatcher (:func:`handler`): the one place of the package that imports inside a function, so that
each command imports what it uses (``score`` neither the runner's ``main`` nor the code step).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from scorer.errors import EXIT_USAGE
from scorer.stop import STOP, Terminated
from scorer.streams import forgiving_streams, reopen_closed

from .commands import Explanation, run_configuration
from .exits import Handler, RunState, run_command
from .parser import ARGUMENTS, build_parser
from .terminal import dependencies_missing, emit, emit_json

__all__ = [
    "ARGUMENTS",
    "handler",
    "Explanation",
    "RunState",
    "build_parser",
    "emit",
    "emit_json",
    "main",
    "run",
]


#: The module of ``scorer/cli/`` holding each subcommand's handler (``run`` is the runner's own).
HANDLER_MODULES: dict[str, str] = {
    "validate": "commands",
    "score": "commands",
    "leaderboard": "commands",
    "codalab": "platform_step",
    "correlate": "commands",
    "bundle": "bundle_command",
    "audit-sample": "commands",
    "explain": "commands",
    "signature": "commands",
    "check-data": "commands",
}


def handler(command: str) -> Handler:
    """The handler of ``command``, its module imported now (the command dispatcher: docs/performance.md)."""
    found: Handler = importlib.import_module(f"scorer.cli.{HANDLER_MODULES[command]}").HANDLERS[command]
    return found


def _dispatched(args: argparse.Namespace, state: RunState) -> int:
    """The command's handler on ``args``, its module imported here: within the run's stop and its exit
    codes (a module that fails to import is exit 3 with its log, as any fault of a handler)."""
    return handler(args.command)(args, state)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``) and return its exit code. The standard
    streams are :class:`~scorer.streams.Forgiving` meanwhile: whatever becomes of them, the code is the
    outputs'."""
    with forgiving_streams():
        if dependencies_missing(sys.argv[1:] if argv is None else argv):
            return EXIT_USAGE
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    if given[:1] == ["run"]:  # the standard-library runner, whole (contract section 10)
        from scorer.runner.main import main as runner_main

        # a stop held since the package's first import (and any until the runner takes the signals) is its
        try:
            return runner_main(given[1:], prog="scorer run", configure=run_configuration, held=STOP.held)
        finally:
            STOP.held.clear()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    with STOP.taken():  # the first SIGINT or SIGTERM stops the run; the handlers before are put back after
        try:
            STOP.act_on_held()  # one received before: stop as the first of them would have
            return run_command(_dispatched, args)
        except (KeyboardInterrupt, Terminated) as stop:
            return STOP.stopped(stop)


def run(held: Sequence[int] = ()) -> None:
    """The command line's process: closed standard descriptors given ``/dev/null`` first, then :func:`main`,
    whose code is the process's. ``held``: the SIGINT and SIGTERM the ``scorer`` console script received
    while the package was imported (``scorer_console.py``), the first of which stops the run at once."""
    reopen_closed()
    STOP.hold(held)  # until main's run takes the signals (it stops on the first)
    STOP.exit(main())
