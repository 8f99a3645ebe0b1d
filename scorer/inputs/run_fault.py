"""``run_fault.json``, the record a run of a team's code leaves in its output folder on a fault (contract
section 10): ``{"kind", "phase", "function", "dialog_id", "turn"}``, null where the run withholds a field.

It is read as untrusted, like an upload: a regular file (no link followed, never waited on) of at most
:data:`MAX_FAULT_BYTES`, whose JSON value has exactly the runner's keys, a kind of the runner's closed set
(or null: a run that had the answers withholds every field), a phase, a function, and a dialog_id and turn
of the data. Anything else is not a record the runner writes, and is ignored. ``validate``, ``score``,
``leaderboard`` and ``codalab`` repeat a record as the upload's one error; the scoring step of a code
competition repeats the prediction step's.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from scorer.errors import Issue
from scorer.runner import names

#: The file's name in a run's output folder.
RUN_FAULT = names.RUN_FAULT
#: The most of ``run_fault.json`` that is read.
MAX_FAULT_BYTES = 64 << 10
#: The record's keys, exactly.
FAULT_KEYS = frozenset({"kind", "phase", "function", "dialog_id", "turn"})


def fault_record(path: Path) -> object:
    """``run_fault.json``'s JSON value, or None when there is no such regular file or it is not JSON."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, MAX_FAULT_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_FAULT_BYTES:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def read_run_fault(path: Path, dialog_turns: Mapping[str, int]) -> str | None:
    """The fault ``run_fault.json`` records, as it is repeated (kind and place), or None when there is no
    such file or it is not one the runner writes (a kind of its closed set, a dialog_id and turn of the
    data): it is read as untrusted."""
    return fault_text(fault_record(path), dialog_turns)


def fault_text(record: object, dialog_turns: Mapping[str, int]) -> str | None:
    """A ``run_fault.json`` record as it is repeated, or None when it is not one the runner writes."""
    if not isinstance(record, dict) or set(record) != FAULT_KEYS:
        return None
    kind, phase, function = record["kind"], record["phase"], record["function"]
    dialog_id, turn = record["dialog_id"], record["turn"]
    functions = (*names.FUNCTIONS, "import team_code.generate")
    if (
        kind not in (*names.FAULT_KINDS, None)
        or phase not in ("generate", "ppl", None)
        or function not in (*functions, None)
        or not (dialog_id is None or (isinstance(dialog_id, str) and dialog_id in dialog_turns))
        or not (
            turn is None
            or (type(turn) is int and isinstance(dialog_id, str) and 0 <= turn < dialog_turns[dialog_id])
        )
    ):
        return None
    if kind is None:  # a run that had the answers withholds every field
        return str(names.SEALED_FAULT_LINE)
    where = names.fault_place(phase or "", function or "", dialog_id, turn)
    return f"{kind}; {where}" if where else kind


def run_output_folders(submission: Path) -> list[Path]:
    """The folders where a run's ``run_fault.json`` may stand for the submission ``submission``: a folder
    and its one subfolder (an upload holding the run's output folder), or the folder of a bare
    ``submission.jsonl``. Links are not followed; a path that cannot be examined has none (reading the
    submission says why)."""
    try:
        return _folders(submission)
    except OSError:
        return []


def _folders(submission: Path) -> list[Path]:
    if submission.is_symlink():
        return []
    if not submission.is_dir():
        return [submission.parent] if submission.suffix.lower() != ".zip" else []
    try:
        folders = [p for p in submission.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return [submission]
    inner = [p for p in folders if not p.name.startswith((".", "__MACOSX")) and p.name != names.TEAM_CODE]
    lone = len(inner) == 1 and not (submission / names.SUBMISSION).exists()
    return [submission] + (inner if lone else [])


def run_fault_issue(submission: Path, dialog_turns: Mapping[str, int]) -> Issue | None:
    """The one error of a submission that is a run's output holding ``run_fault.json`` (contract section
    10): the team's code failed, so the run's files are not scored; None when there is no such record."""
    for folder in run_output_folders(submission):
        fault = read_run_fault(folder / RUN_FAULT, dialog_turns)
        if fault is not None:
            return Issue(
                RUN_FAULT,
                f"the run of the team's code failed ({fault}), so its files are not scored; mend the code "
                "and run it again",
                "run_fault",
            )
    return None
