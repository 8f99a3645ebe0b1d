"""The signature: one string pinning every setting that changes a number.

In the spirit of sacreBLEU: ``key:value`` fields joined by ``|``. Two runs with
the same signature and the same inputs give the same scores.
"""
from __future__ import annotations

from .alignment import NODE_BUDGET
from .config import DIALOGUE_TYPES, Config
from .morphology import morphology_id
from .text import TOKENISER_ID
from .version import __version__

_SHORT_TYPES = {"Text2Text": "T2T", "Image2Text": "I2T", "Audio2Text": "A2T", "Image-Audio2Text": "IA2T"}


def _num(value: float) -> str:
    return repr(float(value))


def signature(config: Config, thesaurus_id: str | None) -> str:
    """``thesaurus_id`` is None when the synonym stage is off."""
    m = config.meteor
    hm = config.hm_method
    if config.hm_params:
        hm += "(" + ",".join(f"{k}={_num(v)}" for k, v in sorted(config.hm_params.items())) + ")"
    fields = [
        ("metric", "meteor_ru"),
        ("tok", TOKENISER_ID),
        ("stages", "+".join(m.stages)),
        ("align", f"exact-bnb{NODE_BUDGET}"),
        ("alpha", _num(m.alpha)),
        ("beta", _num(m.beta)),
        ("gamma", _num(m.gamma)),
        ("refs", "max"),
        ("hm", hm),
        ("rwn", thesaurus_id or "none"),
        ("morph", morphology_id() if "lemma" in m.stages or "synonym" in m.stages else "none"),
        ("w", ",".join(f"{_SHORT_TYPES[t]}={_num(config.weights[t])}" for t in DIALOGUE_TYPES)),
        ("version", __version__),
    ]
    return "|".join(f"{k}:{v}" for k, v in fields)
