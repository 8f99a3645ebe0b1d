"""The human-ratings CSV of ``correlate`` (contract section 8): one reader, checked as every input is.

Columns ``submission`` and ``score`` (system level), plus ``dialog_id`` (dialogue level) and ``turn``
(turn level); every problem is listed with its line (:class:`HumanRatingsError`, exit 2).
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scorer.errors import EXIT_USAGE, Issue, IssueLog, IssuesError

from .jsonio import not_utf8, shorten

#: The columns of each level's file, and the level they give.
SHAPES = {
    ("submission", "score"): "system",
    ("submission", "dialog_id", "score"): "dialog",
    ("submission", "dialog_id", "turn", "score"): "turn",
}


class HumanRatingsError(IssuesError):
    """The human ratings CSV breaks contract section 8 (exit 2)."""

    exit_code = EXIT_USAGE
    kind = "human_ratings"

    def __init__(self, issues: IssueLog):
        super().__init__(issues, f"the human ratings are invalid ({issues.total} error(s))")


@dataclass(frozen=True)
class HumanRatings:
    level: str  # "system", "dialog" or "turn"
    scores: dict[tuple[Any, ...], float]  # (submission,) / (submission, dialog_id) / (..., turn) -> mean


#: The largest ratings file read (it is the organizer's, but still bounded).
MAX_HUMAN_BYTES = 256 << 20
_TURN = re.compile(r"[0-9]{1,9}")


def read_human(path: str | os.PathLike[str], submissions: Mapping[str, Mapping[str, int]]) -> HumanRatings:
    """Read and average the ratings; ``submissions``: entry name -> dialog_id -> turns.

    Every fault of the file (unreadable, not UTF-8, a broken CSV row, a value
    that is not what its column needs) is a :class:`HumanRatingsError` naming
    its line. An entry's own name wins over a ``.zip`` name without its suffix
    (a folder ``team`` beside ``team.zip``). Means are taken so that finite
    ratings give a finite mean.
    """
    path = Path(path)
    log = IssueLog()
    name = path.name
    text = _human_text(path, name, log)
    by_name = {n[:-4]: n for n in submissions if n.lower().endswith(".zip")} | {n: n for n in submissions}
    values: dict[tuple[Any, ...], list[float]] = {}
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = tuple(h.strip() for h in next(reader, []))
    except csv.Error as exc:
        log.add(Issue(name, f"the header is not a readable CSV row ({exc})", "bad_row", line=1))
        raise HumanRatingsError(log) from None
    level = SHAPES.get(header)
    if level is None:
        log.add(
            Issue(
                name,
                "the header must be one of: submission,score / submission,dialog_id,score / "
                f"submission,dialog_id,turn,score (found {shorten(','.join(header))})",
                "bad_header",
                line=1,
            )
        )
        raise HumanRatingsError(log)
    while True:
        number = reader.line_num + 1
        try:
            row = next(reader, None)
        except csv.Error as exc:
            log.add(
                Issue(
                    name,
                    f"not a readable CSV row ({exc}); check for a stray double quote",
                    "bad_row",
                    line=number,
                )
            )
            break
        if row is None:
            break
        if not row or not any(cell.strip() for cell in row):
            continue
        key = _key(row, header, number, name, by_name, submissions, log)
        if key is not None:
            values.setdefault(key, []).append(float(row[-1]))
    if log:
        raise HumanRatingsError(log)
    if not values:
        log.add(Issue(name, "the file holds no ratings", "empty_file"))
        raise HumanRatingsError(log)
    return HumanRatings(level, {key: finite_mean(found) for key, found in values.items()})


def finite_mean(values: Sequence[float]) -> float:
    """The mean of finite ``values``, finite too: ``sum / n`` (in order) where that sum is finite, else each
    value divided by ``n`` before an exact sum (ratings near the largest double)."""
    n = len(values)
    total = sum(values)
    return total / n if math.isfinite(total) else math.fsum(v / n for v in values)


def _human_text(path: Path, name: str, log: IssueLog) -> str:
    """The ratings file as text (UTF-8, a BOM allowed); a HumanRatingsError naming the fault otherwise."""
    try:
        if not path.is_file():
            raise IsADirectoryError(0, "not a regular file")
        with open(path, "rb") as fh:
            data = fh.read(MAX_HUMAN_BYTES + 1)
    except OSError as exc:
        log.add(Issue(name, f"cannot read {shorten(str(path))}: {exc.strerror}", "unreadable"))
        raise HumanRatingsError(log) from None
    if len(data) > MAX_HUMAN_BYTES:
        log.add(Issue(name, f"the file is larger than {MAX_HUMAN_BYTES >> 20} MiB", "file_too_large"))
        raise HumanRatingsError(log)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        log.add(not_utf8(name, data, exc))
        raise HumanRatingsError(log) from None


def _key(
    row: list[str],
    header: Sequence[str],
    number: int,
    name: str,
    by_name: Mapping[str, str],
    submissions: Mapping[str, Mapping[str, int]],
    log: IssueLog,
) -> tuple[Any, ...] | None:
    def bad(message: str, code: str) -> tuple[Any, ...] | None:
        """Log the row's fault; the row has no key."""
        log.add(Issue(name, message, code, line=number))
        return None

    if len(row) != len(header):
        return bad(f"{len(row)} fields; the header has {len(header)}", "bad_row")
    text = row[-1].strip()
    try:
        score = float(text)
    except ValueError:
        return bad(f"score {shorten(text)!r} is not a number", "bad_score")
    if not math.isfinite(score):
        return bad(f"score {shorten(text)!r} is not a finite number", "bad_score")
    submission = by_name.get(row[0].strip())
    if submission is None:
        return bad(
            f"unknown submission {shorten(row[0].strip())!r} (not an entry of the submissions folder)",
            "unknown_submission",
        )
    if len(header) == 2:
        return (submission,)
    dialog_id = row[1].strip()
    turns = submissions[submission].get(dialog_id)
    if turns is None:
        return bad(f"unknown dialog_id {shorten(dialog_id)!r}", "unknown_id")
    if len(header) == 3:
        return (submission, dialog_id)
    turn_text = row[2].strip()
    if not _TURN.fullmatch(turn_text) or int(turn_text) >= turns:
        return bad(
            f"turn {shorten(turn_text, 20)!r} is not a turn of {shorten(dialog_id)!r} (0 to {turns - 1})",
            "unknown_turn",
        )
    return (submission, dialog_id, int(turn_text))


# --- coefficients --------------------------------------------------------------------------------
