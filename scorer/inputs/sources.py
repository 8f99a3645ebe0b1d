"""What the readers of the input files share (contract section 3): a file's content (its bytes, memory-mapped,
or a regular file's read within a size limit without blocking), and the words their messages use (a JSON
value's type, a count with its noun, where a line is, the known id a mistyped one meant).
"""

from __future__ import annotations

import difflib
import mmap
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from io import BufferedReader
from pathlib import Path
from typing import Any, cast

from .jsonio import shorten

#: A file's content: its bytes, or the path of a regular file to stream from.
Content = bytes | Path


@contextmanager
def contents(source: Content) -> Iterator[bytes]:
    """The bytes of ``source``; a file is memory-mapped (only the pages read are loaded)."""
    if isinstance(source, (bytes, bytearray)):
        yield source
        return
    with open(source, "rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            yield b""
            return
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            yield cast(bytes, mapped)  # read as bytes are: slices, find, count, regular expressions


def json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return {str: "a string", list: "a list", dict: "a JSON object", int: "a number", float: "a number"}[
        type(value)
    ]


def counted(n: int, one: str, many: str | None = None) -> str:
    """``1 turn``, ``2 turns``: a count with its noun."""
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def did_you_mean(dialog_id: str, known: Iterable[str]) -> str:
    """``"; did you mean 'd-0002'?"`` when one known id is close to a mistyped one (the same numbers with
    other leading zeros, else the one clearly closest of at most :data:`CLOSE_IDS_LOOKED_AT` ids of about its
    length), else ``""``."""
    if len(dialog_id) > 200:
        return ""
    near = [k for k in known if abs(len(k) - len(dialog_id)) <= 2][:CLOSE_IDS_LOOKED_AT]
    same_numbers = [k for k in near if ZEROS.sub("", k) == ZEROS.sub("", dialog_id)]
    if len(same_numbers) == 1:  # d-002 for d-0002: the same numbers, other leading zeros
        return f"; did you mean {shorten(same_numbers[0])!r}?"
    found = difflib.get_close_matches(dialog_id, near, n=2, cutoff=0.85)
    if len(found) == 1 or (
        len(found) == 2
        and difflib.SequenceMatcher(None, dialog_id, found[0]).ratio()
        > difflib.SequenceMatcher(None, dialog_id, found[1]).ratio()
    ):
        return f"; did you mean {shorten(found[0])!r}?"
    return ""


#: Leading zeros of a run of digits.
ZEROS = re.compile(r"(?<!\d)0+(?=\d)")


#: How many known ids a mistyped one is compared with (bounded work on a large test set).
CLOSE_IDS_LOOKED_AT = 5000


def located(number: int, dialog_id: str) -> dict[str, Any]:
    """Where a line's issue is: its number and (shortened) dialog_id, as :class:`Issue` takes them."""
    return dict(line=number, dialog_id=shorten(dialog_id))


def size(source: Content) -> int:
    return len(source) if isinstance(source, (bytes, bytearray)) else os.stat(source).st_size


def read_all(source: Content) -> bytes:
    if isinstance(source, (bytes, bytearray)):
        return bytes(source)
    with open(source, "rb") as fh:
        return fh.read()


def from_regular_file(path: Path, max_bytes: int, use: Callable[[BufferedReader], bytes]) -> bytes | None:
    """``use(the open file)`` for a regular file of at most ``max_bytes``, or None (another kind of file, too
    large, or unreadable). Opened without blocking: a FIFO is refused, never waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        try:
            return use(fh)
        except OSError:
            return None
