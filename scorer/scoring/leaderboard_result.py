"""What ranking gives (contract section 6): :class:`Entry` (a submission as read and scored),
:class:`Standing` (its place, interval and p-value) and :class:`Leaderboard` (every standing, the
settings), which owns its rows and columns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorer.errors import Issue
from scorer.inputs.contract import DIALOGUE_TYPES
from scorer.metric.stages import STAGE_NAMES

from .audit import Audit, audit_frame
from .result import ScoreResult

if TYPE_CHECKING:
    import pandas as pd

#: How many of an invalid entry's errors the leaderboard shows.
FIRST_ERRORS = 5
#: The columns of every leaderboard table (``leaderboard.csv``, ``.json``, the page), in order.
COLUMNS = (
    "rank",
    "submission",
    "integral",
    "ci_low",
    "ci_high",
    "meteor",
    "hidden_metric",
    "status",
    *DIALOGUE_TYPES,
    "p_value",
    "compared_with",
    "errors",
    "flags",
)
TEXT_COLUMNS = ("submission", "status", "compared_with", "errors", "flags")


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
        return {
            "rank": self.rank,
            "submission": self.name,
            "integral": s.integral if s else None,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "meteor": s.meteor if s else None,
            "hidden_metric": s.hidden_metric if s else None,
            "status": self.status,
            **{t: s.by_type[t].score if s and t in s.by_type else None for t in DIALOGUE_TYPES},
            "p_value": self.p_value,
            "compared_with": self.compared_with,
            "errors": list(self.shown_errors),
            "flags": "",
        }


@dataclass(frozen=True)
class Leaderboard:
    """What ranking a folder of submissions gives (``api.score_leaderboard``): every entry in table order
    with its rank, 95% interval and paired p-value (invalid and failed entries after the ranked ones), the
    signature, the bootstrap's settings, the names skipped, and the perplexity audit of every scored entry.
    ``rows()`` and ``to_frame()`` give the table as ``leaderboard.csv`` has it; ``audit_frame()`` the
    audit."""

    entries: tuple[Standing, ...]  # ranked valid entries, then invalid ones by name, then failed ones by name
    signature: str
    resamples: int
    seed: int
    skipped: tuple[str, ...]
    stages: tuple[str, ...] = STAGE_NAMES  # the matching stages that ran, in order
    #: The perplexity audit of every scored entry, flags across entries included (contract section 9).
    audit: Mapping[str, Audit] = field(default_factory=dict)
    audit_private: bool = False  # whether the audit's thresholds are the organizer's own (never shown)
    #: Which configuration the run used (contract section 7): ``--config PATH``, ``config.toml in DIR`` or
    #: ``built-in default``.
    config_source: str = "built-in default"

    def audit_frame(self) -> pd.DataFrame:
        """The audit of every scored entry, one row each (:func:`scorer.scoring.audit.audit_frame`)."""
        return audit_frame(self.audit)

    def __repr__(self) -> str:
        ranked = self.ranked
        top = ", ".join(f"{e.rank}. {e.name} {e.scored().summary.integral:.4f}" for e in ranked[:3])
        flagged = sum(1 for a in self.audit.values() if a.flags)
        return (
            f"<Leaderboard: {len(ranked)} ranked, {len(self.entries) - len(ranked)} invalid or failed, "
            f"{flagged} flagged; {top}{', ...' if len(ranked) > 3 else ''}; {self.signature}>"
        )

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
        rows = [standing.values() for standing in self.entries]
        for row in rows:
            audit = self.audit.get(row["submission"])
            row["flags"] = ";".join(audit.flag_names) if audit is not None else ""
        return rows

    def to_frame(self) -> pd.DataFrame:
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
