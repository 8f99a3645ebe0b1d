"""The signature: one string pinning every setting that changes a number.

In the spirit of sacreBLEU: ``key:value`` fields joined by ``|``. The metric
states its own fields (:meth:`scorer.metric.meteor.MeteorRu.signature_fields`); the
hidden metric, the weights and the scorer's version follow. Two runs with the
same signature and the same inputs give the same scores. Private hidden-metric
settings appear as a digest only.
"""

from __future__ import annotations

import hashlib
import json

from scorer.inputs.config import Config
from scorer.inputs.contract import DIALOGUE_TYPES, SHORT_TYPES
from scorer.metric.meteor import MeteorRu
from scorer.version import __version__


def _num(value: float) -> str:
    return repr(float(value))


def hidden_metric_field(config: Config) -> str:
    """``inverse`` (or ``method(key=value,...)``) for the built-in default's settings; for private ones
    ``private-`` and 12 hex digits of the SHA-256 of their canonical JSON (contract section 7)."""
    if config.hidden_is_private:
        canonical = json.dumps(config.hidden_settings, sort_keys=True, separators=(",", ":"), allow_nan=False)
        return "private-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]
    hm = config.hm_method
    if config.hm_params:
        hm += "(" + ",".join(f"{k}={_num(v)}" for k, v in sorted(config.hm_params.items())) + ")"
    return hm


def signature(config: Config, metric: MeteorRu) -> str:
    fields = metric.signature_fields() + [
        ("hm", hidden_metric_field(config)),
        ("w", ",".join(f"{SHORT_TYPES[t]}={_num(config.weights[t])}" for t in DIALOGUE_TYPES)),
        ("version", __version__),
    ]
    return "|".join(f"{k}:{v}" for k, v in fields)
