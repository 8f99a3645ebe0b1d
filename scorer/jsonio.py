"""Strict reading of JSON and JSONL bytes (SPEC section 2).

Accepted: UTF-8 with or without a BOM, CRLF line ends, blank JSONL lines.
Rejected with an :class:`~scorer.errors.Issue`: invalid UTF-8, ``NaN``,
``Infinity``, numbers that overflow to infinity, repeated object keys,
nesting deeper than the limit, unpaired surrogate escapes (``"\\ud800"``).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Iterator

from .errors import Issue

MAX_DEPTH = 64
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Reject(ValueError):
    """A JSON text that parses but breaks the strict rules."""


def _no_constant(name: str) -> Any:
    raise _Reject(f"{name} is not a valid JSON number here (use a finite number)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Reject(f"number {text[:40]} is too large (not a finite number)")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _Reject(f"key {shorten(key)!r} is repeated in one object")
        obj[key] = value
    return obj


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float,
                            object_pairs_hook=_unique_keys)


def shorten(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters for messages, unpaired surrogates escaped."""
    text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _check_tree(value: Any, max_depth: int) -> str | None:
    """Depth and string checks over a parsed value, iteratively; a message or None."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > max_depth:
                return f"JSON nesting is deeper than {max_depth} levels"
            children = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in children:
                if isinstance(key, str) and _SURROGATE.search(key):
                    return "a key holds an unpaired surrogate escape (like \\ud800), which is not valid text"
                stack.append((child, depth + 1))
        elif isinstance(item, str) and _SURROGATE.search(item):
            return "a string holds an unpaired surrogate escape (like \\ud800), which is not valid text"
    return None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _surely_fine(text: str, max_depth: int) -> bool:
    """True when the raw text alone shows the depth and surrogate checks cannot fail.

    Decoded UTF-8 holds no surrogates, so one can only come from a ``\\uD8..``
    escape; and a value cannot nest deeper than its count of opening brackets.
    """
    return (text.count("[") + text.count("{") <= max_depth) and not _SURROGATE_ESCAPE.search(text)


def parse_json(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """Parse one JSON document strictly; raises ``ValueError`` with a readable message."""
    try:
        value, end = _DECODER.raw_decode(text, _skip_ws(text, 0))
    except _Reject as exc:
        raise ValueError(str(exc)) from None
    except RecursionError:
        raise ValueError(f"JSON nesting is deeper than {max_depth} levels") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except ValueError as exc:  # e.g. integers beyond Python's digit limit
        raise ValueError(f"not valid JSON: {exc}") from None
    if _skip_ws(text, end) != len(text):
        raise ValueError(f"not valid JSON: extra data after the value (column {end + 1})")
    problem = None if _surely_fine(text, max_depth) else _check_tree(value, max_depth)
    if problem:
        raise ValueError(problem)
    return value


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def decode_utf8(data: bytes, file: str) -> tuple[str | None, Issue | None]:
    """Decode a whole file, dropping one leading BOM."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return None, Issue(file, f"the file is not valid UTF-8 (bad byte at offset {exc.start}, "
                                 f"line {line}); save it as UTF-8", "not_utf8", line=line)


_DIALOG_ID = re.compile(r'"dialog_id"\s*:\s*("(?:[^"\\\n]|\\.){1,2000}")')


def _guess_dialog_id(text: str) -> str | None:
    """The dialog_id of a line that is not valid JSON, when it can still be read off the text."""
    found = _DIALOG_ID.search(text[:10_000])
    if not found:
        return None
    try:
        value = json.loads(found.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str) and value and not _SURROGATE.search(value) else None


@dataclass(frozen=True)
class JsonLine:
    line: int
    value: Any


def read_jsonl(data: bytes, file: str, max_depth: int = MAX_DEPTH) -> Iterator[JsonLine | Issue]:
    """Yield each non-blank line's value, or an Issue for a line that is not valid JSON."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw.strip(b" \t"):
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield Issue(file, f"the line is not valid UTF-8 (bad byte at column {exc.start + 1}); "
                              "save the file as UTF-8", "not_utf8", line=number)
            continue
        try:
            yield JsonLine(number, parse_json(text, max_depth))
        except ValueError as exc:
            yield Issue(file, str(exc), "bad_json", line=number, dialog_id=_guess_dialog_id(text))


def read_json(data: bytes, file: str, max_depth: int = MAX_DEPTH) -> tuple[Any, Issue | None]:
    """Parse a whole JSON file; returns (value, None) or (None, Issue)."""
    text, issue = decode_utf8(data, file)
    if issue:
        return None, issue
    try:
        return parse_json(text, max_depth), None
    except ValueError as exc:
        return None, Issue(file, str(exc), "bad_json")
