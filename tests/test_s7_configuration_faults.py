"""Contract section 7, organizer values that are wrong: a configuration error (exit 2) naming its key or
the file, never exit 3 and never a silent fall-back to the default; weights however small give the
formula's result."""

import json
import math
import os
from pathlib import Path

import pytest
from helpers import EXAMPLES, PUBLIC, leaderboard_into, score_cli, score_into

from scorer.errors import ConfigError
from scorer.inputs.config import load_config
from scorer.runner.configuration import read_configuration
from scorer.runner.faults import UsageFault
from scorer.scoring.aggregate import TurnScore, aggregate


@pytest.mark.parametrize("method", ['["log"]', '{ name = "log" }', '"x"'])
def test_a_hidden_metric_method_of_the_wrong_type_is_a_config_error(tmp_path, method, capsys):
    config = tmp_path / "c.toml"
    config.write_text(f"[hidden_metric]\nmethod = {method}\n")
    code, _ = score_into(tmp_path, EXAMPLES / "realistic", "--no-synonyms", "--config", str(config))
    assert code == 2 and "hidden_metric.method: unknown method" in capsys.readouterr().err


def test_a_huge_unknown_config_key_is_shortened(tmp_path, capsys):
    config = tmp_path / "c.toml"
    config.write_text(f"[meteor]\n{'k' * 100_000} = 1\n")
    code, scores = score_into(tmp_path, EXAMPLES / "realistic", "--no-synonyms", "--config", str(config))
    err = capsys.readouterr().err
    assert code == 2 and "(100,000 characters)" in err and len(err) < 1000


@pytest.mark.parametrize("kind", ["directory", "dangling link", "unreadable"])
def test_a_present_but_unreadable_private_config_is_exit_2(tmp_path, kind, capsys, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    for name in ("dialogues.jsonl", "answers.jsonl"):
        (data / name).write_bytes((PUBLIC / name).read_bytes())
    config = data / "config.toml"
    if kind == "directory":
        config.mkdir()
    elif kind == "dangling link":
        os.symlink(tmp_path / "nowhere.toml", config)
    else:  # no permission (simulated: the tests may run as root, who reads every file)
        config.write_text("[hidden_metric]\nmethod = 'log'\n")
        real_open = open

        def refuse(path, *args, **kwargs):
            if Path(path) == config:
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr("builtins.open", refuse)
    code = score_cli(EXAMPLES / "realistic", tmp_path / "o", "--no-synonyms", "--quiet", data=data)
    assert code == 2 and "config" in capsys.readouterr().err
    assert json.loads((tmp_path / "o" / "scores.json").read_text())["status"] == "error"


def test_tiny_equal_weights_give_the_equal_weight_result():
    turns = [
        TurnScore(f"d{k}", t, 0, 1.0 if k % 2 else 0.5, 0, 0.25, 4.0)
        for k, t in enumerate(["Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text"] * 2)
    ]
    tiny = aggregate(
        turns, dict.fromkeys(["Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text"], 5e-324)
    )
    equal = aggregate(
        turns, dict.fromkeys(["Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text"], 1.0)
    )
    assert tiny.integral == equal.integral == (0.75 + 0.25) / 2 and tiny.meteor == equal.meteor == 0.75
    default = aggregate(
        turns, {"Text2Text": 0.1, "Image2Text": 0.2, "Audio2Text": 0.3, "Image-Audio2Text": 0.4}
    )
    weights = [0.1, 0.2, 0.3, 0.4]
    plain = math.fsum(w * s for w, s in zip(weights, [0.375, 0.625, 0.375, 0.625])) / math.fsum(weights)
    assert default.integral == plain == 0.525  # the power-of-two scaling changes no bit


# --- the library follows the command line's rule -------------------------------------------------------

#: A private config that changes every figure: the log hidden metric and other weights.
CHANGING = (
    '[weights]\nText2Text = 1.0\n[hidden_metric]\nmethod = "log"\np_max = 50.0\n'
    'salt = "library-rule-salt-0123"\n'
)


def _folder_with_config(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    for name in ("dialogues.jsonl", "answers.jsonl"):
        (data / name).write_bytes((PUBLIC / name).read_bytes())
    (data / "config.toml").write_text(CHANGING, encoding="utf-8")
    return data


def test_the_library_reads_config_toml_in_the_data_folder_as_the_command_line_does(tmp_path, capfd):
    from scorer import api

    data = _folder_with_config(tmp_path)
    subs = tmp_path / "subs"
    (subs / "realistic").mkdir(parents=True)
    for name in ("submission.jsonl", "ppl_output.json"):
        (subs / "realistic" / name).write_bytes((EXAMPLES / "realistic" / name).read_bytes())
    capfd.readouterr()
    board = api.score_leaderboard(data, subs, resamples=40, synonyms=False)
    result = api.score_submission(data, subs / "realistic", synonyms=False)
    valid = api.validate_submission(data, subs / "realistic")
    sample = api.audit_sample(data, subs / "realistic", 3)
    assert capfd.readouterr() == ("", "")  # the library writes nothing to stderr (nor stdout)
    where = f"config.toml in {data}"
    assert (board.config_source, result.config_source, valid.config_source, sample.config_source) == (
        where,
        where,
        where,
        where,
    )
    assert leaderboard_into(data, subs, tmp_path / "lb", "--no-synonyms") == 0
    code, alone = score_into(tmp_path, subs / "realistic", "--no-synonyms", out="one", data=data)
    assert code == 0
    on_board = json.loads((tmp_path / "lb" / "submissions" / "realistic" / "scores.json").read_text("utf-8"))
    integral = board.ranked[0].scored().summary.integral
    assert integral == result.summary.integral == on_board["integral"] == alone["integral"]
    assert result.signature == alone["signature"] and "|hm:private-" in alone["signature"]
    default = api.score_submission(PUBLIC, subs / "realistic", synonyms=False)
    assert default.config_source == "built-in default" and default.summary.integral != integral


def test_config_given_to_the_library_stands_for_dash_dash_config(tmp_path):
    from scorer import api

    data = _folder_with_config(tmp_path)
    plain = tmp_path / "plain.toml"
    plain.write_text("", encoding="utf-8")
    result = api.score_submission(data, EXAMPLES / "realistic", config=plain, synonyms=False)
    default = api.score_submission(PUBLIC, EXAMPLES / "realistic", synonyms=False)
    assert result.config_source == f"--config {plain}"
    assert result.summary.integral == default.summary.integral
    assert api.config_source(data) == f"config.toml in {data}"
    assert api.config_source(PUBLIC) == "built-in default"
    assert api.config_source(data, "x.toml") == "--config x.toml"


def test_stages_that_leave_nothing_in_force_are_a_configuration_error(tmp_path, capsys):
    config = tmp_path / "config.toml"
    config.write_text('[meteor]\nstages = ["synonym"]\n', encoding="utf-8")
    assert score_into(tmp_path, EXAMPLES / "realistic", "--config", config, "--no-synonyms")[0] == 2
    err = capsys.readouterr().err
    assert "meteor.stages" in err and "no stage is left in force" in err
    assert not (tmp_path / "out" / "details.csv").exists()


@pytest.mark.parametrize(
    "toml",
    [
        "[weights]\nText2Text = " + "9" * 400,
        "[weights]\nText2Text = 1e308\nImage2Text = 1e308",
        "[limits]\nmax_file_mib = 9223372036854775808",
        '[hidden_metric]\nmethod = "log"\np_max = ' + "9" * 5000,
    ],
)
def test_config_values_that_overflow_are_configuration_errors(tmp_path, toml, capsys):
    config = tmp_path / "c.toml"
    config.write_text(toml, encoding="utf-8")
    code, _ = score_into(tmp_path, EXAMPLES / "realistic", "--config", str(config))
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "Traceback" not in err and len(err) < 400


# --- the runner reads its keys as the scorer does -----------------------------------------------------------

#: Configurations of the keys the runner reads (its own reader, for ``python3 runner.py``), each with the key
#: a refusal names (None: contract section 7 accepts it): every network setting and others, probe_turns and
#: probe_min_words at and one past each bound, salts of 15 and 16 characters, values of the wrong type.
RUNNERS_KEYS = [
    ("", None),
    ('[competition]\nnetwork = "refused"\n', None),
    ('[competition]\nnetwork = "allowed"\n', None),
    ('[competition]\nnetwork = "Allowed"\n', "competition.network"),
    ('[competition]\nnetwork = "open"\n', "competition.network"),
    ('[competition]\nnetwork = ""\n', "competition.network"),
    ("[competition]\nnetwork = 1\n", "competition.network"),
    ("[competition]\nnetwork = false\n", "competition.network"),
    ('[competition]\nnetwork = ["refused"]\n', "competition.network"),
    ("[audit]\nprobe_turns = -1\n", "audit.probe_turns"),
    ("[audit]\nprobe_turns = 0\n", None),
    ("[audit]\nprobe_turns = 10_000_000\n", None),
    ("[audit]\nprobe_turns = 10_000_001\n", "audit.probe_turns"),
    ("[audit]\nprobe_min_words = 1\n", "audit.probe_min_words"),
    ("[audit]\nprobe_min_words = 2\n", None),
    ("[audit]\nprobe_min_words = 10_000\n", None),
    ("[audit]\nprobe_min_words = 10_001\n", "audit.probe_min_words"),
    ("[audit]\nprobe_turns = 5.0\n", "audit.probe_turns"),
    ("[audit]\nprobe_turns = true\n", "audit.probe_turns"),
    ('[audit]\nprobe_min_words = "5"\n', "audit.probe_min_words"),
    ("[audit]\nprobe_min_words = 9223372036854775807\n", "audit.probe_min_words"),
    (f'[hidden_metric]\nsalt = "{"s" * 15}"\n', "hidden_metric.salt"),
    (f'[hidden_metric]\nsalt = "{"s" * 16}"\n', None),
    (f'[hidden_metric]\nsalt = "{"ё" * 15}"\n', "hidden_metric.salt"),
    (f'[hidden_metric]\nsalt = "{"ё" * 16}"\n', None),
    ('[hidden_metric]\nsalt = ""\n', "hidden_metric.salt"),
    ("[hidden_metric]\nsalt = 1234567890123456\n", "hidden_metric.salt"),
    (f'[hidden_metric]\nsalt = ["{"s" * 16}"]\n', "hidden_metric.salt"),
    ("audit = 3\n", "audit"),
    ('competition = "allowed"\n', "competition"),
    (
        '[audit]\nprobe_turns = 7\nprobe_min_words = 10_000\n[competition]\nnetwork = "allowed"\n'
        f'[hidden_metric]\nsalt = "{"s" * 40}"\n',
        None,
    ),
]


@pytest.mark.parametrize("text, refused", RUNNERS_KEYS)
def test_the_runner_and_the_scorer_accept_and_read_the_runners_keys_alike(tmp_path, text, refused):
    """The runner's reader of the configuration (``scorer/runner/configuration.py``, the standard library
    only) and the scorer's (``scorer/inputs/config.py``) take the keys the runner reads by the same rules:
    each refuses what the other refuses, naming the same key, and reads the same values from the rest."""
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    said = {}
    try:
        runner = read_configuration(str(path), str(tmp_path))
    except UsageFault as exc:
        said["runner"] = str(exc)
    try:
        scorer = load_config(path)
    except ConfigError as exc:
        said["scorer"] = str(exc)
    if refused is not None:
        assert sorted(said) == ["runner", "scorer"], said
        assert all(f"config key {refused} must be" in message for message in said.values()), said
        return
    assert said == {}
    assert (runner.probe_turns, runner.probe_min_words, runner.network, runner.salt) == (
        scorer.audit.probe_turns,
        scorer.audit.probe_min_words,
        scorer.competition.network,
        scorer.hidden_metric.salt,
    )


def test_the_runner_and_the_scorer_read_no_configuration_alike(tmp_path):
    runner, scorer = read_configuration(None, str(tmp_path)), load_config()
    assert (runner.probe_turns, runner.probe_min_words, runner.network, runner.salt) == (
        scorer.audit.probe_turns,
        scorer.audit.probe_min_words,
        scorer.competition.network,
        scorer.hidden_metric.salt,
    )
