"""Reading and validating the four input files (SPEC sections 2-3).

Every check collects :class:`~scorer.errors.Issue` objects instead of
stopping at the first; the JSON Schemas in ``scorer/schemas`` give the shape
of each line, the code here the cross-file rules on top of it.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from typing import Any, Iterable

from .config import Limits
from .contract import ANSWERS, DIALOGUE_TYPES, DIALOGUES, PPL, SUBMISSION
from .errors import Issue, ReferenceDataError, SubmissionInvalid
from .jsonio import JsonLine, read_json, read_jsonl, shorten
from .text import has_token



@dataclass(frozen=True)
class Dialogue:
    dialog_id: str
    type: str
    n_turns: int


@dataclass(frozen=True)
class Submission:
    """A valid submission: answers and perplexities by dialog_id, one per turn."""

    answers: dict[str, list[str]]
    ppl: dict[str, list[float]]
    warnings: list[Issue] = field(default_factory=list)


@lru_cache(maxsize=None)
def schema(name: str) -> dict[str, Any]:
    """The packaged JSON Schema ``name`` (e.g. ``"submission"``)."""
    return json.loads(files("scorer").joinpath("schemas", f"{name}.schema.json").read_text("utf-8"))


@lru_cache(maxsize=16)
def _validator(name: str, max_answer_chars: int | None = None):
    from jsonschema import Draft202012Validator

    doc = schema(name)
    if max_answer_chars is not None:
        doc = copy.deepcopy(doc)
        doc["properties"]["answers"]["items"]["maxLength"] = max_answer_chars
    return Draft202012Validator(doc)


_TYPE_WORDS = {"string": "a string", "array": "a list", "object": "a JSON object", "number": "a number"}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return {str: "a string", list: "a list", dict: "a JSON object", int: "a number", float: "a number"}[type(value)]


def _field_name(path: list) -> str:
    name = ""
    for part in path:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name or "the line"


def _is_text(value: Any, max_chars: int | None = None) -> bool:
    return type(value) is str and (max_chars is None or len(value) <= max_chars)


def _is_list_of(value: Any, ok) -> bool:
    return type(value) is list and len(value) > 0 and all(map(ok, value))


def _is_part(value: Any) -> bool:
    return (type(value) is dict and value.get("type") in ("text", "image", "audio")
            and type(value.get("content")) is str)


def _is_perplexity(value: Any) -> bool:
    return (type(value) is float or type(value) is int) and value >= 1


def surely_valid(name: str, value: Any, max_answer_chars: int | None = None) -> bool:
    """A quick test that implies schema ``name`` holds; False only means "ask the schema".

    Lines that pass it skip the JSON Schema validator, which is slow and is
    needed only to describe what is wrong.
    """
    if name == "ppl_output":
        return type(value) is dict and all(_is_list_of(v, _is_perplexity) for v in value.values())
    if type(value) is not dict or not _is_text(value.get("dialog_id")) or not value["dialog_id"]:
        return False
    if name == "submission":
        return _is_list_of(value.get("answers"), lambda a: _is_text(a, max_answer_chars))
    if name == "answers":
        return _is_list_of(value.get("references"), lambda t: _is_list_of(t, _is_text))
    if name == "dialogues":
        return (value.get("type") in DIALOGUE_TYPES
                and _is_list_of(value.get("turns"), lambda t: _is_list_of(t, _is_part)))
    return False


def _schema_issues(name: str, value: Any, file: str, line: int | None,
                   max_answer_chars: int | None = None, per_key_ids: bool = False) -> list[Issue]:
    """Schema errors of one JSON value, each described in participant's words."""
    if surely_valid(name, value, max_answer_chars):
        return []
    issues = []
    dialog_id = value.get("dialog_id") if isinstance(value, dict) and not per_key_ids else None
    dialog_id = dialog_id if isinstance(dialog_id, str) else None
    errors = sorted(_validator(name, max_answer_chars).iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
    for error in errors:
        path = list(error.absolute_path)
        turn = None
        if per_key_ids and path:
            dialog_id, path = str(path[0]), path[1:]
            turn = path[0] if path and isinstance(path[0], int) else None
        elif len(path) >= 2 and path[0] in ("turns", "answers", "references") and isinstance(path[1], int):
            turn = path[1]
        issues.append(Issue(file, _describe(error, path, per_key_ids), f"schema_{error.validator}",
                            line=line, dialog_id=shorten(dialog_id) if dialog_id else None, turn=turn))
    return issues


def _describe(error, path: list, per_key_ids: bool) -> str:
    field_name = ("perplexity" if path else "the list of perplexities") if per_key_ids else _field_name(path)
    v, inst = error.validator, error.instance
    if v == "type":
        want = error.validator_value
        want = " or ".join(_TYPE_WORDS.get(w, w) for w in (want if isinstance(want, list) else [want]))
        return f"{field_name} must be {want}, not {_json_type(inst)}"
    if v == "required":
        missing = [k for k in error.validator_value if k not in inst]
        return f"missing required key {json.dumps(missing[0])}" if missing else error.message
    if v == "minItems":
        return f"{field_name} must not be an empty list"
    if v == "minLength":
        return f"{field_name} must not be an empty string"
    if v == "maxLength":
        return f"the answer is {len(inst):,} characters long; the limit is {error.validator_value:,}"
    if v == "enum":
        allowed = ", ".join(json.dumps(x) for x in error.validator_value)
        return f"{field_name} must be one of {allowed}, not {shorten(json.dumps(inst, ensure_ascii=False))}"
    if v == "minimum":
        return f"{field_name} {inst!r} is below 1; a perplexity is always at least 1"
    return shorten(error.message, 200)


def _lines(data: bytes, file: str, schema_name: str, limits: Limits, issues: list[Issue],
           max_answer_chars: int | None = None, mentioned: set[str] | None = None) -> list[JsonLine]:
    """Schema-valid lines of a JSONL file; everything wrong goes to ``issues``.

    ``mentioned`` collects the dialog_id of every parsed line, valid or not, so a
    dialogue whose line is broken is not also reported as missing.
    """
    good = []
    for item in read_jsonl(data, file, limits.max_json_depth):
        if isinstance(item, Issue):
            issues.append(item)
            if mentioned is not None and item.dialog_id is not None:
                mentioned.add(item.dialog_id)
            continue
        if mentioned is not None and isinstance(item.value, dict) and isinstance(item.value.get("dialog_id"), str):
            mentioned.add(item.value["dialog_id"])
        found = _schema_issues(schema_name, item.value, file, item.line, max_answer_chars)
        if found:
            issues.extend(found)
        else:
            good.append(item)
    if not good and not issues:
        issues.append(Issue(file, "the file holds no JSON lines", "empty_file"))
    return good


def _unique(lines: list[JsonLine], file: str, issues: list[Issue]) -> dict[str, JsonLine]:
    first: dict[str, JsonLine] = {}
    for item in lines:
        dialog_id = item.value["dialog_id"]
        if dialog_id in first:
            issues.append(Issue(file, f"dialog_id appears again (first on line {first[dialog_id].line}); "
                                      "give each dialogue exactly one line", "duplicate_id",
                                line=item.line, dialog_id=shorten(dialog_id)))
        else:
            first[dialog_id] = item
    return first


# --- reference data -------------------------------------------------------------------------


def read_dialogues(data: bytes, limits: Limits = Limits()) -> list[Dialogue]:
    """Parse ``dialogues.jsonl``; raises :class:`ReferenceDataError` with all issues."""
    issues: list[Issue] = []
    lines = _unique(_lines(data, DIALOGUES, "dialogues", limits, issues), DIALOGUES, issues)
    if issues:
        raise ReferenceDataError(issues)
    return [Dialogue(v.value["dialog_id"], v.value["type"], len(v.value["turns"])) for v in lines.values()]


def read_references(data: bytes, dialogues: list[Dialogue], limits: Limits = Limits()) -> dict[str, list[list[str]]]:
    """Parse ``answers.jsonl`` against the dialogues; raises :class:`ReferenceDataError`."""
    issues: list[Issue] = []
    mentioned: set[str] = set()
    lines = _unique(_lines(data, ANSWERS, "answers", limits, issues, mentioned=mentioned), ANSWERS, issues)
    known = {d.dialog_id: d for d in dialogues}
    references: dict[str, list[list[str]]] = {}
    for dialog_id, item in lines.items():
        refs = item.value["references"]
        where = dict(line=item.line, dialog_id=shorten(dialog_id))
        if dialog_id not in known:
            issues.append(Issue(ANSWERS, "dialog_id is not in dialogues.jsonl", "unknown_id", **where))
            continue
        if len(refs) != known[dialog_id].n_turns:
            issues.append(Issue(ANSWERS, f"{len(refs)} turns of references, but the dialogue has "
                                         f"{known[dialog_id].n_turns} turns", "turn_count", **where))
            continue
        for turn, variants in enumerate(refs):
            if not any(map(has_token, variants)):
                issues.append(Issue(ANSWERS, "no reference variant of this turn has a word token",
                                    "empty_reference", turn=turn, **where))
        references[dialog_id] = refs
    _missing(ANSWERS, known, mentioned, issues, "has no references")
    if issues:
        raise ReferenceDataError(issues)
    return references


# --- submission -----------------------------------------------------------------------------


def check_submission(dialogues: list[Dialogue], submission: bytes, ppl: bytes,
                     limits: Limits = Limits()) -> Submission:
    """Validate both submission files against the dialogues.

    Returns the :class:`Submission` or raises :class:`SubmissionInvalid`
    holding every issue found in either file.
    """
    issues: list[Issue] = []
    warnings: list[Issue] = []
    turns = {d.dialog_id: d.n_turns for d in dialogues}
    answers = _check_answers(submission, turns, limits, issues, warnings)
    perplexities = _check_ppl(ppl, turns, limits, issues)
    if issues:
        raise SubmissionInvalid(issues, warnings)
    return Submission(answers, perplexities, warnings)


def _check_answers(data: bytes, turns: dict[str, int], limits: Limits,
                   issues: list[Issue], warnings: list[Issue]) -> dict[str, list[str]]:
    mentioned: set[str] = set()
    lines = _unique(_lines(data, SUBMISSION, "submission", limits, issues, limits.max_answer_chars, mentioned),
                    SUBMISSION, issues)
    answers: dict[str, list[str]] = {}
    for dialog_id, item in lines.items():
        where = dict(line=item.line, dialog_id=shorten(dialog_id))
        extra = sorted(set(item.value) - {"dialog_id", "answers"})
        if extra:
            warnings.append(Issue(SUBMISSION, f"unknown key(s) ignored: {', '.join(shorten(k, 40) for k in extra[:5])}",
                                  "extra_keys", **where))
        if dialog_id not in turns:
            issues.append(Issue(SUBMISSION, "unknown dialog_id: it is not in dialogues.jsonl; remove the line "
                                            "or fix the id", "unknown_id", **where))
            continue
        given, expected = len(item.value["answers"]), turns[dialog_id]
        if given != expected:
            issues.append(Issue(SUBMISSION, f"{given} answer(s) given, but the dialogue has {expected} turn(s); "
                                            "give one string per turn", "turn_count", **where))
            continue
        answers[dialog_id] = item.value["answers"]
    _missing(SUBMISSION, turns, mentioned, issues, "has no line; add one with one answer per turn")
    return answers


def _check_ppl(data: bytes, turns: dict[str, int], limits: Limits, issues: list[Issue]) -> dict[str, list[float]]:
    value, problem = read_json(data, PPL, limits.max_json_depth)
    if problem:
        issues.append(problem)
        return {}
    found = _schema_issues("ppl_output", value, PPL, None, per_key_ids=True)
    if isinstance(value, dict) and not any(i.code == "schema_type" and i.dialog_id is None for i in found):
        bad_ids = {i.dialog_id for i in found}
        perplexities = {}
        for dialog_id, values in value.items():
            where = dict(dialog_id=shorten(dialog_id))
            if dialog_id not in turns:
                found.append(Issue(PPL, "unknown dialog_id: it is not in dialogues.jsonl", "unknown_id", **where))
            elif shorten(dialog_id) in bad_ids:
                continue
            elif len(values) != turns[dialog_id]:
                found.append(Issue(PPL, f"{len(values)} perplexities given, but the dialogue has "
                                        f"{turns[dialog_id]} turn(s); give one number per turn", "turn_count", **where))
            else:
                perplexities[dialog_id] = [float(v) for v in values]
        _missing(PPL, turns, value, found, "has no perplexities; add a list with one number per turn")
        issues.extend(found)
        return perplexities
    issues.extend(found)
    return {}


def _missing(file: str, expected: Iterable[str], present, issues: list[Issue], what: str) -> None:
    """A missing_id issue for every expected dialog_id not in ``present``."""
    for dialog_id in expected:
        if dialog_id not in present:
            issues.append(Issue(file, f"dialogue of dialogues.jsonl {what}", "missing_id",
                                dialog_id=shorten(dialog_id)))
