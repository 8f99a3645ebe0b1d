"""Text normalisation and tokenisation (contract section 4).

normalise: Unicode NFKC, ``str.lower()``, ``ё`` -> ``е``.
tokenise:  ``re.findall(r"\\w+", normalise(text))``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

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


def words_of(token_lists: Iterable[Sequence[str]]) -> set[str]:
    """Every word of ``token_lists``, each list taken once: a text several turns share is one list (the
    references' tokens, ``scorer.inputs.reference.Tokenised``), whose words are gathered once."""
    distinct = {id(tokens): tokens for tokens in token_lists}
    return set().union(*distinct.values())
