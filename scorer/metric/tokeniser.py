"""The tokeniser a run uses: the definition, with the compiled engine's ``word_split`` in front of it.

:func:`scorer.metric.text.tokenise` defines tokenisation; when the compiled engine is active,
:mod:`scorer.metric.engine.word_split` answers for texts written in its alphabet (nearly every
Russian text) in one pass, and leaves every other text to the definition. Both give the same tokens:
``tests/test_word_split.py`` checks every code point and every pair of the alphabet.
"""
from __future__ import annotations

from typing import Callable

from .engine.accelerator import active, compiled_module
from .text import tokenise


def tokeniser() -> Callable[[str], list[str]]:
    """:func:`scorer.metric.text.tokenise`; when the compiled engine is active, through the
    compiled ``word_split`` first, which answers for texts in its alphabet and leaves the others to it."""
    if not active():
        return tokenise
    split_words = compiled_module("word_split").split_words

    def tokenise_split(text: str) -> list[str]:
        found = split_words(text)
        return tokenise(text) if found is None else found

    return tokenise_split
