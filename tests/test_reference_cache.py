"""Validated references kept across runs: found by the files' bytes, never trusted, never a crash."""

import marshal
import os

import pytest
from helpers import make_split

from scorer import api
from scorer.errors import ReferenceDataError
from scorer.inputs import reference, reference_cache
from scorer.inputs.config import Limits
from scorer.inputs.validation import Dialogue
from scorer.metric.cache import seal

DIALOGUES = [("d1", "Text2Text", [["Кошка спит.", "Кот спит"], ["Да"]]), ("d2", "Audio2Text", [["Нет."]])]
EXPECTED = (
    [Dialogue("d1", "Text2Text", 2), Dialogue("d2", "Audio2Text", 1)],
    {"d1": [["Кошка спит.", "Кот спит"], ["Да"]], "d2": [["Нет."]]},
    {"d1": [[["кошка", "спит"], ["кот", "спит"]], [["да"]]], "d2": [[["нет"]]]},
)


@pytest.fixture(autouse=True)
def _disk_cache_only(request, monkeypatch):
    """These tests are about the cache on disk: nothing is kept in the process between loads, except in the
    tests of what is kept (``test_kept_*``)."""
    if not request.node.name.startswith("test_kept_"):
        monkeypatch.setattr(reference.KEPT, "keep", lambda entry, data: data)


def test_kept_the_same_files_read_again_give_the_data_kept(tmp_path, monkeypatch):
    data = make_split(tmp_path, DIALOGUES)
    first = api.load_reference(data)
    _no_validation(monkeypatch)
    monkeypatch.setattr(reference_cache, "load", _refuse)  # not even the cache file is read again
    again = api.load_reference(data)
    assert again is first and again.variant_tokens() == EXPECTED[2]


def test_kept_only_while_the_files_and_limits_are_the_same(tmp_path):
    data = make_split(tmp_path, DIALOGUES)
    first = api.load_reference(data)
    assert api.load_reference(data, Limits(max_answer_chars=1000)) is not first  # other limits: another entry
    assert api.load_reference(data) is not first  # that one replaced it: one set is kept, the last read
    kept = api.load_reference(data)
    answers = data / "answers.jsonl"
    answers.write_text(answers.read_text(encoding="utf-8").replace("Да", "Нет"), encoding="utf-8")
    changed = api.load_reference(data)
    assert changed is not kept and changed.variants()["d1"][1] == ["Нет"]
    assert api.load_reference(data, with_answers=False).references is None


def _refuse(*args, **kwargs):
    raise AssertionError("read, validated or tokenised again")


def _no_validation(monkeypatch):
    for name in ("read_reference_dialogues", "read_references", "tokenise_references"):
        monkeypatch.setattr(reference, name, _refuse)


def _key(data, answers="answers.jsonl", limits=Limits()):
    keyed = reference_cache.keyed_digests(data / "dialogues.jsonl", answers and data / answers, limits)
    return None if keyed is None else keyed[0]


def test_a_second_load_comes_from_the_cache(tmp_path, monkeypatch):
    data = make_split(tmp_path, DIALOGUES)
    first = api.load_reference(data)
    assert (first.dialogues, first.references, first.tokens) == EXPECTED
    _no_validation(monkeypatch)
    again = api.load_reference(data)
    assert (again.dialogues, again.references, again.tokens) == EXPECTED
    # the words of the variants: gathered as the entry is checked, then the reference data's vocabulary
    assert again.words is not None and again.vocabulary is again.words
    assert again.vocabulary == first.vocabulary == {"кошка", "спит", "кот", "да", "нет"}


def test_a_text_several_turns_share_is_one_list_read_and_stored(tmp_path, monkeypatch):
    shared = [
        ("d1", "Text2Text", [["Да, конечно.", "Нет"], ["Да, конечно."]]),
        ("d2", "Image2Text", [["Нет"]]),
    ]
    data = make_split(tmp_path, shared)
    first = api.load_reference(data).variant_tokens()
    _no_validation(monkeypatch)
    again = api.load_reference(data).variant_tokens()  # from the cache file
    for tokens in (first, again):
        assert tokens == {"d1": [[["да", "конечно"], ["нет"]], [["да", "конечно"]]], "d2": [[["нет"]]]}
        assert tokens["d1"][0][0] is tokens["d1"][1][0] and tokens["d1"][0][1] is tokens["d2"][0][0]
        assert tokens["d1"][0][0] is not tokens["d1"][0][1]


def test_the_dialogues_alone_have_their_own_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))  # no entry of another test's
    data = make_split(tmp_path, DIALOGUES)
    api.load_reference(data)
    calls = []
    real = reference.read_reference_dialogues
    monkeypatch.setattr(
        reference, "read_reference_dialogues", lambda *a, **k: calls.append(1) or real(*a, **k)
    )
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
    assert _key(data, None) != key
    assert _key(data, limits=Limits(max_json_depth=9)) != key
    with open(data / "answers.jsonl", "a", encoding="utf-8") as fh:
        fh.write("\n")
    assert _key(data) != key


ROWS = [("d1", "Text2Text", 2), ("d2", "Audio2Text", 1)]
SPAN = (0, 10, bytes(32))
SPANS = {"d1": SPAN, "d2": SPAN}
TOKENS = {"d1": [[["кот"]], [["да"]]], "d2": [[["нет"]]]}


@pytest.mark.parametrize(
    "payload",
    [
        (ROWS, SPANS, {"d1": [[["кот"]], [[]]], "d2": [[["нет"]]]}),  # a turn without a token
        (ROWS, SPANS, {"d1": [[["кот"]], [[""]]], "d2": [[["нет"]]]}),  # an empty token
        (ROWS, SPANS, {"d1": [[["кот"]], []], "d2": [[["нет"]]]}),  # a turn without variants
        (ROWS, SPANS, {"d1": [[["кот"]]], "d2": [[["нет"]]]}),  # fewer tokenised turns
        (ROWS, SPANS, {"d1": [[["кот"]], [[5]]], "d2": [[["нет"]]]}),
        (ROWS, SPANS, {"d1": [[["кот"]], [["да", ["да"]]]], "d2": [[["нет"]]]}),  # an unhashable word
        (ROWS, SPANS, {"d1": [[["кот"]], [["да", b"da"]]], "d2": [[["нет"]]]}),  # bytes among the words
        (ROWS, SPANS, None),
        (ROWS, None, TOKENS),
        (ROWS, {"d1": SPAN}, TOKENS),  # a dialogue without its line
        (ROWS, {"d1": SPAN, "d2": (5, 4, bytes(32))}, TOKENS),  # a span ending before it starts
        (ROWS, {"d1": SPAN, "d2": (-1, 4, bytes(32))}, TOKENS),
        (ROWS, {"d1": SPAN, "d2": (0, 4, bytes(31))}, TOKENS),  # not a SHA-256
        (ROWS, {"d1": SPAN, "d2": [0, 4, bytes(32)]}, TOKENS),
        ([("d1", "Text2Text", 2), ("d1", "Audio2Text", 1)], None, None),  # a duplicate id
        ([("d1", "Text2Text", 2)], {"d1": SPAN}, {"d1": [[["кот"]]]}),  # the turn count
        ([("d1", "Speech", 2)], None, None),  # the type
        ([("d1", "Text2Text", 0)], None, None),
        ([("d1", "Text2Text", 1)], {"d1": SPAN, "d9": SPAN}, {"d1": [[["кот"]]], "d9": [[["кот"]]]}),
        (1, ROWS, SPANS, TOKENS),  # another layout
        (ROWS, SPANS),
        [("d1", "Text2Text", 1)],
    ],
)
def test_a_sealed_entry_of_the_wrong_shape_is_ignored(tmp_path, payload):
    assert reference_cache._well_formed((ROWS, SPANS, TOKENS))  # the shape that is accepted
    data = make_split(tmp_path, DIALOGUES)
    key = _key(data)
    path = reference_cache.entry_path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(seal(path.name, marshal.dumps(payload)))
    assert reference_cache.load(key, Limits()) is None
    loaded = api.load_reference(data)
    assert (loaded.dialogues, loaded.references, loaded.tokens) == EXPECTED
    dialogues, spans, tokens, words = reference_cache.load(key, Limits())  # rewritten from the files
    assert (dialogues, tokens, list(spans)) == (EXPECTED[0], EXPECTED[2], ["d1", "d2"])
    assert (
        words
        == loaded.vocabulary
        == {t for turns in tokens.values() for turn in turns for v in turn for t in v}
    )


def test_a_warm_load_reads_the_texts_of_a_dialogue_only_when_asked(tmp_path, monkeypatch):
    data = make_split(tmp_path, DIALOGUES)
    api.load_reference(data)
    _no_validation(monkeypatch)
    opened = []
    real_open = open
    monkeypatch.setattr(
        "builtins.open", lambda path, *a, **k: opened.append(str(path)) or real_open(path, *a, **k)
    )
    warm = api.load_reference(data)
    assert opened == [] and warm.tokens == EXPECTED[2]
    assert warm.references["d2"] == [["Нет."]]
    assert opened == [str(data / "answers.jsonl")]
    assert warm.references["d2"] == [["Нет."]] and len(opened) == 1  # read once
    assert dict(warm.references) == EXPECTED[1] and len(warm.references) == 2
    with pytest.raises(KeyError):
        warm.references["d9"]


@pytest.mark.parametrize("layout", ["crlf", "bom", "blank lines"])
def test_line_spans_follow_line_ends_byte_order_marks_and_blank_lines(tmp_path, monkeypatch, layout):
    data = make_split(tmp_path, DIALOGUES)
    answers = data / "answers.jsonl"
    text = answers.read_bytes()
    if layout == "crlf":
        text = text.replace(b"\n", b"\r\n")
    elif layout == "bom":
        text = b"\xef\xbb\xbf" + text
    else:
        text = b"\n \n" + text.replace(b"\n", b"\n\n\t\n")
    answers.write_bytes(text)
    api.load_reference(data)
    _no_validation(monkeypatch)
    assert dict(api.load_reference(data).references) == EXPECTED[1]


def test_an_entry_whose_lines_do_not_match_reads_the_whole_file_again(tmp_path, monkeypatch):
    """Spans swapped, or a digest that is not the line's: the texts come from a full, validated read."""
    data = make_split(tmp_path, DIALOGUES)
    api.load_reference(data)
    key = _key(data)
    path = reference_cache.entry_path(key)
    dialogues, spans, tokens, _ = reference_cache.load(key, Limits())
    rows = [(d.dialog_id, d.type, d.n_turns) for d in dialogues]
    reads = []
    real = reference.read_references
    monkeypatch.setattr(reference, "read_references", lambda *a, **k: reads.append(1) or real(*a, **k))
    for forged in (
        {"d1": spans["d2"], "d2": spans["d1"]},
        {"d1": spans["d1"][:2] + (bytes(32),), "d2": spans["d2"]},
        {"d1": (spans["d1"][0] + 1, spans["d1"][1], spans["d1"][2]), "d2": spans["d2"]},
        {"d1": (10**9, 10**9 + 5, spans["d1"][2]), "d2": spans["d2"]},
        {"d1": (0, 10**15, spans["d1"][2]), "d2": spans["d2"]},
    ):  # never a petabyte read
        path.write_bytes(seal(path.name, marshal.dumps((rows, forged, tokens))))
        reads.clear()
        loaded = api.load_reference(data)
        assert loaded.references["d1"] == EXPECTED[1]["d1"] and reads == [1]
        assert loaded.references["d2"] == EXPECTED[1]["d2"] and reads == [1]
    path.unlink()  # the entry is shared by every test's copy of these files


def test_a_damaged_or_foreign_entry_is_ignored(tmp_path):
    data = make_split(tmp_path, DIALOGUES)
    key = _key(data)
    path = reference_cache.entry_path(key)
    path.unlink(missing_ok=True)
    api.load_reference(data)
    good = path.read_bytes()
    stored = reference_cache.load(key, Limits())
    for damaged in (good[:-3], good[:40] + b"x" + good[41:], seal("another key", good), b""):
        path.write_bytes(damaged)
        assert reference_cache.load(key, Limits()) is None
        assert api.load_reference(data).references == EXPECTED[1]
        assert reference_cache.load(key, Limits()) == stored  # written again


def test_a_fifo_for_answers_is_reported_not_waited_on(tmp_path):
    data = make_split(tmp_path, DIALOGUES)
    (data / "answers.jsonl").unlink()
    os.mkfifo(data / "answers.jsonl")
    assert _key(data) is None
    with pytest.raises(Exception) as caught:
        api.load_reference(data)
    assert "not a regular file" in str(caught.value)
