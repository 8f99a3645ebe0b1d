"""The compiled engine's token table kept across runs: exported and restored exactly, refused when it
does not fit, never holding a word the morphology could not analyse, never changing a number."""

from __future__ import annotations

import itertools
import marshal
from array import array

import pytest
from helpers import pair_counts, table_for

from scorer.metric import token_cache
from scorer.metric.cache import seal
from scorer.metric.engine import accelerator
from scorer.metric.engine.accelerator import StoredTable
from scorer.metric.matcher import Matcher
from scorer.metric.meteor import MeteorParams, MeteorRu

KEYS = {
    "кот": (["кот"], ["s1"]),
    "кошка": (["кошка"], ["s1"]),
    "спит": (["спать"], []),
    "спать": (["спать"], []),
    "дом": (["дом"], ["s2", "s3"]),
    "здание": (["здание"], ["s3"]),
}
N_KEYS = len(
    {key for stages in KEYS.values() for keys in stages for key in keys}
)  # one id space for both stages


def filled(module):
    """A table of test_id_counts' kind with every token of KEYS interned, in order."""
    table = table_for(KEYS, module)
    for token in KEYS:
        pair_counts(table, [token], ["кот"])
    return table


def every_pair():
    texts = [list(p) for n in (1, 2) for p in itertools.permutations(KEYS, n)]
    return [(a, b) for a in texts for b in texts]


def test_a_restored_table_counts_as_the_one_it_was_exported_from(module):
    table = filled(module)
    tokens, start, length, data = table.export(())
    assert tokens == list(KEYS) and len(start) == len(length) == 4 * 2 * len(KEYS)
    copy = module.KeyTable(2, lambda token: pytest.fail(f"{token!r} interned again"))
    assert copy.restore(tokens, start, length, data, N_KEYS)
    assert copy.ids == table.ids and copy.n_tokens == len(KEYS)
    for cand, ref in every_pair():
        assert pair_counts(copy, cand, ref) == pair_counts(table, cand, ref), (cand, ref)


def test_a_restored_table_grows_past_its_restored_size_and_keeps_what_it_held(module):
    table = filled(module)
    copy = module.KeyTable(2, lambda token: copy.add(token, [[N_KEYS], [N_KEYS + 1]]))
    assert copy.restore(*table.export(()), N_KEYS)
    assert pair_counts(copy, ["новое", "кот"], ["другое", "кот"]) == [1, 1, 0]  # both new, one key: lemma
    assert copy.n_tokens == len(KEYS) + 2
    for cand, ref in every_pair():
        assert pair_counts(copy, cand, ref) == pair_counts(table, cand, ref), (cand, ref)


def test_an_export_leaves_out_the_tokens_asked(module):
    table = filled(module)
    tokens, start, length, data = table.export({"кошка", "дом"})
    assert tokens == ["кот", "спит", "спать", "здание"]
    copy = module.KeyTable(2, lambda token: -1)
    assert copy.restore(tokens, start, length, data, N_KEYS)
    assert pair_counts(copy, ["здание"], ["кот", "здание"]) == [1, 0, 0]
    assert array("i", length).tolist() == [1, 1, 1, 0, 1, 0, 1, 1]


def ints(*values: int) -> bytes:
    return array("i", values).tobytes()


@pytest.mark.parametrize(
    "tokens, start, length, data, n_keys",
    [
        (["a"], ints(0, 1), ints(1, 1), ints(0, 1), 1),  # a key id beyond the keys
        (["a"], ints(0, 1), ints(1, 1), ints(0, -1), 2),  # a negative key id
        (["a"], ints(0, 1), ints(1, 2), ints(0, 1), 2),  # a run past the end of the data
        (["a"], ints(0, -1), ints(1, 1), ints(0, 1), 2),  # a run before its start
        (["a"], ints(0, 0), ints(2, -1), ints(1, 1), 2),  # a negative length
        (["a"], ints(0, 0), ints(2, 0), ints(1, 0), 2),  # a run not increasing
        (["a"], ints(0, 0), ints(2, 0), ints(1, 1), 2),  # a key twice in a run
        (["a"], ints(0), ints(1), ints(0), 1),  # arrays for half a token
        (["a"], ints(0, 1) + b"\0", ints(1, 1), ints(0, 1), 2),  # not whole ints
        (["a", "a"], ints(0, 0, 0, 0), ints(0, 0, 0, 0), b"", 0),  # a token twice
        ([b"a"], ints(0, 0), ints(0, 0), b"", 0),  # not a string
    ],
)
def test_a_table_that_does_not_fit_is_refused_and_nothing_is_taken(
    module, tokens, start, length, data, n_keys
):
    table = module.KeyTable(2, lambda token: -1)
    assert not table.restore(tokens, start, length, data, n_keys)
    assert table.n_tokens == 0 and table.ids == {}
    assert module.KeyTable(2, lambda token: -1).restore(["a"], ints(0, 1), ints(1, 1), ints(0, 1), 2)


def test_only_an_empty_table_takes_a_stored_one(module):
    table = filled(module)
    assert not table.restore(*table.export(()), N_KEYS)


def metric(rwn):
    return MeteorRu(MeteorParams(), matcher=Matcher(rwn))


@pytest.mark.skipif(not accelerator.active(), reason="the compiled engine keeps the table")
def test_a_warm_metric_interns_no_token_it_has_met(rwn, tmp_path, monkeypatch):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path))
    cand, refs = ["кот", "лечит", "кошку", "дома"], [["кошка", "лечит"], ["мчаться", "домой"]]
    first = metric(rwn)
    first.restore_table()
    expected = first.best_variant(cand, refs)
    first.keep_table()
    first.matcher.save()
    second = metric(rwn)
    second.restore_table()
    fast = second.engine.fast_counts(second.matcher.key_functions(second.params.stages))
    assert fast.restored == len(set(cand) | {t for r in refs for t in r})
    monkeypatch.setattr(fast, "_intern", lambda token: pytest.fail(f"{token!r} interned again"))
    assert second.best_variant(cand, refs) == expected
    assert not fast.grew()
    monkeypatch.setattr(token_cache, "save_table", lambda *a: pytest.fail("nothing new was written"))
    second.keep_table()
    monkeypatch.undo()
    assert second.best_variant(["кот", "новый"], refs)[0] == 0 and fast.grew()


@pytest.mark.skipif(not accelerator.active(), reason="the compiled engine keeps the table")
def test_the_table_is_written_with_the_workers_tokens_and_without_unanalysed_words(
    rwn, tmp_path, monkeypatch
):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path))
    m = metric(rwn)
    m.best_variant(["кот", "спит"], [["кошка", "спит"]])
    m.matcher.absorb(
        {"lemma": {"дом": frozenset({"дом"})}, "synonym": {"дом": frozenset()}}, {}
    )  # a worker's
    m.matcher.unanalysed["спит"] = "made up for the test"
    m.keep_table()
    path = token_cache.table_path(m.matcher.cache_file, m.params.stages)
    stored = token_cache.load_table(path)
    assert stored is not None and sorted(stored.tokens) == ["дом", "кот", "кошка"]


def test_a_table_file_of_the_wrong_shape_is_ignored(tmp_path):
    path = tmp_path / "keys-0.v1.marshal"
    good = StoredTable(["a"], ["k"], ints(0), ints(1), ints(0))
    assert token_cache.save_table(path, good) and token_cache.load_table(path) == good
    for content in [
        (["a"], ["k", "k"], b"", b"", b""),
        (["a"], [1], b"", b"", b""),
        ("a", ["k"], b"", b"", b""),
        (["a"], ["k"], b"", b"", []),
        (1, *good),  # an older layout
        tuple(good[:4]),
        list(good),
    ]:
        path.write_bytes(seal(path.name, marshal.dumps(content)))
        assert token_cache.load_table(path) is None, content
    path.write_bytes(seal("keys-another-name", marshal.dumps(tuple(good))))
    assert token_cache.load_table(path) is None


def test_add_keys_numbers_the_keys_as_the_tokens_come(module):
    """``add_keys`` gives each key string the next id at first sight and interns the token with its sorted
    ids: the table ``add`` makes from the same ids, key by key."""
    by_strings = module.KeyTable(2, lambda token: pytest.fail("not used"))
    key_ids: dict[str, int] = {}
    for token, stages in KEYS.items():
        assert by_strings.add_keys(token, [list(keys) for keys in stages], key_ids) == len(by_strings.ids) - 1
    assert (
        by_strings.add_keys("кот", [frozenset(["новый"]), frozenset()], key_ids) == 0
    )  # known: nothing added
    assert len(key_ids) == N_KEYS and "новый" not in key_ids
    assert key_ids["кот"] == 0 and key_ids["s1"] == 1 and key_ids["кошка"] == 2
    by_ids = filled(module)
    assert by_strings.export(()) == by_ids.export(())
    many = module.KeyTable(2, lambda token: pytest.fail("not used"))
    numbered: dict[str, int] = {"z": 0}
    many.add_keys("слово", [["c", "b", "a", "z"], ["b"]], numbered)
    assert numbered == {"z": 0, "c": 1, "b": 2, "a": 3}
    tokens, start, length, data = many.export(())
    assert array("i", data).tolist() == [0, 1, 2, 3, 2]  # each stage's ids sorted
