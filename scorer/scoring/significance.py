"""Bootstrap confidence intervals and paired significance over dialogues.

Resampling unit: the dialogue (its ``S_i``), stratified by type: a resample
draws ``N_j`` dialogues with replacement from each type's ``N_j`` and
recomputes ``sum_j w_j mean(S_i) / sum_j w_j``. The indices come from
``numpy.random.default_rng(seed)``, drawn per type in the contract's type
order as ``rng.integers(0, N_j, size=(resamples, N_j))``; every submission is
resampled with the same indices, so comparisons are paired.

As sacreBLEU's bootstrap sums each resample's statistics with numpy and calls
its metric's own function on the sums, every resample's integral is the
competition's own functions (:func:`~scorer.scoring.competition.mean` of each
type, then :func:`~scorer.scoring.competition.weighted`, what aggregation
calls) applied to the exact sum of the ``S_i`` it draws, which numpy adds up
in integer parts (:func:`exact_sums`). The resample that draws every dialogue
once gives the integral of ``scores.json`` to the last bit.

* Interval: the order statistics ``resamples // 40`` and
  ``resamples - resamples // 40 - 1`` of the sorted resampled integrals (the
  2.5% and 97.5% points; sacreBLEU's rule), written once in
  :func:`interval_positions`, which correlation's intervals use too.
* p-value of a submission against a baseline (sacreBLEU's paired bootstrap,
  after Koehn 2004 and Riezler & Maxwell 2005): with ``d`` the resampled
  ``|score - baseline|`` and ``D`` the observed one,
  ``p = (#{d - mean(d) > D} + 1) / (resamples + 1)``; equal integrals
  (``D = 0``, nothing to explain) give ``p = 1``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

from .competition import mean, scaled_weights, weighted

#: The bootstrap's defaults (contract section 6): resamples and seed.
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 12345


@dataclass(frozen=True)
class Strata:
    """Resampling indices shared by every submission: type -> (resamples, N_type) array."""

    indices: dict[str, np.ndarray]
    weights: dict[str, float]
    resamples: int
    seed: int


def make_strata(
    dialogs_per_type: Mapping[str, int],
    weights: Mapping[str, float],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Strata:
    """Indices for ``resamples`` stratified resamples; ``dialogs_per_type`` in the contract's type order."""
    import numpy as np  # numpy loads only when a bootstrap runs

    rng = np.random.default_rng(seed)
    indices = {
        t: rng.integers(0, n, size=(resamples, n), dtype=np.int64)
        for t, n in dialogs_per_type.items()
        if n > 0
    }
    return Strata(indices, scaled_weights({t: float(weights[t]) for t in indices}), resamples, seed)


def resampled_integrals(strata: Strata, dialog_scores: Mapping[str, Sequence[float]]) -> np.ndarray:
    """The integral of every resample; ``dialog_scores[type]`` are the ``S_i`` in dialogue order."""
    import numpy as np  # numpy loads only when a bootstrap runs

    counts = {t: idx.shape[1] for t, idx in strata.indices.items()}
    sums = {t: exact_sums(dialog_scores[t], idx).tolist() for t, idx in strata.indices.items()}
    return np.array(
        [
            weighted({t: mean(parts[r], counts[t]) for t, parts in sums.items()}, strata.weights)
            for r in range(strata.resamples)
        ],
        dtype=np.float64,
    )


#: The bits of one part of :func:`exact_sums`: a resample's sum of one part over up to ``2**29`` dialogues
#: is a whole number below ``2**53``, which a float holds exactly.
PART_BITS = 24


def exact_sums(values: Sequence[float], indices: np.ndarray) -> np.ndarray:
    """For every resample (a row of ``indices``), a few floats whose exact sum is the exact sum of the
    ``values`` it draws (finite, at most ``2**29`` a row), so that ``math.fsum`` of the row is ``math.fsum``
    of those values. Every value is cut, on one grid of :data:`PART_BITS` bits, into whole numbers below
    ``2**24`` times a power of two (exactly: each part keeps some of its bits); each part's whole numbers
    are summed over the resample (exactly, below ``2**53``) and scaled back. Shape: (resamples, parts)."""
    import numpy as np  # numpy loads only when a bootstrap runs

    v = np.asarray(values, dtype=np.float64)
    exponents = np.frexp(v[v != 0])[1]  # |value| < 2**exponent, a whole multiple of 2**(exponent - 53)
    if not len(exponents):
        return np.zeros((len(indices), 1))
    low = max(int(exponents.min()) - 53, -1074)  # every value is a whole multiple of 2**low
    high = int(exponents.max())
    parts = max(1, -(-(high - low) // PART_BITS))
    sums = np.empty((len(indices), parts))
    for k in range(parts):
        bottom, top = low + PART_BITS * k, low + PART_BITS * (k + 1)
        below_top = v if top >= high else np.fmod(v, np.ldexp(1.0, top))  # the bits under 2**top
        whole = np.trunc(np.ldexp(below_top, -bottom))  # those from 2**bottom up, as a whole number
        sums[:, k] = np.ldexp(whole[indices].sum(axis=1), bottom)
    return sums


def interval_positions(count: int) -> tuple[int, int]:
    """The 95% percentile interval's ends among ``count`` sorted bootstrap values, as 0-based positions: the
    order statistics ``count // 40`` and ``count - count // 40 - 1`` (the 2.5% and 97.5% points as sacreBLEU
    cuts them: ``count // 40`` values lie below the low end, as many above the high end). The one rule of
    both intervals, the leaderboard's (:func:`interval`) and correlation's."""
    cut = count // 40
    return cut, count - cut - 1


def interval(samples: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of bootstrap ``samples`` (:func:`interval_positions`)."""
    import numpy as np  # numpy loads only when a bootstrap runs

    ordered = np.sort(samples)
    low, high = interval_positions(len(ordered))
    return float(ordered[low]), float(ordered[high])


def paired_p_value(
    samples: np.ndarray, baseline_samples: np.ndarray, observed: float, baseline_observed: float
) -> float:
    """p-value that ``samples``' system differs from the baseline only by chance."""
    import numpy as np  # numpy loads only when a bootstrap runs

    if observed == baseline_observed:
        return 1.0
    diffs = np.abs(samples - baseline_samples)
    count = int(np.sum(diffs - diffs.mean() > abs(observed - baseline_observed)))
    return (count + 1) / (len(diffs) + 1)
