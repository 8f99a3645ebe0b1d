"""The organizer's recomputed perplexities (``--ppl-check``, contract section 9): ``ppl_output.json``'s
shape for any subset of the dialogues (``null`` where not recomputed), or the JSON Lines ``audit-sample``
wrote with each line's ``ppl`` filled in. Its problems carry the codes ``ppl_output.json``'s reader gives
the same faults (:mod:`scorer.inputs.ppl_output`)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scorer.errors import Issue, IssueLog, PplCheckInvalid, UsageError

from .config import Limits
from .jsonio import JsonError, not_utf8, parse_json, shorten
from .ppl_output import good_ppl
from .sources import located
from .validation import Dialogue


def read_ppl_check(
    path: str | os.PathLike[str], dialogues: Iterable[Dialogue], limits: Limits
) -> dict[str, list[float | None]]:
    """The perplexities an organizer recomputed (``--ppl-check``, contract section 9): ``ppl_output.json``'s
    shape for any subset of the dialogues, ``null`` for a turn not recomputed. Raises
    :class:`~scorer.errors.PplCheckInvalid` (exit 2) listing every problem, or ``UsageError`` when the file
    cannot be read."""
    name = Path(path).name
    try:
        if not Path(path).is_file():
            raise UsageError(f"--ppl-check {path}: not a regular file")
        if os.path.getsize(path) > limits.max_file_bytes:
            raise PplCheckInvalid(
                [Issue(name, f"the file is larger than {limits.max_file_mib} MiB", "file_too_large")], name
            )
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PplCheckInvalid([not_utf8(name, data, exc)], name) from None
    try:
        if _is_sample_lines(text, limits):
            return _sample_ppl_check(text, name, dialogues, limits)
        value = parse_json(text, limits.max_json_depth)
    except JsonError as exc:
        raise PplCheckInvalid(
            [Issue(name, f"not valid JSON ({shorten(str(exc), 120)})", "bad_json")], name
        ) from None
    if not isinstance(value, dict):
        raise PplCheckInvalid(
            [
                Issue(
                    name,
                    "the file must be one JSON object: dialog_id -> list of perplexities "
                    "(null for a turn not recomputed)",
                    "bad_shape",
                )
            ],
            name,
        )
    turns = {d.dialog_id: d.n_turns for d in dialogues}
    log = IssueLog()
    found: dict[str, list[float | None]] = {}
    for dialog_id, values in value.items():
        shown = shorten(dialog_id)
        if dialog_id not in turns:
            log.add(Issue(name, f"unknown dialog_id {shorten(dialog_id)!r}", "unknown_id", dialog_id=shown))
        elif not isinstance(values, list) or len(values) != turns[dialog_id]:
            log.add(
                Issue(
                    name,
                    f"give a list of {turns[dialog_id]} perplexities (null where not recomputed)",
                    "turn_count",
                    dialog_id=shown,
                )
            )
        else:
            for turn, p in enumerate(values):
                if p is not None and not good_ppl(p):
                    log.add(
                        Issue(
                            name,
                            f"perplexity {shorten(repr(p))} is not a finite number >= 1 (or null)",
                            _bad_ppl_code(p),
                            turn=turn,
                            dialog_id=shown,
                        )
                    )
            found[dialog_id] = [None if p is None else float(p) for p in values]
    if log:
        raise PplCheckInvalid(log, name)
    return found


def _is_sample_lines(text: str, limits: Limits) -> bool:
    """Whether ``text`` is the JSON Lines of ``audit-sample`` (its first line one object with a ``turn``)."""
    first = next((line for line in text.split("\n") if line.strip()), "")
    try:
        value = parse_json(first, limits.max_json_depth)
    except JsonError:
        return False
    return isinstance(value, dict) and "turn" in value


def _sample_ppl_check(
    text: str, name: str, dialogues: Iterable[Dialogue], limits: Limits
) -> dict[str, list[float | None]]:
    """``--ppl-check`` given as the JSON Lines ``audit-sample`` wrote, each line's ``ppl`` the recomputed
    perplexity (``null``: not recomputed): the same values as ``ppl_output.json``'s shape, ``null`` for
    every turn no line names."""
    turns = {d.dialog_id: d.n_turns for d in dialogues}
    log = IssueLog()
    found: dict[str, list[float | None]] = {}
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            value = parse_json(line, limits.max_json_depth)
        except JsonError as exc:
            log.add(Issue(name, exc.message, "bad_json", line=number))
            continue
        dialog_id = value.get("dialog_id") if isinstance(value, dict) else None
        turn = value.get("turn") if isinstance(value, dict) else None
        if not isinstance(dialog_id, str) or dialog_id not in turns:
            shown = shorten(json.dumps(dialog_id, ensure_ascii=False))
            log.add(Issue(name, f"unknown dialog_id {shown}", "unknown_id", line=number))
            continue
        where = located(number, dialog_id)
        if isinstance(turn, bool) or not isinstance(turn, int) or not 0 <= turn < turns[dialog_id]:
            log.add(Issue(name, f"turn must be 0 to {turns[dialog_id] - 1}", "turn_count", **where))
            continue
        p = value.get("ppl")
        if p is not None and not good_ppl(p):
            log.add(
                Issue(
                    name,
                    f"ppl {shorten(repr(p))} is not a finite number >= 1 (or null)",
                    _bad_ppl_code(p),
                    **where,
                )
            )
            continue
        values = found.setdefault(dialog_id, [None] * turns[dialog_id])
        if values[turn] is not None:
            log.add(Issue(name, "a second line for this turn", "duplicate_id", turn=turn, **where))
            continue
        values[turn] = None if p is None else float(p)
    if log:
        raise PplCheckInvalid(log, name)
    return found


def _bad_ppl_code(value: Any) -> str:
    """The code of a perplexity that is not a finite number >= 1, as ``ppl_output.json``'s reader gives it:
    ``schema_minimum`` for a number below 1, else ``schema_type``."""
    return "schema_minimum" if type(value) in (int, float) and value < 1 else "schema_type"
