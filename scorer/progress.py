"""A progress bar on the terminal: shown only on a TTY, and only once a run has lasted a while.

Machine-read output never carries it: it goes to stderr, and not at all when
stderr is a file or a pipe.
"""
from __future__ import annotations

import sys
import time
from typing import TextIO

DELAY_SECONDS = 2.0
WIDTH = 30


class ProgressBar:
    """``update(done)`` redraws ``label [#####     ] done/total``; ``close()`` clears the line."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None, *,
                 enabled: bool | None = None, delay: float = DELAY_SECONDS):
        self.total = max(total, 1)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _is_tty(self.stream) if enabled is None else enabled
        self.delay = delay
        self.start = time.monotonic()
        self.shown = False

    def render(self, done: int) -> str:
        """``label [####      ]  40%  8,000/20,000  1m05s left`` (time left once something is done)."""
        done = min(done, self.total)
        filled = WIDTH * done // self.total
        elapsed = time.monotonic() - self.start
        left = ""
        if 0 < done < self.total:
            seconds = int(elapsed * (self.total - done) / done)
            left = f"  {seconds // 60}m{seconds % 60:02d}s left" if seconds >= 60 else f"  {seconds}s left"
        return (f"{self.label} [{'#' * filled}{' ' * (WIDTH - filled)}] {100 * done // self.total:3d}%  "
                f"{done:,}/{self.total:,}{left}")

    def update(self, done: int) -> None:
        if not self.enabled or time.monotonic() - self.start < self.delay:
            return
        self.stream.write("\r" + self.render(done))
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * (len(self.render(self.total)) + 16) + "\r")
            self.stream.flush()


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
