"""Contract section 10, "the answers never leave", the runner's part: the network checked in the process's
own namespace (``--offline``, :func:`network_refusal`), the whole phase bounded (``--step-timeout``), an
upload's entries that are not regular files or folders refused unopened (:func:`irregular_entries`), the one
fixed line for a fault in a phase that has the answers (``--sealed``), the generate phase refused beside the
answers unless ``--trusted-code``, ``ppl_targets.json`` (:func:`target_digest`), the configuration ``run``
reads, and the progress lines of a sealed phase. The teams here are hostile code written as an attacker
would write it."""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest
from helpers import (
    INTERFACE_ADDED,
    INTERFACE_UP,
    LOOPBACK_ONLY,
    PUBLIC,
    ROOT,
    TOY_TEAM,
    in_network_namespace,
    run_cli,
    run_process,
    toy_team,
    validate_cli,
)

from scorer.runner import network, phases
from scorer.runner.configuration import RunConfig, read_configuration
from scorer.runner.faults import SEALED_MESSAGES, CodeFault, UsageFault
from scorer.runner.names import (
    FAULT_KINDS,
    FUNCTIONS,
    NETWORK_DISABLED,
    NETWORK_FAULT,
    NETWORK_SETTINGS,
    OUTPUT_NAMES,
    PPL_TARGETS,
    PROBE_MIN_WORDS,
    SEALED_FAULT_LINE,
    TEAM_FUNCTIONS,
    target_digest,
)
from scorer.runner.network import network_refusal
from scorer.runner.options import check_timeouts
from scorer.runner.phases import PhaseSettings, ProgressLines
from scorer.runner.upload import irregular_entries

FIRST_VARIANTS = {
    row["dialog_id"]: [v[0] for v in row["references"]]
    for row in map(json.loads, (PUBLIC / "answers.jsonl").read_text(encoding="utf-8").splitlines())
    if row
}
#: The targets long enough that finding one in a text is no accident.
LONG_TARGETS = sorted({t for ts in FIRST_VARIANTS.values() for t in ts if len(t) >= 12})
NULL_RECORD = {"kind": None, "phase": None, "function": None, "dialog_id": None, "turn": None}

#: What a hostile team does first: find --data on its parent's command line (the runner's), and the answers
#: in it if they are there.
STEAL = """
import json, os, sys

def _data_folder():
    with open("/proc/%d/cmdline" % os.getppid(), "rb") as fh:
        words = fh.read().decode("utf-8", "replace").split("\\0")
    return words[words.index("--data") + 1] if "--data" in words else None

def _stolen():
    data = _data_folder()
    path = os.path.join(data, "answers.jsonl") if data else ""
    if not path or not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return [v[0] for line in fh if line.strip() for v in json.loads(line)["references"]]
"""


#: ``python -m scorer run`` as a process (:func:`run_process`), allowed 180 s.
run = functools.partial(run_process, timeout=180)


def public_only(folder: Path) -> Path:
    """The bundled example without its answers: ``dialogues.jsonl`` and the media it names (what a bundle's
    ``input_data/`` holds)."""
    folder.mkdir(parents=True)
    shutil.copy(PUBLIC / "dialogues.jsonl", folder)
    for media in ("images", "audio"):
        shutil.copytree(PUBLIC / media, folder / media)
    return folder


def with_config(folder: Path, text: str) -> Path:
    """A copy of the bundled example (answers included) with this ``config.toml``."""
    shutil.copytree(PUBLIC, folder)
    (folder / "config.toml").write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def record(out: Path) -> dict:
    return json.loads((out / "run_fault.json").read_text(encoding="utf-8"))


# --- the network: quick -------------------------------------------------------------------------------------


def test_where_the_interfaces_cannot_be_listed_the_check_fails_closed(monkeypatch):
    def refused(*args, **kwargs):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(network.socket, "if_nameindex", refused)
    monkeypatch.setattr(network, "open", refused, raising=False)  # /proc/self/net/dev
    said = network_refusal()
    assert said is not None and "\n" not in said
    assert said.startswith("the network interfaces cannot be checked here (if_nameindex: Permission denied")
    assert NETWORK_DISABLED in said and 'network = "allowed"' in said


def test_an_interface_whose_flags_cannot_be_read_fails_closed(monkeypatch):
    monkeypatch.setattr(network, "_interface_names", lambda: (["lo", "x" * 20], ""))
    said = network_refusal()
    assert said is not None and "an interface name of 20 bytes" in said


def test_a_network_fault_is_a_kind_of_its_own_and_step_a_function_the_scoring_step_repeats():
    from scorer import code_step

    assert "network" in FAULT_KINDS and FUNCTIONS[-1] == "step"
    assert TEAM_FUNCTIONS == ("setup_model_and_tokenizer", "generate_text", "get_ppl")
    assert set(SEALED_MESSAGES) == set(FAULT_KINDS)
    turns = {"d-1": 2}
    assert code_step._fault_text(NETWORK_FAULT, turns) == "network"
    step = {"kind": "timeout", "phase": "ppl", "function": "step", "dialog_id": "d-1", "turn": 1}
    assert code_step._fault_text(step, turns) == "timeout; phase ppl, function step, dialog_id 'd-1', turn 1"


# --- the network: for real, in network namespaces made for each test (never the machine's own) --------------


def in_namespace(setup: str, command: list[str], timeout: float = 180) -> subprocess.CompletedProcess:
    """``command`` in a network namespace of its own (:func:`in_network_namespace`: skipped, with
    the reason, where none can be made), after the shell lines ``setup`` (``ip`` making its interfaces)."""
    return subprocess.run(
        [*in_network_namespace(setup), *command], capture_output=True, text=True, cwd=ROOT, timeout=timeout
    )


CHECK = [sys.executable, "-c", "from scorer.runner.network import network_refusal; print(network_refusal())"]
#: The interfaces ``ip`` lists up, then what the check says, as JSON, from one process in one namespace.
LISTED_AND_CHECKED = [
    sys.executable,
    "-c",
    "import json, subprocess\n"
    "from scorer.runner.network import network_refusal\n"
    "ip = subprocess.run(['ip', '-o', 'link', 'show', 'up'], capture_output=True, text=True, check=True)\n"
    "print(json.dumps([ip.stdout, network_refusal()]))",
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "setup",
    ["true", LOOPBACK_ONLY, f"{INTERFACE_ADDED}\n{LOOPBACK_ONLY}"],
    ids=["loopback-down", "loopback-up", "interfaces-down"],
)
def test_a_namespace_with_only_loopback_up_is_no_network(setup):
    done = in_namespace(setup, CHECK)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None"


@pytest.mark.slow
def test_an_interface_up_in_the_processs_own_namespace_is_refused_by_name():
    done = in_namespace(INTERFACE_UP, CHECK)
    assert done.returncode == 0, done.stderr
    said = done.stdout.strip()
    assert "a network interface other than loopback is up in this process's network namespace ('v0')" in said
    # v1 (a veth pair's other end, where there is no dummy interface) is down; loopback is never a network
    assert "v1" not in said and "'lo'" not in said
    assert "COMPETITION_CONTAINER_NETWORK_DISABLED=True" in said


@pytest.mark.slow
@pytest.mark.parametrize("setup", [LOOPBACK_ONLY, INTERFACE_UP], ids=["loopback", "one-up"])
def test_a_namespace_is_judged_by_the_interfaces_ip_lists_up_in_it(setup):
    done = in_namespace(setup, LISTED_AND_CHECKED)
    assert done.returncode == 0, done.stderr
    listed, said = json.loads(done.stdout)
    shown = re.findall(r"^\d+: ([^:@]+)(?:@[^:]*)?: <([^>]*)>", listed, re.MULTILINE)
    up = sorted(name for name, flags in shown if "LOOPBACK" not in flags.split(","))
    assert up == ([] if setup == LOOPBACK_ONLY else ["v0"])
    if not up:
        assert said is None
    else:
        assert said is not None and f"({', '.join(repr(n) for n in up)})" in said


IMPORT_MARKER = """
import os
with open(os.environ["TEAM_MARKER"], "a") as fh:
    fh.write("imported\\n")
"""


@pytest.mark.slow
def test_run_offline_refuses_a_network_before_the_code_starts(tmp_path):
    marker = tmp_path / "imported"
    code = toy_team(tmp_path / "t", IMPORT_MARKER + TOY_TEAM)
    data = public_only(tmp_path / "public")
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.txt").write_text("from before", encoding="utf-8")
    command = [sys.executable, "-m", "scorer", "run", "--data", str(data), "--code", str(code),
               "--output", str(out), "--offline", "--quiet"]  # fmt: skip
    env_marker = f"export TEAM_MARKER={marker}"
    done = in_namespace(f"{env_marker}\n{INTERFACE_UP}", command)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: a network interface other than loopback is up") and "('v0')" in line
    assert "COMPETITION_CONTAINER_NETWORK_DISABLED=True" in line
    assert sorted(p.name for p in out.iterdir()) == ["run_fault.json"]
    assert record(out) == {
        "kind": "network",
        "phase": None,
        "function": None,
        "dialog_id": None,
        "turn": None,
    }
    assert not marker.exists()  # the code never started
    # [competition] network = "allowed" does not lift an --offline that was given: it is checked, and said
    allowed = with_config(tmp_path / "allowed", '[competition]\nnetwork = "allowed"\n')
    command[command.index("--data") + 1] = str(allowed)
    command[command.index("--quiet")] = "--phase"
    command.append("ppl")
    done = in_namespace(f"{env_marker}\n{INTERFACE_ADDED}\nip link set v0 up", command)
    assert done.returncode == 2, done.stderr
    assert (
        "run: --offline: the network is checked, although the configuration says [competition] network = "
        '"allowed"'
    ) in done.stderr
    assert not marker.exists()
    # only loopback: the run goes on
    done = in_namespace(f"{env_marker}\n{LOOPBACK_ONLY}", command)
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "imported\n" and (out / "ppl_output.json").exists()


# --- the whole phase bounded --------------------------------------------------------------------------------


def test_each_limit_and_the_step_limit_must_be_positive_numbers_of_seconds():
    assert check_timeouts(120.0, 30.0, None) is None
    assert check_timeouts(120.0, 30.0, 540.0) is None
    assert check_timeouts(120.0, 30.0, 0.0) == "--step-timeout 0: give a positive number of seconds"
    assert check_timeouts(120.0, 30.0, float("inf")) == (
        "--step-timeout inf: give a positive number of seconds"
    )
    assert PhaseSettings(None).step_timeout is None  # no step limit unless given


@pytest.mark.slow
def test_a_phase_past_its_step_timeout_is_stopped_and_named_step(tmp_path):
    pids = tmp_path / "pids"
    slow = TOY_TEAM.replace(
        "def get_ppl(model, tokenizer, cur_query_tuple, history_list):\n",
        "def get_ppl(model, tokenizer, cur_query_tuple, history_list):\n"
        "    import os, time\n"
        f"    with open({str(pids)!r}, 'a') as fh:\n"
        "        fh.write(str(os.getpid()) + '\\n')\n"
        "    time.sleep(1)  # well inside each call's limit; the phase as a whole is what runs too long\n",
    )
    out = tmp_path / "out"
    started = time.monotonic()
    done = run("--data", PUBLIC, "--code", toy_team(tmp_path / "t", slow), "--output", out, "--phase", "ppl",
               "--turn-timeout", "100", "--step-timeout", "5")  # fmt: skip
    took = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    assert took < 50  # 66 turns of 1 s would take over a minute
    line = next(x for x in done.stderr.splitlines() if x.startswith("error: the team's code failed"))
    assert line.startswith("error: the team's code failed (timeout; phase ppl, function step, dialog_id ")
    assert "the phase ran past --step-timeout 5 s (the import, the setup and every call together)" in line
    fault = record(out)
    assert (fault["kind"], fault["phase"], fault["function"]) == ("timeout", "ppl", "step")
    assert fault["dialog_id"] in FIRST_VARIANTS and isinstance(fault["turn"], int)
    assert not (out / "ppl_output.json").exists()
    for pid in {int(x) for x in pids.read_text().split()}:  # the child stopped mid-call is gone
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.slow
def test_a_setup_past_the_step_timeout_is_named_step_with_no_turn(tmp_path):
    slow = TOY_TEAM.replace("    return {}, None", "    import time\n    time.sleep(60)\n    return {}, None")
    out = tmp_path / "out"
    started = time.monotonic()
    done = run("--data", public_only(tmp_path / "public"), "--code", toy_team(tmp_path / "t", slow),
               "--output", out, "--setup-timeout", "100", "--step-timeout", "1")  # fmt: skip
    assert done.returncode == 1 and time.monotonic() - started < 50, done.stderr
    assert "(timeout; phase generate, function step): the phase ran past --step-timeout 1 s" in done.stderr
    assert record(out) == {"kind": "timeout", "phase": "generate", "function": "step", "dialog_id": None,
                           "turn": None}  # fmt: skip
    fast = run("--data", public_only(tmp_path / "public2"), "--code", toy_team(tmp_path / "fast"),
               "--output", tmp_path / "fast-out", "--step-timeout", "100", "--quiet")  # fmt: skip
    assert fast.returncode == 0, fast.stderr
    assert run("--data", PUBLIC, "--code", toy_team(tmp_path / "u"), "--output", tmp_path / "o",
               "--phase", "ppl", "--step-timeout", "-1").returncode == 2  # fmt: skip


# --- entries that are not regular files or folders ----------------------------------------------------------


def irregular_upload(folder: Path, source: str = TOY_TEAM) -> Path:
    """A team folder whose team_code/ holds a FIFO, a link to /dev/zero and a socket beside its real code."""
    toy_team(folder, source)
    os.mkfifo(folder / "team_code" / "weights.fifo")
    os.symlink("/dev/zero", folder / "team_code" / "tokenizer.bin")
    os.makedirs(folder / "team_code" / "cache")
    here = os.getcwd()
    os.chdir(folder / "team_code" / "cache")  # a socket's path has at most 107 bytes
    try:
        with socket.socket(socket.AF_UNIX) as listening:
            listening.bind("daemon.sock")
    finally:
        os.chdir(here)
    return folder


def test_irregular_entries_names_links_fifos_and_sockets_without_opening_them(tmp_path):
    root = irregular_upload(tmp_path / "t")
    os.symlink("team_code", root / "linked_folder")  # a link to a folder is a link, never walked
    (root / "team_code" / "deep" / "er").mkdir(parents=True)
    os.symlink("/etc/passwd", root / "team_code" / "deep" / "er" / "z")
    assert irregular_entries(str(root), limit=10) == [
        "linked_folder",
        "team_code/cache/daemon.sock",
        "team_code/deep/er/z",
        "team_code/tokenizer.bin",
        "team_code/weights.fifo",
    ]
    assert irregular_entries(str(root), limit=2) == ["linked_folder", "team_code/cache/daemon.sock"]
    assert irregular_entries(str(toy_team(tmp_path / "plain"))) == []
    with pytest.raises(ValueError):
        irregular_entries(str(root / "linked_folder"))
    with pytest.raises(ValueError):
        irregular_entries(str(root / "team_code" / "generate.py"))


@pytest.mark.slow
def test_an_upload_with_a_fifo_a_device_link_or_a_socket_is_refused_unopened(tmp_path):
    marker = tmp_path / "imported"
    code = irregular_upload(tmp_path / "t", IMPORT_MARKER + TOY_TEAM)
    out = tmp_path / "out"
    done = run(
        "--data",
        public_only(tmp_path / "public"),
        "--code",
        code,
        "--output",
        out,
        env={"TEAM_MARKER": str(marker)},
        timeout=120,
    )  # fmt: skip  (a read FIFO would hang)
    assert done.returncode == 1, done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("error: "))
    assert line.startswith(
        "error: the team's code failed (upload): the upload holds entries that are neither"
    )
    for name in ("team_code/weights.fifo", "team_code/tokenizer.bin", "team_code/cache/daemon.sock"):
        assert repr(name) in line
    assert record(out) == {**NULL_RECORD, "kind": "upload"}
    assert not marker.exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    "mode, said", [(0o120777, "a symbolic link"), (0o010644, "a FIFO"), (0o020644, "a device")]
)
def test_a_zip_entry_that_is_a_link_a_fifo_or_a_device_is_the_uploads_fault(tmp_path, mode, said):
    archive = tmp_path / "upload.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("team_code/__init__.py", "")
        z.writestr("team_code/generate.py", TOY_TEAM)
        entry = zipfile.ZipInfo("team_code/weights.bin")
        entry.create_system, entry.external_attr = 3, mode << 16
        z.writestr(entry, "/dev/zero")
    out = tmp_path / "out"
    done = run("--data", public_only(tmp_path / "public"), "--code", archive, "--output", out)
    assert done.returncode == 1, done.stderr
    assert f"(upload): the zip's entry 'team_code/weights.bin' is {said}" in done.stderr
    assert record(out)["kind"] == "upload"


# --- the fault in a phase that has the answers --------------------------------------------------------------


def test_a_withheld_fault_is_the_one_fixed_line_and_a_record_of_nulls():
    fault = CodeFault("exception", "boom", "ppl", "get_ppl", "d-1", 3, detail="Traceback ...")
    withheld = fault.withhold()
    assert SEALED_FAULT_LINE == "the team's code failed in the scoring step"
    assert withheld.report() == withheld.report(with_detail=False) == SEALED_FAULT_LINE
    assert withheld.record() == NULL_RECORD
    assert fault.record()["kind"] == "exception"  # the fault itself is unchanged


#: Each way the hostile team fails once it holds the answers: the failure carries a target text.
FAILURES = {
    "raises": "raise RuntimeError('leak: ' + secret)",
    "wrong-value": "return secret",
    "exit-status": "sys.stdout.write(secret); sys.stdout.flush(); os._exit(len(secret) % 200 + 1)",
}


def hostile(failure: str) -> str:
    return STEAL + textwrap.dedent(f"""
        def setup_model_and_tokenizer():
            return {{}}, None

        def generate_text(model, tokenizer, cur_query_list, history_list):
            return "Ответ"

        def get_ppl(model, tokenizer, cur_query_tuple, history_list):
            stolen = _stolen() or ["no answers here"]
            secret = max(stolen, key=len)
            print(secret, file=sys.stderr)
            if len(history_list) == 1:  # the place of the fault would say something too
                {FAILURES[failure]}
            return 2.0
    """)


@pytest.mark.slow
@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_a_fault_beside_the_answers_is_one_fixed_line_with_no_kind_place_or_text(tmp_path, failure):
    code = toy_team(tmp_path / "t", hostile(failure))
    out = tmp_path / "out"
    done = run("--data", PUBLIC, "--code", code, "--output", out, "--phase", "ppl", "--sealed")
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert lines[-1] == SEALED_FAULT_LINE
    assert [x for x in lines if "failed" in x] == [SEALED_FAULT_LINE]
    for target in LONG_TARGETS:
        assert target not in done.stderr and target not in done.stdout
    for hint in ("exception", "wrong_value", "died", "get_ppl", "d-00", "turn", "exit", "signal"):
        assert hint not in lines[-1]
    assert record(out) == NULL_RECORD
    assert sorted(p.name for p in out.iterdir()) == ["run_fault.json"]


@pytest.mark.slow
def test_without_the_answers_a_sealed_fault_keeps_its_kind_and_place(tmp_path):
    data = public_only(tmp_path / "public")
    source = STEAL + TOY_TEAM.replace(
        '    return "Ответ " + str(len(history_list))',
        "    if history_list:\n"
        "        raise RuntimeError('what it found: %r' % _stolen())\n"
        "    return 'Ответ'",
    )
    code = toy_team(tmp_path / "t", source)
    out = tmp_path / "out"
    done = run("--data", data, "--code", code, "--output", out, "--phase", "generate", "--sealed")
    assert done.returncode == 1, done.stderr
    assert "error: the team's code failed (exception; phase generate, function generate_text, dialog_id" in (
        done.stderr
    )
    assert "what it found" not in done.stderr  # sealed: named by kind and place, never by its text
    fault = record(out)
    assert (fault["kind"], fault["phase"], fault["function"], fault["turn"]) == (
        "exception", "generate", "generate_text", 1
    )  # fmt: skip


# --- generating beside the answers --------------------------------------------------------------------------

GENERATING_THIEF = (
    STEAL
    + """
with open(os.environ["TEAM_MARKER"], "a") as fh:
    fh.write("imported\\n")

def setup_model_and_tokenizer():
    return {"stolen": _stolen()}, None

def generate_text(model, tokenizer, cur_query_list, history_list):
    stolen = model["stolen"]
    return stolen[sum(1 for _ in history_list) % len(stolen)] if stolen else "Не знаю"

def get_ppl(model, tokenizer, cur_query_tuple, history_list):
    return 2.0 + len(cur_query_tuple[1]) % 7
"""
)


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["all", "generate"])
def test_generating_beside_the_answers_is_refused_before_the_code_starts(tmp_path, phase):
    marker = tmp_path / "imported"
    out = tmp_path / "out"
    done = run("--data", PUBLIC, "--code", toy_team(tmp_path / "t", GENERATING_THIEF), "--output", out,
               "--phase", phase, env={"TEAM_MARKER": str(marker)})  # fmt: skip
    assert done.returncode == 2, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("error: ")]
    for way_out in (
        "holds answers.jsonl, and the team's code could read the answers",
        "input_data/",
        "run --phase generate --data PUBLIC",
        f"then run --phase ppl --data {PUBLIC}",
        "keeps the submission.jsonl it finds there and writes ppl_output.json and ppl_probes.json",
        "add --trusted-code",
    ):
        assert way_out in line
    assert not marker.exists() and not out.exists()


@pytest.mark.slow
def test_the_two_step_flow_gives_the_thief_nothing_and_trusted_code_says_what_it_allows(tmp_path):
    marker = tmp_path / "imported"
    env = {"TEAM_MARKER": str(marker)}
    code = toy_team(tmp_path / "t", GENERATING_THIEF)
    out = tmp_path / "out"
    first = run("--data", public_only(tmp_path / "public"), "--code", code, "--output", out, "--phase",
                "generate", "--quiet", env=env)  # fmt: skip
    assert first.returncode == 0, first.stderr
    second = run("--data", PUBLIC, "--code", code, "--output", out, "--phase", "ppl", "--quiet", env=env)
    assert second.returncode == 0, second.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "ppl_output.json", "ppl_probes.json", "ppl_targets.json", "submission.jsonl"
    ]  # fmt: skip
    answers = [a for line in (out / "submission.jsonl").read_text("utf-8").splitlines()
               for a in json.loads(line)["answers"]]  # fmt: skip
    assert set(answers) == {"Не знаю"}
    assert validate_cli(out) == 0
    # --trusted-code lifts the refusal, and says on stderr what the same code could then do
    trusted = tmp_path / "trusted"
    done = run("--data", PUBLIC, "--code", code, "--output", trusted, "--trusted-code", "--quiet", env=env)
    assert done.returncode == 0, done.stderr
    assert (
        f"run: --trusted-code: the code runs beside '{PUBLIC / 'answers.jsonl'}' and could read the answers"
        in done.stderr
    )
    stolen = {a for line in (trusted / "submission.jsonl").read_text("utf-8").splitlines()
              for a in json.loads(line)["answers"]}  # fmt: skip
    assert stolen <= {t for ts in FIRST_VARIANTS.values() for t in ts}  # what the warning is about
    # --phase ppl and --only are never refused: the answers are all written before the targets are read
    assert (
        run(
            "--data", PUBLIC, "--code", code, "--output", out, "--phase", "ppl", "--quiet", env=env
        ).returncode
        == 0
    )


# --- ppl_targets.json ---------------------------------------------------------------------------------------


def test_target_digest_is_the_hmac_of_the_targets_canonical_json():
    targets = ["Привет, мир!", 'a "quote"', "tab\there", "\U0001f600"]
    canonical = json.dumps(targets, ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode("ascii")
    assert canonical.startswith(b'["\\u041f\\u0440')
    salt = "s" * 16 + "соль"
    assert (
        target_digest(targets, salt)
        == (hmac.new(salt.encode("utf-8"), canonical, hashlib.sha256).hexdigest()[:16])
    )
    assert target_digest(targets, None) == hashlib.sha256(canonical).hexdigest()[:16]
    assert target_digest(["\ud800"], None) == hashlib.sha256(b'["\\ud800"]').hexdigest()[:16]
    assert target_digest(targets, salt) != target_digest(targets[:-1], salt)
    assert re.fullmatch(r"[0-9a-f]{16}", target_digest([], None))
    assert PPL_TARGETS in OUTPUT_NAMES


@pytest.mark.slow
def test_ppl_targets_holds_each_dialogues_salted_digest_and_only_where_the_targets_are_the_references(
    tmp_path,
):
    salt = "a-salt-of-the-organizers-own-1234"
    data = with_config(tmp_path / "private", f'[hidden_metric]\nsalt = "{salt}"\n')
    code = toy_team(tmp_path / "t")
    out = tmp_path / "out"
    done = run("--data", data, "--code", code, "--output", out, "--phase", "ppl")
    assert done.returncode == 0, done.stderr
    assert f"config: {data / 'config.toml'} (next to the reference data)" in done.stderr
    written = json.loads((out / "ppl_targets.json").read_text(encoding="utf-8"))
    assert list(written) == ["digests"] and list(written["digests"]) == list(FIRST_VARIANTS)
    for dialog_id, targets in FIRST_VARIANTS.items():
        canonical = json.dumps(targets, ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode()
        assert written["digests"][dialog_id] == hmac.new(salt.encode(), canonical, "sha256").hexdigest()[:16]
    assert "unsalted" not in done.stderr
    # without a salt: plain SHA-256, said to be the organizer's only
    plain = tmp_path / "plain"
    done = run("--data", PUBLIC, "--code", code, "--output", plain, "--phase", "ppl")
    assert done.returncode == 0, done.stderr
    assert "config: none" in done.stderr.splitlines()  # a run that read no configuration names none
    assert "run: ppl_targets.json is unsalted" in done.stderr
    digests = json.loads((plain / "ppl_targets.json").read_text(encoding="utf-8"))["digests"]
    # the unsalted digest of contract section 10, worked out here
    canonical = json.dumps(FIRST_VARIANTS["d-0001"], ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    assert digests["d-0001"] == hashlib.sha256(canonical.encode("ascii")).hexdigest()[:16]
    # --only keeps the file beside the ppl_output.json it keeps; the model's own answers give none
    sample = tmp_path / "sample.jsonl"
    sample.write_text('{"dialog_id": "d-0001", "turn": 0}\n', encoding="utf-8")
    assert run("--data", PUBLIC, "--code", code, "--output", plain, "--phase", "ppl", "--only", sample,
               "--quiet").returncode == 0  # fmt: skip
    assert json.loads((plain / "ppl_targets.json").read_text(encoding="utf-8"))["digests"] == digests
    own = tmp_path / "own"
    assert (
        run("--data", public_only(tmp_path / "public"), "--code", code, "--output", own, "--quiet").returncode
        == 0
    )
    assert sorted(p.name for p in own.iterdir()) == ["ppl_output.json", "submission.jsonl"]


# --- the configuration run reads ----------------------------------------------------------------------------


def test_the_runner_reads_its_keys_of_the_configuration_and_nothing_else(tmp_path):
    assert read_configuration(None, str(tmp_path)) == RunConfig()
    (tmp_path / "config.toml").write_text(
        '[audit]\nprobe_turns = 7\n[competition]\nnetwork = "allowed"\n'
        '[hidden_metric]\nsalt = "0123456789abcdef"\n[platform]\nturn_timeout = 5\n',
        encoding="utf-8",
    )  # fmt: skip
    found = read_configuration(None, str(tmp_path))
    assert (found.probe_turns, found.probe_min_words, found.network, found.salt) == (
        7, PROBE_MIN_WORDS, "allowed", "0123456789abcdef"
    )  # fmt: skip
    assert found.source == f"{tmp_path / 'config.toml'} (next to the reference data)"
    assert "0123456789abcdef" not in repr(found)  # the salt is never shown
    given = tmp_path / "given.toml"
    given.write_text("[audit]\nprobe_min_words = 9\n", encoding="utf-8")
    assert read_configuration(str(given), str(tmp_path)).probe_min_words == 9
    for text, said in (
        ('[competition]\nnetwork = "open"\n', 'competition.network must be "refused" or "allowed"'),
        ("[audit]\nprobe_min_words = 1\n", "audit.probe_min_words must be a whole number from 2"),
        ('[hidden_metric]\nsalt = "short"\n', "hidden_metric.salt must be a string of at least 16"),
        ("audit = 3\n", "config key audit must be a [section] table"),
        ("[audit\n", "is not valid TOML"),
    ):
        given.write_text(text, encoding="utf-8")
        with pytest.raises(UsageFault, match=re.escape(said)):
            read_configuration(str(given), str(tmp_path))
    (tmp_path / "config.toml").unlink()
    (tmp_path / "config.toml").mkdir()  # present but not a file: never the default instead
    with pytest.raises(UsageFault, match="is not a regular file"):
        read_configuration(None, str(tmp_path))


def test_the_runners_defaults_are_the_built_in_configurations():
    from scorer.inputs.config import load_config

    config = load_config()
    assert NETWORK_SETTINGS[0] == config.competition.network
    assert config.hidden_metric.salt is None and RunConfig().salt is None


def test_the_command_lines_help_lists_run(capsys):
    assert run_cli("--help") == 0
    listed = capsys.readouterr().out
    assert re.search(r"^\s+run\s+run a team's code", listed, re.MULTILINE), listed


@pytest.mark.slow
def test_python_m_scorer_run_checks_the_whole_configuration_and_says_which_it_used(tmp_path):
    data = with_config(tmp_path / "private", "[audit]\nprobe_turns = 2\nunknown_key = 1\n")
    done = run(
        "--data", data, "--code", toy_team(tmp_path / "t"), "--output", tmp_path / "o", "--phase", "ppl"
    )
    assert done.returncode == 2 and "unknown config key audit.unknown_key" in done.stderr
    given = tmp_path / "given.toml"
    given.write_text("[audit]\nprobe_turns = 2\n", encoding="utf-8")
    out = tmp_path / "out"
    done = run("--data", data, "--code", toy_team(tmp_path / "u"), "--output", out, "--phase", "ppl",
               "--config", given)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"config: config file {given}" in done.stderr.splitlines()
    probes = json.loads((out / "ppl_probes.json").read_text(encoding="utf-8"))
    assert sum(v is not None for vs in probes.values() for v in vs) == 2


# --- the progress of a sealed phase -------------------------------------------------------------------------


def test_marked_progress_lines_come_at_each_quarter_with_their_times_rounded_down_to_10_s(
    monkeypatch, capsys
):
    clock = iter([100.0] + [100.0 + 7 * t for t in range(1, 10)])
    monkeypatch.setattr(phases.time, "monotonic", lambda: next(clock))
    progress = ProgressLines("ppl", 4, 8, quiet=False, marks=4)
    progress.setup_done(3.0)  # no setup line: its time to a tenth of a second would tell more
    for turn in range(1, 9):
        progress((turn - 1) // 2, turn)
    progress(4, 8, force=True)  # nor a last one
    assert capsys.readouterr().err.splitlines() == [
        "run: ppl: 0/4 dialogues, 2/8 turns, 0.20 turns/s, 30 s left (after 10 s, to 10 s)",
        "run: ppl: 1/4 dialogues, 4/8 turns, 0.20 turns/s, 20 s left (after 20 s, to 10 s)",
        "run: ppl: 2/4 dialogues, 6/8 turns, 0.15 turns/s, 13 s left (after 40 s, to 10 s)",
    ]


def test_a_mark_reached_in_the_first_10_s_shows_no_rate(monkeypatch, capsys):
    clock = iter([100.0] + [100.0 + t for t in range(1, 10)])
    monkeypatch.setattr(phases.time, "monotonic", lambda: next(clock))
    progress = ProgressLines("ppl", 4, 8, quiet=False, marks=4)
    for turn in range(1, 9):
        progress((turn - 1) // 2, turn)
    assert capsys.readouterr().err.splitlines() == [
        "run: ppl: 0/4 dialogues, 2/8 turns (in under 10 s)",
        "run: ppl: 1/4 dialogues, 4/8 turns (in under 10 s)",
        "run: ppl: 2/4 dialogues, 6/8 turns (in under 10 s)",
    ]


PROGRESS_OF_A_SEALED_PHASE = """
import json, sys
from scorer.runner import data as runner_data, phases, upload
phases.PROGRESS_SECONDS = 0
data, team, marks, scratch = sys.argv[2:]  # sys.argv[1] is --data, for the team to find
dialogues = runner_data.read_dialogues(data)
targets = runner_data.read_targets(data, dialogues)
settings = phases.PhaseSettings(None, quiet=False, sealed=True, progress_marks=int(marks))
code_root = upload.find_code(team, scratch)
values, _ = phases.perplexities(dialogues, targets, code_root, settings)
print(json.dumps(sorted(values)))
"""


@pytest.mark.slow
@pytest.mark.parametrize("marks", [0, 4], ids=["every-turn", "quarters"])
def test_a_sealed_phase_prints_counts_and_times_only(tmp_path, marks):
    noisy = STEAL + TOY_TEAM.replace(
        "    return 2.0 +", "    print(*_stolen(), file=sys.stderr); print(*_stolen())\n    return 2.0 +"
    )  # fmt: skip
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", PROGRESS_OF_A_SEALED_PHASE, "--data", str(PUBLIC),
         str(toy_team(tmp_path / "t", noisy)), str(marks), str(scratch)],
        capture_output=True, text=True, cwd=ROOT, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    for target in LONG_TARGETS:
        assert target not in done.stderr and target not in done.stdout
    if marks == 0:  # a line a turn, each of counts and times
        counts = r"run: ppl: \d+/40 dialogues, \d+/66 turns, [0-9.]+ turns/s(, \d+ s left)?"
        assert re.fullmatch(r"run: ppl: import and setup took [0-9.]+ s", lines[0]), lines
        assert len(lines) >= 60 and all(re.fullmatch(counts, x) for x in lines[1:]), lines
        return
    # at a quarter, a half and three quarters of the turns, and never otherwise; the times to 10 s
    marked = (
        r"run: ppl: (\d+)/40 dialogues, (\d+)/66 turns(, [0-9.]+ turns/s(, \d+ s left)? "
        r"\(after (\d+) s, to 10 s\)| \(in under 10 s\))"
    )
    found = [re.fullmatch(marked, x) for x in lines]
    assert all(found) and [int(m.group(2)) for m in found] == [17, 33, 50], lines
    assert all(int(m.group(5) or 0) % 10 == 0 for m in found)
