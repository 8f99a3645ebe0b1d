"""The library API beneath the command line: the entry points of :data:`__all__`, each a whole task (read,
validate, score, rank, correlate, explain, bundle), over the modules that do the work.

Data flows one way: read and validate -> normalise -> score turns ->
aggregate -> report. Everything here returns values or raises a
:class:`~scorer.errors.ScorerError`; nothing prints or exits.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar, cast

from scorer.bundle.make import held_out, make_bundle
from scorer.inputs.config import BUILT_IN_DEFAULT, Config, config_source, load_config
from scorer.inputs.contract import CONFIG_IN_REFERENCE, DIALOGUE_TYPES, PPL
from scorer.inputs.human_ratings import read_human
from scorer.inputs.intake import submission_name
from scorer.inputs.reference import CheckedReference, check_reference_and_media, load_reference
from scorer.inputs.validation import Submission
from scorer.metric.meteor import MeteorRu
from scorer.metric.thesaurus import Source, Thesaurus
from scorer.scoring import scored
from scorer.scoring.audience import ORGANIZER, Audience
from scorer.scoring.audit import validate_warnings
from scorer.scoring.competition import weights_problem
from scorer.scoring.correlation import BASELINES, build_levels, correlate
from scorer.scoring.correlation_result import Meta
from scorer.scoring.explain import explain
from scorer.scoring.leaderboard_result import Leaderboard
from scorer.scoring.result import ScoreResult
from scorer.scoring.run import Run, RunOptions, check_board, check_seed, thesaurus_for
from scorer.scoring.scored import score_validated
from scorer.scoring.significance import DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.workers import no_cycle_collection

from .errors import ConfigError, Issue, IssueLog, ReferenceDataError, UsageError
from .progress import Progress

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
    run = Run.open(data_dir, RunOptions(config), answers=False, progress=progress)
    valid = replace(run.validate(submission, ppl, progress=progress), config_source=run.config_source)
    suspicious = validate_warnings(p for values in valid.ppl.values() for p in values)
    if suspicious:
        return replace(valid, warnings=[*valid.warnings, Issue(PPL, suspicious, "ppl_suspicious")])
    return valid


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
    options = RunOptions.of(options, config, thesaurus, synonyms, jobs, progress)
    opened = Run.opening(data_dir, options, progress=options.progress, index=True, learn=True)
    with no_cycle_collection(), opened as run:
        valid = run.validate(
            submission, ppl, probes=audience.audit, named=audience.organizer, progress=options.progress
        )
        checked = run.ppl_check(ppl_check)
        return run.score(
            valid,
            name=submission_name(submission) if audience.organizer else "",
            ppl_check=checked,
            audience=audience,
        )


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
    options = RunOptions.of(options, config, thesaurus, synonyms, jobs, progress)
    between = functools.partial(check_board, submissions_dir, resamples, seed)
    with Run.opening(data_dir, options, progress=options.progress, between=between, index=True) as run:
        pass  # the thesaurus's index is built while the reference data is read
    return replace(run.board(submissions_dir, resamples, seed), config_source=run.config_source)


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
    options = RunOptions.of(options, config, thesaurus, synonyms, jobs, progress)
    unknown = [b for b in baselines if b not in BASELINES]
    if unknown:
        raise UsageError(f"unknown baseline {unknown[0]!r} (known: {', '.join(BASELINES)})")
    between = functools.partial(check_board, submissions_dir, resamples, seed)
    run = Run.open(data_dir, options, progress=options.progress, between=between)
    reference, config, progress = run.reference, run.config, options.progress
    board = run.board(submissions_dir, resamples, seed)
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
        run.config_source,
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
    """The files of a Codabench competition bundle (:mod:`scorer.bundle.make`, what ``bundle`` writes) for
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
    return BundleFiles(made.files, config_source=made.config_source, warnings=made.warnings)


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
    check_seed(seed)
    run = Run.open(data_dir, RunOptions(config), answers=False)
    valid = run.validate(submission, ppl)
    return AuditSample(run.audit_sample(valid, n, seed), config_source=run.config_source)


def with_perplexities(result: ScoreResult, ppl: Mapping[str, Sequence[float]], config: Config) -> ScoreResult:
    """``result`` (scored with any perplexities) with these perplexities instead: every turn's hidden
    metric, the summary and the audit recomputed, its METEOR half unchanged. The scoring step of a code
    competition scores the METEOR half before the team's code runs, then this (contract section 10)."""
    return scored.with_perplexities(result, ppl, config)


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
    options = RunOptions.of(options, config, thesaurus, synonyms, jobs, progress)
    run = Run.open(data_dir, options, progress=options.progress)
    return run.signature(Audience.participant(run.config) if participant else ORGANIZER)
