"""Outputs of ``score`` (SPEC section 6): scores.json, details.csv, scores.txt.

Every file is written to a temporary name in the output directory and renamed
into place, so a reader sees the old file or the new one, never half of one.
For an invalid submission only ``scores.json`` is written and earlier score
files are removed, so no stale score survives next to an invalid verdict.
"""
from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

from .errors import Issue, IssuesError, MAX_LISTED_ERRORS

SCORES_JSON, DETAILS_CSV, SCORES_TXT = "scores.json", "details.csv", "scores.txt"
DETAIL_COLUMNS = ["dialog_id", "type", "turn", "meteor", "best_reference", "hidden_metric", "ppl",
                  "matches", "chunks", "precision", "recall", "fmean", "penalty",
                  "cand_tokens", "ref_tokens", "exact_search"]


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def json_bytes(payload: Any) -> bytes:
    return (json.dumps(payload, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode("utf-8")


def scores_payload(result) -> dict[str, Any]:
    s = result.summary
    return {
        "status": "ok",
        "integral": s.integral,
        "meteor": s.meteor,
        "hidden_metric": s.hidden_metric,
        "by_type": {name: {"weight": t.weight, "dialogs": t.dialogs, "turns": t.turns, "meteor": t.meteor,
                           "hidden_metric": t.hidden_metric, "score": t.score}
                    for name, t in s.by_type.items()},
        "counts": {"dialogs": s.dialogs, "turns": s.turns},
        "signature": result.signature,
        "warnings": [w.to_dict() for w in result.warnings[:MAX_LISTED_ERRORS]],
    }


def failure_payload(error: IssuesError | Exception, status: str) -> dict[str, Any]:
    """``status`` is ``"invalid"`` (exit 1) or ``"error"`` (exit 2 or 3)."""
    if isinstance(error, IssuesError):
        errors = [i.to_dict() for i in error.listed()]
        more = error.not_listed
    else:
        errors = [Issue(file="", message=str(error), code=getattr(error, "kind", "error")).to_dict()]
        more = 0
    payload: dict[str, Any] = {"status": status, "errors": errors}
    if more:
        payload["more_errors"] = more
    return payload


def details_csv(result) -> bytes:
    """One row per turn; floats in ``repr`` form (full precision), ``chunks`` empty when not computed."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(DETAIL_COLUMNS)
    writer.writerows(
        (t.dialog_id, t.type, t.turn, t.meteor, t.best_reference, t.hidden_metric, t.ppl,
         d.matches, "" if d.chunks is None else d.chunks, d.precision, d.recall, d.fmean, d.penalty,
         d.cand_len, d.ref_len, d.exact_search)
        for t, d in zip(result.turns, result.details))
    return buffer.getvalue().encode("utf-8")


def scores_txt(result) -> bytes:
    s = result.summary
    lines = [f"integral: {s.integral!r}", f"meteor: {s.meteor!r}", f"hidden_metric: {s.hidden_metric!r}"]
    for name, t in s.by_type.items():
        lines += [f"{name}: {t.score!r}", f"{name}_meteor: {t.meteor!r}", f"{name}_hidden_metric: {t.hidden_metric!r}"]
    return ("\n".join(lines) + "\n").encode("utf-8")


def write_outputs(result, output: Path) -> None:
    output = Path(output)
    write_atomic(output / DETAILS_CSV, details_csv(result))
    write_atomic(output / SCORES_TXT, scores_txt(result))
    write_atomic(output / SCORES_JSON, json_bytes(scores_payload(result)))


def write_failure(error: Exception, status: str, output: Path) -> None:
    output = Path(output)
    write_atomic(output / SCORES_JSON, json_bytes(failure_payload(error, status)))
    for stale in (DETAILS_CSV, SCORES_TXT):
        try:
            (output / stale).unlink()
        except FileNotFoundError:
            pass


def summary_table(result) -> str:
    """The per-type table printed on the terminal after ``score``."""
    s = result.summary
    header = f"{'type':<18}{'weight':>8}{'dialogs':>9}{'turns':>7}{'METEOR':>9}{'HM':>9}{'score':>9}"
    lines = [header, "-" * len(header)]
    for name, t in s.by_type.items():
        lines.append(f"{name:<18}{t.weight:>8.2f}{t.dialogs:>9}{t.turns:>7}{t.meteor:>9.4f}"
                     f"{t.hidden_metric:>9.4f}{t.score:>9.4f}")
    lines.append("-" * len(header))
    lines.append(f"{'weighted':<18}{'':>8}{s.dialogs:>9}{s.turns:>7}{s.meteor:>9.4f}{s.hidden_metric:>9.4f}"
                 f"{s.integral:>9.4f}")
    lines.append(f"integral: {s.integral:.6f}")
    lines.append(f"signature: {result.signature}")
    return "\n".join(lines)


def issue_lines(issues: Iterable[Issue], more: int = 0) -> str:
    text = "\n".join(f"  - {issue}" for issue in issues)
    if more:
        text += f"\n  ... and {more} more error(s)"
    return text
