"""Contract section 3: a signal at any moment of a run, the first moments included (while ``python -m
scorer`` is still importing its modules), gives 130 (SIGINT) or 143 (SIGTERM), never death by the signal."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from conftest import EXAMPLES, PUBLIC, ROOT

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["int", "term"])
@pytest.mark.parametrize("module", ["scorer.metric.text", "scorer.api"])
def test_a_signal_while_the_package_is_imported_gives_its_exit_code(tmp_path, signum, code, module):
    process = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "scorer", "score", "--data", str(PUBLIC), "--submission",
         str(EXAMPLES / "realistic"), "--output", str(tmp_path / "out"), "--no-synonyms", "--quiet"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stderr is not None
    for line in process.stderr:  # each import as it ends: the package is still importing the rest
        if line.split("|")[-1].strip() == module:
            break
    else:
        raise AssertionError(f"{module} was never imported")
    process.send_signal(signum)
    _, err = process.communicate(timeout=120)
    assert process.returncode == code, err[-2000:]
    assert "Traceback" not in err
    assert not (tmp_path / "out" / "scores.json").exists()
