"""The competition's rules in one place (contract sections 1, 5 and 7), as sacreBLEU's metric objects own
their parameters and their signature.

    score of a turn or dialogue = (METEOR + hidden metric) / 2          (:func:`combined`)
    a dialogue's METEOR or hidden metric = mean over its turns          (:func:`mean`)
    S_j   = mean of S_i over the dialogues of type j                     (:func:`mean`)
    score = sum_j w_j S_j / sum_{j present} w_j                          (:func:`weighted`)

A :class:`Competition` holds the weights, the METEOR metric (:class:`~scorer.metric.meteor.MeteorRu`,
which owns its parameters) and a :class:`HiddenMetric` (made from its configuration's settings, which say
whether they are private); it states the run's signature. Aggregation, correlation, the bootstrap, the
leaderboard and the reports call these instead of restating a formula.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from scorer.errors import ConfigError
from scorer.inputs.config import Config, HiddenMetricSettings
from scorer.inputs.contract import DIALOGUE_TYPES, SHORT_TYPES
from scorer.metric.hidden_metric import hidden_metric_of
from scorer.metric.matcher import Matcher
from scorer.metric.meteor import MeteorRu
from scorer.version import __version__


def combined(meteor: float, hidden_metric: float) -> float:
    """The competition's one rule that joins the two halves: their mean, for a turn or a dialogue (S_i)."""
    return (meteor + hidden_metric) / 2


def mean(parts: Sequence[float], count: int | None = None) -> float:
    """The mean of ``count`` values whose exact sum is that of ``parts`` (by default ``parts`` are the values
    themselves): their sum exactly rounded (``math.fsum``) over their count. The result depends neither on
    the values' order nor on how their sum is split into parts, so the bootstrap's resamples, summed in
    parts (:func:`scorer.scoring.significance.exact_sums`), are the same figure aggregation computes."""
    return math.fsum(parts) / (len(parts) if count is None else count)


def _num(value: float) -> str:
    return repr(float(value))


@dataclass(frozen=True)
class HiddenMetric:
    """The hidden metric of a run (contract section 5): a function of the perplexity, by the settings of its
    configuration (:class:`~scorer.inputs.config.HiddenMetricSettings`: the method, its parameters, whether
    they are private, and the salt of their signature)."""

    settings: HiddenMetricSettings

    @classmethod
    def of(cls, config: Config) -> HiddenMetric:
        return cls(config.hidden_metric)

    @cached_property
    def function(self) -> Callable[[float], float]:
        return hidden_metric_of(self.settings.method, self.settings.params)

    def __call__(self, ppl: float) -> float:
        return self.function(ppl)

    def field(self) -> str:
        """The signature's ``hm`` field: ``inverse`` (or ``method(key=value,...)``) for the built-in
        default's settings (a salt has no effect on them); for private ones ``private-`` and the first 12 hex
        digits of the HMAC-SHA-256 of their canonical JSON (sorted keys, no spaces, floats as ``repr``),
        keyed with the salt's UTF-8 bytes, or ``private`` alone without a salt (contract section 7): no one
        without the salt can test a guess of the settings against it."""
        settings = self.settings
        if settings.is_private:
            if settings.salt is None:
                return "private"
            canonical = json.dumps(settings.settings, sort_keys=True, separators=(",", ":"), allow_nan=False)
            digest = hmac.new(settings.salt.encode("utf-8"), canonical.encode("utf-8"), hashlib.sha256)
            return "private-" + digest.hexdigest()[:12]
        if not settings.params:
            return settings.method
        params = ",".join(f"{k}={_num(v)}" for k, v in sorted(settings.params.items()))
        return f"{settings.method}({params})"


@dataclass(frozen=True)
class Competition:
    """The weights, the METEOR metric and the hidden metric of one run (from its :class:`Config`)."""

    weights: Mapping[str, float]
    metric: MeteorRu
    hidden: HiddenMetric

    @classmethod
    def of(cls, config: Config, matcher: Matcher) -> Competition:
        """The competition ``config`` sets, its METEOR metric matching with ``matcher`` (its thesaurus)."""
        return cls(config.weights, MeteorRu(config.meteor, matcher=matcher), HiddenMetric.of(config))

    def signature(self, reference: str | None = None) -> str:
        """One string pinning every setting that changes a number: the metric's own fields, the hidden
        metric, the weights, the reference data (``reference``, the ``ref`` field's value,
        :func:`reference_field`) and the scorer's version (private hidden-metric settings as a digest
        only)."""
        fields = self.metric.signature_fields() + [
            ("hm", self.hidden.field()),
            ("w", ",".join(f"{SHORT_TYPES[t]}={_num(self.weights[t])}" for t in DIALOGUE_TYPES)),
        ]
        if reference is not None:
            fields.append(("ref", reference))
        fields.append(("version", __version__))
        return "|".join(f"{k}:{v}" for k, v in fields)


def reference_field(digests: tuple[str, str], salted: bool, participant: bool) -> str:
    """The signature's ``ref`` field (contract section 6): the two digests of ``dialogues.jsonl`` and
    ``answers.jsonl`` joined by ``+``; in a participant's outputs (``codalab``'s) without a salt the second
    is the word ``private``, since a participant could test a guess of the answers against a plain digest."""
    public, private = digests
    return f"{public}+{private if salted or not participant else 'private'}"


def weighted(by_type: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """``sum_j w_j x_j / sum_{j present} w_j`` of a figure ``x_j`` of each type present (``by_type``): the
    integral of the types' S_j, or the top-level METEOR or hidden metric of their means. The weights are
    scaled by one power of two first (:func:`scaled_weights`), which changes no bit of the result and keeps
    tiny weights from underflowing; their sum must be positive."""
    scaled = scaled_weights({name: float(weights[name]) for name in by_type})
    total = math.fsum(scaled.values())
    if not total > 0:
        raise ConfigError(zero_weights(by_type))
    return math.fsum(scaled[name] * value for name, value in by_type.items()) / total


def zero_weights(present: Iterable[str]) -> str:
    """Why the weights of the dialogue types ``present`` (in the contract's order) cannot combine them: they
    sum to 0 (every one of them is 0)."""
    return (
        "the weights of the dialogue types present sum to 0; give one of "
        f"{', '.join(present)} a positive weight"
    )


def weights_problem(present: Iterable[str], weights: Mapping[str, float]) -> str | None:
    """:func:`zero_weights` when every type ``present`` has a weight of 0 (the scores could not be combined:
    ``score`` would stop), else None; ``check-data`` asks it before any score."""
    names = list(present)
    if names and not any(float(weights[name]) > 0 for name in names):
        return zero_weights(names)
    return None


def scaled_weights(weights: Mapping[str, float]) -> dict[str, float]:
    """``weights`` multiplied by one power of two that brings the largest near 1.

    Renormalising by ``sum_j w_j`` is unchanged by a common factor, and a power
    of two changes no bit of any product or sum, so the integral is the same to
    the last bit wherever nothing underflows; where the weights are tiny
    (``5e-324``), their products no longer underflow to 0.
    """
    largest = max(weights.values(), default=0.0)
    if not largest > 0:
        return dict(weights)
    shift = -math.frexp(largest)[1]
    return {name: math.ldexp(w, shift) for name, w in weights.items()}
