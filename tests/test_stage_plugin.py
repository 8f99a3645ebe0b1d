"""A new matching stage is one small module (docs/architecture.md, "Adding a stage"): the example there,
taken from the page as it is, runs end to end in a process of its own (the registry is the process's)."""

import json
import os
import re
import subprocess
import sys

import pytest
from helpers import ROOT

pytestmark = pytest.mark.slow  # every test here starts processes


def page_examples() -> tuple[str, str]:
    """The two code blocks of "Adding a stage": the module, and its use."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text[text.index("## Adding a stage") :]
    module, use = re.findall(r"```python\n(.*?)```", section, flags=re.S)[:2]
    return module, use


def test_the_documented_stage_runs_end_to_end(tmp_path):
    module, use = page_examples()
    (tmp_path / "prefix_stage.py").write_text(module, encoding="utf-8")
    check = (
        f"OUT = {str(tmp_path / 'out')!r}\n"
        + use
        + """
import json
from scorer.metric.meteor import MeteorParams, MeteorRu
from scorer.outputs.report import write_outputs
from scorer.metric import token_cache
from scorer.metric.matcher import Matcher
from pathlib import Path

out = Path(OUT)
write_outputs(result, out, report=True)
metric = MeteorRu(MeteorParams(stages=("exact", "prefix5")), matcher=Matcher(None))
print(json.dumps({
    "signature": result.signature,
    "prefix": metric.sentence_score("программист работает", "программы работают"),
    "exact_only": MeteorRu(MeteorParams(stages=("exact",)), matcher=Matcher(None)).sentence_score(
        "программист работает", "программы работают"),
    "short": metric.sentence_score("кот", "коты"),
    "page": (out / "report.html").read_text(encoding="utf-8"),
    "meteor": result.summary.meteor,
    "cached": sorted(token_cache.load(Matcher(None)._cache_file)),
}))
"""
    )
    done = subprocess.run(
        [sys.executable, "-c", check],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "SCORER_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert "|stages:exact+prefix5|" in found["signature"] and "|morph:none|" in found["signature"]
    assert found["prefix"] == 1.0 and found["exact_only"] == 0.0  # прогр- and работ- link by prefix alone
    assert found["short"] == 0.0  # кот has fewer than five letters: no prefix key
    assert ".prefix5{background:#e1bee7}" in found["page"]
    assert 0 < found["meteor"] < 1
    assert found["cached"] == ["prefix5"]  # the token cache keeps the new stage's memo
