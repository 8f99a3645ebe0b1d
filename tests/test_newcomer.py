"""What a new user meets (README's commands, the first errors, the organizer's first pages): each case of
the second newcomer round, tested as the user met it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest
from conftest import EXAMPLES, PUBLIC, ROOT, run_cli

run = run_cli


@pytest.mark.slow
def test_a_python_without_the_dependencies_is_a_set_up_error_saying_what_to_run(tmp_path):
    # -S: no site-packages, so none of the dependencies; the package itself is found from the checkout
    done = subprocess.run(
        [sys.executable, "-S", "-m", "scorer", "score", "--data", PUBLIC, "--submission",
         EXAMPLES / "realistic", "--output", tmp_path / "out"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "lacks the scorer's dependencies (missing: matplotlib, numpy" in done.stderr
    assert "./run_scoring.sh score --data" in done.stderr and ".venv/bin/python -m scorer" in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_flagged_entry_is_marked_in_the_ranking_table(tmp_path):
    out = tmp_path / "board"
    assert run("leaderboard", "--data", PUBLIC, "--submissions", EXAMPLES / "board", "--output", out,
               "--quiet", "--no-synonyms", "--resamples", "100") == 0  # fmt: skip
    page = (out / "report.html").read_text(encoding="utf-8")
    table = page[
        page.index('<table class="board">') : page.index("</table>", page.index('<table class="board">'))
    ]
    beta = table[table.index("team-beta") : table.index("</tr>", table.index("team-beta"))]
    assert '<a class="flag" href="#audit" title="perplexity audit: ppl_at_one' in beta
    alpha = table[table.index("team-alpha") : table.index("</tr>", table.index("team-alpha"))]
    assert 'class="flag"' not in alpha
    assert 'id="audit"' in page


def test_the_audit_samples_lines_with_their_ppl_filled_in_are_a_ppl_check_file(tmp_path, capsys):
    sample = tmp_path / "recompute.jsonl"
    assert run("audit-sample", "--data", PUBLIC, "--submission", EXAMPLES / "realistic", "--n", "6",
               "--seed", "7", "--output", sample) == 0  # fmt: skip
    rows = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines()]
    rows[0]["ppl"] = rows[0]["ppl"] * 3  # a recomputation that disagrees on one turn
    rows[1]["ppl"] = None  # not recomputed
    sample.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    assert run("score", "--data", PUBLIC, "--submission", EXAMPLES / "realistic", "--output", out,
               "--quiet", "--no-synonyms", "--ppl-check", sample) == 0  # fmt: skip
    figures = json.loads((out / "audit.json").read_text(encoding="utf-8"))["submissions"]["realistic"][
        "figures"
    ]
    assert figures["checked"] == 5 and figures["within"] == pytest.approx(4 / 5)
    # a bad line is exit 2, located
    rows[2]["ppl"] = 0.5
    rows[3]["turn"] = 99
    sample.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    capsys.readouterr()
    assert run("score", "--data", PUBLIC, "--submission", EXAMPLES / "realistic", "--output", out,
               "--quiet", "--no-synonyms", "--ppl-check", sample) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "recompute.jsonl, line 3" in err and "not a finite number >= 1" in err
    assert "recompute.jsonl, line 4" in err and "turn must be 0 to" in err


@pytest.mark.parametrize(
    "image, rule",
    [
        ("docker.io/YOU/scorer:1.0", "must be lowercase"),
        ("my image", "not an image reference"),
        ("org/scorer:" + "x" * 200, "not an image reference"),
    ],
)
def test_bundle_checks_the_image_reference(tmp_path, capsys, image, rule):
    assert run("bundle", "--data", PUBLIC, "--output", tmp_path / "b", "--image", image) == 2
    assert rule in capsys.readouterr().err
    assert not (tmp_path / "b" / "competition.yaml").exists()


def test_bundle_counts_the_files_of_its_zip(tmp_path, capsys):
    import zipfile

    assert run("bundle", "--data", PUBLIC, "--output", tmp_path / "b", "--image", "docker.io/org/s:1") == 0
    with zipfile.ZipFile(tmp_path / "b" / "bundle.zip") as archive:
        count = len(archive.namelist())
    assert f"({count} files)" in capsys.readouterr().out


def test_codalabs_page_is_not_titled_with_the_platforms_folder_name(tmp_path):
    root = tmp_path / "input"
    shutil.copytree(PUBLIC, root / "ref")
    shutil.copytree(EXAMPLES / "realistic", root / "res")
    assert run("codalab", root, tmp_path / "out", "--quiet", "--no-synonyms") == 0
    page = (tmp_path / "out" / "detailed_results.html").read_text(encoding="utf-8")
    assert "<title>Submission score</title>" in page and "res" not in re.findall(r"<h1>(.*?)</h1>", page)[0]


def test_an_all_invalid_leaderboard_page_has_no_empty_legend(tmp_path):
    uploads = tmp_path / "uploads"
    shutil.copytree(EXAMPLES / "invalid" / "nan_perplexity", uploads / "one")
    out = tmp_path / "out"
    assert run("leaderboard", "--data", PUBLIC, "--submissions", uploads, "--output", out, "--quiet",
               "--no-synonyms", "--resamples", "100") == 0  # fmt: skip
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Per-type columns" not in page and "S_j; ." not in page


def test_short_reprs_for_a_notebook():
    from scorer import score_leaderboard, score_submission

    result = score_submission(PUBLIC, EXAMPLES / "realistic", synonyms=False)
    text = repr(result)
    assert len(text) < 500 and text.startswith("<ScoreResult realistic: integral 0.37")
    assert "66 turns" in text and result.signature in text
    board = score_leaderboard(PUBLIC, EXAMPLES / "board", synonyms=False, resamples=100)
    text = repr(board)
    assert len(text) < 600 and text.startswith("<Leaderboard: 3 ranked, 3 invalid or failed, 1 flagged; 1. ")


def test_the_thesaurus_error_names_the_apis_words_too(tmp_path, monkeypatch):
    from scorer import ThesaurusError, score_submission

    monkeypatch.setenv("RUWORDNET_PATH", str(tmp_path / "nowhere"))
    with pytest.raises(ThesaurusError, match="synonyms=False"):
        score_submission(PUBLIC, EXAMPLES / "realistic")


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
    assert run("validate", "--data", PUBLIC, "--submission", folder) == 1
    err = capsys.readouterr().err
    assert err.count("\n  - ") == 4 and "more like this" not in err


def test_a_python_dict_line_and_an_integer_id_give_one_error_each(tmp_path, capsys):
    def change(lines, ppl):
        lines[0] = str(json.loads(lines[0]))
        second = json.loads(lines[1])
        second["dialog_id"] = 2
        lines[1] = json.dumps(second, ensure_ascii=False)

    folder = _broken(tmp_path, change)
    assert run("validate", "--data", PUBLIC, "--submission", folder) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[1] == "error: the submission is invalid (2 errors):"
    assert (
        "dialog_id 'd-0001': not valid JSON" in err[2] and "json.dumps(...)" in err[2] and "str()" in err[2]
    )
    assert err[3] == (
        "  - submission.jsonl, line 2: dialog_id must be a string, not a number "
        '(write it as the string "d-0002")'
    )
