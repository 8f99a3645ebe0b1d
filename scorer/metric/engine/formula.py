"""METEOR's formula (contract section 4), from a pair's links and lengths: its definition.

With ``m`` links, ``t`` candidate and ``r`` reference tokens::

    P = m / t,  R = m / r,  Fmean = P R / (alpha P + (1 - alpha) R)
    penalty = gamma (chunks / m) ** beta,  score = Fmean (1 - penalty)

``m = 0`` gives 0. Without the penalty a turn's best variant is the one of highest F-mean (the first on
ties), read off rule 1's link counts (:func:`best_by_counts`; :func:`best_scores` for every turn of a
piece). :mod:`scorer.metric.meteor` makes its scores from these functions; ``setup.py`` compiles this same
file typed by ``formula.pxd`` (Cython's pure-Python mode), with floating-point contraction off, so that
both engines compute every figure by the same operations in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

Figures = tuple[float, float, float, float, float, int, "int | None", int, int]


def fmean(precision: float, recall: float, alpha: float) -> float:
    """The weighted harmonic mean of the module docstring (``precision`` and ``recall`` above 0)."""
    return precision * recall / (alpha * precision + (1 - alpha) * recall)


def links_fmean(m: int, t: int, r: int, alpha: float) -> float:
    """The F-mean of ``m`` links between ``t`` candidate and ``r`` reference tokens (0 without a link): the
    score without the penalty, and its bound with it."""
    return fmean(m / t, m / r, alpha) if m else 0.0


def figures(
    m: int, chunks: int | None, t: int, r: int, alpha: float, gamma: float, beta: float, penalised: bool
) -> Figures:
    """(score, precision, recall, F-mean, penalty, m, chunks, t, r) of ``m`` links in ``chunks`` chunks
    (None: no alignment built) between ``t`` and ``r`` tokens; ``penalised``: the penalty is on (it then
    needs the chunks)."""
    if m == 0:
        return 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0 if chunks is not None else None, t, r
    precision, recall = m / t, m / r
    f = fmean(precision, recall, alpha)
    if not penalised:
        penalty = 0.0
    elif chunks is None:
        raise ValueError("the fragmentation penalty needs the chunk count")
    else:
        penalty = gamma * (chunks / m) ** beta
    return f * (1 - penalty), precision, recall, f, penalty, m, chunks, t, r


def best_by_counts(
    t: int, variants: Sequence[Sequence[str]], counts: Sequence[Sequence[int] | None], alpha: float
) -> tuple[int, int]:
    """Without the penalty, the best variant of a candidate of ``t`` tokens and its links: the first of
    highest F-mean, from each variant's rule-1 ``counts`` by stage (None: the variant has no token).
    Raises ``ValueError`` when no variant has a token."""
    best_index, best_m, best_fmean = -1, 0, -1.0
    for index in range(len(counts)):
        stage_links = counts[index]
        if stage_links is None:
            continue
        m = sum(stage_links)
        f = links_fmean(m, t, len(variants[index]), alpha)
        if f > best_fmean:
            best_index, best_m, best_fmean = index, m, f
    if best_index < 0:
        raise ValueError("every reference variant is empty of tokens")
    return best_index, best_m


def best_scores(
    cands: Sequence[Sequence[str]],
    variants: Sequence[Sequence[Sequence[str]]],
    counted: Sequence[Sequence[Sequence[int] | None]],
    alpha: float,
    record: Callable[[tuple[Any, ...]], Any],
) -> list[tuple[int, Any]]:
    """Without the penalty, for each turn (a non-empty candidate, its variants, their rule-1 counts): the
    index of its best variant (:func:`best_by_counts`) and its score, ``record`` of the :func:`figures`
    followed by an empty alignment and an exact search (the score's record is made from that tuple)."""
    found = []
    for k in range(len(cands)):
        t = len(cands[k])
        best, m = best_by_counts(t, variants[k], counted[k], alpha)
        fields = figures(m, None, t, len(variants[k][best]), alpha, 0.0, 0.0, False)
        found.append((best, record((*fields, (), True))))
    return found
