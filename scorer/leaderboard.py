"""Ranking many submissions: entries, ranks, intervals and paired p-values.

Every subdirectory or ``.zip`` file of the submissions folder is one
submission, named by its entry name (``team-a`` or ``team-a.zip``); hidden
entries and other files are skipped and listed. Valid submissions are ranked
by integral, descending (equal integrals share a rank; names order them);
each gets a 95% bootstrap interval and, from rank 2 on, the paired p-value
against the submission ranked just above it (:mod:`scorer.significance`).
Invalid ones follow, unranked, with their first errors.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .aggregate import dialog_scores
from .contract import DIALOGUE_TYPES
from .errors import Issue

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 12345


@dataclass
class Entry:
    name: str
    path: Path
    result: object | None = None  # api.ScoreResult for a valid submission
    errors: list[Issue] = field(default_factory=list)
    more_errors: int = 0
    rank: int | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    compared_with: str | None = None

    @property
    def status(self) -> str:
        return "ok" if self.result is not None else "invalid"


@dataclass(frozen=True)
class Leaderboard:
    entries: list[Entry]  # ranked valid entries, then invalid ones by name
    signature: str
    resamples: int
    seed: int
    skipped: list[str]

    def to_frame(self):
        """The ``leaderboard.csv`` table as a pandas DataFrame (pandas imported here)."""
        import io

        import pandas as pd

        from .report import leaderboard_csv

        return pd.read_csv(io.BytesIO(leaderboard_csv(self)), keep_default_na=False,
                           na_values={c: [""] for c in ("rank", "integral", "ci_low", "ci_high", "meteor",
                                                        "hidden_metric", "p_value")})


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


def rank(entries: list[Entry], weights: dict[str, float], resamples: int, seed: int,
         signature: str, skipped: list[str]) -> Leaderboard:
    """Order, rank and compare ``entries`` (scored or invalid) as the module docstring says."""
    from .significance import interval, make_strata, paired_p_value, resampled_integrals  # numpy: only here

    valid = sorted((e for e in entries if e.result is not None),
                   key=lambda e: (-e.result.summary.integral, e.name))
    invalid = sorted((e for e in entries if e.result is None), key=lambda e: e.name)
    if valid:
        per_type = {t: valid[0].result.summary.by_type[t].dialogs
                    for t in DIALOGUE_TYPES if t in valid[0].result.summary.by_type}
        strata = make_strata(per_type, weights, resamples, seed)
        samples = [resampled_integrals(strata, dialog_scores(e.result.turns)) for e in valid]
        for k, entry in enumerate(valid):
            integral = entry.result.summary.integral
            same_as_above = k > 0 and integral == valid[k - 1].result.summary.integral
            entry.rank = valid[k - 1].rank if same_as_above else k + 1
            entry.ci_low, entry.ci_high = interval(samples[k])
            if k > 0:
                above = valid[k - 1]
                entry.compared_with = above.name
                entry.p_value = paired_p_value(samples[k], samples[k - 1], integral,
                                               above.result.summary.integral)
    return Leaderboard(valid + invalid, signature, resamples, seed, skipped)
