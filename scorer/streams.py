"""The command line's standard streams, which belong to the environment (contract section 3).

A closed, full or broken stdout or stderr, or one whose encoding cannot show
a character, never changes the exit code the outputs deserve and never shows
a traceback:

* :func:`reopen_closed` gives a closed descriptor 0, 1 or 2 ``/dev/null`` at
  the start of the process, before anything is opened (a file opened later
  would otherwise take its number, and a print would write into it);
* :class:`Forgiving` stands for ``sys.stdout`` and ``sys.stderr`` while a
  command runs: a character the encoding cannot show is written escaped
  (``\\u0434``); a write or flush that fails (a broken pipe, a full device, a
  closed stream) silences that stream for the rest of the run, its descriptor
  turned to ``/dev/null`` so that nothing buffered fails again at exit;
  control and format characters other than the newline are written
  escaped (``\x1b``, ``\u202e``, :func:`scorer.safe_text.shown_lines`), so no
  text that came from an upload drives the terminal (the progress line's own
  carriage returns go through :meth:`Forgiving.write_raw`, and JSON for
  programs, already escaped by JSON's rules, too);
* on stderr, no line is longer than :data:`~scorer.safe_text.LINE_LIMIT`
  characters: each line is held until its newline (or a flush) and written
  as :func:`scorer.safe_text.bounded_line` makes it, its longest words (a
  path, a name) cut with ``…`` and their length. The messages cut names
  themselves; this is the last resort, so that any line is bounded.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from scorer.safe_text import LINE_LIMIT, bounded_line, cut, shown_lines


def reopen_closed() -> None:
    """Open ``/dev/null`` on each of the descriptors 0, 1 and 2 that is closed, and give ``sys.stdin``,
    ``sys.stdout`` and ``sys.stderr`` a stream where Python left None (it does for a descriptor closed at
    start)."""
    for fd, mode in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            opened = os.open(os.devnull, mode)
            # the lowest free number is fd's, unless a lower one was closed too (then handled)
            if opened != fd:
                os.dup2(opened, fd)
                os.close(opened)
    for name, fd, text_mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        if getattr(sys, name) is None:
            stream = open(
                fd,
                "r" if text_mode == "r" else "w",
                encoding="utf-8",
                errors="backslashreplace",
                closefd=False,
            )
            setattr(sys, name, stream)


class Forgiving(io.TextIOBase):
    """A text stream that writes to ``stream`` and never raises: unshowable characters are escaped, and a
    failed write or flush silences the stream; with ``line_limit``, no line written is longer (see the
    module docstring)."""

    #: The most characters of one line held before its newline; past them only the count is kept.
    HELD = 1 << 16

    def __init__(self, stream: TextIO, line_limit: int | None = None):
        super().__init__()
        self.stream = stream
        self.broken = False
        self.line_limit = line_limit
        self._held = ""  # the current line's text not written yet
        self._dropped = 0  # characters of it beyond HELD, counted, not kept
        self._written = 0  # characters of it a flush has already written

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", None) or "utf-8"

    def isatty(self) -> bool:
        try:
            return not self.broken and self.stream.isatty()
        except (OSError, ValueError, AttributeError):
            return False

    def fileno(self) -> int:
        return self.stream.fileno()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        shown = shown_lines(text)
        if self.line_limit is None:
            self._put(shown)
            return len(text)
        *ended, rest = shown.split("\n")
        out = []
        for part in ended:
            self._hold(part)
            out.append(self._line_so_far() + "\n")
            self._held, self._dropped, self._written = "", 0, 0
        self._put("".join(out))
        self._hold(rest)
        return len(text)

    def _hold(self, text: str) -> None:
        room = self.HELD - len(self._held)
        if len(text) > room:
            self._dropped += len(text) - max(room, 0)
            text = text[: max(room, 0)]
        self._held += text

    def _line_so_far(self) -> str:
        """The held part of the line, as it may be written: within what is left of the line's room."""
        room = (self.line_limit or 0) - self._written
        if room <= 0:
            return ""
        if self._dropped:  # longer than anything kept: cut whole, with its length
            return cut(self._held, room, len(self._held) + self._dropped)
        return bounded_line(self._held, room)

    def write_raw(self, text: str) -> int:
        """Write ``text`` as it is: for the scorer's own terminal controls (the progress line's ``\r``) and
        for JSON text, whose own escaping leaves nothing for the stream to escape."""
        self._release()
        return self._put(text)

    def _put(self, text: str) -> int:
        if text and not self.broken:
            try:
                try:
                    self.stream.write(text)
                except UnicodeEncodeError:
                    self.stream.write(text.encode(self.encoding, "backslashreplace").decode(self.encoding))
            except (OSError, ValueError):
                self._give_up()
        return len(text)

    def _release(self) -> None:
        """Write the held part of the current line (a flush, or raw text, comes before its newline)."""
        if self._held or self._dropped:
            text = self._line_so_far()
            self._put(text)
            self._written += len(text)
            self._held, self._dropped = "", 0

    def flush(self) -> None:
        self._release()
        if not self.broken:
            try:
                self.stream.flush()
            except (OSError, ValueError):
                self._give_up()

    def _give_up(self) -> None:
        """Nothing more is written here; the descriptor now leads to ``/dev/null``, so what the stream still
        buffers goes there when it is flushed at exit instead of failing again."""
        self.broken = True
        try:
            fd = self.stream.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, fd)
            finally:
                os.close(devnull)
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass


@contextmanager
def forgiving_streams() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` as :class:`Forgiving` streams for the duration; the originals back
    after, flushed where they still can be."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Forgiving(saved[0]), Forgiving(saved[1], LINE_LIMIT)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        sys.stdout, sys.stderr = saved
