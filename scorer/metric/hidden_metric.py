"""Hidden metric: perplexity p >= 1 mapped to [0, 1], 1 best (contract section 5).

Methods are looked up by name in :data:`METHODS`; a new one plugs in with
:func:`register`, declaring its parameters and their defaults: the registry is the plugin
point, as the matching stages' registry is (docs/architecture.md names both).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

from scorer.defaults import default


@dataclass(frozen=True)
class HiddenMetricMethod:
    """One way of mapping a perplexity to the hidden metric: its name (``[hidden_metric] method``), its
    parameters with their defaults, the function of ``p`` and those parameters, and a check of the
    parameters (a message naming the key, or None)."""

    name: str
    defaults: Mapping[str, float]
    fn: Callable[..., float]
    check: Callable[[Mapping[str, float]], str | None] = lambda params: None


#: Every method by name: the built-in two, then any registered (:func:`register`). A mutable registry at
#: module level on purpose: registering a method before a run is how one is added.
METHODS: dict[str, HiddenMetricMethod] = {}


def register(method: HiddenMetricMethod) -> None:
    METHODS[method.name] = method


def _inverse(p: float) -> float:
    """Geometric-mean probability the model gave each token."""
    return 1.0 / p


def _log(p: float, p_max: float) -> float:
    return min(1.0, max(0.0, 1.0 - math.log(p) / math.log(p_max)))


def _check_log(params: Mapping[str, float]) -> str | None:
    return None if params["p_max"] > 1 else "hidden_metric.p_max must be greater than 1"


register(HiddenMetricMethod("inverse", {}, _inverse))
register(HiddenMetricMethod("log", {"p_max": float(default("hidden_metric", "p_max"))}, _log, _check_log))


def hidden_metric(p: float, method: str = default("hidden_metric", "method"), **params: float) -> float:
    """HM of perplexity ``p`` by the named method; missing parameters take their defaults."""
    return hidden_metric_of(method, params)(p)


def hidden_metric_of(
    method: str = default("hidden_metric", "method"), params: Mapping[str, float] | None = None
) -> Callable[[float], float]:
    """:func:`hidden_metric` with the method and its parameters resolved once: a function of ``p``."""
    spec = METHODS[method]
    chosen = params or {}
    return partial(spec.fn, **{**spec.defaults, **{k: v for k, v in chosen.items() if k in spec.defaults}})
