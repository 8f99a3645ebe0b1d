"""Reading and validating the JSON Lines input files (contract sections 2-3): dialogues, references and the
answers of a submission; :func:`check_submission` checks both submission files (``ppl_output.json`` is read by
:mod:`scorer.inputs.ppl_output`), with bounded work.

Every reader returns a value (what it kept) and puts what is wrong into an
:class:`~scorer.errors.IssueLog`, which keeps the first 100 issues and only
counts the rest. JSONL files are streamed line by line: blank lines, and
rejected lines past the cap, cost no memory; only valid content is kept. A
line's shape is checked by hand (the JSON Schemas in ``scorer/schemas``
describe the same shapes for participants; a test keeps the two in step),
with at most a few issues a line. Whole-file mistakes (another encoding, a
JSON array instead of JSON Lines) are said once, first, instead of line after line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from scorer.errors import Issue, IssueLog, ReferenceDataError, SubmissionInvalid
from scorer.metric.nonstarters import long_mark_run, mark_run_message, may_hold_mark_run
from scorer.metric.text import has_token
from scorer.progress import CHECKING, READING, Progress

from .config import Limits
from .contract import ANSWERS, DIALOGUE_TYPES, DIALOGUES, PPL, PROBES, SUBMISSION
from .jsonio import (
    JsonError,
    guess_dialog_id,
    iter_lines,
    lines_from,
    looks_like_python,
    not_utf8,
    parse_json,
    plain_lines,
    shorten,
)
from .ppl_output import check_ppl, check_ppl_probes
from .sources import ZEROS, Content, contents, counted, did_you_mean, json_type, located, size

PART_TYPES = ("text", "image", "audio")
MAX_ISSUES_PER_LINE = 5
#: U+FFFD, what a decoder puts in place of bytes that are not whole UTF-8 characters.
REPLACEMENT = "\ufffd"
#: At most this many answers made mostly of U+FFFD are listed one by one; one more warning counts them all.
MAX_REPLACEMENT_LISTED = 5


@dataclass(frozen=True, slots=True)
class Dialogue:
    dialog_id: str
    type: str
    n_turns: int


@dataclass(frozen=True)
class Submission:
    """A valid submission: answers and perplexities by dialog_id, one per turn; ``probes``, when read, the
    probe perplexities of ``ppl_probes.json`` (None for a turn without a probe; contract section 10)."""

    answers: dict[str, list[str]]
    ppl: dict[str, list[float]]
    warnings: list[Issue] = field(default_factory=list)
    probes: dict[str, list[float | None]] | None = None
    #: The digests of ``ppl_targets.json`` beside the perplexities, when read (the organizer's commands,
    #: contract section 10): each dialogue's targets when its perplexities were computed.
    targets: dict[str, str] | None = None
    #: Which configuration checked it (contract section 7): ``--config PATH``, ``config.toml in DIR`` or
    #: ``built-in default``.
    config_source: str = "built-in default"


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

    def need(self, obj: dict[str, Any], key: str) -> bool:
        if key not in obj:
            return self.add(f"missing required key {json.dumps(key)}", "schema_required")
        return True

    def typed(self, value: Any, want: type, what: str, name: str, turn: int | None = None) -> bool:
        if type(value) is not want:
            return self.add(f"{name} must be {what}, not {json_type(value)}", "schema_type", turn)
        return True

    def nonempty_list(self, value: Any, name: str, turn: int | None = None) -> bool:
        if not self.typed(value, list, "a list", name, turn):
            return False
        if not value:
            return self.add(f"{name} must not be an empty list", "schema_minItems", turn)
        return True

    def dialog_id(self, obj: dict[str, Any]) -> None:
        if self.need(obj, "dialog_id") and self.typed(obj["dialog_id"], str, "a string", "dialog_id"):
            if not obj["dialog_id"]:
                self.add("dialog_id must not be an empty string", "schema_minLength")


def _enum(value: Any, allowed: tuple[str, ...], name: str, shape: _Shape, turn: int | None = None) -> None:
    if not isinstance(value, str) or value not in allowed:
        shown = (
            shorten(json.dumps(value, ensure_ascii=False))
            if not isinstance(value, (list, dict))
            else json_type(value)
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
            # a non-empty list, and a part of both keys, a type of the contract's and a string, have
            # nothing to say: they pass without their names being written
            if (type(turn) is list and turn) or shape.nonempty_list(turn, f"turns[{t}]", t):
                for p, part in enumerate(turn):
                    if (
                        type(part) is dict
                        and type(part.get("content")) is str
                        and type(kind := part.get("type")) is str
                        and kind in PART_TYPES
                    ):
                        continue
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
        if (type(variants) is list and variants) or shape.nonempty_list(variants, f"references[{t}]", t):
            for v, text in enumerate(variants):
                if type(text) is not str:
                    shape.typed(text, str, "a string", f"references[{t}][{v}]", t)
                elif marks_possible and (run := long_mark_run(text)) is not None:
                    shape.add(f"references[{t}][{v}]: {mark_run_message(run)}", "combining_run", t)

    return _list_line(value, "references", variants_of_turn)


def submission_problems(value: Any, limits: Limits, marks_possible: bool = True) -> list[Problem]:
    """The shape problems of a ``submission.jsonl`` line; ``marks_possible`` as for
    :func:`reference_problems`. A line with a dialog_id and answers, each a string within the limit, and no
    run of marks possible, has none: it passes without its answers being looked at one by one."""
    answers = value.get("answers") if type(value) is dict else None
    if (
        not marks_possible
        and type(answers) is list
        and answers
        and type(dialog_id := value.get("dialog_id")) is str
        and dialog_id
        and set(map(type, answers)) == {str}
        and max(map(len, answers)) <= limits.max_answer_chars
    ):
        return []

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
    source: Content,
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
    report = (lambda done, size: progress(step, done, size)) if progress else None
    with contents(source) as data:
        start: tuple[int, int, int] | None = None
        for after, next_report, text, rows, escaped in plain_lines(data, limits.max_json_depth, report):
            # a piece without a run has no line with one
            marks = not screen_marks or may_hold_mark_run(text, escaped)
            for number, value, line in rows:
                if log.full:  # as below: the rest only counts
                    state.cut = True
                    log.not_checked(file, number, 1 + rows[-1][0] - number + lines_from(data, after))
                    if report:
                        report(len(data), len(data))
                    return
                yield number, value, may_hold_mark_run(line) if marks and screen_marks else marks
            start = (after, rows[-1][0] + 1, next_report)
        first_line = start is None
        for number, raw, after in iter_lines(data, report, start=start):
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
                    log.add(not_utf8(file, raw, exc, number))
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
    source: Content,
    file: str,
    log: IssueLog,
    limits: Limits,
    state: _FileState,
    problems: Callable[[Any, Limits, bool], list[Problem]],
    mentioned: set[str] | None = None,
    known: dict[str, Any] | None = None,
    progress: Progress | None = None,
    step: str = "",
    screen_marks: bool = True,
) -> Iterator[tuple[int, dict[str, Any]]]:
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


def _meant(dialog_id: Any, known: dict[str, Any] | None, by_number: dict[str, list[str]]) -> str | None:
    """The one known dialog_id a number given as a line's dialog_id stands for (``2`` for ``"d-0002"``:
    the same digits, leading zeros aside), else None; ``by_number`` is filled on first use."""
    if known is None or isinstance(dialog_id, bool) or not isinstance(dialog_id, int) or dialog_id < 0:
        return None
    if not by_number:
        for k in known:
            by_number.setdefault(ZEROS.sub("", "".join(re.findall(r"\d+", k))), []).append(k)
    found = by_number.get(str(dialog_id), [])
    return found[0] if len(found) == 1 else None


def _missing(file: str, expected: Iterable[str], present: Container[str], log: IssueLog, what: str) -> None:
    """A missing_id issue for every expected dialog_id not in ``present``."""
    for dialog_id in expected:
        if dialog_id not in present:
            log.add(
                Issue(file, f"dialogue of dialogues.jsonl {what}", "missing_id", dialog_id=shorten(dialog_id))
            )


def _duplicate(file: str, number: int, first: int, dialog_id: str) -> Issue:
    return Issue(
        file,
        f"dialog_id appears again (first on line {first}); give each dialogue exactly one line",
        "duplicate_id",
        line=number,
        dialog_id=shorten(dialog_id),
    )


# --- reference data -------------------------------------------------------------------------


def read_reference_dialogues(
    source: Content,
    limits: Limits = Limits(),
    progress: Progress | None = None,
    *,
    log: IssueLog | None = None,
    mentioned: set[str] | None = None,
    parts: dict[str, list[list[dict[str, str]]]] | None = None,
) -> list[Dialogue]:
    """Parse ``dialogues.jsonl``; raises :class:`ReferenceDataError` with every issue, or, given a ``log``,
    adds them to it and returns the valid dialogues (so that ``answers.jsonl`` is checked in the same run);
    ``mentioned`` then collects the dialog_id of every line, good or bad; ``parts`` each valid dialogue's
    turns, each a list of parts with their ``type`` and ``content`` alone (what a team's code is given)."""
    own = log is None
    log = IssueLog() if log is None else log
    lines: dict[str, int] = {}
    dialogues = []
    for number, value in _shaped_lines(
        source,
        DIALOGUES,
        log,
        limits,
        _FileState(),
        dialogue_problems,
        mentioned,
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
        if parts is not None:
            parts[dialog_id] = [
                [{"type": p["type"], "content": p["content"]} for p in t] for t in value["turns"]
            ]
    if own and log:
        raise ReferenceDataError(log)
    return dialogues


def read_references(
    source: Content,
    dialogues: list[Dialogue],
    limits: Limits = Limits(),
    progress: Progress | None = None,
    *,
    log: IssueLog | None = None,
    rejected: Container[str] = (),
    tokenised: Callable[[str], list[str]] | None = None,
) -> dict[str, list[list[str]]]:
    """Parse ``answers.jsonl`` against the dialogues; raises :class:`ReferenceDataError` with every issue,
    those already in ``log`` (``dialogues.jsonl``'s) first. ``rejected``: the ids of dialogues whose line of
    ``dialogues.jsonl`` has errors, whose answers are checked for their shape alone (never called unknown or
    missing). ``tokenised``: a text's tokens, where the caller keeps them (a turn without a word token is
    one whose variants all have none), else each variant is looked at by ``has_token``."""
    log = IssueLog() if log is None else log
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
        if dialog_id not in known and dialog_id in rejected:
            continue
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
        has_word = tokenised or has_token
        for turn, variants in enumerate(refs):
            if not any(map(has_word, variants)):
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
    submission: Content,
    ppl: Content | None,
    limits: Limits = Limits(),
    names: tuple[str, str] = (SUBMISSION, PPL),
    progress: Progress | None = None,
) -> Submission:
    """Validate both submission files against the dialogues; ``ppl`` None: the answers alone (a code
    competition's scoring step, whose perplexities the team's code computes later), the submission's
    perplexities then empty.

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
        if ppl is None:
            if log:
                raise SubmissionInvalid(log, warnings)
            return Submission(answers, {}, warnings)
        ppl_size = size(ppl) if progress else 0
        if progress:
            progress(f"{CHECKING} {names[1]}", 0, ppl_size)
        if log.full:  # nothing more would be listed: the perplexities are only counted, not checked
            with contents(ppl) as data:
                log.not_checked(names[1], 1, lines_from(data, 0))
            perplexities: dict[str, list[float]] = {}
        else:
            perplexities = check_ppl(ppl, names[1], turns, limits, log)
        if progress:
            progress(f"{CHECKING} {names[1]}", ppl_size, ppl_size)
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


def check_probes(
    dialogues: list[Dialogue], probes: Content, limits: Limits = Limits()
) -> dict[str, list[float | None]]:
    """Validate ``ppl_probes.json`` (contract section 10) against the dialogues: ``ppl_output.json``'s shape,
    ``null`` for a turn without a probe. It comes with the upload, so it is read as untrusted as the upload
    is; raises :class:`SubmissionInvalid` listing its issues (the first 100, and how many more)."""
    log = IssueLog()
    try:
        found = check_ppl_probes(probes, PROBES, {d.dialog_id: d.n_turns for d in dialogues}, limits, log)
    except MemoryError:
        raise SubmissionInvalid(
            [
                Issue(
                    PROBES,
                    f"reading it ran out of memory; files are limited to {limits.max_file_mib} MiB",
                    "out_of_memory",
                )
            ]
        ) from None
    if log:
        raise SubmissionInvalid(log)
    return found


def _check_answers(
    source: Content,
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
    replaced = _Replaced()
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
                    + ("" if log.full else did_you_mean(dialog_id, turns)),
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
                    f"{counted(given, 'answer')} given, but the dialogue has {counted(expected, 'turn')}; "
                    "give one string per turn",
                    "turn_count",
                    **located(number, dialog_id),
                )
            )
            continue
        answers[dialog_id] = value["answers"]
        for turn, answer in enumerate(value["answers"]):
            if REPLACEMENT in answer and (what := _replaced(answer)) is not None:
                replaced.count += 1
                if len(replaced.listed) < MAX_REPLACEMENT_LISTED:
                    issue = Issue(
                        file, what, "replacement_characters", turn=turn, **located(number, dialog_id)
                    )
                    replaced.listed.append(issue)
    if not (state.unreadable or state.cut):
        _missing(file, turns, mentioned, log, "has no line; add one with one answer per turn")
    warnings[:0] = replaced.warnings(file)
    return answers


def _replaced(answer: str) -> str | None:
    """What is wrong with an answer whose non-space characters are more than half U+FFFD; None for any
    other."""
    found, visible = answer.count(REPLACEMENT), len("".join(answer.split()))
    if 2 * found <= visible:
        return None
    if found == visible:
        return f"the answer holds nothing but U+FFFD replacement characters ({found:,}): its METEOR is 0"
    return f"{found:,} of the answer's {visible:,} non-space characters are U+FFFD replacement characters"


@dataclass
class _Replaced:
    """The answers made mostly or only of U+FFFD: how many, and the first few, located."""

    count: int = 0
    listed: list[Issue] = field(default_factory=list)

    def warnings(self, file: str) -> list[Issue]:
        """The listed answers, then one warning counting them all and saying where they usually come from."""
        if not self.count:
            return []
        which = (
            "listed above" if self.count == len(self.listed) else f"the first {len(self.listed)} listed above"
        )
        return [
            *self.listed,
            Issue(
                file,
                f"{counted(self.count, 'answer')} made mostly or only of U+FFFD replacement characters "
                f"({which}): U+FFFD is no word character and matches nothing, so an answer made only of "
                "them has a METEOR of 0. The cause is usually the model's byte-level tokenizer: its tokens "
                "can cut a character's UTF-8 bytes in half, and decoding them one at a time, or stopping in "
                "the middle of a character, gives U+FFFD; decode all of an answer's tokens at once",
                "replacement_characters",
            ),
        ]
