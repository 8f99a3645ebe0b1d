# cython: boundscheck=False, wraparound=False
"""The tokeniser on the alphabet nearly every Russian text is written in: the compiled engine's helper.

:func:`scorer.metric.text.tokenise` defines tokenisation (NFKC, ``str.lower()``, ``ё`` -> ``е``, then
the runs of ``\\w``). On texts made only of :func:`in_alphabet`'s characters (ASCII, the basic Cyrillic
block U+0400-U+045F and the quotation marks and dashes of Russian typography) every step is simpler:
NFKC leaves each of them as it is and no two of them compose; ``lower()`` maps each to one character of
the alphabet; ``\\w`` holds exactly the digits, the Latin letters, ``_`` and the Cyrillic letters.
:meth:`WordSplitter.split` does that in one pass, ``lower()`` fused into it (:func:`lower_code`), and
answers None for any other text, which the caller sends to the definition. It makes each distinct
token once, looking the tokens it has seen up by a hash of their code points.

It is plain Python, run as such by the tests, which check it against the definition on every character
of the alphabet and every pair of them, in several contexts, and the splitter's table on collisions and
growth (``tests/test_word_split.py``); ``setup.py``
compiles this same file, typed by ``word_split.pxd`` (Cython's pure-Python mode), and CI checks that
both engines write byte-identical outputs on the WMT21 benchmark.
"""

from __future__ import annotations

from array import array
from sys import intern

#: FNV-1a, 64 bits, over a token's code points: where :class:`WordSplitter` looks a token up.
_FNV_OFFSET = 14695981039346656037
_FNV_PRIME = 1099511628211
_MASK64 = 0xFFFFFFFFFFFFFFFF


def in_alphabet(c: int) -> bool:
    """Whether the code point ``c`` is in the alphabet :class:`WordSplitter` handles."""
    return (
        c < 0x80
        or 0x400 <= c <= 0x45F
        or c == 0xAB
        or c == 0xBB
        or c == 0x2013
        or c == 0x2014
        or c == 0x2018
        or c == 0x2019
        or c == 0x201C
        or c == 0x201D
        or c == 0x201E
    )


def is_word(c: int) -> bool:
    """Whether the code point ``c`` of the alphabet, lower-cased, is a ``\\w`` character."""
    return 0x30 <= c <= 0x39 or 0x61 <= c <= 0x7A or c == 0x5F or 0x400 <= c <= 0x45F


def lower_code(c: int) -> int:
    """The code point of ``chr(c).lower()``, ``ё`` made ``е``, for the code point ``c`` of the alphabet."""
    if 0x41 <= c <= 0x5A or 0x410 <= c <= 0x42F:
        return c + 32
    if c == 0x401 or c == 0x451:
        return 0x435
    if 0x400 <= c <= 0x40F:
        return c + 80
    return c


def all_in_alphabet(text: str) -> bool:
    """Whether every character of ``text`` is in the alphabet (none is then a combining mark, nor beyond
    U+FFFF: :func:`scorer.metric.nonstarters.mark_run_screen` asks, and :class:`WordSplitter`)."""
    for ch in text:
        if not in_alphabet(ord(ch)):
            return False
    return True


class WordSplitter:
    """The tokeniser on the alphabet, which makes each distinct token once: a token seen before is
    returned as the same ``str`` object, found from the text's own code points (no string is made to
    look it up).

    ``types`` holds the distinct tokens in order of first sight, interned (``sys.intern``). Sharing
    them saves memory and time: sets and dictionaries see one object a type, its hash computed once,
    and the caches written with ``marshal`` (references, token table) load them back interned, as the
    same objects.
    """

    def __init__(self) -> None:
        self.types: list[str] = []
        self.slots = array("i", bytes(4 * 4096))  # 1 + the index in ``types`` of the token there; 0: free
        self.hashes = array("Q", bytes(8 * 4096))
        self.mask = 4095

    def split(self, text: str) -> list[str] | None:
        """``tokenise(text)`` when every character of ``text`` is in the alphabet, else None."""
        if not all_in_alphabet(text):
            return None
        tokens: list[str] = []
        start = -1
        h = 0
        i = 0
        for ch in text:
            c = lower_code(ord(ch))
            if is_word(c):
                if start < 0:
                    start = i
                    h = _FNV_OFFSET
                h = ((h ^ c) * _FNV_PRIME) & _MASK64
            elif start >= 0:
                tokens.append(self._token(text, start, i, h))
                start = -1
            i += 1
        if start >= 0:
            tokens.append(self._token(text, start, i, h))
        return tokens

    def _token(self, text: str, start: int, end: int, h: int) -> str:
        """The token ``text[start:end]`` lower-cased (``h``: its hash), made only if not seen before."""
        slot = _home(h, self.mask)
        while self.slots[slot]:
            if self.hashes[slot] == h:
                token = self.types[self.slots[slot] - 1]
                if _same(token, text, start, end):
                    return token
            slot = (slot + 1) & self.mask
        token = intern(text[start:end].lower().replace("ё", "е"))  # one character of the alphabet for one
        self.types.append(token)
        self.slots[slot] = len(self.types)
        self.hashes[slot] = h
        if 2 * len(self.types) > self.mask:
            self._grow()
        return token

    def _grow(self) -> None:
        """Twice the slots, every token placed again by its hash."""
        size = 2 * (self.mask + 1)
        slots, hashes = array("i", bytes(4 * size)), array("Q", bytes(8 * size))
        mask = size - 1
        for old in range(self.mask + 1):
            t = self.slots[old]
            if t:
                h = self.hashes[old]
                slot = _home(h, mask)
                while slots[slot]:
                    slot = (slot + 1) & mask
                slots[slot] = t
                hashes[slot] = h
        self.slots, self.hashes, self.mask = slots, hashes, mask


def _home(h: int, mask: int) -> int:
    """The first slot a token of hash ``h`` is looked for in, in a table of ``mask + 1`` slots."""
    return (h ^ (h >> 32)) & mask


def _same(token: str, text: str, start: int, end: int) -> bool:
    """Whether ``token`` is ``text[start:end]`` lower-cased (``ё`` made ``е``), the text in the alphabet."""
    if len(token) != end - start:
        return False
    k = 0
    for i in range(start, end):
        if lower_code(ord(text[i])) != ord(token[k]):
            return False
        k += 1
    return True
