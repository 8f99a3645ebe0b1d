"""word_split, the compiled engine's tokeniser for texts in its alphabet, against the definition
(scorer.metric.text.tokenise): every code point, every pair of the alphabet, in several contexts; its
table of the tokens it has seen, on collisions and growth."""

from __future__ import annotations

import sys

import pytest

from scorer.metric.engine import accelerator, word_split
from scorer.metric.text import tokenise
from scorer.metric.tokeniser import tokeniser

ALPHABET = [chr(c) for c in range(0x110000) if word_split.in_alphabet(c)]
CONTEXTS = ["{}", "а{}б", "Z{}z", " {} ", "{}ё", "Ё{}", "{}{}", "x_{}-1"]


def modules():
    """The module, pure and (when built) compiled."""
    return [pytest.param(word_split, id="pure")] + (
        [pytest.param(accelerator._built()[0]["word_split"], id="compiled")] if accelerator.compiled() else []
    )


def splitters():
    """A ``WordSplitter``'s ``split`` kept for the whole test (tokens it has seen are then looked up, not
    made) and a new splitter for each text, pure and compiled."""
    found = []
    for module in modules():
        m, name = module.values[0], module.id
        found += [
            pytest.param(m.WordSplitter().split, id=name),
            pytest.param(lambda text, m=m: m.WordSplitter().split(text), id=f"{name}-new"),
        ]
    return found


SPLITTERS = splitters()
COMPILED_SPLITS = [p.values[0] for p in SPLITTERS if p.id == "compiled"]


def test_the_alphabet_is_what_the_docstring_says():
    assert len(ALPHABET) == 128 + 96 + 9
    assert {"а", "я", "Ё", "ё", "«", "»", "—", "–", "„"} <= set(ALPHABET)
    assert not {"\u0300", "\u0306", "\u00a0", "№", "\u212a", "\u0130", "ʼ"} & set(ALPHABET)


@pytest.mark.parametrize("split_words", SPLITTERS)
def test_every_character_of_the_alphabet_in_every_context(split_words):
    for ch in ALPHABET:
        for context in CONTEXTS:
            text = context.format(ch, ch)
            assert split_words(text) == tokenise(text), (hex(ord(ch)), context)


@pytest.mark.parametrize("split_words", SPLITTERS)
def test_every_pair_of_the_alphabet(split_words):
    for a in ALPHABET:
        for b in ALPHABET:
            for text in (a + b, f"я{a}{b}Z"):
                assert split_words(text) == tokenise(text), (hex(ord(a)), hex(ord(b)))


@pytest.mark.parametrize("split_words", SPLITTERS)
def test_every_other_code_point_goes_to_the_definition(split_words):
    step = 1 if split_words in COMPILED_SPLITS else 7  # a sample where each text costs more
    for c in range(0, sys.maxunicode + 1, step):
        ch = chr(c)
        if ch in ALPHABET:
            assert split_words(f"кот{ch}Пёс") == tokenise(f"кот{ch}Пёс"), hex(c)
        else:
            assert split_words(f"кот{ch}Пёс") is None and split_words(ch) is None, hex(c)


@pytest.mark.parametrize("split_words", SPLITTERS)
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


@pytest.mark.parametrize(
    "module",
    [pytest.param(word_split, id="pure")]
    + ([pytest.param("compiled", id="compiled")] if accelerator.compiled() else []),
)
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
    for text in [
        '{"a": ["Кот «рыжий» — да"]}',
        '{"a": ["x' + run + '"]}',
        '{"a": ["x\\u0301' + "\u0301" * 30 + '"]}',
        '{"a": ["x\\\\u0301"]}',
        '{"a": ["\U0001f600' + "\u0301" * 30 + '"]}',
        '{"a": ["' + "\u0301" * 30 + '"]}',
    ]:
        assert screen(text) == may_hold_mark_run(text), text


def test_lower_code_is_lower_with_yo_made_ye_on_the_alphabet():
    for ch in ALPHABET:
        assert chr(word_split.lower_code(ord(ch))) == ch.lower().replace("ё", "е"), hex(ord(ch))


@pytest.mark.parametrize("module", modules())
def test_the_splitter_makes_each_token_once(module):
    splitter = module.WordSplitter()
    first = splitter.split("Кот и КОТ, кот; и пёс")
    assert first == ["кот", "и", "кот", "кот", "и", "пес"]
    assert first[0] is first[2] is first[3] and first[1] is first[4]
    assert first[0] is sys.intern("".join(["ко", "т"]))  # interned: marshal keeps it so
    second = splitter.split("ПЁС  кот")
    assert second == ["пес", "кот"] and second[0] is first[5] and second[1] is first[0]
    assert splitter.types == ["кот", "и", "пес"]
    assert splitter.split("кот\u0301") is None and splitter.types == [
        "кот",
        "и",
        "пес",
    ]  # left to the definition
    assert splitter.split("") == [] and splitter.split("—«»") == []


@pytest.mark.parametrize("module", modules())
def test_the_splitter_grows_and_keeps_every_token(module):
    splitter = module.WordSplitter()
    words = [f"слово{n}x" for n in range(20_000)]
    text = " ".join(words)
    assert splitter.split(text) == words
    again = splitter.split(text.upper())
    assert again == words and all(a is b for a, b in zip(again, splitter.types))
    assert len(splitter.types) == len(words)


def test_tokens_that_share_a_hash_are_told_apart(monkeypatch):
    """Every token gets the same hash (the pure module's prime made 0): each is found by its characters."""
    monkeypatch.setattr(word_split, "_FNV_PRIME", 0)
    splitter = word_split.WordSplitter()
    words = ["кот", "кто", "ток", "к", "ко", "котт", "кoт"]  # the last has a Latin o
    assert splitter.split(" ".join(words)) == words
    assert splitter.split(" ".join(reversed(words))) == list(reversed(words))
    assert splitter.types == words
