"""Per-turn scores to the integral score (contract section 1).

    S_i   = (mean METEOR over turns of dialogue i + mean HM over turns of i) / 2
    S_j   = mean of S_i over the dialogues of type j
    score = sum_j w_j S_j / sum_{j present} w_j

The rules themselves (the mean of the two halves, the weighted integral) are
:mod:`scorer.scoring.competition`'s; this module groups the turns for them.

Top-level ``meteor`` and ``hidden_metric`` are combined with the same weights.
Sums use ``math.fsum``, so the result does not depend on the order of lines.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from scorer.inputs.contract import DIALOGUE_TYPES

from .competition import combined, weighted

if TYPE_CHECKING:
    from scorer.metric.meteor import MeteorScore


class TurnScore(NamedTuple):
    """One scored turn: an immutable record (a named tuple, as :class:`~scorer.metric.meteor.MeteorScore`),
    with the answer and its METEOR details when kept."""

    dialog_id: str
    type: str
    turn: int
    meteor: float
    best_reference: int
    hidden_metric: float
    ppl: float
    answer: str = ""
    details: MeteorScore | None = None


@dataclass(frozen=True)
class TypeSummary:
    weight: float
    dialogs: int
    turns: int
    meteor: float
    hidden_metric: float
    score: float


@dataclass(frozen=True)
class Summary:
    integral: float
    meteor: float
    hidden_metric: float
    by_type: dict[str, TypeSummary]
    dialogs: int
    turns: int


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def aggregate(turns: Sequence[TurnScore], weights: Mapping[str, float]) -> Summary:
    """Combine per-turn scores with the competition's rules (:mod:`scorer.scoring.competition`); every
    dialogue must have at least one turn."""
    dialogs = _dialog_means(turns)
    per_type: dict[str, list[tuple[float, float, float, int]]] = {}
    for dialog_type, m, h, n in dialogs:
        per_type.setdefault(dialog_type, []).append((m, h, combined(m, h), n))
    by_type = {}
    for name in DIALOGUE_TYPES:
        rows = per_type.get(name)
        if rows:
            by_type[name] = TypeSummary(
                weight=float(weights[name]),
                dialogs=len(rows),
                turns=sum(r[3] for r in rows),
                meteor=_mean([r[0] for r in rows]),
                hidden_metric=_mean([r[1] for r in rows]),
                score=_mean([r[2] for r in rows]),
            )
    integral, meteor, hm = (
        weighted({name: getattr(s, attr) for name, s in by_type.items()}, weights)
        for attr in ("score", "meteor", "hidden_metric")
    )
    return Summary(integral, meteor, hm, by_type, len(dialogs), len(turns))


def _dialog_means(turns: Sequence[TurnScore]) -> list[tuple[str, float, float, int]]:
    """(type, mean METEOR, mean HM, turns) of every dialogue, in the order of ``turns``."""
    by_dialog: dict[str, list[TurnScore]] = {}
    for t in turns:
        by_dialog.setdefault(t.dialog_id, []).append(t)
    return [
        (ts[0].type, _mean([t.meteor for t in ts]), _mean([t.hidden_metric for t in ts]), len(ts))
        for ts in by_dialog.values()
    ]


def dialog_scores(turns: Sequence[TurnScore]) -> dict[str, list[float]]:
    """``S_i`` of every dialogue, grouped by type, dialogues in the order of ``turns``."""
    scores: dict[str, list[float]] = {}
    for dialog_type, m, h, _ in _dialog_means(turns):
        scores.setdefault(dialog_type, []).append(combined(m, h))
    return scores
