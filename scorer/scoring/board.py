"""A board of submissions scored on one opened run (contract sections 6 and 9): each subfolder or ``.zip``
validated and scored, one entry never stopping the others, then ranked with bootstrap intervals and paired
p-values, and the perplexities of every scored entry audited across the board (:func:`score_board`).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from scorer.errors import Issue, SubmissionInvalid, UsageError
from scorer.inputs.config import Config
from scorer.inputs.jsonio import shorten
from scorer.inputs.reference import ReferenceData
from scorer.inputs.validation import Submission
from scorer.metric.matcher import Matcher
from scorer.metric.thesaurus import Thesaurus
from scorer.progress import Progress
from scorer.workers import no_cycle_collection

from . import scored
from .audit import audit_board
from .competition import Competition
from .leaderboard import find_submissions, rank
from .leaderboard_result import Entry, Leaderboard


class Run(Protocol):
    """What a board needs of an opened run (:class:`scorer.scoring.run.Run`)."""

    config: Config
    reference: ReferenceData

    @property
    def jobs(self) -> int: ...

    @property
    def progress(self) -> Progress | None: ...

    def thesaurus(self) -> Thesaurus | None: ...

    def reference_field(self) -> str: ...

    def validate(self, submission: Path, *, probes: bool, progress: Progress | None) -> Submission: ...


def score_board(run: Run, submissions_dir: str | os.PathLike[str], resamples: int, seed: int) -> Leaderboard:
    """Every submission of ``submissions_dir`` scored on ``run`` (its arguments checked, its reference data
    read and its configuration settled), ranked and audited."""
    folder = Path(submissions_dir)
    progress, config, reference = run.progress, run.config, run.reference
    with no_cycle_collection():
        matcher = Matcher(run.thesaurus())
        ref = run.reference_field()
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
            entries.append(_entry(run, name, path, step, matcher, ref))
        matcher.save(reference.vocabulary)
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
    audited = {
        e.name: (e.result.audit, [t.ppl for t in e.result.turns])
        for e in entries
        if e.result is not None and e.result.audit is not None
    }
    return replace(board, audit=audit_board(audited, config.audit), audit_private=config.audit.is_private)


def _entry(run: Run, name: str, path: Path, progress: Progress | None, matcher: Matcher, ref: str) -> Entry:
    """One leaderboard entry: scored, invalid with its errors (a code upload that was not run: with the
    command that runs it), or failed (status ``error``) with the message of whatever else went wrong, so that
    one entry never stops the others. Its ``ppl_probes.json``, when there is one, is read for the audit."""
    try:
        valid = run.validate(path, probes=True, progress=progress)
        result = scored.score_validated(
            run.reference,
            valid,
            run.config,
            None,
            run.jobs,
            progress,
            matcher,
            name,
            reference_id=ref,
        )
        return Entry(name, path, result)
    except SubmissionInvalid as exc:
        return Entry(name, path, errors=tuple(exc.listed()), more_errors=exc.not_listed)
    except UsageError as exc:
        return Entry(name, path, errors=(Issue(name, str(exc), "unreadable"),))
    except (Exception, RecursionError, MemoryError) as exc:  # noqa: BLE001 - isolated to this entry
        message = f"scoring failed: {type(exc).__name__}: {shorten(str(exc), 200)}"
        return Entry(name, path, errors=(Issue(name, message, "scoring_failed"),), failed=True)
