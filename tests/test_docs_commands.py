"""Every command the documentation shows runs as written (README.md, docs/, codalab/README.md, benchmarks/):
each ``./run_scoring.sh`` or ``python -m scorer`` line of a code block, on the bundled data, in a copy of
the repository's data folders, without RuWordNet and without a network."""

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest
from helpers import ROOT

PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "codalab" / "README.md",
    ROOT / "benchmarks" / "README.md",
]
#: A command with one of these is a synopsis or needs what the page says to get first (a corpus, an image).
PLACEHOLDERS = re.compile(r"\b(DIR|PATH|FILE|INPUT|OUTPUT|TEXT|NAME|LIST|N|S|A|B|G)\b|\.\.\.|\$WMT21|my[._]")


#: Commands that build on each other, run in order in one folder: (page, the heading of their section).
SEQUENCES = [(ROOT / "docs" / "organizers.md", "## 8. The final")]


def documented_commands(sequence: tuple | None = None) -> list[tuple[str, str]]:
    """The commands the pages show (each page's, in order), but those of :data:`SEQUENCES`' sections; with
    ``sequence``, that section's alone."""
    found = []
    for page in PAGES if sequence is None else [sequence[0]]:
        lines = page.read_text(encoding="utf-8").splitlines()
        heading = ""
        k = 0
        while k < len(lines):
            line = lines[k]
            if line.startswith("## "):
                heading = line
            inside = any(page == p and heading.startswith(h) for p, h in SEQUENCES)
            if inside != (sequence is not None) and not line.startswith("## "):
                k += 1
                continue
            command = line.strip()
            if line.startswith("    ") and command.startswith(("./run_scoring.sh ", "python -m scorer ")):
                while command.endswith("\\") and k + 1 < len(lines):
                    k += 1
                    command = command[:-1].rstrip() + " " + lines[k].strip()
                command = command.split("  #")[0].strip()
                # a command shown on two pages runs once
                if not PLACEHOLDERS.search(command) and command not in (c for _, c in found):
                    found.append((f"{page.relative_to(ROOT)}: {command[:70]}", command))
            k += 1
    return found


COMMANDS = documented_commands()


def test_the_pages_show_the_commands_users_run():
    shown = " ".join(command for _, command in COMMANDS + documented_commands(SEQUENCES[0]))
    for subcommand in ("validate", "score", "explain", "leaderboard", "correlate", "audit-sample", "bundle"):
        assert f" {subcommand} " in shown, subcommand


def _copy_of_the_repository(tmp_path):
    for folder in ("reference_data", "submissions_examples", "scripts"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    shutil.copy(ROOT / "run_scoring.sh", tmp_path / "run_scoring.sh")


def _run_as_written(tmp_path, label, command):
    argv = shlex.split(command)
    if argv[0] == "python":
        argv[0] = sys.executable
    env = {k: v for k, v in os.environ.items() if k != "RUWORDNET_PATH"}  # a fresh machine: no thesaurus
    env.update(SCORER_VENV=sys.prefix, RUWORDNET_PATH=str(tmp_path / "no-thesaurus"))
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{label}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr
    return done


@pytest.mark.slow
@pytest.mark.parametrize("label, command", COMMANDS, ids=[label for label, _ in COMMANDS])
def test_a_documented_command_runs_as_written(tmp_path, label, command):
    _copy_of_the_repository(tmp_path)
    _run_as_written(tmp_path, label, command)


@pytest.mark.slow
def test_the_organizers_final_runs_as_written(tmp_path):
    """docs/organizers.md's final, in order in one folder: the bundle with a final, one team's two steps on
    final/, and the ranking over the final's reference data, whose one entry is that team."""
    _copy_of_the_repository(tmp_path)
    commands = documented_commands(SEQUENCES[0])
    assert [shlex.split(c)[3] for _, c in commands] == ["bundle", "run", "run", "leaderboard", "leaderboard"]
    for label, command in commands:
        _run_as_written(tmp_path, label, command)
    ranked = (tmp_path / "final_board" / "leaderboard.csv").read_text(encoding="utf-8").splitlines()
    assert len(ranked) == 2 and ranked[1].split(",")[:2] == ["1", "team-a"]


def test_the_audit_and_the_teams_pages_name_the_recomputation_with_the_teams_code():
    """``run --only``: the organizer's recomputation of the turns ``audit-sample`` drew with the team's own
    code, whose ``ppl_check.json`` ``score --ppl-check`` reads."""
    for page in ("docs/audit.md", "docs/code_submissions.md"):
        text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
        for needed in ("run --only", "audit-sample", "ppl_check.json", "--ppl-check"):
            assert needed in text, (page, needed)
