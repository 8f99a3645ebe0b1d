"""Contract section 10, "The answers never leave": in the scoring step of a code competition the team's code
can read every reference variant, so each channel from it to what a participant sees is closed or bounded.
Each test is an attack written as a team would write it (a real ``team_code/generate.py`` run by the real
scoring step), and the step fails closed (exit 1 with ``OUTPUT`` emptied, or exit 2 for a network) or
posts only what an honest run posts."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from conftest import PUBLIC, ROOT, codalab_step, code_step_input

from scorer.runner.network import network_refusal

pytestmark = pytest.mark.slow

#: Every reference variant of the example: none may reach what a participant sees.
VARIANTS = [
    variant
    for line in (PUBLIC / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
    for turn in json.loads(line)["references"]
    for variant in turn
    if len(variant) > 25
]


def codalab(
    root: Path, out: Path, *extra: str, timeout: float = 180, **kwargs
) -> subprocess.CompletedProcess:
    """:func:`codalab_step` with ``--jobs 1`` and 180 s unless told, into ``out``, made first."""
    out.mkdir(exist_ok=True)
    return codalab_step(root, out, "--jobs", "1", *extra, timeout=timeout, **kwargs)


def shown(out: Path, done: subprocess.CompletedProcess) -> str:
    """Everything a participant could see of the step: its streams and every file left in OUTPUT."""
    text = done.stdout + done.stderr
    for path in sorted(out.rglob("*")) if out.is_dir() else []:
        if path.is_file() and not path.is_symlink():
            text += path.read_text(encoding="utf-8", errors="replace")
    return text


def assert_failed_closed(out: Path, done: subprocess.CompletedProcess) -> None:
    """Exit 1, OUTPUT empty (a page the code wrote included), no reference text anywhere."""
    assert done.returncode == 1, done.stderr
    assert sorted(p.name for p in out.iterdir()) == []
    text = shown(out, done)
    assert not [v for v in VARIANTS if v in text]


# --- the page: what the code writes into OUTPUT never survives a surprise -----------------------------------


def test_a_page_of_answers_and_a_sigterm_to_the_scorer_leave_an_empty_output(tmp_path):
    attack = """
    import json, signal, time
    with open(os.path.join(ref, "answers.jsonl"), encoding="utf-8") as fh:
        answers = fh.read()
    with open(os.path.join(out, "detailed_results.html"), "w", encoding="utf-8") as fh:
        fh.write("<pre>" + answers + "</pre>")
    os.makedirs(os.path.join(out, "deep", "deeper"))
    with open(os.path.join(out, "deep", "deeper", "answers.txt"), "w", encoding="utf-8") as fh:
        fh.write(answers)
    os.kill(os.getppid(), signal.SIGTERM)
    time.sleep(2)
    """
    root = code_step_input(tmp_path, attack)
    out = tmp_path / "out"
    done = codalab(root, out)
    assert "error: the scoring step stopped (it received SIGTERM)" in done.stderr
    assert_failed_closed(out, done)


def test_a_page_of_answers_left_by_an_honest_run_is_replaced_by_the_scored_page(tmp_path):
    attack = """
    with open(os.path.join(ref, "answers.jsonl"), encoding="utf-8") as fh:
        answers = fh.read()
    with open(os.path.join(out, "detailed_results.html"), "w", encoding="utf-8") as fh:
        fh.write(answers)
    with open(os.path.join(out, "leak.txt"), "w", encoding="utf-8") as fh:
        fh.write(answers)
    """
    root = code_step_input(tmp_path, attack)
    out = tmp_path / "out"
    done = codalab(root, out)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["detailed_results.html", "scores.json", "scores.txt"]
    assert not [v for v in VARIANTS if v in shown(out, done)]


# --- a swapped OUTPUT ---------------------------------------------------------------------------------------


def test_an_output_folder_replaced_by_one_of_forged_scores_is_a_surprise(tmp_path):
    attack = """
    os.rename(out, out + ".honest")
    os.mkdir(out)
    with open(os.path.join(out, "scores.json"), "w") as fh:
        fh.write('{"status": "ok", "integral": 0.999}')
    """
    root = code_step_input(tmp_path, attack)
    out = tmp_path / "out"
    done = codalab(root, out)
    assert done.returncode == 1, done.stderr
    assert "the output folder was renamed or replaced while the code ran" in done.stderr
    # the folder the step held is emptied; the forged one is never written to, and the step's exit is 1,
    # after which the platform posts nothing
    assert list((tmp_path / "out.honest").iterdir()) == []
    assert sorted(p.name for p in out.iterdir()) == ["scores.json"]


def test_an_output_folder_renamed_away_and_left_missing_is_a_surprise(tmp_path):
    root = code_step_input(tmp_path, 'os.rename(out, out + ".away")')
    out = tmp_path / "out"
    done = codalab(root, out)
    assert done.returncode == 1, done.stderr
    assert "the output folder was renamed or removed while the code ran" in done.stderr
    assert list((tmp_path / "out.away").iterdir()) == []


# --- special files in the upload ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "zero", "socket"])
def test_an_upload_holding_a_special_file_is_its_fault_and_never_opened(tmp_path, kind):
    root = code_step_input(tmp_path)
    place = root / "res" / "team_code" / "weights.bin"
    if kind == "fifo":
        os.mkfifo(place)
    elif kind == "zero":
        place.symlink_to("/dev/zero")
    else:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(place))
        server.close()
    out = tmp_path / "out"
    done = codalab(root, out, timeout=60)  # a FIFO opened would hang; /dev/zero read would fill the memory
    assert done.returncode == 1, done.stderr
    assert "team_code/weights.bin: not a regular file or a folder" in done.stderr
    assert json.loads((out / "scores.json").read_text(encoding="utf-8"))["status"] == "invalid"


# --- the fault: one fixed line ------------------------------------------------------------------------------


def test_a_fault_in_the_scoring_step_is_one_fixed_line_with_no_kind_or_place(tmp_path):
    attack = """
    raise ValueError(target)
    """
    root = code_step_input(tmp_path, attack)
    out = tmp_path / "out"
    done = codalab(root, out)
    assert done.returncode == 1, done.stderr
    assert "team_code: the team's code failed in the scoring step" in done.stderr
    for word in ("exception", "ValueError", "get_ppl", "d-0001", "turn 0", "phase ppl"):
        assert word not in done.stderr
    verdict = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    assert verdict["status"] == "invalid"
    assert [e["message"] for e in verdict["errors"]] == ["the team's code failed in the scoring step"]
    assert not [v for v in VARIANTS if v in shown(out, done)]


# --- the time: a whole phase bounded ------------------------------------------------------------------------


def test_a_slow_get_ppl_is_ended_by_the_step_timeout_with_the_fixed_line(tmp_path):
    began = tmp_path / "get_ppl-began"  # outside OUTPUT, which a surprise empties
    root = code_step_input(tmp_path, f"open({str(began)!r}, 'w').close()\nimport time\ntime.sleep(600)")
    out = tmp_path / "out"
    done = codalab(root, out, "--step-timeout", "3", "--turn-timeout", "300", timeout=120)
    assert done.returncode == 1, done.stderr
    assert began.exists()  # the limit ended a call, not the import or the setup
    assert "team_code: the team's code failed in the scoring step" in done.stderr
    assert "timeout" not in done.stderr


# --- the figures: rounded to posted_decimals ----------------------------------------------------------------


def _decimals(value: float) -> int:
    text = repr(value)
    return len(text.split(".")[1]) if "." in text and "e" not in text else 0


@pytest.mark.parametrize("decimals", [4, 2])
def test_every_posted_figure_is_rounded_to_posted_decimals(tmp_path, decimals):
    config = f"posted_decimals = {decimals}\n" if decimals != 4 else ""
    root = code_step_input(tmp_path, config=config)
    text = (root / "ref" / "config.toml").read_text(encoding="utf-8")
    (root / "ref" / "config.toml").write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    done = codalab(root, out)
    assert done.returncode == 0, done.stderr
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    numbers = [v for v in scores.values() if isinstance(v, float)]
    numbers += [v for t in scores["by_type"].values() for v in t.values() if isinstance(v, float)]
    assert len(numbers) > 10
    assert max(_decimals(v) for v in numbers) <= decimals
    lines = (out / "scores.txt").read_text(encoding="utf-8").splitlines()
    posted = {name: float(value) for name, value in (line.split(": ") for line in lines)}
    assert posted == {name: scores[name] for name in posted}
    # the terminal's table shows the same rounded figures
    assert f"{scores['integral']:.4f}" in done.stdout


def test_turn_details_in_a_code_competition_is_a_configuration_error(tmp_path):
    root = code_step_input(tmp_path, config="[participants]\nturn_details = true\n")
    out = tmp_path / "out"
    done = codalab(root, out)
    assert done.returncode == 2, done.stderr
    assert "participants.turn_details and competition.submissions" in done.stderr


# --- the network --------------------------------------------------------------------------------------------


def _interfaces_up_here() -> list[str]:
    return [name for _, name in socket.if_nameindex() if name != "lo"]


def test_the_step_refuses_a_network_and_runs_in_a_namespace_without_one(tmp_path):
    if network_refusal() is None or shutil.which("unshare") is None:
        pytest.fail("this test needs an interface up here and unshare(1) to make a namespace without one")
    root = code_step_input(tmp_path)
    config = root / "ref" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("allowed", "refused"), encoding="utf-8")
    out = tmp_path / "out"
    done = codalab(root, out)
    assert done.returncode == 2, done.stderr
    assert "COMPETITION_CONTAINER_NETWORK_DISABLED=True" in done.stderr
    assert any(name in done.stderr for name in _interfaces_up_here())
    assert not (out / "scores.txt").exists()
    # in a network namespace of its own (only loopback), the same step runs the code and scores
    isolated = codalab(root, tmp_path / "isolated", python=["unshare", "--net", sys.executable])
    assert isolated.returncode == 0, isolated.stderr


def test_the_prediction_steps_network_fault_is_repeated_as_exit_2(tmp_path):
    root = code_step_input(tmp_path)
    config = root / "ref" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("allowed", "refused"), encoding="utf-8")
    shutil.rmtree(root / "res" / "team_code")
    fault = {"kind": "network", "phase": "generate", "function": None, "dialog_id": None, "turn": None}
    (root / "res" / "run_fault.json").write_text(json.dumps(fault), encoding="utf-8")
    out = tmp_path / "out"
    done = codalab(root, out, python=["unshare", "--net", sys.executable])
    assert done.returncode == 2, done.stderr
    assert "the prediction step refused to run the team's code" in done.stderr
    assert "team_code" not in done.stderr.replace("the team's code", "")


# --- the reads: nothing read after the code starts ----------------------------------------------------------


def _environment_copy(tmp_path: Path) -> Path:
    """A copy of every installed package the step loads (found by running it once), the scorer's own
    package, and the distributions' metadata: a folder for ``PYTHONPATH`` under ``python -S``."""
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    probe = tmp_path / "probe"
    root = code_step_input(probe)
    listing = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys
            from scorer import cli
            out = {str(probe / "out")!r}
            code = cli.main(["codalab", {str(root)!r}, out, "--no-synonyms", "--jobs", "1"])
            assert code == 0, code
            print("\\n".join(sorted({{m.__file__ for m in list(sys.modules.values())
                                     if getattr(m, "__file__", None)}})))
        """)],
        capture_output=True, text=True, cwd=ROOT, timeout=180,
    )  # fmt: skip
    assert listing.returncode == 0, listing.stderr
    (probe / "out").mkdir(exist_ok=True)
    tops = set()
    for line in listing.stdout.splitlines():
        path = Path(line).resolve()
        if site in path.parents:
            tops.add(path.relative_to(site).parts[0])
    copy = tmp_path / "site"
    copy.mkdir()
    for name in sorted(tops | {p.name for p in site.iterdir() if p.name.endswith((".dist-info", ".libs"))}):
        source = site / name
        if source.is_dir():
            shutil.copytree(source, copy / name, symlinks=True)
        elif source.is_file():
            shutil.copy2(source, copy / name)
    shutil.copytree(ROOT / "scorer", copy / "scorer", ignore=shutil.ignore_patterns("__pycache__"))
    assert "matplotlib" in tops and "numpy" in tops
    return copy


REWRITE_EVERYTHING = """
site = os.environ["ATTACK_SITE"]
filler = (target * 64).encode("utf-8") or b"0"
for folder, _, files in os.walk(site):
    for name in files:
        path = os.path.join(folder, name)
        if os.path.islink(path):
            continue
        size = os.path.getsize(path)
        data = (filler * (size // len(filler) + 1))[:size]
        if name.endswith(".so") or ".so." in name:
            # an executable mapping is the interpreter's (contract section 10): replaced, not rewritten
            with open(path + ".new", "wb") as fh:
                fh.write(data)
            os.replace(path + ".new", path)
        else:
            with open(path, "r+b") as fh:  # the same file, so a descriptor held open reads the new bytes
                fh.write(data)
"""


def test_a_get_ppl_rewriting_every_installed_file_changes_no_output_byte(tmp_path):
    copy = _environment_copy(tmp_path)
    python = [sys.executable, "-S"]
    env = {"PYTHONPATH": str(copy), "ATTACK_SITE": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    clean_root = code_step_input(tmp_path / "clean")
    clean = codalab(clean_root, tmp_path / "clean" / "out", python=python, env=env, cwd=tmp_path)
    assert clean.returncode == 0, clean.stderr
    attacked_root = code_step_input(tmp_path / "attacked", REWRITE_EVERYTHING)
    attacked = codalab(attacked_root, tmp_path / "attacked" / "out", python=python, env=env, cwd=tmp_path)
    assert attacked.returncode == 0, attacked.stderr
    # the attack ran: the copy's fonts now hold the targets' bytes
    font = next(copy.rglob("DejaVuSans.ttf")).read_bytes()
    assert re.search(rb"[\xd0\xd1][\x80-\xbf]", font[:1000])
    clean_files = {p.name: p.read_bytes() for p in (tmp_path / "clean" / "out").iterdir()}
    attacked_files = {p.name: p.read_bytes() for p in (tmp_path / "attacked" / "out").iterdir()}
    assert sorted(clean_files) == ["detailed_results.html", "scores.json", "scores.txt"]
    assert attacked_files == clean_files
    assert "<svg" in clean_files["detailed_results.html"].decode("utf-8")
