"""Text that came from an upload or a folder, made harmless for people to read (contract section 3).

An entry's name, a dialog_id, an answer or a file name inside a zip is shown
literally wherever it goes. On the terminal, in stderr lines and in CSV cells
its control characters (C0 and C1, newline and ESC included) and the
bidirectional controls are written escaped (``\\n``, ``\\x1b``, ``\\u202e``), so
no name can start a line that looks like the scorer's own, drive the terminal,
or reorder what follows it; a CSV cell that a spreadsheet would read as a
formula gets a leading ``'``.
"""

from __future__ import annotations

import re

#: Bidirectional controls: marks, embeddings and overrides, isolates.
BIDI_CONTROLS = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Every character :func:`shown` escapes: C0, DEL, C1 and the bidirectional controls.
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI_CONTROLS}]")
#: What a stream line may keep: the same, but the newline that ends the scorer's own lines.
_UNSAFE_IN_LINES = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}]")
#: The first characters that make a spreadsheet evaluate a cell (OWASP's CSV injection advice).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str) -> str:
    """``text`` with every control and bidirectional character escaped: one harmless line."""
    return _UNSAFE.sub(_escape, text)


def shown_lines(text: str) -> str:
    """``text`` as :func:`shown`, keeping its newlines: for what the scorer writes on a stream, whose own
    lines end in them (a name inside has already been made one line by :func:`shown`)."""
    return _UNSAFE_IN_LINES.sub(_escape, text)


def csv_cell(value: object) -> object:
    """A CSV cell as people's spreadsheets may read it: a number as it is; a text escaped as by
    :func:`shown` and, when it begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, written
    with a leading ``'`` so that it is shown, never evaluated."""
    if not isinstance(value, str):
        return value
    text = shown(value)
    if value.startswith(FORMULA_STARTS) and not _is_number(value):
        return "'" + text
    return text


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text and text.lower().lstrip("+-") not in ("nan", "inf", "infinity")


def safe_cells(row: tuple | list) -> list:
    """A CSV row with each cell as :func:`csv_cell` makes it."""
    return [csv_cell(value) for value in row]
