"""The shell entry points: docker/entrypoint.sh and run_scoring.sh, run for real."""

import json
import os
import shutil
import subprocess
import sys
import tomllib

import pytest
from helpers import EXAMPLES, PUBLIC, ROOT


@pytest.mark.slow
def test_docker_entrypoint_scores_input_to_output_by_default(tmp_path):
    shutil.copytree(PUBLIC, tmp_path / "input" / "ref")
    shutil.copytree(EXAMPLES / "realistic", tmp_path / "input" / "res")
    env = {
        **os.environ,
        "SCORER_INPUT": str(tmp_path / "input"),
        "SCORER_OUTPUT": str(tmp_path / "output"),
        "SCORER_PYTHON": sys.executable,
    }
    proc = subprocess.run(
        ["sh", str(ROOT / "docker" / "entrypoint.sh")], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "output" / "scores.json").read_text(encoding="utf-8"))["status"] == "ok"
    proc = subprocess.run(
        [
            "sh",
            str(ROOT / "docker" / "entrypoint.sh"),
            "validate",
            "--data",
            str(tmp_path / "input" / "ref"),
            "--submission",
            str(EXAMPLES / "invalid" / "missing_dialogue"),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "d-0040" in proc.stderr


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with comment lines dropped and continuations joined."""
    out, pending = [], ""
    for line in text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        word, _, rest = pending.strip().partition(" ")
        out.append((word, rest.strip()))
        pending = ""
    return out


def test_dockerfile_runs_the_entrypoint_as_the_platforms_user():
    known = {"FROM", "ARG", "ENV", "WORKDIR", "COPY", "RUN", "USER", "ENTRYPOINT", "CMD", "LABEL"}
    steps = dockerfile_instructions((ROOT / "docker" / "Dockerfile").read_text(encoding="utf-8"))
    assert {word for word, _ in steps} <= known
    # the base is a build argument (an organizer's framework image), the slim Python image by default
    assert steps[:2] == [("ARG", "BASE=python:3.11-slim"), ("FROM", "${BASE}")]
    assert steps[-1] == ("ENTRYPOINT", '["scorer-entrypoint"]')
    # the image's user is root whatever the base's was: the platform chooses (Codabench runs the image's
    # user, root with every capability dropped; classic CodaLab another uid)
    assert [args for word, args in steps if word == "USER"] == ["root"]
    copied = [src for word, args in steps if word == "COPY" for src in args.split()[:-1]]
    assert all((ROOT / src).exists() for src in copied) and "setup.py" in copied
    with open(ROOT / "pyproject.toml", "rb") as fh:  # and every module installed beside the package
        modules = tomllib.load(fh)["tool"]["setuptools"]["py-modules"]
    assert all(f"{module}.py" in copied for module in modules)
    install = next(args for word, args in steps if word == "RUN" and "pip install" in args)
    assert (
        "PIP_CONSTRAINT=/tmp/scorer-build/constraints.txt python -m pip install ." in install
    )  # absolute: the build env too
    # the image carries the compiled engine, checked outside the sources (which would shadow the install)
    assert install.index("cd / && rm -rf /tmp/scorer-build") < install.index("assert a.compiled()")
    assert [args for word, args in steps if word == "WORKDIR"][-1] == "/"


@pytest.mark.slow
def test_run_scoring_passes_arguments_on(tmp_path):
    env = {**os.environ, "SCORER_VENV": sys.prefix}
    proc = subprocess.run(
        [
            str(ROOT / "run_scoring.sh"),
            "validate",
            "--data",
            str(PUBLIC),
            "--submission",
            str(EXAMPLES / "echo_first_variant"),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and proc.stdout == "valid: 40 dialogues, 66 turns\n"
