"""METEOR of every turn: the answer tokenised once, best variant per turn, on one or more processes.

Turns are independent and each is computed the same way wherever it runs,
so the result list is identical for any number of jobs. Several jobs use
forked worker processes (they share the loaded dictionary and thesaurus and
hand back the token keys they computed, for the token cache); where ``fork``
is not available, or the work is small, everything runs in this process.
When the matcher knows no token yet (an empty token cache), the workers
first compute the keys of every type of the turns, each type once, and
the turns are then scored knowing them all: otherwise every worker would
analyse nearly every type itself. Without the penalty the turns are then
scored in this process unless :data:`MIN_JOBS_FOR_COUNTS` workers are
allowed.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
from typing import Any, Callable, Sequence

from scorer.metric.meteor import MeteorRu, MeteorScore, best_variant
from scorer.metric.tokeniser import tokeniser

#: Below this many turns the cost of starting workers outweighs the gain.
MIN_TURNS_PER_JOB = 500
PIECES_PER_JOB = 8  # smaller pieces even out uneven turns and let progress move
#: Once the keys of every type were computed on the workers (an empty token cache), turns without the
#: penalty are scored on workers again only when at least this many run: the answers are tokenised by then,
#: and two new workers would intern every type again and hand back every result (20,000 WMT21 turns:
#: 0.44 s in this process, 0.73 s on two workers).
MIN_JOBS_FOR_COUNTS = 3

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
    learn_first = parallel and not metric.matcher.lemmas
    if learn_first and metric.params.gamma == 0 and jobs < MIN_JOBS_FOR_COUNTS:
        parallel = False  # the keys are spread out below; the answers are tokenised already
    pieces = jobs * PIECES_PER_JOB if parallel else PIECES_PER_JOB
    bounds = [len(answers) * k // pieces for k in range(pieces + 1)]
    spans = [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]
    results: list[tuple[int, MeteorScore]] = []
    global _state
    try:
        tokens = None
        if learn_first:  # nothing known yet: each type's keys computed once, spread out
            tokenise = tokeniser()
            tokens = [tokenise(a) for a in answers]
            _state = (answers, tokens, variants, metric)
            new_types = sorted(_types(tokens, variants))
            with multiprocessing.get_context("fork").Pool(jobs, initializer=_start_worker) as pool:
                for new_keys in pool.imap_unordered(_keys_of, [new_types[k::jobs] for k in range(jobs)]):
                    metric.matcher.absorb(*new_keys)
        _state = (answers, tokens, variants, metric)
        if parallel:
            with multiprocessing.get_context("fork").Pool(jobs, initializer=_start_worker) as pool:
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


def _types(tokens: Sequence[list[str]], variants: Sequence[Sequence[list[str]]]) -> set[str]:
    """Every token type of the answers (``tokens``) and of the references."""
    found: set[str] = set()
    for answer in tokens:
        found.update(answer)
    for turn in variants:
        for variant in turn:
            found.update(variant)
    return found


def _keys_of(types: list[str]) -> tuple:
    """In a worker: the keys of ``types`` at every stage of the metric, computed and handed back."""
    metric = _shared()[3]
    for keys in metric.matcher.key_functions(metric.params.stages):
        if keys is not None:
            for token in types:
                keys(token)
    return metric.matcher.take_new()


def _start_worker() -> None:
    """Workers leave SIGINT and SIGTERM to the parent, which stops them and exits cleanly; they hand back
    only the keys they compute themselves, not those the parent computed or took in before the fork."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _shared()[3].matcher.take_new()


def _worker(span: tuple[int, int]) -> tuple[list[tuple[int, MeteorScore]], tuple]:
    return _score_span(span), _shared()[3].matcher.take_new()


def _shared() -> tuple[Any, ...]:
    """What :func:`score_turns` shares with its workers (set for the duration of a call)."""
    if _state is None:
        raise RuntimeError("no scoring in progress")
    return _state


def _score_span(span: tuple[int, int]) -> list[tuple[int, MeteorScore]]:
    answers, tokens, variants, metric = _shared()
    matcher, params, engine = metric.matcher, metric.params, metric.engine
    start, stop = span
    tokenise = tokeniser()
    return [best_variant(tokenise(answers[k]) if tokens is None else tokens[k], variants[k], matcher, params,
                         engine=engine) for k in range(start, stop)]
