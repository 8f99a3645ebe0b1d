"""Contract section 4, text normalisation and tokens: NFKC, ``str.lower()``, ``ё`` -> ``е``; the tokens are
``re.findall(r"\\w+", ...)`` of the normalised text."""

from scorer.metric.text import normalise, tokenise


def test_normalise_nfkc_lower_yo():
    assert normalise("ЁЖИК ёлка") == "ежик елка"
    assert normalise("ﬁ２") == "fi2"  # NFKC folds ligatures and full-width digits
    assert normalise("е\u0308") == "е"  # decomposed ё composes under NFKC, then becomes е


def test_tokens_are_word_runs():
    assert tokenise("Санкт-Петербург, 2024 г.!") == ["санкт", "петербург", "2024", "г"]
    assert tokenise("«Кот» — рыжий…") == ["кот", "рыжий"]
    assert tokenise("snake_case") == ["snake_case"]
    assert tokenise("  ?!  ") == []
