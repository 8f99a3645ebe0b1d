"""The built-in defaults: the package's own ``default_config.toml`` (contract section 7), read once.

It is the one source of every default setting: the configuration's dataclasses
(:class:`~scorer.metric.meteor.MeteorParams`, ``Limits``, ``AuditSettings``,
``ParticipantSettings``, ``CompetitionSettings``), the hidden metric's parameters and
:func:`scorer.meteor_ru` take their defaults from here, so a changed default reaches every entry point at
once.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Any

#: The package's default configuration (beside the package's modules, as installed).
DEFAULT_CONFIG = Path(__file__).resolve().parent / "default_config.toml"


@cache
def _parsed() -> dict[str, Any]:
    return tomllib.loads(DEFAULT_CONFIG.read_text("utf-8"))


def default_toml() -> dict[str, Any]:
    """The defaults as the TOML file holds them, by section (a fresh copy each call: safe to change)."""
    return {section: dict(values) for section, values in _parsed().items()}


def default(section: str, key: str) -> Any:
    """One default value: ``default("meteor", "alpha")`` is 0.9. A list comes back as a tuple."""
    value = _parsed()[section][key]
    return tuple(value) if isinstance(value, list) else value
