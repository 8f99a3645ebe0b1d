"""Contract section 10, the platform: what ``bundle`` and ``bundle --code`` write for Codabench. The media the
dialogues name in every data folder (and refused when missing or named by a hostile path), the phases' time
limits and the runner's inside them, a code competition's private config, a rebuild that leaves nothing of
a code bundle, and a starting kit whose model tells a text from its words shuffled."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import shlex
import shutil
import struct
import subprocess
import sys
import tomllib
import wave
import zipfile
from pathlib import Path

import pytest
import yaml
from helpers import PUBLIC, ROOT, bundle_cli, bundle_listing, make_bundle, read_jsonl

from scorer.bundle.runner_file import runner_file
from scorer.errors import ReferenceDataError
from scorer.inputs.config import load_config
from scorer.inputs.reference import load_reference_and_media
from scorer.runner.data import read_dialogues

IMAGE = "docker.io/org/scorer:1.0"
#: The built-in [platform] limits (seconds): each step's, the runner's setup and call, and its step timeout
#: (600 less max(30, 60)).
EXECUTION_TIME_LIMIT, SETUP_TIMEOUT, TURN_TIMEOUT, STEP_TIMEOUT = 600, 120, 30, 540


def named_media(data: Path) -> list[str]:
    """The media paths ``data/dialogues.jsonl`` names, in file order, each once."""
    names = [
        part["content"]
        for d in read_jsonl(data / "dialogues.jsonl")
        for turn in d["turns"]
        for part in turn
        if part["type"] in ("image", "audio")
    ]
    return list(dict.fromkeys(names))


def copy_of_public(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    return data


def with_media(data: Path, names: list[str]) -> Path:
    """``data`` whose first dialogue's first turn names ``names`` as images."""
    rows = read_jsonl(data / "dialogues.jsonl")
    rows[0]["turns"][0] += [{"type": "image", "content": name} for name in names]
    (data / "dialogues.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return data


# --- media ------------------------------------------------------------------------------------------------


def test_the_bundled_example_ships_every_media_file_it_names_small_and_valid():
    names = named_media(PUBLIC)
    assert len(names) == 40 and {n.split("/")[0] for n in names} == {"images", "audio"}
    for name in names:
        data = (PUBLIC / name).read_bytes()
        assert 0 < len(data) <= 8 << 10, name
        if name.endswith(".jpg"):
            assert data[:3] == b"\xff\xd8\xff" and data[-2:] == b"\xff\xd9", name  # a JPEG's start and end
            sof = data.index(b"\xff\xc0")  # a baseline frame: its height and width
            assert struct.unpack(">HH", data[sof + 5 : sof + 9]) == (48, 64), name
        else:
            with wave.open(str(PUBLIC / name)) as audio:
                assert audio.getnchannels() == 1 and audio.getframerate() == 8000 and audio.getnframes() > 0
    on_disk = {p.relative_to(PUBLIC).as_posix() for p in PUBLIC.rglob("*") if p.is_file()}
    assert on_disk - set(names) == {"dialogues.jsonl", "answers.jsonl", "human_turns.csv"}


@pytest.mark.parametrize("code", [False, True], ids=["files", "code"])
def test_every_named_media_file_is_in_public_reference_and_input_data(tmp_path, code):
    out = make_bundle(tmp_path, "bundle", *(["--code"] if code else []))
    names = named_media(PUBLIC)
    folders = ["public_data", "reference_data"] + (["input_data"] if code else [])
    for folder in folders:
        held = {p.relative_to(out / folder).as_posix() for p in (out / folder).rglob("*") if p.is_file()}
        assert set(names) <= held, folder
        for name in names:
            assert (out / folder / name).read_bytes() == (PUBLIC / name).read_bytes(), (folder, name)
    assert not (out / "input_data").exists() or code
    spec = yaml.safe_load((out / "competition.yaml").read_text(encoding="utf-8"))
    assert spec["phases"][0]["public_data"] == "public_data" and spec["tasks"][0]["reference_data"]
    if code:  # the participant's local run finds the media where the dialogues say
        dialogues = read_dialogues(str(out / "public_data"))
        paths = [p["content"] for d in dialogues for t in d["turns"] for p in t if p["type"] != "text"]
        assert paths and all(os.path.isfile(p) for p in paths)


@pytest.mark.parametrize("code", [False, True], ids=["files", "code"])
def test_bundle_refuses_data_whose_named_media_are_missing_naming_each(tmp_path, capsys, code):
    data = copy_of_public(tmp_path)
    names = named_media(PUBLIC)
    gone = names[3:10]
    for name in gone:
        (data / name).unlink()
    out = tmp_path / "out"
    assert bundle_cli(out, "--image", IMAGE, *(["--code"] if code else []), data=data) == 2
    err = capsys.readouterr().err.splitlines()
    # every missing file in one round, each where dialogues.jsonl names it (check-data gives the same lines)
    assert err[1] == f"error: {len(gone)} media file(s) that dialogues.jsonl names are missing from {data}:"
    assert [line for line in err if line.endswith(" is missing")] == [
        f"  - dialogues.jsonl, line {line}, dialog_id 'd-{line:04d}', turn 0: {name} is missing"
        for line, name in ((int(name[-8:-4]), name) for name in gone)  # images/0014.jpg: d-0014, line 14
    ]
    assert not (out / "competition.yaml").exists()


@pytest.mark.parametrize(
    "name, code",
    [
        ("../outside.jpg", "media_path"),
        ("images/../../outside.jpg", "media_path"),
        ("/etc/hostname", "media_path"),
        ("C:/images/0011.jpg", "media_path"),
        ("images\\0011.jpg", "media_path"),
        ("answers.jsonl", "media_path"),
        ("./Config.toml", "media_path"),
        ("", "media_path"),
        ("linked/0011.jpg", "media_link"),
        ("link.jpg", "media_link"),
        ("images", "media_not_a_file"),
        ("fifo.wav", "media_not_a_file"),
        ("images/0011.jpg/x.jpg", "media_missing"),
    ],
)
def test_a_media_path_is_read_inside_the_data_folder_only(tmp_path, name, code):
    data = copy_of_public(tmp_path)
    (tmp_path / "outside.jpg").write_bytes(b"\xff\xd8 outside the data folder")
    (data / "link.jpg").symlink_to(tmp_path / "outside.jpg")
    (data / "linked").symlink_to(data / "images")  # a link even to a folder inside is not followed
    os.mkfifo(data / "fifo.wav")  # never opened for a blocking read
    with_media(data, [name])
    with pytest.raises(ReferenceDataError) as caught:
        load_reference_and_media(data)
    (issue,) = caught.value.issues
    assert issue.code == code and (issue.dialog_id, issue.turn) == ("d-0001", 0)
    assert caught.value.exit_code == 2


def test_media_paths_are_published_by_their_place_in_the_folder(tmp_path):
    data = with_media(copy_of_public(tmp_path), ["images/./0011.jpg", "images//0011.jpg", "./audio/0021.wav"])
    found = load_reference_and_media(data)[1]
    assert list(found) == sorted(named_media(PUBLIC))
    assert found["images/0011.jpg"] == (PUBLIC / "images" / "0011.jpg").read_bytes()


def test_a_link_to_media_outside_the_data_folder_stops_the_bundle(tmp_path, capsys):
    data = copy_of_public(tmp_path)
    (data / "images" / "0011.jpg").unlink()
    (data / "images" / "0011.jpg").symlink_to(tmp_path / "secret.jpg")
    (tmp_path / "secret.jpg").write_bytes(b"\xff\xd8 not to be published")
    assert bundle_cli(tmp_path / "out", "--image", IMAGE, "--code", data=data) == 2
    err = capsys.readouterr().err
    assert "images/0011.jpg is a symbolic link" in err and "cannot be published" in err
    assert not (tmp_path / "out" / "competition.yaml").exists()


# --- the runner's one file ---------------------------------------------------------------------------------


def test_the_runners_one_file_is_its_package_zipped_the_same_way_every_time(tmp_path):
    """``runner.py`` of a code bundle: a zip archive of ``scorer/runner/`` that Python runs by its
    ``__main__.py``; stored entries in name order, each dated 1980-01-01 with the mode 0644, so the same
    sources give the same bytes (the process that runs it: test_s10_code_submissions.py)."""
    made = runner_file()
    assert made == runner_file() and made.startswith(b"#!/usr/bin/env python3\n")
    shipped = tmp_path / "runner.py"
    shipped.write_bytes(made)
    with zipfile.ZipFile(shipped) as archive:
        entries = archive.infolist()
        names = [e.filename for e in entries]
        package = sorted((ROOT / "scorer" / "runner").glob("*.py"))
        assert names == sorted(["__main__.py", *(f"runner/{p.name}" for p in package)])
        assert all(archive.read(f"runner/{p.name}") == p.read_bytes() for p in package)
        assert {(e.date_time, e.external_attr >> 16, e.compress_type) for e in entries} == {
            ((1980, 1, 1, 0, 0, 0), 0o100644, zipfile.ZIP_STORED)
        }
    # another copy of the package, touched now, gives the same bytes
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "scorer" / "runner", copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert runner_file(copy) == made


# --- time limits -------------------------------------------------------------------------------------------


def test_the_phase_time_limit_is_codabenchs_key_and_the_runners_limits_fit_inside(tmp_path):
    for code in (False, True):
        out = make_bundle(tmp_path, f"bundle-{code}", *(["--code"] if code else []))
        spec = yaml.safe_load((out / "competition.yaml").read_text(encoding="utf-8"))
        (phase,) = spec["phases"]
        # Codabench's v2 unpacker reads the phase's execution_time_limit, in seconds; its default queue
        # allows at most 600
        assert phase["execution_time_limit"] == EXECUTION_TIME_LIMIT == 600
        assert "execution_time_limit_ms" not in phase
        if not code:
            continue
        ingestion = yaml.safe_load((out / "ingestion_program" / "metadata.yaml").read_text(encoding="utf-8"))
        scoring = yaml.safe_load((out / "scoring_program" / "metadata.yaml").read_text(encoding="utf-8"))
        limits = ["--setup-timeout", "120", "--turn-timeout", "30", "--step-timeout", "540"]
        assert shlex.split(ingestion["command"]) == [
            "python3", "/app/program/runner.py", "--data", "/app/input_data",
            "--code", "/app/ingested_program", "--output", "/app/output", "--phase", "generate",
            "--keep-code", *limits, "--offline",
        ]  # fmt: skip
        argv = shlex.split(scoring["command"])
        assert argv == ["python3", "-m", "scorer", "codalab", "/app/input", "/app/output", *limits]
        # a hang in the setup or in a call is named by the runner while the step still runs
        assert SETUP_TIMEOUT + TURN_TIMEOUT <= STEP_TIMEOUT < phase["execution_time_limit"]
        overview = (out / "pages" / "overview.md").read_text(encoding="utf-8")
        for number in (
            f"at most {EXECUTION_TIME_LIMIT} s",
            f"past {SETUP_TIMEOUT} s",
            f"past {TURN_TIMEOUT} s",
            f"past {STEP_TIMEOUT} s",
            "| Test | generation | 66 turns | 6 |",  # (540 - 120) // 66
            "| Test | scoring | 66 turns + 5 probes | 5 |",  # (540 - 120) // 71
            f"--setup-timeout {SETUP_TIMEOUT} --turn-timeout {TURN_TIMEOUT} --step-timeout {STEP_TIMEOUT}",
        ):
            assert number in overview, number
        kit = (out / "starting_kit" / "README.md").read_text(encoding="utf-8")
        limits = (
            f"--setup-timeout {SETUP_TIMEOUT} --turn-timeout {TURN_TIMEOUT} --step-timeout {STEP_TIMEOUT}"
        )
        assert limits in kit


def test_the_docs_state_the_bundles_time_limits():
    for page in ("codalab/README.md", "docs/code_submissions.md"):
        text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
        for needed in (
            f"execution_time_limit: {EXECUTION_TIME_LIMIT}",
            f"--setup-timeout {SETUP_TIMEOUT}",
            f"--turn-timeout {TURN_TIMEOUT}",
        ):
            assert needed in text, (page, needed)
    readme = " ".join((ROOT / "codalab/README.md").read_text("utf-8").split())
    assert f"--step-timeout {STEP_TIMEOUT}" in readme


# --- a code competition's config ---------------------------------------------------------------------------


def test_a_code_bundle_says_submissions_code_in_its_private_config(tmp_path):
    out = make_bundle(tmp_path, "plain-code", "--code")
    config = out / "reference_data" / "config.toml"
    assert config.read_text(encoding="utf-8") == '[competition]\nsubmissions = "code"\n'
    assert load_config(config).competition.submissions == "code"
    # the organizer's own config keeps every byte, and gains the line
    private = tmp_path / "private.toml"
    private.write_text(
        '# ours\n[hidden_metric]\nsalt = "a-salt-of-the-organizers-own"\nmethod = "log"\np_max = 137.5',
        encoding="utf-8",
    )
    out = make_bundle(tmp_path, "merged", "--code", "--config", private)
    text = (out / "reference_data" / "config.toml").read_text(encoding="utf-8")
    assert text.startswith(private.read_text(encoding="utf-8") + "\n")
    merged = load_config(out / "reference_data" / "config.toml")
    assert merged.competition.submissions == "code" and merged.hidden_metric.method == "log"
    # a [competition] table of its own gets the line under its header
    private.write_text("[competition] # how teams submit\n\n[meteor]\nalpha = 0.8\n", encoding="utf-8")
    out = make_bundle(tmp_path, "table", "--code", "--config", private)
    raw = tomllib.loads((out / "reference_data" / "config.toml").read_text(encoding="utf-8"))
    assert raw == {"competition": {"submissions": "code"}, "meteor": {"alpha": 0.8}}
    # one that already says so is kept as it is
    private.write_text('[competition]\nsubmissions = "code"\n', encoding="utf-8")
    out = make_bundle(tmp_path, "kept", "--code", "--config", private)
    assert (out / "reference_data" / "config.toml").read_bytes() == private.read_bytes()


def test_a_plain_bundle_writes_no_competition_key(tmp_path):
    out = make_bundle(tmp_path, "plain")
    assert not (out / "reference_data" / "config.toml").exists()
    private = tmp_path / "private.toml"
    private.write_text("[meteor]\nalpha = 0.8\n", encoding="utf-8")
    out = make_bundle(tmp_path, "given", "--config", private)
    assert (out / "reference_data" / "config.toml").read_bytes() == private.read_bytes()


# --- the pages ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_code_competitions_pages_say_how_to_get_the_scorer_and_their_commands_run(tmp_path):
    """The overview and the starting kit's README say how to get the scorer that ``validate`` needs, as the
    file competition's pages do (its image with ``docker run``, or the package copied out of the image), and
    every runner and scorer command they show runs as written in the folder that holds ``public_data/``: the
    copy (its Python, run here on this package), the runner's run and ``validate`` with the copied package."""
    docker = f'    docker run --rm -v "$PWD:/work" -w /work {IMAGE} \\\n        python3 -m scorer validate'
    copy = f'    docker run --rm -v "$PWD:/work" {IMAGE} \\\n        python3 -c "'
    installed = (
        "    python3 -m pip install -r scorer/dependencies.txt\n\nthen, in the same folder:\n\n"
        "    python -m scorer validate --data public_data --submission "
    )
    plain = (make_bundle(tmp_path, "plain") / "pages" / "overview.md").read_text(encoding="utf-8")
    assert f"{docker} --data public_data --submission my_submission.zip\n" in plain
    assert f"{installed}my_submission.zip" in plain and copy in plain
    out = make_bundle(tmp_path, "code", "--code")
    pages = {
        name: (out / name).read_text(encoding="utf-8")
        for name in ("pages/overview.md", "starting_kit/README.md")
    }
    with zipfile.ZipFile(out / "my_upload.zip", "w") as upload:  # what the README's zip command makes
        for path in sorted((out / "starting_kit" / "team_code").iterdir()):
            upload.write(path, f"team_code/{path.name}")
    for name, page in pages.items():
        assert f"{docker} --data public_data --submission my_run\n" in page, name
        assert f"{installed}my_run\n" in page, name
        assert "folder that holds `public_data/` and `my_run/`" in " ".join(page.split()), name
        snippet = page.split(copy)[1].split("\n")[0]
        assert snippet.endswith('"')  # the copy's Python, run here with the folder for /work
        code = shlex.split(snippet[:-1].replace("'/work/scorer'", "'scorer'").join('""'))[0]
        shutil.rmtree(out / "scorer", ignore_errors=True)
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=out, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert (out / "scorer" / "dependencies.txt").is_file() and (out / "scorer" / "__main__.py").is_file()
        shown = [
            line.strip() for line in page.splitlines() if line.startswith(("    python ", "    python3 "))
        ]
        shown = [line for line in shown if "pip install" not in line]
        runner_first = [["python3", "starting_kit/runner.py"], ["python", "-m"]]
        assert [c.split()[:2] for c in shown] == runner_first, name
        shutil.rmtree(out / "my_run", ignore_errors=True)
        for command in shown:
            argv = [sys.executable, *shlex.split(command)[1:]]
            done = subprocess.run(argv, cwd=out, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, (name, command, done.stderr[-2000:])
        assert "valid: 40 dialogues, 66 turns" in done.stdout


# --- rebuilding ------------------------------------------------------------------------------------------


def test_a_plain_bundle_over_a_code_bundle_leaves_nothing_of_it(tmp_path):
    out = make_bundle(tmp_path, "bundle", "--code")
    assert (out / "ingestion_program").is_dir() and (out / "starting_kit" / "team_code").is_dir()
    make_bundle(tmp_path, "bundle")
    fresh = make_bundle(tmp_path, "fresh")
    for gone in ("ingestion_program", "input_data", "starting_kit/team_code", "starting_kit/runner.py"):
        assert not os.path.lexists(out / gone), gone
    assert bundle_listing(out) == bundle_listing(fresh)
    folders = [p for p in out.rglob("*") if p.is_dir()]
    assert folders and all(any(p.iterdir()) for p in folders)  # no folder left empty


def test_a_rebuild_removes_the_media_the_data_no_longer_names(tmp_path):
    data = copy_of_public(tmp_path)
    out = make_bundle(tmp_path, "bundle", "--code", data=data)
    rows = [d for d in read_jsonl(data / "dialogues.jsonl") if d["type"] != "Audio2Text"]
    (data / "dialogues.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    answers = [
        a for a in read_jsonl(data / "answers.jsonl") if a["dialog_id"] in {r["dialog_id"] for r in rows}
    ]
    (data / "answers.jsonl").write_text(
        "".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers), encoding="utf-8"
    )
    for k in range(21, 31):
        (data / "audio" / f"00{k}.wav").unlink()
    (out / "public_data" / "stray.txt").write_text("left by hand", encoding="utf-8")
    make_bundle(tmp_path, "bundle", "--code", data=data)
    for folder in ("public_data", "reference_data", "input_data"):
        audio = sorted(p.name for p in (out / folder / "audio").iterdir())
        assert audio == [f"00{k}.wav" for k in range(31, 41)], folder  # the mixed dialogues' only
    assert not (out / "public_data" / "stray.txt").exists()


# --- the starting kit's model -------------------------------------------------------------------------------


def kit_module(tmp_path: Path):
    """The starting kit's team_code/generate.py from a bundle written into ``tmp_path``, imported."""
    out = make_bundle(tmp_path, "bundle", "--code")
    path = out / "starting_kit" / "team_code" / "generate.py"
    spec = importlib.util.spec_from_file_location("kit_generate_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shuffled(text: str, rng: random.Random) -> str:
    """``text``'s whitespace-separated words in another order (as the runner's probes)."""
    words = text.split()
    order = list(words)
    while order == words:
        rng.shuffle(order)
    return " ".join(order)


def test_the_kits_model_finds_a_text_likelier_than_its_words_shuffled(tmp_path):
    kit = kit_module(tmp_path)
    model, tokenizer = kit.setup_model_and_tokenizer()
    rng = random.Random(12345)
    references = [
        v for row in read_jsonl(PUBLIC / "answers.jsonl") for turn in row["references"] for v in turn
    ]
    long = [t for t in references if len(t.split()) >= 5 and len(set(t.split())) > 1]
    assert len(long) >= 40
    higher = [
        kit.get_ppl(model, tokenizer, ([], shuffled(t, rng)), []) > kit.get_ppl(model, tokenizer, ([], t), [])
        for t in long
        for _ in range(3)
    ]
    assert sum(higher) / len(higher) > 0.9  # the audit's probe share, far above chance


def test_the_kits_model_is_not_certain_of_answers_it_does_not_know(tmp_path):
    """No turn's target gets a perplexity near 1 (the audit's ``overconfident``: perplexity at most 1.2 with a
    METEOR below 0.5 on more than a fifth of such turns): the kit ships no answer of the data."""
    kit = kit_module(tmp_path)
    model, tokenizer = kit.setup_model_and_tokenizer()
    rows = read_jsonl(PUBLIC / "answers.jsonl")
    known = set(
        (tmp_path / "bundle" / "starting_kit" / "team_code" / "texts.txt").read_text("utf-8").splitlines()
    )
    assert len(known) >= 200 and not known & {v for row in rows for turn in row["references"] for v in turn}
    dialogues = {d["dialog_id"]: d for d in read_jsonl(PUBLIC / "dialogues.jsonl")}
    values = []
    for row in rows:
        turns = dialogues[row["dialog_id"]]["turns"]
        targets = [variants[0] for variants in row["references"]]
        for i, query in enumerate(turns):
            history = list(zip(turns[:i], targets[:i]))
            values.append(kit.get_ppl(model, tokenizer, (query, targets[i]), history))
    assert all(isinstance(v, float) and v > 1.2 for v in values)
    assert len(set(values)) >= len(values) - 5  # real values, not a constant
    answer = kit.generate_text(model, tokenizer, turns[0], [])
    # the question's words, then the words of the most texts that the answer lacks
    assert answer == "Какое животное на фото и какой звук оно издаёт на записи в это по"
    asked = [[{"type": "text", "content": "Холодно ли там?"}, {"type": "image", "content": "/x.jpg"}]]
    assert kit.generate_text(model, tokenizer, asked[0], []) == "Да, холодно ли там на в и"


def test_a_network_allowed_competition_drops_offline(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[competition]\nnetwork = "allowed"\n', encoding="utf-8")
    out = make_bundle(tmp_path, "net", "--config", config, "--code")
    command = yaml.safe_load((out / "ingestion_program" / "metadata.yaml").read_text("utf-8"))["command"]
    assert "--offline" not in command and command.endswith("--step-timeout 540")
    assert tomllib.loads((out / "reference_data" / "config.toml").read_text("utf-8"))["competition"] == {
        "network": "allowed",
        "submissions": "code",
    }


def test_the_pages_say_what_a_code_competition_hides_and_forbid_failing_on_purpose(tmp_path):
    out = make_bundle(tmp_path, "code", "--code")
    overview = " ".join((out / "pages" / "overview.md").read_text(encoding="utf-8").split())
    assert "each figure rounded to 4 decimals" in overview
    assert "The scoring step's output folder and its detailed results are hidden" in overview
    assert "`the team's code failed in the scoring step`" in overview
    terms = " ".join((out / "pages" / "terms.md").read_text(encoding="utf-8").split())
    assert "Do not make an upload fail on purpose" in terms
    files = make_bundle(tmp_path, "files")
    spec = yaml.safe_load((files / "competition.yaml").read_text(encoding="utf-8"))
    assert spec["enable_detailed_results"] is True
    assert "fail on purpose" not in (files / "pages" / "terms.md").read_text(encoding="utf-8")
    assert all("hide_score_output" not in phase for phase in spec["phases"])
