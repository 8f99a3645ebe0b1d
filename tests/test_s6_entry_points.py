"""Every entry point uses one configuration rule, reruns leave no stale file, run_scoring.sh uses the caller's
paths."""

import os
import shutil
import subprocess
import sys
import zipfile

import pytest
from helpers import EXAMPLES, PUBLIC, ROOT, leaderboard_cli, run_cli, score_cli, scores_of

PRIVATE = '[hidden_metric]\nmethod = "log"\np_max = 1000.0\nsalt = "entry-points-salt-0a1b2c"\n'


def reference_with_private_config(tmp_path):
    ref = tmp_path / "input" / "ref"
    shutil.copytree(PUBLIC, ref)
    (ref / "config.toml").write_text(PRIVATE, encoding="utf-8")
    shutil.copytree(EXAMPLES / "realistic", tmp_path / "input" / "res")
    return ref


@pytest.mark.slow
def test_every_entry_point_reads_the_private_config(tmp_path, capsys):
    ref = reference_with_private_config(tmp_path)
    res = tmp_path / "input" / "res"
    assert score_cli(res, tmp_path / "a", data=ref) == 0
    assert "config: " + str(ref / "config.toml") in capsys.readouterr().err
    assert run_cli("codalab", tmp_path / "input", tmp_path / "b", "--quiet") == 0
    env = dict(
        os.environ,
        SCORER_INPUT=str(tmp_path / "input"),
        SCORER_OUTPUT=str(tmp_path / "c"),
        SCORER_PYTHON=sys.executable,
    )
    done = subprocess.run(
        ["sh", str(ROOT / "docker" / "entrypoint.sh")], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    subs = tmp_path / "subs"
    shutil.copytree(res, subs / "team")
    assert leaderboard_cli(subs, tmp_path / "d", "--quiet", "--no-report", "--resamples", "40", data=ref) == 0
    scores = [scores_of(tmp_path / x) for x in ("a", "b", "c")] + [
        scores_of(tmp_path / "d" / "submissions" / "team")
    ]
    assert len({s["integral"] for s in scores}) == 1 and all("hm:private-" in s["signature"] for s in scores)
    assert scores[0]["integral"] != integral_default(tmp_path)


def integral_default(tmp_path):
    score_cli(EXAMPLES / "realistic", tmp_path / "default", "--quiet")
    return scores_of(tmp_path / "default")["integral"]


def test_a_rerun_leaves_no_stale_file(tmp_path):
    out = tmp_path / "o"
    assert score_cli(EXAMPLES / "realistic", out, "--quiet", "--report") == 0
    assert (out / "report.html").exists()
    assert score_cli(EXAMPLES / "invalid" / "nan_perplexity", out, "--quiet") == 1
    assert sorted(p.name for p in out.iterdir()) == ["scores.json"]
    subs = tmp_path / "subs"
    shutil.copytree(EXAMPLES / "realistic", subs / "a")
    shutil.copytree(EXAMPLES / "echo_first_variant", subs / "b")
    assert leaderboard_cli(subs, tmp_path / "lb", "--quiet", "--resamples", "40") == 0
    shutil.rmtree(subs / "b")
    assert leaderboard_cli(subs, tmp_path / "lb", "--quiet", "--resamples", "40") == 0
    assert sorted(p.name for p in (tmp_path / "lb" / "submissions").iterdir()) == ["a"]


@pytest.mark.slow
def test_run_scoring_resolves_paths_from_the_callers_directory(tmp_path):
    shutil.copytree(PUBLIC, tmp_path / "mydata")
    shutil.copytree(EXAMPLES / "realistic", tmp_path / "mysub")
    done = subprocess.run(
        [
            str(ROOT / "run_scoring.sh"),
            "score",
            "--data",
            "mydata",
            "--submission",
            "mysub",
            "--output",
            "myout",
            "--quiet",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=dict(os.environ, RUWORDNET_PATH=os.path.abspath(os.environ["RUWORDNET_PATH"])),
    )
    assert done.returncode == 0, done.stderr
    assert scores_of(tmp_path / "myout")["status"] == "ok" and not (ROOT / "myout").exists()


def test_a_zip_alone_in_the_upload_folder_is_the_upload(tmp_path, capsys):
    res = tmp_path / "input" / "res"
    res.mkdir(parents=True)
    with zipfile.ZipFile(res / "submission.zip", "w") as archive:
        archive.write(EXAMPLES / "realistic" / "submission.jsonl", "submission.jsonl")
    shutil.copytree(PUBLIC, tmp_path / "input" / "ref")
    assert run_cli("codalab", tmp_path / "input", tmp_path / "o") == 1
    assert "the zip has no ppl_output.json at its root" in capsys.readouterr().err


@pytest.mark.slow
def test_the_command_lines_process_exits_with_mains_code_and_the_collector_on(tmp_path):
    """``run()`` ends its process with main's code once the exit handlers have run (a temporary folder
    removed) and the streams are flushed (what the handlers print too); the cycle collector is paused only
    while a run scores, never for the whole process."""
    code = (
        "import atexit, gc, sys, tempfile, scorer.cli as c\n"
        f"kept = tempfile.TemporaryDirectory(dir={str(tmp_path)!r})\n"
        "atexit.register(lambda: print('handler', file=sys.stderr) or print('bye'))\n"
        "c.main = lambda: print(gc.isenabled()) or 7\nc.run()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.stdout, done.stderr, done.returncode) == ("True\nbye\n", "handler\n", 7)
    assert list(tmp_path.iterdir()) == []


def test_a_commands_module_that_fails_to_import_is_an_internal_error(tmp_path, monkeypatch, capsys):
    """The dispatcher imports the command's module inside the run: a module that fails to import ends in
    exit 3 with the one-line message, as any fault of a handler does, not a traceback."""
    import scorer.cli

    monkeypatch.setitem(scorer.cli.HANDLER_MODULES, "score", "no_such_handlers")
    code = scorer.cli.main(["score", "--data", str(PUBLIC), "--submission", str(EXAMPLES / "realistic"),
                            "--output", str(tmp_path / "o"), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 3 and "Traceback" not in err and "no_such_handlers" in err


def test_every_subcommand_dispatches_to_its_handler():
    """The dispatcher's table names a module for every subcommand of the parser (``run`` is the runner's),
    and that module's handler table holds the command: no command is listed in one place and not another."""
    import scorer.cli
    from scorer.cli.parser import ARGUMENTS

    assert set(scorer.cli.HANDLER_MODULES) == set(ARGUMENTS) - {"run"}
    for command in ARGUMENTS:
        if command != "run":
            assert callable(scorer.cli.handler(command)), command
