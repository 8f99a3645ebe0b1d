"""The persistent token cache: warm runs skip pymorphy3, bad files are rebuilt, saves merge and stay
bounded."""

import marshal

import pytest

from scorer.metric import morphology, token_cache
from scorer.metric.cache import seal
from scorer.metric.matcher import Matcher
from scorer.metric.meteor import MeteorParams, meteor_tokens


def fresh(rwn) -> Matcher:
    return Matcher(rwn)


def test_a_warm_matcher_needs_no_morphology(rwn, tmp_path, monkeypatch):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path))
    first = fresh(rwn)
    assert meteor_tokens(["лечу", "мчаться"], ["лететь", "лечить"], first).score == 1.0
    first.save()
    files = list(tmp_path.glob("tokens-*.marshal"))
    assert len(files) == 1

    def no_parsing(token):
        raise AssertionError(f"pymorphy3 asked for {token!r}")

    # what the lemma stage asks (scorer/metric/stages.py)
    monkeypatch.setattr(morphology, "analyse", no_parsing)
    warm = fresh(rwn)
    assert warm.lemmas["лечу"] == frozenset({"лететь", "лечить"})
    assert meteor_tokens(["лечу", "мчаться"], ["лететь", "лечить"], warm).score == 1.0


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"garbage",
        seal("", b"x"),
        ("sealed", {"lemma": {"a": 1}}),
        ("sealed", {1: {}}),
        ("sealed", [1, 2, 3]),
        ("sealed", (4, {})),
        marshal.dumps({"lemma": {"a": frozenset({"b"})}}),  # well formed, but not sealed
    ],
)
def test_a_bad_cache_file_is_ignored_and_rebuilt(rwn, tmp_path, monkeypatch, content):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path))
    path = token_cache.cache_path(morphology.morphology_id(), rwn.identity)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, tuple):  # a value sealed as the store seals it, for its shape alone to refuse
        content = seal(path.name, marshal.dumps(content[1]))
    path.write_bytes(content)
    assert token_cache.load(path) == {}
    matcher = fresh(rwn)
    assert matcher.lemmas["коты"] == frozenset({"кот", "коты"})
    matcher.save()
    assert token_cache.load(path)["lemma"]["коты"] == frozenset({"кот", "коты"})


def test_saves_from_two_runs_merge(rwn, tmp_path, monkeypatch):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path))
    a, b = fresh(rwn), fresh(rwn)
    a.lemmas["кот"], b.lemmas["дома"]
    a.save()
    b.save()
    lemmas = token_cache.load(token_cache.cache_path(morphology.morphology_id(), rwn.identity))["lemma"]
    assert {"кот", "дома"} <= lemmas.keys()


def test_the_cache_is_bounded(rwn, tmp_path, monkeypatch):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(token_cache, "MAX_TOKENS", 2)
    matcher = fresh(rwn)
    for token in ("кот", "дом", "дома", "коты"):
        matcher.lemmas[token]
    matcher.save()
    lemmas = token_cache.load(token_cache.cache_path(morphology.morphology_id(), rwn.identity))["lemma"]
    assert len(lemmas) == 2


def test_the_cache_is_keyed_by_thesaurus_and_morphology(rwn):
    with_rwn = token_cache.cache_path("pymorphy3-2.0.6+dicts-ru-2.4", rwn.identity)
    assert with_rwn != token_cache.cache_path("pymorphy3-2.0.6+dicts-ru-2.4", None)
    assert with_rwn != token_cache.cache_path("pymorphy3-2.0.7+dicts-ru-2.4", rwn.identity)


def test_an_unwritable_cache_directory_costs_nothing_but_the_cache(rwn, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("SCORER_CACHE_DIR", str(blocker / "cache"))
    matcher = fresh(rwn)
    assert meteor_tokens(["кот"], ["коты"], matcher, MeteorParams(gamma=0.5)).matches == 1
    matcher.save()  # no exception


@pytest.mark.parametrize(
    "table, ok",
    [
        ({"кот": frozenset({"кот"}), "спит": frozenset()}, True),
        ({}, True),
        ({"кот": frozenset({"кот"}), 1: frozenset()}, False),
        ({"кот": {"кот"}}, False),
        ({"кот": frozenset({"кот", 2})}, False),
        ({"кот": frozenset({b"kot"})}, False),
        ([("кот", frozenset())], False),
    ],
)
def test_only_a_table_of_words_to_sets_of_words_is_taken(table, ok):
    assert token_cache._well_formed({"lemma": table}) is ok
    assert not token_cache._well_formed({1: table}) and not token_cache._well_formed([table])


def test_a_table_past_its_bound_is_not_taken(monkeypatch):
    monkeypatch.setattr(token_cache, "MAX_TOKENS", 1)
    assert not token_cache._well_formed({"lemma": {"a": frozenset(), "b": frozenset()}})


def test_the_morphology_versions_are_those_installed():
    """The cache's name and the signature carry the versions importlib.metadata reports, read without it."""
    from importlib.metadata import version

    assert (
        morphology.morphology_id()
        == f"pymorphy3-{version('pymorphy3')}+dicts-ru-{version('pymorphy3-dicts-ru')}+abbr-self"
    )
    assert morphology.installed_version("pymorphy3_dicts_ru", "pymorphy3-dicts-ru") == version(
        "pymorphy3-dicts-ru"
    )


def test_a_version_without_one_dist_info_folder_is_asked_of_importlib_metadata(tmp_path, monkeypatch):
    """Two folders for one distribution (a broken upgrade), or none (another layout): the folder names
    are not trusted, importlib.metadata answers."""
    package = tmp_path / "site" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name in ("pkg_dist-1.0.dist-info", "pkg_dist-2.0.dist-info"):
        (tmp_path / "site" / name).mkdir()
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    asked = []
    monkeypatch.setattr("importlib.metadata.version", lambda name: asked.append(name) or "9.9")
    assert morphology.installed_version("pkg", "pkg-dist") == "9.9" and asked == ["pkg-dist"]
    (tmp_path / "site" / "pkg_dist-2.0.dist-info").rmdir()
    assert morphology.installed_version("pkg", "pkg-dist") == "1.0" and asked == ["pkg-dist"]


def test_a_piece_of_answers_asks_the_word_store_once_a_stage_for_the_words_nobody_knows(
    rwn, tmp_path, monkeypatch
):
    """Before a piece of answers is scored, the word store is asked, in one query a stage, for the words
    neither the memos nor ``known`` (the engine's token table) hold, each once; the keys found then serve
    the stages without the morphology."""
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path))
    first = fresh(rwn)
    for token in ("лечу", "стали", "кот", "дом"):
        first.keys("lemma", token), first.keys("synonym", token)
    first.save(keep={"дом"})  # the other words go to the word store
    warm = fresh(rwn)
    asked = []
    store_get = token_cache.TokenStore.get_many
    monkeypatch.setattr(
        token_cache.TokenStore,
        "get_many",
        lambda self, stage, tokens: asked.append((stage, sorted(tokens))) or store_get(self, stage, tokens),
    )
    stages = ("exact", "lemma", "synonym")
    warm.read_known()  # as a run does without a token table to stand for the token cache
    warm.prefetch(["лечу", "дом", "стали"], stages)  # the words a piece holds that the engine may ask for
    assert asked == [("lemma", ["лечу", "стали"]), ("synonym", ["лечу", "стали"])]  # дом: the token cache's
    monkeypatch.setattr(morphology, "analyse", lambda token: pytest.fail(f"pymorphy3 asked for {token!r}"))
    assert warm.lemmas["лечу"] == frozenset({"лететь", "лечить"})
    asked.clear()
    warm.prefetch(["лечу", "стали", "дом"], stages)  # known now, from the store
    assert asked == [("lemma", []), ("synonym", [])]


def test_the_token_cache_is_read_only_when_a_token_is_missed_or_nothing_stands_for_it(
    rwn, tmp_path, monkeypatch
):
    """A warm matcher reads the token cache the first time a memo misses a token (once for every stage),
    not when it is made or asked for its key functions or for the word store's keys: a warm run whose token
    table holds the reference data's words never reads it; ``read_known`` reads it at once."""
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path))
    first = fresh(rwn)
    for token in ("лечу", "кот", "дом"):
        first.keys("lemma", token), first.keys("synonym", token)
    first.save(keep={"дом", "кот"})  # лечу goes to the word store
    reads = []
    load = token_cache.load
    monkeypatch.setattr(token_cache, "load", lambda path: reads.append(path) or load(path))
    warm = fresh(rwn)
    warm.key_functions(("exact", "lemma", "synonym"))
    warm.prefetch(["лечу"], ("exact", "lemma", "synonym"))
    assert reads == [] and warm.lemmas["лечу"] == frozenset({"лететь", "лечить"})
    assert reads == []  # from the word store
    monkeypatch.setattr(morphology, "analyse", lambda token: pytest.fail(f"pymorphy3 asked for {token!r}"))
    assert warm.lemmas["дом"] == frozenset({"дом"}) and len(reads) == 1
    assert warm.synsets["кот"] == first.synsets["кот"] and len(reads) == 1  # every stage from the one read
    eager = fresh(rwn)
    eager.read_known()
    assert len(reads) == 2 and "кот" in eager.lemmas and "кот" in eager.synsets


def test_a_token_cache_that_cannot_be_read_knows_no_token(rwn, tmp_path, monkeypatch):
    """A damaged token cache file is there but holds nothing a run can use: the matcher knows no token, so a
    run from it learns every type's keys once, as from an empty cache."""
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path))
    first = fresh(rwn)
    first.keys("lemma", "дом")
    first.save()
    assert fresh(rwn).knows_tokens()
    first.cache_file.write_bytes(b"not a sealed marshal file")
    damaged = fresh(rwn)
    assert not damaged.knows_tokens() and damaged.lemmas["дом"] == frozenset({"дом"})
