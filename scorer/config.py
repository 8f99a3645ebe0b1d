"""Scorer configuration: the packaged defaults overridden by a TOML file (SPEC section 7)."""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any, Mapping

from .errors import ConfigError
from .hidden_metric import METHODS
from .contract import DIALOGUE_TYPES
from .meteor import MeteorParams
from .stages import STAGE_NAMES as STAGES


@dataclass(frozen=True)
class Limits:
    max_file_mib: int = 256
    max_answer_chars: int = 20000
    max_json_depth: int = 64

    @property
    def max_file_bytes(self) -> int:
        return self.max_file_mib * 1024 * 1024


@dataclass(frozen=True)
class Config:
    weights: Mapping[str, float]
    meteor: MeteorParams
    hm_method: str
    hm_params: Mapping[str, float]
    limits: Limits = field(default_factory=Limits)


def default_toml() -> dict[str, Any]:
    return tomllib.loads(files("scorer").joinpath("default_config.toml").read_text("utf-8"))


def load_config(path: str | Path | None = None, overrides: Mapping[str, Any] | None = None) -> Config:
    """Defaults, then ``path`` (a TOML file), then ``overrides`` (same shape as the TOML)."""
    merged = default_toml()
    layers = []
    if path is not None:
        try:
            layers.append(tomllib.loads(Path(path).read_text("utf-8")))
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    if overrides:
        layers.append(overrides)
    for layer in layers:
        for section, values in layer.items():
            if section not in merged:
                raise ConfigError(f"unknown config section [{section}] (known: {', '.join(merged)})")
            if not isinstance(values, dict):
                raise ConfigError(f"config key {section!r} must be a [section] table")
            known = _known_keys(section, merged[section])
            for key, value in values.items():
                if key not in known:
                    raise ConfigError(f"unknown config key {section}.{key} (known: {', '.join(sorted(known))})")
                merged[section][key] = value
    return _build(merged)


def _known_keys(section: str, defaults: dict[str, Any]) -> set[str]:
    if section == "hidden_metric":
        return {"method"} | {p for m in METHODS.values() for p in m.defaults}
    return set(defaults)


def _number(section: str, key: str, value: Any, low: float | None = None, high: float | None = None) -> float:
    name = f"{section}.{key}"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"config key {name} must be a finite number, got {value!r}")
    if low is not None and value < low:
        raise ConfigError(f"config key {name} must be at least {low}, got {value!r}")
    if high is not None and value > high:
        raise ConfigError(f"config key {name} must be at most {high}, got {value!r}")
    return float(value)


def _positive_int(section: str, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"config key {section}.{key} must be a whole number >= 1, got {value!r}")
    return value


def _build(raw: dict[str, Any]) -> Config:
    weights = {t: _number("weights", t, raw["weights"][t], low=0) for t in DIALOGUE_TYPES}
    m = raw["meteor"]
    stages = m["stages"]
    if not isinstance(stages, list) or not stages or not all(isinstance(s, str) for s in stages):
        raise ConfigError(f"config key meteor.stages must be a non-empty list of stage names, got {stages!r}")
    for stage in stages:
        if stage not in STAGES:
            raise ConfigError(f"config key meteor.stages: unknown stage {stage!r} (known: {', '.join(STAGES)})")
    if len(set(stages)) != len(stages):
        raise ConfigError(f"config key meteor.stages lists a stage twice: {stages!r}")
    meteor = MeteorParams(
        alpha=_number("meteor", "alpha", m["alpha"], 0, 1),
        beta=_number("meteor", "beta", m["beta"], 0),
        gamma=_number("meteor", "gamma", m["gamma"], 0, 1),
        stages=tuple(stages),
    )
    h = raw["hidden_metric"]
    method = h["method"]
    if method not in METHODS:
        raise ConfigError(f"config key hidden_metric.method: unknown method {method!r} "
                          f"(known: {', '.join(sorted(METHODS))})")
    spec = METHODS[method]
    params = {k: _number("hidden_metric", k, h.get(k, v)) for k, v in spec.defaults.items()}
    problem = spec.check(params)
    if problem:
        raise ConfigError(f"config key {problem}")
    lim = raw["limits"]
    limits = Limits(**{k: _positive_int("limits", k, lim[k]) for k in ("max_file_mib", "max_answer_chars", "max_json_depth")})
    return Config(weights, meteor, method, params, limits)
