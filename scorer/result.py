"""What scoring a submission gives: its summary, its turns, its signature, its warnings."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .aggregate import Summary, TurnScore
from .contract import DIALOGUE_TYPES
from .errors import Issue
from .explain import ExplainedTurn
from .meteor import MeteorScore
from .stages import STAGE_NAMES


@dataclass(frozen=True)
class ScoreResult:
    summary: Summary
    turns: list[TurnScore]   # each carries its answer and its MeteorScore (``details``)
    signature: str
    warnings: list[Issue]
    lowest: tuple[ExplainedTurn, ...] = ()  # the turns of lowest METEOR, aligned (the report's last section)
    name: str = ""  # the submission's name (its file or folder), when it has one
    stages: tuple[str, ...] = STAGE_NAMES  # the matching stages that ran, in order

    @property
    def details(self) -> list[MeteorScore | None]:
        return [t.details for t in self.turns]

    def to_frame(self) -> Any:
        """One row per turn: the ``details.csv`` columns, with proper dtypes (pandas, imported here)."""
        import pandas as pd

        from .report import DETAIL_COLUMNS, detail_rows

        frame = pd.DataFrame(detail_rows(self), columns=DETAIL_COLUMNS)
        frame["chunks"] = frame["chunks"].replace("", None).astype("Int64")
        return frame.astype({"dialog_id": "string", "type": pd.CategoricalDtype(DIALOGUE_TYPES), "turn": "int64", "best_reference": "int64",
                             "matches": "int64", "cand_tokens": "int64", "ref_tokens": "int64",
                             "exact_search": "bool"})

    def dialogs_frame(self) -> Any:
        """One row per dialogue: type, turns, mean METEOR, mean hidden metric and S_i."""
        import pandas as pd

        frame = self.to_frame()
        grouped = frame.groupby("dialog_id", sort=False, observed=True)
        out = grouped.agg(type=("type", "first"), turns=("turn", "size"), meteor=("meteor", "mean"),
                          hidden_metric=("hidden_metric", "mean")).reset_index()
        out["score"] = (out["meteor"] + out["hidden_metric"]) / 2
        return out.astype({"dialog_id": "string"}) if isinstance(out, pd.DataFrame) else out
