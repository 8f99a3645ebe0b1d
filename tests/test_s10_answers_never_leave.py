"""Contract section 10, "The answers never leave": in the scoring step of a code competition the team's code
can read every reference variant, so each channel from it to what a participant sees is closed or bounded.
Each test is an attack written as a team would write it (a real ``team_code/generate.py`` run by the real
scoring step), and the step fails closed (exit 1 with ``OUTPUT`` emptied, or exit 2 for a network) or
posts only what an honest run posts."""

from __future__ import annotations

import json
import math
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
from helpers import (
    INTERFACE_UP,
    LOOPBACK_ONLY,
    PUBLIC,
    ROOT,
    assert_reported_as_a_fault,
    codalab_step,
    code_step_input,
    in_network_namespace,
    posted_by,
    read_jsonl,
    scored_by_the_library,
    toy_team,
    write_jsonl,
)

from scorer import api
from scorer.code_step import PROGRESS_MARKS
from scorer.inputs.config import config_for

pytestmark = pytest.mark.slow

SECURITY = ROOT / "docs" / "security.md"

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
    assert_failed_closed(out, done)
    assert_reported_as_a_fault(root, done, tmp_path / "fault", "--jobs", "1")


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
    # the folder the step held is emptied; the forged one is never written to, and the step's exit is 1,
    # after which the platform posts nothing
    assert list((tmp_path / "out.honest").iterdir()) == []
    assert sorted(p.name for p in out.iterdir()) == ["scores.json"]
    # found once the phase ended, and reported as a fault of the code there is (which surprise: never said)
    assert_reported_as_a_fault(root, done, tmp_path / "fault", "--jobs", "1", last=True)


def test_an_output_folder_renamed_away_and_left_missing_is_a_surprise(tmp_path):
    root = code_step_input(tmp_path, 'os.rename(out, out + ".away")')
    out = tmp_path / "out"
    done = codalab(root, out)
    assert done.returncode == 1, done.stderr
    assert list((tmp_path / "out.away").iterdir()) == []
    assert_reported_as_a_fault(root, done, tmp_path / "fault", "--jobs", "1", last=True)


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


#: docs/security.md's bound of the figures: N = A n_T + B posted numbers, the N it states for a number of
#: types, and the bits that gives at d = 4 and at d = 2.
FIGURES_BOUND = re.compile(
    r"at most \((\d+) n_T \+ (\d+)\) x log2\(10\^d \+ 1\) bits: N = (\d+) with (\d+) types, "
    r"([\d.]+) bits at d = 4, ([\d.]+) at d = 2"
)

#: The overall figures, by their names in ``scores.json`` and ``scores.txt``; and a type's, by their suffix.
OVERALL = ("integral", "meteor", "hidden_metric")
PER_TYPE = {"": "score", "_meteor": "meteor", "_hidden_metric": "hidden_metric"}


def posted_numbers(root: Path, out: Path, done: subprocess.CompletedProcess) -> tuple[dict, list[str]]:
    """Every number a scored code step posts, from ``scores.json`` (whole), ``scores.txt``, stdout and stderr:
    the figures a run sets, each once whatever the places it is posted in (its value the same in each), by
    name (``("integral",)``, ``(type, "score")``), and the rest, described, each checked to be what no run
    changes (the configuration's weights, the data's counts, the signature) or a progress line (bounded in
    a row of its own). A number that is neither fails the test: nothing posted is left uncounted."""
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    types = list(scores["by_type"])
    lines = (root / "ref" / "dialogues.jsonl").read_text(encoding="utf-8").splitlines()
    dialogues = [json.loads(line) for line in lines if line.strip()]
    of_type = {t: [d for d in dialogues if d["type"] == t] for t in types}
    counts = {t: (len(of_type[t]), sum(len(d["turns"]) for d in of_type[t])) for t in types}
    config, _ = config_for(root / "ref")
    weights = {t: config.weights[t] / sum(config.weights[u] for u in types) for t in types}
    signature = api.competition_signature(root / "ref", config=config, synonyms=False, participant=True)
    figures: dict[tuple[str, ...], float] = {}
    fixed: list[str] = []

    def figure(name: tuple[str, ...] | None, value: object, where: str) -> None:
        assert name is not None and isinstance(value, (int, float, str)), f"{where}: not a posted figure"
        assert figures.setdefault(name, float(value)) == float(value), (
            f"{where}: {name} is posted as two values"
        )

    def not_of_a_run(what: str, value: object, expected: object) -> None:
        assert value == expected, what
        fixed.append(what)

    def named(name: str) -> tuple[str, ...] | None:
        """A figure by its name in ``scores.json`` and ``scores.txt``: ``integral``, ``Text2Text_meteor``."""
        if name in OVERALL:
            return (name,)
        for t in types:
            if name.startswith(t) and name[len(t) :] in PER_TYPE:
                return (t, PER_TYPE[name[len(t) :]])
        return None

    for key, value in scores.items():
        if key == "by_type":
            for t, row in value.items():
                assert set(row) == {"weight", "dialogs", "turns", "meteor", "hidden_metric", "score"}, row
                not_of_a_run(f"scores.json {t} weight", row["weight"], round(weights[t], 4))
                not_of_a_run(f"scores.json {t} counts", (row["dialogs"], row["turns"]), counts[t])
                for column in ("meteor", "hidden_metric", "score"):
                    figure((t, column), row[column], f"scores.json by_type {t} {column}")
        elif key == "counts":
            total = tuple(sum(c[i] for c in counts.values()) for i in (0, 1))
            not_of_a_run("scores.json counts", (value["dialogs"], value["turns"]), total)
        elif key == "signature":
            not_of_a_run("scores.json signature", value, signature)
        elif key in ("status", "warnings"):
            assert value == {"status": "ok", "warnings": []}[key], key
        else:
            figure(named(key), value, f"scores.json {key}")
    for line in (out / "scores.txt").read_text(encoding="utf-8").splitlines():
        name, value = line.split(": ")
        figure(named(name), value, f"scores.txt {line}")
    for line in done.stdout.splitlines():
        words = line.split()
        if line.startswith("signature: "):
            not_of_a_run("stdout signature", line, f"signature: {signature}")
        elif line.startswith("integral: "):
            figure(("integral",), words[1], line)
        elif words and words[0] in types:
            t = words[0]
            assert len(words) == 7, line
            not_of_a_run(f"stdout {t} weight", float(words[1]), round(weights[t], 2))
            not_of_a_run(f"stdout {t} counts", (int(words[2]), int(words[3])), counts[t])
            for column, value in zip(("meteor", "hidden_metric", "score"), words[4:]):
                figure((t, column), value, line)
        elif words and words[0] == "weighted":
            assert len(words) == 6, line
            not_of_a_run(
                "stdout counts",
                (int(words[1]), int(words[2])),
                (scores["counts"]["dialogs"], scores["counts"]["turns"]),
            )
            for name, value in zip(OVERALL[1:] + OVERALL[:1], words[3:]):
                figure((name,), value, line)
        else:  # the header, the rules, the stages
            assert not re.search(r"\d", line), f"stdout: an uncounted number: {line}"
    for line in done.stderr.splitlines():
        if line.startswith("run: ppl: "):
            fixed.append(f"the progress line {line!r}")
        else:
            assert line == f"config: {root / 'ref' / 'config.toml'} (next to the reference data)", line
    return figures, fixed


def test_every_number_codalab_posts_is_counted_in_the_figures_bound(tmp_path):
    root = code_step_input(tmp_path)
    out = tmp_path / "out"
    done = codalab(root, out)
    assert done.returncode == 0, done.stderr
    figures, fixed = posted_numbers(root, out, done)
    types = {name[0] for name in figures if len(name) == 2}
    assert len(types) == 4  # the example's data: every type
    rows = SECURITY.read_text(encoding="utf-8").splitlines()
    row = next(line for line in rows if line.startswith("| the figures |"))
    found = FIGURES_BOUND.search(row)
    assert found, row
    per_type, overall, stated, stated_types = map(int, found.groups()[:4])
    # the docs' N, by its formula and as stated for 4 types, is the count of what a real step posts
    assert (stated_types, per_type * len(types) + overall, stated) == (len(types), len(figures), len(figures))
    assert len(figures) == 15, sorted(figures)
    for decimals, bits in zip((4, 2), found.groups()[4:]):
        assert float(bits) == round(stated * math.log2(10**decimals + 1), 1)
    # and the numbers not counted: each type's weight and counts in scores.json and in the table, the
    # overall counts in both, the signature in both, and the progress lines
    assert len([f for f in fixed if f.startswith("the progress line")]) == PROGRESS_MARKS - 1
    assert len(fixed) == 2 * 2 * len(types) + 2 + 2 + PROGRESS_MARKS - 1


#: A team whose perplexities are no round numbers: every turn's hidden metric lies strictly between 0 and 1.
UNEVEN_PPL_TEAM = """
def setup_model_and_tokenizer():
    return {}, None

def generate_text(model, tokenizer, cur_query_list, history_list):
    return "Ответ"

def get_ppl(model, tokenizer, cur_query_tuple, history_list):
    return 1.0 + (len(cur_query_tuple[1]) % 23) * 0.6180339887 + 0.0123 * len(history_list)
"""


def _all_but_the_last_word(target: str) -> str:
    """An answer matching part of ``target`` and holding a word no reference has: a METEOR strictly between 0
    and 1."""
    words = target.split()
    return " ".join(words[:-1] + ["зебра"]) if len(words) > 1 else target + " зебра"


def test_no_per_turn_figure_is_written_or_printed(tmp_path):
    root = code_step_input(tmp_path)
    shutil.rmtree(root / "res" / "team_code")
    toy_team(root / "res", UNEVEN_PPL_TEAM)
    references = read_jsonl(root / "ref" / "answers.jsonl")
    write_jsonl(
        root / "res" / "submission.jsonl",
        [
            {"dialog_id": r["dialog_id"], "answers": [_all_but_the_last_word(t[0]) for t in r["references"]]}
            for r in references
        ],
    )
    out = tmp_path / "out"
    done = codalab(root, out)
    assert done.returncode == 0, done.stderr
    # each turn's METEOR and hidden metric, computed by the library on the same data (get_ppl's own values)
    ppl = {
        r["dialog_id"]: [
            1.0 + (len(t[0]) % 23) * 0.6180339887 + 0.0123 * k for k, t in enumerate(r["references"])
        ]
        for r in references
    }
    result = scored_by_the_library(root, ppl, tmp_path / "library")
    posted = posted_by(result)
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    assert {key: scores[key] for key in posted} == posted
    per_turn = [value for t in result.turns for value in (t.meteor, t.hidden_metric)]
    assert len(per_turn) == 2 * 66 and all(0 < value < 1 for value in per_turn)
    # the data: no turn's value equals a posted figure, at the posted decimals or at full precision
    figures = [posted[k] for k in ("integral", "meteor", "hidden_metric")] + [
        row[k] for row in posted["by_type"].values() for k in ("weight", "meteor", "hidden_metric", "score")
    ]
    assert not {round(value, 4) for value in per_turn} & set(figures)
    # so none appears anywhere: OUTPUT's files (the page included), stdout, stderr
    numbers = set(re.findall(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", shown(out, done)))
    forms = {
        form
        for value in per_turn
        for form in (repr(value), repr(round(value, 4)), f"{value:.4f}", f"{value:.6f}")
    }
    assert sorted(forms & numbers) == []


def test_turn_details_in_a_code_competition_is_a_configuration_error(tmp_path):
    root = code_step_input(tmp_path, config="[participants]\nturn_details = true\n")
    out = tmp_path / "out"
    done = codalab(root, out)
    assert done.returncode == 2, done.stderr
    assert "participants.turn_details and competition.submissions" in done.stderr


# --- the network --------------------------------------------------------------------------------------------


def test_the_step_refuses_a_network_and_runs_in_a_namespace_without_one(tmp_path):
    root = code_step_input(tmp_path)
    config = root / "ref" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("allowed", "refused"), encoding="utf-8")
    # in a network namespace of its own with an interface up (v0), the step refuses to run the code
    out = tmp_path / "out"
    done = codalab(root, out, python=[*in_network_namespace(INTERFACE_UP), sys.executable])
    assert done.returncode == 2, done.stderr
    assert "COMPETITION_CONTAINER_NETWORK_DISABLED=True" in done.stderr
    assert "('v0')" in done.stderr
    assert not (out / "scores.txt").exists()
    # in one with loopback alone, the same step runs the code and scores
    isolated = codalab(
        root, tmp_path / "isolated", python=[*in_network_namespace(LOOPBACK_ONLY), sys.executable]
    )
    assert isolated.returncode == 0, isolated.stderr


def test_the_prediction_steps_network_fault_is_repeated_as_exit_2(tmp_path):
    root = code_step_input(tmp_path)
    config = root / "ref" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("allowed", "refused"), encoding="utf-8")
    shutil.rmtree(root / "res" / "team_code")
    fault = {"kind": "network", "phase": "generate", "function": None, "dialog_id": None, "turn": None}
    (root / "res" / "run_fault.json").write_text(json.dumps(fault), encoding="utf-8")
    out = tmp_path / "out"
    done = codalab(root, out, python=[*in_network_namespace(LOOPBACK_ONLY), sys.executable])
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
