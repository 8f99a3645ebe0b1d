"""Each rule written once (docs/architecture.md): the bootstrap's integral is aggregation's, a dialogue's
means are taken in one place, the runner's file names, exit codes and escaping are the scorer's, and every
subpackage's docstring names its modules."""

from __future__ import annotations

import ast
import math
import random
import re
import signal
import unicodedata
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
from helpers import EXAMPLES, PUBLIC
from hypothesis import given, settings
from hypothesis import strategies as st

import scorer
from scorer import errors, safe_text, score_submission
from scorer.inputs import contract
from scorer.inputs.config import load_config
from scorer.runner import names as runner_names
from scorer.runner.names import (
    ANSWERS,
    DIALOGUES,
    EXIT_CODE_FAULT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    PPL,
    PPL_PROBES,
    SUBMISSION,
    UNSAFE,
    printable,
    signal_name,
)
from scorer.runner.options import DEFAULTS
from scorer.runner.phases import PhaseSettings
from scorer.scoring.aggregate import TurnScore, aggregate, dialog_scores, every_dialogue
from scorer.scoring.competition import HiddenMetric, mean, weighted
from scorer.scoring.significance import exact_sums, make_strata, resampled_integrals

PACKAGE = Path(scorer.__file__).resolve().parent
TYPES = ("Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text")
WEIGHTS = {"Text2Text": 0.1, "Image2Text": 0.2, "Audio2Text": 0.3, "Image-Audio2Text": 0.4}


def awkward(rng: random.Random) -> float:
    """A figure as scores hold them, and the values that make sums hard: 0, 1, tiny, subnormal, negative."""
    k = rng.random()
    if k < 0.05:
        return 0.0
    if k < 0.1:
        return 1.0
    if k < 0.15:
        return rng.random() * 1e-12
    if k < 0.18:
        return 5e-324 * rng.randint(1, 1000)
    if k < 0.2:
        return -rng.random()
    return rng.random()


# --- the bootstrap's integral is aggregation's -----------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_every_resample_is_the_competitions_integral_of_the_dialogues_it_draws(seed):
    """As sacreBLEU's bootstrap calls its metric on every resample: the integral of each resample is, to the
    last bit, ``weighted`` of each type's ``mean`` of the S_i drawn, the functions aggregation calls."""
    rng = random.Random(seed)
    sizes = {"Text2Text": 40, "Image2Text": 7, "Audio2Text": 2, "Image-Audio2Text": 1}
    scores = {t: [awkward(rng) for _ in range(n)] for t, n in sizes.items()}
    strata = make_strata(sizes, WEIGHTS, 100, seed=seed)
    got = resampled_integrals(strata, scores).tolist()
    expected = [
        weighted({t: mean([scores[t][i] for i in strata.indices[t][r]]) for t in sizes}, WEIGHTS)
        for r in range(100)
    ]
    assert got == expected


def test_a_resample_that_draws_every_dialogue_once_gives_the_integral_of_scores_json():
    rng = random.Random(7)
    turns = [
        TurnScore(f"d{k}", TYPES[k % 4], n, awkward(rng), 0, abs(awkward(rng)), 1.0)
        for k in range(60)
        for n in range(1 + k % 3)
    ]
    summary = aggregate(turns, WEIGHTS)
    scores = dialog_scores(turns)
    strata = make_strata({t: len(scores[t]) for t in TYPES}, WEIGHTS, 40, seed=1)
    for t in TYPES:  # every resample draws each dialogue once
        strata.indices[t][:] = np.arange(len(scores[t]))
    assert set(resampled_integrals(strata, scores).tolist()) == {summary.integral}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)
        | st.sampled_from([0.0, 5e-324, 1.0, 2**-1022]),
        min_size=1,
        max_size=30,
    ),
    st.integers(0, 2**32 - 1),
)
def test_exact_sums_add_up_to_the_exact_sum_of_what_a_resample_draws(values, seed):
    indices = np.random.default_rng(seed).integers(0, len(values), size=(20, len(values)))
    parts = exact_sums(values, indices).tolist()
    for row, drawn in zip(parts, indices):
        assert math.fsum(row) == math.fsum(values[i] for i in drawn)


# --- a dialogue's means, in one place ----------------------------------------------------------------------


def test_the_dialogues_frame_holds_the_figures_aggregation_takes(rwn):
    result = score_submission(PUBLIC, EXAMPLES / "realistic", thesaurus=rwn)
    frame = result.dialogs_frame()
    dialogues = every_dialogue(result.turns)
    assert frame["dialog_id"].tolist() == [d.dialog_id for d in dialogues]
    assert frame["type"].tolist() == [d.type for d in dialogues]
    assert frame["turns"].tolist() == [d.turns for d in dialogues]
    assert frame["meteor"].tolist() == [d.meteor for d in dialogues]
    assert frame["hidden_metric"].tolist() == [d.hidden_metric for d in dialogues]
    assert frame["score"].tolist() == [d.score for d in dialogues]
    by_type = {t: [d.score for d in dialogues if d.type == t] for t in TYPES}
    assert {t: mean(v) for t, v in by_type.items() if v} == {
        t: s.score for t, s in result.summary.by_type.items()
    }


def _calls_of_fsum_and_mean(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name in ("math.fsum", "fsum", "statistics.mean", "np.mean") or name.endswith(".mean"):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {name}")
    return found


def test_the_scorer_takes_a_mean_of_figures_only_through_the_competitions_mean():
    """``math.fsum`` only in the competition's ``mean`` and the rules beside it; no pandas or numpy mean of a
    figure (the bootstrap's p-value centres its differences with numpy, sacreBLEU's rule, and the human
    ratings' mean is correlate's own)."""
    allowed = {
        "scorer/scoring/competition.py",  # mean and weighted
        "scorer/inputs/human_ratings.py",  # finite_mean of human ratings
        "scorer/scoring/significance.py",  # the p-value's mean of resampled differences
    }
    calls = [
        call
        for path in sorted(PACKAGE.rglob("*.py"))
        if "_compiled" not in path.parts and path.relative_to(PACKAGE.parent).as_posix() not in allowed
        for call in _calls_of_fsum_and_mean(path)
    ]
    assert calls == []


# --- the hidden metric's settings, in one place ---------------------------------------------------------


def test_the_hidden_metric_is_made_from_the_configurations_settings(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[hidden_metric]\nmethod = "log"\np_max = 100\n', encoding="utf-8")
    config = load_config(path)
    hidden = HiddenMetric.of(config)
    assert hidden.settings is config.hidden_metric
    assert config.hidden_metric.settings == {"method": "log", "p_max": 100.0}
    assert config.hidden_metric.is_private
    assert hidden(10.0) == pytest.approx(0.5, abs=1e-15)
    assert not load_config().hidden_metric.is_private


# --- the runner's names are the scorer's ------------------------------------------------------------------


def test_the_contracts_file_names_and_exit_codes_are_the_runners():
    # the contract's values (sections 2, 3 and 6), held once: the scorer's names are the runner's objects
    files = ("dialogues.jsonl", "answers.jsonl", "submission.jsonl", "ppl_output.json", "ppl_probes.json")
    assert (DIALOGUES, ANSWERS, SUBMISSION, PPL, PPL_PROBES) == files
    assert all(
        mine is theirs
        for mine, theirs in zip(
            (contract.DIALOGUES, contract.ANSWERS, contract.SUBMISSION, contract.PPL, contract.PROBES),
            (DIALOGUES, ANSWERS, SUBMISSION, PPL, PPL_PROBES),
        )
    )
    assert (EXIT_OK, EXIT_CODE_FAULT, EXIT_USAGE, EXIT_INTERNAL) == (0, 1, 2, 3)
    assert (errors.EXIT_OK, errors.EXIT_INVALID, errors.EXIT_USAGE, errors.EXIT_INTERNAL) == (0, 1, 2, 3)
    assert (errors.SubmissionInvalid.exit_code, errors.UsageError.exit_code) == (1, 2)
    # and no module of the scorer writes one of those names again
    names = {
        getattr(runner_names, name)
        for name in ("DIALOGUES", "ANSWERS", "SUBMISSION", "PPL", "PPL_PROBES", "TEAM_CODE")
    }
    restated = [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if "_compiled" not in path.parts and path.relative_to(PACKAGE).parts[0] != "runner"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assign)
        for constant in ast.walk(node.value)
        if isinstance(constant, ast.Constant) and constant.value in names
    ]
    assert restated == []


def test_the_runner_and_the_scorer_escape_every_code_point_alike():
    """One rule for what people read (U+200B, U+00A0, U+2028, U+00AD, U+E000, U+E0001 among the rest): the
    runner's, which escapes exactly the control and format characters and the line and paragraph
    separators of this Python's Unicode, and keeps every other character."""
    every = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF)
    assert safe_text.shown(every) == printable(every)
    escaped = set(UNSAFE.findall(every))
    unsafe = {char for char in every if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")}
    # the list is Unicode 15.1's: what this Python's older Unicode does not know yet is unassigned here
    assert unsafe <= escaped and {unicodedata.category(char) for char in escaped - unsafe} <= {"Cn"}
    assert printable("a\u200bb\u00a0c\u2028d\u00ade\ue000f\U000e0001") == (
        "a\\u200bb\u00a0c\\u2028d\\xade\ue000f\\U000e0001"
    )


def test_a_signal_is_named_by_one_rule():
    """A signal's name in every message (a worker's end, the code's process killed, a surprise of the scoring
    step, a stopped run) is the runner's ``signal_name``: no other module names a signal itself."""
    assert [signal_name(signum) for signum in (signal.SIGKILL, 40, 99)] == [
        "SIGKILL",
        "signal 40",
        "signal 99",
    ]
    naming = [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if "_compiled" not in path.parts and path != PACKAGE / "runner" / "names.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr == "name" and isinstance(node.value, ast.Call)
        if ast.unparse(node.value.func).endswith("Signals")
    ]
    assert naming == []


def test_the_phases_take_the_run_options_defaults():
    """A setting of the phases (``PhaseSettings``) that is also an option of the run (``RunnerOptions``) has
    the option's default, taken from the options (``DEFAULTS``), never written again."""
    shared = [option.name for option in fields(PhaseSettings) if option.name in DEFAULTS]
    assert {"setup_timeout", "turn_timeout", "probe_turns", "probe_min_words"} <= set(shared)
    defaults = {option.name: option.default for option in fields(PhaseSettings)}
    assert {name: defaults[name] for name in shared} == {name: DEFAULTS[name] for name in shared}
    tree = ast.parse((PACKAGE / "runner" / "phases.py").read_text(encoding="utf-8"))
    body = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "PhaseSettings").body
    written = {
        line.target.id: ast.unparse(line.value)
        for line in body
        if isinstance(line, ast.AnnAssign) and isinstance(line.target, ast.Name) and line.value is not None
    }
    assert {name: written[name] for name in shared} == {name: f"DEFAULTS[{name!r}]" for name in shared}


# --- every subpackage's docstring names its modules ------------------------------------------------------


@pytest.mark.parametrize(
    "package", ["cli", "inputs", "metric", "metric/engine", "outputs", "runner", "scoring"]
)
def test_a_subpackages_docstring_names_each_of_its_modules(package):
    folder = PACKAGE / package
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    named = set(re.findall(r"``(\w+)``", doc))
    modules = {path.stem for path in folder.glob("*.py") if path.name != "__init__.py"}
    assert sorted(modules - named) == []
