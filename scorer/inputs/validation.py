"""Reading and validating the four input files (contract sections 2-3), with bounded work.

Every reader returns a value (what it kept) and puts what is wrong into an
:class:`~scorer.errors.IssueLog`, which keeps the first 100 issues and only
counts the rest. JSONL files are streamed line by line: blank lines, and
rejected lines past the cap, cost no memory; only valid content is kept. A
line's shape is checked by hand (the JSON Schemas in ``scorer/schemas``
describe the same shapes for participants; a test keeps the two in step),
with at most a few issues a line. Whole-file mistakes (another encoding, a
JSON array instead of JSON Lines, a list of perplexities instead of an
object) are said once, first, instead of line after line.
"""

from __future__ import annotations

import difflib
import json
import mmap
import os
import re
from collections.abc import Callable, Container, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from json.decoder import scanstring  # type: ignore[attr-defined]  # public, not in typeshed
from pathlib import Path
from typing import Any, cast

from scorer.errors import Issue, IssueLog, ReferenceDataError, SubmissionInvalid
from scorer.metric.nonstarters import long_mark_run, mark_run_message, may_hold_mark_run
from scorer.metric.text import has_token
from scorer.progress import CHECKING, READING, Progress

from .config import Limits
from .contract import ANSWERS, DIALOGUE_TYPES, DIALOGUES, PPL, SUBMISSION
from .jsonio import (
    JsonError,
    decode_value,
    guess_dialog_id,
    iter_lines,
    line_column,
    lines_from,
    looks_like,
    looks_like_python,
    not_utf8,
    parse_json,
    shorten,
    skip_ws,
)

#: A file's content: its bytes, or the path of a regular file to stream from.
Source = bytes | Path
PART_TYPES = ("text", "image", "audio")
MAX_ISSUES_PER_LINE = 5


@dataclass(frozen=True, slots=True)
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


@cache
def schema(name: str) -> dict[str, Any]:
    """The packaged JSON Schema ``name`` (e.g. ``"submission"``), as documentation of a line's shape."""
    from importlib.resources import files  # here: only documentation and tests read the schemas

    return json.loads(files("scorer").joinpath("schemas", f"{name}.schema.json").read_text("utf-8"))


@contextmanager
def _contents(source: Source) -> Iterator[bytes]:
    """The bytes of ``source``; a file is memory-mapped (only the pages read are loaded)."""
    if isinstance(source, (bytes, bytearray)):
        yield source
        return
    with open(source, "rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            yield b""
            return
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            yield cast(bytes, mapped)  # read as bytes are: slices, find, count, regular expressions


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return {str: "a string", list: "a list", dict: "a JSON object", int: "a number", float: "a number"}[
        type(value)
    ]


# --- line shapes ---------------------------------------------------------------------------

Problem = tuple[str, str, int | None]  # message, code, turn


class _Shape:
    """Collects a line's shape problems (at most a few) in participants' words."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, message: str, code: str, turn: int | None = None) -> bool:
        if len(self.problems) < MAX_ISSUES_PER_LINE:
            self.problems.append((message, code, turn))
        return False

    def full(self) -> bool:
        return len(self.problems) >= MAX_ISSUES_PER_LINE

    def need(self, obj: dict, key: str) -> bool:
        if key not in obj:
            return self.add(f"missing required key {json.dumps(key)}", "schema_required")
        return True

    def typed(self, value: Any, want: type, what: str, name: str, turn: int | None = None) -> bool:
        if type(value) is not want:
            return self.add(f"{name} must be {what}, not {_json_type(value)}", "schema_type", turn)
        return True

    def nonempty_list(self, value: Any, name: str, turn: int | None = None) -> bool:
        if not self.typed(value, list, "a list", name, turn):
            return False
        if not value:
            return self.add(f"{name} must not be an empty list", "schema_minItems", turn)
        return True

    def dialog_id(self, obj: dict) -> None:
        if self.need(obj, "dialog_id") and self.typed(obj["dialog_id"], str, "a string", "dialog_id"):
            if not obj["dialog_id"]:
                self.add("dialog_id must not be an empty string", "schema_minLength")


def _enum(value: Any, allowed: tuple[str, ...], name: str, shape: _Shape, turn: int | None = None) -> None:
    if not isinstance(value, str) or value not in allowed:
        shown = (
            shorten(json.dumps(value, ensure_ascii=False))
            if not isinstance(value, (list, dict))
            else _json_type(value)
        )
        shape.add(
            f"{name} must be one of {', '.join(json.dumps(a) for a in allowed)}, not {shown}",
            "schema_enum",
            turn,
        )


def dialogue_problems(value: Any, limits: Limits, marks_possible: bool = True) -> list[Problem]:
    """The shape problems of a ``dialogues.jsonl`` line. Its texts are not searched for runs of combining
    marks (only the answers and references are): ``marks_possible`` is taken, and unused, to share the
    signature of :func:`reference_problems` and :func:`submission_problems`."""
    shape = _Shape()
    if not shape.typed(value, dict, "a JSON object", "the line"):
        return shape.problems
    shape.dialog_id(value)
    if shape.need(value, "type"):
        _enum(value["type"], DIALOGUE_TYPES, "type", shape)
    if shape.need(value, "turns") and shape.nonempty_list(value["turns"], "turns"):
        for t, turn in enumerate(value["turns"]):
            if shape.full():
                break
            if shape.nonempty_list(turn, f"turns[{t}]", t):
                for p, part in enumerate(turn):
                    name = f"turns[{t}][{p}]"
                    if shape.full() or not shape.typed(part, dict, "a JSON object", name, t):
                        continue
                    if "type" not in part:
                        shape.add(f'{name} is missing required key "type"', "schema_required", t)
                    else:
                        _enum(part["type"], PART_TYPES, f"{name}.type", shape, t)
                    if "content" not in part:
                        shape.add(f'{name} is missing required key "content"', "schema_required", t)
                    else:
                        shape.typed(part["content"], str, "a string", f"{name}.content", t)
    return shape.problems


def _list_line(value: Any, key: str, each: Callable[[_Shape, int, Any], None]) -> list[Problem]:
    """A line ``{"dialog_id": ..., key: [one item per turn]}``; ``each`` checks one turn's item."""
    shape = _Shape()
    if not shape.typed(value, dict, "a JSON object", "the line"):
        return shape.problems
    shape.dialog_id(value)
    if shape.need(value, key) and shape.nonempty_list(value[key], key):
        for t, item in enumerate(value[key]):
            if shape.full():
                break
            each(shape, t, item)
    return shape.problems


def reference_problems(value: Any, limits: Limits, marks_possible: bool = True) -> list[Problem]:
    """The shape problems of an ``answers.jsonl`` line; ``marks_possible`` False (the line's text shows no
    string of it holds a long run of combining marks) skips searching each string for one."""

    def variants_of_turn(shape: _Shape, t: int, variants: Any) -> None:
        if shape.nonempty_list(variants, f"references[{t}]", t):
            for v, text in enumerate(variants):
                if type(text) is not str:
                    shape.typed(text, str, "a string", f"references[{t}][{v}]", t)
                elif marks_possible and (run := long_mark_run(text)) is not None:
                    shape.add(f"references[{t}][{v}]: {mark_run_message(run)}", "combining_run", t)

    return _list_line(value, "references", variants_of_turn)


def submission_problems(value: Any, limits: Limits, marks_possible: bool = True) -> list[Problem]:
    """The shape problems of a ``submission.jsonl`` line; ``marks_possible`` as for
    :func:`reference_problems`."""

    def answer_of_turn(shape: _Shape, t: int, answer: Any) -> None:
        if not shape.typed(answer, str, "a string", f"answers[{t}]", t):
            return
        if len(answer) > limits.max_answer_chars:
            shape.add(
                f"the answer is {len(answer):,} characters long; the limit is {limits.max_answer_chars:,}",
                "schema_maxLength",
                t,
            )
        elif marks_possible:
            run = long_mark_run(answer)
            if run is not None:
                shape.add(f"answers[{t}]: {mark_run_message(run)}", "combining_run", t)

    return _list_line(value, "answers", answer_of_turn)


# --- JSONL lines ---------------------------------------------------------------------------


@dataclass
class _FileState:
    """What reading one JSONL file saw beyond its rows: whether whole-file mistakes hid its ids."""

    unreadable: bool = False
    cut: bool = False  # lines after the error list was full were not checked


def _parsed_lines(
    source: Source,
    file: str,
    log: IssueLog,
    limits: Limits,
    state: _FileState,
    on_bad_id: Callable[[str], None],
    progress: Progress | None = None,
    step: str = "",
    screen_marks: bool = True,
) -> Iterator[tuple[int, Any, bool]]:
    """(line number, value, whether a string of it may hold a long run of combining marks) of every line that
    is valid JSON; everything else goes to ``log``. Without ``screen_marks`` (a file whose texts are not
    searched for runs) no line is screened, and each may hold one.

    ``progress(step, done, size)`` hears the bytes read."""
    bad_encoding = 0
    first_line = True
    report = (lambda done, size: progress(step, done, size)) if progress else None
    with _contents(source) as data:
        for number, raw, after in iter_lines(data, report):
            if log.full:  # the rest only counts: it is not parsed, line by line, long after the list is full
                state.cut = True
                log.not_checked(file, number, 1 + lines_from(data, after))
                if report:
                    report(len(data), len(data))
                return
            if first_line and raw.lstrip(b" \t").startswith(b"["):
                state.unreadable = True
                log.add(
                    Issue(
                        file,
                        "the file holds a JSON array; it must be JSON Lines: one JSON object per "
                        'line, e.g. {"dialog_id": "d-0001", ...}',
                        "json_array",
                        line=number,
                    )
                )
                return
            cut_short = after > len(data)  # the last line, and no line end after it
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                bad_encoding += 1
                if cut_short and exc.reason == "unexpected end of data":
                    guessed = guess_dialog_id(raw[: exc.start].decode("utf-8"))
                    if guessed is not None:
                        on_bad_id(guessed)
                    log.add(_cut_short(file, number, shorten(guessed) if guessed else None))
                    continue
                if bad_encoding == 1:
                    state.unreadable = True
                    log.add(
                        Issue(
                            file,
                            f"the file is not valid UTF-8 (bad byte at column {exc.start + 1})"
                            f"{looks_like(raw)}; save it as UTF-8",
                            "not_utf8",
                            line=number,
                            column=exc.start + 1,
                        )
                    )
                if first_line and raw.startswith((b"\xff\xfe", b"\xfe\xff")):
                    # UTF-16 throughout: its other "lines" would only repeat the message as JSON errors
                    return
                first_line = False
                continue
            first_line = False
            try:
                value = parse_json(text, limits.max_json_depth)
            except JsonError as exc:
                guessed = guess_dialog_id(text)
                if guessed is not None:
                    on_bad_id(guessed)
                if cut_short and (
                    exc.pos is None or exc.pos >= len(text.rstrip()) - 1 or "Unterminated" in exc.message
                ):
                    log.add(_cut_short(file, number, shorten(guessed) if guessed else None))
                    continue
                hint = (
                    "; the line looks like a Python dict written with str(): write each line with "
                    "json.dumps(...) (double quotes), not str()"
                    if looks_like_python(text)
                    else ""
                )
                log.add(
                    Issue(
                        file,
                        exc.message + hint,
                        "bad_json",
                        line=number,
                        column=None if exc.pos is None else exc.pos + 1,
                        dialog_id=shorten(guessed) if guessed else None,
                    )
                )
                continue
            yield number, value, may_hold_mark_run(text) if screen_marks else True


def _counted(n: int, one: str, many: str | None = None) -> str:
    """``1 turn``, ``2 turns``: a count with its noun."""
    return f"{n:,} {one if n == 1 else many or one + 's'}"


def _did_you_mean(dialog_id: str, known: Iterable[str]) -> str:
    """``"; did you mean 'd-0002'?"`` when one known id is close to a mistyped one (the same numbers with
    other leading zeros, else the one clearly closest of at most :data:`CLOSE_IDS_LOOKED_AT` ids of about its
    length), else ``""``."""
    if len(dialog_id) > 200:
        return ""
    near = [k for k in known if abs(len(k) - len(dialog_id)) <= 2][:CLOSE_IDS_LOOKED_AT]
    same_numbers = [k for k in near if _ZEROS.sub("", k) == _ZEROS.sub("", dialog_id)]
    if len(same_numbers) == 1:  # d-002 for d-0002: the same numbers, other leading zeros
        return f"; did you mean {shorten(same_numbers[0])!r}?"
    found = difflib.get_close_matches(dialog_id, near, n=2, cutoff=0.85)
    if len(found) == 1 or (
        len(found) == 2
        and difflib.SequenceMatcher(None, dialog_id, found[0]).ratio()
        > difflib.SequenceMatcher(None, dialog_id, found[1]).ratio()
    ):
        return f"; did you mean {shorten(found[0])!r}?"
    return ""


#: Leading zeros of a run of digits.
_ZEROS = re.compile(r"(?<!\d)0+(?=\d)")


#: How many known ids a mistyped one is compared with (bounded work on a large test set).
CLOSE_IDS_LOOKED_AT = 5000


def _cut_short(file: str, number: int, dialog_id: str | None = None) -> Issue:
    """The last line of a file that stops in its middle (no line end, and not whole JSON or UTF-8)."""
    return Issue(
        file,
        "the file ends in the middle of this line: it looks cut short (an interrupted upload or copy); "
        "upload or copy the whole file again",
        "truncated",
        line=number,
        dialog_id=dialog_id,
    )


def _shaped_lines(
    source: Source,
    file: str,
    log: IssueLog,
    limits: Limits,
    state: _FileState,
    problems: Callable[[Any, Limits, bool], list[Problem]],
    mentioned: set[str] | None = None,
    known: dict | None = None,
    progress: Progress | None = None,
    step: str = "",
    screen_marks: bool = True,
) -> Iterator[tuple[int, dict]]:
    """Lines of the right shape; ``mentioned`` collects the known dialog_ids of every line, good or bad;
    ``screen_marks`` as for :func:`_parsed_lines`."""

    def note(dialog_id: Any) -> None:
        if mentioned is not None and isinstance(dialog_id, str) and (known is None or dialog_id in known):
            mentioned.add(dialog_id)

    any_line = False
    by_number: dict[str, list[str]] = {}  # known ids by their number, made when first needed
    for number, value, marks_possible in _parsed_lines(
        source, file, log, limits, state, note, progress, step, screen_marks
    ):
        any_line = True
        dialog_id = value.get("dialog_id") if isinstance(value, dict) else None
        note(dialog_id)
        found = problems(value, limits, marks_possible)
        if not found:
            yield number, value
            continue
        meant = _meant(dialog_id, known, by_number)
        if meant is not None:  # a number for a known id's number: that dialogue is not also "missing"
            note(meant)
        shown = shorten(dialog_id) if isinstance(dialog_id, str) and dialog_id else None
        for message, code, turn in found:
            if meant is not None and message.startswith("dialog_id must be a string"):
                message += f" (write it as the string {json.dumps(meant, ensure_ascii=False)})"
            log.add(Issue(file, message, code, line=number, dialog_id=shown, turn=turn))
    if not any_line and not state.unreadable and not log:
        state.unreadable = True
        log.add(Issue(file, "the file holds no JSON lines", "empty_file"))


def _meant(dialog_id: Any, known: dict | None, by_number: dict[str, list[str]]) -> str | None:
    """The one known dialog_id a number given as a line's dialog_id stands for (``2`` for ``"d-0002"``:
    the same digits, leading zeros aside), else None; ``by_number`` is filled on first use."""
    if known is None or isinstance(dialog_id, bool) or not isinstance(dialog_id, int) or dialog_id < 0:
        return None
    if not by_number:
        for k in known:
            by_number.setdefault(_ZEROS.sub("", "".join(re.findall(r"\d+", k))), []).append(k)
    found = by_number.get(str(dialog_id), [])
    return found[0] if len(found) == 1 else None


def _missing(file: str, expected: Iterable[str], present: Container[str], log: IssueLog, what: str) -> None:
    """A missing_id issue for every expected dialog_id not in ``present``."""
    for dialog_id in expected:
        if dialog_id not in present:
            log.add(
                Issue(file, f"dialogue of dialogues.jsonl {what}", "missing_id", dialog_id=shorten(dialog_id))
            )


def located(number: int, dialog_id: str) -> dict[str, Any]:
    """Where a line's issue is: its number and (shortened) dialog_id, as :class:`Issue` takes them."""
    return dict(line=number, dialog_id=shorten(dialog_id))


def _duplicate(file: str, number: int, first: int, dialog_id: str) -> Issue:
    return Issue(
        file,
        f"dialog_id appears again (first on line {first}); give each dialogue exactly one line",
        "duplicate_id",
        line=number,
        dialog_id=shorten(dialog_id),
    )


# --- reference data -------------------------------------------------------------------------


def read_dialogues(
    source: Source, limits: Limits = Limits(), progress: Progress | None = None
) -> list[Dialogue]:
    """Parse ``dialogues.jsonl``; raises :class:`ReferenceDataError` with every issue."""
    log = IssueLog()
    lines: dict[str, int] = {}
    dialogues = []
    for number, value in _shaped_lines(
        source,
        DIALOGUES,
        log,
        limits,
        _FileState(),
        dialogue_problems,
        progress=progress,
        step=f"{READING} {DIALOGUES}",
        screen_marks=False,
    ):
        dialog_id = value["dialog_id"]
        if dialog_id in lines:
            log.add(_duplicate(DIALOGUES, number, lines[dialog_id], dialog_id))
            continue
        lines[dialog_id] = number
        dialogues.append(Dialogue(dialog_id, value["type"], len(value["turns"])))
    if log:
        raise ReferenceDataError(log)
    return dialogues


def read_references(
    source: Source, dialogues: list[Dialogue], limits: Limits = Limits(), progress: Progress | None = None
) -> dict[str, list[list[str]]]:
    """Parse ``answers.jsonl`` against the dialogues; raises :class:`ReferenceDataError`."""
    log = IssueLog()
    known = {d.dialog_id: d for d in dialogues}
    mentioned: set[str] = set()
    lines: dict[str, int] = {}
    references: dict[str, list[list[str]]] = {}
    state = _FileState()
    for number, value in _shaped_lines(
        source,
        ANSWERS,
        log,
        limits,
        state,
        reference_problems,
        mentioned,
        known,
        progress,
        f"{READING} {ANSWERS}",
    ):
        dialog_id, refs = value["dialog_id"], value["references"]
        if dialog_id not in known:
            log.add(
                Issue(
                    ANSWERS, "dialog_id is not in dialogues.jsonl", "unknown_id", **located(number, dialog_id)
                )
            )
            continue
        if dialog_id in lines:
            log.add(_duplicate(ANSWERS, number, lines[dialog_id], dialog_id))
            continue
        lines[dialog_id] = number
        if len(refs) != known[dialog_id].n_turns:
            log.add(
                Issue(
                    ANSWERS,
                    f"{len(refs)} turns of references, but the dialogue has {known[dialog_id].n_turns} turns",
                    "turn_count",
                    **located(number, dialog_id),
                )
            )
            continue
        for turn, variants in enumerate(refs):
            if not any(map(has_token, variants)):
                log.add(
                    Issue(
                        ANSWERS,
                        "no reference variant of this turn has a word token",
                        "empty_reference",
                        turn=turn,
                        **located(number, dialog_id),
                    )
                )
        references[dialog_id] = refs
    if not (state.unreadable or state.cut):
        _missing(ANSWERS, known, mentioned, log, "has no references")
    if log:
        raise ReferenceDataError(log)
    return references


# --- submission -----------------------------------------------------------------------------


def check_submission(
    dialogues: list[Dialogue],
    submission: Source,
    ppl: Source,
    limits: Limits = Limits(),
    names: tuple[str, str] = (SUBMISSION, PPL),
    progress: Progress | None = None,
) -> Submission:
    """Validate both submission files against the dialogues.

    Returns the :class:`Submission` or raises :class:`SubmissionInvalid`
    holding the issues of both files (the first 100, and how many more).
    ``names`` are the file names messages use; ``progress`` hears the bytes
    checked of each.
    """
    log = IssueLog()
    warnings: list[Issue] = []
    turns = {d.dialog_id: d.n_turns for d in dialogues}
    try:
        answers = _check_answers(submission, names[0], turns, limits, log, warnings, progress)
        size = _size(ppl) if progress else 0
        if progress:
            progress(f"{CHECKING} {names[1]}", 0, size)
        if log.full:  # nothing more would be listed: the perplexities are only counted, not checked
            with _contents(ppl) as data:
                log.not_checked(names[1], 1, lines_from(data, 0))
            perplexities: dict[str, list[float]] = {}
        else:
            perplexities = _check_ppl(ppl, names[1], turns, limits, log)
        if progress:
            progress(f"{CHECKING} {names[1]}", size, size)
    except MemoryError:
        raise SubmissionInvalid(
            [
                Issue(
                    names[0],
                    f"reading the submission ran out of memory; files are limited to "
                    f"{limits.max_file_mib} MiB and answers to "
                    f"{limits.max_answer_chars:,} characters",
                    "out_of_memory",
                )
            ]
        ) from None
    if log:
        raise SubmissionInvalid(log, warnings)
    return Submission(answers, perplexities, warnings)


def _check_answers(
    source: Source,
    file: str,
    turns: dict[str, int],
    limits: Limits,
    log: IssueLog,
    warnings: list[Issue],
    progress: Progress | None = None,
) -> dict[str, list[str]]:
    mentioned: set[str] = set()
    lines: dict[str, int] = {}
    answers: dict[str, list[str]] = {}
    state = _FileState()
    for number, value in _shaped_lines(
        source,
        file,
        log,
        limits,
        state,
        submission_problems,
        mentioned,
        turns,
        progress,
        f"{CHECKING} {file}",
    ):
        dialog_id = value["dialog_id"]
        if dialog_id not in turns:
            log.add(
                Issue(
                    file,
                    "unknown dialog_id: it is not in dialogues.jsonl; remove the line or fix the id"
                    + ("" if log.full else _did_you_mean(dialog_id, turns)),
                    "unknown_id",
                    **located(number, dialog_id),
                )
            )
            continue
        if dialog_id in lines:
            log.add(_duplicate(file, number, lines[dialog_id], dialog_id))
            continue
        lines[dialog_id] = number
        if len(value) > 2 and len(warnings) < 100:  # keys beyond the two the shape check found
            extra = sorted(set(value) - {"dialog_id", "answers"})
            warnings.append(
                Issue(
                    file,
                    f"unknown key(s) ignored: {', '.join(shorten(k, 40) for k in extra[:5])}",
                    "extra_keys",
                    **located(number, dialog_id),
                )
            )
        given, expected = len(value["answers"]), turns[dialog_id]
        if given != expected:
            log.add(
                Issue(
                    file,
                    f"{_counted(given, 'answer')} given, but the dialogue has {_counted(expected, 'turn')}; "
                    "give one string per turn",
                    "turn_count",
                    **located(number, dialog_id),
                )
            )
            continue
        answers[dialog_id] = value["answers"]
    if not (state.unreadable or state.cut):
        _missing(file, turns, mentioned, log, "has no line; add one with one answer per turn")
    return answers


def _size(source: Source) -> int:
    return len(source) if isinstance(source, (bytes, bytearray)) else os.stat(source).st_size


def _read_all(source: Source) -> bytes:
    if isinstance(source, (bytes, bytearray)):
        return bytes(source)
    with open(source, "rb") as fh:
        return fh.read()


def _check_ppl(
    source: Source, file: str, turns: dict[str, int], limits: Limits, log: IssueLog
) -> dict[str, list[float]]:
    data = _read_all(source)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        log.add(not_utf8(file, data, exc))
        return {}
    del data
    if text.count(",") <= _most_commas(turns):  # else it cannot be valid: straight to the located scan
        try:
            value = parse_json(text, limits.max_json_depth)
        except JsonError:
            value = None
        if isinstance(value, dict) and _all_good(value, turns):
            return {k: [float(p) for p in v] for k, v in value.items()}
        del value
    try:
        return _scan_ppl(text, file, turns, log)
    except _ListFull as full:  # the rest only counts once the error list is full
        line = line_column(text, full.pos)[0]
        log.not_checked(file, line, text.count("\n", full.pos) + 1)
        return {}


def _most_commas(turns: dict[str, int]) -> int:
    """The most commas a valid ``ppl_output.json`` can hold: between values and entries, and in the ids."""
    return sum(turns.values()) + sum(dialog_id.count(",") for dialog_id in turns)


class _ListFull(Exception):
    """The error list is full at character ``pos`` of the perplexities: the scan stops there."""

    def __init__(self, pos: int):
        super().__init__(pos)
        self.pos = pos


def good_ppl(p: Any) -> bool:
    return (type(p) is float or type(p) is int) and p >= 1


def _all_good(value: dict, turns: dict[str, int]) -> bool:
    return len(value) == len(turns) and all(
        type(v) is list and len(v) == turns.get(k, -1) and all(map(good_ppl, v)) for k, v in value.items()
    )


def _scan_ppl(text: str, file: str, turns: dict[str, int], log: IssueLog) -> dict[str, list[float]]:
    """Walk ``{"id": [p, ...], ...}`` keeping positions, so every issue has its line and column."""

    def issue(
        message: str, code: str, pos: int, dialog_id: str | None = None, turn: int | None = None
    ) -> None:
        if log.full:
            raise _ListFull(pos)
        line, column = line_column(text, pos)
        log.add(
            Issue(
                file,
                message,
                code,
                line=line,
                column=column,
                dialog_id=shorten(dialog_id) if dialog_id is not None else None,
                turn=turn,
            )
        )

    def syntax(pos: int, what: str) -> dict[str, list[float]]:
        issue(f"not valid JSON: {what}", "bad_json", min(pos, len(text)))
        return {}

    pos = skip_ws(text, 0)
    if pos == len(text):
        return syntax(pos, "the file is empty")
    if text[pos] != "{":
        if text[pos] == "[":
            issue(
                "the file holds a list; it must be one JSON object mapping each dialog_id to its list of "
                'perplexities, e.g. {"d-0001": [3.71, 5.2]}',
                "ppl_not_object",
                pos,
            )
        else:
            try:
                value, _ = decode_value(text, pos)
                shown = _json_type(value)
            except JsonError:
                shown = "not valid JSON"
            issue(
                f"the file must be one JSON object mapping each dialog_id to its list of perplexities, "
                f"not {shown}",
                "ppl_not_object",
                pos,
            )
        return {}
    found: dict[str, list[float]] = {}
    seen: set[str] = set()
    pos = skip_ws(text, pos + 1)
    if text.startswith("}", pos):
        pos += 1
    else:
        while True:
            if not text.startswith('"', pos):
                return syntax(pos, "expected a dialog_id in double quotes")
            key_pos = pos
            try:
                dialog_id, pos = scanstring(text, pos + 1)
            except ValueError:
                return syntax(key_pos, "a dialog_id string is not closed or has a bad escape")
            pos = skip_ws(text, pos)
            if not text.startswith(":", pos):
                return syntax(pos, "expected ':' after the dialog_id")
            pos = skip_ws(text, pos + 1)
            repeated = dialog_id in seen
            seen.add(dialog_id)
            if repeated:
                issue(
                    "dialog_id is repeated in the object; give each dialogue one list",
                    "duplicate_id",
                    key_pos,
                    dialog_id,
                )
            count, end, values = _scan_values(text, pos, dialog_id, issue, turns.get(dialog_id, 0))
            if end is None:
                return {}
            pos = end
            if not repeated:
                if dialog_id not in turns:
                    issue(
                        "unknown dialog_id: it is not in dialogues.jsonl"
                        + ("" if log.full else _did_you_mean(dialog_id, turns)),
                        "unknown_id",
                        key_pos,
                        dialog_id,
                    )
                elif count is not None and count != turns[dialog_id]:
                    issue(
                        f"{_counted(count, 'perplexity', 'perplexities')} given, but the dialogue has "
                        f"{_counted(turns[dialog_id], 'turn')}; "
                        "give one number per turn",
                        "turn_count",
                        key_pos,
                        dialog_id,
                    )
                elif values is not None:
                    found[dialog_id] = values
            pos = skip_ws(text, pos)
            if text.startswith(",", pos):
                pos = skip_ws(text, pos + 1)
                continue
            if text.startswith("}", pos):
                pos += 1
                break
            return syntax(pos, "expected ',' or '}' after a list of perplexities")
    if skip_ws(text, pos) != len(text):
        return syntax(skip_ws(text, pos), "extra data after the object")
    for dialog_id in turns:
        if dialog_id not in seen:
            log.add(
                Issue(
                    file,
                    "dialogue of dialogues.jsonl has no perplexities; add a list with one number per turn",
                    "missing_id",
                    dialog_id=shorten(dialog_id),
                )
            )
    return found


_NUMBERISH = re.compile(r"-?(?:Infinity|NaN|[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)")


def _scan_values(
    text: str, pos: int, dialog_id: str, issue: Callable[..., None], expected: int
) -> tuple[int | None, int | None, list[float] | None]:
    """The list at ``pos``: (its length or None when not a list, end or None on a syntax error,
    the values when all are valid else None).

    Past ``expected`` values (the dialogue's turns) the list is already wrong: its values are counted, not
    checked one by one, up to its closing bracket."""
    if not text.startswith("[", pos):
        try:
            value, end = decode_value(text, pos)
        except JsonError as exc:
            issue(exc.message, "bad_json", exc.pos if exc.pos is not None else pos, dialog_id)
            return None, None, None
        issue(
            f"the perplexities must be a list with one number per turn, not {_json_type(value)}",
            "schema_type",
            pos,
            dialog_id,
        )
        return None, end, None
    values: list[float] = []
    ok = True
    pos = skip_ws(text, pos + 1)
    if text.startswith("]", pos):
        issue("the list of perplexities must not be empty", "schema_minItems", pos, dialog_id)
        return 0, pos + 1, None
    turn = 0
    while True:
        start = pos
        try:
            value, pos = decode_value(text, pos)
        except JsonError as exc:
            number = _NUMBERISH.match(text, start)
            if number is None:
                issue(exc.message, "bad_json", exc.pos if exc.pos is not None else start, dialog_id, turn)
                return None, None, None
            issue(exc.message, "bad_number", start, dialog_id, turn)
            pos, value, ok = number.end(), None, False
        else:
            if not good_ppl(value):
                ok = False
                if type(value) in (int, float):
                    issue(
                        f"perplexity {value!r} is below 1; a perplexity is always at least 1",
                        "schema_minimum",
                        start,
                        dialog_id,
                        turn,
                    )
                else:
                    shown = _json_type(value)
                    issue(f"perplexity must be a number, not {shown}", "schema_type", start, dialog_id, turn)
        if ok:
            values.append(float(value))
        turn += 1
        pos = skip_ws(text, pos)
        if turn > expected and text.startswith(",", pos):
            end = text.find("]", pos)
            if end < 0:
                issue("not valid JSON: the list of perplexities is not closed", "bad_json", pos, dialog_id)
                return None, None, None
            turn += text.count(",", pos, end)
            return turn, end + 1, None
        if text.startswith(",", pos):
            pos = skip_ws(text, pos + 1)
            continue
        if text.startswith("]", pos):
            return turn, pos + 1, values if ok else None
        issue("not valid JSON: expected ',' or ']' in the list of perplexities", "bad_json", pos, dialog_id)
        return None, None, None
