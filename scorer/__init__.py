"""Scorer of the multimodal dialogue leaderboard.

Library API (see docs/api.md)::

    from scorer import meteor_ru, score_submission, validate_submission
    meteor_ru("На картинке кот.", ["Кот.", "На картинке рыжий кот."], synonyms=False)
    result = score_submission("reference_data/public", "submissions_examples/realistic", synonyms=False)
    result.summary.integral, result.to_frame()   # repr(result): the integral, counts and signature

``synonyms=False`` scores without RuWordNet; drop it once RuWordNet is there (``ruwordnet download``, or
``RUWORDNET_PATH``) to score with the synonym stage, as the competition does.
"""

# ruff: noqa: E402 - the signals are held before the package's own (slow) imports
from scorer.stop import STOP as _STOP

# ``python -m scorer`` imports this package first, which takes a while: SIGINT and SIGTERM received meanwhile
# are held, and the command line then stops at once with 130 or 143 (contract section 3), instead of dying
# by the signal in the middle of an import
_STOP.hold_for_the_command_line()

from scorer.inputs.config import Config, config_for, load_config
from scorer.inputs.reference import ReferenceData
from scorer.metric.hidden_metric import hidden_metric
from scorer.metric.meteor import MeteorParams, MeteorRu, MeteorScore, meteor_ru
from scorer.metric.text import normalise, tokenise
from scorer.metric.thesaurus import Thesaurus, load_thesaurus
from scorer.outputs.report import write_correlation, write_failure, write_leaderboard, write_outputs
from scorer.scoring.correlation_result import Meta
from scorer.scoring.explain import ExplainedTurn
from scorer.scoring.leaderboard_result import Entry, Leaderboard, Standing
from scorer.scoring.result import ScoreResult

from .api import (
    RunOptions,
    correlate_submissions,
    load_reference,
    score_leaderboard,
    score_submission,
    score_validated,
    validate_submission,
)
from .errors import (
    ConfigError,
    Issue,
    ReferenceDataError,
    ScorerError,
    SubmissionInvalid,
    ThesaurusError,
    UsageError,
)
from .version import __version__

__all__ = [
    "Config",
    "ConfigError",
    "Entry",
    "ExplainedTurn",
    "Issue",
    "Leaderboard",
    "Meta",
    "MeteorParams",
    "MeteorRu",
    "MeteorScore",
    "ReferenceData",
    "ReferenceDataError",
    "RunOptions",
    "ScoreResult",
    "ScorerError",
    "Standing",
    "SubmissionInvalid",
    "Thesaurus",
    "ThesaurusError",
    "UsageError",
    "__version__",
    "config_for",
    "correlate_submissions",
    "hidden_metric",
    "load_config",
    "load_reference",
    "load_thesaurus",
    "meteor_ru",
    "normalise",
    "score_leaderboard",
    "score_submission",
    "score_validated",
    "tokenise",
    "validate_submission",
    "write_correlation",
    "write_failure",
    "write_leaderboard",
    "write_outputs",
]
