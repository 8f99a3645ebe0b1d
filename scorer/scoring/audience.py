"""Who an output is for (contract section 6, "What participants see").

The organizer holds the private answers: their pages (``score --report``, each
entry's page under ``leaderboard``) show the reference variants, the audit and
every per-turn figure, and say at their top that they are not for publishing.
A participant sees what ``codalab`` writes and prints, and on a published
Codabench competition so does everyone: nothing of ``answers.jsonl`` (no
variant or part of one, no best-variant index, no reference length), and by
default no per-turn figure; ``[participants] turn_details`` adds each turn's
METEOR and the participant's own answer with its matched words marked.

The audience is decided once, where the command is chosen, and travels as this
one value through scoring and every writer, so a new output cannot forget it.
"""

from __future__ import annotations

from dataclasses import dataclass

from scorer.inputs.config import Config
from scorer.inputs.contract import DETAILED_RESULTS, REPORT_HTML

#: The columns of a participant's ``details.csv`` (``turn_details``): the organizer's columns without
#: ``best_reference`` and without any figure that gives a reference's length (``recall``, ``fmean``,
#: ``penalty``, ``ref_tokens``, ``chunks``).
PARTICIPANT_COLUMNS = (
    "dialog_id",
    "type",
    "turn",
    "meteor",
    "hidden_metric",
    "ppl",
    "matches",
    "precision",
    "cand_tokens",
)


@dataclass(frozen=True)
class Audience:
    """Who reads a run's outputs, with what they may see.

    ``organizer``: the reference texts, the audit and every per-turn figure. Otherwise a participant:
    ``turn_details`` says whether per-turn figures (METEOR, and the hidden metric unless
    ``turn_hidden_metric`` is false) are shown. ``page`` is the name of the run's page."""

    organizer: bool
    turn_details: bool = True
    turn_hidden_metric: bool = True
    page: str = REPORT_HTML

    @classmethod
    def participant(cls, config: Config, page: str = DETAILED_RESULTS) -> Audience:
        """The participant of a competition run with ``config``: per-turn figures only with
        ``[participants] turn_details``, a turn's hidden metric only while its settings are public
        (contract section 7)."""
        return cls(
            organizer=False,
            turn_details=config.participants.turn_details,
            turn_hidden_metric=not config.hidden_metric.is_private,
            page=page,
        )

    @property
    def references(self) -> bool:
        """Whether outputs may show reference text, best-variant indexes and reference lengths."""
        return self.organizer

    @property
    def audit(self) -> bool:
        """Whether the perplexity audit is written (organizer-side commands only, contract section 9)."""
        return self.organizer

    @property
    def details_csv(self) -> bool:
        """Whether ``details.csv`` (one row per turn) is written."""
        return self.organizer or self.turn_details

    @property
    def marked_answers(self) -> bool:
        """Whether the page lists every turn's answer with its matched words marked (participants with
        ``turn_details``; the organizer's page explains the lowest turns against their references)."""
        return not self.organizer and self.turn_details


#: The organizer of ``score`` and of ``leaderboard``'s entry pages.
ORGANIZER = Audience(organizer=True)
