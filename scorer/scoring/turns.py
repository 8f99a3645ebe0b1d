"""METEOR of every turn: the answer tokenised once, best variant per turn, on one or more processes.

Turns are independent and each is computed the same way wherever it runs,
so the result list is identical for any number of jobs. Several jobs use
forked worker processes (they share the loaded dictionary and thesaurus and
hand back the token keys they computed, for the token cache); where ``fork``
is not available, or the work is small, everything runs in this process.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
from typing import Any, Callable, Sequence

from scorer.metric.meteor import MeteorRu, MeteorScore, best_variant
from scorer.metric.text import tokenise

#: Below this many turns the cost of starting workers outweighs the gain.
MIN_TURNS_PER_JOB = 500
PIECES_PER_JOB = 8  # smaller pieces even out uneven turns and let progress move

_state: tuple | None = None  # what forked workers inherit: the turns and the metric


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def score_turns(answers: Sequence[str], variants: Sequence[Sequence[list[str]]], metric: MeteorRu, jobs: int = 1,
                progress: Callable[[int], None] | None = None) -> list[tuple[int, MeteorScore]]:
    """For each turn, the index and score of the best reference variant of ``answers[k]``; ``variants[k]``
    are that turn's reference variants, tokenised.

    ``progress(done)`` is called with the number of turns scored so far.
    """
    jobs = min(jobs, len(answers) // MIN_TURNS_PER_JOB)
    parallel = jobs > 1 and "fork" in multiprocessing.get_all_start_methods()
    pieces = jobs * PIECES_PER_JOB if parallel else PIECES_PER_JOB
    bounds = [len(answers) * k // pieces for k in range(pieces + 1)]
    spans = [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]
    results: list[tuple[int, MeteorScore]] = []
    global _state
    _state = (answers, variants, metric)
    try:
        if parallel:
            with multiprocessing.get_context("fork").Pool(jobs, initializer=_ignore_signals) as pool:
                for part, new_keys in pool.imap(_worker, spans):
                    results.extend(part)
                    metric.matcher.absorb(*new_keys)
                    if progress:
                        progress(len(results))
        else:
            for span in spans:
                results.extend(_score_span(span))
                if progress:
                    progress(len(results))
    finally:
        _state = None
    return results


def _ignore_signals() -> None:
    """Workers leave SIGINT and SIGTERM to the parent, which stops them and exits cleanly."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _worker(span: tuple[int, int]) -> tuple[list[tuple[int, MeteorScore]], tuple]:
    return _score_span(span), _shared()[2].matcher.take_new()


def _shared() -> tuple[Any, ...]:
    """What :func:`score_turns` shares with its workers (set for the duration of a call)."""
    if _state is None:
        raise RuntimeError("no scoring in progress")
    return _state


def _score_span(span: tuple[int, int]) -> list[tuple[int, MeteorScore]]:
    answers, variants, metric = _shared()
    matcher, params, engine = metric.matcher, metric.params, metric.engine
    start, stop = span
    return [best_variant(tokenise(answers[k]), variants[k], matcher, params, engine=engine) for k in range(start, stop)]
