"""What the command line prints: results on stdout (for a person, or as JSON for a program), and on stderr the
configuration it reads, warnings, an invalid submission's errors, the audit's flags, the progress display,
and the notices of a run that cannot use its cache or lacks its dependencies."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from scorer.errors import Issue, SubmissionInvalid
from scorer.inputs.config import UNSALTED_NOTE
from scorer.metric.cache import cache_dir, cache_dir_problem
from scorer.outputs.report import issue_lines
from scorer.progress import ProgressDisplay
from scorer.safe_text import json_text, shown, shown_name
from scorer.version import missing_dependencies


def emit(text: str) -> None:
    """Print ``text`` on stdout (a reader that went away, a full device: the rest goes nowhere, and the run
    keeps its exit code; see :mod:`scorer.streams`)."""
    print(text, flush=True)


def emit_json(value: object) -> None:
    """Print ``value`` on stdout as JSON for a program (contract section 3): escaped by JSON's own rules
    (:func:`~scorer.safe_text.json_text`), never by the stream's, and all ASCII where stdout's encoding
    cannot show a character of it, so that whatever a name holds ``json.loads`` gives it back exactly."""
    text = json_text(value)
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        text = json_text(value, ascii_only=True)
    getattr(sys.stdout, "write_raw", sys.stdout.write)(text + "\n")
    sys.stdout.flush()


def say(line: str) -> None:
    """One line on stderr."""
    print(line, file=sys.stderr)


def say_lines(lines: Iterable[str]) -> None:
    """Each of ``lines`` on stderr."""
    for line in lines:
        print(line, file=sys.stderr)


def say_config(which: str, *, quiet: bool, unsalted: bool) -> None:
    """Contract section 7's rule, said: which configuration the run reads (not with ``--quiet``), and the
    warning of private hidden-metric settings without a salt."""
    if not quiet:
        print(f"config: {which}", file=sys.stderr)
    if unsalted:
        print(f"warning: {UNSALTED_NOTE}", file=sys.stderr)


def print_invalid(exc: SubmissionInvalid, every: bool = False, scoring: bool = True) -> None:
    """The verdict on stderr: the first errors of each kind, or with ``every`` each listed error, one a
    line; a command that scores says it did not."""
    count = f"{exc.total} error" + ("" if exc.total == 1 else "s")
    print(
        f"error: the submission is invalid ({count}){'; it was not scored' if scoring else ''}:",
        file=sys.stderr,
    )
    print(issue_lines(exc.listed(), exc.not_listed, exc.unchecked_notes(), every=every), file=sys.stderr)
    print_warnings(exc.warnings)


def print_warnings(warnings: Sequence[Issue]) -> None:
    for w in warnings[:20]:
        print(f"warning: {shown(str(w))}", file=sys.stderr)  # one line, whatever a name in it holds
    if len(warnings) > 20:
        print(f"warning: ... and {len(warnings) - 20} more warning(s)", file=sys.stderr)


def waiting(output: Path) -> Callable[[], None]:
    """What a run says while another holds the output directory's lock."""
    return lambda: print(f"waiting: another run is writing to {output}", file=sys.stderr, flush=True)


def progress_display(quiet: bool) -> ProgressDisplay:
    """The progress line of a run: on a terminal only, and never with --quiet."""
    return ProgressDisplay(enabled=False if quiet else None)


def cache_notice() -> None:
    """One stderr line when the cache directory cannot be used (contract section 3): the run goes on
    without a persistent cache."""
    problem = cache_dir_problem()
    if problem is not None:
        print(
            f"warning: the cache directory {shown_name(str(cache_dir()))} is not used "
            f"({shown_name(problem)}); "
            "the run goes on without a persistent cache",
            file=sys.stderr,
        )


def dependencies_missing(argv: Sequence[str]) -> bool:
    """Say, and return True, when this Python lacks the scorer's dependencies: a set-up problem (exit 2),
    never a traceback halfway through a command."""
    missing = missing_dependencies()
    if not missing:
        return False
    shown_args = " ".join(argv) or "..."
    print(
        f"error: this Python ({sys.executable}) lacks the scorer's dependencies (missing: "
        f"{', '.join(missing)}). Run the scorer with its own environment: ./run_scoring.sh {shown_args} "
        f"(it sets up .venv on first use), or .venv/bin/python -m scorer {shown_args} once it exists; "
        "or install the scorer into this Python with: pip install . (in the repository)",
        file=sys.stderr,
    )
    return True
