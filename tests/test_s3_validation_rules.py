"""Every rule of contract sections 2-3 for the four input files."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.errors import ReferenceDataError, SubmissionInvalid
from scorer.inputs.config import Limits
from scorer.inputs.jsonio import JsonError, parse_json
from scorer.inputs.validation import Dialogue, check_submission, read_reference_dialogues, read_references


def schema(name: str) -> dict:
    """The packaged JSON Schema ``name``: the documentation of a line's shape the readers are held to."""
    from importlib.resources import files

    return json.loads(files("scorer").joinpath("schemas", f"{name}.schema.json").read_text("utf-8"))


DIALOGUES = [Dialogue("d-1", "Text2Text", 2), Dialogue("d-2", "Image2Text", 1)]
GOOD_SUB = [{"dialog_id": "d-1", "answers": ["Кот.", "Рыжий."]}, {"dialog_id": "d-2", "answers": [""]}]
GOOD_PPL = {"d-1": [3.5, 2], "d-2": [1]}


def jsonl(rows) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def check(sub=GOOD_SUB, ppl=GOOD_PPL, limits=Limits()):
    sub = sub if isinstance(sub, bytes) else jsonl(sub)
    ppl = ppl if isinstance(ppl, bytes) else json.dumps(ppl).encode()
    return check_submission(DIALOGUES, sub, ppl, limits)


def errors(sub=GOOD_SUB, ppl=GOOD_PPL, limits=Limits()):
    with pytest.raises(SubmissionInvalid) as info:
        check(sub, ppl, limits)
    return info.value.issues


def test_valid_submission_with_empty_answer_and_integer_ppl():
    s = check()
    assert s.answers == {"d-1": ["Кот.", "Рыжий."], "d-2": [""]}
    assert s.ppl == {"d-1": [3.5, 2.0], "d-2": [1.0]}
    assert s.warnings == []


def test_bom_crlf_and_blank_lines_are_accepted():
    sub = b"\xef\xbb\xbf" + jsonl(GOOD_SUB).replace(b"\n", b"\r\n\r\n \r\n")
    assert check(sub, b"\xef\xbb\xbf" + json.dumps(GOOD_PPL).encode() + b"\r\n").answers["d-2"] == [""]


def test_leading_blank_lines_in_a_file_keep_line_numbers(tmp_path):
    # files are memory-mapped; a run of blank lines before a line is counted without copying it whole
    sub = tmp_path / "submission.jsonl"
    sub.write_bytes(b"\n \n\t\r\n" + jsonl(GOOD_SUB[:1]) + b"\n\n" + b'{"dialog_id": "d-2", "answers": 5}\n')
    ppl = tmp_path / "ppl_output.json"
    ppl.write_text(json.dumps(GOOD_PPL), encoding="utf-8")
    with pytest.raises(SubmissionInvalid) as info:
        check_submission(DIALOGUES, sub, ppl)
    assert [(i.line, i.dialog_id) for i in info.value.issues] == [(7, "d-2")]


def test_extra_keys_are_a_warning():
    s = check([{**GOOD_SUB[0], "model": "x"}, GOOD_SUB[1]])
    assert [(w.code, w.line, w.dialog_id) for w in s.warnings] == [("extra_keys", 1, "d-1")]


@pytest.mark.parametrize(
    "answer, message",
    [
        ("\ufffd", "the answer holds nothing but U+FFFD replacement characters (1): its METEOR is 0"),
        (
            " \ufffd\ufffd\n\ufffd ",
            "the answer holds nothing but U+FFFD replacement characters (3): its METEOR is 0",
        ),
        (
            "Кот\ufffd\ufffd\ufffd\ufffd",
            "4 of the answer's 7 non-space characters are U+FFFD replacement characters",
        ),
        (
            "ab \ufffd\ufffd\ufffd",
            "3 of the answer's 5 non-space characters are U+FFFD replacement characters",
        ),
        ("ab \ufffd\ufffd", None),  # half, not more than half
        ("Кот сидит \ufffd", None),
        ("", None),
    ],
)
def test_an_answer_mostly_of_replacement_characters_is_a_warning(answer, message):
    s = check([{"dialog_id": "d-1", "answers": ["Кот.", answer]}, GOOD_SUB[1]])
    assert s.answers["d-1"][1] == answer  # valid: a warning, never an error
    if message is None:
        assert s.warnings == []
        return
    first, summary = s.warnings
    assert (first.code, first.line, first.dialog_id, first.turn, first.message) == (
        "replacement_characters",
        1,
        "d-1",
        1,
        message,
    )
    where = (summary.code, summary.line, summary.dialog_id, summary.turn)
    assert where == ("replacement_characters", None, None, None)
    assert summary.message.startswith(
        "1 answer made mostly or only of U+FFFD replacement characters (listed above): "
    )


def test_replacement_characters_list_the_first_five_answers_then_count_them_all():
    dialogues = [Dialogue(f"d-{k}", "Text2Text", 2) for k in range(1, 6)]
    rows = [
        {"dialog_id": f"d-{k}", "answers": ["\ufffd" * k, "\ufffd\ufffd"], "model": "x"} for k in range(1, 6)
    ]
    s = check_submission(dialogues, jsonl(rows), json.dumps({f"d-{k}": [2, 2] for k in range(1, 6)}).encode())
    codes = [w.code for w in s.warnings]
    # the answers that cannot score come first, before the keys ignored
    assert codes == ["replacement_characters"] * 6 + ["extra_keys"] * 5
    assert [(w.line, w.dialog_id, w.turn) for w in s.warnings[:5]] == [
        (1, "d-1", 0),
        (1, "d-1", 1),
        (2, "d-2", 0),
        (2, "d-2", 1),
        (3, "d-3", 0),
    ]
    assert s.warnings[5].message.startswith(
        "10 answers made mostly or only of U+FFFD replacement characters (the first 5 listed above): "
    )
    assert "byte-level tokenizer" in s.warnings[5].message


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_perplexities_are_rejected(text):
    found = errors(ppl=f'{{"d-1": [{text}, 2], "d-2": [1]}}'.encode())
    assert [i.file for i in found] == ["ppl_output.json"]


@pytest.mark.parametrize("value", ["true", "false", "null", '"3.5"', "0.99", "0", "-2"])
def test_bad_perplexity_values_name_dialog_and_turn(value):
    found = errors(ppl=f'{{"d-1": [2, {value}], "d-2": [1]}}'.encode())
    assert [(i.file, i.dialog_id, i.turn) for i in found] == [("ppl_output.json", "d-1", 1)]


def test_repeated_key_is_rejected():
    found = errors(ppl=b'{"d-1": [2, 2], "d-2": [1], "d-1": [2, 2]}')
    assert (found[0].message, found[0].line, found[0].column, found[0].dialog_id) == (
        "dialog_id is repeated in the object; give each dialogue one list",
        1,
        29,
        "d-1",
    )
    sub = jsonl(GOOD_SUB).replace(b'{"dialog_id": "d-2"', b'{"dialog_id": "d-2", "dialog_id": "d-2"')
    assert [(i.line, i.code) for i in errors(sub)] == [(2, "bad_json")]


def test_ppl_must_be_an_object_of_lists():
    assert errors(ppl=b"[1, 2]")[0].message == (
        "the file holds a list; it must be one JSON object mapping each dialog_id to its list of "
        "perplexities, "
        'e.g. {"d-0001": [3.71, 5.2]}'
    )
    assert [(i.dialog_id, i.code) for i in errors(ppl=b'{"d-1": 3, "d-2": [1]}')] == [("d-1", "schema_type")]


def test_ppl_cross_checks():
    found = errors(ppl={"d-1": [2], "d-9": [1]})
    assert sorted((i.dialog_id, i.code) for i in found) == [
        ("d-1", "turn_count"),
        ("d-2", "missing_id"),
        ("d-9", "unknown_id"),
    ]


def test_submission_cross_checks_name_file_line_dialog():
    sub = [
        {"dialog_id": "d-1", "answers": ["один"]},
        {"dialog_id": "d-9", "answers": ["x"]},
        {"dialog_id": "d-1", "answers": ["a", "b"]},
    ]
    found = errors(sub)
    assert [(i.file, i.line, i.dialog_id, i.code) for i in found] == [  # in file order
        ("submission.jsonl", 1, "d-1", "turn_count"),
        ("submission.jsonl", 2, "d-9", "unknown_id"),
        ("submission.jsonl", 3, "d-1", "duplicate_id"),
        ("submission.jsonl", None, "d-2", "missing_id"),
    ]


@pytest.mark.parametrize(
    "row, code, turn",
    [
        ({"answers": ["a", "b"]}, "schema_required", None),
        ({"dialog_id": "", "answers": ["a", "b"]}, "schema_minLength", None),
        ({"dialog_id": 7, "answers": ["a", "b"]}, "schema_type", None),
        ({"dialog_id": "d-1", "answers": "a b"}, "schema_type", None),
        ({"dialog_id": "d-1", "answers": []}, "schema_minItems", None),
        ({"dialog_id": "d-1", "answers": ["a", 5]}, "schema_type", 1),
        ({"dialog_id": "d-1", "answers": ["a", None]}, "schema_type", 1),
        ("not an object", "schema_type", None),
    ],
)
def test_submission_schema_errors(row, code, turn):
    found = errors([row, GOOD_SUB[1]])
    first = [i for i in found if i.line == 1]
    assert [(i.code, i.turn) for i in first] == [(code, turn)]


def test_answer_length_limit_is_configurable():
    long = "слово " * 5000
    found = errors([{"dialog_id": "d-1", "answers": ["a", long]}, GOOD_SUB[1]])
    assert [(i.code, i.turn, i.line) for i in found] == [("schema_maxLength", 1, 1)]
    assert (
        check(
            [{"dialog_id": "d-1", "answers": ["a", long]}, GOOD_SUB[1]], limits=Limits(max_answer_chars=40000)
        ).answers["d-1"][1]
        == long
    )


def test_nesting_depth_limit_without_recursion_error():
    deep = '{"dialog_id": "d-1", "answers": ["a", "b"], "x": ' + "[" * 70 + "]" * 70 + "}"
    assert errors(deep.encode() + b"\n" + jsonl(GOOD_SUB[1:]))[0].message.startswith("JSON nesting is deeper")
    very_deep = b"[" * 200_000 + b"]" * 200_000
    assert errors(very_deep + b"\n" + jsonl(GOOD_SUB))[0].line == 1
    assert errors(ppl=b'{"d-1": ' + b"[" * 100_000)[0].file == "ppl_output.json"


def test_invalid_utf8_and_surrogates_name_the_line():
    sub = jsonl(GOOD_SUB[:1]) + b'{"dialog_id": "d-2", "answers": ["\xff"]}\n'
    # the ids of a line that is not UTF-8 cannot be read: no "has no line" flood after it
    assert [(i.line, i.code) for i in errors(sub)] == [(2, "not_utf8")]
    sub = jsonl(GOOD_SUB[:1]) + b'{"dialog_id": "d-2", "answers": ["\\ud800"]}\n'
    assert [(i.line, i.code) for i in errors(sub)][0] == (2, "bad_json")


def test_not_json_and_empty_file():
    assert errors(b"")[0].code == "empty_file"
    assert errors(b"{oops\n" + jsonl(GOOD_SUB))[0].line == 1
    assert errors(ppl=b"")[0].code == "bad_json"


def test_errors_are_capped_at_100_and_counted():
    rows = [{"dialog_id": f"x-{k}", "answers": ["a"]} for k in range(150)]
    with pytest.raises(SubmissionInvalid) as info:
        check(rows)
    assert len(info.value.listed()) == len(info.value.issues) == 100  # the rest are counted, not kept
    # once the list is full the rest of the file is not parsed: its lines are counted and said to be unchecked
    assert info.value.not_listed == 0
    assert info.value.unchecked == [("submission.jsonl", 101, 50), ("ppl_output.json", 1, 1)]
    assert "50 line(s) of submission.jsonl from line 101 on were not checked" in str(info.value)


def test_issue_text_names_everything():
    issue = errors([{"dialog_id": "d-1", "answers": ["a", 5]}, GOOD_SUB[1]])[0]
    assert (
        str(issue)
        == "submission.jsonl, line 1, dialog_id 'd-1', turn 1: answers[1] must be a string, not a number"
    )


# --- reference data ---------------------------------------------------------------------------


def dialogue_line(did="d-1", typ="Text2Text", turns=1):
    return {"dialog_id": did, "type": typ, "turns": [[{"type": "text", "content": "Привет"}]] * turns}


def test_dialogues_parse():
    data = jsonl([dialogue_line("a", turns=2), dialogue_line("b", "Image-Audio2Text")])
    assert read_reference_dialogues(data) == [
        Dialogue("a", "Text2Text", 2),
        Dialogue("b", "Image-Audio2Text", 1),
    ]


@pytest.mark.parametrize(
    "row",
    [
        dialogue_line(typ="Video2Text"),
        {**dialogue_line(), "turns": []},
        {**dialogue_line(), "turns": [[]]},
        {**dialogue_line(), "turns": [[{"type": "video", "content": "x"}]]},
        {**dialogue_line(), "turns": [[{"type": "text"}]]},
        {**dialogue_line(), "turns": [[{"type": "image", "content": 3}]]},
        {**dialogue_line(), "dialog_id": ""},
    ],
)
def test_dialogue_rules(row):
    with pytest.raises(ReferenceDataError) as info:
        read_reference_dialogues(jsonl([row]))
    assert info.value.issues[0].file == "dialogues.jsonl" and info.value.issues[0].line == 1


def test_duplicate_dialogue_is_a_reference_error():
    with pytest.raises(ReferenceDataError):
        read_reference_dialogues(jsonl([dialogue_line(), dialogue_line()]))


def test_references_cross_checks():
    dialogues = [Dialogue("a", "Text2Text", 2), Dialogue("b", "Text2Text", 1)]
    ok = jsonl(
        [
            {"dialog_id": "a", "references": [["Кот."], ["Рыжий.", "?"]]},
            {"dialog_id": "b", "references": [["Да"]]},
        ]
    )
    assert read_references(ok, dialogues)["a"] == [["Кот."], ["Рыжий.", "?"]]
    bad = jsonl([{"dialog_id": "a", "references": [["Кот."]]}, {"dialog_id": "c", "references": [["Да"]]}])
    with pytest.raises(ReferenceDataError) as info:
        read_references(bad, dialogues)
    assert sorted((i.dialog_id, i.code) for i in info.value.issues) == [
        ("a", "turn_count"),
        ("b", "missing_id"),
        ("c", "unknown_id"),
    ]


def test_turn_without_any_token_is_a_reference_error():
    dialogues = [Dialogue("a", "Text2Text", 2)]
    with pytest.raises(ReferenceDataError) as info:
        read_references(jsonl([{"dialog_id": "a", "references": [["Кот."], ["...", "—"]]}]), dialogues)
    assert [(i.turn, i.code) for i in info.value.issues] == [(1, "empty_reference")]
    with pytest.raises(ReferenceDataError):
        read_references(jsonl([{"dialog_id": "a", "references": [["Кот."], []]}]), dialogues)


def test_packaged_schemas_are_valid_json_schemas():
    from jsonschema import Draft202012Validator

    for name in ("dialogues", "answers", "submission", "ppl_output"):
        Draft202012Validator.check_schema(schema(name))


line_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from(["", "d-1", "text", "image", "Text2Text", "x"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["dialog_id", "type", "turns", "answers", "references", "content", "extra"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(line_values, st.sampled_from(["dialogues", "answers", "submission"]))
def test_hand_written_line_checks_agree_with_the_packaged_schemas(value, name):
    from jsonschema import Draft202012Validator

    from scorer.inputs.validation import dialogue_problems, reference_problems, submission_problems

    check_line = {
        "dialogues": dialogue_problems,
        "answers": reference_problems,
        "submission": submission_problems,
    }
    by_schema = Draft202012Validator(schema(name)).is_valid(value)
    assert (check_line[name](value, Limits()) == []) == by_schema


def test_mark_runs_are_found_in_the_text_that_holds_them_and_never_across_texts():
    """Each text is searched on its own: a run is reported where it is, and two texts never make one."""
    run, edge = "\u0301" * 31, "\u0301" * 30
    issues = errors(
        [
            {"dialog_id": "d-1", "answers": ["Кот" + edge, edge + "x" + run]},
            {"dialog_id": "d-2", "answers": [edge]},
        ]
    )
    assert [(i.line, i.dialog_id, i.turn, i.code) for i in issues] == [(1, "d-1", 1, "combining_run")]
    assert "31 combining marks in a row from character 32" in issues[0].message
    # 30 at the end of one answer and 30 at the start of the next: no run of 31 in either
    assert (
        check(
            [
                {"dialog_id": "d-1", "answers": ["Кот" + edge, edge + "Рыжий"]},
                {"dialog_id": "d-2", "answers": [""]},
            ]
        ).answers["d-1"][1]
        == edge + "Рыжий"
    )
    dialogues = [Dialogue("a", "Text2Text", 2)]
    with pytest.raises(ReferenceDataError) as info:
        read_references(
            jsonl([{"dialog_id": "a", "references": [["Кот" + edge, edge], ["да", "нет" + run]]}]), dialogues
        )
    assert [(i.turn, i.code) for i in info.value.issues] == [(1, "combining_run")]
    assert read_references(
        jsonl([{"dialog_id": "a", "references": [["Кот" + edge], [edge + "да"]]}]), dialogues
    )["a"][1] == [edge + "да"]


@pytest.mark.parametrize("ascii_only", [False, True])
def test_a_mark_run_is_found_whether_the_line_writes_its_marks_as_they_are_or_as_escapes(ascii_only):
    """A line is searched as a whole first; a run written with ``\\u`` escapes (absent from the raw line) or
    split by one (``\\u0301`` then raw marks) is still found in its string."""

    def line_bytes(rows):
        return "".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in rows).encode()

    run = "\u0301" * 31
    for answers, bad in ((["Кот", "x" + run], 1), (["Кот" + run, "x"], 0)):
        issues = errors(
            line_bytes([{"dialog_id": "d-1", "answers": answers}, {"dialog_id": "d-2", "answers": [""]}])
        )
        assert [(i.line, i.turn, i.code) for i in issues] == [(1, bad, "combining_run")]
    # 31 marks, the first written as an escape: the raw line holds a run of only 30
    split = json.dumps({"dialog_id": "d-2", "answers": ["х" + run]}, ensure_ascii=False).replace(
        "\u0301", "\\u0301", 1
    )
    issues = errors(line_bytes([{"dialog_id": "d-1", "answers": ["a", "b"]}]) + split.encode() + b"\n")
    assert [(i.line, i.turn, i.code) for i in issues] == [(2, 0, "combining_run")]
    from scorer.metric.nonstarters import may_hold_mark_run

    assert not may_hold_mark_run(json.dumps({"a": ["x" + "\u0301" * 30, "\u0301" * 30]}, ensure_ascii=False))
    assert may_hold_mark_run(json.dumps({"a": ["x" + run]}, ensure_ascii=False))
    assert may_hold_mark_run(json.dumps({"a": ["x" + run]}, ensure_ascii=True))


def test_the_screen_of_mark_runs_agrees_with_the_search_wherever_a_run_starts():
    """``may_hold_mark_run`` looks at one character in 31 first: a run of 31 marks or more is found
    wherever it starts, of whatever marks, and a run of 30 never is."""
    from scorer.metric.nonstarters import long_mark_run, may_hold_mark_run

    for mark in ("\u0301", "\u0344", "\U0001d167"):
        for length in (29, 30, 31, 32, 62):
            for start in range(70):
                text = '{"a": ["' + "к" * start + mark * length + '"]}'
                assert may_hold_mark_run(text) is (long_mark_run(text) is not None) is (length > 30)


def test_dialogue_lines_are_not_screened_for_mark_runs_but_answers_and_references_are(monkeypatch):
    """Only the answers' and references' texts are searched for runs of combining marks: reading
    dialogues.jsonl spends nothing on screening its lines (a run there is only text), the others screen
    each piece read at once, and each line of a piece that may hold one."""
    from scorer.inputs import validation

    screened = []
    monkeypatch.setattr(validation, "may_hold_mark_run", lambda text, *escaped: screened.append(text) or True)
    run = "\u0301" * 31
    dialogue = {"dialog_id": "d-1", "type": "Text2Text", "turns": [[{"type": "text", "content": "x" + run}]]}
    dialogues = read_reference_dialogues((json.dumps(dialogue, ensure_ascii=False) + "\n").encode())
    assert dialogues == [Dialogue("d-1", "Text2Text", 1)] and screened == []
    references = {"dialog_id": "d-1", "references": [["Кот"]]}
    line = json.dumps(references, ensure_ascii=False)
    assert read_references((line + "\n").encode(), dialogues) == {"d-1": [["Кот"]]}
    assert screened == [line + "\n", line]


@pytest.mark.parametrize(
    "text, problem",
    [
        ('{"d": [' + ", ".join(["[1.5, 2]"] * 100) + "]}", None),  # 202 brackets, 3 levels
        ('{"d": [' + "[1], " * 100 + "2]}", None),  # 102 brackets, 3 levels
        ('{"d": [' + "[" * 70 + "]" * 70 + "]}", "JSON nesting is deeper than 64 levels"),
        (
            '{"d": [' + "[1], " * 100 + '"x\\ud800"]}',
            "a string holds an unpaired surrogate",
        ),  # checked with the strings
        ('{"d": [' + "[1], " * 100 + '{"\\udc00": 1}]}', "a key holds an unpaired surrogate"),
        ('[{"a": ' * 40 + "1" + "}]" * 40, "JSON nesting is deeper than 64 levels"),  # dicts and lists
    ],
)
def test_the_tree_check_finds_depth_and_surrogates(text, problem):
    """A document with more brackets than the depth limit is walked: containers only when no string can
    hold a surrogate, every string otherwise."""
    if problem is None:
        assert parse_json(text) == json.loads(text)
    else:
        with pytest.raises(JsonError, match=problem):
            parse_json(text)


def test_float_lists_parse_as_strict_json_does_or_not_at_all():
    """``parse_float_lists`` (the usual ``ppl_output.json``, its numbers parsed by the C scanner) gives what
    ``parse_json`` gives, value and type for value and type, or None and leaves the text to it: on random
    objects of lists of every kind of number, null, text, nesting, repeated keys, escapes and trailing
    matter."""
    import random

    from scorer.inputs.jsonio import JsonError, parse_float_lists, parse_json

    rng = random.Random(11)
    items = ["1.5", "47.209", "-0.0", "0.0", "1e3", "2.5E-3", "5", "-7", "null", "NaN", "Infinity",
             "-Infinity", "1e999", "1" + "0" * 400, "true", '"x"', "[1.5]", "{}", "3.0"]  # fmt: skip
    keys = ['"a"', '"b"', '"d-1"', '"\\u0064"', '"\\ud800"', '"a"']
    texts = ['{"a": [1.5, 2.5]}', '{"a": []}', "{}", '{"a": [1.5]} x', ' {"a": [1.5]} ', "[1.5]"]
    for _ in range(3000):
        entries = [
            f"{rng.choice(keys)}: [{', '.join(rng.choice(items) for _ in range(rng.randint(0, 4)))}]"
            for _ in range(rng.randint(0, 3))
        ]
        texts.append("{" + ", ".join(entries) + "}" + rng.choice(["", "", " ", "\n", " ]"]))
    fast_count = 0
    for text in texts:
        fast = parse_float_lists(text)
        if fast is None:
            continue
        fast_count += 1
        try:
            strict = parse_json(text)
        except JsonError as exc:
            raise AssertionError(f"{text!r}: parsed, but strict JSON says {exc.message}") from None
        assert repr(fast) == repr(strict) and json.dumps(fast) == json.dumps(strict), text
    assert fast_count > 300  # the usual files do take the fast path


def test_perplexities_parsed_at_c_speed_are_judged_as_the_definition_judges_them():
    """``ppl_output.json`` parsed as finite floats and nulls is accepted whole, without a look at each value
    in Python, exactly when each value's own check (at least 1; null only in ``ppl_probes.json``) and the
    counts would accept it."""
    import random

    from scorer.inputs.ppl_output import _all_good, _good_floats

    rng = random.Random(11)
    values = [1.0, 1.5, 0.999, 2.0, 1e300, 0.5, None]
    judged = set()
    for _ in range(3000):
        turns = {f"d{k}": rng.randint(1, 3) for k in range(rng.randint(1, 4))}
        value = {d: [rng.choice(values[: rng.choice([4, 7])]) for _ in range(n)] for d, n in turns.items()}
        if rng.random() < 0.2:  # a list of another length, or another dialogue
            victim = rng.choice(list(value))
            value[victim if rng.random() < 0.5 else victim + "x"] = value.pop(victim)[: rng.randint(0, 4)]
        for nulls in (False, True):
            verdict = _good_floats(value, turns, nulls)
            assert verdict == _all_good(value, turns, nulls), (value, turns, nulls)
            judged.add(verdict)
    assert judged == {True, False}
