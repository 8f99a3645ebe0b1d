"""Per-turn scores to the integral score (contract section 1).

    S_i   = (mean METEOR over turns of dialogue i + mean HM over turns of i) / 2
    S_j   = mean of S_i over the dialogues of type j
    score = sum_j w_j S_j / sum_{j present} w_j

Top-level ``meteor`` and ``hidden_metric`` are combined with the same weights.
Sums use ``math.fsum``, so the result does not depend on the order of lines.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from scorer.errors import ConfigError
from scorer.inputs.contract import DIALOGUE_TYPES

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
    """Combine per-turn scores; every dialogue must have at least one turn."""
    dialogs = _dialog_means(turns)
    per_type: dict[str, list[tuple[float, float, float, int]]] = {}
    for dialog_type, m, h, n in dialogs:
        per_type.setdefault(dialog_type, []).append((m, h, (m + h) / 2, n))
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
    scaled = scaled_weights({name: t.weight for name, t in by_type.items()})
    total = math.fsum(scaled.values())
    if not total > 0:
        raise ConfigError(
            "the weights of the dialogue types present sum to 0; give one of "
            f"{', '.join(by_type)} a positive weight"
        )

    def combine(attr: str) -> float:
        return math.fsum(scaled[name] * getattr(s, attr) for name, s in by_type.items()) / total

    return Summary(
        combine("score"), combine("meteor"), combine("hidden_metric"), by_type, len(dialogs), len(turns)
    )


def scaled_weights(weights: Mapping[str, float]) -> dict[str, float]:
    """``weights`` multiplied by one power of two that brings the largest near 1.

    Renormalising by ``sum_j w_j`` is unchanged by a common factor, and a power
    of two changes no bit of any product or sum, so the integral is the same to
    the last bit wherever nothing underflows; where the weights are tiny
    (``5e-324``), their products no longer underflow to 0.
    """
    largest = max(weights.values(), default=0.0)
    if not largest > 0:
        return dict(weights)
    shift = -math.frexp(largest)[1]
    return {name: math.ldexp(w, shift) for name, w in weights.items()}


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
        scores.setdefault(dialog_type, []).append((m + h) / 2)
    return scores
