"""Contract section 10, what the runner reads that it did not make: the upload's zip, the code's replies and
values, the turns kept in ``.run-state/``; and what it says about a trial run, a resumed run and a changed
code. None of it ends in exit 3."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import textwrap
import zipfile
from pathlib import Path

import pytest
from helpers import PUBLIC, ROOT, TOY_TEAM, run_cli, run_process, toy_team

from scorer.bundle.runner_file import runner_file

pytestmark = pytest.mark.slow


def zipped(tmp_path: Path, patch=None) -> Path:
    archive = tmp_path / "upload.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as z:
        z.writestr("team_code/__init__.py", "")
        z.writestr("team_code/generate.py", TOY_TEAM)
    if patch is not None:
        data = bytearray(archive.read_bytes())
        patch(data)
        archive.write_bytes(bytes(data))
    return archive


def _headers(data: bytearray, signature: bytes) -> list[int]:
    found, at = [], data.find(signature)
    while at >= 0:
        found.append(at)
        at = data.find(signature, at + 1)
    return found


def encrypted(data: bytearray) -> None:
    for at in _headers(data, b"PK\x03\x04"):
        data[at + 6] |= 1
    for at in _headers(data, b"PK\x01\x02"):
        data[at + 8] |= 1


def unknown_method(data: bytearray) -> None:
    for at in _headers(data, b"PK\x03\x04"):
        struct.pack_into("<H", data, at + 8, 99)
    for at in _headers(data, b"PK\x01\x02"):
        struct.pack_into("<H", data, at + 10, 99)


def bad_crc(data: bytearray) -> None:
    at = data.find(b"setup_model_and_tokenizer")
    data[at] ^= 0x20


@pytest.mark.parametrize(
    "patch, words",
    [(bad_crc, "is damaged"), (encrypted, "is encrypted"), (unknown_method, "compression method 99")],
    ids=["bad-crc", "encrypted", "unknown-method"],
)
def test_a_zip_the_runner_cannot_unpack_is_the_uploads_fault(tmp_path, patch, words):
    done = run_process(
        "--data", PUBLIC, "--trusted-code", "--code", zipped(tmp_path, patch), "--output", tmp_path / "out",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "error: the team's code failed (upload" in done.stderr and words in done.stderr
    assert "the zip's entry 'team_code/" in done.stderr or "the zip cannot be read" in done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["run_fault.json"]


def test_a_zip_holding_a_name_as_file_and_folder_is_the_uploads_fault(tmp_path):
    archive = tmp_path / "upload.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("team_code/__init__.py", "")
        z.writestr("team_code/generate.py", TOY_TEAM)
        z.writestr("team_code/data", "a file")
        z.writestr("team_code/data/weights.bin", "and a folder")
    done = run_process("--data", PUBLIC, "--trusted-code", "--code", archive, "--output", tmp_path / "out")
    assert done.returncode == 1, done.stderr
    assert "'team_code/data' both as a file and as a folder" in done.stderr


def test_an_answer_holding_a_lone_surrogate_is_a_wrong_value_of_the_code(tmp_path):
    source = TOY_TEAM.replace('return "Ответ " + str(len(history_list))', 'return "Ответ \\ud800"')
    done = run_process(
        "--data", PUBLIC, "--trusted-code", "--code", toy_team(tmp_path / "t", source),
        "--output", tmp_path / "out",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "(wrong_value; phase generate, function generate_text, dialog_id 'd-0001', turn 0)" in done.stderr
    assert "lone surrogate" in done.stderr


class_0d = """
class Scalar:  # what a 0-d tensor is to float(): a number
    def __init__(self, value):
        self.value = value
    def __float__(self):
        return float(self.value)
    def __repr__(self):
        return "tensor(%r)" % self.value
"""


def test_a_value_whose_float_is_a_number_is_a_perplexity_and_a_wrong_one_says_what_to_return(tmp_path):
    source = class_0d + TOY_TEAM.replace("return 2.0 + len", "return Scalar(2.0 + len")
    source = source.replace("% 11\n", "% 11)\n")
    done = run_process(
        "--data", PUBLIC, "--trusted-code", "--code", toy_team(tmp_path / "t", source),
        "--output", tmp_path / "out",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    plain = run_process(
        "--data", PUBLIC, "--trusted-code", "--code", toy_team(tmp_path / "plain"),
        "--output", tmp_path / "plain-out",
    )  # fmt: skip
    assert plain.returncode == 0
    for name in ("ppl_output.json", "ppl_probes.json"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "plain-out" / name).read_bytes()
    wrong = TOY_TEAM.replace("return 2.0 + len(cur_query_tuple[1]) % 11", "return [2.0]")
    done = run_process(
        "--data", PUBLIC, "--trusted-code", "--code", toy_team(tmp_path / "w", wrong),
        "--output", tmp_path / "w-out",
    )  # fmt: skip
    assert done.returncode == 1
    assert "it returned list [2.0]; it must return a real number" in done.stderr
    assert "float(x) or x.item()" in done.stderr


def test_resume_says_what_it_reuses_and_refuses_other_code(tmp_path):
    failing = TOY_TEAM.replace(
        "    return 2.0 + len",
        "    if cur_query_tuple[1] == STOP: raise RuntimeError('x')\n    return 2.0 + len",
    )
    answers = [
        json.loads(x) for x in (PUBLIC / "answers.jsonl").read_text(encoding="utf-8").splitlines() if x
    ]
    stop = answers[2]["references"][0][0]
    code = toy_team(tmp_path / "t", f"STOP = {stop!r}\n" + failing)
    out = tmp_path / "out"
    first = run_process("--data", PUBLIC, "--trusted-code", "--code", code, "--output", out)
    assert first.returncode == 1
    state = out / ".run-state" / "ppl.jsonl"
    kept = len(state.read_text(encoding="utf-8").splitlines()) - 1
    assert kept >= 2
    # forged and torn lines are dropped (recomputed), the rest reused
    text = state.read_bytes()
    state.write_bytes(
        text
        + json.dumps({"dialog_id": "d-0001", "turn": 1, "value": float("nan")}).encode() + b"\n"
        + json.dumps({"dialog_id": "d-0001", "turn": 1, "value": -5.0}).encode() + b"\n"
        + b'{"dialog_id": "d-0001", "turn": 1, "value": "abc"}\n'
        + b'{"dialog_id": "d-0001", "turn": 1, "value": 3.0}'[:-3] + "Ж".encode()[:1] + b"\n"
    )  # fmt: skip
    again = run_process("--data", PUBLIC, "--trusted-code", "--code", code, "--output", out, "--resume")
    assert again.returncode == 1
    assert f"run: ppl: reusing {kept} kept turn(s) from" in again.stderr
    # the code changed: refused, saying which and how to start over
    (code / "team_code" / "generate.py").write_text(textwrap.dedent(TOY_TEAM), encoding="utf-8")
    changed = run_process("--data", PUBLIC, "--trusted-code", "--code", code, "--output", out, "--resume")
    assert changed.returncode == 2
    assert (
        "computed with other team_code/ (the code)" in changed.stderr and "without --resume" in changed.stderr
    )
    fresh = run_process("--data", PUBLIC, "--trusted-code", "--code", code, "--output", out)
    assert fresh.returncode == 0, fresh.stderr
    assert "discarding" in fresh.stderr
    whole = tmp_path / "whole"
    assert run_process("--data", PUBLIC, "--trusted-code", "--code", code, "--output", whole).returncode == 0
    for name in ("submission.jsonl", "ppl_output.json"):
        assert (out / name).read_bytes() == (whole / name).read_bytes()
    values = json.loads((out / "ppl_output.json").read_text(encoding="utf-8"))
    assert all(v >= 1 for vs in values.values() for v in vs)


@pytest.mark.parametrize("resume", [False, True], ids=["fresh", "resume"])
def test_a_link_or_a_fifo_planted_as_kept_turns_is_never_followed(tmp_path, resume):
    code = toy_team(tmp_path / "t")
    out = tmp_path / "out"
    (out / ".run-state").mkdir(parents=True)
    target = tmp_path / "organizers-file.txt"
    target.write_text("not the runner's\n", encoding="utf-8")
    (out / ".run-state" / "generate.jsonl").symlink_to(target)
    os.mkfifo(out / ".run-state" / "ppl.jsonl")
    # a FIFO opened would block the run until the process's limit (120 s) fails the test
    resumed = ["--resume"] if resume else []
    done = run_process("--data", PUBLIC, "--trusted-code", "--code", code, "--output", out, *resumed)
    assert done.returncode == 0, done.stderr
    assert target.read_text(encoding="utf-8") == "not the runner's\n"  # never written through the link
    assert "kept turn(s)" not in done.stderr  # neither held a turn the runner kept
    whole = tmp_path / "whole"
    assert run_process("--data", PUBLIC, "--trusted-code", "--code", code, "--output", whole).returncode == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in whole.iterdir())
    for name in ("submission.jsonl", "ppl_output.json", "ppl_probes.json", "ppl_targets.json"):
        assert (out / name).read_bytes() == (whole / name).read_bytes()


def test_limit_is_a_trial_on_the_first_dialogues_and_says_so(tmp_path):
    out = tmp_path / "out"
    done = run_process(
        "--data", PUBLIC, "--trusted-code", "--code", toy_team(tmp_path / "t"), "--output", out,
        "--limit", "2",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "run: --limit 2: a trial on the first 2 of" in done.stderr
    rows = [json.loads(x) for x in (out / "submission.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["dialog_id"] for r in rows] == ["d-0001", "d-0002"]
    assert sorted(json.loads((out / "ppl_output.json").read_text(encoding="utf-8"))) == ["d-0001", "d-0002"]
    refused = run_process(
        "--data", PUBLIC, "--trusted-code", "--code", toy_team(tmp_path / "u"), "--output", tmp_path / "o2",
        "--limit", "0",
    )  # fmt: skip
    assert refused.returncode == 2


@pytest.mark.parametrize("flag", ["--turn-timeout", "--setup-timeout"])
def test_a_timeout_below_zero_is_a_usage_error_on_every_command(tmp_path, flag):
    done = run_process(
        "--data", PUBLIC, "--trusted-code", "--code", toy_team(tmp_path / "t"), "--output", tmp_path / "out",
        flag, "-5",
    )  # fmt: skip
    assert done.returncode == 2 and f"{flag} -5: give a positive number of seconds" in done.stderr
    root = tmp_path / "input"
    shutil.copytree(PUBLIC, root / "ref")
    shutil.copytree(tmp_path / "t", root / "res")
    assert run_cli("codalab", root, tmp_path / "scored", flag, "-5") == 2


def test_a_reference_data_error_is_exit_2_in_a_code_competitions_step(tmp_path, capsys):
    root = tmp_path / "input"
    shutil.copytree(PUBLIC, root / "ref")
    (root / "ref" / "config.toml").write_text('[competition]\nsubmissions = "code"\n', encoding="utf-8")
    lines = (root / "ref" / "dialogues.jsonl").read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    row["turns"] = []
    lines[1] = json.dumps(row, ensure_ascii=False)
    (root / "ref" / "dialogues.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    toy_team(root / "res")
    shutil.copy(ROOT / "submissions_examples" / "realistic" / "submission.jsonl", root / "res")
    capsys.readouterr()
    assert run_cli("codalab", root, tmp_path / "scored", "--no-synonyms") == 2
    err = capsys.readouterr().err
    assert "dialogues.jsonl" in err and "line 2" in err


def test_an_output_holding_the_code_or_the_data_is_refused(tmp_path):
    code = toy_team(tmp_path / "t")
    done = run_process("--data", PUBLIC, "--trusted-code", "--code", code, "--output", code)
    assert done.returncode == 2 and "holds --code or --data" in done.stderr
    assert (code / "team_code" / "generate.py").exists()


def test_the_probe_calls_follow_the_datas_audit_settings_and_the_runners_defaults_are_the_configs(tmp_path):
    from scorer.inputs.config import load_config
    from scorer.runner.names import PROBE_MIN_WORDS, PROBE_TURNS

    audit = load_config().audit
    assert (PROBE_TURNS, PROBE_MIN_WORDS) == (audit.probe_turns, audit.probe_min_words)
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    (data / "config.toml").write_text("[audit]\nprobe_turns = 3\nprobe_min_words = 6\n", encoding="utf-8")
    out = tmp_path / "out"
    assert (
        run_process(
            "--data", data, "--trusted-code", "--code", toy_team(tmp_path / "t"), "--output", out
        ).returncode
        == 0
    )
    probes = json.loads((out / "ppl_probes.json").read_text(encoding="utf-8"))
    probed = [(d, i) for d, vs in probes.items() for i, v in enumerate(vs) if v is not None]
    assert len(probed) == 3
    answers = {
        row["dialog_id"]: [v[0] for v in row["references"]]
        for row in map(json.loads, (PUBLIC / "answers.jsonl").read_text(encoding="utf-8").splitlines())
    }
    assert all(len(answers[d][i].split()) >= 6 for d, i in probed)


def oldest_python() -> str:
    """A Python 3.8 of this machine that runs (the oldest the runner supports): pyenv's own, then a
    ``python3.8`` on the PATH, each tried (a pyenv shim with no 3.8 selected exits 127); the test is skipped,
    saying so, where there is none."""
    import glob

    pyenv = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates = sorted(glob.glob(os.path.join(pyenv, "versions", "3.8*", "bin", "python3.8")))
    candidates += [p for p in (shutil.which("python3.8"),) if p]
    for candidate in candidates:
        try:
            tried = subprocess.run(
                [candidate, "-I", "-c", "import sys; print(sys.version_info[:2] == (3, 8))"],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
        except OSError:
            continue
        if tried.returncode == 0 and tried.stdout.strip() == "True":
            return candidate
    pytest.skip(f"no Python 3.8 runs on this machine (tried: {', '.join(candidates) or 'none found'})")


def test_the_runner_alone_runs_on_the_oldest_python_it_supports(tmp_path):
    isolated = tmp_path / "runner.py"
    isolated.write_bytes(runner_file())  # the one file a bundle ships
    out = tmp_path / "out"
    done = subprocess.run(
        [oldest_python(), "-I", str(isolated), "--data", str(PUBLIC), "--code", str(toy_team(tmp_path / "t")),
         "--output", str(out), "--quiet", "--limit", "3", "--trusted-code"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "ppl_output.json", "ppl_probes.json", "ppl_targets.json", "submission.jsonl"
    ]  # fmt: skip
    assert "run: --trusted-code: the code runs beside" in done.stderr


def test_the_runner_alone_on_a_python_without_tomllib_refuses_a_configuration_it_finds(tmp_path):
    python = oldest_python()
    isolated = tmp_path / "runner.py"
    isolated.write_bytes(runner_file())  # the one file a bundle ships
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    (data / "config.toml").write_text("[audit]\nprobe_turns = 3\n", encoding="utf-8")
    given = tmp_path / "given.toml"
    given.write_text("[audit]\nprobe_turns = 3\n", encoding="utf-8")
    code = toy_team(tmp_path / "t")
    for where, extra in ((data, []), (PUBLIC, ["--config", str(given)])):
        out = tmp_path / f"out-{len(extra)}"
        done = subprocess.run(
            [python, "-I", str(isolated), "--data", str(where), "--code", str(code), "--output", str(out),
             "--phase", "ppl", *extra],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.splitlines()
        assert line.startswith("error: ") and "cannot read a configuration (it has no tomllib" in line
        assert "pass the options instead" in line and "python -m scorer run" in line
        assert not out.exists()  # refused before the run began
