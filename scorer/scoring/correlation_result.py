"""What ``correlate`` gives (contract section 8): one :class:`Correlation` row per level and figure, in
:data:`COLUMNS`, and :class:`Meta`, the rows with the data behind them and the settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: The columns of ``correlation.csv`` and of every correlation table, in order.
COLUMNS = [
    "level",
    "figure",
    "n",
    "pearson",
    "pearson_low",
    "pearson_high",
    "spearman",
    "spearman_low",
    "spearman_high",
    "kendall",
    "kendall_low",
    "kendall_high",
    "pairwise_accuracy",
]


@dataclass(frozen=True)
class Correlation:
    level: str
    figure: str
    n: int
    pearson: float
    pearson_low: float
    pearson_high: float
    spearman: float
    spearman_low: float
    spearman_high: float
    kendall: float
    kendall_low: float
    kendall_high: float
    pairwise_accuracy: float | None = None

    def row(self) -> list[Any]:
        return [getattr(self, c) for c in COLUMNS]


@dataclass(frozen=True)
class Meta:
    """What ``correlate`` found: one row per level and figure, the data behind them, the settings."""

    rows: list[Any]
    levels: list[Any]
    ratings_level: str
    signature: str
    resamples: int
    seed: int
    baselines: tuple[str, ...]
    warnings: list[str]
    left_out: tuple[tuple[str, str], ...] = ()  # (entry, status) of the entries not scored: invalid or error
    skipped: tuple[str, ...] = ()  # names in the submissions folder that are not entries
    #: Which configuration the run used (contract section 7): ``--config PATH``, ``config.toml in DIR`` or
    #: ``built-in default``.
    config_source: str = "built-in default"

    def left_out_lines(self) -> list[str]:
        """One line per entry left out and one for the names skipped, for every surface."""
        lines = [
            f"left out: {name} ({status}; see `scorer validate` or the leaderboard for its errors)"
            for name, status in self.left_out
        ]
        if self.skipped:
            lines.append(f"skipped (not a folder or .zip): {', '.join(self.skipped)}")
        return lines
