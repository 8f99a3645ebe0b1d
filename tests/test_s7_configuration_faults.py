"""Contract section 7, organizer values that are wrong: a configuration error (exit 2) naming its key or
the file, never exit 3 and never a silent fall-back to the default; weights however small give the
formula's result."""

import json
import math
import os
from pathlib import Path

import pytest
from conftest import EXAMPLES, PUBLIC, run_cli, score_into

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
    code = run_cli(
        "score",
        "--data",
        data,
        "--submission",
        EXAMPLES / "realistic",
        "--output",
        tmp_path / "o",
        "--no-synonyms",
        "--quiet",
    )
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
