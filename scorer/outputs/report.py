"""Outputs of ``score`` (contract section 6): scores.json, details.csv, scores.txt.

Every file is written to a temporary name in the output directory and renamed
into place, so a reader sees the old file or the new one, never half of one.
For an invalid submission only ``scores.json`` is written and earlier score
files are removed, so no stale score survives next to an invalid verdict.
"""

from __future__ import annotations

import csv
import io
import math
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import repeat
from pathlib import Path
from typing import Any

from scorer.errors import MAX_LISTED_ERRORS, Issue, IssueLog, IssuesError, SubmissionInvalid
from scorer.inputs.contract import DETAILED_RESULTS, DETAILS_CSV, REPORT_HTML, SCORES_JSON, SCORES_TXT
from scorer.inputs.ppl_targets import stale_warning
from scorer.metric.stages import stages_line
from scorer.progress import WRITING, Progress
from scorer.safe_text import csv_cell, json_text, safe_cells, shown
from scorer.scoring.audit import audit_payload
from scorer.scoring.correlation_result import COLUMNS as CORRELATION_COLUMNS
from scorer.scoring.correlation_result import Meta
from scorer.scoring.leaderboard import folder_name
from scorer.scoring.leaderboard_result import COLUMNS, Leaderboard
from scorer.scoring.result import ScoreResult, detail_columns, detail_values

from .html_report import correlation_report, failure_report, leaderboard_report, score_report
from .output_dir import publish

ERROR_LOG = "scorer-error.log"
#: Every file a ``score`` run can write; each run rewrites or removes all of them.
AUDIT_JSON = "audit.json"
SCORE_OUTPUTS = (SCORES_JSON, DETAILS_CSV, SCORES_TXT, REPORT_HTML, DETAILED_RESULTS, AUDIT_JSON, ERROR_LOG)


def utf8(text: str) -> bytes:
    """``text`` as UTF-8 for an output file. A path named in it may carry the surrogates Python decodes a
    file name into where the file-system encoding is not UTF-8 (the C locale): their bytes are put back, and
    any that are not UTF-8 are written escaped (``\\xff``), so an output is always valid UTF-8."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace").encode("utf-8")


def json_bytes(payload: Any) -> bytes:
    """A JSON output (``scores.json``, ``audit.json``, ``leaderboard.json``, ``correlation.json``) as UTF-8:
    valid JSON whatever the names in it hold, a character the terminal would escape written as JSON escapes
    it (``\\u0085``, :func:`scorer.safe_text.json_text`), so a program reading it gets each name back."""
    return utf8(json_text(payload) + "\n")


def scores_payload(result: ScoreResult) -> dict[str, Any]:
    """``scores.json`` of a scored submission: the contract's keys, then, for every dialogue type present,
    the flat numbers a leaderboard platform can show as columns (``T``, ``T_meteor``, ``T_hidden_metric``)."""
    s = result.summary
    return {
        "status": "ok",
        "integral": s.integral,
        "meteor": s.meteor,
        "hidden_metric": s.hidden_metric,
        "by_type": {
            name: {
                "weight": t.weight,
                "dialogs": t.dialogs,
                "turns": t.turns,
                "meteor": t.meteor,
                "hidden_metric": t.hidden_metric,
                "score": t.score,
            }
            for name, t in s.by_type.items()
        },
        "counts": {"dialogs": s.dialogs, "turns": s.turns},
        "signature": result.signature,
        "warnings": [w.to_dict() for w in result.warnings[:MAX_LISTED_ERRORS]]
        + ([stale_warning(result.stale_perplexities)] if result.stale_perplexities else []),
        **type_columns(result),
    }


def type_columns(result: ScoreResult) -> dict[str, float]:
    """The per-type figures as flat ``name: number`` pairs, in the contract's type order: the leaderboard
    columns of ``scores.json`` and the per-type lines of ``scores.txt``."""
    columns: dict[str, float] = {}
    for name, t in result.summary.by_type.items():
        columns.update({name: t.score, f"{name}_meteor": t.meteor, f"{name}_hidden_metric": t.hidden_metric})
    return columns


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
    if isinstance(error, IssuesError) and error.unchecked:
        payload["unchecked"] = [
            {"file": file, "from_line": line, "lines": lines} for file, line, lines in error.unchecked
        ]
    return payload


ROWS_PER_REPORT = 20_000


def details_csv(result: ScoreResult, progress: Progress | None = None) -> bytes:
    """One row per turn, with the columns the result's audience may see (:func:`detail_columns`); floats in
    ``repr`` form (full precision).

    The rows are written a column at a time and joined directly: every cell but the first is a number, a
    boolean, "" or one of the four type names, which CSV writes as ``str`` gives them, unquoted
    (:func:`column_texts`, each distinct float's text made once for every column); the one text from an
    upload, the dialog_id, is its own cell when it is plain (:func:`_all_plain`, the chunk's ids searched at
    once), else made a safe cell (``csv_cell``) and written by the ``csv`` module, once an id
    (docs/performance.md). ``progress("writing details.csv", done, total)`` hears the rows written."""
    header = io.StringIO()
    csv.writer(header, lineterminator="\n").writerow(detail_columns(result.audience))
    parts = [header.getvalue()]
    total = len(result.turns)
    step = f"{WRITING} {DETAILS_CSV}"
    id_cells = _IdCells()
    floats = _Texts()
    for start in range(0, total, ROWS_PER_REPORT):
        if progress:
            progress(step, start, total)
        ids, *others = detail_values(result, start, start + ROWS_PER_REPORT)
        if ids:
            cells = ids if _all_plain(ids) else list(map(id_cells.__getitem__, ids))
            columns = [cells, *(column_texts(c, floats) for c in others)]
            parts.append("\n".join(map(",".join, zip(*columns))) + "\n")
    if progress:
        progress(step, total, total)
    return utf8("".join(parts))


class _IdCells(dict[str, str]):
    """A dialog_id's cell, made once an id: safe for spreadsheets (``csv_cell``), quoted where CSV must."""

    def __missing__(self, dialog_id: str) -> str:
        plain = _PLAIN_ID.fullmatch(dialog_id) is not None  # what csv_cell and the csv module keep as it is
        cell = self[dialog_id] = dialog_id if plain else _csv_text(str(csv_cell(dialog_id)))
        return cell


#: An id of ASCII letters, digits, ``_``, ``.`` and ``-`` that begins with a letter, a digit or ``_``: neither
#: ``csv_cell`` (no formula start, nothing to escape) nor the ``csv`` module (nothing to quote) changes it.
_PLAIN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


def _all_plain(dialog_ids: Sequence[str]) -> bool:
    """Whether every id is plain (:data:`_PLAIN_ID`), its own cell: the distinct ids searched in one go, a
    line each (an id holding a line end would make two lines)."""
    distinct = dict.fromkeys(dialog_ids)
    lines = "\n".join(distinct) + "\n"
    return lines.count("\n") == len(distinct) and _PLAIN_IDS.fullmatch(lines) is not None


#: Lines of plain ids (:data:`_PLAIN_ID`, which holds no line end).
_PLAIN_IDS = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9_.\-]*\n)+")


def _csv_text(text: str) -> str:
    """One text cell as the ``csv`` module writes it in a row (quoted where it must be)."""
    line = io.StringIO()
    csv.writer(line, lineterminator="\n").writerow((text, ""))
    return line.getvalue()[: -len(",\n")]


class _Texts(dict[Any, str]):
    """``str`` of each value, made once a value (values of one type: equal values have equal texts)."""

    def __missing__(self, value: Any) -> str:
        text = self[value] = str(value)
        return text


#: The first values of a column that show it mostly distinct (over 90%), before all are counted.
_SAMPLE = 2_000


def column_texts(values: Sequence[Any], floats: _Texts | None = None) -> Sequence[str]:
    """``[str(v) for v in values]``, each distinct number's text made once when the column holds one type and
    its values repeat (the figures of 20,000 turns do: a float's ``repr`` is the costly part of
    ``details.csv``); ``floats``, when given, keeps the texts of floats from one column to the next (METEOR
    and F-mean are equal without the penalty). A column of mixed types (``1``, ``1.0`` and ``True`` are equal
    keys), with a zero and a negative value (-0.0 equals 0.0 but is written ``-0.0``), or of mostly distinct
    values is written value by value."""
    kinds = set(map(type, values))
    if kinds == {str}:
        return values
    if len(kinds) != 1 or not kinds <= {int, float, bool}:
        return list(map(str, values))  # mixed
    if kinds == {float} and 0.0 in values and min(map(math.copysign, repeat(1.0), values)) < 0:
        return list(map(str, values))  # a zero, and a value with its sign bit set: perhaps -0.0
    if 10 * len(set(values[:_SAMPLE])) > 9 * min(len(values), _SAMPLE) or 2 * len(set(values)) >= len(values):
        return list(map(str, values))  # mostly distinct: a text a value costs less than looking it up
    texts = floats if floats is not None and kinds == {float} else _Texts()
    return list(map(texts.__getitem__, values))


def scores_txt(result: ScoreResult) -> bytes:
    s = result.summary
    lines = [f"integral: {s.integral!r}", f"meteor: {s.meteor!r}", f"hidden_metric: {s.hidden_metric!r}"]
    lines += [f"{name}: {value!r}" for name, value in type_columns(result).items()]
    return utf8("\n".join(lines) + "\n")


def score_files(
    result: ScoreResult, report: bool = False, progress: Progress | None = None
) -> dict[str, bytes]:
    """The outputs of a scored submission, by file name, as its audience (``result.audience``, contract
    section 6) may see them; ``progress`` hears the rows and the page written. With ``report``, the page
    is written under the audience's page name (``codalab``: ``detailed_results.html``).

    ``details.csv`` is written for the organizer, and for participants only with ``turn_details``;
    ``audit.json`` (the perplexity audit, contract section 9) for the organizer only."""
    audience = result.audience
    files = {SCORES_TXT: scores_txt(result), SCORES_JSON: json_bytes(scores_payload(result))}
    if audience.details_csv:
        files[DETAILS_CSV] = details_csv(result, progress)
    if audience.audit and result.audit is not None:
        files[AUDIT_JSON] = json_bytes(audit_payload({result.name: result.audit}, result.audit_private))
    if report:
        page = audience.page
        step = (lambda done, total: progress(f"{WRITING} {page}", done, total)) if progress else None
        files[page] = utf8(score_report(result, step))
    return files


def failure_files(error: Exception, status: str, page: str | None = None) -> dict[str, bytes]:
    """The outputs of a run that scored nothing: ``scores.json`` with the verdict, and with ``page`` a page
    of that name listing the errors (``codalab``: the platforms show it as the detailed results)."""
    files = {SCORES_JSON: json_bytes(failure_payload(error, status))}
    if page is not None:
        files[page] = utf8(failure_report(error, status))
    return files


def write_outputs(
    result: ScoreResult, output: Path, report: bool = False, progress: Progress | None = None
) -> None:
    """Publish :func:`score_files` in ``output``, removing any other file a ``score`` run writes."""
    publish(Path(output), score_files(result, report, progress), SCORE_OUTPUTS, SCORES_JSON)


def write_failure(
    error: Exception,
    status: str,
    output: Path,
    extra: dict[str, bytes] | None = None,
    page: str | None = None,
    marker: str = SCORES_JSON,
) -> None:
    """Publish :func:`failure_files` (and ``extra`` files) in ``output``, removing every other output of the
    command whose commit marker is ``marker`` (``scores.json``, ``leaderboard.json`` or ``correlation.json``):
    the marker then holds the verdict, ``{"status": "error", "errors": [...]}`` or ``"invalid"``."""
    files = failure_files(error, status, page)
    files[marker] = files.pop(SCORES_JSON)
    publish(Path(output), {**files, **(extra or {})}, FAILURE_OUTPUTS[marker], marker)


def summary_table(result: ScoreResult) -> str:
    """The per-type table printed on the terminal after ``score``."""
    s = result.summary
    header = f"{'type':<18}{'weight':>8}{'dialogs':>9}{'turns':>7}{'METEOR':>9}{'HM':>9}{'score':>9}"
    lines = [header, "-" * len(header)]
    for name, t in s.by_type.items():
        lines.append(
            f"{name:<18}{t.weight:>8.2f}{t.dialogs:>9}{t.turns:>7}{t.meteor:>9.4f}"
            f"{t.hidden_metric:>9.4f}{t.score:>9.4f}"
        )
    lines.append("-" * len(header))
    lines.append(
        f"{'weighted':<18}{'':>8}{s.dialogs:>9}{s.turns:>7}{s.meteor:>9.4f}{s.hidden_metric:>9.4f}"
        f"{s.integral:>9.4f}"
    )
    lines.append(f"integral: {s.integral:.6f}")
    lines.append(f"stages: {stages_line(result.stages)}")
    lines.append(f"signature: {result.signature}")
    return "\n".join(lines)


#: How many errors of one kind the terminal lists before "... and N more like this".
SHOWN_PER_KIND = 3


def issue_lines(
    issues: Iterable[Issue], more: int = 0, notes: Iterable[str] = (), every: bool = False
) -> str:
    """The errors for the terminal: the first :data:`SHOWN_PER_KIND` of each repeated error (the same code
    and message at other places), each further repeat counted (with ``every``, each one listed); distinct
    errors are always listed; ``more`` errors found beyond the listed ones; then ``notes``."""
    shown: list[str] = []
    hidden: dict[tuple[str, str], int] = {}
    seen: dict[tuple[str, str], int] = {}
    for issue in issues:
        kind = (issue.code, issue.message)
        seen[kind] = seen.get(kind, 0) + 1
        if every or seen[kind] <= SHOWN_PER_KIND:
            shown.append(f"  - {issue}")
        else:
            hidden[kind] = hidden.get(kind, 0) + 1
    text = "\n".join(shown)
    for (code, _), count in hidden.items():
        text += f"\n  ... and {count} more like this ({code})"
    if more:
        text += f"\n  ... and {more} more error(s)"
    for note in notes:
        text += f"\n  {note}"
    return text


# --- leaderboard ----------------------------------------------------------------------------

LEADERBOARD_CSV, LEADERBOARD_JSON, SUBMISSIONS_DIR = "leaderboard.csv", "leaderboard.json", "submissions"
LEADERBOARD_COLUMNS = list(COLUMNS)


def leaderboard_rows(board: Leaderboard) -> list[dict[str, Any]]:
    """One dict per entry with the keys of :data:`LEADERBOARD_COLUMNS` (None where not applicable),
    errors as dicts, and ``more_errors`` when some were not listed."""
    rows = []
    for standing, row in zip(board.entries, board.rows()):
        row["errors"] = [issue.to_dict() for issue in row["errors"]]
        if standing.errors_not_shown:
            row["more_errors"] = standing.errors_not_shown
        rows.append(row)
    return rows


def leaderboard_csv(board: Leaderboard) -> bytes:
    """The rows of :func:`leaderboard_rows`; the errors joined by `` | ``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(LEADERBOARD_COLUMNS)
    for row in board.rows():
        row["errors"] = " | ".join(str(issue) for issue in row["errors"])
        writer.writerow(safe_cells(["" if row[c] is None else row[c] for c in LEADERBOARD_COLUMNS]))
    return utf8(buffer.getvalue())


def leaderboard_payload(board: Leaderboard) -> dict[str, Any]:
    return {
        "status": "ok",
        "signature": board.signature,
        "bootstrap": {
            "resamples": board.resamples,
            "seed": board.seed,
            "confidence": 0.95,
            "unit": "dialogue",
            "strata": "type",
            "test": "paired bootstrap vs the rank above",
        },
        "submissions": leaderboard_rows(board),
        "skipped": list(board.skipped),
    }


def write_leaderboard(
    board: Leaderboard, output: Path, report: bool = True, progress: Progress | None = None
) -> None:
    """leaderboard.csv, leaderboard.json, report.html, and each submission's own outputs (with its own
    report.html when ``report``) under ``submissions/<name>/``; folders of entries no longer present are
    removed. ``progress("writing submissions", done, total)`` hears the entries written."""
    output = Path(output)
    files: dict[str, bytes] = {}
    for k, entry in enumerate(board.entries):
        if progress:
            progress(f"{WRITING} {SUBMISSIONS_DIR}", k, len(board.entries))
        folder = f"{SUBMISSIONS_DIR}/{folder_name(entry.name)}/"
        produced = (
            score_files(replace(entry.result, audit=None), report)
            if entry.result is not None
            else failure_files(
                SubmissionInvalid(IssueLog.of(entry.entry.errors, entry.entry.more_errors)), entry.status
            )
        )
        files.update((folder + name, data) for name, data in produced.items())
    if progress:
        progress(f"{WRITING} {SUBMISSIONS_DIR}", len(board.entries), len(board.entries))
    if report:
        files[REPORT_HTML] = utf8(leaderboard_report(board))
    files[LEADERBOARD_CSV] = leaderboard_csv(board)
    files[LEADERBOARD_JSON] = json_bytes(leaderboard_payload(board))
    files[AUDIT_JSON] = json_bytes(audit_payload(board.audit, board.audit_private))
    outputs = [LEADERBOARD_CSV, LEADERBOARD_JSON, REPORT_HTML, AUDIT_JSON, ERROR_LOG]
    current = {folder_name(entry.name) for entry in board.entries}
    old = output / SUBMISSIONS_DIR
    if old.is_dir():
        for previous in old.iterdir():
            outputs += [f"{SUBMISSIONS_DIR}/{previous.name}/{name}" for name in SCORE_OUTPUTS]
            if previous.name not in current:
                outputs.append(f"{SUBMISSIONS_DIR}/{previous.name}")
    publish(output, files, outputs, LEADERBOARD_JSON)


def _cell(value: float | None, width: int, digits: int = 4) -> str:
    return f"{'':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def leaderboard_table(board: Leaderboard) -> str:
    """The ranked table printed on the terminal after ``leaderboard`` (the rows of
    :func:`leaderboard_rows`)."""
    header = (
        f"{'rank':>4}  {'submission':<24}{'integral':>10}  {'95% interval':<18}{'METEOR':>8}{'HM':>8}"
        f"{'p vs above':>12}"
    )
    lines = [header, "-" * len(header)]
    for standing in board.entries:
        row = standing.values()
        name = shown(row["submission"])
        name = name if len(name) <= 24 else name[:23] + "~"
        if standing.result is None:
            total = len(standing.entry.errors) + standing.entry.more_errors
            lines.append(
                f"{'':>4}  {name:<24}  {standing.status} ({total} error{'' if total == 1 else 's'}):"
            )
            for issue in row["errors"]:
                lines.extend("          " + part for part in textwrap.wrap(str(issue), 90))
            if standing.errors_not_shown:
                lines.append(f"          ... and {standing.errors_not_shown} more")
            continue
        interval = f"[{row['ci_low']:.4f}, {row['ci_high']:.4f}]"
        lines.append(
            f"{row['rank']:>4}  {name:<24}{row['integral']:>10.6f}  {interval:<18}"
            f"{_cell(row['meteor'], 8)}{_cell(row['hidden_metric'], 8)}{_cell(row['p_value'], 12)}"
        )
    if board.skipped:
        lines.append(f"skipped (not a folder or .zip): {', '.join(shown(n) for n in board.skipped)}")
    lines.append(f"stages: {stages_line(board.stages)}")
    lines.append(f"signature: {board.signature}")
    return "\n".join(lines)


CORRELATION_CSV, CORRELATION_JSON = "correlation.csv", "correlation.json"


def _plain(value: object) -> object:
    return None if isinstance(value, float) and value != value else value


def write_correlation(meta: Meta, output: Path) -> None:
    """correlation.csv, correlation.json and report.html of ``correlate``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CORRELATION_COLUMNS)
    for row in meta.rows:
        writer.writerow(
            safe_cells(["" if v is None or (isinstance(v, float) and v != v) else v for v in row.row()])
        )
    payload = {
        "rows": [{c: _plain(v) for c, v in zip(CORRELATION_COLUMNS, row.row())} for row in meta.rows],
        "signature": meta.signature,
        "ratings_level": meta.ratings_level,
        "settings": {
            "resamples": meta.resamples,
            "seed": meta.seed,
            "baselines": list(meta.baselines),
            "interval": "95% percentile bootstrap",
            "coefficients": "scipy.stats",
        },
        "warnings": meta.warnings,
        "left_out": [{"submission": name, "status": status} for name, status in meta.left_out],
        "skipped": list(meta.skipped),
    }
    publish(
        Path(output),
        {
            CORRELATION_CSV: utf8(buffer.getvalue()),
            CORRELATION_JSON: json_bytes(payload),
            REPORT_HTML: utf8(correlation_report(meta)),
        },
        [CORRELATION_CSV, CORRELATION_JSON, REPORT_HTML, ERROR_LOG],
        CORRELATION_JSON,
    )


#: Below this many items a level's coefficients carry a small-sample note.
SMALL_SAMPLE = 5


def correlation_table(meta: Meta) -> str:
    """The terminal table of ``correlate``."""

    def f(v: float | None) -> str:
        return "   -  " if v is None or v != v else f"{v:6.3f}"

    lines = [
        f"{'level':<7}{'figure':<15}{'n':>6}  {'pearson':>8} {'[95%]':<17}{'spearman':>8} {'[95%]':<17}"
        f"{'kendall':>8} {'[95%]':<17}{'pairwise':>8}",
        "-" * 112,
    ]
    for r in meta.rows:
        lines.append(
            f"{r.level:<7}{r.figure:<15}{r.n:>6}  {f(r.pearson):>8} [{f(r.pearson_low)},{f(r.pearson_high)}] "
            f"{f(r.spearman):>8} [{f(r.spearman_low)},{f(r.spearman_high)}] "
            f"{f(r.kendall):>8} [{f(r.kendall_low)},{f(r.kendall_high)}] {f(r.pairwise_accuracy):>8}"
        )
    few = sorted({r.n for r in meta.rows if r.level == "system" and r.n < SMALL_SAMPLE})
    if few:
        lines.append(
            f"note: the system level has {few[0]} items: with so few, a coefficient of 1 or -1 is easy to "
            "reach by chance and its interval says little; rate more systems before trusting it"
        )
    lines.extend(meta.left_out_lines())
    return "\n".join(lines)


#: The outputs each command's failure replaces or removes, by its commit marker.
FAILURE_OUTPUTS: dict[str, tuple[str, ...]] = {
    SCORES_JSON: SCORE_OUTPUTS,
    LEADERBOARD_JSON: (LEADERBOARD_CSV, LEADERBOARD_JSON, REPORT_HTML, AUDIT_JSON, ERROR_LOG),
    CORRELATION_JSON: (CORRELATION_CSV, CORRELATION_JSON, REPORT_HTML, ERROR_LOG),
}
