"""word_split, the compiled engine's tokeniser for texts in its alphabet, against the definition
(scorer.metric.text.tokenise): every code point, every pair of the alphabet, in several contexts."""
from __future__ import annotations

import sys

import pytest

from scorer.metric.engine import accelerator, word_split
from scorer.metric.text import tokenise
from scorer.metric.tokeniser import tokeniser

ALPHABET = [chr(c) for c in range(0x110000) if word_split.in_alphabet(c)]
CONTEXTS = ["{}", "а{}б", "Z{}z", " {} ", "{}ё", "Ё{}", "{}{}", "x_{}-1"]


def splitters():
    found = [pytest.param(word_split.split_words, id="pure")]
    if accelerator.compiled():
        found.append(pytest.param(accelerator._built()[0]["word_split"].split_words, id="compiled"))
    return found


def test_the_alphabet_is_what_the_docstring_says():
    assert len(ALPHABET) == 128 + 96 + 9
    assert {"а", "я", "Ё", "ё", "«", "»", "—", "–", "„"} <= set(ALPHABET)
    assert not {"\u0300", "\u0306", "\u00a0", "№", "\u212a", "\u0130", "ʼ"} & set(ALPHABET)


@pytest.mark.parametrize("split_words", splitters())
def test_every_character_of_the_alphabet_in_every_context(split_words):
    for ch in ALPHABET:
        for context in CONTEXTS:
            text = context.format(ch, ch)
            assert split_words(text) == tokenise(text), (hex(ord(ch)), context)


@pytest.mark.parametrize("split_words", splitters())
def test_every_pair_of_the_alphabet(split_words):
    for a in ALPHABET:
        for b in ALPHABET:
            for text in (a + b, f"я{a}{b}Z"):
                assert split_words(text) == tokenise(text), (hex(ord(a)), hex(ord(b)))


@pytest.mark.parametrize("split_words", splitters())
def test_every_other_code_point_goes_to_the_definition(split_words):
    step = 1 if split_words is not word_split.split_words else 7  # the pure module is slower: a sample
    for c in range(0, sys.maxunicode + 1, step):
        ch = chr(c)
        if ch in ALPHABET:
            assert split_words(f"кот{ch}Пёс") == tokenise(f"кот{ch}Пёс"), hex(c)
        else:
            assert split_words(f"кот{ch}Пёс") is None and split_words(ch) is None, hex(c)


@pytest.mark.parametrize("split_words", splitters())
def test_sentences(split_words):
    assert split_words("Ёжик в тумане, 2024_год!") == ["ежик", "в", "тумане", "2024_год"]
    assert split_words("«Привет», — сказал он…") is None  # the ellipsis: NFKC makes it three dots
    assert split_words("") == [] and split_words("— «»") == []
    assert split_words("ПЁС\tи\nКОТ") == ["пес", "и", "кот"]


def test_the_tokeniser_of_the_active_engine_is_the_definition_on_every_text():
    tokenise_fast = tokeniser()
    for text in ["Кот спит.", "«Привет»… №5", "e\u0301té", "İstanbul ΣΑΣ", "ПЁС и кот"]:
        assert tokenise_fast(text) == tokenise(text)


def test_no_character_of_the_alphabet_is_a_combining_mark_or_beyond_the_bmp():
    """What lets ``all_in_alphabet`` pass a line without searching it for a run of marks."""
    from scorer.metric.nonstarters import _is_mark

    assert not [hex(ord(ch)) for ch in ALPHABET if _is_mark(ch) or ord(ch) > 0xFFFF]


@pytest.mark.parametrize("module", [pytest.param(word_split, id="pure")] + (
    [pytest.param("compiled", id="compiled")] if accelerator.compiled() else []))
def test_all_in_alphabet_on_every_code_point_in_context(module):
    check = (accelerator._built()[0]["word_split"] if module == "compiled" else module).all_in_alphabet
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        ch = chr(c)
        assert check("аб" + ch + "z") is word_split.in_alphabet(c), hex(c)
    assert check("") is True


def test_the_screen_of_mark_runs_agrees_with_the_search():
    from scorer.metric.nonstarters import mark_run_screen, may_hold_mark_run

    screen = mark_run_screen()
    assert (screen is may_hold_mark_run) is not accelerator.active()
    run = "\u0301" * 31
    for text in ['{"a": ["Кот «рыжий» — да"]}', '{"a": ["x' + run + '"]}', '{"a": ["x\\u0301' + "\u0301" * 30 + '"]}',
                 '{"a": ["x\\\\u0301"]}', '{"a": ["\U0001F600' + "\u0301" * 30 + '"]}', '{"a": ["' + "\u0301" * 30 + '"]}']:
        assert screen(text) == may_hold_mark_run(text), text
