"""Reading ``ppl_output.json`` (contract sections 2-3): one JSON object mapping each dialog_id to its list of
perplexities, one number of at least 1 per turn; and ``ppl_probes.json`` (contract sections 9-10), its shape
with ``null`` for a turn without a probe (:func:`check_ppl_probes`).

A valid file is parsed whole once. A file that cannot be valid (more commas than a valid one holds, or
a parse that fails or finds a wrong value) is walked by a hand scanner that keeps positions, so that every
issue has its line and column, and that stops listing once the error list is full. ``--ppl-check``
(:mod:`scorer.inputs.ppl_check`) uses :func:`good_ppl` and the same codes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import chain
from json.decoder import scanstring  # type: ignore[attr-defined]  # public, not in typeshed
from typing import Any, cast

from scorer.errors import Issue, IssueLog

from .config import Limits
from .jsonio import (
    JsonError,
    decode_value,
    line_column,
    not_utf8,
    parse_float_lists,
    parse_json,
    shorten,
    skip_ws,
)
from .sources import Content, counted, did_you_mean, json_type, read_all


def check_ppl(
    source: Content, file: str, turns: dict[str, int], limits: Limits, log: IssueLog
) -> dict[str, list[float]]:
    """The perplexities of ``ppl_output.json``; every issue is added to ``log`` (then the result is not
    whole)."""
    return cast(dict[str, list[float]], _check(source, file, turns, limits, log, nulls=False))


def check_ppl_probes(
    source: Content, file: str, turns: dict[str, int], limits: Limits, log: IssueLog
) -> dict[str, list[float | None]]:
    """The probe perplexities of ``ppl_probes.json`` (contract section 10): ``ppl_output.json``'s shape,
    ``null`` for a turn without a probe; every issue added to ``log``, in the words and codes
    :func:`check_ppl` gives."""
    return _check(source, file, turns, limits, log, nulls=True)


def _check(
    source: Content, file: str, turns: dict[str, int], limits: Limits, log: IssueLog, nulls: bool
) -> dict[str, list[float | None]]:
    data = read_all(source)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        log.add(not_utf8(file, data, exc))
        return {}
    del data
    if text.count(",") <= _most_commas(turns):  # else it cannot be valid: straight to the located scan
        value = parse_float_lists(text, limits.max_json_depth)  # the usual file, at C speed
        if value is not None and _good_floats(value, turns, nulls):
            return value  # finite floats (and nulls) of the right counts, each at least 1: floats already
        if value is None:
            try:
                value = parse_json(text, limits.max_json_depth)
            except JsonError:
                value = None
        if isinstance(value, dict) and _all_good(value, turns, nulls):
            return {k: [None if p is None else float(p) for p in v] for k, v in value.items()}
        del value
    try:
        return _scan_ppl(text, file, turns, log, nulls)
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


def _good(p: Any, nulls: bool) -> bool:
    return good_ppl(p) or (nulls and p is None)


def _all_good(value: dict[str, Any], turns: dict[str, int], nulls: bool = False) -> bool:
    return len(value) == len(turns) and all(
        type(v) is list and len(v) == turns.get(k, -1) and all(_good(p, nulls) for p in v)
        for k, v in value.items()
    )


def _good_floats(value: dict[str, list[float | None]], turns: dict[str, int], nulls: bool) -> bool:
    """:func:`_all_good` of what :func:`parse_float_lists` gives (finite floats and nulls), at C speed: the
    right lists, each as long as its dialogue, every number at least 1, and nulls only where allowed."""
    if len(value) != len(turns) or not all(len(v) == turns.get(k, -1) for k, v in value.items()):
        return False
    numbers = list(chain.from_iterable(value.values()))
    if None in numbers:
        if not nulls:
            return False
        numbers = [p for p in numbers if p is not None]
    return not numbers or min(cast(list[float], numbers)) >= 1


def _one_per_turn(nulls: bool) -> str:
    """What a list holds, as messages say it."""
    return "one number (or null) per turn" if nulls else "one number per turn"


def _scan_ppl(
    text: str, file: str, turns: dict[str, int], log: IssueLog, nulls: bool = False
) -> dict[str, list[float | None]]:
    """Walk ``{"id": [p, ...], ...}`` keeping positions, so every issue has its line and column; with
    ``nulls``, ``null`` is a value too."""

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

    def syntax(pos: int, what: str) -> dict[str, list[float | None]]:
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
                shown = json_type(value)
            except JsonError:
                shown = "not valid JSON"
            issue(
                f"the file must be one JSON object mapping each dialog_id to its list of perplexities, "
                f"not {shown}",
                "ppl_not_object",
                pos,
            )
        return {}
    found: dict[str, list[float | None]] = {}
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
            count, end, values = _scan_values(text, pos, dialog_id, issue, turns.get(dialog_id, 0), nulls)
            if end is None:
                return {}
            pos = end
            if not repeated:
                if dialog_id not in turns:
                    issue(
                        "unknown dialog_id: it is not in dialogues.jsonl"
                        + ("" if log.full else did_you_mean(dialog_id, turns)),
                        "unknown_id",
                        key_pos,
                        dialog_id,
                    )
                elif count is not None and count != turns[dialog_id]:
                    issue(
                        f"{counted(count, 'perplexity', 'perplexities')} given, but the dialogue has "
                        f"{counted(turns[dialog_id], 'turn')}; "
                        f"give {_one_per_turn(nulls)}",
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
                    "dialogue of dialogues.jsonl has no perplexities; add a list with "
                    + _one_per_turn(nulls),
                    "missing_id",
                    dialog_id=shorten(dialog_id),
                )
            )
    return found


_NUMBERISH = re.compile(r"-?(?:Infinity|NaN|[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)")


def _scan_values(
    text: str, pos: int, dialog_id: str, issue: Callable[..., None], expected: int, nulls: bool = False
) -> tuple[int | None, int | None, list[float | None] | None]:
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
            f"the perplexities must be a list with {_one_per_turn(nulls)}, not {json_type(value)}",
            "schema_type",
            pos,
            dialog_id,
        )
        return None, end, None
    values: list[float | None] = []
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
            if not _good(value, nulls):
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
                    shown = json_type(value)
                    what = "a number or null" if nulls else "a number"
                    issue(f"perplexity must be {what}, not {shown}", "schema_type", start, dialog_id, turn)
        if ok:
            values.append(None if value is None else float(value))
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
