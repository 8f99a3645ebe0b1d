"""The library API (scorer/api.py) as a facade: its entry points named in ``__all__``, the run's options
defined once (``RunOptions``), one check of a seed; what the command line hands it (one value, one call);
and the one list of dependencies; short reprs for a notebook, and a thesaurus error in the API's words."""

from __future__ import annotations

import copy
import inspect
import re
import tomllib
from dataclasses import fields
from importlib.metadata import requires

import pytest
from helpers import EXAMPLES, PUBLIC, ROOT, run_cli

import scorer
from scorer import api, cli, version
from scorer.errors import UsageError

ENTRY_POINTS = {
    "load_reference",
    "validate_submission",
    "score_submission",
    "score_validated",
    "score_leaderboard",
    "correlate_submissions",
    "explain_answer",
    "audit_sample",
    "competition_bundle",
    "with_perplexities",
    "check_reference_data",
    "competition_signature",
    "config_source",
}
#: The values entry points return or take, beside their functions.
API_TYPES = {"RunOptions", "AuditSample", "BundleFiles", "DataCheck"}
TAKE_RUN_OPTIONS = [
    api.score_submission,
    api.score_leaderboard,
    api.correlate_submissions,
    api.explain_answer,
    api.competition_signature,
]


def test_the_api_names_its_entry_points_and_the_package_hands_them_on():
    assert set(api.__all__) == ENTRY_POINTS | API_TYPES
    assert all(callable(getattr(api, name)) for name in api.__all__)
    handed_on = {name for name in scorer.__all__ if getattr(api, name, None) is getattr(scorer, name)}
    assert {"score_submission", "validate_submission", "RunOptions", "load_reference"} <= handed_on


@pytest.mark.parametrize("entry", TAKE_RUN_OPTIONS, ids=lambda f: f.__name__)
def test_the_run_options_are_typed_keywords_with_the_defaults_of_run_options(entry):
    parameters = inspect.signature(entry).parameters
    defaults = {f.name: f.default for f in fields(api.RunOptions)}
    assert parameters["options"].default is None
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    for name in api.RUN_KEYWORDS:
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[name].default == defaults[name]
    assert set(api.RUN_KEYWORDS) == set(defaults) - {"config_source"}


@pytest.mark.parametrize("entry", TAKE_RUN_OPTIONS, ids=lambda f: f.__name__)
def test_options_and_any_keyword_of_them_at_once_is_a_type_error(entry, tmp_path):
    arguments = {
        "score_submission": (tmp_path, tmp_path),
        "score_leaderboard": (tmp_path, tmp_path),
        "correlate_submissions": (tmp_path, tmp_path, tmp_path / "human.csv"),
        "explain_answer": ("кот", ["кот"]),
        "competition_signature": (tmp_path,),
    }[entry.__name__]
    with pytest.raises(TypeError, match="not both"):
        entry(*arguments, options=api.RunOptions(), synonyms=True)  # even a keyword's default value
    with pytest.raises(TypeError, match="unexpected keyword argument 'synonym'"):
        entry(*arguments, synonym=False)
    with pytest.raises(TypeError, match="unexpected keyword argument 'synonym'"):
        entry(*arguments, options=api.RunOptions(), synonym=False)


def test_config_means_a_config_or_a_file_in_every_entry_point_the_bundle_included(tmp_path):
    for entry in (
        *TAKE_RUN_OPTIONS,
        api.validate_submission,
        api.audit_sample,
        api.check_reference_data,
        api.competition_bundle,
    ):
        assert str(inspect.signature(entry).parameters["config"].annotation) == "Config | PathLike | None"
    file = tmp_path / "config.toml"
    file.write_text('[meteor]\ngamma = 0.5\n\n[platform]\nimage = "x/scorer:1"\n', encoding="utf-8")
    given = api.competition_bundle(PUBLIC, config=scorer.load_config(file))
    from_file = api.competition_bundle(PUBLIC, config=file)
    carried = "reference_data/config.toml"
    assert tomllib.loads(given[carried].decode()) == tomllib.loads(from_file[carried].decode())
    assert given.config_source == "--config <Config object>"
    assert dict(api.competition_bundle(PUBLIC, "x/scorer:1", config=scorer.load_config())) == dict(
        api.competition_bundle(PUBLIC, "x/scorer:1")
    )


def test_a_seed_out_of_range_is_refused_alike_by_the_bootstrap_and_the_audits_draw(tmp_path):
    messages = []
    for call in (
        lambda: api.score_leaderboard(tmp_path, tmp_path, seed=-1),
        lambda: api.audit_sample(tmp_path, tmp_path, 5, seed=-1),
    ):
        with pytest.raises(UsageError) as caught:
            call()
        messages.append(str(caught.value))
    assert messages == ["seed = -1: give a whole number from 0 to 2**63 - 1"] * 2


def test_explain_prints_what_explain_answer_returns_and_leaves_the_parsed_arguments_as_they_were(capsys):
    argv = ["explain", "--candidate", "лечу мчаться", "--reference", "лететь лечить", "--gamma", "0.5"]
    assert run_cli(*argv) == 0
    printed = capsys.readouterr().out
    config = scorer.load_config(overrides={"meteor": {"gamma": 0.5}})
    assert printed == api.explain_answer("лечу мчаться", ["лететь лечить"], config=config) + "\n"
    args = cli.build_parser().parse_args(argv)
    before = copy.deepcopy(vars(args))
    asked = cli.Explanation.of(args)
    assert vars(args) == before and asked.references == ("лететь лечить",)


def _names(requirements: list[str]) -> list[str]:
    return [
        re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", r).group(0).lower().replace("_", "-") for r in requirements
    ]


def test_the_dependencies_are_one_list_which_the_install_and_the_command_line_read():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "dependencies" in pyproject["project"]["dynamic"]
    listed = pyproject["tool"]["setuptools"]["dynamic"]["dependencies"]["file"]
    assert [ROOT / name for name in listed] == [version.DEPENDENCIES]
    lines = [
        line for line in version.DEPENDENCIES.read_text(encoding="utf-8").splitlines() if line[:1].isalnum()
    ]
    installed = [r for r in requires("dialogue-scorer") or [] if "extra ==" not in r]
    assert _names(installed) == _names(lines) and "numpy" in _names(lines)
    assert version.missing_dependencies() == []


def test_a_dependency_this_python_lacks_is_named(tmp_path, monkeypatch):
    listed = tmp_path / "dependencies.txt"
    listed.write_text("# a comment\nnumpy>=1.24\nno-such-distribution-here[extra]>=1\n", encoding="utf-8")
    monkeypatch.setattr(version, "DEPENDENCIES", listed)
    assert version.missing_dependencies() == ["no-such-distribution-here"]


def test_short_reprs_for_a_notebook():
    from scorer import score_leaderboard, score_submission

    result = score_submission(PUBLIC, EXAMPLES / "realistic", synonyms=False)
    text = repr(result)
    assert len(text) < 500 and text.startswith("<ScoreResult realistic: integral 0.37")
    assert "66 turns" in text and result.signature in text
    board = score_leaderboard(PUBLIC, EXAMPLES / "board", synonyms=False, resamples=100)
    text = repr(board)
    assert len(text) < 600 and text.startswith("<Leaderboard: 3 ranked, 3 invalid or failed, 1 flagged; 1. ")


def test_the_thesaurus_error_names_the_apis_words_too(tmp_path, monkeypatch):
    from scorer import ThesaurusError, score_submission

    monkeypatch.setenv("RUWORDNET_PATH", str(tmp_path / "nowhere"))
    with pytest.raises(ThesaurusError, match="synonyms=False"):
        score_submission(PUBLIC, EXAMPLES / "realistic")
