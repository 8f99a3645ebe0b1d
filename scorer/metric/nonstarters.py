"""Runs of combining marks: the bound that keeps normalisation linear (contract section 3, bounded work).

NFKC puts every run of combining marks (non-starters, canonical combining
class above 0) into canonical order with an insertion sort, so its time
grows with the square of a run's length: one answer of ``а`` and 19,999
marks of alternating classes costs half a second. Unicode's Stream-Safe
Text Format bounds a run at 30 marks, and so does the scorer: a text whose
run of combining marks is longer than :data:`MAX_COMBINING_RUN` is refused
where it enters (an invalid answer, an invalid reference, a usage error for
``explain``), before it is ever normalised. Texts within the bound are
normalised exactly as contract section 4 says, unchanged.

A character counts as a mark here when its combining class is above 0 or its
compatibility decomposition begins with such a character (U+0344, U+0F73):
both extend a run once decomposed. The table is generated for the Unicode
version of the Python it ships for (:mod:`scorer.metric.unicode_table`); under
another version it is computed at first use.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from . import unicode_table

MAX_COMBINING_RUN = 30


def unicode_version() -> str:
    return unicodedata.unidata_version


def _is_mark(ch: str) -> bool:
    if unicodedata.combining(ch):
        return True
    decomposed = unicodedata.normalize("NFKD", ch)
    return decomposed != ch and bool(unicodedata.combining(decomposed[0]))


def computed_ranges() -> list[tuple[int, int]]:
    """Inclusive ranges of the code points :func:`_is_mark` accepts, under this Python's Unicode."""
    ranges: list[tuple[int, int]] = []
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF or not _is_mark(chr(code)):
            continue
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    return ranges


def _mark_class(astral: bool) -> str:
    """The character class of a mark: in the Basic Multilingual Plane only (a fast bitmap class), or any."""
    ranges = (
        unicode_table.NON_STARTER_RANGES
        if unicode_table.UNICODE_VERSION == unicode_version()
        else computed_ranges()
    )
    if astral:
        return "[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges) + "]"
    return "[" + "".join(f"\\u{a:04x}-\\u{min(b, 0xFFFF):04x}" for a, b in ranges if a <= 0xFFFF) + "]"


@lru_cache(maxsize=2)
def _run_pattern(astral: bool) -> re.Pattern[str]:
    """A run of more than :data:`MAX_COMBINING_RUN` marks (see :func:`_mark_class`)."""
    return re.compile(f"{_mark_class(astral)}{{{MAX_COMBINING_RUN + 1},}}")


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def long_mark_run(text: str) -> tuple[int, int] | None:
    """(0-based start, length) of the first run of more than :data:`MAX_COMBINING_RUN` combining marks in
    ``text``, or None. Text without characters beyond U+FFFF is searched with the faster pattern."""
    found = _run_pattern(_ASTRAL.search(text) is not None).search(text)
    return None if found is None else (found.start(), found.end() - found.start())


@lru_cache(maxsize=2)
def _mark_pattern(astral: bool) -> re.Pattern[str]:
    """One mark (see :func:`_mark_class`)."""
    return re.compile(_mark_class(astral))


def may_hold_mark_run(json_text: str, escaped: bool | None = None) -> bool:
    """False when no string of the JSON text ``json_text`` can hold a run :func:`long_mark_run` finds: the
    text has no ``\\u`` escape (each string is then a piece of it, verbatim) and no such run itself.
    ``escaped``: whether the text holds a ``\\u``, when the caller knows (None: it is searched for).

    A run of more than :data:`MAX_COMBINING_RUN` marks covers one character in every
    ``MAX_COMBINING_RUN + 1``, so those characters are looked at first: a text without a mark among them
    holds no run, and only a text with one is searched whole."""
    if ("\\u" in json_text) if escaped is None else escaped:
        return True
    sample = json_text[:: MAX_COMBINING_RUN + 1]
    # a sample without a character beyond U+FFFF is searched with the Basic Multilingual Plane's bitmap class
    # (0.2 ms a MiB of text, against 5 ms for the class of every plane)
    mark = _mark_pattern(_ASTRAL.search(sample) is not None).search(sample)
    return mark is not None and long_mark_run(json_text) is not None


def mark_run_message(run: tuple[int, int]) -> str:
    """What a participant reads about a run found by :func:`long_mark_run`."""
    start, length = run
    return (
        f"the text holds {length:,} combining marks in a row from character {start + 1:,}; at most "
        f"{MAX_COMBINING_RUN} in a row are accepted (Unicode's stream-safe limit)"
    )
