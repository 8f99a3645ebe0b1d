"""What the tests share, in one module of helpers (``conftest.py`` holds the fixtures and hooks alone, and a
test module never imports another): the project's folders, the command line run in this process
(:func:`run_cli`) and in a process of its own (:func:`process`), files made for a test, a code competition's
teams and the scoring step's input, processes watched through ``/proc``, the quick loop's guard, network
namespaces, and the engine tests' words, stage orders and counts.

Every test runs with ``RUWORDNET_PATH`` pointing at :data:`MINI_RWN`, a thesaurus in the RuWordNet XML layout
written for the tests (``conftest.py`` sets it before the first test); the location the suite was started
with is kept in :data:`GIVEN_RWN` for the tests about the real RuWordNet (:func:`real_thesaurus`).
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import itertools
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import dateutil.parser
import pytest

from scorer.metric.engine import accelerator, id_counts
from scorer.metric.engine.counting import stage_counts
from scorer.metric.engine.links import counts_of, type_graph
from scorer.metric.thesaurus import build_index, default_location, identify

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = ROOT / "reference_data" / "public"
EXAMPLES = ROOT / "submissions_examples"
#: The private configs' ``[hidden_metric] salt`` (contract section 7): the key of their signature's HMAC.
SALT = "a7Qw9-tests-salt-3Kd0"
SALTED = f'salt = "{SALT}"\n'

# --- the thesaurus the tests use ----------------------------------------------------------------------------

#: The tests' own thesaurus: every test finds it in ``RUWORDNET_PATH``.
MINI_RWN = Path(__file__).resolve().parent / "data" / "rwn-mini"
#: Set to 1 (CI does), a test about the real RuWordNet fails where it would be skipped for want of it.
REQUIRE_REAL = "SCORER_REQUIRE_REAL_THESAURUS"
#: The ``RUWORDNET_PATH`` the suite was started with, kept before ``conftest.py`` points the variable at the
#: tests' own thesaurus: the workers of ``-n`` start with this process's environment, and must find the same.
GIVEN_RWN = "SCORER_TESTS_GIVEN_RUWORDNET_PATH"


def real_thesaurus() -> Path | None:
    """The real RuWordNet: the location ``RUWORDNET_PATH`` had when the suite started, else the ``ruwordnet``
    package's download; None where neither is there."""
    given = os.environ.get(GIVEN_RWN, "")
    if given:
        return Path(given).resolve() if os.path.exists(given) else None
    found = default_location()
    return found if found is not None and found.exists() else None


def indexed(thesaurus: Path, cache: Path) -> Path:
    """``thesaurus`` with its index built into the cache folder ``cache``, in this process."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SCORER_CACHE_DIR", str(cache))
        build_index(identify(thesaurus))
    return thesaurus


def mini_sqlite(path: Path) -> Path:
    """The made-up thesaurus as an SQLite file in the ``ruwordnet`` package's schema (upper-case lemmas)."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE synset (id TEXT PRIMARY KEY, title TEXT, definition TEXT, part_of_speech TEXT)")
    con.execute("CREATE TABLE sense (id TEXT PRIMARY KEY, name TEXT, lemma TEXT, synset_id TEXT)")
    for xml in sorted(MINI_RWN.glob("synsets.*.xml")):
        for synset in ET.parse(xml).getroot().iter("synset"):
            con.execute(
                "INSERT INTO synset VALUES (?, ?, ?, ?)",
                (
                    synset.get("id"),
                    synset.get("ruthes_name"),
                    synset.get("definition"),
                    synset.get("part_of_speech"),
                ),
            )
            for sense in synset.iter("sense"):
                con.execute(
                    "INSERT INTO sense VALUES (?, ?, ?, ?)",
                    (sense.get("id"), sense.text, sense.text, synset.get("id")),
                )
    con.commit()
    con.close()
    return path


# --- the command line: in this process (run_cli) and in a process of its own (process) ----------------------


def run_cli(*args) -> int:
    """The command line run in this process, as a user types it (every argument made a string): its exit
    code. The one way a test runs a command in pytest's process; a ``capsys`` fixture reads what it
    printed."""
    from scorer import cli

    return cli.main([str(a) for a in args])


def validate_cli(submission: Path, *extra: object, data: Path = PUBLIC) -> int:
    """``validate`` of ``submission`` against ``data``, ``extra`` added, run by :func:`run_cli`: its exit
    code."""
    return run_cli("validate", "--data", data, "--submission", submission, *extra)


def score_cli(submission: Path, output: Path, *extra: object, data: Path = PUBLIC) -> int:
    """``score`` of ``submission`` against ``data`` into ``output``, ``extra`` added, run by :func:`run_cli`:
    its exit code."""
    return run_cli("score", "--data", data, "--submission", submission, "--output", output, *extra)


def score_into(
    tmp_path: Path, submission: Path, *extra: object, out: str = "out", data: Path = PUBLIC
) -> tuple[int, dict | None]:
    """:func:`score_cli` of ``submission`` into ``tmp_path / out``, quick (``--quiet``, ``--jobs 1``): its
    exit code and the ``scores.json`` it wrote (None when it wrote none)."""
    output = tmp_path / out
    code = score_cli(submission, output, "--quiet", "--jobs", "1", *extra, data=data)
    return code, scores_of(output) if (output / "scores.json").exists() else None


def scores_of(folder: Path) -> dict:
    """The ``scores.json`` an output folder holds, read."""
    return json.loads((folder / "scores.json").read_text(encoding="utf-8"))


def leaderboard_cli(submissions: Path, output: Path, *extra: object, data: Path = PUBLIC) -> int:
    """``leaderboard`` of the folders in ``submissions`` against ``data`` into ``output``, ``extra`` added,
    run by :func:`run_cli`: its exit code."""
    return run_cli("leaderboard", "--data", data, "--submissions", submissions, "--output", output, *extra)


def leaderboard_into(data: Path, submissions: Path, output: Path, *extra) -> int:
    """:func:`leaderboard_cli` of the folders in ``submissions`` against ``data`` into ``output``, quick
    (``--quiet``, no page, 40 resamples, ``--jobs 1``): its exit code."""
    quick = ("--quiet", "--no-report", "--resamples", "40", "--jobs", "1")
    return leaderboard_cli(submissions, output, *quick, *extra, data=data)


def bundle_cli(output: Path, *extra: object, data: Path = PUBLIC) -> int:
    """``bundle`` of ``data`` into ``output``, ``extra`` added, run by :func:`run_cli`: its exit code."""
    return run_cli("bundle", "--data", data, "--output", output, *extra)


def make_bundle(tmp_path: Path, name: str = "bundle", *extra, data: Path = PUBLIC) -> Path:
    """:func:`bundle_cli` of ``data`` into ``tmp_path / name`` with ``--image ... --quiet EXTRA``, which must
    exit 0."""
    out = tmp_path / name
    assert bundle_cli(out, "--image", "docker.io/org/scorer:1.0", "--quiet", *extra, data=data) == 0
    return out


def bundle_listing(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (a bundle): its bytes by its ``/``-separated relative path, sorted."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def process(
    *args: object, module: str = "scorer", python: Sequence[str] = (), cwd: Path = ROOT, timeout: float = 120,
    **kwargs,
) -> subprocess.CompletedProcess:  # fmt: skip
    """``python -m scorer`` (or ``-m module``) with ``args`` in a process of its own, from ``cwd``, its output
    captured as text: the one way a test runs a command in a process (a test that calls it is ``slow``).
    ``python``: the words that start the interpreter, where not :data:`sys.executable` alone (in a network
    namespace, without site-packages, ...). ``kwargs`` go to :func:`subprocess.run` (``env`` is the whole
    environment)."""
    return subprocess.run(
        [*(python or [sys.executable]), "-m", module, *map(str, args)],
        **{"cwd": cwd, "capture_output": True, "text": True, "timeout": timeout, **kwargs},
    )


def score_process(
    submission: Path, output: Path, *extra: object, data: Path = PUBLIC, **kwargs
) -> subprocess.CompletedProcess:
    """``score`` of ``submission`` against ``data`` into ``output``, ``extra`` added, run by :func:`process`
    (``kwargs`` go to it)."""
    return process("score", "--data", data, "--submission", submission, "--output", output, *extra, **kwargs)


def run_process(*args: object, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m scorer run`` with ``args`` by :func:`process`, ``env`` added to this process's
    environment (a team's code reads its own variables)."""
    return process("run", *args, env={**os.environ, **(env or {})}, timeout=timeout)


def runner_process(*args: object, env: dict | None = None) -> subprocess.CompletedProcess:
    """The runner alone, ``python -m scorer.runner ARGS --quiet``, by :func:`process`, ``env`` added to this
    process's environment."""
    return process(*args, "--quiet", module="scorer.runner", env={**os.environ, **(env or {})})


def codalab_input(tmp_path: Path, submission: Path = EXAMPLES / "realistic") -> Path:
    """``codalab``'s INPUT: the bundled public data as ``ref/`` and ``submission`` as ``res/``."""
    root = tmp_path / "input"
    shutil.copytree(PUBLIC, root / "ref")
    shutil.copytree(submission, root / "res")
    return root


def codalab_step(
    root: Path, out: Path, *extra: object, python: Sequence[str] = (), env: dict | None = None,
    cwd: Path = ROOT, timeout: float = 120,
) -> subprocess.CompletedProcess:  # fmt: skip
    """``codalab ROOT OUT --no-synonyms EXTRA`` by :func:`process`, with :data:`ATTACK_TEAM`'s environment
    (``ATTACK_OUTPUT``, ``ATTACK_REF``) and ``env`` added to this process's."""
    attack = {"ATTACK_OUTPUT": str(out), "ATTACK_REF": str(root / "ref")}
    return process(
        "codalab", root, out, "--no-synonyms", *extra,
        python=python, cwd=cwd, timeout=timeout, env={**os.environ, **attack, **(env or {})},
    )  # fmt: skip


def private_digest(method, p_max=None):
    """contract section 7: the first 12 hex digits of the HMAC-SHA-256 of the settings' canonical JSON, keyed
    with the salt."""

    settings = {"method": method} if p_max is None else {"method": method, "p_max": p_max}
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return "private-" + hmac.new(SALT.encode(), text.encode("utf-8"), hashlib.sha256).hexdigest()[:12]


# --- files made for a test ----------------------------------------------------------------------------------


def write_jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def write_json(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:
    """The rows of a JSON Lines file, blank lines skipped."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def make_zip(path: Path, entries: dict, method: int = zipfile.ZIP_STORED) -> Path:
    """A zip at ``path`` holding ``entries`` (name: text or bytes), compressed by ``method``."""
    with zipfile.ZipFile(path, "w", method) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def make_split(root: Path, dialogues: list[tuple[str, str, list[list[str]]]]) -> Path:
    """dialogues: (dialog_id, type, references per turn) -> a reference directory."""
    data = root / "data"
    write_jsonl(
        data / "dialogues.jsonl",
        [
            {
                "dialog_id": d,
                "type": t,
                "turns": [[{"type": "text", "content": f"вопрос {k}"}] for k in range(len(r))],
            }
            for d, t, r in dialogues
        ],
    )
    write_jsonl(data / "answers.jsonl", [{"dialog_id": d, "references": r} for d, _, r in dialogues])
    return data


def make_submission(
    root: Path, answers: dict[str, list[str]], ppl: dict[str, list[float]], name="sub"
) -> Path:
    folder = root / name
    write_jsonl(folder / "submission.jsonl", [{"dialog_id": d, "answers": a} for d, a in answers.items()])
    write_json(folder / "ppl_output.json", ppl)
    return folder


def big_split(root: Path, copies: int = 20) -> tuple[Path, Path]:
    """The bundled split repeated ``copies`` times (66 x 20 = 1,320 turns), with the realistic answers:
    a reference directory and a submission folder under ``root``."""
    dialogues = read_jsonl(PUBLIC / "dialogues.jsonl")
    answers = {row["dialog_id"]: row["references"] for row in read_jsonl(PUBLIC / "answers.jsonl")}
    given = {
        row["dialog_id"]: row["answers"] for row in read_jsonl(EXAMPLES / "realistic" / "submission.jsonl")
    }
    ppl = json.loads((EXAMPLES / "realistic" / "ppl_output.json").read_text(encoding="utf-8"))
    ids = [(f"{d['dialog_id']}-{k}", d) for k in range(copies) for d in dialogues]
    data = make_split(root, [(name, d["type"], answers[d["dialog_id"]]) for name, d in ids])
    sub = make_submission(
        root, {name: given[d["dialog_id"]] for name, d in ids}, {name: ppl[d["dialog_id"]] for name, d in ids}
    )
    return data, sub


#: The lines of the realistic example's ``submission.jsonl``, its bytes and its ``ppl_output.json``'s, for
#: uploads made from it.
ROWS = [
    json.loads(line) for line in (EXAMPLES / "realistic" / "submission.jsonl").read_text("utf-8").splitlines()
]
VALID_SUB = (EXAMPLES / "realistic" / "submission.jsonl").read_bytes()
VALID_PPL = (EXAMPLES / "realistic" / "ppl_output.json").read_bytes()


def upload(root: Path, first_answer: str | None = None, rows=None) -> Path:
    """The realistic example with the first answer replaced."""
    rows = json.loads(json.dumps(rows or ROWS))
    if first_answer is not None:
        rows[0]["answers"][0] = first_answer
    root.mkdir(parents=True, exist_ok=True)
    (root / "submission.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    (root / "ppl_output.json").write_bytes(VALID_PPL)
    return root


def codabench_instant(value: object) -> datetime.datetime | None:
    """A phase's ``start`` or ``end`` as Codabench's unpacker reads it (``get_datetime`` in
    ``src/apps/competitions/unpackers/utils.py``, codalab/codabench at c7dbc756): nothing is None; a YAML
    date, or a date-time (a ``datetime`` is a ``date`` too, and that test comes first), is that day at
    midnight; a string is parsed whole by dateutil; the result is in UTC."""
    if not value:
        return None
    if isinstance(value, datetime.date):
        value = datetime.datetime.combine(value, datetime.time())
    elif not isinstance(value, datetime.datetime):
        value = dateutil.parser.parse(str(value))
    assert isinstance(value, datetime.datetime)
    return value.replace(tzinfo=datetime.UTC)


# --- a code competition's teams and its scoring step (contract section 10) ----------------------------------

#: A toy team of the code competition (contract section 10): every call answers, the perplexities vary.
TOY_TEAM = """
def setup_model_and_tokenizer():
    return {}, None

def generate_text(model, tokenizer, cur_query_list, history_list):
    return "Ответ " + str(len(history_list))

def get_ppl(model, tokenizer, cur_query_tuple, history_list):
    return 2.0 + len(cur_query_tuple[1]) % 11
"""


def toy_team(folder: Path, source: str = TOY_TEAM) -> Path:
    """A team's upload in ``folder``: ``team_code/`` with this ``generate.py``."""
    (folder / "team_code").mkdir(parents=True)
    (folder / "team_code" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "team_code" / "generate.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return folder


#: A team of a code competition's scoring step (contract section 10) whose ``get_ppl`` runs an attack once, at
#: its first call: ``<attack>`` is the body of ``_attack(target)``, which has ``out`` (OUTPUT, from
#: ``ATTACK_OUTPUT``) and ``ref`` (the reference data, from ``ATTACK_REF``) at hand.
ATTACK_TEAM = """
import os

def setup_model_and_tokenizer():
    return {}, None

def generate_text(model, tokenizer, cur_query_list, history_list):
    return "Ответ: " + " ".join(p["content"] for p in cur_query_list if p["type"] == "text")

def get_ppl(model, tokenizer, cur_query_tuple, history_list):
    _attack(cur_query_tuple[1])
    return 2.0 + len(cur_query_tuple[1]) % 13

_done = []

def _attack(target):
    if _done:
        return
    _done.append(1)
    out, ref = os.environ.get("ATTACK_OUTPUT"), os.environ.get("ATTACK_REF")
<attack>
"""


def attack_team(folder: Path, attack: str = "pass") -> Path:
    """An upload in ``folder`` whose ``team_code/generate.py`` is :data:`ATTACK_TEAM` with ``attack``."""
    source = ATTACK_TEAM.replace("<attack>", textwrap.indent(textwrap.dedent(attack), "    "))
    return toy_team(folder, source)


def code_step_input(tmp_path: Path, attack: str = "pass", config: str = "", code: bool = True) -> Path:
    """INPUT of a code competition's scoring step: ``ref/`` the example's reference data with the code
    competition's config (``network = "allowed"``: the machine running the tests may have a network, whose
    check has tests of its own; ``config`` appended; none when ``code`` is false), ``res/`` the prediction
    step's output: ``submission.jsonl`` of ``--phase generate --keep-code`` on the dialogues and their media
    (no answer), and :func:`attack_team`'s ``team_code/``. Every attack acts in ``get_ppl`` alone, so the
    answers are the same for all: the prediction step runs once a session (:func:`_predicted_answers`)."""
    root = tmp_path / "input"
    shutil.copytree(PUBLIC, root / "ref")
    if code:
        (root / "ref" / "config.toml").write_text(
            '[competition]\nsubmissions = "code"\nnetwork = "allowed"\n' + config, encoding="utf-8"
        )
    (root / "res").mkdir()
    shutil.copyfile(_predicted_answers(), root / "res" / "submission.jsonl")
    attack_team(root / "res", attack)
    return root


_PREDICTED: list[Path] = []


def _predicted_answers() -> Path:
    """``submission.jsonl`` of the prediction step of :data:`ATTACK_TEAM` (any attack), made once a run."""
    if not _PREDICTED:
        import atexit
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="scorer-prediction-"))
        atexit.register(shutil.rmtree, folder, True)
        public = folder / "input_data"
        shutil.copytree(PUBLIC, public, ignore=shutil.ignore_patterns("answers.jsonl", "*.csv"))
        done = runner_process("--data", public, "--code", attack_team(folder / "team"),
                              "--output", folder / "res", "--phase", "generate", "--keep-code")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert sorted(p.name for p in (folder / "res").iterdir()) == ["submission.jsonl", "team_code"]
        _PREDICTED.append(folder / "res" / "submission.jsonl")
    return _PREDICTED[0]


#: A team whose ``get_ppl`` raises at its call number ``<at>`` (from 1): a fault of the code at that point of
#: the scoring step's phase.
FAULT_TEAM = """
def setup_model_and_tokenizer():
    return {}, None

def generate_text(model, tokenizer, cur_query_list, history_list):
    return "Ответ"

_calls = []

def get_ppl(model, tokenizer, cur_query_tuple, history_list):
    _calls.append(1)
    if len(_calls) >= <at>:
        raise ValueError(cur_query_tuple[1])
    return 2.0
"""


def fault_step(
    root: Path, out: Path, *extra: object, last: bool = False, **kwargs
) -> subprocess.CompletedProcess:
    """:func:`codalab_step` on ``root`` with its ``team_code`` replaced by :data:`FAULT_TEAM`, raising at the
    first call of ``get_ppl``, or with ``last`` at its last (every progress line printed before): what the
    step prints for a fault of the code at that point, which a surprise of the step prints exactly too
    (contract section 10)."""
    lines = (root / "ref" / "dialogues.jsonl").read_text(encoding="utf-8").splitlines()
    turns = sum(len(json.loads(line)["turns"]) for line in lines if line.strip())
    shutil.rmtree(root / "res" / "team_code")
    toy_team(root / "res", FAULT_TEAM.replace("<at>", str(turns if last else 1)))
    out.mkdir(exist_ok=True)
    return codalab_step(root, out, *extra, **kwargs)


#: What ``codalab`` prints on stderr for a fault of the code in the scoring step, after its ``config:`` line
#: and the progress lines the phase printed; a surprise of the step prints exactly this too (contract
#: section 10: no second line that would tell one from the other).
FAULT_LINES = (
    "error: the submission is invalid (1 error); it was not scored:\n"
    "  - team_code: the team's code failed in the scoring step\n"
)


def assert_reported_as_a_fault(
    root: Path, done: subprocess.CompletedProcess, out: Path, *extra: object, last: bool = False
) -> None:
    """``done``, a run of the scoring step on ``root`` that met a surprise, printed byte for byte what the
    step prints for a fault of the code at the same point of the phase (:func:`fault_step` into ``out``, at
    the first call of ``get_ppl``, or with ``last`` after every progress line): exit 1, nothing on stdout,
    and on stderr the ``config:`` line, the progress lines, :data:`FAULT_LINES`."""
    from scorer.code_step import PROGRESS_MARKS

    fault = fault_step(root, out, *extra, last=last)
    assert (done.returncode, fault.returncode) == (1, 1), done.stderr
    assert (done.stdout, done.stderr) == (fault.stdout, fault.stderr)
    config = f"config: {root / 'ref' / 'config.toml'} (next to the reference data)\n"
    progress = [line for line in done.stderr.splitlines(keepends=True) if line.startswith("run: ppl: ")]
    assert done.stdout == "" and done.stderr == config + "".join(progress) + FAULT_LINES
    assert len(progress) == (PROGRESS_MARKS - 1 if last else 0)


def scored_by_the_library(root: Path, ppl: dict[str, list[float]], folder: Path):
    """What the library scores of a code competition's scoring step INPUT ``root`` (``ref/``, with its
    config, and the answers of ``res/submission.jsonl``) with the perplexities ``ppl``, as ``codalab
    --no-synonyms`` scores them: a ``ScoreResult`` with every figure at full precision and every turn's.
    ``folder`` (made here) holds the files scored."""
    from scorer.api import score_submission

    folder.mkdir(parents=True)
    shutil.copyfile(root / "res" / "submission.jsonl", folder / "submission.jsonl")
    write_json(folder / "ppl_output.json", ppl)
    return score_submission(root / "ref", folder, synonyms=False, jobs=1)


def posted_by(result, decimals: int = 4) -> dict:
    """The figures a code competition's ``scores.json`` posts for the library's ``result`` (its keys, the
    ``by_type`` table included): each ``round(x, decimals)`` of the full-precision value (contract section 10,
    "the figures")."""
    s = result.summary
    return {
        "integral": round(s.integral, decimals),
        "meteor": round(s.meteor, decimals),
        "hidden_metric": round(s.hidden_metric, decimals),
        "by_type": {
            name: {
                "weight": round(t.weight, decimals),
                "dialogs": t.dialogs,
                "turns": t.turns,
                "meteor": round(t.meteor, decimals),
                "hidden_metric": round(t.hidden_metric, decimals),
                "score": round(t.score, decimals),
            }
            for name, t in s.by_type.items()
        },
    }


# --- processes, watched through /proc -----------------------------------------------------------------------


def has_sigterm_handler(pid: int) -> bool:
    """Whether the process has its own SIGTERM handler: the first thing ``python -m scorer`` sets."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            mask = next(int(line.split()[1], 16) for line in fh if line.startswith("SigCgt:"))
    except (OSError, StopIteration, ValueError):
        return False
    return bool(mask >> (signal.SIGTERM - 1) & 1)


def process_state(pid: int) -> str | None:
    """Process ``pid``'s state in ``/proc/PID/stat`` (``R``, ``S``, ``T`` stopped, ``Z`` a zombie, ...), or
    None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def gone(*pids: int, within: float) -> bool:
    """Whether every one of the processes ``pids`` is gone (no such process: ended and reaped) within
    ``within`` seconds: at once when they are, never later than the bound."""
    deadline = time.monotonic() + within
    while any(process_state(pid) is not None for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


# --- a quick test starts no process (the guard conftest.py's hooks put around each test) -------------------


class StartsAProcess(RuntimeError):
    """Raised where a test not marked ``slow`` starts a process."""


def _process_starts() -> list[tuple[object, str]]:
    """Every way a process is started here: a program (``subprocess``, ``os.system``, ``posix_spawn``,
    multiprocessing's ``spawn`` and ``forkserver``, which call ``fork_exec``) or a fork (the worker pool,
    multiprocessing's ``fork``)."""
    import _posixsubprocess

    forks = ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system")
    return [
        (subprocess.Popen, "_execute_child"),
        (_posixsubprocess, "fork_exec"),
        *[(os, name) for name in forks if hasattr(os, name)],
    ]


#: True while the session sets up what every test shares (:func:`shared_setup`), which may start a process
#: whichever test comes first.
_in_shared_setup = False


@contextmanager
def shared_setup() -> Iterator[None]:
    """Around what the session sets up for every test before the first one (``conftest.py``'s
    ``_started_before_the_first_test``): it may start a process, whichever test comes first."""
    global _in_shared_setup
    _in_shared_setup = True
    try:
        yield
    finally:
        _in_shared_setup = False


@contextmanager
def no_process_started(item: pytest.Item) -> Iterator[None]:
    """Around a phase of a test not marked ``slow``: every way of starting a process raises
    :class:`StartsAProcess`, and the phase fails naming the test, even where the code under test caught that
    error and went on."""
    if item.get_closest_marker("slow") is not None:
        yield
        return
    started: list[str] = []

    def refused(what: str, original):
        def start(*args, **kwargs):
            if _in_shared_setup:
                return original(*args, **kwargs)
            started.append(f"{item.nodeid} starts a process ({what}): mark it slow (docs/testing.md)")
            raise StartsAProcess(started[-1])

        return start

    saved = [(owner, name, getattr(owner, name)) for owner, name in _process_starts()]
    for owner, name, original in saved:
        setattr(owner, name, refused(f"{getattr(owner, '__name__', owner)}.{name}", original))
    try:
        yield
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
        if started:
            pytest.fail(started[0], pytrace=False)


# --- network namespaces: the network check (contract section 10) tested apart from the machine's own -------

#: The shell lines that add one network interface other than loopback, ``v0``, left down: a dummy interface
#: where the kernel has the dummy module, else one end of a veth pair (its other end, ``v1``, down too).
INTERFACE_ADDED = "{ ip link add v0 type dummy 2>/dev/null || ip link add v0 type veth peer name v1; }"
#: The same, with ``v0`` up (and loopback up): a namespace with a network.
INTERFACE_UP = f"{INTERFACE_ADDED}\nip link set v0 up\nip link set lo up"
#: Loopback alone, up: a namespace without a network, as a worker that takes the network away gives.
LOOPBACK_ONLY = "ip link set lo up"


def _unshare() -> list[str]:
    """``unshare --net`` as root; ``unshare -rn`` otherwise (a user namespace too, in which the user may make
    a network namespace and its interfaces)."""
    return ["unshare", "--net"] if os.geteuid() == 0 else ["unshare", "-rn"]


_NAMESPACE_PROBLEM: list[str | None] = []


def _namespace_problem() -> str | None:
    """Why this machine cannot give a test a network namespace of its own with an interface up, or None;
    found once a session, by making one."""
    if not _NAMESPACE_PROBLEM:
        missing = [tool for tool in ("unshare", "ip", "sh") if shutil.which(tool) is None]
        if missing:
            _NAMESPACE_PROBLEM.append(f"{' and '.join(missing)} not found")
        else:
            script = f"set -e\n{INTERFACE_UP}\nip -o link show up"
            try:
                done = subprocess.run(
                    [*_unshare(), "sh", "-c", script], capture_output=True, text=True, timeout=60
                )
                lines = done.stderr.strip().splitlines()
                fault = None if done.returncode == 0 and " v0" in done.stdout else (lines or ["no v0 up"])[-1]
            except (OSError, subprocess.TimeoutExpired) as exc:
                fault = str(exc)
            _NAMESPACE_PROBLEM.append(None if fault is None else f"{' '.join(_unshare())}: {fault}")
    return _NAMESPACE_PROBLEM[0]


def in_network_namespace(setup: str = LOOPBACK_ONLY) -> list[str]:
    """The words to put before a command to run it in a network namespace of its own, made for it, after the
    shell lines ``setup`` (``ip`` making its interfaces: :data:`INTERFACE_UP`, :data:`LOOPBACK_ONLY`), so
    that what the command finds never depends on the machine's own interfaces. Skips the test, with the
    reason, where such a namespace cannot be made here (CI runs these tests and fails on a skip)."""
    problem = _namespace_problem()
    if problem is not None:
        pytest.skip(f"no network namespace with an interface up can be made here ({problem})")
    return [*_unshare(), "sh", "-c", f'set -e\n{setup}\nexec "$@"', "sh"]


# --- the engine's tests -------------------------------------------------------------------------------------

# Words sharing lemmas (лечу: лететь+лечить, стали: сталь+стать, пила: пить+пила, дома: дом+дома,
# коты: кот+коты) and synsets of the tests' thesaurus (мчаться/лететь, зеленый/недозрелый, пить/выпивать).
WORDS = [
    "лечу",
    "мчаться",
    "лететь",
    "лечить",
    "стали",
    "сталь",
    "стать",
    "сталью",
    "стал",
    "пила",
    "пить",
    "выпивать",
    "зеленый",
    "недозрелый",
    "дом",
    "дома",
    "кот",
    "коты",
]

# Every stage order the configuration allows: each non-empty ordered selection of the three stages.
STAGE_ORDERS = [
    order for k in (3, 2, 1) for order in itertools.permutations(("exact", "lemma", "synonym"), k)
]


def counted(cand, ref, matcher, stages):
    keys = matcher.key_functions(stages)
    return stage_counts(type_graph(counts_of(cand), counts_of(ref), keys), len(keys))


#: The module as Python and, when built, compiled: every test runs on both.
ID_COUNTS_MODULES = [id_counts] + ([accelerator._built()[0]["id_counts"]] if accelerator.compiled() else [])


def pair_counts(table, cand, ref):
    """A key table's rule-1 counts of one candidate against one reference (``counts_each`` of one)."""
    return table.counts_each(cand, [ref])[0]


def table_for(keys, module=id_counts):
    key_ids: dict[str, int] = {}

    def intern(token: str) -> int:
        return table.add(
            token, [sorted({key_ids.setdefault(k, len(key_ids)) for k in keys[token][s]}) for s in range(2)]
        )

    table = module.KeyTable(2, intern)
    return table
