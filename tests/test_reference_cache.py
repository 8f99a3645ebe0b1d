"""Validated references kept across runs: found by the files' bytes, never trusted, never a crash."""
import marshal
import os

import pytest

from scorer import api
from scorer.errors import ReferenceDataError
from scorer.inputs import reference_cache
from scorer.inputs.config import Limits
from scorer.inputs.validation import Dialogue
from scorer.metric.cache import seal

from conftest import make_split

DIALOGUES = [("d1", "Text2Text", [["Кошка спит.", "Кот спит"], ["Да"]]), ("d2", "Audio2Text", [["Нет."]])]
EXPECTED = ([Dialogue("d1", "Text2Text", 2), Dialogue("d2", "Audio2Text", 1)],
            {"d1": [["Кошка спит.", "Кот спит"], ["Да"]], "d2": [["Нет."]]},
            {"d1": [[["кошка", "спит"], ["кот", "спит"]], [["да"]]], "d2": [[["нет"]]]})


def _refuse(*args, **kwargs):
    raise AssertionError("read, validated or tokenised again")


def _no_validation(monkeypatch):
    for name in ("read_dialogues", "read_references", "tokenise_references"):
        monkeypatch.setattr(api, name, _refuse)


def _key(data):
    return reference_cache.entry_key(data / "dialogues.jsonl", data / "answers.jsonl", Limits())


def test_a_second_load_comes_from_the_cache(tmp_path, monkeypatch):
    data = make_split(tmp_path, DIALOGUES)
    first = api.load_reference(data)
    assert (first.dialogues, first.references, first.tokens) == EXPECTED
    _no_validation(monkeypatch)
    again = api.load_reference(data)
    assert (again.dialogues, again.references, again.tokens) == EXPECTED


def test_the_dialogues_alone_have_their_own_entry(tmp_path, monkeypatch):
    data = make_split(tmp_path, DIALOGUES)
    api.load_reference(data)
    calls = []
    real = api.read_dialogues
    monkeypatch.setattr(api, "read_dialogues", lambda *a, **k: calls.append(1) or real(*a, **k))
    only = api.load_reference(data, with_answers=False)
    assert (only.dialogues, only.references, only.tokens, calls) == (EXPECTED[0], None, None, [1])
    api.load_reference(data, with_answers=False)
    assert calls == [1]


def test_a_changed_byte_is_validated_again(tmp_path):
    data = make_split(tmp_path, DIALOGUES)
    api.load_reference(data)
    answers = data / "answers.jsonl"
    answers.write_text(answers.read_text(encoding="utf-8").replace('"Нет."', '"..."'), encoding="utf-8")
    with pytest.raises(ReferenceDataError) as caught:
        api.load_reference(data)
    assert [i.code for i in caught.value.issues] == ["empty_reference"]


def test_the_key_follows_bytes_and_limits(tmp_path):
    data = make_split(tmp_path, DIALOGUES)
    key = _key(data)
    assert key == _key(data) and len(key) == 64
    assert reference_cache.entry_key(data / "dialogues.jsonl", None, Limits()) != key
    assert reference_cache.entry_key(data / "dialogues.jsonl", data / "answers.jsonl", Limits(max_json_depth=9)) != key
    with open(data / "answers.jsonl", "a", encoding="utf-8") as fh:
        fh.write("\n")
    assert _key(data) != key


ROWS = [("d1", "Text2Text", 2), ("d2", "Audio2Text", 1)]
REFS = {"d1": [["Кот"], ["Да"]], "d2": [["Нет"]]}
TOKENS = {"d1": [[["кот"]], [["да"]]], "d2": [[["нет"]]]}


@pytest.mark.parametrize("payload", [
    (1, ROWS, REFS, {"d1": [[["кот"]], [[]]], "d2": [[["нет"]]]}),                     # a turn without a token
    (1, ROWS, REFS, {"d1": [[["кот"]], [[""]]], "d2": [[["нет"]]]}),                   # an empty token
    (1, ROWS, REFS, {"d1": [[["кот"]], [["да"], ["нет"]]], "d2": [[["нет"]]]}),        # more tokenised variants
    (1, ROWS, REFS, {"d1": [[["кот"]]], "d2": [[["нет"]]]}),                           # fewer tokenised turns
    (1, ROWS, REFS, {"d1": [[["кот"]], [[5]]], "d2": [[["нет"]]]}),
    (1, ROWS, REFS, None),
    (1, ROWS, None, TOKENS),
    (1, [("d1", "Text2Text", 2), ("d1", "Audio2Text", 1)], None, None),               # a duplicate id
    (1, [("d1", "Text2Text", 2)], {"d1": [["Кот"]]}, {"d1": [[["кот"]]]}),            # the turn count
    (1, [("d1", "Speech", 2)], None, None),                                            # the type
    (1, [("d1", "Text2Text", 0)], None, None),
    (1, [("d1", "Text2Text", 1)], {"d1": [["Кот", 5]]}, {"d1": [[["кот"], []]]}),
    (1, [("d1", "Text2Text", 1)], {"d1": [["Кот"]], "d9": [["Кот"]]}, {"d1": [[["кот"]]], "d9": [[["кот"]]]}),
    (2, ROWS, REFS, TOKENS),                                                           # another format
    (1, ROWS, REFS),
    [("d1", "Text2Text", 1)],
])
def test_a_sealed_entry_of_the_wrong_shape_is_ignored(tmp_path, payload):
    assert reference_cache._well_formed(*(1, ROWS, REFS, TOKENS)[1:])  # the shape that is accepted
    data = make_split(tmp_path, DIALOGUES)
    key = _key(data)
    path = reference_cache._path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(seal(key, marshal.dumps(payload)))
    assert reference_cache.load(key, Limits()) is None
    loaded = api.load_reference(data)
    assert (loaded.dialogues, loaded.references, loaded.tokens) == EXPECTED
    assert reference_cache.load(key, Limits()) == EXPECTED  # rewritten from the files


def test_a_damaged_or_foreign_entry_is_ignored(tmp_path):
    data = make_split(tmp_path, DIALOGUES)
    api.load_reference(data)
    key = _key(data)
    path = reference_cache._path(key)
    good = path.read_bytes()
    for damaged in (good[:-3], good[:40] + b"x" + good[41:], seal("another key", good), b""):
        path.write_bytes(damaged)
        assert reference_cache.load(key, Limits()) is None
        assert (api.load_reference(data).references, path.read_bytes()) == (EXPECTED[1], good)


def test_a_fifo_for_answers_is_reported_not_waited_on(tmp_path):
    data = make_split(tmp_path, DIALOGUES)
    (data / "answers.jsonl").unlink()
    os.mkfifo(data / "answers.jsonl")
    assert _key(data) is None
    with pytest.raises(Exception) as caught:
        api.load_reference(data)
    assert "not a regular file" in str(caught.value)
