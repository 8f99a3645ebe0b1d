"""Text that came from an upload or a folder, made harmless for people to read and kept exact for programs
(contract section 3).

An entry's name, a dialog_id, an answer or a file name inside a zip is shown
literally wherever it goes. On the terminal, in stderr lines and in CSV cells
its control characters (C0 and C1, newline and ESC included), the
bidirectional controls and the other format characters (zero-width ones, the
line and paragraph separators U+2028 and U+2029) are written escaped (``\\n``,
``\\x1b``, ``\\u202e``), so no name can start a line that looks like the
scorer's own, drive the terminal, or reorder what follows it; a CSV cell that
a spreadsheet would read as a formula gets a leading ``'``.

Lengths have one rule (:func:`cut`): a name or path longer than its room is
written as its start, ``…`` and its full length (``/tmp/cccc… (5,000
characters)``); a stderr line holds at most :data:`LINE_LIMIT` characters
(:func:`bounded_line`).

What is written for programs stays what it is: :func:`json_text` is JSON
escaped by JSON's own rules (``\\u0085``), never by the terminal's, so a
program reading it gets every name back exactly.
"""

from __future__ import annotations

import json
import re
from typing import Any

from scorer.runner import names

#: The format characters and the line and paragraph separators: the runner's
#: (:mod:`scorer.runner.names`: the runner stands alone on the ground floor), so that both escape by one rule.
FORMAT_CHARACTERS = names.FORMAT_CHARACTERS
#: What a stream line may keep: the same, but the newline that ends the scorer's own lines.
_UNSAFE_IN_LINES = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{FORMAT_CHARACTERS}]")
#: What :func:`json_text` writes as a JSON escape besides what JSON itself escapes: the same characters,
#: and unpaired surrogates (a file name Python decoded from bytes that are not UTF-8).
_UNSAFE_IN_JSON = re.compile(f"[\x7f-\x9f{FORMAT_CHARACTERS}\ud800-\udfff]")
#: The first characters that make a spreadsheet evaluate a cell (OWASP's CSV injection advice).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: The most characters a name or path takes in a line people read (:func:`shown_name`).
NAME_LIMIT = 200
#: The most characters of any line the scorer writes on stderr (:func:`bounded_line`).
LINE_LIMIT = 1000
#: A word of a long line is never cut shorter than this (:func:`bounded_line`).
_SHORTEST_CUT = 40
_WORD_END = re.compile(r"[:;,.)\]'\"]*$")


def _escape(match: re.Match[str]) -> str:
    return names.escaped(match.group())


def shown(text: str) -> str:
    """``text`` with every control and format character escaped: one harmless line. The runner's rule
    (:func:`scorer.runner.names.printable`), so that a name reads alike whichever of them writes it."""
    return names.printable(text)


def shown_lines(text: str) -> str:
    """``text`` as :func:`shown`, keeping its newlines: for what the scorer writes on a stream, whose own
    lines end in them (a name inside has already been made one line by :func:`shown`)."""
    return _UNSAFE_IN_LINES.sub(_escape, text)


def _cut_mark(length: int) -> str:
    return f"… ({length:,} characters)"


def cut(text: str, limit: int, length: int | None = None) -> str:
    """``text`` when it holds at most ``limit`` characters, else its start, ``…`` and its full length (or
    ``length``, when ``text`` is the start of a longer one), in ``limit`` characters (its start alone when
    ``limit`` leaves no room for the mark: the limit holds first).

    >>> cut("abcdefghijklmnopqrstuvwxyz" * 4, 30)
    'abcdefghijkl… (104 characters)'
    >>> cut("abcdefghijklmnopqrstuvwxyz" * 4, 10)
    'abcdefghij'
    """
    length = len(text) if length is None else length
    if length <= limit:
        return text
    mark = _cut_mark(length)
    if len(mark) > limit:
        return text[: max(limit, 0)]
    return text[: limit - len(mark)] + mark


def shown_name(name: str, limit: int = NAME_LIMIT) -> str:
    """A name or path for a line people read: escaped as by :func:`shown` and, when that is longer than
    ``limit``, cut as by :func:`cut` (never inside an escape), with the name's own length.

    >>> shown_name("evil\\naudit: x")
    'evil\\\\naudit: x'
    >>> shown_name("d" * 5000, 30)
    'dddddddddd… (5,000 characters)'
    """
    escaped = shown(name)
    if len(escaped) <= limit:
        return escaped
    mark = _cut_mark(len(name))
    room = limit - len(mark)
    kept: list[str] = []
    for char in name:
        piece = shown(char)
        room -= len(piece)
        if room < 0:
            break
        kept.append(piece)
    return "".join(kept) + mark


def bounded_line(line: str, limit: int = LINE_LIMIT) -> str:
    """``line`` in at most ``limit`` characters: its longest words (a path, a name) cut as by :func:`cut`,
    each keeping what follows it (``:``), until it fits; a line that still does not is cut whole.

    >>> bounded_line("error: submission /tmp/" + "p" * 3000 + ": File name too long", 100)
    'error: submission /tmp/ppppppppppppppppppppppppppppppppppppp… (3,005 characters): File name too long'
    """
    if len(line) <= limit:
        return line
    words = line.split(" ")
    done: set[int] = set()
    length = len(line)
    while length > limit:
        left = [i for i in range(len(words)) if i not in done and len(words[i]) > _SHORTEST_CUT]
        if not left:
            break
        i = max(left, key=lambda k: len(words[k]))
        done.add(i)
        word = words[i]
        end = _WORD_END.search(word)
        tail = end.group() if end else ""
        body = word[: len(word) - len(tail)]
        new = cut(body, max(len(body) - (length - limit), _SHORTEST_CUT)) + tail
        length += len(new) - len(word)
        words[i] = new
    return cut(" ".join(words), limit)


def json_text(value: Any, indent: int | None = 2, ascii_only: bool = False) -> str:
    """``value`` as JSON text for a program: every name in it escaped by JSON's own rules where it holds a
    character the terminal escapes (``\\u0085``, ``\\u2028``, a surrogate pair for one beyond U+FFFF), the
    rest as it is (UTF-8, Cyrillic readable), or with ``ascii_only`` every character beyond ASCII escaped.
    ``json.loads`` of it gives ``value`` back exactly; no number is ``NaN`` or infinite."""
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent, allow_nan=False)
    return text if ascii_only else _UNSAFE_IN_JSON.sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


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


def safe_cells(row: tuple[Any, ...] | list[Any]) -> list[Any]:
    """A CSV row with each cell as :func:`csv_cell` makes it."""
    return [csv_cell(value) for value in row]
