"""The library API beneath the command line.

Data flows one way: read and validate -> normalise -> score turns ->
aggregate -> report. Everything here returns values or raises a
:class:`~scorer.errors.ScorerError`; nothing prints or exits.
"""
from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from .aggregate import TurnScore, aggregate
from .config import Config, Limits, load_config
from .errors import Issue, ReferenceDataError, SubmissionInvalid, UsageError
from .hidden_metric import hidden_metric
from .intake import read_submission
from .explain import lowest_turns
from .matcher import Matcher
from .meteor import MeteorRu, params_without_synonyms
from .progress import AGGREGATING, SCORING, Progress
from .result import ScoreResult
from .signature import signature
from .stages import needs_thesaurus
from .thesaurus import Thesaurus, load_thesaurus
from .turns import score_turns
from .leaderboard import DEFAULT_RESAMPLES, DEFAULT_SEED, Entry, Leaderboard, find_submissions, rank
from .contract import ANSWERS, DIALOGUES
from .validation import Dialogue, Submission, check_submission, read_dialogues, read_references

PathLike = str | os.PathLike


@dataclass(frozen=True)
class ReferenceData:
    dialogues: list[Dialogue]
    references: dict[str, list[list[str]]] | None  # None when only dialogues were read


@contextmanager
def no_cycle_collection():
    """Pause Python's cycle collector: reading and scoring build millions of small
    acyclic objects (freed by reference counting anyway), and repeated full
    collections over them cost a fifth of a run."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _reference_file(data_dir: Path, name: str) -> Path:
    """The path of a reference file, checked to be a readable regular file (it is streamed)."""
    path = data_dir / name
    try:
        with open(path, "rb"):
            pass
    except FileNotFoundError:
        raise ReferenceDataError([Issue(name, f"{path} does not exist", "missing_file")]) from None
    except OSError as exc:
        raise UsageError(f"cannot read reference file {path}: {exc.strerror}") from None
    if not path.is_file():
        raise UsageError(f"reference file {path} is not a regular file")
    return path


def load_reference(data_dir: PathLike, limits: Limits = Limits(), with_answers: bool = True,
                   progress: Progress | None = None) -> ReferenceData:
    """Read ``dialogues.jsonl`` (and ``answers.jsonl`` when ``with_answers``) from ``data_dir``;
    ``progress(step, done, total)`` hears the bytes read (:mod:`scorer.progress`)."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise UsageError(f"reference directory {data_dir}: not a directory")
    if not os.access(data_dir, os.R_OK | os.X_OK):
        raise UsageError(f"reference directory {data_dir}: cannot be read (no permission)")
    dialogues = read_dialogues(_reference_file(data_dir, DIALOGUES), limits, progress)
    references = None
    if with_answers:
        references = read_references(_reference_file(data_dir, ANSWERS), dialogues, limits, progress)
    return ReferenceData(dialogues, references)


def validate_submission(data_dir: PathLike, submission: PathLike, ppl: PathLike | None = None, *,
                        config: Config | None = None, progress: Progress | None = None) -> Submission:
    """Check a submission against the public dialogues; raises ``SubmissionInvalid``.

    ``progress(step, done, total)`` hears each file's bytes read and checked."""
    config = config or load_config()
    reference = load_reference(data_dir, config.limits, with_answers=False, progress=progress)
    return _read_and_check(reference, submission, ppl, config.limits, progress)


def _read_and_check(reference: ReferenceData, submission: PathLike, ppl: PathLike | None,
                    limits: Limits, progress: Progress | None = None) -> Submission:
    """Read the submission's files and validate them against the dialogues; raises ``SubmissionInvalid``."""
    files = read_submission(submission, ppl, limits)
    return check_submission(reference.dialogues, files.submission, files.ppl, limits, files.names, progress)


def with_synonyms(config: Config, synonyms: bool) -> Config:
    """``config`` with the synonym stage dropped when ``synonyms`` is false."""
    if synonyms:
        return config
    return replace(config, meteor=params_without_synonyms(config.meteor))


def thesaurus_for(config: Config, thesaurus: Thesaurus | PathLike | None) -> Thesaurus | None:
    """The thesaurus the configured stages need: None without a synonym stage, else loaded."""
    if not needs_thesaurus(config.meteor.stages):
        return None
    return thesaurus if isinstance(thesaurus, Thesaurus) else load_thesaurus(thesaurus)


def score_submission(data_dir: PathLike, submission: PathLike, ppl: PathLike | None = None, *,
                     config: Config | None = None, thesaurus: Thesaurus | PathLike | None = None,
                     synonyms: bool = True, jobs: int = 1, progress: Progress | None = None) -> ScoreResult:
    """Validate and score a submission against the reference directory ``data_dir``.

    Order of checks: configuration, reference data, thesaurus, submission.
    ``progress(step, done, total)`` hears every phase (:mod:`scorer.progress`).
    """
    config = with_synonyms(config or load_config(), synonyms)
    with no_cycle_collection():
        reference = load_reference(data_dir, config.limits, progress=progress)
        rwn = thesaurus_for(config, thesaurus)
        valid = _read_and_check(reference, submission, ppl, config.limits, progress)
        return score_validated(reference, valid, config, rwn, jobs, progress, name=submission_name(submission))


def submission_name(submission: PathLike) -> str:
    """A submission's name: its folder's, its zip file's without ``.zip``, or the folder holding its file."""
    path = Path(os.path.abspath(submission))
    if path.is_dir():
        return path.name
    if path.suffix.lower() == ".zip":
        return path.stem
    return path.parent.name or path.name


def score_validated(reference: ReferenceData, submission: Submission, config: Config,
                    thesaurus: Thesaurus | None, jobs: int = 1, progress: Progress | None = None,
                    matcher: Matcher | None = None, name: str = "") -> ScoreResult:
    """Score a submission already known to be valid against ``reference``, on ``jobs`` processes.

    ``progress("scoring", done, total)`` hears about scored turns; a ``matcher`` shared
    between submissions keeps its memoised lemmas and synsets. The result
    carries the submission's ``name`` and its lowest-scoring turns, aligned.
    """
    keys = [(d, turn) for d in reference.dialogues for turn in range(d.n_turns)]
    answers = [submission.answers[d.dialog_id][turn] for d, turn in keys]
    variants = [reference.references[d.dialog_id][turn] for d, turn in keys]
    report = (lambda done: progress(SCORING, done, len(keys))) if progress else None
    if report:
        report(0)
    metric = MeteorRu(config.meteor, matcher=matcher or Matcher(thesaurus))
    scored = score_turns(answers, variants, metric, jobs, report)
    if progress:
        progress(AGGREGATING, 0, 1)
    turns: list[TurnScore] = []
    for (dialogue, turn), (best, s) in zip(keys, scored):
        p = submission.ppl[dialogue.dialog_id][turn]
        turns.append(TurnScore(dialogue.dialog_id, dialogue.type, turn, s.score, best,
                               hidden_metric(p, config.hm_method, **config.hm_params), p,
                               submission.answers[dialogue.dialog_id][turn], s))
    summary = aggregate(turns, config.weights)
    lowest = lowest_turns(turns, reference.references, metric)
    if matcher is None:
        metric.matcher.save()
    if progress:
        progress(AGGREGATING, 1, 1)
    return ScoreResult(summary, turns, signature(config, metric), submission.warnings, lowest, name)


def score_leaderboard(data_dir: PathLike, submissions_dir: PathLike, *, config: Config | None = None,
                      thesaurus: Thesaurus | PathLike | None = None, synonyms: bool = True, jobs: int = 1,
                      resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                      progress: Progress | None = None) -> Leaderboard:
    """Validate and score every submission in ``submissions_dir``, then rank them.

    An invalid submission is listed with its errors, never raised; reference,
    configuration and thesaurus errors are raised as for one submission.
    ``progress`` hears every phase, each submission's steps prefixed by its name.
    """
    config = with_synonyms(config or load_config(), synonyms)
    _check_board(submissions_dir, resamples)
    return _score_board(load_reference(data_dir, config.limits, progress=progress), submissions_dir, config, thesaurus, jobs,
                        resamples, seed, progress)


def _check_board(submissions_dir: PathLike, resamples: int) -> None:
    if not Path(submissions_dir).is_dir():
        raise UsageError(f"submissions folder {submissions_dir}: not a directory")
    if resamples < 40:
        raise UsageError(f"resamples = {resamples}: use at least 40 for a 95% interval")


def _score_board(reference: ReferenceData, submissions_dir: PathLike, config: Config,
                 thesaurus: Thesaurus | PathLike | None, jobs: int, resamples: int, seed: int,
                 progress: Progress | None) -> Leaderboard:
    """:func:`score_leaderboard` once the arguments are checked, the reference data read and the
    configuration settled."""
    folder = Path(submissions_dir)
    with no_cycle_collection():
        rwn = thesaurus_for(config, thesaurus)
        matcher = Matcher(rwn)
        found, skipped = find_submissions(folder)
        if not found:
            raise UsageError(f"submissions folder {folder}: no subdirectory or .zip to score")
        entries = []
        for k, (name, path) in enumerate(found):
            label = f"{name} ({k + 1}/{len(found)})"
            step = (lambda what, done, total, label=label: progress(f"{label}: {what}", done, total)) if progress else None
            try:
                valid = _read_and_check(reference, path, None, config.limits, step)
            except SubmissionInvalid as exc:
                entries.append(Entry(name, path, errors=tuple(exc.listed()), more_errors=exc.not_listed))
            except UsageError as exc:
                entries.append(Entry(name, path, errors=(Issue(name, str(exc), "unreadable"),)))
            else:
                entries.append(Entry(name, path, score_validated(reference, valid, config, rwn, jobs, step,
                                                                 matcher, name)))
        matcher.save()
    return rank(entries, config.weights, resamples, seed,
                signature(config, MeteorRu(config.meteor, matcher=matcher)), skipped)


def correlate_submissions(data_dir: PathLike, submissions_dir: PathLike, human: PathLike, *,
                          config: Config | None = None, thesaurus: Thesaurus | PathLike | None = None,
                          synonyms: bool = True, jobs: int = 1, resamples: int = DEFAULT_RESAMPLES,
                          seed: int = DEFAULT_SEED, baselines: Sequence[str] = (),
                          progress: Progress | None = None) -> "Meta":
    """Score every submission once (as :func:`score_leaderboard`), then correlate the figures with the
    human ratings at every level SPEC section 8 gives (:mod:`scorer.correlation`)."""
    from .correlation import BASELINES, build_levels, correlate, read_human

    unknown = [b for b in baselines if b not in BASELINES]
    if unknown:
        raise UsageError(f"unknown baseline {unknown[0]!r} (known: {', '.join(BASELINES)})")
    config = with_synonyms(config or load_config(), synonyms)
    _check_board(submissions_dir, resamples)
    reference = load_reference(data_dir, config.limits, progress=progress)
    board = _score_board(reference, submissions_dir, config, thesaurus, jobs, resamples, seed, progress)
    turns_by_dialog = {d.dialog_id: d.n_turns for d in reference.dialogues}
    ratings = read_human(human, {e.name: turns_by_dialog for e in board.entries})
    invalid = sorted({k[0] for k in ratings.scores} - {e.name for e in board.entries if e.result is not None})
    levels, notes = build_levels(board, reference.references, ratings, tuple(baselines), resamples, seed,
                                 config.weights, progress)
    notes = [f"ratings of invalid submission {name!r} are left out" for name in invalid] + notes
    return Meta(correlate(levels, progress), levels, ratings.level, board.signature, resamples, seed, tuple(baselines), notes)


@dataclass(frozen=True)
class Meta:
    """What ``correlate`` found: one row per level and figure, the data behind them, the settings."""

    rows: list
    levels: list
    ratings_level: str
    signature: str
    resamples: int
    seed: int
    baselines: tuple[str, ...]
    warnings: list[str]
