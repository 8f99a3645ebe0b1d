"""What ``run`` reads from the configuration (contract sections 7 and 10): ``[audit]`` probe_turns and
probe_min_words, ``[competition] network`` and ``[hidden_metric] salt`` (:func:`read_configuration`, with
``tomllib`` where this Python has it).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

from .faults import UsageFault
from .names import (
    CONFIG,
    MIN_SALT_CHARS,
    NETWORK_CHOICES,
    NETWORK_SETTINGS,
    PROBE_BOUNDS,
    PROBE_MIN_WORDS,
    PROBE_TURNS,
    excerpt,
    reason,
)


@dataclass(frozen=True)
class RunConfig:
    """What ``run`` reads from the configuration (contract sections 7 and 10): ``[audit]`` probe_turns and
    probe_min_words, ``[competition] network``, ``[hidden_metric] salt`` (which keys ``ppl_targets.json``),
    and ``source``, the phrase that says on stderr which configuration it is: None when no configuration
    was read (contract section 11: a step that reads none says none, never the built-in default)."""

    probe_turns: int = PROBE_TURNS
    probe_min_words: int = PROBE_MIN_WORDS
    network: str = NETWORK_SETTINGS[0]
    salt: str | None = field(default=None, repr=False)
    source: str | None = None


#: The most of a configuration file that is read.
MAX_CONFIG_BYTES = 1 << 20


def read_configuration(explicit: str | None, data: str) -> RunConfig:
    """The configuration of contract section 7's rule: ``--config FILE``, else ``config.toml`` in
    ``--data``, else the built-in default; read with ``tomllib`` (Python 3.11 or newer), the keys ``run``
    reads checked and the rest left to the scorer. A configuration found on a Python without ``tomllib`` is
    a UsageFault (exit 2) saying what to do instead."""
    if explicit is not None:
        path, source = explicit, f"config file {explicit}"
    else:
        path = os.path.join(data, CONFIG)
        source = f"{path} (next to the reference data)"
        if not os.path.lexists(path):
            return RunConfig()
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise UsageFault(
            f"{excerpt(path, 200)}: this Python ({sys.version.split()[0]}) cannot read a configuration (it "
            "has no tomllib, new in Python 3.11): pass the options instead (no --config, a --data without "
            f"{CONFIG}), or use python -m scorer run, which reads it"
        ) from None
    if not os.path.isfile(path):
        raise UsageFault(f"config file {excerpt(path, 200)} does not exist or is not a regular file")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise UsageFault(f"cannot read config file {excerpt(path, 200)}: {reason(exc)}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise UsageFault(f"config file {excerpt(path, 200)} is larger than {MAX_CONFIG_BYTES >> 20} MiB")
    try:
        table = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageFault(f"config file {excerpt(path, 200)} is not valid TOML ({reason(exc)})") from None
    audit, competition, hidden = (_section(table, name) for name in ("audit", "competition", "hidden_metric"))
    network = competition.get("network", NETWORK_SETTINGS[0])
    if network not in NETWORK_SETTINGS:
        raise UsageFault(f"config key competition.network must be {NETWORK_CHOICES}, got {excerpt(network)}")
    salt = hidden.get("salt")
    if salt is not None and not (isinstance(salt, str) and len(salt) >= MIN_SALT_CHARS):
        raise UsageFault(
            f"config key hidden_metric.salt must be a string of at least {MIN_SALT_CHARS} characters"
        )
    return RunConfig(
        _whole("audit.probe_turns", audit.get("probe_turns", PROBE_TURNS), *PROBE_BOUNDS["probe_turns"]),
        _whole(
            "audit.probe_min_words",
            audit.get("probe_min_words", PROBE_MIN_WORDS),
            *PROBE_BOUNDS["probe_min_words"],
        ),
        network,
        salt,
        source,
    )


def _section(table: dict[str, Any], name: str) -> dict[str, Any]:
    value = table.get(name, {})
    if not isinstance(value, dict):
        raise UsageFault(f"config key {name} must be a [section] table")
    return value


def _whole(key: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise UsageFault(
            f"config key {key} must be a whole number from {low} to {high}, got {excerpt(value)}"
        )
    return value
