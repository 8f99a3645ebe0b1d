"""Reports that explain a score: frozen leaderboard rows shared by every table, the lowest-scoring turns."""

import csv
import dataclasses
import io
import json
import shutil

import pytest
from helpers import EXAMPLES, PUBLIC, leaderboard_cli, run_cli, score_cli

from scorer import api
from scorer.inputs.contract import DIALOGUE_TYPES
from scorer.metric.meteor import MeteorParams, MeteorRu
from scorer.outputs.html_report import leaderboard_report, score_report
from scorer.outputs.report import leaderboard_csv, leaderboard_payload, leaderboard_table, summary_table
from scorer.scoring.aggregate import TurnScore
from scorer.scoring.explain import lowest_turns
from scorer.scoring.leaderboard_result import COLUMNS, FIRST_ERRORS


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    subs = tmp_path_factory.mktemp("subs")
    shutil.copytree(EXAMPLES / "realistic", subs / "realistic")
    shutil.copytree(EXAMPLES / "echo_first_variant", subs / "echo")
    broken = subs / "many-errors"
    broken.mkdir()
    first = (EXAMPLES / "realistic" / "submission.jsonl").read_text(encoding="utf-8").splitlines()[0]
    (broken / "submission.jsonl").write_text(first + "\n", encoding="utf-8")  # 39 dialogues missing
    shutil.copy(EXAMPLES / "realistic" / "ppl_output.json", broken)
    return api.score_leaderboard(PUBLIC, subs, resamples=100)


def test_ranking_rows_are_frozen_and_entries_untouched(board):
    first = board.entries[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.rank = 7
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.entry.result = None
    assert [(s.name, s.rank, s.compared_with) for s in board.entries] == [
        ("echo", 1, None),
        ("realistic", 2, "echo"),
        ("many-errors", None, None),
    ]
    assert not hasattr(first.entry, "rank")  # the place lives in the row, not in the scored entry


def test_every_table_is_built_from_the_same_rows(board):
    rows = list(csv.DictReader(io.StringIO(leaderboard_csv(board).decode("utf-8"))))
    payload = leaderboard_payload(board)["submissions"]
    table = leaderboard_table(board).splitlines()
    page = leaderboard_report(board)
    assert ",".join(rows[0]) == (
        "rank,submission,integral,ci_low,ci_high,meteor,hidden_metric,status,Text2Text,Image2Text,Audio2Text,"
        "Image-Audio2Text,p_value,compared_with,errors,flags"
    )  # README.md's header
    for standing, csv_row, json_row in zip(board.entries, rows, payload):
        values = standing.values()
        assert list(values) == list(COLUMNS)
        for column in (c for c in COLUMNS if c not in ("errors", "flags")):
            shown = "" if values[column] is None else str(values[column])
            assert csv_row[column] == shown, column
            assert json_row[column] == values[column], column
    realistic = board.entries[1].values()
    assert realistic["Audio2Text"] == board.entries[1].result.summary.by_type["Audio2Text"].score
    for column in ("meteor", "hidden_metric", "Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text"):
        assert f"<td>{realistic[column]:.4f}</td>" in page
    assert (
        table[0] == "rank  submission                integral  95% interval        METEOR      HM  p vs above"
    )
    assert (
        table[2] == "   1  echo                      1.000000  [1.0000, 1.0000]    1.0000  1.0000            "
    )
    assert table[3].startswith("   2  realistic                 0.376962  [")
    assert table[3].endswith("0.6683  0.0856      0.0099")  # p = 1 / (100 + 1)


def test_invalid_entries_show_all_first_errors_everywhere(board):
    invalid = board.entries[2]
    assert invalid.status == "invalid" and len(invalid.shown_errors) == FIRST_ERRORS
    hidden = invalid.errors_not_shown
    assert hidden == invalid.entry.more_errors + len(invalid.entry.errors) - FIRST_ERRORS and hidden > 0
    csv_errors = list(csv.DictReader(io.StringIO(leaderboard_csv(board).decode("utf-8"))))[2]["errors"]
    assert csv_errors == " | ".join(str(i) for i in invalid.shown_errors)
    json_row = leaderboard_payload(board)["submissions"][2]
    assert len(json_row["errors"]) == FIRST_ERRORS and json_row["more_errors"] == hidden
    page, table = leaderboard_report(board), leaderboard_table(board)
    for issue in invalid.shown_errors:
        assert f"<li>{issue}</li>".replace("'", "&#x27;") in page
        assert str(issue)[:60] in table.replace("\n          ", " ")
    assert f"<li>... and {hidden} more</li>" in page and f"... and {hidden} more" in table


def test_leaderboard_page_draws_per_type_dots_on_zoomed_axes(board):
    page = leaderboard_report(board)
    assert page.count("<svg") == 3 and "each axis zoomed to its own range" in page  # and the audit
    assert '<th title="Image-Audio2Text">IA2T</th>' in page and "<th>hidden metric</th>" in page
    assert '<a href="submissions/realistic/report.html">realistic</a>' in page
    assert "|<wbr><span>version:" in page  # the signature may wrap only at its separators


def test_lowest_turns_by_hand():
    metric = MeteorRu(MeteorParams(stages=("exact", "lemma")))
    answers = ["Коты спят дома", "кот", "собака", "лает собака"]
    turns = [
        TurnScore("d1", "Text2Text", k, meteor, 0, 0.5, 2.0, answer)
        for k, (meteor, answer) in enumerate(zip([0.5, 1.0, 0.0, 0.5], answers))
    ]
    references = {"d1": [["кот спит"], ["кот"], ["кошка"], ["собака лает"]]}
    lowest = lowest_turns(turns, references, metric, count=3)
    assert [t.turn for t in lowest] == [2, 0, 3]  # by METEOR, then file order
    cats = lowest[1]
    assert cats.answer_tokens == ("коты", "спят", "дома") and cats.reference_tokens == ("кот", "спит")
    assert cats.answer_stages() == ["lemma", "lemma", None]
    assert cats.reference_stages() == ["lemma", "lemma"]
    dog = lowest[2]
    assert sorted((link.cand, link.ref, link.stage) for link in dog.links) == [
        (0, 1, "exact"),
        (1, 0, "exact"),
    ]
    assert lowest[0].links == () and lowest[0].answer_stages() == [None]


def test_submission_page_explains_the_lowest_turns():
    result = api.score_submission(PUBLIC, EXAMPLES / "realistic")
    assert result.name == "realistic" and len(result.lowest) == 10
    meteors = [t.meteor for t in result.lowest]
    assert meteors == sorted(meteors) and meteors[-1] <= sorted(t.meteor for t in result.turns)[9]
    assert [(t.dialog_id, t.turn) for t in result.lowest[:4]] == [
        ("d-0009", 1),
        ("d-0012", 1),
        ("d-0038", 0),
        ("d-0003", 1),
    ]
    synonym = result.lowest[3]
    assert [
        (synonym.answer_tokens[x.cand], synonym.reference_tokens[x.ref], x.stage) for x in synonym.links
    ] == [("получится", "будет", "synonym")]
    page = score_report(result)
    assert "<title>Submission score: realistic</title>" in page
    assert '<tr class="total"><td>weighted total</td><td>1</td><td>40</td><td>66</td>' in page
    assert page.count('<div class="turn">') == 10
    assert '<span class="tok synonym" title="RuWordNet synonym \u2194 будет">получится</span>' in page
    assert '<span class="tok none" title="not matched">12</span>' in page
    assert "1 link(s): 0 exact, 0 lemma, 1 synonym &middot; P = 1/2, R = 1/6" in page
    assert json.loads(json.dumps(result.summary.integral)) == 0.3769621616774081


def test_every_surface_names_the_stages_that_ran(board):
    full = api.score_submission(PUBLIC, EXAMPLES / "realistic")
    off = api.score_submission(PUBLIC, EXAMPLES / "realistic", synonyms=False)
    assert (full.stages, off.stages) == (("exact", "lemma", "synonym"), ("exact", "lemma"))
    assert "stages: exact, lemma, synonym" in summary_table(full).splitlines()
    assert "stages: exact, lemma (synonym: off)" in summary_table(off).splitlines()
    page = score_report(off)
    assert "<p>Matching stages: exact, lemma (synonym: off)</p>" in page
    assert (
        '<p class="legend"><span class="tok exact">exact match</span> <span class="tok lemma">same '
        "lemma</span> "
        '<span class="tok none">not matched</span></p>'
    ) in page
    assert "RuWordNet synonym" not in page and " synonym &middot;" not in page
    assert "0 link(s): 0 exact, 0 lemma &middot;" in page
    assert "<p>Matching stages: exact, lemma, synonym</p>" in score_report(full)
    assert "stages: exact, lemma, synonym" in leaderboard_table(board).splitlines()
    assert "<p>Matching stages: exact, lemma, synonym</p>" in leaderboard_report(board)
    no_synonyms = dataclasses.replace(board, stages=("exact", "lemma"))
    assert "stages: exact, lemma (synonym: off)" in leaderboard_table(no_synonyms).splitlines()
    assert "<p>Matching stages: exact, lemma (synonym: off)</p>" in leaderboard_report(no_synonyms)


def test_submission_name_from_its_path(tmp_path):
    assert api.submission_name(EXAMPLES / "realistic") == "realistic"
    assert api.submission_name(tmp_path / "team-x.zip") == "team-x"
    assert api.submission_name(EXAMPLES / "realistic" / "submission.jsonl") == "realistic"


def test_the_library_reports_every_phase_in_order(tmp_path):
    from scorer.outputs.report import write_outputs

    heard = []
    record = lambda step, done, total: heard.append((step, done, total))  # noqa: E731
    result = api.score_submission(PUBLIC, EXAMPLES / "realistic", progress=record)
    write_outputs(result, tmp_path / "out", report=True, progress=record)
    steps = list(dict.fromkeys(step for step, _, _ in heard))
    assert steps == [
        "reading dialogues.jsonl",
        "reading answers.jsonl",
        "checking submission.jsonl",
        "checking ppl_output.json",
        "scoring",
        "aggregating",
        "explaining the lowest turns",
        "keeping the words' keys in the cache",
        "writing details.csv",
        "writing report.html",
    ]
    sizes = {
        "reading dialogues.jsonl": (PUBLIC / "dialogues.jsonl").stat().st_size,
        "reading answers.jsonl": (PUBLIC / "answers.jsonl").stat().st_size,
        "checking ppl_output.json": (EXAMPLES / "realistic" / "ppl_output.json").stat().st_size,
        "scoring": 66,
        "writing details.csv": 66,
        "aggregating": 66,  # every turn (the summary ends the step at the turn count)
        "explaining the lowest turns": 10,
        "keeping the words' keys in the cache": 1,
        "writing report.html": 4,
    }  # the type chart, two histograms, the lowest turns
    assert [done for s, done, _ in heard if s == "aggregating"] == [0, 66]
    assert [done for s, done, _ in heard if s == "explaining the lowest turns"] == list(range(11))
    assert [done for s, done, _ in heard if s == "writing report.html"] == [0, 1, 2, 3, 4]
    for step in steps:
        seen = [(done, total) for s, done, total in heard if s == step]
        assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:])), step  # never goes back
        assert seen[-1][0] == seen[-1][1], step  # every step ends at 100%
        if step in sizes:
            assert seen[-1][1] == sizes[step], step


def test_leaderboard_steps_name_the_entry_and_its_place(tmp_path):
    subs = tmp_path / "subs"
    shutil.copytree(EXAMPLES / "realistic", subs / "a")
    shutil.copytree(EXAMPLES / "realistic", subs / "b")
    heard = []
    api.score_leaderboard(PUBLIC, subs, resamples=40, progress=lambda step, done, total: heard.append(step))
    assert "a (1/2): scoring" in heard and "b (2/2): checking submission.jsonl" in heard


def test_an_empty_answer_is_shown_as_such():
    page = score_report(api.score_submission(PUBLIC, EXAMPLES / "empty_answers"))
    assert page.count('<div class="turn">') == 10 and page.count("<i>(empty)</i>") == 10
    assert "0 link(s): 0 exact, 0 lemma, 0 synonym &middot; no answer tokens, R = 0/1" in page


def test_the_leaderboard_frame_has_integer_ranks(board):
    import pandas as pd

    frame = board.to_frame()
    assert str(frame["rank"].dtype) == "Int64"
    assert frame["rank"].tolist()[:2] == [1, 2] and frame["rank"].iloc[2] is pd.NA
    assert frame["submission"].tolist() == ["echo", "realistic", "many-errors"]


def test_the_leaderboard_frame_reads_as_its_csv(board):
    """Built from the rows, the frame equals leaderboard.csv read back with its own conventions."""
    import io

    import pandas as pd

    from scorer.outputs.report import leaderboard_csv

    numbers = ["rank", "integral", "ci_low", "ci_high", "meteor", "hidden_metric", "p_value", *DIALOGUE_TYPES]
    parsed = pd.read_csv(
        io.BytesIO(leaderboard_csv(board)),
        keep_default_na=False,
        dtype={"rank": "Int64"},
        na_values={c: [""] for c in numbers},
    )
    pd.testing.assert_frame_equal(board.to_frame(), parsed)


def test_an_all_invalid_leaderboard_page_has_no_empty_legend(tmp_path):
    uploads = tmp_path / "uploads"
    shutil.copytree(EXAMPLES / "invalid" / "nan_perplexity", uploads / "one")
    out = tmp_path / "out"
    assert leaderboard_cli(uploads, out, "--quiet", "--no-synonyms", "--resamples", "100") == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Per-type columns" not in page and "S_j; ." not in page


@pytest.mark.parametrize("where", ["score", "codalab"])
def test_the_page_describes_the_metric_in_force(tmp_path, where):
    """The page follows the configuration: gamma 0.5 and the stages exact and lemma are not described as no
    penalty and a synonym stage."""
    config = '[meteor]\ngamma = 0.5\nstages = ["exact", "lemma"]\n'
    if where == "score":
        (tmp_path / "c.toml").write_text(config, encoding="utf-8")
        options = ("--quiet", "--jobs", "1", "--report", "--config", tmp_path / "c.toml")
        assert score_cli(EXAMPLES / "realistic", tmp_path / "o", *options) == 0
        page = (tmp_path / "o" / "report.html").read_text("utf-8")
    else:
        shutil.copytree(PUBLIC, tmp_path / "input" / "ref")
        (tmp_path / "input" / "ref" / "config.toml").write_text(config, encoding="utf-8")
        shutil.copytree(EXAMPLES / "realistic", tmp_path / "input" / "res")
        assert run_cli("codalab", tmp_path / "input", tmp_path / "o", "--quiet", "--jobs", "1") == 0
        page = (tmp_path / "o" / "detailed_results.html").read_text("utf-8")
    assert "<p>Matching stages: exact, lemma (synonym: off)</p>" in page
    assert "<p>METEOR settings: alpha 0.9; fragmentation penalty gamma 0.5, beta 3</p>" in page
    assert "penalty off" not in page


@pytest.mark.parametrize("audience", ["organizer", "participant"])
def test_details_csv_is_what_the_csv_module_writes_of_its_rows(tmp_path, audience):
    """details.csv joins its rows itself: byte for byte what ``csv.writer`` writes of the same rows (each
    dialog_id made a safe cell), for ids a spreadsheet or a CSV reader would trip on."""
    from helpers import make_split, make_submission

    from scorer.outputs.report import details_csv
    from scorer.safe_text import csv_cell
    from scorer.scoring.audience import ORGANIZER, Audience
    from scorer.scoring.result import detail_columns, detail_rows

    ids = ["a,b", 'quo"te', "line\nbreak", "=SUM(A1)", "-3", "+x", "@y", "тире—id", " space", "tab\tid"]
    data = make_split(
        tmp_path, [(d, DIALOGUE_TYPES[k % 4], [["кот сидит"], ["дом стоит"]]) for k, d in enumerate(ids)]
    )
    upload = make_submission(tmp_path, {d: ["кот сидит", "дом"] for d in ids}, {d: [2.5, 7.0] for d in ids})
    who = ORGANIZER if audience == "organizer" else Audience(organizer=False, turn_details=True)
    result = api.score_submission(data, upload, audience=who, synonyms=False)
    expected = io.StringIO()
    writer = csv.writer(expected, lineterminator="\n")
    writer.writerow(detail_columns(result.audience))
    rows = [
        (csv_cell(t.dialog_id), t.type, t.turn, t.meteor)
        + (
            (t.best_reference, t.hidden_metric, t.ppl, d.matches, "" if d.chunks is None else d.chunks)
            + (d.precision, d.recall, d.fmean, d.penalty, d.cand_len, d.ref_len, d.exact_search)
            if audience == "organizer"
            else (t.hidden_metric, t.ppl, d.matches, d.precision, d.cand_len)
        )
        for t in result.turns
        if (d := t.details) is not None
    ]
    assert len(rows) == 2 * len(ids)
    assert [(csv_cell(r[0]), *r[1:]) for r in detail_rows(result)] == rows
    writer.writerows(rows)
    written = details_csv(result)
    assert written == expected.getvalue().encode("utf-8")
    assert len(list(csv.reader(io.StringIO(written.decode("utf-8"))))) == 1 + 2 * len(ids)


def test_column_texts_are_str_of_each_value():
    """details.csv makes each distinct number's text once a column: the texts are ``str`` of each value, for
    columns where equal keys would differ in text (1, 1.0 and True; 0.0 and -0.0; nan) and random ones."""
    import random

    from scorer.outputs.report import _Texts, column_texts

    columns = [
        [1, 1.0, True, 1, 0, 0.0, False],
        [0.0, -0.0, 0.0, 1.5, -0.0],
        [-0.0, -0.0, 2.0],
        [float("nan"), float("nan"), float("inf"), -float("inf"), 1e-300, 1e300],
        [True, False, True],
        ["", 3, "", 4],
        ["Text2Text", "Audio2Text", "Text2Text"],
        [2.5, 7, 2.5],
    ]
    rng = random.Random(5)
    for _ in range(200):
        pool = [rng.choice([0.0, -0.0, 0.5, 1 / 3, 1.0, 2.0]) for _ in range(4)] + [1, True, 0]
        columns.append([rng.choice(pool[: rng.choice([4, 7])]) for _ in range(rng.randint(1, 12))])
    for column in columns:
        assert list(column_texts(tuple(column))) == [str(v) for v in column], column
    # one cache of float texts for every column of a file: a zero's text never stands for the other zero's
    shared = _Texts()
    for column in [[0.0, 0.5, 0.5, 0.0, 0.0], [-0.0, -0.0, -0.0, 0.5, 0.5], *columns]:
        assert list(column_texts(tuple(column), shared)) == [str(v) for v in column], column
    assert shared  # it was used


def test_a_column_of_plain_ids_is_written_as_it_is_and_any_other_id_goes_cell_by_cell():
    """details.csv checks a chunk's distinct ids in one search: when every one is plain it is its own cell;
    one id that is not (a line end, empty, a formula's first character, a comma, a letter outside ASCII)
    sends the chunk cell by cell, where each id is made a safe cell."""
    from scorer.outputs.report import _all_plain

    assert _all_plain(["d-0001", "d_2", "d-0001", "A.b-3"])
    for odd in ["a\nb", "", "-x", "+1", "=A1", "@y", "x,y", 'q"', "тире", " a", "a ", "a\r"]:
        assert not _all_plain(["d-0001", odd, "d-0002"]), odd
