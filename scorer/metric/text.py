"""Text normalisation and tokenisation (contract section 4).

normalise: Unicode NFKC, ``str.lower()``, ``ё`` -> ``е``.
tokenise:  ``re.findall(r"\\w+", normalise(text))``.
"""

from __future__ import annotations

import re
import unicodedata

TOKENISER_ID = "nfkc.lower.yo.w+"

_WORD = re.compile(r"\w+")


def normalise(text: str) -> str:
    """Return ``text`` in the form every comparison is made on."""
    return unicodedata.normalize("NFKC", text).lower().replace("ё", "е")


def tokenise(text: str) -> list[str]:
    """Return the word tokens of ``text`` after normalisation."""
    return _WORD.findall(normalise(text))


def has_token(text: str) -> bool:
    """Whether ``tokenise(text)`` is non-empty, without building the list."""
    return _WORD.search(normalise(text)) is not None
