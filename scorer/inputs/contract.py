"""The contract's names (contract sections 1-2): dialogue types, their short codes, file names.

The data's and a submission's file names (``DIALOGUES``, ``ANSWERS``,
``SUBMISSION``, ``PPL``, and ``PROBES``: the probe perplexities ``run`` writes
beside ``ppl_output.json``, contract sections 9-10) are the runner's
(``scorer/runner/names.py``: the runner stands alone on the ground floor and must know
them itself), so both read and write the same files. It imports nothing else
of the scorer: readers, validation and reports name these without pulling in
the metric.
"""

from __future__ import annotations

from scorer.runner.names import ANSWERS, DIALOGUES, PPL, SUBMISSION
from scorer.runner.names import PPL_PROBES as PROBES

__all__ = [
    "ANSWERS",
    "CONFIG_IN_REFERENCE",
    "DETAILED_RESULTS",
    "DETAILS_CSV",
    "DIALOGUES",
    "DIALOGUE_TYPES",
    "PLATFORM_METADATA",
    "PPL",
    "PROBES",
    "REPORT_HTML",
    "SCORES_JSON",
    "SCORES_TXT",
    "SHORT_TYPES",
    "SUBMISSION",
]

#: Dialogue types in the contract's order, which is also the order of every table and resample.
DIALOGUE_TYPES = ("Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text")
SHORT_TYPES = {"Text2Text": "T2T", "Image2Text": "I2T", "Audio2Text": "A2T", "Image-Audio2Text": "IA2T"}

CONFIG_IN_REFERENCE = "config.toml"

SCORES_JSON, DETAILS_CSV, SCORES_TXT, REPORT_HTML = "scores.json", "details.csv", "scores.txt", "report.html"
#: The page of ``codalab``: the name both leaderboard platforms show as a submission's detailed results.
DETAILED_RESULTS = "detailed_results.html"
#: A file the platforms add to the upload's folder (``INPUT/res``); never part of a submission.
PLATFORM_METADATA = "metadata"
