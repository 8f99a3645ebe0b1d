"""One validated submission scored against the reference data (contract sections 4 to 6 and 9): every
turn's METEOR and hidden metric, the per-type and integral aggregates, the explanations its audience's page
holds, the warnings about words the morphology could not analyse, and the perplexity audit
(:func:`score_validated`); and a result's perplexities replaced (:func:`with_perplexities`), which the
scoring step of a code competition does once the team's ``get_ppl`` has run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial

from scorer.errors import Issue
from scorer.inputs.config import Config, source_of
from scorer.inputs.contract import ANSWERS, SUBMISSION
from scorer.inputs.jsonio import shorten
from scorer.inputs.ppl_targets import stale_dialogues
from scorer.inputs.reference import ReferenceData, reference_digests
from scorer.inputs.validation import Dialogue, Submission
from scorer.metric.matcher import Matcher
from scorer.metric.meteor import MeteorRu, MeteorScore
from scorer.metric.text import tokenise
from scorer.metric.thesaurus import Thesaurus
from scorer.progress import AGGREGATING, EXPLAINING, SAVING, SCORING, Progress

from .aggregate import TurnScore, aggregate
from .audience import ORGANIZER, Audience
from .audit import Audit, audit_submission
from .competition import Competition, HiddenMetric, reference_field
from .explain import LOWEST_TURNS, ExplainedTurn, MarkedAnswer, lowest_turns, marked_answers
from .result import ScoreResult
from .turns import Ahead, score_turns


def score_validated(
    reference: ReferenceData,
    submission: Submission,
    config: Config,
    thesaurus: Thesaurus | None,
    jobs: int = 1,
    progress: Progress | None = None,
    matcher: Matcher | None = None,
    name: str = "",
    ppl_check: Mapping[str, list[float | None]] | None = None,
    audience: Audience = ORGANIZER,
    *,
    config_source: str | None = None,
    reference_id: str | None = None,
    ahead: Ahead | None = None,
) -> ScoreResult:
    """Score a submission already known to be valid against ``reference``, on ``jobs`` processes, and audit
    its perplexities (with ``ppl_check``, against the organizer's recomputed ones).

    ``progress("scoring", done, total)`` hears about scored turns; a ``matcher`` shared
    between submissions keeps its memoised lemmas and synsets. Returns a :class:`ScoreResult` carrying the
    submission's ``name``, its lowest-scoring turns, aligned, and its audit; for a participant
    (``audience``), no reference text: no lowest turns, no warning about a reference's word, and with
    ``turn_details`` each answer with its matched words marked. The signature's ``ref`` field is
    ``reference_id`` when given (a leaderboard digests its reference data once), else the digests of
    ``reference``'s files, keyed with the configuration's salt. ``ahead``: the reference data's types the
    run's worker is learning (:func:`~scorer.scoring.turns.score_turns`). Raises
    :class:`~scorer.workers.WorkerDied` (exit 2) when a worker process dies.
    """
    tell = progress or _silent
    if reference_id is None:
        reference_id = reference_field_of(reference, config, audience)
    keys = [(d, turn) for d in reference.dialogues for turn in range(d.n_turns)]
    answers = [submission.answers[d.dialog_id][turn] for d, turn in keys]
    tokens = reference.variant_tokens()
    variant_tokens = [tokens[d.dialog_id][turn] for d, turn in keys]
    tell(SCORING, 0, len(keys))
    competition = Competition.of(config, matcher or Matcher(thesaurus))
    metric = competition.metric
    metric.restore_table()
    # the persistent caches keep the reference data's words only: an upload's own never make a later run
    # heavier (contract section 3)
    vocabulary = reference.vocabulary
    kept: list[bool] = []

    def keep_caches() -> None:
        # from an empty cache every key is known once the processes have learnt them: the caches are kept
        # then, while the workers score (the save below then finds nothing new to write)
        metric.keep_table(vocabulary)
        metric.matcher.save(vocabulary)
        kept.append(True)

    scored = score_turns(
        answers,
        variant_tokens,
        metric,
        jobs,
        lambda done: tell(SCORING, done, len(keys)),
        learnt=keep_caches if matcher is None else None,
        ahead=ahead,
    )
    if not kept:
        metric.keep_table(vocabulary)
    turns = _records(keys, scored, answers, submission.ppl, competition, tell)
    summary = aggregate(turns, config.weights)
    tell(AGGREGATING, len(keys), len(keys))
    lowest, marked = _explained(audience, turns, reference, variant_tokens, metric, tell)
    if matcher is None:  # a matcher shared between submissions is saved once, by its owner
        tell(SAVING, 0, 1)
        metric.matcher.save(vocabulary)
        tell(SAVING, 1, 1)
    warnings = submission.warnings + _unanalysed_warnings(
        keys, answers, variant_tokens if audience.references else [], metric.matcher.unanalysed
    )
    audit = _audit(turns, config, _checked(turns, ppl_check), _probed(turns, submission.probes))
    stale: tuple[str, ...] = ()
    if submission.targets is not None and audience.organizer:
        variants = reference.variants()
        current = {d.dialog_id: variants[d.dialog_id] for d in reference.dialogues}
        stale = tuple(stale_dialogues(submission.targets, current, config.hidden_metric.salt))
    return ScoreResult(
        summary,
        turns,
        competition.signature(reference_id),
        warnings,
        lowest,
        name,
        config.meteor.stages,
        audit,
        config.audit.is_private,
        audience,
        marked,
        stale_perplexities=stale,
        config_source=config_source or source_of(config),
        references=reference.variants() if audience.references else None,
        metric=metric if audience.references else None,
    )


def reference_field_of(reference: ReferenceData, config: Config, audience: Audience = ORGANIZER) -> str:
    """The signature's ``ref`` field of ``reference`` (contract section 6), keyed with the configuration's
    salt, for ``audience`` (a participant's outputs without a salt say ``private`` for the answers)."""
    salt = config.hidden_metric.salt
    return reference_field(reference_digests(reference, salt), salt is not None, not audience.organizer)


def _silent(step: str, done: int, total: int) -> None:
    """The progress of a run nobody watches."""


def _records(
    keys: Sequence[tuple[Dialogue, int]],
    scored: Sequence[tuple[int, MeteorScore]],
    answers: Sequence[str],
    ppl: Mapping[str, list[float]],
    competition: Competition,
    tell: Progress,
) -> list[TurnScore]:
    """Every turn's record: its METEOR and best variant, its hidden metric from its perplexity. Aggregating
    is counted in turns (the summary after them ends the step at the turn count)."""
    total = len(keys)
    tell(AGGREGATING, 0, total)
    hm = competition.hidden.function
    turns: list[TurnScore] = []
    for start in range(0, total, REPORT_TURNS):
        if start:
            tell(AGGREGATING, start, total)
        stop = start + REPORT_TURNS
        perplexities = [ppl[dialogue.dialog_id][turn] for dialogue, turn in keys[start:stop]]
        turns += map(
            _turn_score,
            [
                (dialogue.dialog_id, dialogue.type, turn, s.score, best, hm(p), p, answer, s)
                for (dialogue, turn), (best, s), answer, p in zip(
                    keys[start:stop], scored[start:stop], answers[start:stop], perplexities
                )
            ],
        )
    return turns


#: A :class:`TurnScore` made of a tuple of its fields in order (what ``TurnScore(*fields)`` makes, without a
#: call of its ``__new__`` a turn).
_turn_score = partial(tuple.__new__, TurnScore)


def _explained(
    audience: Audience,
    turns: Sequence[TurnScore],
    reference: ReferenceData,
    variant_tokens: Sequence[Sequence[Sequence[str]]],
    metric: MeteorRu,
    tell: Progress,
) -> tuple[tuple[ExplainedTurn, ...], tuple[MarkedAnswer, ...]]:
    """What the audience's page explains (contract section 6): for the organizer the lowest turns against
    their best variants; for a participant with ``turn_details`` every answer with its matched words
    marked, and no reference text; otherwise nothing."""
    if audience.references:
        n_lowest = min(LOWEST_TURNS, len(turns))
        tell(EXPLAINING, 0, n_lowest)  # the step's start is shown before its first turn is explained
        explained = lowest_turns(
            turns, reference.variants(), metric, progress=lambda done: tell(EXPLAINING, done, n_lowest)
        )
        return explained, ()
    if audience.marked_answers:
        marked = marked_answers(
            turns, variant_tokens, metric, progress=lambda done: tell(EXPLAINING, done, len(turns))
        )
        return (), marked
    return (), ()


def _audit(
    turns: Sequence[TurnScore],
    config: Config,
    checked: list[tuple[float, float]] | None,
    probed: list[tuple[float, float]] | None = None,
) -> Audit:
    """The perplexity audit of these turns (contract section 9), with ``checked``'s recomputed values and
    ``probed``'s probe values."""
    return audit_submission(
        [t.ppl for t in turns],
        [t.meteor for t in turns],
        [bool(t.details and t.details.cand_len) for t in turns],
        config.audit,
        checked,
        probed,
    )


def _probed(
    turns: Sequence[TurnScore], probes: Mapping[str, list[float | None]] | None
) -> list[tuple[float, float]] | None:
    """(own, probe) perplexity of every turn with a probe (``ppl_probes.json``), else None."""
    if probes is None:
        return None
    return [(t.ppl, probe) for t in turns if (probe := probes[t.dialog_id][t.turn]) is not None]


def _checked(
    turns: Sequence[TurnScore], ppl_check: Mapping[str, list[float | None]] | None
) -> list[tuple[float, float]] | None:
    """(reported, recomputed) of every turn the organizer recomputed (``--ppl-check``), else None."""
    if ppl_check is None:
        return None
    return [
        (t.ppl, again)
        for t in turns
        if (again := (ppl_check.get(t.dialog_id) or [None] * (t.turn + 1))[t.turn]) is not None
    ]


#: How often (in turns) aggregating reports its progress.
REPORT_TURNS = 4096
#: At most this many words that could not be analysed are listed; the rest are counted in one more warning.
MAX_UNANALYSED_LISTED = 20


def _unanalysed_warnings(
    keys: Sequence[tuple[Dialogue, int]],
    answers: Sequence[str],
    variant_tokens: Sequence[Sequence[Sequence[str]]],
    unanalysed: dict[str, str],
) -> list[Issue]:
    """A warning for each word of these turns that the morphology could not analyse (its own lemma),
    located at its first turn: in the answers first, then in the references (``variant_tokens``: each
    turn's variants, tokenised)."""
    if not unanalysed:
        return []
    found: dict[str, Issue] = {}
    answer_tokens = ([tokenise(a)] for a in answers)
    for file, groups in ((SUBMISSION, answer_tokens), (ANSWERS, variant_tokens)):
        for (dialogue, turn), group in zip(keys, groups):
            for tokens in group:
                for token in tokens:
                    if token in unanalysed and token not in found:
                        found[token] = Issue(
                            file,
                            f"the word {shorten(token)!r} could not be analysed "
                            f"({unanalysed[token]}); it counts as its own lemma",
                            "unanalysed_word",
                            dialog_id=shorten(dialogue.dialog_id),
                            turn=turn,
                        )
    listed = list(found.values())[:MAX_UNANALYSED_LISTED]
    if len(found) > len(listed):
        listed.append(
            Issue(
                SUBMISSION,
                f"... and {len(found) - len(listed)} more word(s) that could not be analysed",
                "unanalysed_word",
            )
        )
    return listed


def with_perplexities(result: ScoreResult, ppl: Mapping[str, Sequence[float]], config: Config) -> ScoreResult:
    """``result`` (scored with any perplexities) with these perplexities instead: every turn's hidden
    metric, the summary and the audit recomputed, its METEOR half unchanged. The scoring step of a code
    competition scores the METEOR half before the team's code runs, then this (contract section 10)."""
    hm = HiddenMetric.of(config)
    turns = [
        t._replace(ppl=float(p), hidden_metric=hm(p))
        for t in result.turns
        for p in [ppl[t.dialog_id][t.turn]]
    ]
    return replace(
        result, summary=aggregate(turns, config.weights), turns=turns, audit=_audit(turns, config, None)
    )
