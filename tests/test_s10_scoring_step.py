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
from helpers import (
    PUBLIC,
    ROOT,
    assert_reported_as_a_fault,
    attack_team,
    codalab_step,
    code_step_input,
    gone,
    make_bundle,
    posted_by,
    process_state,
    read_jsonl,
    run_cli,
    runner_process,
    score_cli,
    scored_by_the_library,
    toy_team,
)

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
    done = runner_process("--data", PUBLIC, "--code", source_dir, "--output", out, "--phase", "generate",
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
    done = runner_process(
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


#: A team whose ``get_ppl`` counts the image and audio parts of its query and its history, each an absolute
#: path to a file that exists (2 + their count), or returns 100 when one is not.
MEDIA_TEAM = """
import os

def setup_model_and_tokenizer():
    return {}, None

def generate_text(model, tokenizer, cur_query_list, history_list):
    return "Ответ"

def get_ppl(model, tokenizer, cur_query_tuple, history_list):
    parts = list(cur_query_tuple[0]) + [part for query, _ in history_list for part in query]
    media = [part["content"] for part in parts if part["type"] in ("image", "audio")]
    if all(os.path.isabs(path) and os.path.isfile(path) for path in media):
        return 2.0 + len(media)
    return 100.0
"""


def test_get_ppl_is_given_every_media_path_absolute_and_existing(tmp_path):
    root = code_step_input(tmp_path)
    shutil.rmtree(root / "res" / "team_code")
    toy_team(root / "res", MEDIA_TEAM)
    out = tmp_path / "out"
    done = codalab_step(root, out)
    assert done.returncode == 0, done.stderr
    # what every call is worth when each part it is given names its file absolutely: 2 + the image and audio
    # parts of the turn and of the turns before it
    ppl = {}
    for dialogue in read_jsonl(root / "ref" / "dialogues.jsonl"):
        media = [sum(p["type"] in ("image", "audio") for p in turn) for turn in dialogue["turns"]]
        ppl[dialogue["dialog_id"]] = [2.0 + sum(media[: i + 1]) for i in range(len(media))]
    assert max(v for vs in ppl.values() for v in vs) == 4.0  # media in the query and in the history
    expected = posted_by(scored_by_the_library(root, ppl, tmp_path / "library"))
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    assert {key: scores[key] for key in expected} == expected


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
    assert list(out.iterdir()) == []
    # the surprise prints what a fault of the code prints, byte for byte: no signal named
    assert_reported_as_a_fault(root, done, tmp_path / "fault")


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


def _effective_capabilities(python: list[str]) -> int | None:
    """The effective capabilities (``CapEff``) of a process started as ``python``, or None when it cannot
    start."""
    probe = "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff:')))"
    try:
        done = subprocess.run([*python, "-c", probe], capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    return int(done.stdout, 16) if done.returncode == 0 else None


def as_codabench_runs_it() -> list[str]:
    """The command that runs Python as Codabench runs the scoring step: as the owner of the files, with no
    capability (the container runs as root with every capability dropped, so a folder of mode 000 is closed
    to it as to any user). This process's Python when it has none already; else under ``setpriv`` with the
    bounding and inheritable sets emptied (root's files stay its own), or as ``nobody`` where only that
    works; a skip saying why where neither does."""
    if _effective_capabilities([sys.executable]) == 0:
        return [sys.executable]
    if shutil.which("setpriv"):
        dropped = ["setpriv", "--inh-caps=-all", "--bounding-set=-all", sys.executable]
        if _effective_capabilities(dropped) == 0:
            return dropped
    pytest.skip(
        "needs a process without capabilities (this one has some, and setpriv cannot drop them here): "
        "with CAP_DAC_OVERRIDE a folder of mode 000 is no obstacle, so the test would prove nothing"
    )


#: Attack code that leaves in OUTPUT a folder of mode 000 holding another one of mode 000 and a file of the
#: targets, a link to a folder of mode 000 outside OUTPUT, and OUTPUT itself of mode 000.
CHMOD_000 = """
outside = out + ".outside"
os.makedirs(os.path.join(out, "locked", "inner"))
os.makedirs(outside)
for folder in (os.path.join(out, "locked", "inner"), outside):
    with open(os.path.join(folder, "targets.txt"), "w", encoding="utf-8") as fh:
        fh.write(target)
os.symlink(outside, os.path.join(out, "link"))
for folder in (os.path.join(out, "locked", "inner"), os.path.join(out, "locked"), outside, out):
    os.chmod(folder, 0)
"""


@pytest.mark.parametrize("ending", ["scored", "surprise"])
def test_folders_of_mode_000_in_the_output_are_emptied_and_the_outputs_written(tmp_path, ending):
    python = as_codabench_runs_it()
    sigterm = "import signal, time\nos.kill(os.getppid(), signal.SIGTERM)\ntime.sleep(2)\n"
    root = code_step_input(tmp_path, CHMOD_000 + (sigterm if ending == "surprise" else ""))
    out, outside = tmp_path / "out", tmp_path / "out.outside"
    done = codalab_step(root, out, python=python)
    # the step gave its own user read, write and search permission on OUTPUT again (the descriptor it
    # holds), and on the folders in it (through descriptors that follow no link) ...
    assert (done.returncode, out.stat().st_mode & 0o700) == (0 if ending == "scored" else 1, 0o700), (
        done.stderr
    )
    if ending == "scored":
        assert sorted(p.name for p in out.iterdir()) == ["detailed_results.html", "scores.json", "scores.txt"]
        integral = json.loads((out / "scores.json").read_text(encoding="utf-8"))["integral"]
        assert integral == honest_integral(tmp_path)
    else:  # a surprise empties OUTPUT just as well
        assert list(out.iterdir()) == []
        assert_reported_as_a_fault(root, done, tmp_path / "fault")
    assert_nothing_shown(out, done)
    # ... and on nothing else: the folder the link named keeps the mode the code gave it, and what it holds
    assert outside.stat().st_mode & 0o777 == 0
    outside.chmod(0o700)  # for this process too, where it runs without capabilities
    assert [p.name for p in outside.iterdir()] == ["targets.txt"]


@pytest.mark.parametrize("hard", [False, True], ids=["soft", "hard"])
def test_a_lowered_file_limit_never_lets_a_daemon_survive(tmp_path, hard):
    pids = tmp_path / "pids"
    attack = f"""
    import resource
    soft, high = resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE)
    try:  # refused where the runner's filter keeps the scorer's limits from the code
        resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (3, 3 if {hard} else high))
    except OSError:
        pass
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
    else:  # a limit that cannot be put back: a surprise, reported as a fault of the code (no limit named)
        assert_no_scores(out, done)
        assert_reported_as_a_fault(root, done, tmp_path / "fault", last=True)


#: Attack code lowering the scorer's descriptor limit, soft and hard, to 16: by ``prlimit --pid`` (whose
#: failure the code ignores), by ``resource.prlimit`` on its parent, or on each of its parent's threads (the
#: kernel takes a thread's id for its process, whose limits its threads share), each error caught.
LOWER_THE_SCORERS_LIMIT = {
    "prlimit": """
    import subprocess
    subprocess.run(["prlimit", "--pid", str(os.getppid()), "--nofile=16:16"], check=False)
    """,
    "resource.prlimit": """
    import resource
    try:
        resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (16, 16))
    except OSError:
        pass
    """,
    "a thread of the scorer": """
    import resource
    for tid in sorted(os.listdir(f"/proc/{os.getppid()}/task"), key=int, reverse=True):
        try:
            resource.prlimit(int(tid), resource.RLIMIT_NOFILE, (16, 16))
        except OSError:
            pass
    """,
}


@pytest.mark.parametrize("how", sorted(LOWER_THE_SCORERS_LIMIT))
def test_a_limit_the_code_lowers_on_the_scorer_with_prlimit_leaves_an_honest_score(tmp_path, how):
    if how == "prlimit" and shutil.which("prlimit") is None:
        pytest.fail("this test needs prlimit(1) (util-linux), which a team's code may run")
    root = code_step_input(tmp_path, LOWER_THE_SCORERS_LIMIT[how])
    out = tmp_path / "out"
    done = codalab_step(root, out)
    # the scorer, without the privilege to raise a hard limit again, keeps its own: scored, not a failure
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["detailed_results.html", "scores.json", "scores.txt"]
    assert json.loads((out / "scores.json").read_text(encoding="utf-8"))["integral"] == honest_integral(
        tmp_path
    )


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


def test_a_surprise_keeps_its_kind_for_the_tests_alone_and_is_reported_as_the_faults_verdict(tmp_path):
    from scorer.errors import Issue
    from scorer.runner.names import SEALED_FAULT_LINE

    surprise = code_step.StepSurprise("it received SIGTERM")
    assert (surprise.what, str(surprise), surprise.exit_code) == ("it received SIGTERM", SEALED_FAULT_LINE, 1)
    assert surprise.verdict().listed() == [Issue("team_code", SEALED_FAULT_LINE, code_step.CODE_FAILED)]
    # the kinds of a swapped OUTPUT, told apart here and in docs/security.md, never in what the step prints
    out = tmp_path / "out"
    out.mkdir()
    held = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert code_step._swapped(held, out) == []
        out.rename(tmp_path / "away")
        assert code_step._swapped(held, out) == [
            "the output folder was renamed or removed while the code ran"
        ]
        out.mkdir()
        assert code_step._swapped(held, out) == [
            "the output folder was renamed or replaced while the code ran"
        ]
    finally:
        os.close(held)


# --- the bundle as Codabench runs it ------------------------------------------------------------------------


def test_the_bundle_run_as_codabench_runs_it_posts_what_run_and_score_give(tmp_path):
    """Prediction then scoring, the upload copied into the prediction's output first and the prediction's
    exit code ignored, as Codabench's compute worker does; the integral it would post is the one ``run`` and
    ``score`` give for the same code."""
    import shlex

    import yaml

    bundle = make_bundle(tmp_path, "bundle", "--code")
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
    assert score_cli(local, tmp_path / "scored", "--quiet", data=bundle / "reference_data") == 0
    expected = json.loads((tmp_path / "scored" / "scores.json").read_text(encoding="utf-8"))
    # a code competition posts its figures rounded to posted_decimals (4), from the full-precision values
    assert posted["integral"] == round(expected["integral"], 4) and 0 < posted["integral"] < 1


#: The scoring step called from the library, in a process of its own (it makes itself the child subreaper),
#: with every network check answering that an interface is up: its data folder's config.toml decides.
LIBRARY_STEP = """
import json, sys
from pathlib import Path
from scorer import code_step
from scorer.scoring.audience import Audience
from scorer.scoring.run import RunOptions

code_step.network_refusal = lambda: "an interface other than loopback is up: 'v0'"
root, out = Path(sys.argv[1]), Path(sys.argv[2])
options = RunOptions(synonyms=False)
settings = code_step.StepSettings(
    str(root / "ref"), out, options, Audience.participant(options.settled_config(root / "ref")), "", 60, 30
)
try:
    outcome = code_step.score_step(root / "res", settings)
except code_step.NetworkRefused as exc:
    print("refused:", exc)
else:
    print("scored:", json.loads((out / "scores.json").read_text())["status"])
"""


@pytest.mark.slow
@pytest.mark.parametrize("network, said", [("allowed", "scored: ok"), ("refused", "refused: an interface")])
def test_the_library_step_follows_its_data_folders_configuration(tmp_path, network, said):
    """score_step opens one run on its data folder: ref/config.toml's [competition] network decides whether
    the network is checked, for a library caller that gives no configuration as for the command line (the
    step once settled the configuration without the data folder, and refused a network the organizer
    allowed)."""
    root = code_step_input(tmp_path)
    config = root / "ref" / "config.toml"
    config.write_text(config.read_text("utf-8").replace('"allowed"', f'"{network}"'), encoding="utf-8")
    (tmp_path / "out").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", LIBRARY_STEP, root, tmp_path / "out"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(said), done.stdout
