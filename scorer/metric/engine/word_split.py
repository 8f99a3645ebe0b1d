# cython: boundscheck=False, wraparound=False
"""The tokeniser on the alphabet nearly every Russian text is written in: the compiled engine's helper.

:func:`scorer.metric.text.tokenise` defines tokenisation (NFKC, ``str.lower()``, ``ё`` -> ``е``, then
the runs of ``\\w``). On texts made only of :func:`in_alphabet`'s characters (ASCII, the basic Cyrillic
block U+0400-U+045F and the quotation marks and dashes of Russian typography) every step is simpler:
NFKC leaves each of them as it is and no two of them compose; ``lower()`` maps each to one character of
the alphabet; ``\\w`` holds exactly the digits, the Latin letters, ``_`` and the Cyrillic letters.
:func:`split_words` does that in one pass and answers None for any other text, which the caller sends
to the definition.

It is plain Python, run as such by the tests, which check it against the definition on every character
of the alphabet and every pair of them, in several contexts (``tests/test_word_split.py``); ``setup.py``
compiles this same file, typed by ``word_split.pxd`` (Cython's pure-Python mode), and CI checks that
both engines write byte-identical outputs on the WMT21 benchmark.
"""
from __future__ import annotations


def in_alphabet(c: int) -> bool:
    """Whether the code point ``c`` is in the alphabet :func:`split_words` handles."""
    return (c < 0x80 or 0x400 <= c <= 0x45F or c == 0xAB or c == 0xBB or c == 0x2013 or c == 0x2014
            or c == 0x2018 or c == 0x2019 or c == 0x201C or c == 0x201D or c == 0x201E)


def is_word(c: int) -> bool:
    """Whether the code point ``c`` of the alphabet, lower-cased, is a ``\\w`` character."""
    return 0x30 <= c <= 0x39 or 0x61 <= c <= 0x7A or c == 0x5F or 0x400 <= c <= 0x45F


def all_in_alphabet(text: str) -> bool:
    """Whether every character of ``text`` is in the alphabet (none is then a combining mark, nor beyond
    U+FFFF: :func:`scorer.metric.nonstarters.mark_run_screen` asks, and :func:`split_words`)."""
    for ch in text:
        if not in_alphabet(ord(ch)):
            return False
    return True


def split_words(text: str) -> list[str] | None:
    """``tokenise(text)`` when every character of ``text`` is in the alphabet, else None."""
    if not all_in_alphabet(text):
        return None
    low = text.lower().replace("ё", "е")  # one character of the alphabet for one: positions do not move
    tokens: list[str] = []
    start = -1
    i = 0
    for ch in low:
        if is_word(ord(ch)):
            if start < 0:
                start = i
        elif start >= 0:
            tokens.append(low[start:i])
            start = -1
        i += 1
    if start >= 0:
        tokens.append(low[start:i])
    return tokens
