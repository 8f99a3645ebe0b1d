"""The contract's names (contract sections 1-2): dialogue types, their short codes, file names.

A leaf module: it imports nothing of the scorer, so readers, validation and
reports can name these without pulling in the metric.
"""

from __future__ import annotations

#: Dialogue types in the contract's order, which is also the order of every table and resample.
DIALOGUE_TYPES = ("Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text")
SHORT_TYPES = {"Text2Text": "T2T", "Image2Text": "I2T", "Audio2Text": "A2T", "Image-Audio2Text": "IA2T"}

DIALOGUES, ANSWERS = "dialogues.jsonl", "answers.jsonl"
SUBMISSION, PPL = "submission.jsonl", "ppl_output.json"
#: The probe perplexities ``run`` writes beside ``ppl_output.json`` (contract sections 9-10).
PROBES = "ppl_probes.json"
CONFIG_IN_REFERENCE = "config.toml"

SCORES_JSON, DETAILS_CSV, SCORES_TXT, REPORT_HTML = "scores.json", "details.csv", "scores.txt", "report.html"
#: The page of ``codalab``: the name both leaderboard platforms show as a submission's detailed results.
DETAILED_RESULTS = "detailed_results.html"
#: A file the platforms add to the upload's folder (``INPUT/res``); never part of a submission.
PLATFORM_METADATA = "metadata"
