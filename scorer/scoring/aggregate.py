"""Per-turn scores to the integral score (contract section 1).

    S_i   = (mean METEOR over turns of dialogue i + mean HM over turns of i) / 2
    S_j   = mean of S_i over the dialogues of type j
    score = sum_j w_j S_j / sum_{j present} w_j

The rules themselves (the mean of the two halves, the weighted integral) are
:mod:`scorer.scoring.competition`'s; this module groups the turns for them.

Top-level ``meteor`` and ``hidden_metric`` are combined with the same weights.
Every mean is :func:`~scorer.scoring.competition.mean` (an exactly rounded sum), so the result does not
depend on the order of lines; a dialogue's means are taken in one place, :func:`dialogue_figures`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

from scorer.inputs.contract import DIALOGUE_TYPES

from .competition import combined, mean, weighted

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


class DialogueFigures(NamedTuple):
    """One dialogue's figures: its type, how many turns it has, its METEOR and hidden metric (each the
    :func:`~scorer.scoring.competition.mean` over its turns) and its S_i (:attr:`score`)."""

    dialog_id: str
    type: str
    turns: int
    meteor: float
    hidden_metric: float

    @property
    def score(self) -> float:
        """S_i: the two halves :func:`~scorer.scoring.competition.combined`."""
        return combined(self.meteor, self.hidden_metric)


def dialogue_figures(turns: Sequence[TurnScore]) -> DialogueFigures:
    """The figures of one dialogue, from its turns (at least one): the one place a dialogue's means are
    taken, for aggregation, the bootstrap, correlation and the frames alike."""
    first = turns[0]
    meteor, hidden_metric = mean([t.meteor for t in turns]), mean([t.hidden_metric for t in turns])
    return _figures((first.dialog_id, first.type, len(turns), meteor, hidden_metric))


#: A :class:`DialogueFigures` made of a tuple of its fields in order, without a call of its ``__new__``.
_figures = partial(tuple.__new__, DialogueFigures)


def by_dialogue(turns: Sequence[TurnScore]) -> dict[str, list[TurnScore]]:
    """``turns`` grouped by dialogue, the dialogues in the order of their first turn."""
    grouped: dict[str, list[TurnScore]] = {}
    for t in turns:
        grouped.setdefault(t.dialog_id, []).append(t)
    return grouped


def every_dialogue(turns: Sequence[TurnScore]) -> list[DialogueFigures]:
    """The figures of every dialogue of ``turns``, in the order of their first turn."""
    return [dialogue_figures(ts) for ts in by_dialogue(turns).values()]


def aggregate(turns: Sequence[TurnScore], weights: Mapping[str, float]) -> Summary:
    """Combine per-turn scores with the competition's rules (:mod:`scorer.scoring.competition`); every
    dialogue must have at least one turn."""
    dialogues = every_dialogue(turns)
    per_type: dict[str, list[DialogueFigures]] = {}
    for d in dialogues:
        per_type.setdefault(d.type, []).append(d)
    by_type = {}
    for name in DIALOGUE_TYPES:
        rows = per_type.get(name)
        if rows:
            by_type[name] = TypeSummary(
                weight=float(weights[name]),
                dialogs=len(rows),
                turns=sum(d.turns for d in rows),
                meteor=mean([d.meteor for d in rows]),
                hidden_metric=mean([d.hidden_metric for d in rows]),
                score=mean([d.score for d in rows]),
            )
    integral, meteor, hm = (
        weighted({name: getattr(s, attr) for name, s in by_type.items()}, weights)
        for attr in ("score", "meteor", "hidden_metric")
    )
    return Summary(integral, meteor, hm, by_type, len(dialogues), len(turns))


def dialog_scores(turns: Sequence[TurnScore]) -> dict[str, list[float]]:
    """``S_i`` of every dialogue, grouped by type, dialogues in the order of ``turns``."""
    scores: dict[str, list[float]] = {}
    for d in every_dialogue(turns):
        scores.setdefault(d.type, []).append(d.score)
    return scores
