"""The data the runner reads (contract section 10): ``dialogues.jsonl`` with its media paths made absolute,
the first reference variants of ``answers.jsonl`` (the ppl phase's targets), and the turns ``--only`` names.
"""

from __future__ import annotations

import json
import os
from typing import Any, TypedDict

from .faults import UsageFault
from .names import ANSWERS, DIALOGUES, excerpt


class Part(TypedDict):
    """One part of a turn as the code receives it: ``type`` (text, image, audio) and ``content`` (a text, or
    a media file's absolute path)."""

    type: str
    content: str


class CodeDialogue(TypedDict):
    """A dialogue of ``dialogues.jsonl`` as the runner holds it: its id, type and turns (lists of parts)."""

    dialog_id: str
    type: object
    turns: list[list[Part]]


def read_jsonl(path: str, what: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file; a UsageFault naming the file and line otherwise."""
    rows = []
    try:
        with open(path, encoding="utf-8-sig") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except ValueError as exc:
                    raise UsageFault(f"{path}, line {number}: not valid JSON ({exc})") from None
                if not isinstance(value, dict):
                    raise UsageFault(f"{path}, line {number}: {what} must be one JSON object a line")
                rows.append(value)
    except OSError as exc:
        raise UsageFault(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageFault(f"{path}: not valid UTF-8") from None
    return rows


def read_dialogues(data: str) -> list[CodeDialogue]:
    """``dialogues.jsonl`` with every image and audio path made absolute against ``data``."""
    base = os.path.abspath(data)
    rows = read_jsonl(os.path.join(data, DIALOGUES), "a dialogue")
    dialogues, seen = [], set()
    for k, row in enumerate(rows, 1):
        dialog_id, turns = row.get("dialog_id"), row.get("turns")
        if not isinstance(dialog_id, str) or not dialog_id or dialog_id in seen:
            raise UsageFault(f"{DIALOGUES}, dialogue {k}: a missing, empty or repeated dialog_id")
        if not isinstance(turns, list) or not turns:
            raise UsageFault(f"{DIALOGUES}, dialog_id {excerpt(dialog_id)}: turns must be a non-empty list")
        fixed = []
        for turn in turns:
            if not isinstance(turn, list) or not all(
                isinstance(p, dict) and isinstance(p.get("content"), str) and p.get("type") for p in turn
            ):
                raise UsageFault(
                    f"{DIALOGUES}, dialog_id {excerpt(dialog_id)}: a turn is not a list of parts"
                )
            fixed.append(
                [
                    Part(
                        type=p["type"],
                        content=_media_path(base, p["content"])
                        if p["type"] in ("image", "audio")
                        else p["content"],
                    )
                    for p in turn
                ]
            )
        seen.add(dialog_id)
        dialogues.append(CodeDialogue(dialog_id=dialog_id, type=row.get("type"), turns=fixed))
    if not dialogues:
        raise UsageFault(f"{os.path.join(data, DIALOGUES)} holds no dialogue")
    return dialogues


def _media_path(base: str, content: str) -> str:
    return content if os.path.isabs(content) else os.path.normpath(os.path.join(base, content))


def read_targets(data: str, dialogues: list[CodeDialogue]) -> dict[str, list[str]] | None:
    """The first reference variant of every turn (``answers.jsonl``), or None when there is no such file."""
    path = os.path.join(data, ANSWERS)
    if not os.path.exists(path):
        return None
    targets = {}
    for k, row in enumerate(read_jsonl(path, "a dialogue's references"), 1):
        refs = row.get("references")
        if isinstance(row.get("dialog_id"), str) and isinstance(refs, list):
            if not all(isinstance(v, list) and v and isinstance(v[0], str) for v in refs):
                raise UsageFault(f"{path}, line {k}: every turn's references must be a list of texts")
            targets[row["dialog_id"]] = [v[0] for v in refs]
    for d in dialogues:
        if len(targets.get(d["dialog_id"], [])) != len(d["turns"]):
            raise UsageFault(f"{path}: dialog_id {excerpt(d['dialog_id'])} has no references for every turn")
    return targets


def read_only(path: str, dialogues: list[CodeDialogue]) -> set[tuple[str, int]]:
    """The turns ``--only`` names: the JSON Lines ``audit-sample`` writes (``dialog_id`` and ``turn``)."""
    turns = {d["dialog_id"]: len(d["turns"]) for d in dialogues}
    chosen = set()
    for k, row in enumerate(read_jsonl(path, "a turn"), 1):
        dialog_id, turn = row.get("dialog_id"), row.get("turn")
        if (
            not isinstance(dialog_id, str)
            or dialog_id not in turns
            or isinstance(turn, bool)
            or not isinstance(turn, int)
            or not 0 <= turn < turns[dialog_id]
        ):
            raise UsageFault(f"{path}, line {k}: not a turn of {DIALOGUES} (dialog_id and turn)")
        chosen.add((dialog_id, turn))
    return chosen
