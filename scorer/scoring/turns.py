"""METEOR of every turn: the answer tokenised once, best variant per turn, on one or more processes.

Turns are independent and each is computed the same way wherever it runs,
so the result list is identical for any number of jobs. Several jobs use
forked worker processes (they share the loaded dictionary and thesaurus and
hand back the token keys they computed, for the token cache); where ``fork``
is not available, or the work is small, everything runs in this process.
When the matcher knows no token yet (an empty token cache), this process
and the workers first compute the keys of every type of the turns, each
type once, a share each, and the turns are then scored knowing them all:
otherwise every worker would analyse nearly every type itself. Without
the penalty, on the compiled engine, turns are scored on workers only when
there are many (:data:`MIN_TURNS_PER_JOB_WITHOUT_PENALTY`).
"""
from __future__ import annotations

import os
import signal
from typing import Any, Callable, Sequence

from scorer.metric.meteor import MeteorRu, MeteorScore, best_variants
from scorer.metric.tokeniser import tokeniser

#: Below this many turns the cost of starting workers outweighs the gain.
MIN_TURNS_PER_JOB = 500
PIECES_PER_JOB = 8  # smaller pieces even out uneven turns and let progress move
#: Without the penalty, on the compiled engine, a turn costs about 18 microseconds in one process (rule 1's
#: counts on ids), and workers must first be started and every result handed back: they score only when
#: each has at least this many turns (20,000 WMT21 turns on 2 cores: 1.11 s in one process, 1.34 s with two workers;
#: 100,000: 5.1-5.5 s and 4.5-4.8 s).
MIN_TURNS_PER_JOB_WITHOUT_PENALTY = 20_000

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
    learners = jobs if jobs > 1 and not metric.matcher.lemmas else 0
    if not metric.params.gamma and metric.engine.counts_on_ids:
        jobs = min(jobs, len(answers) // MIN_TURNS_PER_JOB_WITHOUT_PENALTY)
    forks: Any = _fork_context() if learners or jobs > 1 else None  # multiprocessing is imported only then
    if forks is None:
        learners = 0
    parallel = forks is not None and jobs > 1
    pieces = jobs * PIECES_PER_JOB if parallel else PIECES_PER_JOB
    bounds = [len(answers) * k // pieces for k in range(pieces + 1)]
    spans = [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]
    results: list[tuple[int, MeteorScore]] = []
    global _state
    tokens: list[list[str]] | None = None
    new_types: list[str] = []
    tokenise = tokeniser()
    if learners:  # nothing known yet: every type's keys computed once, spread over the workers
        tokens = [tokenise(a) for a in answers]
        new_types = sorted(_types(tokens, variants))
        metric.matcher.prepare(metric.params.stages)  # the analyser loaded once, before the fork
    _state = (answers, tokens, variants, metric, tokenise)
    try:
        if learners:  # this process takes the first share itself, the workers the others meanwhile
            shares = [new_types[k::learners] for k in range(learners)]
            with forks.Pool(learners - 1, initializer=_start_worker) as pool:
                found = pool.imap_unordered(_keys_of, shares[1:])
                _compute_keys(metric, shares[0])
                for new_keys in found:
                    metric.matcher.absorb(*new_keys)
        if parallel:
            with forks.Pool(jobs, initializer=_start_worker) as pool:
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


def _fork_context() -> Any:
    """multiprocessing's ``fork`` context, or None where there is no ``fork``."""
    import multiprocessing

    return multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None


def _types(tokens: Sequence[list[str]], variants: Sequence[Sequence[list[str]]]) -> set[str]:
    """Every token type of the answers (``tokens``) and of the references."""
    found: set[str] = set()
    for answer in tokens:
        found.update(answer)
    for turn in variants:
        for variant in turn:
            found.update(variant)
    return found


def _compute_keys(metric: MeteorRu, types: list[str]) -> None:
    """The keys of ``types`` at every stage of the metric, computed into its matcher."""
    for keys in metric.matcher.key_functions(metric.params.stages):
        if keys is not None:
            for token in types:
                keys(token)


def _keys_of(types: list[str]) -> tuple:
    """In a worker: the keys of ``types`` at every stage of the metric, computed and handed back."""
    metric = _shared()[3]
    _compute_keys(metric, types)
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
    answers, tokens, variants, metric, tokenise = _shared()
    start, stop = span
    cands = [tokenise(a) for a in answers[start:stop]] if tokens is None else tokens[start:stop]
    return best_variants(cands, variants[start:stop], metric.matcher, metric.params, engine=metric.engine)
