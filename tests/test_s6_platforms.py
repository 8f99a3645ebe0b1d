"""The leaderboard platforms (contract section 6, "On the leaderboard platforms"): the image's entry point,
``codalab`` as Codabench and CodaLab run it, the flat leaderboard columns, and the ``bundle`` command."""

import datetime
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest
import yaml
from helpers import (
    EXAMPLES,
    PUBLIC,
    ROOT,
    bundle_cli,
    bundle_listing,
    codabench_instant,
    make_bundle,
    run_cli,
    score_cli,
    scores_of,
    validate_cli,
    write_json,
)

ENTRYPOINT = ROOT / "docker" / "entrypoint.sh"


def platform_input(tmp_path, layout, submission=EXAMPLES / "realistic"):
    """INPUT as a platform lays it out: ref/ the reference data; res/ the upload unpacked in ``layout``, with
    the worker's own ``metadata`` file beside it."""
    root = tmp_path / f"input-{layout}"
    shutil.copytree(PUBLIC, root / "ref")
    res = root / "res"
    res.mkdir()
    files = {name: (submission / name).read_bytes() for name in ("submission.jsonl", "ppl_output.json")}
    if layout == "files":
        for name, data in files.items():
            (res / name).write_bytes(data)
    elif layout == "folder":
        (res / "team").mkdir()
        for name, data in files.items():
            (res / "team" / name).write_bytes(data)
    else:  # one .zip: the two files at its root, or in one folder
        prefix = "" if layout == "zip" else "team/"
        with zipfile.ZipFile(res / "upload.zip", "w") as archive:
            for name, data in files.items():
                archive.writestr(prefix + name, data)
    (res / "metadata").write_text("exitCode: 0\nelapsedTime: 1.5\n", encoding="utf-8")
    return root


def test_codalab_scores_every_upload_layout_alike(tmp_path):
    outputs = {}
    for layout in ("files", "folder", "zip", "zip-folder"):
        out = tmp_path / f"out-{layout}"
        out.mkdir()
        (out / "detailed_results.html").write_bytes(b"")  # classic CodaLab's worker makes it empty beforehand
        assert run_cli("codalab", platform_input(tmp_path, layout), out, "--quiet") == 0, layout
        outputs[layout] = [(out / name).read_bytes() for name in ("scores.json", "scores.txt")]
        page = (out / "detailed_results.html").read_text(encoding="utf-8")
        assert page.startswith("<!DOCTYPE html>") and "0.376962" in page
        assert not (out / "report.html").exists()
    assert outputs["files"] == outputs["folder"] == outputs["zip"] == outputs["zip-folder"]
    assert scores_of(tmp_path / "out-zip")["integral"] == 0.3769621616774081


def test_codalab_lists_every_error_on_stderr_and_on_the_page(tmp_path, capsys):
    bad = tmp_path / "bad"
    shutil.copytree(EXAMPLES / "realistic", bad)
    ppl = json.loads((bad / "ppl_output.json").read_text(encoding="utf-8"))
    broken = sorted(ppl)[:12]
    for dialog_id in broken:
        ppl[dialog_id][0] = 0.5
    write_json(bad / "ppl_output.json", ppl)
    out = tmp_path / "out"
    assert run_cli("codalab", platform_input(tmp_path, "files", bad), out) == 1
    err = capsys.readouterr().err.splitlines()
    listed = [line for line in err if line.startswith("  - ")]
    assert len(listed) == 12 and not any("more like this" in line for line in err)
    for dialog_id, line in zip(broken, listed):  # one a line, located: file, line and column, dialog_id, turn
        assert (
            line.startswith("  - ppl_output.json, line 1, column ")
            and f"dialog_id {dialog_id!r}, turn 0" in line
        )
    assert err[:2] == [
        "config: the built-in default configuration",
        "error: the submission is invalid (12 errors); it was not scored:",
    ]
    page = (out / "detailed_results.html").read_text(encoding="utf-8")
    assert page.count("<li>") == 12 and "invalid" in page
    assert scores_of(out)["status"] == "invalid" and len(scores_of(out)["errors"]) == 12
    # score (for a person at a terminal) still groups them by kind
    assert score_cli(bad, tmp_path / "s") == 1
    grouped = capsys.readouterr().err
    assert grouped.count("\n  - ") == 3 and "... and 9 more like this" in grouped


@pytest.mark.parametrize(
    "command, marker", [("leaderboard", "leaderboard.json"), ("correlate", "correlation.json")]
)
@pytest.mark.parametrize("problem", ["missing", "empty"])
def test_board_usage_errors_leave_a_verdict_in_the_output(tmp_path, command, marker, problem, capsys):
    folder = tmp_path / "uploads"
    if problem == "empty":
        folder.mkdir()
    extra = ["--human", PUBLIC / "human_turns.csv"] if command == "correlate" else []
    out = tmp_path / "out"
    assert run_cli(command, "--data", PUBLIC, "--submissions", folder, "--output", out, *extra) == 2
    verdict = json.loads((out / marker).read_text(encoding="utf-8"))
    message = capsys.readouterr().err.splitlines()[-1]
    assert verdict["status"] == "error" and message == f"error: {verdict['errors'][0]['message']}"
    assert str(folder) in message
    assert sorted(p.name for p in out.iterdir()) == [marker]


def _entrypoint(*args, env=None):
    environment = {**os.environ, "SCORER_PYTHON": sys.executable, **(env or {})}
    return subprocess.run(
        ["sh", str(ENTRYPOINT), *map(str, args)], capture_output=True, text=True, env=environment, timeout=300
    )


@pytest.mark.slow
def test_entrypoint_passes_a_platform_command_through(tmp_path):
    # the platforms put the scoring program's command after the entry point: it runs as given
    root = platform_input(tmp_path, "files")
    proc = _entrypoint(sys.executable, "-m", "scorer", "codalab", root, tmp_path / "out", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "scores.txt").read_text().startswith("integral: 0.3769621616774081\n")
    proc = _entrypoint("sh", "-c", "echo passed $0", "through")
    assert (proc.returncode, proc.stdout) == (0, "passed through\n")
    # a scorer subcommand or option goes to the scorer
    proc = _entrypoint("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("scorer ")
    proc = _entrypoint("validate", "--data", PUBLIC, "--submission", EXAMPLES / "realistic")
    assert (proc.returncode, proc.stdout) == (0, "valid: 40 dialogues, 66 turns\n")


@pytest.mark.slow
def test_entrypoint_without_a_command_scores_input_res_into_output(tmp_path):
    root = platform_input(tmp_path, "folder")
    proc = _entrypoint(env={"SCORER_INPUT": str(root), "SCORER_OUTPUT": str(tmp_path / "output")})
    assert proc.returncode == 0, proc.stderr
    assert scores_of(tmp_path / "output")["integral"] == 0.3769621616774081


def test_the_dockerfile_runs_as_the_platforms_expect():
    text = (ROOT / "docker" / "Dockerfile").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    instructions = [line.split()[0] for line in lines]
    # built from the slim Python image or an organizer's framework image (contract section 11)
    assert lines[:3] == ["ARG BASE=python:3.11-slim", "FROM ${BASE}", "USER root"]
    # one USER, root: Codabench runs the image's user, root with every capability dropped, on a root-owned
    # output (a base image that set another user is reset)
    assert instructions.count("USER") == 1 and instructions[-1] == "ENTRYPOINT"
    assert 'ENTRYPOINT ["scorer-entrypoint"]' in text and "CMD" not in instructions
    assert "chmod 1777 /output" in text
    # the entry point execs the platform's command, so the scorer is the container's first process
    entry = ENTRYPOINT.read_text(encoding="utf-8").splitlines()
    runs = [line.strip() for line in entry if line.strip().startswith(("exec ", '"$'))]
    assert runs == ['exec "$PYTHON" -m scorer score \\', 'exec "$@"', 'exec "$PYTHON" -m scorer "$@"']


# --- bundle ----------------------------------------------------------------------------------------


def test_bundle_is_what_codabench_unpacks(tmp_path):
    out = make_bundle(tmp_path)
    spec = yaml.safe_load((out / "competition.yaml").read_text(encoding="utf-8"))
    assert spec["version"] == 2 and spec["docker_image"] == "docker.io/org/scorer:1.0"
    assert spec["enable_detailed_results"] is True
    assert spec["title"] == "Multimodal dialogue answers in Russian"
    assert "queue" not in spec  # Codabench's default queue
    assert (out / spec["image"]).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert [p["title"] for p in spec["pages"]] == ["Overview", "Evaluation", "Data", "Terms"]
    for page in [*spec["pages"], {"file": spec["terms"]}]:
        assert (out / page["file"]).read_text(encoding="utf-8").strip()
    (task,) = spec["tasks"]
    assert task["index"] == 0 and (out / task["scoring_program"] / "metadata.yaml").is_file()
    metadata = yaml.safe_load((out / task["scoring_program"] / "metadata.yaml").read_text(encoding="utf-8"))
    assert metadata["command"] == "python3 -m scorer codalab /app/input /app/output"
    (phase,) = spec["phases"]
    assert phase["tasks"] == [0] and phase["start"] == "2026-01-01 00:00:00" and "end" not in phase
    assert codabench_instant(phase["start"]) == datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    assert phase["execution_time_limit"] == 600  # seconds, the key Codabench reads; its public queue's most
    assert (phase["max_submissions_per_day"], phase["max_submissions"]) == (5, 100)
    assert "hide_score_output" not in phase and "auto_migrate_to_this_phase" not in phase
    # the dialogues and the media they name (images/, audio/); the answers only in the reference data
    assert sorted(os.listdir(out / phase["public_data"])) == ["audio", "dialogues.jsonl", "images"]
    assert sorted(os.listdir(out / task["reference_data"])) == [
        "answers.jsonl",
        "audio",
        "dialogues.jsonl",
        "images",
    ]
    (board,) = spec["leaderboards"]
    keys = [c["key"] for c in board["columns"]]
    assert keys == [
        "integral",
        "meteor",
        "hidden_metric",
        "Text2Text",
        "Image2Text",
        "Audio2Text",
        "Image-Audio2Text",
    ]
    assert [c["index"] for c in board["columns"]] == list(range(7))
    assert {c["sorting"] for c in board["columns"]} == {"desc"}
    assert {c["precision"] for c in board["columns"]} == {4}  # posted_decimals, not Codabench's 2
    assert board["submission_rule"] == "Force_Last"
    # bundle.zip is the folder, competition.yaml at its root
    with zipfile.ZipFile(out / "bundle.zip") as archive:
        inside = {info.filename: archive.read(info) for info in archive.infolist()}
        assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    listing = bundle_listing(out)
    listing.pop("bundle.zip")
    assert inside == listing


def test_the_bundles_starting_kit_validates_and_scores_into_every_column(tmp_path):
    out = make_bundle(tmp_path)
    kit = out / "starting_kit"
    assert validate_cli(kit, data=out / "public_data") == 0
    root = tmp_path / "input"
    shutil.copytree(out / "reference_data", root / "ref")
    shutil.copytree(kit, root / "res")
    assert run_cli("codalab", root, tmp_path / "scored", "--quiet") == 0
    scores = scores_of(tmp_path / "scored")
    spec = yaml.safe_load((out / "competition.yaml").read_text(encoding="utf-8"))
    for column in spec["leaderboards"][0][
        "columns"
    ]:  # the platform stores each column from a top-level number
        value = scores[column["key"]]
        assert isinstance(value, float) and 0 <= value <= 1, column["key"]
    assert "README.md" in os.listdir(kit) and "validate" in (kit / "README.md").read_text(encoding="utf-8")


def test_bundle_keeps_private_files_in_reference_data(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    config = tmp_path / "private.toml"
    config.write_text(
        '[hidden_metric]\nmethod = "log"\np_max = 137.5\nsalt = "a-salt-of-the-organizers-own"\n',
        encoding="utf-8",
    )
    out = make_bundle(tmp_path, "bundle", "--title", "Диалоги", "--config", config)
    shutil.copy(config, data / "config.toml")
    listing = bundle_listing(out)
    assert listing["reference_data/config.toml"] == (data / "config.toml").read_bytes()
    answers = (PUBLIC / "answers.jsonl").read_bytes()
    # the same with the data's own config.toml, found as every command finds it
    found = tmp_path / "found"
    assert bundle_cli(found, "--image", "x", "--quiet", data=data) == 0
    assert (found / "reference_data" / "config.toml").read_bytes() == (data / "config.toml").read_bytes()
    for folder in (out, found):
        for path, content in bundle_listing(folder).items():
            if path.startswith("reference_data/") or path == "bundle.zip":
                continue
            text = content.decode("utf-8", "replace")
            assert "137.5" not in text and "p_max" not in text and '"log"' not in text, path
            assert content != answers and b"references" not in content, path
    with zipfile.ZipFile(found / "bundle.zip") as archive:
        private = [n for n in archive.namelist() if n.endswith(("answers.jsonl", "config.toml"))]
    assert private == ["reference_data/answers.jsonl", "reference_data/config.toml"]
    assert yaml.safe_load((out / "competition.yaml").read_text(encoding="utf-8"))["title"] == "Диалоги"


def test_bundle_is_byte_identical_for_identical_inputs(tmp_path):
    first, second = make_bundle(tmp_path, "a"), make_bundle(tmp_path, "b")
    assert bundle_listing(first) == bundle_listing(second)
    # a second bundle into the same folder replaces the first, and leaves nothing of it behind
    (first / "reference_data" / "config.toml").write_text("[weights]\n", encoding="utf-8")
    make_bundle(tmp_path, "a")
    assert bundle_listing(first) == bundle_listing(second)


def test_bundle_refuses_invalid_reference_data_and_an_empty_image(tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    (data / "answers.jsonl").write_text("", encoding="utf-8")
    assert bundle_cli(tmp_path / "out", "--image", "x", data=data) == 2
    assert "answers.jsonl" in capsys.readouterr().err
    assert bundle_cli(tmp_path / "out", "--image", " ") == 2
    assert "image" in capsys.readouterr().err
    assert not (tmp_path / "out" / "competition.yaml").exists()


def test_codalab_metadata_files_are_the_bundles():
    """The repository's scoring program (codalab/scoring_program) runs the command the bundle's runs."""
    text = (ROOT / "codalab" / "scoring_program" / "metadata.yaml").read_text(encoding="utf-8")
    assert yaml.safe_load(text)["command"] == "python3 -m scorer codalab /app/input /app/output"
    assert (
        yaml.safe_load(io.StringIO((ROOT / "codalab" / "scoring_program" / "metadata").read_text()))[
            "command"
        ]
        == "python3 -m scorer codalab $input $output"
    )


def test_the_order_of_checks_puts_the_upload_before_the_thesaurus(tmp_path, monkeypatch, capsys):
    """configuration, reference data, submission, thesaurus (README, "Exit codes"; api.score_submission)."""
    monkeypatch.setenv("RUWORDNET_PATH", str(tmp_path / "no-thesaurus"))
    bad = platform_input(tmp_path, "files", EXAMPLES / "invalid" / "nan_perplexity")
    assert run_cli("codalab", bad, tmp_path / "a") == 1
    assert "RuWordNet" not in capsys.readouterr().err
    good = platform_input(tmp_path, "folder")
    assert run_cli("codalab", good, tmp_path / "b") == 2
    assert "RuWordNet was not found" in capsys.readouterr().err
    assert scores_of(tmp_path / "b")["status"] == "error"
    (good / "ref" / "config.toml").write_text("[meteor]\nalpha = 7\n", encoding="utf-8")  # before all else
    assert run_cli("codalab", good, tmp_path / "c") == 2
    assert "meteor.alpha" in capsys.readouterr().err


def test_bundle_publishes_only_the_contracts_fields_of_the_dialogues(tmp_path):
    """An extra key in the organizer's dialogues.jsonl (their own answers, notes) and a stray file in --data
    never reach the published folders (contract section 6)."""
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    answers = {
        json.loads(line)["dialog_id"]: json.loads(line)["references"]
        for line in (PUBLIC / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    }
    lines = []
    for line in (PUBLIC / "dialogues.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        d["references"] = answers[d["dialog_id"]]  # the organizer's own copy of the answers
        d["turns"][0][0]["hint"] = "секретная подсказка"
        lines.append(json.dumps(d, ensure_ascii=False))
    (data / "dialogues.jsonl").write_text("\r\n".join(lines) + "\r\n", encoding="utf-8-sig")
    (data / "notes.txt").write_text("private notes", encoding="utf-8")
    out = tmp_path / "bundle"
    image = "docker.io/org/scorer:1.0"
    assert bundle_cli(out, "--image", image, "--quiet", data=data) == 0
    listing = bundle_listing(out)
    assert not any("notes" in path for path in listing)
    published = listing["public_data/dialogues.jsonl"].decode("utf-8").splitlines()
    assert len(published) == 40
    originals = (PUBLIC / "dialogues.jsonl").read_text(encoding="utf-8").splitlines()
    for line, original in zip(published, originals):
        d = json.loads(line)
        assert list(d) == ["dialog_id", "type", "turns"] and d == json.loads(original)
        assert all(list(part) == ["type", "content"] for turn in d["turns"] for part in turn)
    for path, content in listing.items():
        if path.startswith("reference_data/") or path == "bundle.zip":
            continue
        assert b"references" not in content and "подсказка".encode() not in content, path
        assert b"private notes" not in content, path
    with zipfile.ZipFile(out / "bundle.zip") as archive:
        assert "notes" not in " ".join(archive.namelist())
    assert validate_cli(out / "starting_kit", data=out / "public_data") == 0


@pytest.mark.parametrize("link", ["reference_data", "reference_data/answers.jsonl", "public_data"])
def test_bundle_never_writes_through_a_link_inside_its_output(tmp_path, capsys, link):
    out = tmp_path / "bundle"
    out.mkdir()
    elsewhere = tmp_path / "web"
    elsewhere.mkdir()
    place = out / link
    place.parent.mkdir(parents=True, exist_ok=True)
    place.symlink_to(elsewhere if "." not in link else elsewhere / "answers.jsonl")
    assert bundle_cli(out, "--image", "docker.io/org/scorer:1.0") == 2
    err = capsys.readouterr().err
    assert str(place) in err and "symbolic link" in err
    assert list(elsewhere.iterdir()) == [] and not (out / "competition.yaml").exists()


@pytest.mark.parametrize(
    "image, rule",
    [
        ("docker.io/YOU/scorer:1.0", "must be lowercase"),
        ("my image", "not an image reference"),
        ("org/scorer:" + "x" * 200, "not an image reference"),
    ],
)
def test_bundle_checks_the_image_reference(tmp_path, capsys, image, rule):
    assert bundle_cli(tmp_path / "b", "--image", image) == 2
    assert rule in capsys.readouterr().err
    assert not (tmp_path / "b" / "competition.yaml").exists()


def test_bundle_counts_the_files_of_its_zip(tmp_path, capsys):
    import zipfile

    assert bundle_cli(tmp_path / "b", "--image", "docker.io/org/s:1") == 0
    with zipfile.ZipFile(tmp_path / "b" / "bundle.zip") as archive:
        count = len(archive.namelist())
    assert f"({count} files)" in capsys.readouterr().out


def test_codalabs_page_is_not_titled_with_the_platforms_folder_name(tmp_path):
    root = tmp_path / "input"
    shutil.copytree(PUBLIC, root / "ref")
    shutil.copytree(EXAMPLES / "realistic", root / "res")
    assert run_cli("codalab", root, tmp_path / "out", "--quiet", "--no-synonyms") == 0
    page = (tmp_path / "out" / "detailed_results.html").read_text(encoding="utf-8")
    assert "<title>Submission score</title>" in page and "res" not in re.findall(r"<h1>(.*?)</h1>", page)[0]
