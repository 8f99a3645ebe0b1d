"""Contract section 11, the competition an organizer runs: ``bundle`` reads ``[platform]`` (every value
checked before anything is written, exit 2 naming the key), writes the phase's limits and dates and the
leaderboard's rule and precision, the runner's timeouts in both steps' commands, the organizers' final on
held-out dialogues drawn as the contract says (``final/``, run and ranked end to end), pages in the
competition's language that follow the configuration in force, and the same bytes for the same inputs."""

from __future__ import annotations

import csv
import datetime
import hashlib
import hmac
import json
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml
from helpers import (
    PUBLIC,
    ROOT,
    bundle_cli,
    bundle_listing,
    codabench_instant,
    process,
    read_jsonl,
    run_cli,
    run_process,
    toy_team,
    validate_cli,
)

from scorer.bundle import competition as code_bundle
from scorer.bundle.make import held_out
from scorer.errors import ConfigError
from scorer.inputs.config import SUBMISSION_RULES
from scorer.inputs.validation import Dialogue

IMAGE = "docker.io/org/scorer:1.0"
#: The held-out dialogues of the bundled example with seed 12345 and share 0.5: one random.Random(12345)
#: shuffles each type's sorted ids in the contract's order, and the first 5 of each 10 are held out.
HELD_OUT = {
    "Text2Text": ["d-0002", "d-0004", "d-0006", "d-0008", "d-0009"],
    "Image2Text": ["d-0011", "d-0015", "d-0018", "d-0019", "d-0020"],
    "Audio2Text": ["d-0021", "d-0023", "d-0024", "d-0029", "d-0030"],
    "Image-Audio2Text": ["d-0032", "d-0033", "d-0035", "d-0037", "d-0038"],
}
FINAL_CONFIG = """
[meteor]
gamma = 0.5
stages = ["exact", "lemma"]

[weights]
Text2Text = 0.25

[hidden_metric]
method = "log"
p_max = 500.0

[competition]
posted_decimals = 6

[platform]
title = "Диалоги"
language = "ru"
image = "docker.io/org/scorer-torch:2.0"
packages = ["torch==2.5.1", "transformers"]
queue = "gpu-queue"
execution_time_limit = 3600
setup_timeout = 600
turn_timeout = 60
max_submissions_per_day = 3
max_submissions = 40
development_start = "2026-02-01"
final_start = 2026-03-15
submission_rule = "Force_Best"

[audit]
probe_turns = 10
"""


def write(tmp_path: Path, text: str, name: str = "config.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def bundle(tmp_path: Path, name: str, *extra: object, data: Path = PUBLIC) -> Path:
    out = tmp_path / name
    assert bundle_cli(out, *extra, data=data) == 0
    return out


def spec_of(out: Path) -> dict:
    return yaml.safe_load((out / "competition.yaml").read_text(encoding="utf-8"))


def ids_in(path: Path) -> list[str]:
    return [yaml.safe_load(line)["dialog_id"] for line in path.read_text(encoding="utf-8").splitlines()]


# --- the held-out draw ------------------------------------------------------------------------------------


def test_the_held_out_dialogues_are_the_contracts_draw():
    dialogues = [
        Dialogue(f"d-{k:04d}", t, 1) for k, t in enumerate(("Text2Text",) * 10 + ("Image2Text",) * 10)
    ]
    ids = [f"d-{k:04d}" for k in range(20)]
    # by hand: Random(7) shuffles the first type's ten sorted ids, then (the same generator) the second's
    import random

    rng = random.Random(7)
    first, second = ids[:10], ids[10:]
    rng.shuffle(first)
    rng.shuffle(second)
    assert held_out(dialogues, 0.3, 7) == set(first[:3]) | set(second[:3])  # round(0.3 x 10) = 3


@pytest.mark.parametrize(
    "n, share, k",
    [(2, 0.9, 1), (3, 0.01, 1), (5, 0.5, 2), (7, 0.5, 4), (10, 0.99, 9), (4, 0.375, 2)],
    ids=["n-1", "at-least-one", "half-to-even-down", "half-to-even-up", "at-most-n-1", "round"],
)
def test_each_type_holds_out_k_of_its_n(n, share, k):
    """k = min(n - 1, max(1, round(share x n))), Python's round: 2.5 -> 2, 3.5 -> 4, 1.5 -> 2."""
    dialogues = [Dialogue(f"a-{j}", "Audio2Text", 1) for j in range(n)]
    assert len(held_out(dialogues, share, 1)) == k


def test_a_type_with_one_dialogue_is_a_configuration_error():
    dialogues = [
        Dialogue("t-1", "Text2Text", 1),
        Dialogue("i-1", "Image2Text", 1),
        Dialogue("i-2", "Image2Text", 1),
    ]
    with pytest.raises(ConfigError, match="platform.final_start") as caught:
        held_out(dialogues, 0.5, 1)
    assert "one Text2Text dialogue ('t-1')" in str(caught.value) and caught.value.exit_code == 2


# --- a final, as Codabench's unpacker reads it -------------------------------------------------------------


def test_a_competition_with_a_final_has_the_development_phase_only(tmp_path):
    """The public competition: one task and one phase, development, whose dates Codabench's unpacker reads
    as the contract's instants (from 00:00:00 of development_start to 23:59:59 of the day before
    final_start, UTC); an unquoted date-time would have closed it at midnight, a day early."""
    config = write(tmp_path, FINAL_CONFIG)
    out = bundle(tmp_path, "final", "--config", config, "--code")
    text = (out / "competition.yaml").read_text(encoding="utf-8")
    assert "  start: '2026-02-01 00:00:00'\n  end: '2026-03-14 23:59:59'\n" in text
    spec = spec_of(out)
    assert spec["version"] == 2 and spec["title"] == "Диалоги" and spec["queue"] == "gpu-queue"
    assert spec["docker_image"] == "docker.io/org/scorer-torch:2.0"
    assert spec["enable_detailed_results"] is False
    assert [p["title"] for p in spec["pages"]] == ["Обзор", "Оценка", "Данные", "Условия"]
    for page in [*spec["pages"], {"file": spec["terms"]}]:  # the unpacker refuses an empty or missing page
        assert (out / page["file"]).read_text(encoding="utf-8").strip()
    assert (out / spec["image"]).read_bytes().startswith(b"\x89PNG")
    (task,) = spec["tasks"]
    assert (task["index"], task["reference_data"], task["input_data"]) == (0, "reference_data", "input_data")
    for key in ("scoring_program", "reference_data", "ingestion_program", "input_data"):
        assert (out / task[key]).is_dir() and any((out / task[key]).iterdir()), key
    (development,) = spec["phases"]
    assert development == {
        "index": 0,
        "name": "Разработка",
        "description": development["description"],
        "start": "2026-02-01 00:00:00",
        "end": "2026-03-14 23:59:59",
        "max_submissions_per_day": 3,
        "max_submissions": 40,
        "execution_time_limit": 3600,
        "hide_score_output": True,
        "tasks": [0],
        "solutions": [],
        "starting_kit": "starting_kit",
        "public_data": "public_data",
    }
    utc = datetime.UTC
    assert codabench_instant(development["start"]) == datetime.datetime(2026, 2, 1, 0, 0, 0, tzinfo=utc)
    assert codabench_instant(development["end"]) == datetime.datetime(2026, 3, 14, 23, 59, 59, tzinfo=utc)
    # what the yaml wrote before: an unquoted date-time, which the unpacker reads as that day's midnight
    assert codabench_instant(yaml.safe_load("end: 2026-03-14 23:59:59")["end"]) == datetime.datetime(
        2026, 3, 14, tzinfo=utc
    )
    (board,) = spec["leaderboards"]
    assert board["submission_rule"] == "Force_Best"
    assert [(c["key"], c["title"], c["precision"]) for c in board["columns"]] == [
        ("integral", "Интегральная оценка", 6),
        ("meteor", "METEOR", 6),
        ("hidden_metric", "Скрытая метрика", 6),
        ("Text2Text", "Text2Text", 6),
        ("Image2Text", "Image2Text", 6),
        ("Audio2Text", "Audio2Text", 6),
        ("Image-Audio2Text", "Image-Audio2Text", 6),
    ]
    with zipfile.ZipFile(out / "bundle.zip") as archive:
        inside = {info.filename: archive.read(info) for info in archive.infolist()}
    whole = {path: data for path, data in bundle_listing(out).items() if not path.startswith("final/")}
    whole.pop("bundle.zip")
    assert inside == whole


def test_the_organizers_final_is_a_competition_of_its_own(tmp_path):
    """final/: the held-out input and reference data, and final/bundle.zip, a competition with the same
    image, queue, limits and commands, one phase on the held-out dialogues from final_start with no end, a
    leaderboard that keeps every upload (Force_Latest_Multiple) and no upload limit (0 and 0)."""
    out = bundle(tmp_path, "final", "--config", write(tmp_path, FINAL_CONFIG), "--code")
    with zipfile.ZipFile(out / "final" / "bundle.zip") as archive:
        inside = {info.filename: archive.read(info) for info in archive.infolist()}
    spec = yaml.safe_load(inside["competition.yaml"])
    assert spec["title"] == "Диалоги: финал (только для организаторов)" and spec["queue"] == "gpu-queue"
    assert (
        spec["docker_image"] == "docker.io/org/scorer-torch:2.0" and spec["enable_detailed_results"] is False
    )
    (task,) = spec["tasks"]
    assert (task["reference_data"], task["input_data"]) == ("reference_data", "input_data")
    (phase,) = spec["phases"]
    assert phase == {
        "index": 0,
        "name": "Финал",
        "description": phase["description"],
        "start": "2026-03-15 00:00:00",
        "max_submissions_per_day": 0,
        "max_submissions": 0,
        "execution_time_limit": 3600,
        "hide_score_output": True,
        "tasks": [0],
        "solutions": [],
    }
    assert codabench_instant(phase["start"]) == datetime.datetime(2026, 3, 15, tzinfo=datetime.UTC)
    (board,) = spec["leaderboards"]
    assert board["submission_rule"] == "Force_Latest_Multiple"
    assert [c["precision"] for c in board["columns"]] == [6] * 7
    for page in [*spec["pages"], {"file": spec["terms"]}]:
        assert inside[page["file"]].decode("utf-8").strip()
    overview = inside["pages/overview.md"].decode("utf-8")
    assert "никогда не публикуйте его и не добавляйте участников" in overview
    assert "лучшая успешная посылка команды" in overview  # Force_Best
    # the same commands, image and time limits as the public competition's
    for program in ("scoring_program/metadata.yaml", "ingestion_program/metadata.yaml"):
        assert inside[program] == (out / program).read_bytes(), program
    assert inside["ingestion_program/runner.py"] == (out / "ingestion_program" / "runner.py").read_bytes()
    # no participant: no public data and no starting kit
    assert not any(name.startswith(("public_data/", "starting_kit/")) for name in inside)
    # final/'s folders are the final competition's task data, byte for byte
    for name, data in inside.items():
        if name.startswith(("reference_data/", "input_data/")):
            assert (out / "final" / name).read_bytes() == data, name
    listed = {p for p in bundle_listing(out) if p.startswith("final/")}
    assert listed == {"final/bundle.zip"} | {
        f"final/{name}" for name in inside if name.startswith(("reference_data/", "input_data/"))
    }


def test_the_held_out_dialogues_never_reach_the_public_competition(tmp_path):
    out = bundle(tmp_path, "final", "--config", write(tmp_path, FINAL_CONFIG), "--code")
    held = sorted(i for ids in HELD_OUT.values() for i in ids)
    everyone = ids_in(PUBLIC / "dialogues.jsonl")
    development = [i for i in everyone if i not in held]
    for folder in ("final/reference_data", "final/input_data"):
        assert ids_in(out / folder / "dialogues.jsonl") == held, folder
    assert ids_in(out / "final" / "reference_data" / "answers.jsonl") == held
    for folder in ("public_data", "reference_data", "input_data"):
        assert ids_in(out / folder / "dialogues.jsonl") == development, folder
    assert ids_in(out / "reference_data" / "answers.jsonl") == development
    assert not (out / "input_data" / "answers.jsonl").exists()
    assert not (out / "final" / "input_data" / "answers.jsonl").exists()
    # the media of each task are those its dialogues name: d-0011 (held out) names images/0011.jpg
    assert (out / "final" / "input_data" / "images" / "0011.jpg").is_file()
    assert (out / "final" / "reference_data" / "images" / "0011.jpg").is_file()
    assert not (out / "public_data" / "images" / "0011.jpg").exists()
    assert (out / "public_data" / "images" / "0012.jpg").is_file()
    # no held-out dialogue, question or answer anywhere in the public competition, bundle.zip included
    held_texts = set()
    for line in (PUBLIC / "answers.jsonl").read_text(encoding="utf-8").splitlines():
        record = yaml.safe_load(line)
        if record["dialog_id"] in held:
            held_texts |= {v for variants in record["references"] for v in variants}
    for line in (PUBLIC / "dialogues.jsonl").read_text(encoding="utf-8").splitlines():
        record = yaml.safe_load(line)
        if record["dialog_id"] in held:
            held_texts |= {p["content"] for turn in record["turns"] for p in turn if p["type"] == "text"}
    public = {p: d for p, d in bundle_listing(out).items() if not p.startswith("final/")}
    with zipfile.ZipFile(out / "bundle.zip") as archive:
        public |= {f"bundle.zip:{i.filename}": archive.read(i) for i in archive.infolist()}
    development_texts = "".join(
        d.decode("utf-8") for p, d in public.items() if p.endswith("dialogues.jsonl") or "answers" in p
    )
    for path, data in public.items():
        for dialog_id in held:
            assert f'"{dialog_id}"'.encode() not in data, (path, dialog_id)
        for text in held_texts:  # a text the development dialogues share (a greeting, say) is theirs too
            if len(text) > 20 and text not in development_texts:
                assert text.encode("utf-8") not in data, (path, text)


def test_bundle_says_when_the_held_out_set_cannot_be_judged(tmp_path, capsys):
    """The example's held-out half: 34 turns, and 1 turn whose first variant has 5 words, two different."""
    bundle(tmp_path, "final", "--config", write(tmp_path, FINAL_CONFIG), "--code")
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if "the audit needs" in line] == [
        "bundle: the held-out dialogues give the final's scoring step 1 probe(s) (final_share 0.5), fewer "
        "than the 20 the audit needs: probe_insensitive cannot judge the final (raise final_share, or add "
        "dialogues whose answers have at least probe_min_words words)",
        "bundle: the held-out dialogues have 34 turn(s) (final_share 0.5), fewer than the 100 turns with a "
        "token the audit needs: ppl_against_meteor cannot judge the final (raise final_share, or add "
        "dialogues)",
    ]
    # the library says the same, in its result, and writes nothing to stderr
    from scorer import api

    made = api.competition_bundle(PUBLIC, config=write(tmp_path, FINAL_CONFIG), code=True)
    assert list(made.warnings) == [line for line in err if "the audit needs" in line]
    assert capsys.readouterr().err == ""
    # no final, no such line
    bundle(tmp_path, "plain", "--code", "--image", IMAGE)
    assert "the audit needs" not in capsys.readouterr().err


def test_both_steps_get_the_runners_limits_and_the_overview_the_seconds_a_call(tmp_path):
    out = bundle(tmp_path, "final", "--config", write(tmp_path, FINAL_CONFIG), "--code")
    limits = ["--setup-timeout", "600", "--turn-timeout", "60", "--step-timeout", "3240"]  # 3600 - 360
    ingestion = yaml.safe_load((out / "ingestion_program" / "metadata.yaml").read_text(encoding="utf-8"))
    scoring = yaml.safe_load((out / "scoring_program" / "metadata.yaml").read_text(encoding="utf-8"))
    assert shlex.split(ingestion["command"])[-7:] == [*limits, "--offline"]
    assert shlex.split(scoring["command"]) == [
        "python3", "-m", "scorer", "codalab", "/app/input", "/app/output", *limits,
    ]  # fmt: skip
    overview = (out / "pages" / "overview.md").read_text(encoding="utf-8")
    with zipfile.ZipFile(out / "final" / "bundle.zip") as archive:
        final_overview = archive.read("pages/overview.md").decode("utf-8")
    # development: 20 dialogues, 32 turns, 4 first variants of 5 or more words; final: 34 turns, 1
    # (the scoring step's built-in probe_turns = 100, since the carried configuration has no [audit])
    for row in (
        "| Разработка | генерация | 32 реплики | 82 |",  # (3240 - 600) // 32
        "| Разработка | оценка | 32 реплики + 4 пробы | 73 |",  # 2640 // 36
    ):
        assert row in overview and row not in final_overview, row
    # the final's calls only on the organizers' own pages: its probes count the held-out answers' words
    for row in (
        "| Финал | генерация | 34 реплики | 77 |",  # 2640 // 34
        "| Финал | оценка | 34 реплики + 1 проба | 75 |",  # 2640 // 35
    ):
        assert row in final_overview and row not in overview, row
    assert "| Финал |" not in overview
    assert "с 2026-02-01 00:00:00 UTC по 2026-03-14 23:59:59 UTC" in overview
    assert "**Финал**, с 2026-03-15, проводят организаторы" in overview
    assert "`torch==2.5.1`, `transformers`" in overview and "`docker.io/org/scorer-torch:2.0`" in overview
    assert (
        "округлено до 6 знаков" in overview and "подробные результаты в этом соревновании скрыты" in overview
    )
    assert (
        "docker pull docker.io/org/scorer-torch:2.0" in overview and "спросите организаторов" not in overview
    )


def test_the_seconds_a_call_round_down(tmp_path):
    """(540 - 120) / 66 = 6.36 and 420 / 71 = 5.9: 6 and 5 s, never rounded up."""
    overview = (bundle(tmp_path, "code", "--code", "--image", IMAGE) / "pages" / "overview.md").read_text(
        "utf-8"
    )
    assert "| Test | generation | 66 turns | 6 |" in overview
    assert "| Test | scoring | 66 turns + 5 probes | 5 |" in overview
    assert "Ask the organizers which Python packages" in overview


def test_the_commands_are_plain_argument_lists(tmp_path):
    """Codabench runs a command as the container's command, through no shell: the entry point execs it."""
    out = bundle(tmp_path, "code", "--code", "--image", IMAGE)
    for program in ("ingestion_program", "scoring_program"):
        command = yaml.safe_load((out / program / "metadata.yaml").read_text("utf-8"))["command"]
        argv = shlex.split(command)
        assert argv[0] == "python3" and " ".join(argv) == command
        assert not any(c in command for c in ";&|<>$`()"), command


# --- the configuration --------------------------------------------------------------------------------------


def test_the_carried_configuration_leaves_out_platform_and_audit(tmp_path, capsys):
    config = write(tmp_path, FINAL_CONFIG)
    out = bundle(tmp_path, "final", "--config", config, "--code")
    assert capsys.readouterr().err.splitlines()[0] == f"config: config file {config}"
    salt = hmac.new((PUBLIC / "answers.jsonl").read_bytes(), config.read_bytes(), hashlib.sha256).hexdigest()
    for folder in ("reference_data", "final/reference_data"):
        carried = tomllib.loads((out / folder / "config.toml").read_text(encoding="utf-8"))
        assert carried == {
            "meteor": {"gamma": 0.5, "stages": ["exact", "lemma"]},
            "weights": {"Text2Text": 0.25},
            "hidden_metric": {"method": "log", "p_max": 500.0, "salt": salt[:32]},
            "competition": {"posted_decimals": 6, "submissions": "code"},
        }


def test_bundle_says_which_configuration_it_used(tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    bundle(tmp_path, "built-in", "--image", IMAGE, data=data)
    assert "config: the built-in default configuration" in capsys.readouterr().err
    write(data, f'[platform]\nimage = "{IMAGE}"\ntitle = "Ours"\n')
    out = bundle(tmp_path, "found", data=data)  # no --image: the data folder's config names it
    assert f"config: {data / 'config.toml'} (next to the reference data)" in capsys.readouterr().err
    spec = spec_of(out)
    assert (spec["docker_image"], spec["title"]) == (IMAGE, "Ours")
    assert not (out / "reference_data" / "config.toml").exists()  # [platform] alone: nothing to carry
    spec = spec_of(bundle(tmp_path, "given", "--image", "org/other:2", "--title", "Theirs", data=data))
    assert (spec["docker_image"], spec["title"]) == ("org/other:2", "Theirs")


def test_the_same_inputs_give_the_same_bytes(tmp_path):
    """Two bundles with a final and an unsalted private config: every file, bundle.zip included."""
    config = write(tmp_path, FINAL_CONFIG)
    first = bundle(tmp_path, "a", "--config", config, "--code")
    second = bundle(tmp_path, "b", "--config", config, "--code")
    a, b = bundle_listing(first), bundle_listing(second)
    assert list(a) == list(b) and len(a) > 100
    for path in a:
        assert a[path] == b[path], path


def test_the_library_makes_the_bytes_the_command_line_writes(tmp_path):
    """``api.competition_bundle`` follows the same rule and ``[platform]``: no image argument needed."""
    from scorer import api

    config = write(tmp_path, FINAL_CONFIG)
    written = bundle_listing(bundle(tmp_path, "cli", "--config", config, "--code"))
    made = api.competition_bundle(PUBLIC, config=config, code=True)
    assert dict(made) == written
    assert made.config_source == f"--config {config}"


@pytest.mark.parametrize(
    "config, code, key",
    [
        ('[platform]\nfinal_start = "2026-03-01"\n', False, "platform.final_start"),
        ('[competition]\nsubmissions = "code"\n', False, "competition.submissions"),
        ('[competition]\nsubmissions = "files"\n', True, "competition.submissions"),
        ('[platform]\nimage = "Not An Image"\n', False, "platform.image"),
        ('[platform]\nlanguage = "de"\n', False, "platform.language"),
        ('[platform]\nsubmission_rule = "Force_First"\n', False, "platform.submission_rule"),
        ("[platform]\nexecution_time_limit = 900\n", False, "platform.queue"),
        ("[platform]\nsetup_timeout = 520\n", True, "platform.setup_timeout"),
        ("[platform]\nmax_submissions = 0\n", False, "platform.max_submissions"),
        ('[platform]\nfinal_start = "2026-01-01"\n', True, "platform.development_start"),
        ('[platform]\nfinal_start = "2026-03-01"\nfinal_share = 1.0\n', True, "platform.final_share"),
        ("[competition]\nposted_decimals = 11\n", False, "competition.posted_decimals"),
        ('[competition]\nnetwork = "open"\n', True, "competition.network"),
    ],
)
def test_every_value_is_checked_before_anything_is_written(tmp_path, capsys, config, code, key):
    path = write(tmp_path, config, "private.toml")
    out = tmp_path / "out"
    image = [] if "image" in config else ["--image", IMAGE]
    argv = [
        "bundle",
        "--data",
        PUBLIC,
        "--output",
        out,
        "--config",
        path,
        *image,
        *(["--code"] if code else []),
    ]
    assert run_cli(*argv) == 2
    assert key in capsys.readouterr().err
    assert not out.exists()


def test_a_bundle_with_no_image_anywhere_is_a_usage_error(tmp_path, capsys):
    assert bundle_cli(tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "no image" in err and "--image" in err and "[platform] image" in err
    assert not (tmp_path / "out").exists()


def test_the_submission_rules_are_codabenchs_six():
    """Codabench's Leaderboard.SUBMISSION_RULES (leaderboards/models.py), in its order."""
    assert SUBMISSION_RULES == (
        "Add",
        "Add_And_Delete",
        "Add_And_Delete_Multiple",
        "Force_Last",
        "Force_Latest_Multiple",
        "Force_Best",
    )


# --- the pages ----------------------------------------------------------------------------------------------


def test_the_evaluation_page_follows_the_configuration_in_force(tmp_path):
    config = write(
        tmp_path,
        '[meteor]\nalpha = 0.75\nstages = ["exact"]\n'
        '[weights]\nAudio2Text = 0.05\n"Image-Audio2Text" = 0.65\n',
    )
    page = (
        bundle(tmp_path, "a", "--config", config, "--image", IMAGE) / "pages" / "evaluation.md"
    ).read_text()
    assert "Words are matched in one stage:\n  equal words." in page
    assert "lemma" not in page and "synonym" not in page and "RuWordNet" not in page
    assert "alpha = 0.75" in page and "no fragmentation penalty (gamma = 0): METEOR = Fmean" in page
    assert "| `Audio2Text` | 0.05 |" in page and "| `Image-Audio2Text` | 0.65 |" in page
    assert "scorer explain" not in page  # its options cannot turn the lemma stage off
    assert "derived from the perplexity" in page and "p_max" not in page and "1000" not in page
    config = write(tmp_path, "[meteor]\ngamma = 0.5\nbeta = 2.0\n")
    page = (
        bundle(tmp_path, "b", "--config", config, "--image", IMAGE) / "pages" / "evaluation.md"
    ).read_text()
    assert (
        "in this order:\n  equal words, words sharing a lemma (pymorphy3) and synonyms (RuWordNet)." in page
    )
    assert "Pen = gamma (c / m)^beta, gamma = 0.5,\n  beta = 2, and METEOR = Fmean (1 - Pen)." in page
    assert "--alpha 0.9 --beta 2 --gamma 0.5\n" in page


def test_russian_pages_and_starting_kit(tmp_path):
    out = bundle(tmp_path, "ru", "--config", write(tmp_path, FINAL_CONFIG), "--code")
    expected = {
        "pages/overview.md": "# Диалоги\n",
        "pages/evaluation.md": "# Оценка\n",
        "pages/data.md": "# Данные\n",
        "pages/terms.md": "# Условия\n",
        "starting_kit/README.md": "# Стартовый набор (соревнование с кодом)\n",
    }
    for path, start in expected.items():
        assert (out / path).read_text(encoding="utf-8").startswith(start), path
    evaluation = (out / "pages" / "evaluation.md").read_text(encoding="utf-8")
    assert "синонимы" not in evaluation and "слова с общей леммой (pymorphy3)" in evaluation
    assert "gamma = 0.5" in evaluation and "| `Text2Text` | 0.25 |" in evaluation
    terms = (out / "pages" / "terms.md").read_text(encoding="utf-8")
    assert "намеренно завершаются ошибкой" in terms and "его публикуют организаторы" in terms
    data = (out / "pages" / "data.md").read_text(encoding="utf-8")
    assert "Диалоги финала отложены: 20 диалогов, 34 реплики" in data


def test_the_organizers_docs_are_linked_and_name_the_workers_settings():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "organizers.md" in readme and "changelog.md" in readme
    guide = " ".join((ROOT / "docs" / "organizers.md").read_text(encoding="utf-8").split())
    for needed in ("USE_GPU=True", "COMPETITION_CONTAINER_NETWORK_DISABLED=True", "--build-arg BASE=",
                   "[platform] packages", "whose runs fail repeatedly", "docs/changelog.md",
                   "leaderboard --data competition/final/reference_data",
                   "Force_Latest_Multiple"):  # fmt: skip
        assert needed in guide, needed
    changes = " ".join((ROOT / "docs" / "changelog.md").read_text(encoding="utf-8").split())
    for needed in ("Rebuild the image before you re-bundle", 'network = "allowed"', "config_source",
                   "--trusted-code", "as secret as `answers.jsonl`"):  # fmt: skip
        assert needed in changes, needed


def test_bundle_writes_a_derived_salt_into_a_private_config_without_one(tmp_path, capsys):
    """The salt is the first 32 hex digits of HMAC-SHA-256 keyed with answers.jsonl over the config's bytes
    (contract section 7): never random, never shown, the same in every bundle of the same inputs."""
    import hashlib
    import hmac

    from scorer.inputs.config import UNSALTED_NOTE

    config = tmp_path / "private.toml"
    config.write_text('[hidden_metric]\nmethod = "log"\np_max = 137.5\n', encoding="utf-8")
    capsys.readouterr()
    assert validate_cli(ROOT / "submissions_examples" / "realistic", "--config", config) == 0
    assert capsys.readouterr().err.count(UNSALTED_NOTE) == 1
    salts = []
    for name in ("a", "b"):
        out = bundle(tmp_path, name, "--image", "org/scorer:1", "--config", config, "--quiet")
        err = capsys.readouterr().err
        assert "one derived from answers.jsonl and the configuration was written" in err
        assert "as secret as answers.jsonl" in err
        carried = tomllib.loads((out / "reference_data" / "config.toml").read_text(encoding="utf-8"))
        salts.append(carried["hidden_metric"]["salt"])
        assert carried["hidden_metric"]["p_max"] == 137.5 and salts[-1] not in err
        for path in (out / "public_data").rglob("*"):
            assert not path.is_file() or salts[-1].encode() not in path.read_bytes()
    key = (PUBLIC / "answers.jsonl").read_bytes()
    assert salts == [hmac.new(key, config.read_bytes(), hashlib.sha256).hexdigest()[:32]] * 2


def test_a_bundle_whose_config_contradicts_code_is_refused(tmp_path, capsys):
    private = tmp_path / "private.toml"
    private.write_text('[competition]\nsubmissions = "files"\n', encoding="utf-8")
    argv = (tmp_path / "a", "--image", IMAGE, "--config", private)
    assert bundle_cli(*argv, "--code") == 2
    assert "competition.submissions" in capsys.readouterr().err
    private.write_text('[competition]\nsubmissions = "code"\n', encoding="utf-8")
    assert bundle_cli(*argv) == 2
    assert "--code" in capsys.readouterr().err
    assert not (tmp_path / "a" / "competition.yaml").exists()


def test_a_table_the_bundle_cannot_edit_in_place_is_carried_as_plain_toml():
    """A [competition] table written inline cannot take the line under a header: the carried config is the
    same settings written anew, with the line, and without [platform] and [audit]."""
    given = b'competition = { network = "allowed" }\nplatform = { title = "T" }\n[meteor]\nalpha = 0.8\n'
    carried = code_bundle.carried_config(given, code=True, salt=None)
    assert carried is not None
    assert tomllib.loads(carried.decode("utf-8")) == {
        "competition": {"network": "allowed", "submissions": "code"},
        "meteor": {"alpha": 0.8},
    }
    assert carried.decode("utf-8").endswith(
        '[competition]\nnetwork = "allowed"\nsubmissions = "code"\n\n[meteor]\nalpha = 0.8\n'
    )


# --- the organizer's final, end to end ----------------------------------------------------------------------

#: A team that echoes each question and claims a perplexity of 1 + the target's words: no model at all.
ECHO_TEAM = """
def setup_model_and_tokenizer():
    return {}, None

def generate_text(model, tokenizer, cur_query_list, history_list):
    return " ".join(p["content"] for p in cur_query_list if p["type"] == "text")

def get_ppl(model, tokenizer, cur_query_tuple, history_list):
    return 1.0 + len(cur_query_tuple[1].split())
"""
#: A team whose code fails on the held-out dialogues: at its fourth answer.
CRASHING_TEAM = """
CALLS = []

def setup_model_and_tokenizer():
    return {}, None

def generate_text(model, tokenizer, cur_query_list, history_list):
    CALLS.append(1)
    if len(CALLS) == 4:
        raise RuntimeError("no answer for this one")
    return "Ответ"

def get_ppl(model, tokenizer, cur_query_tuple, history_list):
    return 5.0
"""


@pytest.mark.slow
def test_the_organizers_final_ranks_three_teams_as_the_docs_say(tmp_path):
    """Three teams' uploads (the starting kit's model, an echo with fake perplexities, one that crashes) run
    on final/ in two steps and ranked with leaderboard --data final/reference_data: the crashing team is
    listed invalid with its fault, the others ranked, and the audit, which the held-out example is too
    small for, says what it could not judge, as bundle warned. The prediction step, which reads no
    configuration, says none."""
    out = bundle(
        tmp_path, "competition", "--config", ROOT / "reference_data" / "final_example.toml", "--code"
    )
    teams = {
        "kit": out / "starting_kit",
        "echo": toy_team(tmp_path / "echo", ECHO_TEAM),
        "crash": toy_team(tmp_path / "crash", CRASHING_TEAM),
    }
    runs = tmp_path / "final_runs"
    for name, code in teams.items():
        # the prediction step as the platform runs it: the standalone runner, on data without answers
        generated = subprocess.run(
            [sys.executable, out / "ingestion_program" / "runner.py", "--data", out / "final" / "input_data"]
            + ["--code", code, "--output", runs / name, "--phase", "generate"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert "config: none" in generated.stderr.splitlines(), generated.stderr
        if name == "crash":
            assert generated.returncode == 1
            fault = json.loads((runs / name / "run_fault.json").read_text(encoding="utf-8"))
            assert (fault["kind"], fault["phase"], fault["function"]) == (
                "exception",
                "generate",
                "generate_text",
            )
            continue
        assert generated.returncode == 0, generated.stderr
        done = run_process(
            "--data", out / "final" / "reference_data", "--code", code, "--output", runs / name,
            "--phase", "ppl",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    board = tmp_path / "board"
    ranked = process(
        "leaderboard",
        "--data",
        out / "final" / "reference_data",
        "--submissions",
        runs,
        "--output",
        board,
        "--no-synonyms",
        timeout=300,
    )
    assert ranked.returncode == 0, ranked.stderr
    rows = {r["submission"]: r for r in csv.DictReader((board / "leaderboard.csv").open(encoding="utf-8"))}
    assert [rows[n]["status"] for n in ("kit", "echo", "crash")] == ["ok", "ok", "invalid"]
    assert rows["crash"]["rank"] == "" and "generate_text" in rows["crash"]["errors"]
    assert sorted(rows[n]["rank"] for n in ("kit", "echo")) == ["1", "2"]
    held = sorted(i for ids in HELD_OUT.values() for i in ids)
    assert held == sorted(row["dialog_id"] for row in read_jsonl(runs / "kit" / "submission.jsonl"))
    # the audit could not judge the fake perplexities on so small a held-out set, as bundle said
    # (an echoed question with no text part has no token: 33 of the 34 turns)
    assert ranked.stderr.splitlines()[1:] == [
        "audit: echo: not judged: ppl_against_meteor (33 of 100), overconfident (0 of 20), probe_insensitive "
        "(1 of 20)",
        "audit: kit: not judged: ppl_against_meteor (34 of 100), overconfident (0 of 20), probe_insensitive "
        "(1 of 20)",
    ]
