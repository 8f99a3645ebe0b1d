"""Contract section 7: one source of defaults. The package's default_config.toml is the built-in default of
every entry point: the configuration, the dataclasses, the metric object and meteor_ru."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from helpers import EXAMPLES, PUBLIC, ROOT

from scorer import load_config
from scorer.defaults import default_toml
from scorer.inputs.config import AuditSettings, CompetitionSettings, Limits, ParticipantSettings
from scorer.metric.meteor import MeteorParams

PROBE = """
from dataclasses import replace
from scorer import MeteorRu, load_config, meteor_ru
from scorer.inputs.config import AuditSettings
from scorer.metric.meteor import MeteorParams
config = load_config()
cand, ref = "мама мыла раму утром", "утром раму мыла мама"
print(MeteorParams().gamma, config.meteor.gamma)
metric = MeteorRu(replace(config.meteor, stages=("exact", "lemma")))
print(meteor_ru(cand, ref, synonyms=False), metric.sentence_score(cand, ref))
print(AuditSettings().same_share, config.audit.is_private, AuditSettings().is_private)
"""


def test_the_dataclasses_defaults_are_the_shipped_toml():
    # the contract's defaults (sections 4, 7 and 9) as literals: the shipped TOML and the dataclasses
    toml = default_toml()
    assert load_config().meteor == MeteorParams()
    assert (MeteorParams().alpha, MeteorParams().beta, MeteorParams().gamma) == (0.9, 3.0, 0.0)
    assert tuple(toml["meteor"][k] for k in ("alpha", "beta", "gamma")) == (0.9, 3.0, 0.0)
    assert MeteorParams().stages == tuple(toml["meteor"]["stages"]) == ("exact", "lemma", "synonym")
    assert load_config().limits == Limits() and Limits().max_file_mib == toml["limits"]["max_file_mib"] == 256
    assert load_config().audit == AuditSettings() and not load_config().audit.is_private
    assert ParticipantSettings().turn_details is toml["participants"]["turn_details"] is False
    assert load_config().competition == CompetitionSettings()
    assert CompetitionSettings().submissions == toml["competition"]["submissions"] == "files"
    assert AuditSettings().confident_ppl == toml["audit"]["confident_ppl"] == 1.2
    assert AuditSettings().probe_turns == toml["audit"]["probe_turns"] == 100


@pytest.mark.slow
def test_a_default_changed_in_a_copy_reaches_every_entry_point(tmp_path):
    copy = tmp_path / "scorer"
    shutil.copytree(ROOT / "scorer", copy, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (copy / "default_config.toml").read_text(encoding="utf-8")
    toml = toml.replace("gamma = 0.0 ", "gamma = 0.5 ").replace("same_share = 0.95", "same_share = 0.90")
    (copy / "default_config.toml").write_text(toml, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=tmp_path, timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "SCORER_CACHE_DIR": str(tmp_path / "c")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    gammas, scores, audit = (line.split() for line in done.stdout.splitlines())
    assert gammas == ["0.5", "0.5"]
    # four links in four chunks: penalty 0.5 (4/4)^3; meteor_ru and the metric object agree
    assert scores == ["0.5", "0.5"]
    assert audit == ["0.9", "False", "False"]  # the changed default is the default, not private settings


def test_run_options_are_one_value_for_the_entry_points_that_score():
    from scorer import RunOptions, score_submission

    options = RunOptions(config=load_config(), synonyms=False, jobs=1)
    given = score_submission(PUBLIC, EXAMPLES / "realistic", options=options)
    plain = score_submission(PUBLIC, EXAMPLES / "realistic", synonyms=False)
    assert given.summary == plain.summary and given.signature == plain.signature
    assert "stages:exact+lemma|" in given.signature
    with pytest.raises(TypeError, match="not both"):
        score_submission(PUBLIC, EXAMPLES / "realistic", options=options, jobs=2)
