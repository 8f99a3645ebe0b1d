"""Contract section 10, the scoring step of a code competition: the team's code can make its own upload
fail, never make it score. Each attack a team's code can make in the step (or through the prediction step)
ends with the step failing closed (exit 1, no scores.json, no scores.txt) or scoring honestly."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import PUBLIC, ROOT, attack_team, codalab_step, code_step_input, gone, process_state

from scorer import code_step

pytestmark = pytest.mark.slow

FIRST_VARIANTS = [
    json.loads(line)["references"]
    for line in (PUBLIC / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]
SECRETS = [turn[0] for dialogue in FIRST_VARIANTS for turn in dialogue if len(turn[0]) > 25]


def waits_for(path: Path) -> str:
    """Attack code that waits until a process it forked has written ``path`` (however busy the machine)."""
    return f"""
    import time
    for _ in range(500):
        if os.path.exists({str(path)!r}):
            break
        time.sleep(0.01)
    """


def runner_run(*args: object, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scorer.runner", *map(str, args), "--quiet"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env={**os.environ, **(env or {})},
    )  # fmt: skip


def honest_integral(tmp_path: Path) -> float:
    root = code_step_input(tmp_path / "honest")
    done = codalab_step(root, tmp_path / "honest" / "out")
    assert done.returncode == 0, done.stderr
    return json.loads((tmp_path / "honest" / "out" / "scores.json").read_text(encoding="utf-8"))["integral"]


def assert_no_scores(out: Path, done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 1, done.stderr
    assert not (out / "scores.json").exists() and not (out / "scores.txt").exists()


def assert_nothing_shown(out: Path, done: subprocess.CompletedProcess) -> None:
    shown = done.stdout + done.stderr
    if out.is_dir():
        shown += "".join(
            p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*") if p.is_file()
        )
    for secret in SECRETS:
        assert secret not in shown


# --- the prediction step: what the code or the upload leaves in the output ---------------------------------


def test_a_ppl_output_the_generate_phase_writes_is_removed_and_never_scored(tmp_path):
    out = tmp_path / "predicted"
    attack = """
    """
    source_dir = attack_team(tmp_path / "team", attack)
    source = (source_dir / "team_code" / "generate.py").read_text(encoding="utf-8")
    forged = source.replace(
        "def generate_text(model, tokenizer, cur_query_list, history_list):\n",
        "def generate_text(model, tokenizer, cur_query_list, history_list):\n"
        "    import json\n"
        '    with open(os.path.join(os.environ["ATTACK_OUTPUT"], "ppl_output.json"), "w") as fh:\n'
        '        fh.write("{}")\n',
    )
    (source_dir / "team_code" / "generate.py").write_text(forged, encoding="utf-8")
    done = runner_run("--data", PUBLIC, "--code", source_dir, "--output", out, "--phase", "generate",
                      "--keep-code", "--trusted-code", env={"ATTACK_OUTPUT": str(out)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["submission.jsonl", "team_code"]


def test_an_upload_of_files_copied_into_the_output_is_removed_and_the_step_repeats_the_fault(tmp_path):
    out = tmp_path / "predicted"
    out.mkdir()
    shutil.copy(ROOT / "submissions_examples" / "realistic" / "submission.jsonl", out)  # Codabench's copy
    shutil.copy(ROOT / "submissions_examples" / "realistic" / "ppl_output.json", out)
    upload = tmp_path / "upload"
    upload.mkdir()
    for name in ("submission.jsonl", "ppl_output.json"):
        shutil.copy(out / name, upload)
    done = runner_run(
        "--data", PUBLIC, "--code", upload, "--output", out, "--phase", "generate", "--keep-code",
        "--trusted-code",
    )  # fmt: skip
    assert done.returncode == 1 and "(missing" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["run_fault.json"]
    assert json.loads((out / "run_fault.json").read_text(encoding="utf-8")) == {
        "kind": "missing", "phase": None, "function": None, "dialog_id": None, "turn": None,
    }  # fmt: skip
    root = tmp_path / "input"
    shutil.copytree(PUBLIC, root / "ref")
    (root / "ref" / "config.toml").write_text(
        '[competition]\nsubmissions = "code"\nnetwork = "allowed"\n', encoding="utf-8"
    )  # this machine has a network: the check is test_s10_answers_never_leave.py's
    shutil.copytree(out, root / "res")
    scored = tmp_path / "scored"
    done = codalab_step(root, scored)
    assert done.returncode == 1
    assert "the prediction step failed: the team's code failed (missing)" in done.stderr
    assert json.loads((scored / "scores.json").read_text(encoding="utf-8"))["status"] == "invalid"
    assert "integral" not in (scored / "scores.json").read_text(encoding="utf-8")


@pytest.mark.parametrize("what", ["ppl_output", "no_code"])
def test_a_code_competition_never_scores_an_upload_of_files(tmp_path, what):
    root = tmp_path / "input"
    shutil.copytree(PUBLIC, root / "ref")
    (root / "ref" / "config.toml").write_text(
        '[competition]\nsubmissions = "code"\nnetwork = "allowed"\n', encoding="utf-8"
    )  # this machine has a network: the check is test_s10_answers_never_leave.py's
    res = root / "res"
    res.mkdir()
    for name in ("submission.jsonl", "ppl_output.json"):
        shutil.copy(ROOT / "submissions_examples" / "realistic" / name, res)
    if what == "no_code":
        (res / "ppl_output.json").unlink()
    else:
        attack_team(res)
    done = codalab_step(root, tmp_path / "out")
    assert done.returncode == 1
    expected = "not scored" if what == "ppl_output" else "holds no team_code/"
    assert expected in done.stderr
    assert "integral" not in (tmp_path / "out" / "scores.json").read_text(encoding="utf-8")


def test_a_files_competition_never_runs_code_whatever_res_holds(tmp_path):
    root = code_step_input(tmp_path, attack="open(os.environ['ATTACK_MARK'], 'w').write('ran')", code=False)
    mark = tmp_path / "ran"
    done = codalab_step(root, tmp_path / "out", env={"ATTACK_MARK": str(mark)})
    assert done.returncode == 1 and "ppl_output.json" in done.stderr
    assert not mark.exists()


def test_a_run_fault_json_that_is_not_the_runners_is_ignored():
    turns = {"d-0001": 2}
    for forged in (
        {"kind": "exception", "phase": "ppl", "function": "get_ppl", "dialog_id": "SECRET", "turn": 0},
        {"kind": "SECRET", "phase": None, "function": None, "dialog_id": None, "turn": None},
        {"kind": "exception", "phase": "ppl", "function": "get_ppl", "dialog_id": "d-0001", "turn": 7},
        {"kind": "exception", "phase": "ppl", "function": "get_ppl", "dialog_id": "d-0001", "turn": True},
        ["exception"],
    ):
        assert code_step._fault_text(forged, turns) is None
    good = {
        "kind": "timeout",
        "phase": "generate",
        "function": "generate_text",
        "dialog_id": "d-0001",
        "turn": 1,
    }
    assert (
        code_step._fault_text(good, turns)
        == "timeout; phase generate, function generate_text, dialog_id 'd-0001', turn 1"
    )


# --- the scoring step: replies, files, signals, limits ------------------------------------------------------


def test_a_fault_written_on_the_reply_pipe_shows_no_reference_text(tmp_path):
    attack = """
    import sys
    line = __import__("json").dumps({"fault": "exception", "function": target, "trace": target})
    os.write(int(sys.argv[4]), (line + "\\n").encode())
    """
    root = code_step_input(tmp_path, attack)
    out = tmp_path / "out"
    done = codalab_step(root, out)
    assert done.returncode == 1, done.stderr
    # a field of its own ("function") makes it no fault report of the protocol's; the place is the runner's
    # a phase that has the answers reports a fault by one fixed line: no kind, no place (contract section 10)
    assert "team_code: the team's code failed in the scoring step" in done.stderr
    assert "protocol" not in done.stderr and "d-0001" not in done.stderr
    assert_nothing_shown(out, done)
    assert json.loads((out / "scores.json").read_text(encoding="utf-8"))["status"] == "invalid"


def test_a_reply_that_is_not_json_is_a_protocol_fault_not_an_internal_error(tmp_path):
    attack = """
    import sys
    os.write(int(sys.argv[4]), ("not json " + target + "\\n").encode("utf-8") + b"\\xff\\n")
    """
    root = code_step_input(tmp_path, attack)
    out = tmp_path / "out"
    done = codalab_step(root, out)
    assert done.returncode == 1, done.stderr
    assert "team_code: the team's code failed in the scoring step" in done.stderr
    assert "protocol" not in done.stderr and "d-0001" not in done.stderr
    assert_nothing_shown(out, done)


def test_forged_scores_and_sigterm_to_the_scorer_leave_no_scores(tmp_path):
    attack = """
    import signal
    for name in ("scores.json", "scores.txt"):
        with open(os.path.join(out, name), "w") as fh:
            fh.write('{"status": "ok", "integral": 0.999}')
    os.kill(os.getppid(), signal.SIGTERM)
    import time
    time.sleep(2)
    """
    root = code_step_input(tmp_path, attack)
    out = tmp_path / "out"
    done = codalab_step(root, out)
    assert_no_scores(out, done)
    said = "error: the scoring step stopped (it received SIGTERM); it wrote no scores.json or scores.txt"
    assert said in done.stderr
    assert list(out.iterdir()) == [] or not any(p.name.startswith("scores") for p in out.iterdir())


def test_a_forged_file_and_a_daemon_leave_an_honest_score(tmp_path):
    pids = tmp_path / "pids"
    attack = f"""
    with open(os.path.join(out, "scores.json"), "w") as fh:
        fh.write('{{"status": "ok", "integral": 0.999}}')
    os.symlink("/etc/passwd", os.path.join(out, "details.csv"))
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            import time
            with open({str(pids)!r} + ".tmp", "w") as fh:
                fh.write(str(os.getpid()))
            os.replace({str(pids)!r} + ".tmp", {str(pids)!r})
            time.sleep(1.5)
            with open(os.path.join(out, "scores.json"), "w") as fh:
                fh.write('{{"status": "ok", "integral": 0.999}}')
            time.sleep(60)
        os._exit(0)
    """ + waits_for(pids)
    root = code_step_input(tmp_path, attack)
    out = tmp_path / "out"
    done = codalab_step(root, out)
    assert done.returncode == 0, done.stderr
    assert gone(int(pids.read_text()), within=2.0)  # alive, it rewrites scores.json at 1.5 s
    assert sorted(p.name for p in out.iterdir()) == ["detailed_results.html", "scores.json", "scores.txt"]
    assert json.loads((out / "scores.json").read_text(encoding="utf-8"))["integral"] == honest_integral(
        tmp_path
    )


@pytest.mark.parametrize("hard", [False, True], ids=["soft", "hard"])
def test_a_lowered_file_limit_never_lets_a_daemon_survive(tmp_path, hard):
    pids = tmp_path / "pids"
    attack = f"""
    import resource
    soft, high = resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE)
    resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (3, 3 if {hard} else high))
    if os.fork() == 0:
        os.setsid()
        with open({str(pids)!r}, "w") as fh:
            fh.write(str(os.getpid()))
        import time
        time.sleep(60)
        os._exit(0)
    """ + waits_for(pids)
    root = code_step_input(tmp_path, attack)
    out = tmp_path / "out"
    done = codalab_step(root, out)
    time.sleep(0.3)
    with pytest.raises(ProcessLookupError):
        os.kill(int(pids.read_text()), 0)
    if done.returncode == 0:  # the limit was put back (a process allowed to raise it): an honest score
        assert json.loads((out / "scores.json").read_text(encoding="utf-8"))["integral"] == honest_integral(
            tmp_path
        )
    else:
        assert_no_scores(out, done)
        assert "limit" in done.stderr


def test_a_scorer_stopped_by_its_code_ends_by_the_platforms_limit_with_no_scores(tmp_path):
    attack = """
    import signal
    with open(os.path.join(out, "scores.json"), "w") as fh:
        fh.write('{"status": "ok", "integral": 0.999}')
    os.kill(os.getppid(), signal.SIGSTOP)
    """
    root = code_step_input(tmp_path, attack)
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "scorer", "codalab", str(root), str(out), "--no-synonyms"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "ATTACK_OUTPUT": str(out), "ATTACK_REF": str(root / "ref")},
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while process.poll() is None and process_state(process.pid) != "T" and time.monotonic() < deadline:
        time.sleep(0.05)
    # stopped by its code, it cannot end by itself: it hangs until the platform's limit
    assert process.poll() is None and process_state(process.pid) == "T"
    process.kill()  # the platform's limit
    process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL  # a non-zero exit: Codabench posts no scores


def test_the_guard_makes_an_import_and_a_read_after_the_code_started_a_surprise(tmp_path, monkeypatch):
    import sys

    monkeypatch.delitem(sys.modules, "tabnanny", raising=False)  # a standard-library module, unloaded
    guard = code_step.Guard.get()
    guard.imports = True
    try:
        with pytest.raises(ImportError, match="imports nothing once the team's code has started"):
            import tabnanny  # noqa: F401
    finally:
        guard.off()
    import tabnanny  # noqa: F401,F811  the guard off: the same import works

    (tmp_path / "x").write_text("x", encoding="utf-8")
    guard.allowed = (str(tmp_path / "scratch") + "/",)
    try:
        with pytest.raises(PermissionError):
            open(tmp_path / "x", encoding="utf-8")
    finally:
        guard.off()
    assert guard.caught[-2].startswith("an import of tabnanny")
    assert guard.caught[-1].startswith("a file opened while the code ran: ")
    guard.caught.clear()


# --- the bundle as Codabench runs it ------------------------------------------------------------------------


def test_the_bundle_run_as_codabench_runs_it_posts_what_run_and_score_give(tmp_path):
    """Prediction then scoring, the upload copied into the prediction's output first and the prediction's
    exit code ignored, as Codabench's compute worker does; the integral it would post is the one ``run`` and
    ``score`` give for the same code."""
    import shlex

    import yaml
    from conftest import run_cli

    bundle = tmp_path / "bundle"
    assert run_cli("bundle", "--data", PUBLIC, "--output", bundle, "--image", "docker.io/org/scorer:1.0",
                   "--code", "--quiet") == 0  # fmt: skip
    upload = shutil.make_archive(str(tmp_path / "upload"), "zip", bundle / "starting_kit", "team_code")
    app = tmp_path / "app"
    ingested, output = app / "ingested_program", app / "output"
    shutil.unpack_archive(upload, ingested)
    shutil.copytree(ingested, output)  # Codabench copies the upload into the output before ingestion
    places = {
        "/app/program": str(bundle / "ingestion_program"),
        "/app/input_data": str(bundle / "input_data"),
        "/app/ingested_program": str(ingested),
        "/app/output": str(output),
    }

    def command_of(program: str, extra: dict[str, str]) -> list[str]:
        meta = yaml.safe_load((bundle / program / "metadata.yaml").read_text(encoding="utf-8"))
        words = shlex.split(meta["command"])
        assert words[0] == "python3"
        # the worker with COMPETITION_CONTAINER_NETWORK_DISABLED=True: a container with loopback alone
        return ["unshare", "--net", sys.executable] + [extra.get(w, w) for w in words[1:]]

    ingestion = command_of("ingestion_program", {f"/app/program/{Path(p).name}": p for p in []})
    ingestion = [next((w.replace(k, v) for k, v in places.items() if w.startswith(k)), w) for w in ingestion]
    subprocess.run(ingestion, capture_output=True, timeout=300, cwd=app)  # its exit code is not looked at
    assert sorted(p.name for p in output.iterdir()) == ["submission.jsonl", "team_code"]
    root = app / "input"
    shutil.copytree(bundle / "reference_data", root / "ref")
    shutil.copytree(output, root / "res")
    scored = app / "scores"
    scoring = command_of("scoring_program", {"/app/input": str(root), "/app/output": str(scored)})
    done = subprocess.run(scoring, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    posted = json.loads((scored / "scores.json").read_text(encoding="utf-8"))
    local = tmp_path / "local"
    # the organizer's own baseline, trusted beside the answers
    assert run_cli("run", "--data", bundle / "reference_data", "--code", upload, "--output", local, "--quiet",
                   "--trusted-code") == 0  # fmt: skip
    assert run_cli("score", "--data", bundle / "reference_data", "--submission", local,
                   "--output", tmp_path / "scored", "--quiet") == 0  # fmt: skip
    expected = json.loads((tmp_path / "scored" / "scores.json").read_text(encoding="utf-8"))
    # a code competition posts its figures rounded to posted_decimals (4), from the full-precision values
    assert posted["integral"] == round(expected["integral"], 4) and 0 < posted["integral"] < 1
