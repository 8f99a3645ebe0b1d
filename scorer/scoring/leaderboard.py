"""Ranking many submissions: entries, ranks, intervals and paired p-values.

Every subdirectory or ``.zip`` file of the submissions folder is one
submission, named by its entry name (``team-a`` or ``team-a.zip``); hidden
entries and other files are skipped and listed. Valid submissions are ranked
by integral, descending (equal integrals share a rank; names order them);
each gets a 95% bootstrap interval and, from rank 2 on, the paired p-value
against the submission ranked just above it (:mod:`scorer.scoring.significance`).
Invalid ones follow, unranked, with their first errors; then entries whose
scoring failed for another reason (status ``error``, with the message), so
one entry's failure never stops the others from being ranked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from scorer.inputs.contract import DIALOGUE_TYPES
from scorer.metric.stages import STAGE_NAMES
from scorer.progress import BOOTSTRAP, Progress

from .aggregate import dialog_scores
from .leaderboard_result import Entry, Leaderboard, Standing
from .significance import interval, make_strata, paired_p_value, resampled_integrals


def find_submissions(folder: Path) -> tuple[list[tuple[str, Path]], list[str]]:
    """``(name, path)`` of every submission in ``folder``, by name; and the names skipped. A name is the
    file name's bytes read as UTF-8 (whatever the file-system encoding; bytes that are not UTF-8 escaped),
    so it can be written into every output."""
    found, skipped = [], []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        path = Path(entry.path)
        name = entry_name(entry.name)
        if name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False) or (
            entry.is_file(follow_symlinks=False) and name.lower().endswith(".zip")
        ):
            found.append((name, path))
        else:
            skipped.append(name)
    return found, skipped


def entry_name(file_name: str) -> str:
    """A file name as text: its bytes read as UTF-8, those that are not escaped (``\\xff``)."""
    return os.fsencode(file_name).decode("utf-8", "backslashreplace")


def folder_name(name: str) -> str:
    """The file name of the folder an entry called ``name`` (:func:`entry_name`) gets among the outputs: the
    same bytes, in the form the file-system encoding can write."""
    return os.fsdecode(name.encode("utf-8"))


def rank(
    entries: Sequence[Entry],
    weights: Mapping[str, float],
    resamples: int,
    seed: int,
    signature: str,
    skipped: Sequence[str],
    stages: tuple[str, ...] = STAGE_NAMES,
    progress: Progress | None = None,
) -> Leaderboard:
    """Order, rank and compare ``entries`` (scored or invalid) as the module docstring says;
    ``progress`` hears the entries resampled."""
    valid = sorted(
        (e for e in entries if e.result is not None), key=lambda e: (-e.scored().summary.integral, e.name)
    )
    invalid = sorted((e for e in entries if e.result is None), key=lambda e: (e.failed, e.name))
    standings: list[Standing] = []
    if valid:
        first = valid[0].scored().summary.by_type
        per_type = {t: first[t].dialogs for t in DIALOGUE_TYPES if t in first}
        strata = make_strata(per_type, weights, resamples, seed)
        samples = []
        for k, e in enumerate(valid):
            if progress:
                progress(BOOTSTRAP, k, len(valid))
            samples.append(resampled_integrals(strata, dialog_scores(e.scored().turns)))
        if progress:
            progress(BOOTSTRAP, len(valid), len(valid))
        for k, entry in enumerate(valid):
            integral = entry.scored().summary.integral
            low, high = interval(samples[k])
            if k == 0:
                standings.append(Standing(entry, 1, low, high))
                continue
            above = standings[-1]
            place = above.rank if integral == above.integral else k + 1
            p = paired_p_value(samples[k], samples[k - 1], integral, valid[k - 1].scored().summary.integral)
            standings.append(Standing(entry, place, low, high, p, above.name))
    standings += [Standing(e) for e in invalid]
    return Leaderboard(tuple(standings), signature, resamples, seed, tuple(skipped), stages)
