"""What scoring a submission gives: its summary, its turns, its signature, its warnings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scorer.errors import Issue
from scorer.inputs.contract import DIALOGUE_TYPES
from scorer.metric.meteor import MeteorRu, MeteorScore
from scorer.metric.stages import STAGE_NAMES

from .aggregate import Summary, TurnScore, TypeSummary, every_dialogue
from .audience import ORGANIZER, PARTICIPANT_COLUMNS, Audience
from .audit import Audit, audit_frame
from .explain import ExplainedTurn, MarkedAnswer, explain

if TYPE_CHECKING:
    import pandas as pd

#: The columns of ``details.csv`` and of :meth:`ScoreResult.to_frame`, in order.
DETAIL_COLUMNS = [
    "dialog_id",
    "type",
    "turn",
    "meteor",
    "best_reference",
    "hidden_metric",
    "ppl",
    "matches",
    "chunks",
    "precision",
    "recall",
    "fmean",
    "penalty",
    "cand_tokens",
    "ref_tokens",
    "exact_search",
]


@dataclass(frozen=True)
class ScoreResult:
    """What scoring one submission gives (``api.score_submission``): the per-type and overall figures
    (``summary``: the integral, METEOR, hidden metric, each type's S_j), every turn with its METEOR details,
    the signature, the warnings, the lowest turns explained, and the perplexity audit. ``to_frame()`` and
    ``dialogs_frame()`` give the turns and dialogues as pandas DataFrames, ``audit_frame()`` the audit."""

    summary: Summary
    turns: list[TurnScore]  # each carries its answer and its MeteorScore (``details``)
    signature: str
    warnings: list[Issue]
    lowest: tuple[ExplainedTurn, ...] = ()  # the turns of lowest METEOR, aligned (the report's last section)
    name: str = ""  # the submission's name (its file or folder), when it has one
    stages: tuple[str, ...] = STAGE_NAMES  # the matching stages that ran, in order
    audit: Audit | None = None  # the perplexity audit (contract section 9); it never changes a number above
    audit_private: bool = False  # whether the audit's thresholds are the organizer's own (never shown)
    audience: Audience = ORGANIZER  # who its outputs are for (contract section 6): what every writer may show
    marked: tuple[MarkedAnswer, ...] = ()  # each turn's answer, matched words marked (participants' details)
    #: The dialogues whose perplexities were computed against other targets than the current answers'
    #: (``ppl_targets.json``, contract section 10), in the order of ``dialogues.jsonl``.
    stale_perplexities: tuple[str, ...] = ()
    #: Which configuration the run used (contract section 7): ``--config PATH``, ``config.toml in DIR`` or
    #: ``built-in default``.
    config_source: str = "built-in default"
    #: What :meth:`explain` needs: the reference variants (the organizer's results only) and the metric.
    references: Mapping[str, Sequence[Sequence[str]]] | None = field(default=None, repr=False, compare=False)
    metric: MeteorRu | None = field(default=None, repr=False, compare=False)

    @property
    def by_type(self) -> dict[str, TypeSummary]:
        """The official per-type figures (``scores.json``'s ``by_type``): each type's weight, dialogues,
        turns, METEOR, hidden metric and score S_j, each mean taken per dialogue first, then over the type's
        dialogues (contract section 1), so grouping :meth:`to_frame`'s turns by type gives other numbers."""
        return self.summary.by_type

    def by_type_frame(self) -> pd.DataFrame:
        """:attr:`by_type` as a pandas DataFrame, one row per type present (the index), in the contract's
        order: ``weight``, ``dialogs``, ``turns``, ``meteor``, ``hidden_metric``, ``score``."""
        import pandas as pd

        columns = ["weight", "dialogs", "turns", "meteor", "hidden_metric", "score"]
        frame = pd.DataFrame(
            [[getattr(t, c) for c in columns] for t in self.by_type.values()],
            index=pd.Index(list(self.by_type), name="type", dtype="string"),
            columns=columns,
        )
        return frame.astype({"dialogs": "int64", "turns": "int64"})

    def explain(self, dialog_id: str, turn: int) -> str:
        """How METEOR scored one turn (``turn`` 0-based): the answer and every reference variant tokenised,
        the alignment (each link's stage), the chunks and the formula, as ``scorer explain`` prints them.
        Only the organizer's results hold the references: a participant's raises ``ValueError``, and so
        does a turn that is not there."""
        if self.references is None or self.metric is None:
            raise ValueError("this result holds no reference text (a participant's result)")
        answers = [t.answer for t in self.turns if t.dialog_id == dialog_id and t.turn == turn]
        if not answers:
            raise ValueError(f"no turn {turn} of dialogue {dialog_id!r} in this result")
        return explain(answers[0], list(self.references[dialog_id][turn]), self.metric)

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<ScoreResult {self.name or 'submission'}: integral {s.integral:.6f}, METEOR {s.meteor:.4f}, "
            f"hidden metric {s.hidden_metric:.4f}, {s.dialogs} dialogues, {s.turns} turns, "
            f"{len(self.warnings)} warning(s); {self.signature}>"
        )

    def audit_frame(self) -> pd.DataFrame:
        """The audit's figures and flags as a one-row pandas DataFrame (columns: ``submission``, the figures
        of ``audit.json``, ``flags`` joined by ``;``)."""
        return audit_frame({self.name: self.audit} if self.audit is not None else {})

    @property
    def details(self) -> list[MeteorScore | None]:
        return [t.details for t in self.turns]

    def to_frame(self) -> pd.DataFrame:
        """One row per turn: the ``details.csv`` columns, with proper dtypes (pandas, imported here)."""
        import pandas as pd

        frame = pd.DataFrame(detail_rows(self), columns=list(detail_columns(self.audience)))
        if "chunks" in frame:
            frame["chunks"] = frame["chunks"].replace("", None).astype("Int64")
        types: dict[str, Any] = {
            "dialog_id": "string",
            "type": pd.CategoricalDtype(list(DIALOGUE_TYPES)),
            "turn": "int64",
            "best_reference": "int64",
            "matches": "int64",
            "cand_tokens": "int64",
            "ref_tokens": "int64",
            "exact_search": "bool",
        }
        return frame.astype({k: v for k, v in types.items() if k in frame})

    def dialogs_frame(self) -> pd.DataFrame:
        """One row per dialogue: type, turns, mean METEOR, mean hidden metric and S_i, the figures aggregation
        takes (:func:`~scorer.scoring.aggregate.dialogue_figures`)."""
        import pandas as pd

        dialogues = every_dialogue(self.turns)
        return pd.DataFrame(
            {
                "dialog_id": pd.array([d.dialog_id for d in dialogues], dtype="string"),
                "type": pd.Categorical([d.type for d in dialogues], categories=list(DIALOGUE_TYPES)),
                "turns": pd.array([d.turns for d in dialogues], dtype="int64"),
                "meteor": pd.array([d.meteor for d in dialogues], dtype="float64"),
                "hidden_metric": pd.array([d.hidden_metric for d in dialogues], dtype="float64"),
                "score": pd.array([d.score for d in dialogues], dtype="float64"),
            }
        )


def detail_columns(audience: Audience) -> tuple[str, ...]:
    """The header of ``details.csv`` for ``audience`` (a participant's has no reference figure)."""
    return tuple(DETAIL_COLUMNS) if audience.references else PARTICIPANT_COLUMNS


def detail_rows(result: ScoreResult, start: int = 0, stop: int | None = None) -> list[tuple[Any, ...]]:
    """The rows of ``details.csv`` for turns ``start:stop``: :func:`detail_values` a row at a time."""
    return list(zip(*detail_values(result, start, stop)))


def detail_values(result: ScoreResult, start: int = 0, stop: int | None = None) -> list[Sequence[Any]]:
    """The columns of ``details.csv`` for turns ``start:stop``, a sequence of values each, as the result's
    audience may see them: for the organizer every column (``chunks`` is "" when no alignment was built), for
    a participant :data:`~scorer.scoring.audience.PARTICIPANT_COLUMNS` (``hidden_metric`` "" while its
    settings are private). The turns and their details are named tuples, turned into columns whole."""
    audience, turns = result.audience, result.turns[start:stop]
    if not turns:
        return [() for _ in detail_columns(audience)]
    ids, types, numbers, meteor, best, hidden, ppl, _, details = zip(*turns)
    if None in details:  # a turn scored without its details: its figures are ""
        figures = list(zip(*map(_answer_columns if not audience.references else _alignment_columns, turns)))
    elif not audience.references:
        _, precision, _, _, _, matches, _, cand, *_ = zip(*details)
        figures = [matches, precision, cand]
    else:
        _, precision, recall, fmean, penalty, matches, chunks, cand, ref, _, exact = zip(*details)
        if chunks.count(None):
            chunks = tuple("" if c is None else c for c in chunks)
        figures = [matches, chunks, precision, recall, fmean, penalty, cand, ref, exact]
    if not audience.references:
        shown = hidden if audience.turn_hidden_metric else ("",) * len(turns)
        return [ids, types, numbers, meteor, shown, ppl, *figures]
    return [ids, types, numbers, meteor, best, hidden, ppl, *figures]


def _answer_columns(turn: TurnScore) -> tuple[Any, ...]:
    """``matches``, ``precision`` and ``cand_tokens`` of one turn: what a participant's row may show."""
    d = turn.details
    return ("",) * 3 if d is None else (d.matches, d.precision, d.cand_len)


def _alignment_columns(turn: TurnScore) -> tuple[Any, ...]:
    """``matches`` to ``exact_search`` of one turn; empty for a turn scored without its details."""
    d = turn.details
    if d is None:
        return ("",) * 9
    return (
        d.matches,
        "" if d.chunks is None else d.chunks,
        d.precision,
        d.recall,
        d.fmean,
        d.penalty,
        d.cand_len,
        d.ref_len,
        d.exact_search,
    )
