"""The library API beneath the command line: the entry points of :data:`__all__`, each a whole task (read,
validate, score, rank, correlate, explain, bundle), over the modules that do the work.

Data flows one way: read and validate -> normalise -> score turns ->
aggregate -> report. Everything here returns values or raises a
:class:`~scorer.errors.ScorerError`; nothing prints or exits.
"""

from __future__ import annotations

import functools
import os
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path
from typing import Any, TypeVar, cast

from scorer.inputs.config import Config, Limits, config_for, load_config
from scorer.inputs.contract import ANSWERS, CONFIG_IN_REFERENCE, DIALOGUE_TYPES, PPL, SUBMISSION
from scorer.inputs.human_ratings import read_human
from scorer.inputs.intake import read_submission, submission_name
from scorer.inputs.jsonio import shorten
from scorer.inputs.ppl_check import read_ppl_check
from scorer.inputs.ppl_targets import TARGETS, read_targets, stale_dialogues
from scorer.inputs.reference import (
    CheckedReference,
    ReferenceData,
    check_reference_and_media,
    load_reference,
    reference_digests,
)
from scorer.inputs.run_fault import run_fault_issue
from scorer.inputs.validation import Dialogue, Submission, check_probes, check_submission
from scorer.metric.matcher import Matcher
from scorer.metric.meteor import MeteorRu, MeteorScore, params_without_synonyms
from scorer.metric.stages import needs_thesaurus
from scorer.metric.text import tokenise
from scorer.metric.thesaurus import Source, Thesaurus, build_index, identify, load_thesaurus
from scorer.outputs.bundle import held_out, make_bundle
from scorer.scoring.aggregate import TurnScore, aggregate
from scorer.scoring.audience import ORGANIZER, Audience
from scorer.scoring.audit import Audit, audit_board, audit_submission, sample_counts, validate_warnings
from scorer.scoring.competition import Competition, HiddenMetric, reference_field, weights_problem
from scorer.scoring.correlation import BASELINES, build_levels, correlate
from scorer.scoring.correlation_result import Meta
from scorer.scoring.explain import (
    LOWEST_TURNS,
    ExplainedTurn,
    MarkedAnswer,
    explain,
    lowest_turns,
    marked_answers,
)
from scorer.scoring.leaderboard import find_submissions, rank
from scorer.scoring.leaderboard_result import Entry, Leaderboard
from scorer.scoring.result import ScoreResult
from scorer.scoring.significance import DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.scoring.turns import score_turns
from scorer.workers import WorkerPool, no_cycle_collection

from .errors import (
    ConfigError,
    Issue,
    IssueLog,
    ReferenceDataError,
    SubmissionInvalid,
    ThesaurusError,
    UsageError,
)
from .progress import AGGREGATING, EXPLAINING, SAVING, SCORING, Progress

__all__ = [
    "AuditSample",
    "BundleFiles",
    "DataCheck",
    "RunOptions",
    "audit_sample",
    "check_reference_data",
    "competition_bundle",
    "competition_signature",
    "config_source",
    "correlate_submissions",
    "explain_answer",
    "load_reference",
    "score_leaderboard",
    "score_submission",
    "score_validated",
    "validate_submission",
    "with_perplexities",
]

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class RunOptions:
    """How a run goes, the same for every entry point that scores or explains (``score_submission``,
    ``score_leaderboard``, ``correlate_submissions``, ``explain_answer``): the configuration (None: the
    built-in default), the thesaurus (a loaded one, one found and identified, or its path; None: found as
    contract section 4 says), whether the synonym stage runs, the processes, and who hears the progress.

    This class is the one definition of these options and their defaults: each entry point takes it as
    ``options=``, or its fields as typed keyword-only parameters of the same names and defaults, which make
    one (:meth:`of`); not both (:func:`_options_or_keywords`). A keyword that is none of them is a
    :class:`TypeError`, as for any function."""

    config: Config | PathLike | None = None
    thesaurus: Thesaurus | Source | PathLike | None = None
    synonyms: bool = True
    jobs: int = 1
    progress: Progress | None = None
    #: Where a :class:`Config` given as ``config`` came from, in the words of :func:`config_source` (the
    #: command line says; a library caller may leave it None).
    config_source: str | None = None

    @classmethod
    def of(
        cls,
        options: RunOptions | None,
        config: Config | PathLike | None,
        thesaurus: Thesaurus | Source | PathLike | None,
        synonyms: bool,
        jobs: int,
        progress: Progress | None,
    ) -> RunOptions:
        """``options`` when given (:func:`_options_or_keywords` has refused it beside any keyword), else the
        options an entry point's keywords give."""
        return options if options is not None else cls(config, thesaurus, synonyms, jobs, progress)

    def settled(self, data_dir: PathLike | None = None) -> tuple[Config, str]:
        """The configuration in force and where it came from (:func:`config_source`), by contract section 7's
        rule, as the command line finds it: ``config`` (a TOML file's path, standing for ``--config``, or a
        :class:`Config`); else ``config.toml`` in ``data_dir`` when there is one; else the built-in default.
        Without the synonym stage when ``synonyms`` is false. Raises ``ConfigError``."""
        given = self.config
        if isinstance(given, Config):
            config, source = given, self.config_source or _source_of(given)
        else:
            config = config_for(
                None if data_dir is None else os.fspath(data_dir), None if given is None else os.fspath(given)
            )[0]
            source = config_source(data_dir, given)
        if self.synonyms:
            return config, source
        return replace(config, meteor=params_without_synonyms(config.meteor)), source

    def settled_config(self, data_dir: PathLike | None = None) -> Config:
        """The configuration in force (:meth:`settled`)."""
        return self.settled(data_dir)[0]


#: The keywords of an entry point that stand for the run's options: the fields of :class:`RunOptions` a
#: library caller gives (``config_source`` is the command line's, given in ``options=``).
RUN_KEYWORDS = ("config", "thesaurus", "synonyms", "jobs", "progress")

_Entry = TypeVar("_Entry", bound=Callable[..., Any])


def _options_or_keywords(entry: _Entry) -> _Entry:
    """``entry``, refusing ``options=`` beside any keyword of :data:`RUN_KEYWORDS`, even one at its default
    value (a :class:`TypeError`): the run's options are given one way or the other."""

    @functools.wraps(entry)
    def checked(*args: Any, **keywords: Any) -> Any:
        if keywords.get("options") is not None and not keywords.keys().isdisjoint(RUN_KEYWORDS):
            raise TypeError("give the run's options as options=RunOptions(...) or as keywords, not both")
        return entry(*args, **keywords)

    return cast(_Entry, checked)


#: The three sources of a run's configuration (contract section 7), as results carry them (``config_source``).
BUILT_IN_DEFAULT = "built-in default"


def config_source(data_dir: PathLike | None, config: PathLike | None = None) -> str:
    """Which configuration contract section 7's rule picks, in the words every result carries as
    ``config_source``: ``--config PATH`` when ``config`` (a file) is given; else ``config.toml in DIR`` when
    the reference directory ``data_dir`` holds one; else ``built-in default``."""
    if config is not None:
        return f"--config {os.fspath(config)}"
    if data_dir is not None and os.path.lexists(Path(data_dir) / CONFIG_IN_REFERENCE):
        return f"{CONFIG_IN_REFERENCE} in {os.fspath(data_dir)}"
    return BUILT_IN_DEFAULT


def _source_of(config: Config) -> str:
    """The source of a :class:`Config` object given without one: the built-in default when it is that,
    else ``--config`` as given in memory."""
    return BUILT_IN_DEFAULT if config == load_config() else "--config <Config object>"


def validate_submission(
    data_dir: PathLike,
    submission: PathLike,
    ppl: PathLike | None = None,
    *,
    config: Config | PathLike | None = None,
    progress: Progress | None = None,
) -> Submission:
    """Check a submission against the public dialogues and return it, valid, with the ``config_source`` of
    the configuration used (``config``, a file standing for ``--config`` or a :class:`Config`; else
    ``config.toml`` in ``data_dir``; else the built-in default). Raises ``SubmissionInvalid`` (exit 1) or
    ``UsageError``, ``ConfigError``, ``ReferenceDataError`` (exit 2).

    Its warnings say, besides, when every perplexity is 1 or all are equal (nearly always a bug in the
    perplexity function). ``progress(step, done, total)`` hears each file's bytes read and checked."""
    settings, source = RunOptions(config).settled(data_dir)
    reference = load_reference(data_dir, settings.limits, with_answers=False, progress=progress)
    valid = _read_and_check(reference, submission, ppl, settings.limits, progress, data_dir=data_dir)
    valid = replace(valid, config_source=source)
    suspicious = validate_warnings(p for values in valid.ppl.values() for p in values)
    if suspicious:
        return replace(valid, warnings=[*valid.warnings, Issue(PPL, suspicious, "ppl_suspicious")])
    return valid


def _read_and_check(
    reference: ReferenceData,
    submission: PathLike,
    ppl: PathLike | None,
    limits: Limits,
    progress: Progress | None = None,
    *,
    probes: bool = False,
    data_dir: PathLike | None = None,
) -> Submission:
    """Read the submission's files and validate them against the dialogues; with ``probes`` (the organizer's
    audit), ``ppl_probes.json`` too when it lies beside the perplexities (contract section 10). Raises
    ``SubmissionInvalid``, with a run's ``run_fault.json`` as its one error when the submission is the output
    of a run whose code failed; ``data_dir`` is named in the command a code upload that was not run is
    told."""
    fault = run_fault_issue(Path(submission), {d.dialog_id: d.n_turns for d in reference.dialogues})
    if fault is not None:  # a run's output whose code failed (contract section 10): that is its one error
        raise SubmissionInvalid([fault])
    files = read_submission(submission, ppl, limits, probes=probes, data=data_dir)
    valid = check_submission(reference.dialogues, files.submission, files.ppl, limits, files.names, progress)
    if probes and isinstance(files.ppl, Path):  # the organizer's: the targets' digests, when run wrote them
        targets = read_targets(files.ppl.parent / TARGETS, limits.max_file_bytes)
        if isinstance(targets, Issue):
            valid = replace(valid, warnings=[*valid.warnings, targets])
        elif targets is not None:
            valid = replace(valid, targets=targets)
    if files.probes is None:
        return valid
    return replace(valid, probes=check_probes(reference.dialogues, files.probes, limits))


def thesaurus_for(config: Config, thesaurus: Thesaurus | Source | PathLike | None) -> Thesaurus | None:
    """The thesaurus the configured stages need: None without a synonym stage, else ``thesaurus`` itself
    or the one loaded from it (an identified :class:`~scorer.metric.thesaurus.Source`, a path, else
    ``$RUWORDNET_PATH``, else the ``ruwordnet`` package's download).
    Raises :class:`~scorer.errors.ThesaurusError` when it cannot be found or read."""
    if not needs_thesaurus(config.meteor.stages):
        return None
    return thesaurus if isinstance(thesaurus, Thesaurus) else load_thesaurus(thesaurus)


@contextmanager
def _index_built_meanwhile(config: Config, run: RunOptions) -> Iterator[Source | None]:
    """The thesaurus the run will load, found and identified once (its files hashed once a run); with more
    than one process allowed and its index not cached, the index built on a worker of the pool while the
    block reads the inputs (about a fifth of a second saved from an empty cache), and waited for at the
    block's end. None where there is nothing to identify, or it cannot be found or read: the load says why,
    after the submission is checked (the order of checks), and nothing changes when the worker fails."""
    thesaurus = run.thesaurus
    if isinstance(thesaurus, (Thesaurus, Source)) or not needs_thesaurus(config.meteor.stages):
        yield None
        return
    try:
        source = identify(None if thesaurus is None else os.fspath(thesaurus))
    except ThesaurusError:
        yield None
        return
    if run.jobs < 2 or source.index_cached:
        yield source
        return
    with WorkerPool(1, None) as pool:
        built = pool.submit_all(build_index, [source])[0]
        yield source
        pool.settle(built)


@_options_or_keywords
def score_submission(
    data_dir: PathLike,
    submission: PathLike,
    ppl: PathLike | None = None,
    *,
    options: RunOptions | None = None,
    ppl_check: PathLike | None = None,
    audience: Audience = ORGANIZER,
    config: Config | PathLike | None = None,
    thesaurus: Thesaurus | Source | PathLike | None = None,
    synonyms: bool = True,
    jobs: int = 1,
    progress: Progress | None = None,
) -> ScoreResult:
    """Validate and score a submission against the reference directory ``data_dir``; the result carries
    the perplexity audit (``result.audit``; with ``ppl_check``, the organizer's recomputed perplexities,
    compared; with a ``ppl_probes.json`` beside the perplexities, the probes' figures).

    Order of checks: configuration, reference data, submission, recomputed perplexities, thesaurus: an
    invalid upload is exit 1 whatever the state of the others. ``audience`` says who its outputs are for
    (:mod:`scorer.scoring.audience`): a participant's result holds no reference text.
    ``progress(step, done, total)`` hears every phase (:mod:`scorer.progress`).

    Raises :class:`~scorer.errors.SubmissionInvalid` (exit 1), or a :class:`~scorer.errors.ScorerError` of
    exit 2: ``UsageError``, ``ConfigError``, ``ReferenceDataError``, ``PplCheckInvalid``, ``ThesaurusError``.
    The run's options are ``options`` or the keywords ``config`` (a :class:`Config`, or a TOML file standing
    for ``--config``), ``thesaurus``, ``synonyms``, ``jobs`` and ``progress`` (:class:`RunOptions`).
    """
    run = RunOptions.of(options, config, thesaurus, synonyms, jobs, progress)
    config, config_source = run.settled(data_dir)
    with no_cycle_collection(), _index_built_meanwhile(config, run) as source:
        reference = load_reference(data_dir, config.limits, progress=run.progress)
        valid = _read_and_check(
            reference,
            submission,
            ppl,
            config.limits,
            run.progress,
            probes=audience.audit,
            data_dir=data_dir if audience.organizer else None,
        )
    with no_cycle_collection():
        checked = (
            read_ppl_check(ppl_check, reference.dialogues, config.limits) if ppl_check is not None else None
        )
        rwn = thesaurus_for(config, source or run.thesaurus)
        return score_validated(
            reference,
            valid,
            config,
            rwn,
            run.jobs,
            run.progress,
            name=submission_name(submission) if audience.organizer else "",
            ppl_check=checked,
            audience=audience,
            config_source=config_source,
        )


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
) -> ScoreResult:
    """Score a submission already known to be valid against ``reference``, on ``jobs`` processes, and audit
    its perplexities (with ``ppl_check``, against the organizer's recomputed ones).

    ``progress("scoring", done, total)`` hears about scored turns; a ``matcher`` shared
    between submissions keeps its memoised lemmas and synsets. Returns a :class:`ScoreResult` carrying the
    submission's ``name``, its lowest-scoring turns, aligned, and its audit; for a participant
    (``audience``), no reference text: no lowest turns, no warning about a reference's word, and with
    ``turn_details`` each answer with its matched words marked. The signature's ``ref`` field is
    ``reference_id`` when given (a leaderboard digests its reference data once), else the digests of
    ``reference``'s files, keyed with the configuration's salt. Raises
    :class:`~scorer.workers.WorkerDied` (exit 2) when a worker process dies.
    """
    tell = progress or _silent
    if reference_id is None:
        reference_id = _reference_id(reference, config, audience)
    keys = [(d, turn) for d in reference.dialogues for turn in range(d.n_turns)]
    answers = [submission.answers[d.dialog_id][turn] for d, turn in keys]
    tokens = reference.variant_tokens()
    variant_tokens = [tokens[d.dialog_id][turn] for d, turn in keys]
    tell(SCORING, 0, len(keys))
    competition = Competition.of(config, matcher or Matcher(thesaurus))
    metric = competition.metric
    metric.restore_table()
    scored = score_turns(answers, variant_tokens, metric, jobs, lambda done: tell(SCORING, done, len(keys)))
    # the persistent caches keep the reference data's words only: an upload's own never make a later run
    # heavier (contract section 3)
    vocabulary = _reference_vocabulary(variant_tokens)
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
        config_source=config_source or _source_of(config),
        references=reference.variants() if audience.references else None,
        metric=metric if audience.references else None,
    )


def _reference_id(reference: ReferenceData, config: Config, audience: Audience = ORGANIZER) -> str:
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
    hm = competition.hidden
    turns: list[TurnScore] = []
    for k, ((dialogue, turn), (best, s), answer) in enumerate(zip(keys, scored, answers)):
        if k % REPORT_TURNS == 0 and k:
            tell(AGGREGATING, k, total)
        p = ppl[dialogue.dialog_id][turn]
        turns.append(TurnScore(dialogue.dialog_id, dialogue.type, turn, s.score, best, hm(p), p, answer, s))
    return turns


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


def _reference_vocabulary(variant_tokens: Iterable[Sequence[Sequence[str]]]) -> frozenset[str]:
    """Every token of the reference variants (each item: one turn's variants, tokenised): what the
    persistent caches may keep."""
    return frozenset(chain.from_iterable(chain.from_iterable(variant_tokens)))


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


@_options_or_keywords
def score_leaderboard(
    data_dir: PathLike,
    submissions_dir: PathLike,
    *,
    options: RunOptions | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    config: Config | PathLike | None = None,
    thesaurus: Thesaurus | Source | PathLike | None = None,
    synonyms: bool = True,
    jobs: int = 1,
    progress: Progress | None = None,
) -> Leaderboard:
    """Validate and score every submission in ``submissions_dir`` (each subfolder or ``.zip``), rank them and
    audit their perplexities; returns a :class:`~scorer.scoring.leaderboard_result.Leaderboard`.

    An invalid submission is listed with its errors, never raised; a submission whose scoring fails for
    another reason is listed with status ``error``. Raises ``UsageError`` (no such folder, nothing in it,
    resamples or seed out of range), ``ConfigError``, ``ReferenceDataError`` or ``ThesaurusError``, all
    exit 2. ``progress`` hears every phase, each submission's steps prefixed by its name. The run's options
    are ``options`` or the keywords (:class:`RunOptions`).
    """
    run = RunOptions.of(options, config, thesaurus, synonyms, jobs, progress)
    config, config_source = run.settled(data_dir)
    _check_board(submissions_dir, resamples, seed)
    with _index_built_meanwhile(config, run) as source:
        reference = load_reference(data_dir, config.limits, progress=run.progress)
    if source is not None:
        run = replace(run, thesaurus=source)
    board = _score_board(reference, submissions_dir, config, run, resamples, seed, data_dir)
    return replace(board, config_source=config_source)


#: Bounds of the bootstrap's settings: enough resamples for a 95% interval, few enough to fit in memory.
MIN_RESAMPLES, MAX_RESAMPLES = 40, 100_000
MAX_SEED = 2**63 - 1


def _check_board(submissions_dir: PathLike, resamples: int, seed: int) -> None:
    if not Path(submissions_dir).is_dir():
        raise UsageError(f"submissions folder {submissions_dir}: not a directory")
    if not MIN_RESAMPLES <= resamples <= MAX_RESAMPLES:
        raise UsageError(
            f"resamples = {shorten(str(resamples), 30)}: give {MIN_RESAMPLES} (the fewest for a 95% "
            f"interval) to {MAX_RESAMPLES:,}"
        )
    _check_seed(seed)


def _check_seed(seed: int) -> None:
    """A seed of the bootstrap or of the audit's draw: a whole number from 0 to :data:`MAX_SEED`."""
    if not 0 <= seed <= MAX_SEED:
        raise UsageError(f"seed = {shorten(str(seed), 30)}: give a whole number from 0 to 2**63 - 1")


def _score_board(
    reference: ReferenceData,
    submissions_dir: PathLike,
    config: Config,
    run: RunOptions,
    resamples: int,
    seed: int,
    data_dir: PathLike | None = None,
) -> Leaderboard:
    """:func:`score_leaderboard` once the arguments are checked, the reference data (from ``data_dir``) read
    and the configuration settled (``config``, which ``run``'s own gave)."""
    folder = Path(submissions_dir)
    progress = run.progress
    with no_cycle_collection():
        rwn = thesaurus_for(config, run.thesaurus)
        matcher = Matcher(rwn)
        ref = _reference_id(reference, config)
        found, skipped = find_submissions(folder)
        if not found:
            raise UsageError(f"submissions folder {folder}: no subdirectory or .zip to score")
        entries = []
        for k, (name, path) in enumerate(found):
            label = f"{name} ({k + 1}/{len(found)})"
            step = (
                (lambda what, done, total, label=label: progress(f"{label}: {what}", done, total))
                if progress
                else None
            )
            entries.append(
                _board_entry(reference, name, path, config, rwn, run.jobs, step, matcher, data_dir, ref)
            )
        matcher.save(_reference_vocabulary(chain.from_iterable(reference.variant_tokens().values())))
    board = rank(
        entries,
        config.weights,
        resamples,
        seed,
        Competition.of(config, matcher).signature(ref),
        skipped,
        config.meteor.stages,
        progress,
    )
    scored = {
        e.name: (e.result.audit, [t.ppl for t in e.result.turns])
        for e in entries
        if e.result is not None and e.result.audit is not None
    }
    return replace(board, audit=audit_board(scored, config.audit), audit_private=config.audit.is_private)


def _board_entry(
    reference: ReferenceData,
    name: str,
    path: Path,
    config: Config,
    rwn: Thesaurus | None,
    jobs: int,
    progress: Progress | None,
    matcher: Matcher,
    data_dir: PathLike | None = None,
    reference_id: str | None = None,
) -> Entry:
    """One leaderboard entry: scored, invalid with its errors (a code upload that was not run: with the
    command that runs it), or failed (status ``error``) with the message of whatever else went wrong, so that
    one entry never stops the others. Its ``ppl_probes.json``, when there is one, is read for the audit."""
    try:
        valid = _read_and_check(
            reference, path, None, config.limits, progress, probes=True, data_dir=data_dir
        )
        return Entry(
            name,
            path,
            score_validated(
                reference, valid, config, rwn, jobs, progress, matcher, name, reference_id=reference_id
            ),
        )
    except SubmissionInvalid as exc:
        return Entry(name, path, errors=tuple(exc.listed()), more_errors=exc.not_listed)
    except UsageError as exc:
        return Entry(name, path, errors=(Issue(name, str(exc), "unreadable"),))
    except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 - isolated to this entry
        message = f"scoring failed: {type(exc).__name__}: {shorten(str(exc), 200)}"
        return Entry(name, path, errors=(Issue(name, message, "scoring_failed"),), failed=True)


@_options_or_keywords
def correlate_submissions(
    data_dir: PathLike,
    submissions_dir: PathLike,
    human: PathLike,
    *,
    options: RunOptions | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    baselines: Sequence[str] = (),
    config: Config | PathLike | None = None,
    thesaurus: Thesaurus | Source | PathLike | None = None,
    synonyms: bool = True,
    jobs: int = 1,
    progress: Progress | None = None,
) -> Meta:
    """Score every submission once (as :func:`score_leaderboard`), then correlate the figures with the
    human ratings at every level contract section 8 gives (:mod:`scorer.scoring.correlation`); returns a
    :class:`~scorer.scoring.correlation_result.Meta` (its rows, levels and warnings). Raises what
    :func:`score_leaderboard` raises, and ``UsageError`` for an unknown baseline or a ratings file with
    errors (each with its CSV line). The run's options are ``options`` or the keywords
    (:class:`RunOptions`)."""
    run = RunOptions.of(options, config, thesaurus, synonyms, jobs, progress)
    progress = run.progress
    unknown = [b for b in baselines if b not in BASELINES]
    if unknown:
        raise UsageError(f"unknown baseline {unknown[0]!r} (known: {', '.join(BASELINES)})")
    config, config_source = run.settled(data_dir)
    _check_board(submissions_dir, resamples, seed)
    reference = load_reference(data_dir, config.limits, progress=progress)
    board = _score_board(reference, submissions_dir, config, run, resamples, seed, data_dir)
    turns_by_dialog = {d.dialog_id: d.n_turns for d in reference.dialogues}
    ratings = read_human(human, {e.name: turns_by_dialog for e in board.entries})
    invalid = sorted({k[0] for k in ratings.scores} - {e.name for e in board.entries if e.result is not None})
    levels, notes = build_levels(
        board, reference.variants(), ratings, tuple(baselines), resamples, seed, config.weights, progress
    )
    notes = [f"ratings of invalid submission {name!r} are left out" for name in invalid] + notes
    left_out = tuple((e.name, e.status) for e in board.entries if e.result is None)
    return Meta(
        correlate(levels, progress),
        levels,
        ratings.level,
        board.signature,
        resamples,
        seed,
        tuple(baselines),
        notes,
        left_out,
        board.skipped,
        config_source,
    )


class BundleFiles(dict[str, bytes]):
    """The files :func:`competition_bundle` makes (path in the bundle -> bytes; with a final, the organizers'
    ``final/`` among them), with the ``config_source`` of the configuration it read and ``warnings``, what
    the audit cannot judge on the held-out set (one line each, as ``bundle`` prints them)."""

    def __init__(
        self,
        files: Mapping[str, bytes],
        *,
        config_source: str = BUILT_IN_DEFAULT,
        warnings: tuple[str, ...] = (),
    ):
        super().__init__(files)
        self.config_source = config_source
        self.warnings = warnings


def competition_bundle(
    data_dir: PathLike,
    image: str | None = None,
    *,
    config: Config | PathLike | None = None,
    title: str | None = None,
    code: bool = False,
) -> BundleFiles:
    """The files of a Codabench competition bundle (:mod:`scorer.outputs.bundle`, what ``bundle`` writes) for
    the reference directory ``data_dir``: path in the bundle -> bytes, ``bundle.zip`` included. ``image`` and
    ``title`` stand for ``--image`` and ``--title`` (else the configuration's ``[platform]`` keys), ``code``
    for ``--code``.

    The configuration is found as every command finds it (``config`` if given, a :class:`Config` or a TOML
    file standing for ``--config``; else ``config.toml`` in ``data_dir``; else the built-in default) and
    copied into the bundle's reference data without its ``[platform]`` and ``[audit]`` (a :class:`Config`, as
    the TOML of its settings that differ from the built-in default's); the files' mapping says which in its
    ``config_source``. Raises
    :class:`~scorer.errors.UsageError`, :class:`~scorer.errors.ConfigError` or
    :class:`~scorer.errors.ReferenceDataError` when an input is missing or invalid."""
    made = make_bundle(data_dir, image, config=config, title=title, code=code)
    source = _source_of(config) if isinstance(config, Config) else config_source(Path(data_dir), config)
    return BundleFiles(made.files, config_source=source, warnings=made.warnings)


class AuditSample(list[dict[str, Any]]):
    """The turns :func:`audit_sample` draws (a list of ``{"dialog_id", "turn", "type", "ppl"}``), with the
    ``config_source`` of the run."""

    def __init__(self, rows: Iterable[dict[str, Any]] = (), *, config_source: str = BUILT_IN_DEFAULT):
        super().__init__(rows)
        self.config_source = config_source


def audit_sample(
    data_dir: PathLike,
    submission: PathLike,
    n: int,
    *,
    seed: int = DEFAULT_SEED,
    ppl: PathLike | None = None,
    config: Config | PathLike | None = None,
) -> AuditSample:
    """The turns an organizer should recompute the perplexities of (contract section 9): ``n`` turns drawn
    without replacement, allotted to the dialogue types in proportion to their turns, reproducible from
    ``seed``; each ``{"dialog_id", "turn", "type", "ppl"}``, in the order of ``dialogues.jsonl``; the list's
    ``config_source`` says which configuration's limits were used (contract section 7's rule, ``config``
    standing for ``--config``).

    Raises :class:`~scorer.errors.SubmissionInvalid` or ``UsageError`` as :func:`validate_submission` does,
    and ``UsageError`` for ``n`` below 1 or a seed outside 0 to 2**63 - 1."""
    if n < 1:
        raise UsageError(f"n = {n}: give how many turns to draw (1 or more)")
    _check_seed(seed)
    config, source = RunOptions(config).settled(data_dir)
    reference = load_reference(data_dir, config.limits, with_answers=False)
    valid = _read_and_check(reference, submission, ppl, config.limits, data_dir=data_dir)
    by_type: dict[str, list[tuple[int, int]]] = {}
    for k, dialogue in enumerate(reference.dialogues):
        by_type.setdefault(dialogue.type, []).extend((k, turn) for turn in range(dialogue.n_turns))
    rng = random.Random(seed)
    chosen: list[tuple[int, int]] = []
    for kind, count in sample_counts({t: len(by_type[t]) for t in DIALOGUE_TYPES if t in by_type}, n).items():
        chosen.extend(rng.sample(by_type[kind], count))
    rows = AuditSample(config_source=source)
    for k, turn in sorted(chosen):
        dialogue = reference.dialogues[k]
        rows.append(
            {
                "dialog_id": dialogue.dialog_id,
                "turn": turn,
                "type": dialogue.type,
                "ppl": valid.ppl[dialogue.dialog_id][turn],
            }
        )
    return rows


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


@_options_or_keywords
def explain_answer(
    candidate: str,
    references: Sequence[str],
    *,
    options: RunOptions | None = None,
    config: Config | PathLike | None = None,
    thesaurus: Thesaurus | Source | PathLike | None = None,
    synonyms: bool = True,
    jobs: int = 1,
    progress: Progress | None = None,
) -> str:
    """How METEOR scores ``candidate`` against the reference variants ``references``, as text: the tokens,
    the alignment (each link's stage), the chunks and the formula (:func:`~scorer.scoring.explain.explain`).
    The run's options are ``options`` or the keywords (:class:`RunOptions`; ``jobs`` and ``progress`` play no
    part). Raises :class:`~scorer.errors.ThesaurusError` when the synonym stage's thesaurus cannot be found or
    read."""
    run = RunOptions.of(options, config, thesaurus, synonyms, jobs, progress)
    config = run.settled_config()
    metric = MeteorRu(config.meteor, thesaurus_for(config, run.thesaurus))
    text = explain(candidate, references, metric)
    metric.matcher.save()
    return text


@dataclass(frozen=True)
class DataCheck:
    """What :func:`check_reference_data` found in a valid reference directory: its dialogues and turns by
    type, and the ``config_source`` of the configuration it was checked with."""

    dialogs: int
    turns: int
    by_type: dict[str, tuple[int, int]]  # type -> (dialogues, turns), in the contract's order
    config_source: str


def check_reference_data(data_dir: PathLike, *, config: Config | PathLike | None = None) -> DataCheck:
    """Check an organizer's reference directory alone (contract sections 2, 3, 7 and 10), everything
    ``score`` and ``bundle`` check of it: the configuration the rule finds (``config``, standing for
    ``--config``; else ``config.toml`` in ``data_dir``; else the built-in default), ``dialogues.jsonl`` and
    ``answers.jsonl``, every image and audio file the dialogues name (as ``bundle`` publishes them), and
    what the configuration asks of the data (the weights of the types present, a final's held-out
    dialogues), every error in one run (up to the cap of contract section 3), each naming its file, line,
    dialogue and turn where it has them, with the messages ``score`` and ``bundle`` give.

    Raises :class:`~scorer.errors.ReferenceDataError` (exit 2) holding every error, the configuration's
    first, or ``UsageError`` when the directory cannot be read."""
    issues: list[Issue] = []
    where = os.fspath(config) if isinstance(config, (str, os.PathLike)) else CONFIG_IN_REFERENCE
    configured = True
    try:
        settings, source = RunOptions(config).settled(data_dir)
    except ConfigError as exc:
        issues.append(Issue(where, str(exc), "config"))
        configured = False
        settings, source = (
            load_config(),
            config_source(data_dir, config if not isinstance(config, Config) else None),
        )
    found = IssueLog()
    checked = check_reference_and_media(data_dir, settings.limits, found)
    if configured:
        issues += [Issue(where, message, "config") for message in _data_config_problems(checked, settings)]
    if issues or found:
        log = IssueLog.of(issues)
        for issue in found.kept:
            log.add(issue)
        log.more += found.more
        log.unchecked = found.unchecked
        raise ReferenceDataError(log)
    assert checked.reference is not None
    by_type: dict[str, tuple[int, int]] = {}
    for kind in DIALOGUE_TYPES:
        of_kind = [d for d in checked.reference.dialogues if d.type == kind]
        if of_kind:
            by_type[kind] = (len(of_kind), sum(d.n_turns for d in of_kind))
    turns = sum(d.n_turns for d in checked.reference.dialogues)
    return DataCheck(len(checked.reference.dialogues), turns, by_type, source)


def _data_config_problems(checked: CheckedReference, config: Config) -> list[str]:
    """What the configuration asks of the (valid) dialogues that they do not give, in the words of the
    command that would stop on it: weights of 0 for every type present (``score``), and a type with one
    dialogue where a final holds some out (``bundle --code`` with ``[platform] final_start``)."""
    present = [kind for kind in DIALOGUE_TYPES if any(d.type == kind for d in checked.dialogues)]
    problems = []
    weights = weights_problem(present, config.weights)
    if weights is not None:
        problems.append(weights)
    platform = config.platform
    if platform.final_start is not None:
        for kind in present:  # one type at a time: every type that cannot hold one out
            try:
                held_out(
                    [d for d in checked.dialogues if d.type == kind], platform.final_share, platform.seed
                )
            except ConfigError as exc:
                problems.append(str(exc))
    return problems


@_options_or_keywords
def competition_signature(
    data_dir: PathLike,
    *,
    options: RunOptions | None = None,
    participant: bool = False,
    config: Config | PathLike | None = None,
    thesaurus: Thesaurus | Source | PathLike | None = None,
    synonyms: bool = True,
    jobs: int = 1,
    progress: Progress | None = None,
) -> str:
    """The signature a run against the reference directory ``data_dir`` carries (contract section 6), without
    scoring anything: the configuration found as every command finds it (``config=``), the thesaurus, the
    synonym stage, and the reference data's ``ref`` field (with ``participant``, as ``codalab``'s outputs
    write it: ``private`` in place of the answers' digest when the configuration has no salt). Raises
    ``ConfigError``, ``ReferenceDataError``, ``UsageError`` or ``ThesaurusError`` (exit 2). The run's options
    are ``options`` or the keywords (:class:`RunOptions`; ``jobs`` plays no part)."""
    run = RunOptions.of(options, config, thesaurus, synonyms, jobs, progress)
    config = run.settled_config(data_dir)
    reference = load_reference(data_dir, config.limits, progress=run.progress)
    audience = Audience.participant(config) if participant else ORGANIZER
    metric = Competition.of(config, Matcher(thesaurus_for(config, run.thesaurus)))
    return metric.signature(_reference_id(reference, config, audience))
