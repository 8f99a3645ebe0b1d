"""Strict JSON parsing and streamed JSONL lines (contract section 2).

Accepted: UTF-8 with or without a BOM, CRLF line ends, blank JSONL lines.
Rejected: invalid UTF-8, ``NaN``, ``Infinity``, numbers not representable as
a finite double (``1e999``, an integer of 400 digits), repeated object keys,
nesting deeper than the limit, unpaired surrogate escapes (``"\\ud800"``).

One error convention: :func:`parse_json` raises :class:`JsonError`, whose
``pos`` (when known) is the character offset of the offending value;
:func:`line_column` turns it into a place a person can find.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any

from scorer.errors import Issue

MAX_DEPTH = 64
#: No value in any message is quoted longer than this.
QUOTE_LIMIT = 60
_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_DIGITS = 309  # 10 ** 309 is beyond the largest double


class JsonError(ValueError):
    """A JSON text that is not valid here; ``pos`` is a character offset, when known."""

    def __init__(self, message: str, pos: int | None = None):
        super().__init__(message)
        self.message = message
        self.pos = pos


class _Reject(ValueError):
    """Raised by the decoder's hooks; becomes a JsonError."""


def shorten(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters for messages, unpaired surrogates escaped."""
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _number_text(text: str) -> str:
    digits = len(text.lstrip("-"))
    return shorten(text, 40) + (f" ({digits} digits)" if digits > 40 else "")


def _no_constant(name: str) -> Any:
    raise _Reject(f"{name} is not a valid JSON number here (use a finite number)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Reject(f"number {_number_text(text)} is too large (not a finite number)")
    return value


def _finite_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_DIGITS:
        raise _Reject(f"number {_number_text(text)} is too large (not a finite number)")
    value = int(text)
    try:
        float(value)
    except OverflowError:
        raise _Reject(f"number {_number_text(text)} is too large (not a finite number)") from None
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _Reject(f"key {shorten(key)!r} is repeated in one object")
        obj[key] = value
    return obj


DECODER = json.JSONDecoder(
    parse_constant=_no_constant,
    parse_float=_finite_float,
    parse_int=_finite_int,
    object_pairs_hook=_unique_keys,
)
#: :data:`DECODER` with numbers parsed by the C scanner alone (:func:`parse_float_lists`).
_C_NUMBERS = json.JSONDecoder(parse_constant=_no_constant, object_pairs_hook=_unique_keys)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_WS = re.compile(r"[ \t\r\n]*")


def skip_ws(text: str, pos: int) -> int:
    found = _WS.match(text, pos)
    return found.end() if found else pos


def decode_value(text: str, pos: int) -> tuple[Any, int]:
    """One JSON value starting at ``pos`` (after white space): (value, end). Raises JsonError."""
    try:
        return DECODER.raw_decode(text, pos)
    except _Reject as exc:
        raise JsonError(str(exc), pos) from None
    except RecursionError:
        raise JsonError("JSON nesting is too deep", pos) from None
    except json.JSONDecodeError as exc:
        raise JsonError(f"not valid JSON: {exc.msg}", exc.pos) from None
    except ValueError as exc:
        raise JsonError(f"not valid JSON: {shorten(str(exc), 100)}", pos) from None


def parse_json(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """Parse one JSON document strictly; raises :class:`JsonError`."""
    start = skip_ws(text, 0)
    value, end = decode_value(text, start)
    end = skip_ws(text, end)
    if end != len(text):
        raise JsonError("not valid JSON: extra data after the value", end)
    escaped = "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None  # a surrogate escape possible
    if (
        escaped or text.count("[") + text.count("{") > max_depth
    ):  # the raw text alone cannot show both checks pass
        # strings are checked only when one may hold a surrogate: the text has an escape of one, or one itself
        problem = _check_tree(value, max_depth, escaped or _SURROGATE.search(text) is not None)
        if problem:
            raise JsonError(problem, start)
    return value


def parse_float_lists(text: str, max_depth: int = MAX_DEPTH) -> dict[str, list[float | None]] | None:
    """What :func:`parse_json` gives of ``text`` when it is an object of lists whose items are all finite
    numbers written as floats, or null, with no ``\\u`` escape: the numbers parsed by the C scanner and
    their finiteness checked after, at C speed (:data:`DECODER` calls Python for each number). None for any
    other text (an integer, a non-finite number, an escape, anything else): :func:`parse_json` decides."""
    if max_depth < 2 or "\\u" in text:
        return None
    try:
        value, end = _C_NUMBERS.raw_decode(text, skip_ws(text, 0))
    except (ValueError, RecursionError):
        return None
    if skip_ws(text, end) != len(text) or type(value) is not dict:
        return None
    if not all(type(items) is list for items in value.values()):
        return None
    numbers = list(chain.from_iterable(value.values()))
    kinds = set(map(type, numbers))
    if not kinds <= {float, type(None)}:
        return None
    finite = numbers if type(None) not in kinds else [p for p in numbers if p is not None]
    return value if all(map(math.isfinite, finite)) else None


def _check_tree(value: Any, max_depth: int, strings: bool = True) -> str | None:
    """Depth and (with ``strings``) string checks over a parsed value, iteratively; a message or None.
    Without ``strings`` only the containers are visited: a list of 20,000 numbers is one step."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > max_depth:
                return f"JSON nesting is deeper than {max_depth} levels"
            if not strings:
                stack.extend(
                    (child, depth + 1)
                    for child in (item.values() if isinstance(item, dict) else item)
                    if type(child) is dict or type(child) is list
                )
                continue
            children = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in children:
                if isinstance(key, str) and _SURROGATE.search(key):
                    return "a key holds an unpaired surrogate escape (like \\ud800), which is not valid text"
                stack.append((child, depth + 1))
        elif isinstance(item, str) and _SURROGATE.search(item):
            return "a string holds an unpaired surrogate escape (like \\ud800), which is not valid text"
    return None


def line_column(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of character offset ``pos``."""
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


_NON_BLANK = re.compile(rb"[^ \t\r\n]")


_SLICE = 1 << 20
REPORT_BYTES = _SLICE


def _newlines(data: bytes, start: int, end: int) -> int:
    """How many ``\n`` in ``data[start:end]``, a memory map included (it has no ``count``), in 1 MiB
    slices."""
    return sum(data[k : min(k + _SLICE, end)].count(b"\n") for k in range(start, end, _SLICE))


def lines_from(data: bytes, pos: int) -> int:
    """How many lines ``data[pos:]`` holds (the last one without its newline included), at C speed."""
    size = len(data)
    if pos >= size:
        return 0
    return _newlines(data, pos, size) + (0 if data[size - 1 : size] == b"\n" else 1)


BOM = b"\xef\xbb\xbf"


def iter_lines(
    data: bytes,
    report: Callable[[int, int], None] | None = None,
    *,
    start: tuple[int, int, int] | None = None,
) -> Iterator[tuple[int, bytes, int]]:
    """Non-blank lines of JSONL ``data`` (bytes or a memory map): (1-based number, line, offset after it).

    A leading BOM and a line's final CR are removed. Runs of blank lines are
    skipped by one regular-expression search and their newlines counted 1 MiB
    at a time: padding costs neither memory nor a Python step per line. ``report(done,
    size)`` hears the bytes passed, every :data:`REPORT_BYTES` and at the end. ``start`` (offset, line
    number, offset of the next report) goes on from a line's start where :func:`plain_lines` stopped.
    """
    pos, line, next_report = start or (3 if data[:3] == BOM else 0, 1, REPORT_BYTES)
    size = len(data)
    next_report = next_report if report else size + 1
    while pos < size:
        if report and pos >= next_report:
            report(pos, size)
            next_report = pos + REPORT_BYTES
        found = _NON_BLANK.search(data, pos)
        if found is None:
            break
        first = found.start()
        before = data.rfind(b"\n", pos, first)
        if before >= 0:
            line += _newlines(data, pos, before + 1)
            pos = before + 1
        end = data.find(b"\n", first)
        if end < 0:
            end = size
        raw = data[pos:end]
        yield line, raw[:-1] if raw.endswith(b"\r") else raw, end + 1
        pos = end + 1
        line += 1
    if report:
        report(size, size)


#: The most brackets a line read a piece at a time may hold (one with more is read line by line, as is the
#: rest of the file): half Python's default recursion limit, so no line read here nests deep enough to reach
#: it.
_PLAIN_DEPTH = 500
#: A line of JSONL read: its 1-based number, its value and its text.
Row = tuple[int, Any, str]


def plain_lines(
    data: bytes, max_depth: int = MAX_DEPTH, report: Callable[[int, int], None] | None = None
) -> Iterator[tuple[int, int, str, list[Row], bool]]:
    """The lines of JSONL ``data`` parsed a piece at a time while they are plain: each piece, up to the first
    line start past the next report (:func:`iter_lines`' reports, at the same offsets), is valid UTF-8 with no
    CR, no blank line and no surrogate escape, and each of its lines is a JSON object alone that
    :func:`parse_json` accepts. Yields (offset after the piece, next report, the piece's text, its lines as
    (number, value, text), whether it holds a ``\\u`` escape); stops at the first piece that is not plain,
    which :func:`iter_lines` then reads from the offset and line number where this stopped (``start``), line
    by line, and reports the end. The same values, for about the cost of decoding the file
    (docs/performance.md)."""
    pos, line = (3 if data[:3] == BOM else 0), 1
    size = len(data)
    next_report = REPORT_BYTES
    while pos < size:
        end = data.find(b"\n", next_report - 1) if next_report <= size else -1
        cut = size if end < 0 else end + 1
        piece = _plain_piece(bytes(data[pos:cut]), max_depth, line)
        if piece is None:
            return
        text, rows, escaped = piece
        reached = cut < size  # a report's offset, said once the piece's lines are taken
        next_report = cut + REPORT_BYTES if reached else next_report
        pos, line = cut, line + len(rows)
        yield pos, next_report, text, rows, escaped
        if reached and report:
            report(cut, size)


def _plain_piece(raw: bytes, max_depth: int, first: int) -> tuple[str, list[Row], bool] | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    escaped = "\\u" in text  # looked for once: the caller's screen for runs of marks is told
    if "\r" in text or (escaped and _SURROGATE_ESCAPE.search(text) is not None):
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    rows: list[Row] = []
    # what parse_json does of each line, on the piece's text in place (the decoder's scanner is public, not in
    # typeshed)
    scan, pos = DECODER.scan_once, 0  # type: ignore[attr-defined]
    for number, line in enumerate(lines, first):
        if not line.startswith("{"):  # blank, or white space first, or not an object: line by line
            return None
        stop = pos + len(line)
        brackets = text.count("[", pos, stop) + text.count("{", pos, stop)
        if brackets > _PLAIN_DEPTH:  # deep enough for the recursion limit to matter: line by line, where the
            return None  # scanner meets it at the depth it always has (it runs a few frames shallower here)
        try:
            value, end = scan(text, pos)
        except (StopIteration, ValueError, RecursionError):
            return None
        if end != stop:  # white space or more after the value: line by line
            return None
        if brackets > max_depth and _check_tree(value, max_depth, _SURROGATE.search(line) is not None):
            return None  # its raw text cannot show the depth within bounds (no surrogate escape in the piece)
        rows.append((number, value, line))
        pos = stop + 1
    return text, rows, escaped


_DIALOG_ID = re.compile(r'"dialog_id"\s*:\s*("(?:[^"\\\n]|\\.){1,2000}")')
#: The same in a line written as a Python dict (``str()`` of a dict: single quotes).
_PYTHON_DIALOG_ID = re.compile(r"'dialog_id'\s*:\s*'([^'\\\n]{1,2000})'")


def looks_like_python(text: str) -> bool:
    """Whether a line that is not JSON looks like a Python dict written with ``str()`` (single quotes)."""
    return bool(re.match(r"\s*\{\s*'", text))


def guess_dialog_id(text: str) -> str | None:
    """The dialog_id of a line that is not valid JSON, when it can still be read off the text."""
    found = _DIALOG_ID.search(text[:10_000])
    if not found:
        single = _PYTHON_DIALOG_ID.search(text[:10_000])
        value = single.group(1) if single else None
        return value if value and not _SURROGATE.search(value) else None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str) and value and not _SURROGATE.search(value) else None


def looks_like(raw: bytes) -> str:
    """A guess at the encoding of bytes that are not UTF-8, for the message."""
    for name, label in (("utf-16", "UTF-16"), ("cp1251", "Windows-1251 (cp1251)"), ("koi8_r", "KOI8-R")):
        try:
            text = raw.decode(name)
        except UnicodeDecodeError:
            continue
        if name == "utf-16" and not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
            continue
        if any("\u0400" <= ch <= "\u04ff" for ch in text):
            return f"; it looks like {label} text"
    return ""


def not_utf8(file: str, data: bytes, exc: UnicodeDecodeError, first_line: int = 1) -> Issue:
    """The one message for a file that is not UTF-8: the bad byte's line and column, and a guess at the
    encoding it is in; ``data`` is the whole file, or one line of it (``first_line``: that line's number)."""
    line = first_line + data.count(b"\n", 0, exc.start)
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    return Issue(
        file,
        f"the file is not valid UTF-8 (bad byte at line {line}, column {column}){looks_like(data)}; "
        "save it as UTF-8",
        "not_utf8",
        line=line,
        column=column,
    )
