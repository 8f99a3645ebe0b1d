"""Command line (contract section 6): exit codes, output files and their exact shape, the commit marker a
killed run leaves, and what a new user meets first (a Python without the dependencies, validate's errors)."""

import csv
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from helpers import (
    EXAMPLES,
    PUBLIC,
    ROOT,
    SALTED,
    big_split,
    codalab_input,
    private_digest,
    process,
    run_cli,
    score_cli,
    score_process,
    scores_of,
    upload,
    validate_cli,
    write_jsonl,
)

from scorer import cli
from scorer.metric.thesaurus import HOW_TO_GET
from scorer.outputs.report import ERROR_LOG
from scorer.scoring.result import DETAIL_COLUMNS

INVALID = sorted(p.name for p in (EXAMPLES / "invalid").iterdir() if p.is_dir())


def test_score_writes_the_three_outputs(tmp_path, capsys):
    out = tmp_path / "out"
    assert score_cli(EXAMPLES / "realistic", out) == 0
    s = scores_of(out)
    flat = [f"{t}{suffix}" for t in s["by_type"] for suffix in ("", "_meteor", "_hidden_metric")]
    assert list(s) == [
        "status",
        "integral",
        "meteor",
        "hidden_metric",
        "by_type",
        "counts",
        "signature",
        "warnings",
        *flat,
    ]
    for name, t in s["by_type"].items():  # the flat leaderboard columns: the type's score and means
        assert (s[name], s[f"{name}_meteor"], s[f"{name}_hidden_metric"]) == (
            t["score"],
            t["meteor"],
            t["hidden_metric"],
        )
    assert s["status"] == "ok" and 0 < s["integral"] < 1
    assert list(s["by_type"]) == ["Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text"]
    assert list(s["by_type"]["Audio2Text"]) == [
        "weight",
        "dialogs",
        "turns",
        "meteor",
        "hidden_metric",
        "score",
    ]
    assert s["counts"] == {"dialogs": 40, "turns": 66}
    assert sum(t["turns"] for t in s["by_type"].values()) == 66
    header, *rows = (out / "details.csv").read_text(encoding="utf-8").splitlines()
    assert header.split(",")[:7] == [
        "dialog_id",
        "type",
        "turn",
        "meteor",
        "best_reference",
        "hidden_metric",
        "ppl",
    ]
    assert header.split(",") == DETAIL_COLUMNS and len(rows) == 66
    assert rows[0].startswith("d-0001,Text2Text,0,")
    txt = (out / "scores.txt").read_text(encoding="utf-8").splitlines()
    assert txt[0] == f"integral: {s['integral']!r}"
    assert txt[1:3] == [f"meteor: {s['meteor']!r}", f"hidden_metric: {s['hidden_metric']!r}"]
    printed = capsys.readouterr().out
    assert "Image-Audio2Text" in printed and f"integral: {s['integral']:.6f}" in printed


def test_weighted_figures_agree_with_by_type(tmp_path):
    out = tmp_path / "out"
    score_cli(EXAMPLES / "realistic", out)
    s = scores_of(out)
    w = sum(t["weight"] for t in s["by_type"].values())
    for key, sub in (("integral", "score"), ("meteor", "meteor"), ("hidden_metric", "hidden_metric")):
        assert s[key] == pytest.approx(
            sum(t["weight"] * t[sub] for t in s["by_type"].values()) / w, abs=1e-12
        )


def test_outputs_are_byte_identical_across_runs(tmp_path):
    score_cli(EXAMPLES / "realistic", tmp_path / "a")
    score_cli(EXAMPLES / "realistic", tmp_path / "b")
    for name in ("scores.json", "details.csv", "scores.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_line_order_and_zip_packaging_change_nothing(tmp_path):
    src = EXAMPLES / "realistic"
    lines = (src / "submission.jsonl").read_text(encoding="utf-8").splitlines()
    random.Random(5).shuffle(lines)
    ppl = json.loads((src / "ppl_output.json").read_text(encoding="utf-8"))
    shuffled = tmp_path / "shuffled"
    shuffled.mkdir()
    (shuffled / "submission.jsonl").write_text("\r\n".join(lines) + "\r\n\r\n", encoding="utf-8-sig")
    (shuffled / "ppl_output.json").write_text(json.dumps(dict(reversed(ppl.items()))), encoding="utf-8")
    with zipfile.ZipFile(tmp_path / "team.zip", "w") as z:
        for name in ("submission.jsonl", "ppl_output.json"):
            z.write(src / name, f"team/{name}")
    score_cli(src, tmp_path / "a")
    score_cli(shuffled, tmp_path / "b")
    score_cli(tmp_path / "team.zip", tmp_path / "c")
    assert score_cli(src / "submission.jsonl", tmp_path / "d", "--ppl", src / "ppl_output.json") == 0
    expected = (tmp_path / "a" / "scores.json").read_bytes()
    for other in "bcd":
        assert (tmp_path / other / "scores.json").read_bytes() == expected


def test_echoing_the_first_variant_with_perplexity_one_scores_one(tmp_path):
    assert score_cli(EXAMPLES / "echo_first_variant", tmp_path) == 0
    s = scores_of(tmp_path)
    assert s["integral"] == 1.0 and s["meteor"] == 1.0 and s["hidden_metric"] == 1.0


def test_empty_answers_score_only_the_hidden_metric(tmp_path):
    assert score_cli(EXAMPLES / "empty_answers", tmp_path) == 0
    s = scores_of(tmp_path)
    assert s["meteor"] == 0.0
    ppl = json.loads((EXAMPLES / "empty_answers" / "ppl_output.json").read_text(encoding="utf-8"))
    types = {
        json.loads(line)["dialog_id"]: json.loads(line)["type"]
        for line in (PUBLIC / "dialogues.jsonl").read_text(encoding="utf-8").splitlines()
    }
    weights = {"Text2Text": 0.1, "Image2Text": 0.2, "Audio2Text": 0.3, "Image-Audio2Text": 0.4}
    per_type = {}
    for d, ps in ppl.items():
        per_type.setdefault(types[d], []).append(sum(1 / p for p in ps) / len(ps))
    hm = sum(weights[t] * sum(v) / len(v) for t, v in per_type.items())
    assert s["hidden_metric"] == pytest.approx(hm, abs=1e-12)
    assert s["integral"] == pytest.approx(hm / 2, abs=1e-12)


@pytest.mark.parametrize("name", INVALID)
def test_invalid_examples_exit_1_without_a_score(tmp_path, name, capsys):
    out = tmp_path / "out"
    score_cli(EXAMPLES / "realistic", out)
    assert score_cli(EXAMPLES / "invalid" / name, out) == 1
    s = scores_of(out)
    assert s["status"] == "invalid" and s["errors"] and "integral" not in s
    assert set(s["errors"][0]) == {"file", "message", "code", "line", "column", "dialog_id", "turn"}
    assert not (out / "details.csv").exists() and not (out / "scores.txt").exists()
    err = capsys.readouterr().err
    assert "invalid" in err and "Traceback" not in err
    assert validate_cli(EXAMPLES / "invalid" / name) == 1


def test_every_invalid_example_is_documented():
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    assert len(INVALID) >= 5
    for name in INVALID:
        assert f"invalid/{name}" in readme


def test_validate_needs_only_dialogues(tmp_path, capsys):
    public = tmp_path / "public"
    public.mkdir()
    shutil.copy(PUBLIC / "dialogues.jsonl", public)
    assert validate_cli(EXAMPLES / "realistic", data=public) == 0
    assert capsys.readouterr().out == "valid: 40 dialogues, 66 turns\n"
    assert validate_cli(EXAMPLES / "invalid" / "ppl_below_one", "--json", data=public) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["status"] == "invalid"
    assert verdict["errors"][0]["dialog_id"] == "d-0003" and verdict["errors"][0]["turn"] == 0


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["score", "--data", PUBLIC, "--submission", EXAMPLES / "realistic"],  # no --output
        ["score", "--data", "/nonexistent", "--submission", EXAMPLES / "realistic", "--output", "{out}"],
        ["score", "--data", PUBLIC, "--submission", "/nonexistent", "--output", "{out}"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(tmp_path, args):
    assert run_cli(*[str(a).replace("{out}", str(tmp_path)) for a in args]) == 2


def test_bad_config_exits_2(tmp_path, capsys):
    (tmp_path / "c.toml").write_text("[meteor]\nalpha = 2\n", encoding="utf-8")
    assert score_cli(EXAMPLES / "realistic", tmp_path / "out", "--config", tmp_path / "c.toml") == 2
    assert "meteor.alpha" in capsys.readouterr().err
    assert scores_of(tmp_path / "out")["status"] == "error"


def test_missing_thesaurus_exits_2_and_says_what_to_do(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("RUWORDNET_PATH")
    monkeypatch.setattr("scorer.metric.thesaurus.default_location", lambda: tmp_path / "none.db")
    assert score_cli(EXAMPLES / "realistic", tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "ruwordnet download" in err and "--no-synonyms" in err
    assert score_cli(EXAMPLES / "realistic", tmp_path / "out", "--no-synonyms") == 0
    sig = scores_of(tmp_path / "out")["signature"]
    assert "stages:exact+lemma|" in sig and "rwn:none" in sig


def test_broken_reference_data_exits_2(tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    lines = (data / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    (data / "answers.jsonl").write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    assert score_cli(EXAMPLES / "realistic", tmp_path / "o", data=data) == 2
    assert "answers.jsonl" in capsys.readouterr().err
    assert scores_of(tmp_path / "o")["errors"][0]["code"] == "missing_id"


def test_internal_error_exits_3_with_a_log(tmp_path, monkeypatch, capsys):
    def boom(*a, **k):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr("scorer.scoring.scored.score_validated", boom)
    assert score_cli(EXAMPLES / "realistic", tmp_path) == 3
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "config: the built-in default configuration"
    assert len(err) == 2 and "simulated bug" in err[1] and "Traceback" not in err[1]
    assert "RuntimeError: simulated bug" in (tmp_path / ERROR_LOG).read_text(encoding="utf-8")
    assert scores_of(tmp_path)["status"] == "error"


def test_signature_pins_the_settings(tmp_path):
    (tmp_path / "c.toml").write_text(
        '[meteor]\ngamma = 0.5\n[hidden_metric]\nmethod = "log"\np_max = 100\n' + SALTED, encoding="utf-8"
    )
    score_cli(EXAMPLES / "realistic", tmp_path / "a")
    score_cli(EXAMPLES / "realistic", tmp_path / "b", "--config", tmp_path / "c.toml")
    a, b = scores_of(tmp_path / "a")["signature"], scores_of(tmp_path / "b")["signature"]
    fields = dict(f.split(":", 1) for f in a.split("|"))
    assert fields["tok"] == "nfkc.lower.yo.w+" and fields["stages"] == "exact+lemma+synonym"
    assert (fields["alpha"], fields["beta"], fields["gamma"], fields["refs"]) == ("0.9", "3.0", "0.0", "max")
    assert fields["hm"] == "inverse" and fields["rwn"].startswith("rwn-xml-")
    assert fields["morph"].startswith("pymorphy3-") and "dicts-ru-" in fields["morph"]
    assert fields["w"] == "T2T=0.1,I2T=0.2,A2T=0.3,IA2T=0.4" and fields["version"]
    assert "gamma:0.5" in b and f"hm:{private_digest('log', 100.0)}" in b
    assert scores_of(tmp_path / "b")["integral"] != scores_of(tmp_path / "a")["integral"]


@pytest.mark.slow
def test_real_process_and_console_script(tmp_path):
    env = {**os.environ}
    invalid = EXAMPLES / "invalid" / "nan_perplexity"
    proc = score_process(invalid, tmp_path, env=env)
    assert proc.returncode == 1 and "NaN" in proc.stderr and "Traceback" not in proc.stderr
    script = Path(sys.executable).parent / "scorer"
    proc = subprocess.run(
        [str(script), "validate", "--data", str(PUBLIC), "--submission", str(EXAMPLES / "realistic")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("valid:")


def test_extra_keys_warn_but_score(tmp_path, capsys):
    src = EXAMPLES / "realistic"
    rows = [json.loads(line) for line in (src / "submission.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[0]["model"] = "baseline-v2"
    sub = tmp_path / "sub"
    write_jsonl(sub / "submission.jsonl", rows)
    shutil.copy(src / "ppl_output.json", sub)
    assert score_cli(sub, tmp_path / "out") == 0
    assert "unknown key(s) ignored: model" in capsys.readouterr().err
    assert scores_of(tmp_path / "out")["warnings"][0]["dialog_id"] == "d-0001"


@pytest.mark.slow
def test_validate_warns_of_answers_made_of_replacement_characters(tmp_path):
    src = EXAMPLES / "realistic"
    rows = [json.loads(line) for line in (src / "submission.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[1]["answers"][0] = "\ufffd\ufffd \ufffd"
    rows[4]["answers"][0] = "Да\ufffd\ufffd\ufffd"
    sub = tmp_path / "sub"
    write_jsonl(sub / "submission.jsonl", rows)
    shutil.copy(src / "ppl_output.json", sub)
    command = ["validate", "--data", PUBLIC, "--submission", sub]
    done = process(*command, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "valid: 40 dialogues, 66 turns\n"
    summary = (
        "2 answers made mostly or only of U+FFFD replacement characters (listed above): U+FFFD is no "
        "word character and matches nothing, so an answer made only of them has a METEOR of 0. The cause "
        "is usually the model's byte-level tokenizer: its tokens can cut a character's UTF-8 bytes in "
        "half, and decoding them one at a time, or stopping in the middle of a character, gives U+FFFD; "
        "decode all of an answer's tokens at once"
    )
    assert done.stderr.splitlines() == [
        "config: the built-in default configuration",
        "warning: submission.jsonl, line 2, dialog_id 'd-0002', turn 0: the answer holds nothing but U+FFFD "
        "replacement characters (3): its METEOR is 0",
        "warning: submission.jsonl, line 5, dialog_id 'd-0005', turn 0: 3 of the answer's 5 non-space "
        "characters are U+FFFD replacement characters",
        f"warning: submission.jsonl: {summary}",
    ]
    as_json = process(*command, "--json", cwd=tmp_path)
    assert as_json.returncode == 0
    assert json.loads(as_json.stdout)["warnings"] == [
        {
            "file": "submission.jsonl",
            "message": "the answer holds nothing but U+FFFD replacement characters (3): its METEOR is 0",
            "code": "replacement_characters",
            "line": 2,
            "dialog_id": "d-0002",
            "turn": 0,
            "column": None,
        },
        {
            "file": "submission.jsonl",
            "message": "3 of the answer's 5 non-space characters are U+FFFD replacement characters",
            "code": "replacement_characters",
            "line": 5,
            "dialog_id": "d-0005",
            "turn": 0,
            "column": None,
        },
        {
            "file": "submission.jsonl",
            "message": summary,
            "code": "replacement_characters",
            "line": None,
            "dialog_id": None,
            "turn": None,
            "column": None,
        },
    ]


def test_explain_prints_matches_chunks_and_formula(capsys):
    assert (
        run_cli(
            "explain",
            "--candidate",
            "Зелёные стали сидит",
            "--reference",
            "сидит стать недозрелые",
            "--reference",
            "—",
            "--gamma",
            "0.5",
        )
        == 0
    )
    assert capsys.readouterr().out.splitlines() == [
        "candidate tokens (3): 0:зеленые 1:стали 2:сидит",
        "",
        "reference 0 tokens (3): 0:сидит 1:стать 2:недозрелые",
        "  synonym  cand 0:зеленые  <->  ref 2:недозрелые  (synset 900101-A)",
        "  lemma    cand 1:стали  <->  ref 1:стать  (lemma стать)",
        "  exact    cand 2:сидит  <->  ref 0:сидит",
        "  links: 3 (exact 1, lemma 1, synonym 1)",
        "  chunks: 3  [зеленые] [стали] [сидит]",
        "  m=3 t=3 r=3  P=1.000000  R=1.000000  Fmean=1.000000  penalty=0.500000  METEOR=0.500000",
        "",
        "reference 1 tokens (0): ",
        "  no tokens: this variant is skipped",
        "",
        "best reference: 0  METEOR = 0.5",
        "settings: alpha=0.9 beta=3.0 gamma=0.5",
        "stages: exact, lemma, synonym",
    ]


def test_penalty_mode_details_columns(tmp_path):
    (tmp_path / "c.toml").write_text("[meteor]\ngamma = 0.5\n", encoding="utf-8")
    score_cli(EXAMPLES / "realistic", tmp_path / "o", "--config", tmp_path / "c.toml")

    rows = list(csv.DictReader((tmp_path / "o" / "details.csv").open(encoding="utf-8")))
    for row in rows:
        m, chunks = int(row["matches"]), int(row["chunks"])
        p, r, f = float(row["precision"]), float(row["recall"]), float(row["fmean"])
        penalty = 0.5 * (chunks / m) ** 3 if m else 0.0
        assert float(row["penalty"]) == pytest.approx(penalty, abs=1e-12)
        assert float(row["meteor"]) == pytest.approx(f * (1 - penalty), abs=1e-12)
        if m:
            assert f == pytest.approx(p * r / (0.9 * p + 0.1 * r), abs=1e-12)


@pytest.mark.slow  # two and three jobs: the worker pool forks (on the pure engine)
def test_jobs_give_byte_identical_outputs(tmp_path):
    data, sub = big_split(tmp_path)
    outputs = {}
    for jobs in ("1", "2", "3"):
        out = tmp_path / f"out{jobs}"
        assert score_cli(sub, out, "--jobs", jobs, "--quiet", data=data) == 0
        outputs[jobs] = [(out / name).read_bytes() for name in ("scores.json", "details.csv", "scores.txt")]
    assert outputs["1"] == outputs["2"] == outputs["3"]
    assert scores_of(tmp_path / "out1")["counts"] == {"dialogs": 800, "turns": 1320}
    # the same answers against the same references: the realistic example's integral, repeated
    single = tmp_path / "single"
    score_cli(EXAMPLES / "realistic", single, "--quiet")
    assert scores_of(tmp_path / "out2")["integral"] == pytest.approx(scores_of(single)["integral"], abs=1e-12)


@pytest.mark.parametrize("bad", ["-1", "two"])
def test_bad_jobs_is_a_usage_error(tmp_path, bad, capsys):
    assert score_cli(EXAMPLES / "realistic", tmp_path / "out", "--jobs", bad) == 2
    assert "--jobs" in capsys.readouterr().err


def test_codalab_scores_res_against_ref(tmp_path):
    root = codalab_input(tmp_path)
    assert run_cli("codalab", root, tmp_path / "output", "--quiet") == 0
    lines = (tmp_path / "output" / "scores.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "integral: 0.3769621616774081"
    # no details.csv by default: a participant sees no per-turn figure (contract section 6)
    assert {p.name for p in (tmp_path / "output").iterdir()} == {
        "scores.json",
        "scores.txt",
        "detailed_results.html",
    }


def test_codalab_invalid_upload_and_missing_folders(tmp_path, capsys):
    root = codalab_input(tmp_path, EXAMPLES / "invalid" / "nan_perplexity")
    assert run_cli("codalab", root, tmp_path / "output") == 1
    assert scores_of(tmp_path / "output")["status"] == "invalid"
    assert not (tmp_path / "output" / "scores.txt").exists()
    shutil.rmtree(root / "res")
    capsys.readouterr()
    assert run_cli("codalab", root, tmp_path / "output2") == 2
    message = (
        f"{root / 'res'} is not a folder; INPUT must hold ref/ (the reference data) and res/ (the submission)"
    )
    assert capsys.readouterr().err.splitlines()[-1] == f"error: {message}"
    # the backend reads the verdict from scores.json, not from stderr
    verdict = scores_of(tmp_path / "output2")
    assert verdict["status"] == "error" and verdict["errors"][0]["message"] == message
    assert verdict["errors"][0]["code"] == "usage"


@pytest.mark.slow
def test_codalab_metadata_commands_run_outside_a_container(tmp_path):
    root = codalab_input(tmp_path)
    for name, input_dir, output_dir in (
        ("metadata", "$input", "$output"),
        ("metadata.yaml", "/app/input", "/app/output"),
    ):
        fields = dict(
            line.split(": ", 1)
            for line in (ROOT / "codalab" / "scoring_program" / name).read_text(encoding="utf-8").splitlines()
        )
        assert set(fields) == {"command", "description"}
        command = fields["command"].replace(input_dir, str(root)).replace(output_dir, str(tmp_path / name))
        argv = command.split()
        assert argv[:4] == ["python3", "-m", "scorer", "codalab"]
        proc = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert (tmp_path / name / "scores.txt").read_text().startswith("integral: 0.3769621616774081")


def test_score_report_is_self_contained_and_reproducible(tmp_path):
    pages = []
    for name in ("a", "b"):
        assert score_cli(EXAMPLES / "realistic", tmp_path / name, "--report", "--quiet") == 0
        pages.append((tmp_path / name / "report.html").read_bytes())
    assert pages[0] == pages[1]
    page = pages[0].decode("utf-8")
    assert page.count("<svg") == 3 and "<script" not in page and "<link" not in page and "src=" not in page
    assert "0.376962" in page and "Image-Audio2Text" in page
    assert score_cli(EXAMPLES / "realistic", tmp_path / "c", "--quiet") == 0
    assert not (tmp_path / "c" / "report.html").exists()  # only when asked for


def test_progress_bar_only_on_a_terminal(tmp_path, capsys):
    from scorer.progress import ProgressDisplay, render

    assert (
        render("scoring", 50, 200, 10.0) == "scoring [#######                       ]  25%  50/200  30s left"
    )
    assert render("scoring", 200, 200, 10.0) == "scoring [##############################] 100%  200/200"
    assert render("team-a: checking submission.jsonl", 1 << 20, 4 << 20, 90.0) == (
        "team-a: checking submission.jsonl [#######                       ]  25%  1.0/4.0 MiB  4m30s left"
    )
    now = [0.0]
    display = ProgressDisplay(io.StringIO(), enabled=True, clock=lambda: now[0])
    display("reading dialogues.jsonl", 1, 2)  # within the first 2 s: nothing
    now[0] = 3.0
    display("scoring", 0, 200)  # a new step: its own clock
    now[0] = 13.0
    display("scoring", 50, 200)
    display("scoring", 60, 200)  # within 0.1 s of the last redraw: skipped
    now[0] = 14.0
    display("writing details.csv", 200, 200)  # a step's end is drawn
    display.close()
    assert display.stream.getvalue().split("\r")[1:] == [
        "scoring [                              ]   0%  0/200",
        "scoring [#######                       ]  25%  50/200  30s left",
        "writing details.csv [##############################] 100%  200/200" + " " * 0,
        " " * 70,
        "",
    ]
    quiet = ProgressDisplay(io.StringIO(), delay=0)  # a StringIO is no terminal
    quiet("scoring", 100, 200)
    assert quiet.stream.getvalue() == ""
    data, sub = big_split(tmp_path, copies=10)
    assert score_cli(sub, tmp_path / "out", data=data) == 0
    captured = capsys.readouterr()
    assert "\r" not in captured.err and "\r" not in captured.out


def test_the_realistic_example_with_the_real_ruwordnet(tmp_path, real_rwn_path):
    """The bundled example's integral with the real thesaurus (the verbs and adjectives CI has, or the full
    one)."""
    assert score_cli(EXAMPLES / "realistic", tmp_path / "out", "--thesaurus", str(real_rwn_path)) == 0
    scores = scores_of(tmp_path / "out")
    assert scores["signature"].count("|rwn:rwn-") == 1 and 0.37 < scores["integral"] < 0.39
    if real_rwn_path.name == "rwn-2021":  # the verbs and adjectives of RuWordNet 2.0
        assert scores["integral"] == 0.37666568731843375


def test_each_help_lists_only_its_own_exit_codes(capsys):
    codes = {}
    for command in ("validate", "score", "codalab", "leaderboard", "correlate", "explain"):
        with pytest.raises(SystemExit):
            cli.build_parser().parse_args([command, "--help"])
        text = capsys.readouterr().out
        table = text[text.index("exit codes:") :].splitlines()[1:]
        codes[command] = [line.split()[0] for line in table]
        assert ("--no-synonyms" in text.split("example:")[1]) == (command != "validate")
    assert codes["validate"] == codes["score"] == codes["codalab"] == ["0", "1", "2", "3", "130,"]
    assert codes["leaderboard"] == codes["correlate"] == codes["explain"] == ["0", "2", "3", "130,"]


def test_quiet_prints_nothing_on_success(tmp_path, capsys):
    assert score_cli(EXAMPLES / "realistic", tmp_path / "o", "--quiet") == 0
    assert capsys.readouterr() == ("", "")
    assert score_cli(EXAMPLES / "realistic", tmp_path / "p") == 0
    assert capsys.readouterr().err == (
        "config: the built-in default configuration\n"
        "audit: realistic: not judged: ppl_against_meteor (66 of 100), overconfident (0 of 20)\n"
    )


def _copy_realistic(folder, submission_name="submission.jsonl", ppl_name="ppl_output.json"):
    folder.mkdir()
    shutil.copy(EXAMPLES / "realistic" / "submission.jsonl", folder / submission_name)
    shutil.copy(EXAMPLES / "realistic" / "ppl_output.json", folder / ppl_name)
    return folder


def test_a_utf16_file_gets_one_message(tmp_path, capsys):
    folder = _copy_realistic(tmp_path / "sub")
    text = (folder / "submission.jsonl").read_text(encoding="utf-8")
    (folder / "submission.jsonl").write_bytes(text.encode("utf-16"))
    assert validate_cli(folder) == 1
    assert capsys.readouterr().err.splitlines()[1:] == [
        "error: the submission is invalid (1 error):",
        "  - submission.jsonl, line 1, column 1: the file is not valid UTF-8 (bad byte at line 1, column 1); "
        "it looks like UTF-16 text; save it as UTF-8",
    ]


def test_errors_of_one_kind_collapse_on_the_terminal_but_not_in_scores_json(tmp_path, capsys):
    folder = _copy_realistic(tmp_path / "sub")
    ppl = json.loads((folder / "ppl_output.json").read_text(encoding="utf-8"))
    (folder / "ppl_output.json").write_text(json.dumps({k: v[0] for k, v in ppl.items()}), encoding="utf-8")
    assert score_cli(folder, tmp_path / "o") == 1
    err = capsys.readouterr().err.splitlines()
    assert err[1] == "error: the submission is invalid (40 errors); it was not scored:"
    assert len(err) == 6 and err[2].startswith(
        "  - ppl_output.json, line 1, column 12, dialog_id 'd-0001': the "
    )
    assert err[5] == "  ... and 37 more like this (schema_type)"
    verdict = scores_of(tmp_path / "o")
    assert len(verdict["errors"]) + verdict.get("more_errors", 0) == 40


def test_misnamed_files_are_named_in_the_message(tmp_path, capsys):
    folder = _copy_realistic(tmp_path / "sub", "predictions.jsonl", "ppl.json")
    assert validate_cli(folder) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "  - sub: the submission directory has no submission.jsonl and no ppl_output.json; it holds "
        "ppl.json, "
        "predictions.jsonl (the files must be named submission.jsonl and ppl_output.json)"
    )


def test_a_bare_file_without_perplexities_names_the_option(tmp_path, capsys):
    shutil.copy(EXAMPLES / "realistic" / "submission.jsonl", tmp_path / "submission.jsonl")
    assert validate_cli(tmp_path / "submission.jsonl") == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: perplexities not found at {tmp_path / 'ppl_output.json'}: the submission is a bare file, "
        "and no "
        "ppl_output.json lies beside it; give the perplexities file too (on the command line: --ppl FILE)"
    )


def test_a_missing_thesaurus_names_the_options_that_mend_it(tmp_path, capsys):
    missing = tmp_path / "no-rwn"
    assert score_cli(EXAMPLES / "realistic", tmp_path / "o", "--thesaurus", missing) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: RuWordNet was not found at {missing} (from the given location). "
        + HOW_TO_GET
        + " (on the command line: --thesaurus PATH, or --no-synonyms)"
    )
    assert scores_of(tmp_path / "o")["errors"][0]["message"].endswith(
        HOW_TO_GET
    )  # the library names no flags


# --- outputs survive SIGKILL --------------------------------------------------------------------------


def _consistent(output: Path) -> str:
    """'none' (no scores.json), or the status of a scores.json that agrees with every file beside it."""
    scores = output / "scores.json"
    if not scores.exists():
        return "none"
    payload = json.loads(scores.read_text(encoding="utf-8"))
    present = {p.name for p in output.iterdir() if not p.name.startswith(".")}
    if payload["status"] == "ok":
        details = (output / "details.csv").read_text(encoding="utf-8").splitlines()
        assert len(details) == 1 + payload["counts"]["turns"], "details.csv from another run"
        integral = float((output / "scores.txt").read_text().splitlines()[0].split(": ")[1])
        assert integral == payload["integral"], "scores.txt from another run"
    else:
        assert present == {"scores.json"}, f"stale outputs beside an {payload['status']} verdict: {present}"
    return payload["status"]


@pytest.mark.slow
def test_killed_at_any_moment_the_commit_marker_agrees_with_its_files(tmp_path):
    output = tmp_path / "o"
    good, bad = EXAMPLES / "realistic", upload(tmp_path / "bad", "а" + "\u0301" * 40)

    def start(submission: Path) -> "subprocess.Popen[bytes]":
        argv = ["score", "--data", PUBLIC, "--submission", submission, "--output", output]
        return subprocess.Popen(
            [sys.executable, "-m", "scorer", *map(str, argv), "--no-synonyms", "--quiet", "--report"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    began = time.monotonic()
    assert start(good).wait() == 0
    whole = time.monotonic() - began  # one whole run on this machine, as loaded as it is now
    seen = set()
    for k in range(8):
        # a good run killed at 30%, 60% and 90% of a whole run after its start (its reading, scoring and
        # writes), and at 150% (finished, most often); a bad one from 5% to 60% (it ends at its first error)
        child = start(good if k % 2 else bad)
        time.sleep(whole * ((0.3, 0.6, 0.9, 1.5)[k // 2] if k % 2 else 0.05 + 0.18 * (k // 2)))
        child.send_signal(signal.SIGKILL)
        child.wait()
        seen.add(_consistent(output))
    done = score_process(good, output, "--no-synonyms", "--quiet")
    assert done.returncode == 0 and _consistent(output) == "ok"
    assert not [p.name for p in output.iterdir() if p.name.endswith(".tmp") or p.name.startswith(".write")]
    assert len(seen) >= 2  # the kills fell at different moments


# --- what a new user meets first: a Python without the dependencies, validate's errors ----------------


@pytest.mark.slow
def test_a_python_without_the_dependencies_is_a_set_up_error_saying_what_to_run(tmp_path):
    # -S: no site-packages, so none of the dependencies; the package itself is found from the checkout
    done = score_process(EXAMPLES / "realistic", tmp_path / "out", python=[sys.executable, "-S"], timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "lacks the scorer's dependencies (missing: jinja2, matplotlib, numpy" in done.stderr
    assert "./run_scoring.sh score --data" in done.stderr and ".venv/bin/python -m scorer" in done.stderr
    assert not (tmp_path / "out").exists()


def _broken(tmp_path, change):
    folder = tmp_path / "sub"
    shutil.copytree(EXAMPLES / "realistic", folder)
    lines = (folder / "submission.jsonl").read_text(encoding="utf-8").splitlines()
    ppl = json.loads((folder / "ppl_output.json").read_text(encoding="utf-8"))
    change(lines, ppl)
    (folder / "submission.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "ppl_output.json").write_text(json.dumps(ppl), encoding="utf-8")
    return folder


def test_validate_lists_distinct_errors_and_collapses_only_true_repeats(tmp_path, capsys):
    def change(lines, ppl):
        first = json.loads(lines[0])
        first["answers"][0] = 5  # a number answer
        lines[0] = json.dumps(first, ensure_ascii=False)
        second = json.loads(lines[1])
        second["answers"] = "text"  # a string `answers`
        lines[1] = json.dumps(second, ensure_ascii=False)
        ppl["d-0003"] = ["5", 6.0]  # a string perplexity
        ppl["d-0004"] = 7.0  # a scalar perplexity

    folder = _broken(tmp_path, change)
    assert validate_cli(folder) == 1
    err = capsys.readouterr().err
    assert err.count("\n  - ") == 4 and "more like this" not in err


def test_a_python_dict_line_and_an_integer_id_give_one_error_each(tmp_path, capsys):
    def change(lines, ppl):
        lines[0] = str(json.loads(lines[0]))
        second = json.loads(lines[1])
        second["dialog_id"] = 2
        lines[1] = json.dumps(second, ensure_ascii=False)

    folder = _broken(tmp_path, change)
    assert validate_cli(folder) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[1] == "error: the submission is invalid (2 errors):"
    assert (
        "dialog_id 'd-0001': not valid JSON" in err[2] and "json.dumps(...)" in err[2] and "str()" in err[2]
    )
    assert err[3] == (
        "  - submission.jsonl, line 2: dialog_id must be a string, not a number "
        '(write it as the string "d-0002")'
    )
