"""The signature: one string pinning every setting that changes a number.

In the spirit of sacreBLEU: ``key:value`` fields joined by ``|``. The metric
states its own fields (:meth:`scorer.meteor.MeteorRu.signature_fields`); the
hidden metric, the weights and the scorer's version follow. Two runs with the
same signature and the same inputs give the same scores.
"""
from __future__ import annotations

from .config import Config
from .contract import DIALOGUE_TYPES, SHORT_TYPES
from .meteor import MeteorRu
from .version import __version__


def _num(value: float) -> str:
    return repr(float(value))


def signature(config: Config, metric: MeteorRu) -> str:
    hm = config.hm_method
    if config.hm_params:
        hm += "(" + ",".join(f"{k}={_num(v)}" for k, v in sorted(config.hm_params.items())) + ")"
    fields = metric.signature_fields() + [
        ("hm", hm),
        ("w", ",".join(f"{SHORT_TYPES[t]}={_num(config.weights[t])}" for t in DIALOGUE_TYPES)),
        ("version", __version__),
    ]
    return "|".join(f"{k}:{v}" for k, v in fields)
