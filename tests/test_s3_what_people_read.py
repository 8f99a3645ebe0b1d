"""Contract section 3, what the scorer writes for people to read: a name from an upload or a folder is
shown literally and harmlessly on the terminal, in stderr lines, in CSV cells, in charts and in links."""

from __future__ import annotations

import csv
import io
import re
import shutil
import urllib.parse
import zipfile

import pytest
from helpers import EXAMPLES, leaderboard_cli

from scorer.safe_text import csv_cell, shown, shown_lines


def board(tmp_path, names, flagged=()):
    """A submissions folder holding the realistic example under each of ``names``, and the example whose
    perplexities are all 1 (flagged by the audit) under each of ``flagged``."""
    folder = tmp_path / "uploads"
    for name in names:
        shutil.copytree(EXAMPLES / "realistic", folder / name)
    for name in flagged:
        with zipfile.ZipFile(EXAMPLES / "board" / "team-beta.zip") as archive:
            archive.extractall(folder / name)
    return folder


def test_shown_escapes_every_control_and_bidirectional_character():
    assert shown("a\nb\rc\td") == "a\\nb\\rc\\td"
    assert shown("\x1b]0;title\x07\x1b[2J") == "\\x1b]0;title\\x07\\x1b[2J"
    assert shown("\x85\x9b") == "\\x85\\x9b"  # C1
    assert shown("abc\u202edef\u2066\u200e") == "abc\\u202edef\\u2066\\u200e"
    assert shown("Команда Ё #1 $x$") == "Команда Ё #1 $x$"
    assert shown_lines("one\ntwo\x1b[2J") == "one\ntwo\\x1b[2J"


@pytest.mark.parametrize(
    "value, cell",
    [
        ("=1+1", "'=1+1"),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(1+1)", "'@SUM(1+1)"),
        ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
        ("\tx", "'\\tx"),
        ("\rx", "'\\rx"),
        ("-0.5", "-0.5"),
        ("team-1", "team-1"),
        (-0.5, -0.5),
        (3, 3),
    ],
)
def test_a_csv_cell_is_never_a_formula(value, cell):
    assert csv_cell(value) == cell


def test_formula_names_are_text_in_leaderboard_csv(tmp_path):
    names = ["=1+1", "+1+1", "-2+3", "@SUM(1+1)"]
    out = tmp_path / "out"
    assert leaderboard_cli(board(tmp_path, names), out, "--quiet", "--no-report", "--resamples", "100") == 0
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text(encoding="utf-8"))))
    assert sorted(r["submission"] for r in rows) == sorted("'" + n for n in names)


def test_a_name_cannot_forge_a_line_or_drive_the_terminal(tmp_path, capsys):
    forged = "evil\naudit: team-alpha: ppl_at_one: 66 of 66 turns report perplexity 1"
    escape = "clear\x1b[2J\x1b]0;pwned\x07"
    rtl = "abc\u202eexe.txt"
    out = tmp_path / "out"
    uploads = board(tmp_path, [escape, rtl], flagged=[forged])  # no entry is really called team-alpha
    assert leaderboard_cli(uploads, out, "--resamples", "100") == 0
    captured = capsys.readouterr()
    for text in (captured.out, captured.err, (out / "leaderboard.csv").read_text(encoding="utf-8")):
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
        assert not re.search(r"^audit: team-alpha", text, re.MULTILINE)
    # the flagged entry's own line names it escaped, on one line
    assert "audit: evil\\naudit: team-alpha: ppl_at_one" in captured.err
    assert "clear\\x1b[2J" in captured.out and "abc\\u202eexe.txt" in captured.out
    rows = list(csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text(encoding="utf-8"))))
    assert forged.replace("\n", "\\n") in {r["submission"] for r in rows}


def test_a_math_looking_name_is_a_plain_chart_label_and_links_are_percent_encoded(tmp_path):
    names = ["$\\frac{a$", "$x$", "a#b?c", "Команда Ё #1", "100%"]
    out = tmp_path / "out"
    assert leaderboard_cli(board(tmp_path, names), out, "--quiet", "--resamples", "100") == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    # matplotlib writes a plain label's text into the SVG as it is (a math one would be drawn as paths)
    assert "$\\frac{a$" in page and "$x$" in page
    links = re.findall(r'href="submissions/([^"]*)/report.html"', page)
    assert len(links) == len(names)
    for name in names:
        href = urllib.parse.quote(name.encode("utf-8"), safe="")
        assert href in links
        assert (out / "submissions" / urllib.parse.unquote(href) / "report.html").is_file()
    assert "a%23b%3Fc" in links and "100%25" in links
