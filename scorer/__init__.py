"""Scorer of the multimodal dialogue leaderboard.

Library API::

    from scorer import meteor_ru, score_submission, validate_submission
    meteor_ru("На картинке кот.", ["Кот.", "На картинке рыжий кот."])
    result = score_submission("reference_data/public", "submissions_examples/realistic")
    result.summary.integral
"""
from .api import ScoreResult, load_reference, score_submission, score_validated, validate_submission
from .config import Config, load_config
from .errors import (ConfigError, Issue, ReferenceDataError, ScorerError, SubmissionInvalid,
                     ThesaurusError, UsageError)
from .hidden_metric import hidden_metric
from .meteor import MeteorParams, MeteorScore, meteor_ru
from .text import normalise, tokenise
from .thesaurus import Thesaurus, load_thesaurus
from .version import __version__

__all__ = [
    "Config", "ConfigError", "Issue", "MeteorParams", "MeteorScore", "ReferenceDataError", "ScoreResult",
    "ScorerError", "SubmissionInvalid", "Thesaurus", "ThesaurusError", "UsageError", "__version__",
    "hidden_metric", "load_config", "load_reference", "load_thesaurus", "meteor_ru", "normalise",
    "score_submission", "score_validated", "tokenise", "validate_submission",
]
