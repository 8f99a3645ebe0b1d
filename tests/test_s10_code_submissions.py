"""Contract section 10, code submissions: toy teams run by ``python -m scorer run`` (and by the runner
module alone under a bare interpreter), each fault named, the call order and histories, resume, ``--only``,
public data without answers, and no process of the code outliving its phase."""

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
    LOOPBACK_ONLY,
    PUBLIC,
    ROOT,
    codalab_step,
    gone,
    in_network_namespace,
    make_bundle,
    read_jsonl,
    run_cli,
    run_process,
    score_cli,
    toy_team,
    validate_cli,
)

from scorer.bundle.runner_file import runner_file

pytestmark = pytest.mark.slow  # every test here starts processes

#: The runner as a bundle ships it: its package in one file (scorer/bundle/runner_file.py).
RUNNER_FILE = runner_file()

WELL_BEHAVED = """
import json, os

LOG = os.environ.get("TEAM_LOG")

def _log(entry):
    if LOG:
        with open(LOG, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, ensure_ascii=False) + "\\n")

def setup_model_and_tokenizer():
    _log({"call": "setup", "cwd": os.getcwd()})
    return {"calls": 0}, "tokenizer"

def generate_text(model, tokenizer, cur_query_list, history_list):
    _log({"call": "generate", "query": cur_query_list, "history": history_list})
    text = " ".join(p["content"] for p in cur_query_list if p["type"] == "text")
    return "Ответ на " + text

def get_ppl(model, tokenizer, cur_query_tuple, history_list):
    _log({"call": "ppl", "query": cur_query_tuple, "history": history_list})
    query, target = cur_query_tuple
    return 1.0 + len(target) % 17 + 0.5 * len(history_list)
"""


def replace_in(source: str, old: str, new: str) -> str:
    assert old in source
    return source.replace(old, new)


DIALOGUES = read_jsonl(PUBLIC / "dialogues.jsonl")
FIRST_VARIANTS = {
    d["dialog_id"]: [v[0] for v in d["references"]] for d in read_jsonl(PUBLIC / "answers.jsonl")
}


def test_the_calls_their_order_and_their_histories_are_the_competitions(tmp_path):
    log = tmp_path / "calls.jsonl"
    out = tmp_path / "out"
    done = run_process("--trusted-code", "--data", PUBLIC, "--code",
                       toy_team(tmp_path / "team", WELL_BEHAVED), "--output", out,
                       env={"TEAM_LOG": str(log)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    calls = read_jsonl(log)
    kinds = [c["call"] for c in calls]
    n = sum(len(d["turns"]) for d in DIALOGUES)
    # a setup, every generation, another setup (a fresh process), every perplexity and the probe calls
    probes = json.loads((out / "ppl_probes.json").read_text(encoding="utf-8"))
    n_probes = sum(v is not None for vs in probes.values() for v in vs)
    assert n_probes == sum(
        len(t.split()) >= 5 and len(set(t.split())) > 1 for ts in FIRST_VARIANTS.values() for t in ts
    )  # every turn whose target has 5 words or more, up to 100
    assert kinds == ["setup"] + ["generate"] * n + ["setup"] + ["ppl"] * (n + n_probes)
    own = [c for c in calls if c["call"] == "ppl"]
    turn_calls = []
    k = 0
    for d in DIALOGUES:
        for i in range(len(d["turns"])):
            target = FIRST_VARIANTS[d["dialog_id"]][i]
            if probes[d["dialog_id"]][i] is None:
                turn_calls.append(own[k])
                k += 1
                continue
            pair = own[k : k + 2]  # the probe right before or right after the turn's own call
            k += 2
            (mine,) = [c for c in pair if c["query"][1] == target]
            (probe,) = [c for c in pair if c["query"][1] != target]
            assert sorted(probe["query"][1].split()) == sorted(target.split())
            assert probe["history"] == mine["history"] and probe["query"][0] == mine["query"][0]
            turn_calls.append(mine)
    assert {own.index(c) % 2 for c in own if c not in turn_calls} == {0, 1} or n_probes < 4
    assert calls[0]["cwd"] != str(ROOT) and calls[0]["cwd"] != str(out)  # a scratch folder
    answers = {row["dialog_id"]: row["answers"] for row in read_jsonl(out / "submission.jsonl")}
    generations = iter(c for c in calls if c["call"] == "generate")
    perplexities = iter(turn_calls)
    for d in DIALOGUES:
        queries = [
            [
                {**p, "content": str((PUBLIC / p["content"]).resolve())}
                if p["type"] in ("image", "audio")
                else p
                for p in turn
            ]
            for turn in d["turns"]
        ]
        for i, query in enumerate(queries):
            g = next(generations)
            assert g["query"] == query  # media paths absolute against --data
            assert g["history"] == [[queries[k], answers[d["dialog_id"]][k]] for k in range(i)]
        for i, query in enumerate(queries):
            p = next(perplexities)
            targets = FIRST_VARIANTS[d["dialog_id"]]
            assert p["query"] == [query, targets[i]]
            assert p["history"] == [[queries[k], targets[k]] for k in range(i)]
    ppl = json.loads((out / "ppl_output.json").read_text(encoding="utf-8"))
    assert ppl["d-0001"] == [
        1.0 + len(FIRST_VARIANTS["d-0001"][0]) % 17,
        1.5 + len(FIRST_VARIANTS["d-0001"][1]) % 17,
    ]
    assert len(set(v for vs in ppl.values() for v in vs)) > 5  # they vary from turn to turn
    assert not (out / ".run-state").exists()
    assert validate_cli(out) == 0


def test_a_tuple_counts_by_its_first_element_and_the_codes_prints_go_to_stderr(tmp_path):
    source = replace_in(
        WELL_BEHAVED, 'return "Ответ на " + text', 'print("ANSWER-PRINTED", text)\n    return ("Ответ", 0.5)'
    )
    out = tmp_path / "out"
    done = run_process(
        "--trusted-code", "--data", PUBLIC, "--code", toy_team(tmp_path / "team", source), "--output", out
    )
    assert done.returncode == 0, done.stderr
    assert "ANSWER-PRINTED" in done.stderr and "ANSWER-PRINTED" not in done.stdout
    assert {a for row in read_jsonl(out / "submission.jsonl") for a in row["answers"]} == {"Ответ"}
    for path in out.rglob("*"):
        assert path.is_dir() or b"ANSWER-PRINTED" not in path.read_bytes()


@pytest.mark.parametrize(
    "old, new, kind, phase, function, message",
    [
        (
            'return "Ответ на " + text',
            'raise RuntimeError("boom in generation")',
            "exception",
            "generate",
            "generate_text",
            "boom in generation",
        ),
        ('return "Ответ на " + text', "return 42", "wrong_value", "generate", "generate_text", "int 42"),
        (
            "return 1.0 + len(target) % 17 + 0.5 * len(history_list)",
            'return "5"',
            "wrong_value",
            "ppl",
            "get_ppl",
            "str '5'",
        ),
        (
            "return 1.0 + len(target) % 17 + 0.5 * len(history_list)",
            "return 0.5",
            "wrong_value",
            "ppl",
            "get_ppl",
            "at least 1",
        ),
        (
            "return 1.0 + len(target) % 17 + 0.5 * len(history_list)",
            "return float('nan')",
            "wrong_value",
            "ppl",
            "get_ppl",
            "nan",
        ),
        (
            'return "Ответ на " + text',
            "os._exit(3)",
            "died",
            "generate",
            "generate_text",
            "exited with code 3",
        ),
        (
            'return "Ответ на " + text',
            "os.kill(os.getpid(), 9)",
            "died",
            "generate",
            "generate_text",
            "SIGKILL",
        ),
    ],
    ids=["raises", "int-answer", "str-ppl", "ppl-below-1", "nan-ppl", "os-exit", "killed"],
)
def test_each_fault_of_the_code_is_named_and_leaves_nothing_complete(
    tmp_path, old, new, kind, phase, function, message
):
    out = tmp_path / "out"
    done = run_process(
        "--trusted-code", "--data", PUBLIC, "--code",
        toy_team(tmp_path / "team", replace_in(WELL_BEHAVED, old, new)), "--output", out,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("error: the team's code failed"))
    assert f"({kind}; phase {phase}, function {function}, dialog_id 'd-0001', turn 0)" in line
    assert message in done.stderr
    if kind == "exception":
        assert "Traceback" in done.stderr and 'generate.py", line' in done.stderr
    assert not (out / "ppl_output.json").exists()
    assert phase == "ppl" or not (out / "submission.jsonl").exists()
    assert (
        'Traceback (most recent call last):\n  File "' not in done.stderr.split("error: the team's")[0]
        or kind == "exception"
    )


def test_a_missing_function_or_package_lists_what_the_upload_holds(tmp_path):
    source = WELL_BEHAVED.replace("def get_ppl(", "def get_perplexity(")
    done = run_process(
        "--trusted-code", "--data", PUBLIC, "--code", toy_team(tmp_path / "team", source),
        "--output", tmp_path / "out",
    )  # fmt: skip
    assert done.returncode == 1
    assert "team_code/generate.py defines no get_ppl; it defines: " in done.stderr
    assert "get_perplexity" in done.stderr and "generate_text" in done.stderr
    upload = tmp_path / "wrong"
    (upload / "code").mkdir(parents=True)
    (upload / "code" / "model.py").write_text("x = 1\n", encoding="utf-8")
    done = run_process("--trusted-code", "--data", PUBLIC, "--code", upload, "--output", tmp_path / "out2")
    assert done.returncode == 1
    assert "holds no package team_code/" in done.stderr and "code/model.py" in done.stderr


def test_a_call_past_its_time_is_stopped(tmp_path):
    source = replace_in(WELL_BEHAVED, 'return "Ответ на " + text', "import time; time.sleep(60)")
    started = time.monotonic()
    done = run_process("--trusted-code", "--data", PUBLIC, "--code", toy_team(tmp_path / "team", source),
                       "--output", tmp_path / "out", "--turn-timeout", "0.5")  # fmt: skip
    assert done.returncode == 1 and time.monotonic() - started < 30
    assert "(timeout; phase generate, function generate_text, dialog_id 'd-0001', turn 0)" in done.stderr
    source = replace_in(WELL_BEHAVED, 'return {"calls": 0}, "tokenizer"', "import time; time.sleep(60)")
    done = run_process("--trusted-code", "--data", PUBLIC, "--code",
                       toy_team(tmp_path / "slow-setup", source),
                       "--output", tmp_path / "out2", "--setup-timeout", "0.5")  # fmt: skip
    assert (
        done.returncode == 1
        and "(timeout; phase generate, function setup_model_and_tokenizer)" in done.stderr
    )


def test_the_import_and_the_setup_share_the_setup_limit(tmp_path):
    """``--setup-timeout`` bounds the code's import and its setup together, as the pages count it ("after a
    setup of S s, your code has on average (the step less the setup) / the calls") and as the bundle's check
    that a setup and a call fit in the step does: an import and a setup each well within the limit, together
    past it, are stopped in the setup, which the fault names with the limit."""
    source = replace_in(WELL_BEHAVED, "import json, os\n", "import json, os, time\ntime.sleep(2.5)\n")
    source = replace_in(
        source,
        '    return {"calls": 0}, "tokenizer"',
        '    time.sleep(2.5)\n    return {"calls": 0}, "tokenizer"',
    )
    done = run_process("--trusted-code", "--data", PUBLIC, "--code", toy_team(tmp_path / "team", source),
                       "--output", tmp_path / "out", "--setup-timeout", "4", "--quiet")  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert (
        "(timeout; phase generate, function setup_model_and_tokenizer): the call ran past its 4 s limit"
        in done.stderr
    ), done.stderr


def test_a_daemon_the_code_leaves_does_not_outlive_its_phase(tmp_path):
    pids = tmp_path / "pids"
    source = replace_in(
        WELL_BEHAVED,
        '    return {"calls": 0}, "tokenizer"',
        f'''    import time
    def written():
        return open({str(pids)!r}).read().count("\\n") if os.path.exists({str(pids)!r}) else 0
    before = written()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open({str(pids)!r}, "a") as fh:
                fh.write(str(os.getpid()) + "\\n")
            time.sleep(120)
        os._exit(0)
    for _ in range(500):  # the daemon is there before the phase goes on (however busy the machine)
        if written() > before:
            break
        time.sleep(0.01)
    return {{"calls": 0}}, "tokenizer"''',
    )
    done = run_process(
        "--trusted-code", "--data", PUBLIC, "--code", toy_team(tmp_path / "team", source),
        "--output", tmp_path / "out",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    daemons = [int(x) for x in pids.read_text().split()]
    assert len(daemons) == 2  # one a phase
    time.sleep(0.2)
    for pid in daemons:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_an_interrupted_run_resumes_to_the_same_files(tmp_path):
    slow = replace_in(
        WELL_BEHAVED, 'return "Ответ на " + text', 'import time; time.sleep(0.03); return "Ответ на " + text'
    )
    # the same answers as the well-behaved team's, slowly enough to interrupt
    code = toy_team(tmp_path / "team", slow)
    whole = tmp_path / "whole"
    fast = toy_team(tmp_path / "fast", WELL_BEHAVED)
    assert run_process("--trusted-code", "--data", PUBLIC, "--code", fast, "--output", whole).returncode == 0
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "scorer", "run", "--data", str(PUBLIC), "--code", str(code),
         "--output", str(out), "--trusted-code"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    state = out / ".run-state" / "generate.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not state.exists() or len(state.read_text().splitlines()) < 10):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "--resume" in err and not (out / "submission.jsonl").exists()
    kept = len(state.read_text().splitlines())
    assert 10 <= kept < 66
    done = run_process("--trusted-code", "--data", PUBLIC, "--code", code, "--output", out, "--resume")
    assert done.returncode == 0, done.stderr
    for name in ("submission.jsonl", "ppl_output.json"):
        assert (out / name).read_bytes() == (whole / name).read_bytes()


def test_only_the_audit_samples_turns_give_a_ppl_check_file(tmp_path, capsys):
    code = toy_team(tmp_path / "team", WELL_BEHAVED)
    out = tmp_path / "out"
    assert run_process("--trusted-code", "--data", PUBLIC, "--code", code, "--output", out).returncode == 0
    sample = tmp_path / "sample.jsonl"
    assert run_cli("audit-sample", "--data", PUBLIC, "--submission", out, "--n", "5", "--output", sample) == 0
    chosen = {(r["dialog_id"], r["turn"]) for r in read_jsonl(sample)}
    done = run_process(
        "--data", PUBLIC, "--code", code, "--output", tmp_path / "check", "--phase", "ppl", "--only", sample
    )
    assert done.returncode == 0, done.stderr
    check = json.loads((tmp_path / "check" / "ppl_check.json").read_text(encoding="utf-8"))
    full = json.loads((out / "ppl_output.json").read_text(encoding="utf-8"))
    assert {(d, t) for d, vs in check.items() for t, v in enumerate(vs) if v is not None} == chosen
    assert all(check[d][t] == full[d][t] for d, t in chosen)
    assert not (tmp_path / "check" / "ppl_output.json").exists()
    capsys.readouterr()
    recomputed = tmp_path / "check" / "ppl_check.json"
    assert score_cli(out, tmp_path / "scored", "--quiet", "--no-synonyms", "--ppl-check", recomputed) == 0
    audit = json.loads((tmp_path / "scored" / "audit.json").read_text(encoding="utf-8"))
    assert audit["submissions"]["out"]["figures"]["checked"] == 5


def test_public_data_without_answers_gives_perplexities_of_the_models_own_answers(tmp_path):
    public = tmp_path / "public"
    public.mkdir()
    shutil.copy(PUBLIC / "dialogues.jsonl", public)
    out = tmp_path / "out"
    done = run_process("--data", public, "--code", toy_team(tmp_path / "team", WELL_BEHAVED), "--output", out)
    assert done.returncode == 0, done.stderr
    assert [x for x in done.stderr.splitlines() if "model's own answers" in x] == [
        f"run: no answers.jsonl in {public}: the perplexities are of the model's own answers "
        "(submission.jsonl), not of the competition's targets"
    ]
    answers = {row["dialog_id"]: row["answers"] for row in read_jsonl(out / "submission.jsonl")}
    ppl = json.loads((out / "ppl_output.json").read_text(encoding="utf-8"))
    assert ppl["d-0001"][0] == 1.0 + len(answers["d-0001"][0]) % 17
    assert validate_cli(out, data=public) == 0


def test_the_runner_runs_alone_under_a_bare_interpreter_from_a_zip(tmp_path):
    code = toy_team(tmp_path / "team", WELL_BEHAVED)
    archive = shutil.make_archive(str(tmp_path / "upload"), "zip", code)
    isolated = tmp_path / "runner.py"
    isolated.write_bytes(RUNNER_FILE)  # the one file alone, away from the package
    done = subprocess.run(
        [sys.executable, "-I", str(isolated), "--data", str(PUBLIC), "--code", archive, "--output",
         str(tmp_path / "out"), "--quiet", "--trusted-code"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert validate_cli(tmp_path / "out") == 0
    # it imports nothing outside the standard library (its modules, one another only)
    for module in sorted((ROOT / "scorer" / "runner").glob("*.py")):
        source = module.read_text(encoding="utf-8")
        assert "import scorer" not in source and "from scorer" not in source and "from .." not in source


def run_by(how: str, tmp_path: Path, *args: object) -> subprocess.CompletedProcess:
    """``run`` with ``args`` by ``python -m scorer run`` ("scorer") or by the runner's one file alone under a
    bare interpreter, as a bundle ships it ("runner file")."""
    if how == "scorer":
        return run_process(*args)
    isolated = tmp_path / "runner.py"
    isolated.write_bytes(RUNNER_FILE)
    return subprocess.run(
        [sys.executable, "-I", str(isolated), *map(str, args)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip


def files_under(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("how", ["scorer", "runner file"])
@pytest.mark.parametrize("top", ["", "my_team/"])
def test_keep_code_keeps_the_code_of_a_zip_as_of_a_folder(tmp_path, how, top):
    """--keep-code copies team_code/ into the output from a zip (unpacked into the run's scratch folder, which
    goes only after the copy) as from a folder; the run's exit code is its own."""
    team = toy_team(tmp_path / "team", WELL_BEHAVED)
    (team / "team_code" / "data").mkdir()
    (team / "team_code" / "data" / "words.txt").write_text("слово\n", encoding="utf-8")
    # as the starting kit's README says: cd starting_kit && zip -r ../my_upload.zip team_code
    if top:
        shutil.copytree(team, tmp_path / "zipped" / top)
    upload = shutil.make_archive(
        str(tmp_path / "upload"), "zip", tmp_path / "zipped" if top else team, top or "team_code"
    )
    for code, out in ((upload, tmp_path / "from_zip"), (team, tmp_path / "from_folder")):
        done = run_by(how, tmp_path, "--data", PUBLIC, "--code", code, "--output", out, "--phase",
                      "generate", "--keep-code", "--trusted-code", "--quiet")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "error" not in done.stderr
        assert sorted(p.name for p in out.iterdir()) == ["submission.jsonl", "team_code"]
        assert files_under(out / "team_code") == files_under(team / "team_code")
    assert (tmp_path / "from_zip" / "submission.jsonl").read_bytes() == (
        tmp_path / "from_folder" / "submission.jsonl"
    ).read_bytes()


@pytest.mark.parametrize("how", ["scorer", "runner file"])
def test_keep_code_says_why_it_cannot_copy_the_code(tmp_path, how):
    """A team_code/ that cannot be copied (here the code made a FIFO in it) is exit 2 with the reason; the
    other outputs are written, and no part of a copy is left."""
    source = replace_in(
        WELL_BEHAVED,
        'return {"calls": 0}, "tokenizer"',
        'os.mkfifo(os.path.join(os.path.dirname(__file__), "pipe"))\n    return {"calls": 0}, "tokenizer"',
    )
    team = toy_team(tmp_path / "team", source)
    upload = shutil.make_archive(str(tmp_path / "upload"), "zip", team, "team_code")
    out = tmp_path / "out"
    done = run_by(how, tmp_path, "--data", PUBLIC, "--code", upload, "--output", out, "--phase", "generate",
                  "--keep-code", "--trusted-code", "--quiet")  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"error: --keep-code: team_code/ cannot be copied into {str(out)!r} (`team_code/pipe` is a named "
        "pipe); the other outputs are written, but the scoring step needs the code beside them: run again "
        "once the reason is gone"
    )
    assert sorted(p.name for p in out.iterdir()) == ["submission.jsonl"]


# --- the scoring step of a code competition: codalab runs the ppl phase, treating the code as hostile ------


def code_competition_input(tmp_path: Path, source: str) -> Path:
    """INPUT as the scoring step sees it: ref/ the reference data, res/ the prediction step's output
    (submission.jsonl and the team's code, copied there by run --keep-code)."""
    root = tmp_path / "input"
    shutil.copytree(PUBLIC, root / "ref")
    # this machine has a network: the step's refusal of one is test_s10_answers_never_leave.py's
    (root / "ref" / "config.toml").write_text(
        '[competition]\nsubmissions = "code"\nnetwork = "allowed"\n', encoding="utf-8"
    )
    done = run_process("--trusted-code", "--data", PUBLIC, "--code", toy_team(tmp_path / "team", source),
                       "--output", root / "res", "--phase", "generate", "--keep-code", "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (root / "res").iterdir()) == ["submission.jsonl", "team_code"]
    return root


def codalab(
    root: Path, out: Path, env: dict | None = None, offline: bool = False
) -> subprocess.CompletedProcess:
    """:func:`codalab_step` on ``root``; ``offline``: in a network namespace of its own, with loopback alone,
    as a worker with ``COMPETITION_CONTAINER_NETWORK_DISABLED=True`` runs it
    (:func:`in_network_namespace`)."""
    python = [*in_network_namespace(LOOPBACK_ONLY), sys.executable] if offline else []
    return codalab_step(root, out, python=python, env=env)


def test_codalab_scores_a_code_upload_as_it_scores_the_files_the_code_gives(tmp_path):
    root = code_competition_input(tmp_path, WELL_BEHAVED)
    done = codalab(root, tmp_path / "scored")
    assert done.returncode == 0, done.stderr
    files = tmp_path / "files"
    assert (
        run_process("--trusted-code", "--data", PUBLIC, "--code", root / "res", "--output", files).returncode
        == 0
    )
    plain = tmp_path / "plain"
    shutil.copytree(PUBLIC, plain / "ref")
    shutil.copytree(files, plain / "res")
    assert codalab(plain, tmp_path / "scored-files").returncode == 0

    def rounded(value):  # a code competition posts every figure rounded to posted_decimals (4)
        if isinstance(value, float):
            return round(value, 4)
        if isinstance(value, dict):
            return {k: rounded(v) for k, v in value.items()}
        return value

    code = json.loads((tmp_path / "scored" / "scores.json").read_text(encoding="utf-8"))
    files_scores = json.loads((tmp_path / "scored-files" / "scores.json").read_text(encoding="utf-8"))
    assert code == rounded(files_scores) and code != files_scores
    assert sorted(p.name for p in (tmp_path / "scored").iterdir()) == [
        "detailed_results.html", "scores.json", "scores.txt"
    ]  # fmt: skip


HOSTILE = replace_in(
    WELL_BEHAVED,
    "def get_ppl(model, tokenizer, cur_query_tuple, history_list):",
    """def _attack():
    out = os.environ["ATTACK_OUTPUT"]
    ref = os.environ["ATTACK_REF"]
    answers = open(os.path.join(ref, "answers.jsonl"), encoding="utf-8").read()
    print(answers)  # the code's stdout and stderr are discarded in the scoring step
    import sys
    print(answers, file=sys.stderr)
    with open(os.path.join(out, "stolen.txt"), "w", encoding="utf-8") as fh:
        fh.write(answers)
    if os.fork() == 0:  # a daemon that would rewrite the scores once the scorer has written them
        os.setsid()
        if os.fork() == 0:
            import time
            with open(os.environ["ATTACK_PIDS"] + ".tmp", "w") as fh:
                fh.write(str(os.getpid()) + "\\n")
            os.replace(os.environ["ATTACK_PIDS"] + ".tmp", os.environ["ATTACK_PIDS"])
            time.sleep(1.5)
            with open(os.path.join(out, "scores.json"), "w") as fh:
                fh.write('{"status": "ok", "integral": 1.0}')
            time.sleep(60)
        os._exit(0)
    import time
    for _ in range(500):  # the daemon is there before the code goes on (however busy the machine)
        if os.path.exists(os.environ["ATTACK_PIDS"]):
            break
        time.sleep(0.01)

_attacked = []

def get_ppl(model, tokenizer, cur_query_tuple, history_list):
    if not _attacked:
        _attacked.append(1)
        _attack()""",
)


def test_the_scoring_step_treats_the_code_as_hostile(tmp_path):
    root = code_competition_input(tmp_path, HOSTILE)
    out = tmp_path / "scored"
    out.mkdir()
    pids = tmp_path / "pids"
    env = {"ATTACK_OUTPUT": str(out), "ATTACK_REF": str(root / "ref"), "ATTACK_PIDS": str(pids)}
    done = codalab(root, out, env)
    assert done.returncode == 0, done.stderr
    # the daemon, alive, would rewrite scores.json 1.5 s after it starts
    assert gone(*map(int, pids.read_text().split()), within=2.5)
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    assert scores["status"] == "ok" and scores["integral"] < 1.0
    assert sorted(p.name for p in out.iterdir()) == ["detailed_results.html", "scores.json", "scores.txt"]
    shown = done.stdout + done.stderr + "".join(p.read_text(encoding="utf-8") for p in out.iterdir())
    for turns in FIRST_VARIANTS.values():
        for text in turns:
            if len(text) > 25:
                assert text not in shown


def test_a_fault_of_the_code_in_the_scoring_step_is_one_fixed_line(tmp_path):
    source = replace_in(
        WELL_BEHAVED,
        "    return 1.0 + len(target) % 17 + 0.5 * len(history_list)",
        "    open(os.path.join(os.environ['ATTACK_OUTPUT'], 'stolen.txt'), 'w').write(target)\n"
        "    raise RuntimeError('SECRET ' + target)",
    )
    root = code_competition_input(tmp_path, source)
    out = tmp_path / "scored"
    out.mkdir()
    done = codalab(root, out, {"ATTACK_OUTPUT": str(out)})
    assert done.returncode == 1
    # what the code wrote there before its fault is gone too: only the verdict stands
    assert sorted(p.name for p in out.iterdir()) == ["detailed_results.html", "scores.json"]
    assert "SECRET" not in done.stderr and "Traceback" not in done.stderr
    # the place and kind of a fault on hidden data are a channel: one fixed line (contract section 10)
    assert "team_code: the team's code failed in the scoring step" in done.stderr
    assert "exception" not in done.stderr and "d-0001" not in done.stderr
    page = (out / "detailed_results.html").read_text(encoding="utf-8")
    assert "SECRET" not in page and "get_ppl" not in page
    assert "the team&#x27;s code failed in the scoring step" in page
    assert json.loads((out / "scores.json").read_text(encoding="utf-8"))["status"] == "invalid"


# --- bundle --code: a Codabench code competition, its starting kit end to end -----------------------------


def test_a_code_competitions_bundle_runs_its_starting_kit_end_to_end(tmp_path):
    import yaml

    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    (data / "images" / "0011.jpg").write_bytes(b"\xff\xd8 an image")  # the data's own, published as it is
    (data / "notes.txt").write_text("private", encoding="utf-8")
    bundle = make_bundle(tmp_path, "bundle", "--code", data=data)
    spec = yaml.safe_load((bundle / "competition.yaml").read_text(encoding="utf-8"))
    (task,) = spec["tasks"]
    assert task["ingestion_program"] == "ingestion_program" and task["input_data"] == "input_data"
    metadata = yaml.safe_load((bundle / "ingestion_program" / "metadata.yaml").read_text(encoding="utf-8"))
    assert metadata["command"].startswith("python3 /app/program/runner.py --data /app/input_data --code ")
    assert "--phase generate --keep-code" in metadata["command"]
    assert (bundle / "ingestion_program" / "runner.py").read_bytes() == RUNNER_FILE
    assert (bundle / "starting_kit" / "runner.py").read_bytes() == RUNNER_FILE  # for local runs
    inputs = sorted(
        p.relative_to(bundle / "input_data").as_posix()
        for p in (bundle / "input_data").rglob("*")
        if p.is_file()
    )
    named = {p["content"] for d in DIALOGUES for t in d["turns"] for p in t if p["type"] != "text"}
    assert inputs == sorted({"dialogues.jsonl", *named})  # every media file it names; never the answers
    assert (bundle / "input_data" / "images" / "0011.jpg").read_bytes() == b"\xff\xd8 an image"
    overview = (bundle / "pages" / "overview.md").read_text(encoding="utf-8")
    for needed in (
        "team_code/",
        "setup_model_and_tokenizer",
        "get_ppl(model, tokenizer",
        "600 s",
        "runner.py",
    ):
        assert needed in overview
    # the prediction step as Codabench runs it: the ingestion program alone, under a bare interpreter
    upload = shutil.make_archive(str(tmp_path / "upload"), "zip", bundle / "starting_kit", "team_code")
    ingested = tmp_path / "app" / "ingested_program"
    shutil.unpack_archive(upload, ingested)
    predicted = tmp_path / "app" / "output"
    done = subprocess.run(
        [sys.executable, "-I", str(bundle / "ingestion_program" / "runner.py"),
         "--data", str(bundle / "input_data"), "--code", str(ingested), "--output", str(predicted),
         "--phase", "generate", "--keep-code"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in predicted.iterdir()) == ["submission.jsonl", "team_code"]
    # the scoring step: codalab runs the ppl phase on the copied code, then scores
    root = tmp_path / "scoring"
    shutil.copytree(bundle / "reference_data", root / "ref")
    shutil.copytree(predicted, root / "res")
    out = tmp_path / "scored"
    done = codalab(root, out, offline=True)  # the bundle's config refuses a network
    assert done.returncode == 0, done.stderr
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    assert scores["status"] == "ok" and 0 < scores["integral"] < 1
    # a team's local run on the public data: files validate accepts
    local = tmp_path / "local"
    done = subprocess.run(
        [
            sys.executable,
            "starting_kit/runner.py",
            "--data",
            "public_data",
            "--code",
            "starting_kit",
            "--output",
            str(local),
            "--setup-timeout",
            "120",
            "--turn-timeout",
            "30",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=bundle,
    )  # fmt: skip  (the kit's README, as written)
    assert done.returncode == 0 and "model's own answers" in done.stderr
    assert validate_cli(local, data=bundle / "public_data") == 0
    # against the targets, the kit's perplexities are real and vary from turn to turn
    targeted = tmp_path / "targeted"
    # the organizer's own baseline, trusted beside the answers
    kit = bundle / "starting_kit"
    assert run_process("--trusted-code", "--data", data, "--code", kit, "--output", targeted).returncode == 0
    values = [
        v
        for vs in json.loads((targeted / "ppl_output.json").read_text(encoding="utf-8")).values()
        for v in vs
    ]
    assert min(values) >= 1 and len(set(values)) >= len(values) // 3  # 24 distinct values of 66
