"""Bootstrap confidence intervals and paired significance over dialogues.

Resampling unit: the dialogue (its ``S_i``), stratified by type: a resample
draws ``N_j`` dialogues with replacement from each type's ``N_j`` and
recomputes ``sum_j w_j mean(S_i) / sum_j w_j``. The indices come from
``numpy.random.default_rng(seed)``, drawn per type in the contract's type
order as ``rng.integers(0, N_j, size=(resamples, N_j))``; every submission is
resampled with the same indices, so comparisons are paired.

* Interval: the order statistics ``resamples // 40`` and
  ``resamples - resamples // 40 - 1`` of the sorted resampled integrals (the
  2.5% and 97.5% points; sacreBLEU's rule).
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

from .competition import scaled_weights

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

    total = np.zeros(strata.resamples)
    weight = 0.0
    for t, idx in strata.indices.items():
        scores = np.asarray(dialog_scores[t], dtype=np.float64)
        total += strata.weights[t] * scores[idx].mean(axis=1)
        weight += strata.weights[t]
    return total / weight


def interval(samples: np.ndarray) -> tuple[float, float]:
    """The 95% percentile interval of bootstrap ``samples``."""
    import numpy as np  # numpy loads only when a bootstrap runs

    ordered = np.sort(samples)
    cut = len(ordered) // 40
    return float(ordered[cut]), float(ordered[len(ordered) - cut - 1])


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
