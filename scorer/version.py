"""The scorer's version; it appears in every signature."""

from scorer.metric.engine.accelerator import description

__version__ = "0.2.0"


def engine_description() -> str:
    """Which METEOR engine path is active (printed by ``scorer --version``)."""
    return description()
