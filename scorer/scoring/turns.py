"""METEOR of every turn: the answer tokenised once, best variant per turn, on one or more processes.

Turns are independent and each is computed the same way wherever it runs,
so the result list is identical for any number of jobs. With several jobs
this process scores the first share of the turns and the one pool of worker
processes the others, meanwhile (:class:`WorkerPool`, forked, one worker
fewer than the jobs: they share the loaded dictionary and thesaurus, and
hand back the token keys they computed, for the token cache), then the
pieces no worker has taken yet (:func:`shared`); where ``fork`` is not
available, or the work is small, everything runs in this process.
When the matcher knows no token yet (an empty token cache), the keys of
every type of the turns are computed first, each type once: the workers
learn the references' types while this process tokenises the answers and
learns the types only they have, then takes the references' pieces no
worker has taken; the turns are then scored knowing them all (otherwise
every worker would analyse nearly every type itself). From an empty cache
with two processes, the run's worker forked when the run opened
(:class:`Learner`) has been learning the references' types since the data
was read (:func:`learn_ahead`): it takes the workers' part here. Without
the penalty, on the compiled engine, turns are scored on workers only when
there are many (:data:`MIN_TURNS_PER_JOB_WITHOUT_PENALTY`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future
from typing import Any, NamedTuple

from scorer.metric.matcher import Matcher
from scorer.metric.meteor import MeteorRu, MeteorScore, best_variants
from scorer.metric.text import tokenise, words_of
from scorer.metric.thesaurus import Source, load_thesaurus
from scorer.workers import WorkerDied, WorkerPool, can_fork, worker_payload

#: Below this many turns the cost of starting workers outweighs the gain.
MIN_TURNS_PER_JOB = 500
#: Smaller pieces even out uneven turns, let progress move, and leave this process the last no worker took.
PIECES_PER_JOB = 16
#: Without the penalty, on the compiled engine, a turn costs about 15 microseconds in one process (rule 1's
#: counts on ids), and a worker must first be started and its results handed back: the turns are shared
#: only when each job has at least this many (WMT21 turns on 2 cores, whole process, this process and one
#: worker against this process alone: 10,000 turns 0.446 s and 0.462 s; 20,000 turns 0.756 s and 0.802 s).
MIN_TURNS_PER_JOB_WITHOUT_PENALTY = 10_000


def default_jobs() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def score_turns(
    answers: Sequence[str],
    variants: Sequence[Sequence[list[str]]],
    metric: MeteorRu,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
    learnt: Callable[[], None] | None = None,
    ahead: Ahead | None = None,
) -> list[tuple[int, MeteorScore]]:
    """For each turn, the index and score of the best reference variant of ``answers[k]``; ``variants[k]``
    are that turn's reference variants, tokenised.

    ``progress(done)`` is called with the number of turns scored so far. ``learnt()``, when given, is called
    once when the processes have learnt every type's keys from nothing (an empty matcher), before the turns
    are scored: with several jobs while the workers score, this process then scoring only the pieces they
    have not taken. ``ahead``: the reference data's types the run's worker has been learning since the data
    was read (:func:`learn_ahead`), taken as that worker's share when the types are learnt on two processes,
    else stopped. Raises :class:`WorkerDied` when a worker process dies.
    """
    jobs = min(jobs, len(answers) // MIN_TURNS_PER_JOB)
    learners = jobs if jobs > 1 and not metric.knows_tokens() else 0
    if not metric.params.needs_alignment and metric.engine.counts_on_ids:
        jobs = min(jobs, len(answers) // MIN_TURNS_PER_JOB_WITHOUT_PENALTY)
    if not can_fork():
        jobs, learners = 1, 0
    pieces = jobs * PIECES_PER_JOB if jobs > 1 else PIECES_PER_JOB
    bounds = [len(answers) * k // pieces for k in range(pieces + 1)]
    spans = [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]
    tokens: list[list[str]] | None = None
    if ahead is not None and learners != 2:  # known already, or more processes to learn on than it has
        if learners:  # the pieces it has learnt are kept; the processes below learn the rest
            for future in ahead.futures:
                if future.done() and not future.cancelled() and future.exception() is None:
                    metric.matcher.absorb(*future.result())
        ahead.pool.close()
        ahead = None
    if learners:  # nothing known yet: every type's keys computed once, spread over the processes
        stages = metric.params.stages
        if ahead is None:
            metric.matcher.prepare(stages)  # the analyser loaded once, before the fork
        known = words_of(variant for turn in variants for variant in turn)
        pieces = (learners - 1) * PIECES_PER_JOB
        tokenised: list[list[str]] = []
        own_types: list[str] = []

        def learn_here(k: int, share: list[str]) -> None:
            _compute_keys(metric.matcher, stages, share)

        def learnt_there(k: int, new_keys: tuple[Any, ...]) -> None:
            metric.matcher.absorb(*new_keys)

        def answers_read() -> None:
            tokenised.extend([tokenise(a) for a in answers])
            own_types.extend(sorted(set().union(*tokenised).difference(known)))

        if ahead is not None:
            # the run's worker has been learning the references' types; this process tokenises the answers and
            # finds the types only they have, takes the references' pieces it has not begun, then those
            with ahead.pool as pool:
                shared(pool, ahead.pieces, 0, learn_here, _keys_of, learnt_there, answers_read, ahead.futures)
                shared(pool, _dealt(own_types, pieces), 0, learn_here, _keys_of, learnt_there)
        else:
            with WorkerPool(learners - 1, Work(answers, None, variants, metric), _fresh_keys) as pool:
                # the workers learn the references' types while this process tokenises the answers and finds
                # the types only they have; then those are shared out the same way
                dealt = _dealt(sorted(known), pieces)
                shared(pool, dealt, 0, learn_here, _keys_of, learnt_there, answers_read)
                shared(pool, _dealt(own_types, pieces), 0, learn_here, _keys_of, learnt_there)
        tokens = tokenised
    work = Work(answers, tokens, variants, metric)
    results: list[tuple[int, MeteorScore]]
    results = []
    if jobs > 1:  # workers forked now share every key learnt so far; this process takes the first share
        parts: dict[int, list[tuple[int, MeteorScore]]] = {}
        done = 0

        def scored_here(k: int, span: tuple[int, int]) -> None:
            nonlocal done
            part = parts[k] = work.score_span(span)
            done += len(part)
            if progress:
                progress(done)

        def scored_there(k: int, found: tuple[list[tuple[int, tuple[Any, ...]]], tuple[Any, ...]]) -> None:
            nonlocal done
            rows, new_keys = found
            parts[k] = [(best, MeteorScore._make(score)) for best, score in rows]
            metric.matcher.absorb(*new_keys)
            done += len(rows)
            if progress:
                progress(done)

        keep = learnt if learners else None  # run here while the workers score, then the pieces they left
        with WorkerPool(jobs - 1, work, _fresh_keys) as pool:
            own = 0 if keep is not None else len(spans) // jobs
            shared(pool, spans, own, scored_here, _score_on_worker, scored_there, meanwhile=keep)
        for k in range(len(spans)):
            results.extend(parts[k])
    else:
        if learners and learnt is not None:
            learnt()
        for span in spans:
            results.extend(work.score_span(span))
            if progress:
                progress(len(results))
    return results


def _dealt(types: list[str], pieces: int) -> list[list[str]]:
    """``types`` dealt into at most ``pieces`` shares, every ``pieces``-th type to one share."""
    return [share for share in (types[k::pieces] for k in range(pieces)) if share]


def shared(
    pool: WorkerPool,
    items: Sequence[Any],
    own: int,
    here: Callable[[int, Any], None],
    there: Callable[[Any], Any],
    back: Callable[[int, Any], None],
    meanwhile: Callable[[], None] | None = None,
    submitted: Sequence[Future[Any]] | None = None,
) -> None:
    """``items`` done by this process and the pool meanwhile: the first ``own`` here (``here(index,
    item)``), the others submitted to the pool (``there(item)`` in a worker), whose answers are taken back in
    order (``back(index, answer)``). Once its own are done, this process does the pool's items no worker has
    taken yet, from the last one back (a worker that lags leaves them: they are cancelled in the pool).
    ``meanwhile()``, when given, runs here first, once the pool has the others. ``submitted``: the others'
    futures, when they were submitted earlier."""
    found = pool.submit_all(there, items[own:]) if submitted is None else list(submitted)
    if meanwhile is not None:
        meanwhile()
    order = [(k, None) for k in range(own)] + [(own + j, f) for j, f in reversed(list(enumerate(found)))]
    done_here = set()
    for k, future in order:
        if future is not None and not future.cancel():
            break  # the pool has handed this item on (to a worker or its queue), and every one before it
        pool.check()  # a worker that died is named now, not once this process's share is done
        here(k, items[k])
        done_here.add(k)
    taken = [(own + j, f) for j, f in enumerate(found) if own + j not in done_here]
    for (k, _), answer in zip(taken, pool.results([f for _, f in taken])):
        back(k, answer)


class Work(NamedTuple):
    """What the workers are given when they start (by fork: nothing is copied): the turns and the metric."""

    answers: Sequence[str]
    tokens: list[list[str]] | None
    variants: Sequence[Sequence[list[str]]]
    metric: MeteorRu

    def score_span(self, span: tuple[int, int]) -> list[tuple[int, MeteorScore]]:
        start, stop = span
        cands = (
            [tokenise(a) for a in self.answers[start:stop]]
            if self.tokens is None
            else self.tokens[start:stop]
        )
        # the kept keys of this piece's words that the token table has not interned (it holds the reference
        # data's), in a few queries of the word store rather than one a word
        stages = self.metric.params.stages
        unknown = self.metric.engine.unknown_tokens(cands, self.metric.matcher.key_functions(stages))
        self.metric.matcher.prefetch(unknown, stages)
        return best_variants(
            cands,
            self.variants[start:stop],
            self.metric.matcher,
            self.metric.params,
            engine=self.metric.engine,
        )


class Learner:
    """What the run's worker is given when the run opens (:mod:`scorer.scoring.run`), before any input is
    read: the stages and the thesaurus found (None without a synonym stage), to learn keys with a matcher of
    its own (:meth:`matcher`), the same keys this process's would compute."""

    def __init__(self, stages: tuple[str, ...], thesaurus: Source | None):
        self.stages, self.thesaurus = stages, thesaurus
        self._matcher: Matcher | None = None

    def matcher(self) -> Matcher:
        """In the worker: its matcher, made on first use (the thesaurus loaded from the index it built); it
        keeps nothing across runs: this process keeps what it is handed."""
        if self._matcher is None:
            thesaurus = None if self.thesaurus is None else load_thesaurus(self.thesaurus)
            self._matcher = Matcher(thesaurus, persistent=False)
        return self._matcher


class Ahead(NamedTuple):
    """The reference data's types being learnt on the run's worker since the data was read
    (:func:`learn_ahead`): the pool, the types dealt into pieces, and each piece's future."""

    pool: WorkerPool
    pieces: list[list[str]]
    futures: list[Future[Any]]


def learner_ready(_: object = None) -> None:
    """In the run's worker: its :class:`Learner`'s matcher made, its thesaurus loaded (the thesaurus's index
    built into the cache, when it was not there), while this process reads the inputs."""
    payload = worker_payload()
    if not isinstance(payload, Learner):
        raise RuntimeError("not the run's worker process")
    payload.matcher()


def learn_ahead(pool: WorkerPool, types: Collection[str]) -> Ahead | None:
    """``types`` (the reference data's, once it is read) learnt on ``pool``, a pool of one :class:`Learner`,
    in as many pieces as two processes learn them in (:func:`score_turns` takes them back, or stops them);
    None when its worker is gone already (the types are then learnt as without it)."""
    pieces = _dealt(sorted(types), PIECES_PER_JOB)
    try:
        pool.check()
        return Ahead(pool, pieces, pool.submit_all(_keys_of, pieces))
    except WorkerDied:
        return None


def _compute_keys(matcher: Matcher, stages: tuple[str, ...], types: list[str]) -> None:
    """The keys of ``types`` at each of ``stages``, computed into ``matcher``."""
    for keys in matcher.key_functions(stages):
        if keys is not None:
            for token in types:
                keys(token)


def _work() -> Work:
    work = worker_payload()
    if not isinstance(work, Work):
        raise RuntimeError("not a scoring worker process")
    return work


def _fresh_keys(work: Work | None) -> None:
    """On a worker's start: only keys computed from now on are handed back."""
    if work is not None:
        work.metric.matcher.take_new()


def _keys_of(types: list[str]) -> tuple[Any, ...]:
    """In a worker (a scoring one, or the run's :class:`Learner`): the keys of ``types`` at every stage of
    the metric, computed and handed back."""
    payload = worker_payload()
    if isinstance(payload, Learner):
        matcher, stages = payload.matcher(), payload.stages
    else:
        metric = _work().metric
        matcher, stages = metric.matcher, metric.params.stages
    _compute_keys(matcher, stages, types)
    return matcher.take_new()


def _score_on_worker(span: tuple[int, int]) -> tuple[list[tuple[int, tuple[Any, ...]]], tuple[Any, ...]]:
    """In a worker: a piece's scores, each as a plain tuple (handed back several times faster than the named
    tuple, which this process makes again), and the keys computed meanwhile."""
    work = _work()
    return [(best, tuple(score)) for best, score in work.score_span(span)], work.metric.matcher.take_new()
