"""Scorer configuration: the packaged defaults overridden by a TOML file (contract section 7)."""

from __future__ import annotations

import datetime
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from scorer.defaults import default, default_toml
from scorer.errors import ConfigError
from scorer.metric.hidden_metric import METHODS
from scorer.metric.meteor import MeteorParams
from scorer.metric.stages import REGISTRY
from scorer.runner.names import MIN_SALT_CHARS, NETWORK_CHOICES, NETWORK_SETTINGS, PROBE_BOUNDS

from .contract import CONFIG_IN_REFERENCE, DIALOGUE_TYPES


@dataclass(frozen=True)
class Limits:
    max_file_mib: int = default("limits", "max_file_mib")
    max_answer_chars: int = default("limits", "max_answer_chars")
    max_json_depth: int = default("limits", "max_json_depth")

    @property
    def max_file_bytes(self) -> int:
        return self.max_file_mib * 1024 * 1024


@dataclass(frozen=True)
class AuditSettings:
    """The perplexity audit's thresholds (``[audit]``, contract sections 7 and 9)."""

    max_share_at_one: float = default("audit", "max_share_at_one")
    min_distinct_share: float = default("audit", "min_distinct_share")
    check_tolerance: float = default("audit", "check_tolerance")
    min_share_within: float = default("audit", "min_share_within")
    same_share: float = default("audit", "same_share")
    outlier_mads: float = default("audit", "outlier_mads")
    confident_ppl: float = default("audit", "confident_ppl")
    confident_meteor: float = default("audit", "confident_meteor")
    max_share_overconfident: float = default("audit", "max_share_overconfident")
    #: How many turns ``run`` probes with their target's words shuffled, and the fewest words such a target
    #: has (contract section 10).
    probe_turns: int = default("audit", "probe_turns")
    probe_min_words: int = default("audit", "probe_min_words")

    @property
    def is_private(self) -> bool:
        """Whether they differ from the built-in default (then no output shows them)."""
        return self != AuditSettings()


@dataclass(frozen=True)
class ParticipantSettings:
    """What participants see (``[participants]``, contract sections 6 and 7)."""

    turn_details: bool = default("participants", "turn_details")


#: The ways a competition takes its submissions (``[competition] submissions``, contract section 10).
SUBMISSION_KINDS = ("files", "code")


@dataclass(frozen=True)
class CompetitionSettings:
    """How the competition takes its submissions (``[competition]``, contract sections 7 and 10): ``"files"``
    (``submission.jsonl`` and ``ppl_output.json``) or ``"code"`` (``codalab`` runs the team's ``get_ppl``
    itself). Public: it changes no score, so the signature does not carry it."""

    submissions: str = default("competition", "submissions")
    #: ``"refused"`` (a code phase never runs where a network interface other than loopback is up) or
    #: ``"allowed"`` (contract section 10, "the network").
    network: str = default("competition", "network")
    #: The decimals of every figure ``codalab`` posts in a code competition, and every bundle's columns'
    #: ``precision`` (contract section 10, "the figures").
    posted_decimals: int = default("competition", "posted_decimals")

    @property
    def is_code(self) -> bool:
        return self.submissions == "code"


#: The pages' languages (``[platform] language``, contract section 11).
LANGUAGES = ("en", "ru")
#: Codabench's leaderboard submission rules (its ``Leaderboard.SUBMISSION_RULES``).
SUBMISSION_RULES = (
    "Add",
    "Add_And_Delete",
    "Add_And_Delete_Multiple",
    "Force_Last",
    "Force_Latest_Multiple",
    "Force_Best",
)
#: The longest step Codabench's default queue runs (seconds): a longer ``execution_time_limit`` needs a queue.
DEFAULT_QUEUE_MAX_SECONDS = 600


@dataclass(frozen=True)
class PlatformSettings:
    """What ``bundle`` makes (``[platform]``, contract sections 7 and 11): public settings of the competition,
    read by ``bundle`` alone (never carried into the reference data)."""

    title: str = default("platform", "title")
    language: str = default("platform", "language")
    image: str = default("platform", "image")
    packages: tuple[str, ...] = default("platform", "packages")
    queue: str = default("platform", "queue")
    execution_time_limit: int = default("platform", "execution_time_limit")
    setup_timeout: int = default("platform", "setup_timeout")
    turn_timeout: int = default("platform", "turn_timeout")
    max_submissions_per_day: int = default("platform", "max_submissions_per_day")
    max_submissions: int = default("platform", "max_submissions")
    submission_rule: str = default("platform", "submission_rule")
    development_start: datetime.date = datetime.date.fromisoformat(default("platform", "development_start"))
    final_start: datetime.date | None = None
    final_share: float = default("platform", "final_share")
    seed: int = default("platform", "seed")

    @property
    def step_timeout(self) -> int:
        """The runner's ``--step-timeout`` in each step: the platform's limit less max(30 s, 10 %) (contract
        section 10, "the time")."""
        limit = self.execution_time_limit
        return limit - max(30, math.ceil(0.1 * limit))


#: Each ``[audit]`` number's bounds: shares and METEOR in [0, 1], the tolerance and the MADs at least 0, a
#: perplexity at least 1.
_AUDIT_BOUNDS = {
    "max_share_at_one": (0, 1),
    "min_distinct_share": (0, 1),
    "check_tolerance": (0, None),
    "min_share_within": (0, 1),
    "same_share": (0, 1),
    "outlier_mads": (0, None),
    "confident_ppl": (1, None),
    "confident_meteor": (0, 1),
    "max_share_overconfident": (0, 1),
}


@dataclass(frozen=True)
class HiddenMetricSettings:
    """``[hidden_metric]`` (contract sections 5 and 7): the method, that method's parameters, and the salt.

    The settings are private when they differ from the built-in default's: then no output shows them, and the
    signature carries an HMAC of them keyed with the salt (:class:`~scorer.scoring.competition.HiddenMetric`
    states it). The salt is never shown, so it is not in the repr, and it is not one of the settings."""

    method: str
    params: Mapping[str, float]
    salt: str | None = field(default=None, repr=False)

    @property
    def settings(self) -> dict[str, Any]:
        """The settings in force: the method and that method's parameters."""
        return {"method": self.method, **self.params}

    @property
    def is_private(self) -> bool:
        """Whether they differ from the built-in default's (then no output may show them)."""
        return self.settings != _default_hidden_settings()

    @property
    def unsalted(self) -> bool:
        """Whether they are private and have no salt: the signature then says ``hm:private`` alone, and the
        command line says :data:`UNSALTED_NOTE` once on stderr."""
        return self.is_private and self.salt is None


@dataclass(frozen=True)
class Config:
    weights: Mapping[str, float]
    meteor: MeteorParams
    hidden_metric: HiddenMetricSettings
    limits: Limits = field(default_factory=Limits)
    audit: AuditSettings = field(default_factory=AuditSettings)
    participants: ParticipantSettings = field(default_factory=ParticipantSettings)
    competition: CompetitionSettings = field(default_factory=CompetitionSettings)
    platform: PlatformSettings = field(default_factory=PlatformSettings)


#: The stderr line (after ``warning: ``) of a run whose private hidden-metric settings have no salt.
UNSALTED_NOTE = (
    "the private [hidden_metric] settings have no salt, so the signature says hm:private alone: add "
    f'salt = "..." to [hidden_metric] in the private config, a random string of at least {MIN_SALT_CHARS} '
    "characters kept secret"
)


#: The phrase :func:`config_for` gives for the built-in default configuration.
BUILT_IN_SOURCE = "the built-in default configuration"


#: The three sources of a run's configuration (contract section 7), as results carry them (``config_source``):
#: ``--config PATH``, ``config.toml in DIR`` or this.
BUILT_IN_DEFAULT = "built-in default"


def config_source(
    data_dir: str | os.PathLike[str] | None, config: str | os.PathLike[str] | None = None
) -> str:
    """Which configuration contract section 7's rule picks, in the words every result carries as
    ``config_source``: ``--config PATH`` when ``config`` (a file) is given; else ``config.toml in DIR`` when
    the reference directory ``data_dir`` holds one; else ``built-in default``."""
    if config is not None:
        return f"--config {os.fspath(config)}"
    if data_dir is not None and os.path.lexists(Path(data_dir) / CONFIG_IN_REFERENCE):
        return f"{CONFIG_IN_REFERENCE} in {os.fspath(data_dir)}"
    return BUILT_IN_DEFAULT


def source_of(config: Config) -> str:
    """The source of a :class:`Config` object given without one: the built-in default when it is that,
    else ``--config`` as given in memory."""
    return BUILT_IN_DEFAULT if config == load_config() else "--config <Config object>"


def config_for(reference_dir: str | Path | None, explicit: str | Path | None = None) -> tuple[Config, str]:
    """The configuration a run uses (contract section 7) and a phrase saying which one.

    ``explicit`` if given; else ``config.toml`` in the reference directory if
    there is one; else the built-in default.
    """
    if explicit is not None:
        return load_config(explicit), f"config file {explicit}"
    if reference_dir is not None:
        private = Path(reference_dir) / CONFIG_IN_REFERENCE
        if os.path.lexists(private):  # present: it must be read, or the run stops (never the default instead)
            return load_config(private), f"{private} (next to the reference data)"
    return load_config(), BUILT_IN_SOURCE


def config_tables(config: Config) -> dict[str, dict[str, Any]]:
    """The TOML tables that give ``config`` (:func:`load_config` of them gives it back): each key whose value
    differs from the built-in default's, its table's keys in the default's order; no table when none
    differs."""
    given, default = _tables(config), _tables(load_config())
    differing = {
        name: {key: value for key, value in table.items() if default[name].get(key, None) != value}
        for name, table in given.items()
    }
    return {name: table for name, table in differing.items() if table}


def _tables(config: Config) -> dict[str, dict[str, Any]]:
    """Every setting of ``config`` in its TOML table (contract section 7)."""
    meteor, hidden, platform = config.meteor, config.hidden_metric, config.platform
    salt = {} if hidden.salt is None else {"salt": hidden.salt}
    return {
        "weights": dict(config.weights),
        "meteor": {
            "alpha": meteor.alpha,
            "beta": meteor.beta,
            "gamma": meteor.gamma,
            "stages": [*meteor.stages],
        },
        "hidden_metric": {**hidden.settings, **salt},
        "limits": asdict(config.limits),
        "participants": asdict(config.participants),
        "competition": asdict(config.competition),
        "platform": {
            **asdict(platform),
            "packages": [*platform.packages],
            "final_start": "" if platform.final_start is None else platform.final_start,
        },
        "audit": asdict(config.audit),
    }


@lru_cache(maxsize=1)
def _default_hidden_settings() -> dict[str, Any]:
    return load_config().hidden_metric.settings


def load_config(path: str | Path | None = None, overrides: Mapping[str, Any] | None = None) -> Config:
    """Defaults, then ``path`` (a TOML file), then ``overrides`` (same shape as the TOML)."""
    merged = default_toml()
    layers: list[Mapping[str, Any]] = []
    if path is not None:
        layers.append(_read_toml(Path(path)))
    if overrides:
        layers.append(overrides)
    for layer in layers:
        for section, values in layer.items():
            if section not in merged:
                raise ConfigError(f"unknown config section [{_name(section)}] (known: {', '.join(merged)})")
            if not isinstance(values, dict):
                raise ConfigError(f"config key {_name(section)} must be a [section] table")
            known = _known_keys(section, merged[section])
            for key, value in values.items():
                if key not in known:
                    raise ConfigError(
                        f"unknown config key {section}.{_name(key)} (known: {', '.join(sorted(known))})"
                    )
                merged[section][key] = value
    return _build(merged)


MAX_CONFIG_BYTES = 1 << 20


def _read_toml(path: Path) -> dict[str, Any]:
    """A configuration file: a regular file of at most 1 MiB holding valid TOML."""
    try:
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist or is not a regular file")
        with open(path, "rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {path} is larger than 1 MiB")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {str(exc)[:200]}") from None


def _known_keys(section: str, defaults: dict[str, Any]) -> set[str]:
    if section == "hidden_metric":
        return {"method", "salt"} | {p for m in METHODS.values() for p in m.defaults}
    return set(defaults)


#: Upper bounds for values the contract leaves open, so no sum or product can overflow.
MAX_WEIGHT = 1e6
MAX_NUMBER = 1e12
MAX_LIMITS = {"max_file_mib": 1 << 20, "max_answer_chars": 100_000_000, "max_json_depth": 1000}


def _name(key: str) -> str:
    """A key as messages show it: at most 60 characters."""
    return key if len(key) <= 60 else key[:40] + f"… ({len(key):,} characters)"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:40] + f"… ({len(text)} characters)"


def _number(section: str, key: str, value: Any, low: float | None = None, high: float | None = None) -> float:
    name = f"{section}.{key}"
    bad = isinstance(value, bool) or not isinstance(value, (int, float))
    if not bad:
        try:
            bad = not math.isfinite(float(value))
        except OverflowError:
            bad = True
    if bad:
        raise ConfigError(f"config key {name} must be a finite number, got {_shown(value)}")
    high = MAX_NUMBER if high is None else high
    value = float(value)
    if low is not None and value < low:
        raise ConfigError(f"config key {name} must be at least {low}, got {_shown(value)}")
    if value > high:
        raise ConfigError(f"config key {name} must be at most {high:g}, got {_shown(value)}")
    return float(value)


def _positive_int(section: str, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"config key {section}.{key} must be a whole number >= 1, got {_shown(value)}")
    if value > MAX_LIMITS[key]:
        raise ConfigError(
            f"config key {section}.{key} must be at most {MAX_LIMITS[key]:,}, got {_shown(value)}"
        )
    return value


def _whole(section: str, key: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"config key {section}.{key} must be a whole number >= {low}, got {_shown(value)}")
    if value > high:
        raise ConfigError(f"config key {section}.{key} must be at most {high:,}, got {_shown(value)}")
    return value


def _build(raw: dict[str, Any]) -> Config:
    weights = {t: _number("weights", t, raw["weights"][t], low=0, high=MAX_WEIGHT) for t in DIALOGUE_TYPES}
    m = raw["meteor"]
    stages = m["stages"]
    if not isinstance(stages, list) or not stages or not all(isinstance(s, str) for s in stages):
        raise ConfigError(
            f"config key meteor.stages must be a non-empty list of stage names, got {_shown(stages)}"
        )
    for stage in stages:
        if stage not in REGISTRY:
            raise ConfigError(
                f"config key meteor.stages: unknown stage {_shown(stage)} (known: {', '.join(REGISTRY)})"
            )
    if len(set(stages)) != len(stages):
        raise ConfigError(f"config key meteor.stages lists a stage twice: {_shown(stages)}")
    meteor = MeteorParams(
        alpha=_number("meteor", "alpha", m["alpha"], 0, 1),
        beta=_number("meteor", "beta", m["beta"], 0),
        gamma=_number("meteor", "gamma", m["gamma"], 0, 1),
        stages=tuple(stages),
    )
    h = raw["hidden_metric"]
    method = h["method"]
    if not isinstance(method, str) or method not in METHODS:
        raise ConfigError(
            f"config key hidden_metric.method: unknown method {_shown(method)} "
            f"(known: {', '.join(sorted(METHODS))})"
        )
    spec = METHODS[method]
    params = {k: _number("hidden_metric", k, h.get(k, v)) for k, v in spec.defaults.items()}
    problem = spec.check(params)
    if problem:
        raise ConfigError(f"config key {problem}")
    salt = _salt(h.get("salt"))
    lim = raw["limits"]
    limits = Limits(
        **{
            k: _positive_int("limits", k, lim[k])
            for k in ("max_file_mib", "max_answer_chars", "max_json_depth")
        }
    )
    audit_values: dict[str, Any] = {
        k: _number("audit", k, raw["audit"][k], *bounds) for k, bounds in _AUDIT_BOUNDS.items()
    }
    audit_values.update(  # probe_turns and probe_min_words: the runner's bounds, which its reader checks too
        (k, _whole("audit", k, raw["audit"][k], *bounds)) for k, bounds in PROBE_BOUNDS.items()
    )
    audit = AuditSettings(**audit_values)
    details = raw["participants"]["turn_details"]
    if not isinstance(details, bool):
        raise ConfigError(
            f"config key participants.turn_details must be true or false, got {_shown(details)}"
        )
    submissions = raw["competition"]["submissions"]
    if not isinstance(submissions, str) or submissions not in SUBMISSION_KINDS:
        raise ConfigError(
            f'config key competition.submissions must be "files" or "code", got {_shown(submissions)}'
        )
    competition = _competition(raw["competition"], submissions)
    if details and competition.is_code:
        raise ConfigError(
            "config keys participants.turn_details and competition.submissions: a code competition posts "
            'no per-turn figure, so turn_details = true cannot go with submissions = "code"'
        )
    return Config(
        weights,
        meteor,
        HiddenMetricSettings(method, params, salt),
        limits,
        audit,
        ParticipantSettings(details),
        competition,
        _platform(raw["platform"]),
    )


def _competition(raw: Mapping[str, Any], submissions: str) -> CompetitionSettings:
    network = raw["network"]
    if not isinstance(network, str) or network not in NETWORK_SETTINGS:
        raise ConfigError(f"config key competition.network must be {NETWORK_CHOICES}, got {_shown(network)}")
    decimals = _whole("competition", "posted_decimals", raw["posted_decimals"], 0, 10)
    return CompetitionSettings(submissions, network, decimals)


def _text(key: str, value: Any, *, empty: bool = True, longest: int = 1000) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()) or len(value) > longest:
        what = "a non-empty string" if not empty else "a string"
        raise ConfigError(
            f"config key platform.{key} must be {what} of at most {longest:,} characters, got {_shown(value)}"
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ConfigError(f"config key platform.{key} must hold no control characters, got {_shown(value)}")
    return value


def _date(key: str, value: Any) -> datetime.date:
    """A date of ``[platform]``: ``YYYY-MM-DD`` as a string or a TOML local date."""
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value
    if isinstance(value, str) and len(value) == 10:
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            pass
    raise ConfigError(f"config key platform.{key} must be a date YYYY-MM-DD, got {_shown(value)}")


#: The most of each ``[platform]`` whole number (a week for a time limit).
_PLATFORM_WHOLE = {
    "execution_time_limit": 7 * 24 * 3600,
    "setup_timeout": 7 * 24 * 3600,
    "turn_timeout": 7 * 24 * 3600,
    "max_submissions_per_day": 100_000,
    "max_submissions": 1_000_000,
}


def _platform(raw: Mapping[str, Any]) -> PlatformSettings:
    """``[platform]`` checked key by key, then the keys that must fit together (contract section 11)."""
    language = raw["language"]
    if not isinstance(language, str) or language not in LANGUAGES:
        raise ConfigError(f'config key platform.language must be "en" or "ru", got {_shown(language)}')
    packages = raw["packages"]
    if not isinstance(packages, list) or len(packages) > 200:
        raise ConfigError(f"config key platform.packages must be a list of strings, got {_shown(packages)}")
    for package in packages:
        _text("packages", package, empty=False, longest=200)
    rule = raw["submission_rule"]
    if not isinstance(rule, str) or rule not in SUBMISSION_RULES:
        raise ConfigError(
            f"config key platform.submission_rule must be one of {', '.join(SUBMISSION_RULES)}, "
            f"got {_shown(rule)}"
        )
    whole = {k: _whole("platform", k, raw[k], 1, high) for k, high in _PLATFORM_WHOLE.items()}
    queue = _text("queue", raw["queue"], longest=200)
    if not queue and whole["execution_time_limit"] > DEFAULT_QUEUE_MAX_SECONDS:
        raise ConfigError(
            f"config keys platform.execution_time_limit and platform.queue: Codabench's default queue runs "
            f"a step for at most {DEFAULT_QUEUE_MAX_SECONDS} s, so a limit of "
            f"{whole['execution_time_limit']} s needs a queue of your own (its vhost in platform.queue)"
        )
    development = _date("development_start", raw["development_start"])
    final = None if raw["final_start"] == "" else _date("final_start", raw["final_start"])
    if final is not None and final < development + datetime.timedelta(days=1):
        raise ConfigError(
            "config keys platform.final_start and platform.development_start: the final starts at least "
            f"one day after the development phase, got {final.isoformat()} and "
            f"{development.isoformat()}"
        )
    share = raw["final_share"]
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
        raise ConfigError(
            f"config key platform.final_share must be a number between 0 and 1, got {_shown(share)}"
        )
    seed = raw["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ConfigError(f"config key platform.seed must be a whole number >= 0, got {_shown(seed)}")
    settings = PlatformSettings(
        title=_text("title", raw["title"], empty=False, longest=200),
        language=language,
        image=_text("image", raw["image"], longest=300),
        packages=tuple(packages),
        queue=queue,
        submission_rule=rule,
        development_start=development,
        final_start=final,
        final_share=float(share),
        seed=seed,
        **whole,
    )
    if settings.step_timeout < 1:
        raise ConfigError(
            f"config key platform.execution_time_limit: {settings.execution_time_limit} s leaves no time for "
            "a step once max(30 s, 10 %) is kept back for the platform"
        )
    if settings.setup_timeout + settings.turn_timeout > settings.step_timeout:
        raise ConfigError(
            "config keys platform.setup_timeout, platform.turn_timeout and platform.execution_time_limit: "
            f"setup ({settings.setup_timeout} s) and one call ({settings.turn_timeout} s) must fit in the "
            f"runner's step timeout ({settings.step_timeout} s = execution_time_limit less max(30 s, 10 %))"
        )
    return settings


def _salt(value: Any) -> str | None:
    """``[hidden_metric] salt``: None when not given, else a string of at least :data:`MIN_SALT_CHARS`
    characters. A message about it never quotes it."""
    if value is None or (isinstance(value, str) and len(value) >= MIN_SALT_CHARS):
        return value
    got = f"{len(value)} characters" if isinstance(value, str) else f"a value of type {type(value).__name__}"
    raise ConfigError(
        f"config key hidden_metric.salt must be a string of at least {MIN_SALT_CHARS} characters, got {got}"
    )
