"""The tokeniser a run uses: the definition, with the compiled engine's ``word_split`` in front of it.

:func:`scorer.metric.text.tokenise` defines tokenisation; when the compiled engine is active,
:mod:`scorer.metric.engine.word_split` answers for texts written in its alphabet (nearly every
Russian text) in one pass, and leaves every other text to the definition. Both give the same tokens:
``tests/test_word_split.py`` checks every code point and every pair of the alphabet. Each tokeniser
made by :func:`tokeniser` makes every distinct token it answers for once (``WordSplitter``): the texts
it tokenises share one string object a type.
"""

from __future__ import annotations

from collections.abc import Callable

from .engine.accelerator import active, compiled_module
from .text import tokenise


def tokeniser() -> Callable[[str], list[str]]:
    """:func:`scorer.metric.text.tokenise`; when the compiled engine is active, a new tokeniser that
    goes through a compiled ``WordSplitter`` first, which answers for texts in its alphabet (a token
    it has seen returned as the same object) and leaves the others to the definition."""
    if not active():
        return tokenise
    split = compiled_module("word_split").WordSplitter().split

    def tokenise_split(text: str) -> list[str]:
        found = split(text)
        return tokenise(text) if found is None else found

    return tokenise_split
