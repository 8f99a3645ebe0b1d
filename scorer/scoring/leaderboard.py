"""Ranking many submissions: entries, ranks, intervals and paired p-values.

Every subdirectory or ``.zip`` file of the submissions folder is one
submission, named by its entry name (``team-a`` or ``team-a.zip``); hidden
entries and other files are skipped and listed. Valid submissions are ranked
by integral, descending (equal integrals share a rank; names order them);
each gets a 95% bootstrap interval and, from rank 2 on, the paired p-value
against the submission ranked just above it (:mod:`scorer.scoring.significance`).
Invalid ones follow, unranked, with their first errors; then entries whose
scoring failed for another reason (status ``error``, with the message), so
one entry's failure never stops the others from being ranked.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from .aggregate import dialog_scores
from scorer.inputs.contract import DIALOGUE_TYPES
from scorer.errors import Issue
from scorer.progress import BOOTSTRAP, Progress
from .result import ScoreResult
from .significance import interval, make_strata, paired_p_value, resampled_integrals
from scorer.metric.stages import STAGE_NAMES

#: How many of an invalid entry's errors the leaderboard shows.
FIRST_ERRORS = 5
#: The columns of every leaderboard table (``leaderboard.csv``, ``.json``, the page), in order.
COLUMNS = ("rank", "submission", "integral", "ci_low", "ci_high", "meteor", "hidden_metric", "status",
           *DIALOGUE_TYPES, "p_value", "compared_with", "errors")
TEXT_COLUMNS = ("submission", "status", "compared_with", "errors")


@dataclass(frozen=True)
class Entry:
    """One submission as read and scored: its result when valid, else its first errors."""

    name: str
    path: Path
    result: ScoreResult | None = None
    errors: tuple[Issue, ...] = ()
    more_errors: int = 0  # errors found beyond ``errors``
    failed: bool = False  # scoring failed for a reason other than an invalid upload (``errors`` says which)

    @property
    def status(self) -> str:
        """``ok`` (scored), ``invalid`` (the upload breaks the contract) or ``error`` (scoring failed)."""
        return "ok" if self.result is not None else "error" if self.failed else "invalid"

    def scored(self) -> ScoreResult:
        """The result of a scored entry; ValueError for an invalid or failed one."""
        if self.result is None:
            raise ValueError(f"{self.name} was not scored ({self.status})")
        return self.result


@dataclass(frozen=True)
class Standing:
    """One row of the leaderboard: an entry and its place (rank, interval, p-value); None where not ranked."""

    entry: Entry
    rank: int | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    compared_with: str | None = None

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def result(self) -> ScoreResult | None:
        return self.entry.result

    def scored(self) -> ScoreResult:
        """The result of a ranked entry; ValueError for an unranked one."""
        return self.entry.scored()

    def interval(self) -> tuple[float, float]:
        """The 95% interval of a ranked entry; ValueError for an unranked one."""
        if self.ci_low is None or self.ci_high is None:
            raise ValueError(f"{self.name} is not ranked ({self.status})")
        return self.ci_low, self.ci_high

    @property
    def status(self) -> str:
        return self.entry.status

    @property
    def integral(self) -> float | None:
        return self.entry.result.summary.integral if self.entry.result else None

    @property
    def shown_errors(self) -> tuple[Issue, ...]:
        """The errors every table shows (the first :data:`FIRST_ERRORS`)."""
        return self.entry.errors[:FIRST_ERRORS]

    @property
    def errors_not_shown(self) -> int:
        return self.entry.more_errors + max(0, len(self.entry.errors) - FIRST_ERRORS)

    def values(self) -> dict[str, Any]:
        """The row by :data:`COLUMNS` (None where not applicable; ``errors`` as :class:`Issue` objects)."""
        s = self.entry.result.summary if self.entry.result else None
        return {"rank": self.rank, "submission": self.name, "integral": s.integral if s else None,
                "ci_low": self.ci_low, "ci_high": self.ci_high, "meteor": s.meteor if s else None,
                "hidden_metric": s.hidden_metric if s else None, "status": self.status,
                **{t: s.by_type[t].score if s and t in s.by_type else None for t in DIALOGUE_TYPES},
                "p_value": self.p_value, "compared_with": self.compared_with, "errors": list(self.shown_errors)}


@dataclass(frozen=True)
class Leaderboard:
    entries: tuple[Standing, ...]  # ranked valid entries, then invalid ones by name, then failed ones by name
    signature: str
    resamples: int
    seed: int
    skipped: tuple[str, ...]
    stages: tuple[str, ...] = STAGE_NAMES  # the matching stages that ran, in order

    @property
    def ranked(self) -> tuple[Standing, ...]:
        """The valid entries, by rank."""
        return tuple(e for e in self.entries if e.result is not None)

    @property
    def types(self) -> tuple[str, ...]:
        """The dialogue types of the test set, in the contract's order."""
        ranked = self.ranked
        return tuple(t for t in DIALOGUE_TYPES if ranked and t in ranked[0].scored().summary.by_type)

    def rows(self) -> list[dict[str, Any]]:
        """One row per entry by :data:`COLUMNS` (None where not applicable; ``errors`` as :class:`Issue`)."""
        return [standing.values() for standing in self.entries]

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame, as ``leaderboard.csv`` reads: numbers as floats (NaN where not
        applicable), ``rank`` as Int64, text as str ("" where none), the errors joined by `` | ``."""
        import pandas as pd

        rows = [row | {"errors": " | ".join(str(issue) for issue in row["errors"])} for row in self.rows()]
        frame = pd.DataFrame(rows, columns=list(COLUMNS))
        text = [c for c in COLUMNS if c in TEXT_COLUMNS]
        frame[text] = frame[text].astype(object).where(frame[text].notna(), "").astype("str")
        numbers = [c for c in COLUMNS if c not in TEXT_COLUMNS and c != "rank"]
        frame[numbers] = frame[numbers].astype("float64")
        frame["rank"] = frame["rank"].astype("Int64")
        return frame


def find_submissions(folder: Path) -> tuple[list[tuple[str, Path]], list[str]]:
    """``(name, path)`` of every submission in ``folder``, by name; and the names skipped."""
    found, skipped = [], []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        path = Path(entry.path)
        if entry.name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False) or (entry.is_file(follow_symlinks=False)
                                                    and entry.name.lower().endswith(".zip")):
            found.append((entry.name, path))
        else:
            skipped.append(entry.name)
    return found, skipped


def rank(entries: Sequence[Entry], weights: Mapping[str, float], resamples: int, seed: int,
         signature: str, skipped: Sequence[str], stages: tuple[str, ...] = STAGE_NAMES,
         progress: Progress | None = None) -> Leaderboard:
    """Order, rank and compare ``entries`` (scored or invalid) as the module docstring says;
    ``progress`` hears the entries resampled."""
    valid = sorted((e for e in entries if e.result is not None),
                   key=lambda e: (-e.scored().summary.integral, e.name))
    invalid = sorted((e for e in entries if e.result is None), key=lambda e: (e.failed, e.name))
    standings: list[Standing] = []
    if valid:
        first = valid[0].scored().summary.by_type
        per_type = {t: first[t].dialogs for t in DIALOGUE_TYPES if t in first}
        strata = make_strata(per_type, weights, resamples, seed)
        samples = []
        for k, e in enumerate(valid):
            if progress:
                progress(BOOTSTRAP, k, len(valid))
            samples.append(resampled_integrals(strata, dialog_scores(e.scored().turns)))
        if progress:
            progress(BOOTSTRAP, len(valid), len(valid))
        for k, entry in enumerate(valid):
            integral = entry.scored().summary.integral
            low, high = interval(samples[k])
            if k == 0:
                standings.append(Standing(entry, 1, low, high))
                continue
            above = standings[-1]
            place = above.rank if integral == above.integral else k + 1
            p = paired_p_value(samples[k], samples[k - 1], integral, valid[k - 1].scored().summary.integral)
            standings.append(Standing(entry, place, low, high, p, above.name))
    standings += [Standing(e) for e in invalid]
    return Leaderboard(tuple(standings), signature, resamples, seed, tuple(skipped), stages)
