"""A run opened once (contract sections 3, 4 and 7): :class:`Run` carries what every entry point opens
before it validates or scores anything, settled in one place (:meth:`Run.open`): the configuration in
force and where it came from (section 7's rule: ``--config``, else ``config.toml`` in the data folder,
else the built-in default), the reference data read and checked once (with the dialogues' parts a team's
code is given, when asked), the thesaurus the stages need (found once, loaded when first used) and the
competition's rules. Its methods are what the entry points do with it: validate a submission, score one,
give the signature, draw the audit's sample, score a board.

:class:`RunOptions` is how a run goes, the one definition of the options every scoring entry point takes.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from scorer.errors import Issue, SubmissionInvalid, ThesaurusError, UsageError
from scorer.inputs.config import Config, config_for, config_source, source_of
from scorer.inputs.contract import DIALOGUE_TYPES
from scorer.inputs.intake import read_submission
from scorer.inputs.jsonio import shorten
from scorer.inputs.ppl_check import read_ppl_check
from scorer.inputs.ppl_targets import TARGETS, read_targets
from scorer.inputs.reference import ReferenceData, load_reference, load_reference_and_media
from scorer.inputs.run_fault import run_fault_issue
from scorer.inputs.validation import Submission, check_probes, check_submission
from scorer.metric.matcher import Matcher
from scorer.metric.meteor import params_without_synonyms
from scorer.metric.stages import needs_thesaurus
from scorer.metric.thesaurus import Source, Thesaurus, identify, load_thesaurus
from scorer.progress import Progress
from scorer.workers import WorkerPool

from . import scored
from .audience import ORGANIZER, Audience
from .audit import sample_counts
from .board import score_board
from .competition import Competition
from .leaderboard_result import Leaderboard
from .result import ScoreResult
from .turns import Ahead, Learner, learn_ahead, learner_ready

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class RunOptions:
    """How a run goes, the same for every entry point that scores or explains (``score_submission``,
    ``score_leaderboard``, ``correlate_submissions``, ``explain_answer``): the configuration (None: the
    built-in default), the thesaurus (a loaded one, one found and identified, or its path; None: found as
    contract section 4 says), whether the synonym stage runs, the processes, and who hears the progress.

    This class is the one definition of these options and their defaults: each entry point takes it as
    ``options=``, or its fields as typed keyword-only parameters of the same names and defaults, which make
    one (:meth:`of`); not both. A keyword that is none of them is a :class:`TypeError`, as for any
    function."""

    config: Config | PathLike | None = None
    thesaurus: Thesaurus | Source | PathLike | None = None
    synonyms: bool = True
    jobs: int = 1
    progress: Progress | None = None
    #: Where a :class:`Config` given as ``config`` came from, in the words of
    #: :func:`~scorer.inputs.config.config_source` (the command line says; a library caller may leave it
    #: None).
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
        """``options`` when given (the entry point has refused it beside any keyword), else the options an
        entry point's keywords give."""
        return options if options is not None else cls(config, thesaurus, synonyms, jobs, progress)

    def settled(self, data_dir: PathLike | None = None) -> tuple[Config, str]:
        """The configuration in force and where it came from (``config_source``), by contract section 7's
        rule, as the command line finds it: ``config`` (a TOML file's path, standing for ``--config``, or a
        :class:`Config`); else ``config.toml`` in ``data_dir`` when there is one; else the built-in default.
        Without the synonym stage when ``synonyms`` is false. Raises ``ConfigError``."""
        given = self.config
        if isinstance(given, Config):
            config, source = given, self.config_source or source_of(given)
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


def thesaurus_for(config: Config, thesaurus: Thesaurus | Source | PathLike | None) -> Thesaurus | None:
    """The thesaurus the configured stages need: None without a synonym stage, else ``thesaurus`` itself
    or the one loaded from it (an identified :class:`~scorer.metric.thesaurus.Source`, a path, else
    ``$RUWORDNET_PATH``, else the ``ruwordnet`` package's download).
    Raises :class:`~scorer.errors.ThesaurusError` when it cannot be found or read."""
    if not needs_thesaurus(config.meteor.stages):
        return None
    return thesaurus if isinstance(thesaurus, Thesaurus) else load_thesaurus(thesaurus)


class _Helper(NamedTuple):
    """The run's worker (a pool of one :class:`~scorer.scoring.turns.Learner`) and the future of its
    thesaurus, loaded there and its index built into the cache."""

    pool: WorkerPool
    ready: Future[None]

    def index_built(self) -> None:
        """Wait for the thesaurus's index (whatever comes of it: the load here says what went wrong)."""
        self.pool.settle(self.ready)


@contextmanager
def _helper_meanwhile(config: Config, run: RunOptions) -> Iterator[tuple[Source | None, _Helper | None]]:
    """The thesaurus the run will load, found and identified once (its files hashed once a run); with more
    than one process allowed and its index not cached, the index built on the run's worker while the block
    reads the inputs (about a fifth of a second saved from an empty cache), and waited for at the block's
    end; that worker can then learn the reference data's types (:func:`~scorer.scoring.turns.learn_ahead`).
    None where there is nothing to identify, or it cannot be found or read: the load says why, after the
    submission is checked (the order of checks), and nothing changes when the worker fails before it is
    handed the types; once it learns them, its death ends the run as any worker's (exit 2)."""
    thesaurus = run.thesaurus
    if isinstance(thesaurus, (Thesaurus, Source)) or not needs_thesaurus(config.meteor.stages):
        yield None, None
        return
    try:
        source = identify(None if thesaurus is None else os.fspath(thesaurus))
    except ThesaurusError:
        yield None, None
        return
    if run.jobs < 2 or source.index_cached:
        yield source, None
        return
    with WorkerPool(1, Learner(config.meteor.stages, source)) as pool:
        helper = _Helper(pool, pool.submit_all(learner_ready, [None])[0])
        yield source, helper
        helper.index_built()


#: The dialogues' parts, as a team's code is given them: dialog_id -> turns -> parts (``type``, ``content``).
Parts = dict[str, list[list[dict[str, str]]]]


@dataclass
class Run:
    """A run opened once (:meth:`open`): the data folder, the options, the configuration in force and its
    source, the reference data, the dialogues' parts when asked (``parts``), and the thesaurus and the
    competition, made when first used."""

    data_dir: PathLike | None
    options: RunOptions
    config: Config
    config_source: str
    reference: ReferenceData
    parts: Parts | None = None
    #: The media files the dialogues name (path in the data folder -> bytes), when asked.
    media: dict[str, bytes] | None = None
    _thesaurus: list[Thesaurus | None] = field(default_factory=list, repr=False)
    #: While the run is open (:meth:`opening`'s block): its worker, and the reference data's types it learns.
    helper: _Helper | None = field(default=None, repr=False, compare=False)
    ahead: Ahead | None = field(default=None, repr=False, compare=False)

    @classmethod
    def open(cls, data_dir: PathLike, options: RunOptions | None = None, **how: Any) -> Run:
        """Open a run on the reference directory ``data_dir`` (:meth:`opening`'s keywords but ``index`` and
        ``learn``, which serve a block):
        the configuration settled by contract section 7's rule (``options.config`` standing for
        ``--config``), then ``between()`` (checks of the entry point's own arguments that come before the
        data), then the reference data read and checked (``answers.jsonl`` with ``answers``; each
        dialogue's parts with ``parts``; with ``media``, every error of the data and of the media files it
        names in one round, and their bytes kept). Raises ``ConfigError``, ``UsageError`` or
        ``ReferenceDataError`` (exit 2)."""
        with cls.opening(data_dir, options, **how) as run:
            return run

    @classmethod
    @contextmanager
    def opening(
        cls,
        data_dir: PathLike,
        options: RunOptions | None = None,
        *,
        answers: bool = True,
        parts: bool = False,
        media: bool = False,
        progress: Progress | None = None,
        between: Callable[[], None] | None = None,
        index: bool = False,
        learn: bool = False,
    ) -> Iterator[Run]:
        """:meth:`open` as a block; with ``index``, the thesaurus is found first and, where it pays, its index
        built on the run's worker while the block reads the reference data and what the caller reads inside
        it (the submission), waited for before the thesaurus is loaded and at the block's end; with ``learn``
        as well (a submission scored inside the block), that worker then learns the reference data's types
        (:func:`~scorer.scoring.turns.learn_ahead`), which :meth:`score` takes. The worker ends with the
        block."""
        options = options or RunOptions()
        config, source = options.settled(data_dir)
        if between is not None:
            between()
        meanwhile = _helper_meanwhile(config, options) if index else nullcontext((None, None))
        with meanwhile as (found, helper):
            if found is not None:
                options = replace(options, thesaurus=found)
            kept: Parts | None = {} if parts else None
            files: dict[str, bytes] | None = None
            if media:
                reference, files = load_reference_and_media(data_dir, config.limits)
            else:
                reference = load_reference(
                    data_dir, config.limits, with_answers=answers, progress=progress, parts=kept
                )
            ahead = None
            if learn and helper is not None and reference.tokens is not None:
                ahead = learn_ahead(helper.pool, reference.vocabulary)
            run = cls(data_dir, options, config, source, reference, kept, files, helper=helper, ahead=ahead)
            try:
                yield run
            finally:
                run.helper = run.ahead = None  # the worker ends with the block

    @property
    def jobs(self) -> int:
        """The processes the run scores on."""
        return self.options.jobs

    @property
    def progress(self) -> Progress | None:
        """Who hears the run's progress."""
        return self.options.progress

    # --- what the entry points do with it -----------------------------------------------------------------

    def validate(
        self,
        submission: PathLike,
        ppl: PathLike | None = None,
        *,
        probes: bool = False,
        named: bool = True,
        progress: Progress | None = None,
    ) -> Submission:
        """Read the submission's files and validate them against the dialogues; with ``probes`` (the
        organizer's audit), ``ppl_probes.json`` too when it lies beside the perplexities (contract section
        10), and the targets' digests ``run`` wrote. Raises ``SubmissionInvalid``, with a run's
        ``run_fault.json`` as its one error when the submission is the output of a run whose code failed; a
        code upload that was not run is told the command that runs it on this data folder (``named``)."""
        reference, limits = self.reference, self.config.limits
        fault = run_fault_issue(Path(submission), {d.dialog_id: d.n_turns for d in reference.dialogues})
        if fault is not None:  # a run's output whose code failed (contract section 10): its one error
            raise SubmissionInvalid([fault])
        data = self.data_dir if named else None
        files = read_submission(submission, ppl, limits, probes=probes, data=data)
        valid = check_submission(
            reference.dialogues, files.submission, files.ppl, limits, files.names, progress
        )
        if probes and isinstance(
            files.ppl, Path
        ):  # the organizer's: the targets' digests, when run wrote them
            targets = read_targets(files.ppl.parent / TARGETS, limits.max_file_bytes)
            if isinstance(targets, Issue):
                valid = replace(valid, warnings=[*valid.warnings, targets])
            elif targets is not None:
                valid = replace(valid, targets=targets)
        if files.probes is None:
            return valid
        return replace(valid, probes=check_probes(reference.dialogues, files.probes, limits))

    def validate_answers(self, submission: PathLike) -> Submission:
        """The answers of ``submission`` (a ``submission.jsonl``) validated, with a perplexity of 1 for each
        turn until the team's code computes them (contract section 10's scoring step)."""
        valid = check_submission(self.reference.dialogues, Path(submission), None, self.config.limits)
        return replace(valid, ppl={d.dialog_id: [1.0] * d.n_turns for d in self.reference.dialogues})

    def ppl_check(self, path: PathLike | None) -> Mapping[str, list[float | None]] | None:
        """The organizer's recomputed perplexities (``--ppl-check``), checked, or None."""
        return None if path is None else read_ppl_check(path, self.reference.dialogues, self.config.limits)

    def thesaurus(self) -> Thesaurus | None:
        """The thesaurus the configured stages need, loaded once (:func:`thesaurus_for`)."""
        if not self._thesaurus:
            if self.helper is not None:  # its index is being built on the run's worker
                self.helper.index_built()
            self._thesaurus.append(thesaurus_for(self.config, self.options.thesaurus))
        return self._thesaurus[0]

    def competition(self, matcher: Matcher | None = None) -> Competition:
        """The competition's rules with this run's configuration and thesaurus (``matcher``: one shared)."""
        return Competition.of(self.config, matcher or Matcher(self.thesaurus()))

    def reference_field(self, audience: Audience = ORGANIZER) -> str:
        """The signature's ``ref`` field of this reference data for ``audience`` (contract section 6)."""
        return scored.reference_field_of(self.reference, self.config, audience)

    def signature(self, audience: Audience = ORGANIZER) -> str:
        """The signature a run on this data carries for ``audience`` (contract section 6)."""
        return self.competition().signature(self.reference_field(audience))

    def score(
        self,
        valid: Submission,
        *,
        name: str = "",
        ppl_check: Mapping[str, list[float | None]] | None = None,
        audience: Audience = ORGANIZER,
        matcher: Matcher | None = None,
        reference_id: str | None = None,
        progress: Progress | None = None,
    ) -> ScoreResult:
        """``valid`` scored (:func:`scorer.scoring.scored.score_validated`) on this run's processes, with the
        keys its worker learnt ahead (:meth:`opening`'s ``learn``) the first time."""
        ahead = None
        if matcher is None:  # learnt with the run's own thesaurus: for its own matcher alone
            ahead, self.ahead = self.ahead, None
        return scored.score_validated(
            self.reference,
            valid,
            self.config,
            self.thesaurus() if matcher is None else None,
            self.options.jobs,
            progress if progress is not None else self.options.progress,
            matcher,
            name,
            ppl_check,
            audience,
            config_source=self.config_source,
            reference_id=reference_id,
            ahead=ahead,
        )

    def board(self, submissions_dir: PathLike, resamples: int, seed: int) -> Leaderboard:
        """Every submission of ``submissions_dir`` scored on this run, ranked and audited
        (:func:`scorer.scoring.board.score_board`)."""
        return score_board(self, submissions_dir, resamples, seed)

    def audit_sample(self, valid: Submission, n: int, seed: int) -> list[dict[str, Any]]:
        """The turns an organizer should recompute the perplexities of (contract section 9): ``n`` turns
        drawn without replacement, allotted to the dialogue types in proportion to their turns,
        reproducible from ``seed``; each ``{"dialog_id", "turn", "type", "ppl"}``, in the order of
        ``dialogues.jsonl``."""
        dialogues = self.reference.dialogues
        by_type: dict[str, list[tuple[int, int]]] = {}
        for k, dialogue in enumerate(dialogues):
            by_type.setdefault(dialogue.type, []).extend((k, turn) for turn in range(dialogue.n_turns))
        rng = random.Random(seed)
        chosen: list[tuple[int, int]] = []
        counts = sample_counts({t: len(by_type[t]) for t in DIALOGUE_TYPES if t in by_type}, n)
        for kind, count in counts.items():
            chosen.extend(rng.sample(by_type[kind], count))
        return [
            {
                "dialog_id": dialogues[k].dialog_id,
                "turn": turn,
                "type": dialogues[k].type,
                "ppl": valid.ppl[dialogues[k].dialog_id][turn],
            }
            for k, turn in sorted(chosen)
        ]


#: Bounds of the bootstrap's settings: enough resamples for a 95% interval, few enough to fit in memory.
MIN_RESAMPLES, MAX_RESAMPLES = 40, 100_000
MAX_SEED = 2**63 - 1


def check_board(submissions_dir: PathLike, resamples: int, seed: int) -> None:
    """A board's own arguments: a folder of submissions, resamples and a seed in range (``UsageError``)."""
    if not Path(submissions_dir).is_dir():
        raise UsageError(f"submissions folder {submissions_dir}: not a directory")
    if not MIN_RESAMPLES <= resamples <= MAX_RESAMPLES:
        raise UsageError(
            f"resamples = {shorten(str(resamples), 30)}: give {MIN_RESAMPLES} (the fewest for a 95% "
            f"interval) to {MAX_RESAMPLES:,}"
        )
    check_seed(seed)


def check_seed(seed: int) -> None:
    """A seed of the bootstrap or of the audit's draw: a whole number from 0 to :data:`MAX_SEED`."""
    if not 0 <= seed <= MAX_SEED:
        raise UsageError(f"seed = {shorten(str(seed), 30)}: give a whole number from 0 to 2**63 - 1")
