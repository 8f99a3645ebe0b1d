"""Progress of a long run: the library's callback protocol and the terminal's display of it.

The library reports every phase of a run (read, validate, score, write)
through one callback, ``progress(step, done, total)``: ``step`` names what is
under way (``"reading answers.jsonl"``, ``"scoring"``, ``"writing details.csv"``;
``"aggregating"``; a leaderboard prefixes the entry's name), and steps that read a file count
bytes (their names start with :data:`READING` or :data:`CHECKING`), the others
count items. Reports come often enough to move a bar and rarely enough to
cost nothing measurable (every 1 MiB, every few thousand rows).

:class:`ProgressDisplay` draws them: one line, rewritten in place, shown only
on a TTY and only once the run has lasted :data:`DELAY_SECONDS`; machine-read
output never carries it (it goes to stderr, and not at all when stderr is a
file or a pipe). A name in it is escaped and cut as in every stderr line
(:func:`scorer.safe_text.shown_name`), so the line is one line of bounded length.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from scorer.safe_text import shown_name

#: ``progress(step, done, total)``.
Progress = Callable[[str, int, int], None]
READING, CHECKING, SCORING, AGGREGATING, WRITING = "reading", "checking", "scoring", "aggregating", "writing"
EXPLAINING, SAVING = "explaining the lowest turns", "keeping the words' keys in the cache"
#: The step of a bootstrap (a leaderboard's intervals, correlate's coefficients), counting what is resampled.
BOOTSTRAP = "bootstrap intervals"

DELAY_SECONDS = 2.0
REDRAW_SECONDS = 0.1
WIDTH = 30
MIB = 1 << 20


def counts_bytes(step: str) -> bool:
    """True when ``step`` counts the bytes of a file rather than items."""
    name = step.rsplit(": ", 1)[-1]
    return name.startswith(READING) or name.startswith(CHECKING)


def render(step: str, done: int, total: int, elapsed: float) -> str:
    """``step [####      ]  40%  8,000/20,000  1m05s left`` (time left once something is done).

    >>> render("scoring", 50, 200, 10.0)
    'scoring [#######                       ]  25%  50/200  30s left'
    >>> render("reading answers.jsonl", 3 * MIB, 12 * MIB, 1.0)
    'reading answers.jsonl [#######                       ]  25%  3.0/12.0 MiB  3s left'
    >>> render("aggregating", 0, 1, 0.5)
    'aggregating [                              ]   0%'
    >>> render("checking ppl_output.json", 2048, 5120, 0.2)
    'checking ppl_output.json [############                  ]  40%  2.0/5.0 KiB  0s left'
    """
    total = max(total, 1)
    done = min(max(done, 0), total)
    filled = WIDTH * done // total
    left = ""
    if 0 < done < total:
        seconds = int(elapsed * (total - done) / done)
        left = f"  {seconds // 60}m{seconds % 60:02d}s left" if seconds >= 60 else f"  {seconds}s left"
    if counts_bytes(step):
        unit, size = ("MiB", MIB) if total >= MIB else ("KiB", 1024)  # a small file in KiB, not 0.0/0.0 MiB
        amount = f"  {done / size:.1f}/{total / size:.1f} {unit}"
    else:
        amount = f"  {done:,}/{total:,}" if total > 1 else ""  # a step of one item shows no count
    bar = "#" * filled + " " * (WIDTH - filled)
    return f"{_shown_step(step)} [{bar}] {100 * done // total:3d}%{amount}{left}"


def _shown_step(step: str) -> str:
    """The step for the line: the entry's name a leaderboard puts before it escaped and cut as every name
    is (:func:`scorer.safe_text.shown_name`), the step's own words escaped and cut too.

    >>> _shown_step("evil\\naudit: x: scoring")
    'evil\\\\naudit: x: scoring'
    """
    name, _, what = step.rpartition(": ")
    return (shown_name(name) + ": " if name else "") + shown_name(what)


class ProgressDisplay:
    """A :data:`Progress` callback drawing one line on a terminal; ``close()`` clears it.

    Each step's time left is estimated from when that step began; nothing is
    drawn before the run has lasted ``delay`` seconds, and redraws are at
    most every :data:`REDRAW_SECONDS` (a step's start and end are always drawn).
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        enabled: bool | None = None,
        delay: float = DELAY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _is_tty(self.stream) if enabled is None else enabled
        self.delay = delay
        self.clock = clock
        self.started = clock()
        self.step: str | None = None
        self.step_started = self.started
        self.drawn_at = float("-inf")
        self.width = 0

    def __call__(self, step: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = self.clock()
        new_step = step != self.step
        if new_step:
            self.step, self.step_started = step, now
        if now - self.started < self.delay or (
            now - self.drawn_at < REDRAW_SECONDS and done < total and not new_step
        ):
            return
        line = render(step, done, total, now - self.step_started)
        self._write("\r" + line + " " * max(0, self.width - len(line)))
        self.stream.flush()
        self.width, self.drawn_at = len(line), now

    def _write(self, text: str) -> None:
        """The line's own carriage returns reach the terminal (a stream that escapes controls has
        ``write_raw``)."""
        getattr(self.stream, "write_raw", self.stream.write)(text)

    def __enter__(self) -> ProgressDisplay:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()  # also when a run is interrupted: the message that follows starts on a clean line

    def close(self) -> None:
        """Clear the line, so what is printed next starts on a clean one (idempotent)."""
        if self.width:
            self._write("\r" + " " * (self.width + 4) + "\r")  # and a "^C" the terminal echoed after it
            self.stream.flush()
            self.width = 0


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
