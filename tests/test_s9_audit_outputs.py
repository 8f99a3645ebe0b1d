"""The perplexity audit's outputs (contract sections 6 and 9): audit.json, the flags column, a stderr line
per flagged entry, --ppl-check, ppl_probes.json, audit-sample, validate's warning; nothing in codalab; no
score moves."""

import json
import shutil
import zipfile

import pytest
from helpers import EXAMPLES, PUBLIC, leaderboard_cli, run_cli, score_cli, validate_cli, write_json

from scorer import api


def board_of(tmp_path, *names):
    folder = tmp_path / "uploads"
    for name in names:
        shutil.copytree(EXAMPLES / name, folder / name)
    return folder


def test_score_writes_a_deterministic_audit_and_changes_no_score(tmp_path, capsys):
    outs = []
    for k in range(2):
        out = tmp_path / f"out{k}"
        assert score_cli(EXAMPLES / "echo_first_variant", out, "--quiet") == 0
        outs.append(out)
    first, second = ((o / "audit.json").read_bytes() for o in outs)
    assert first == second
    audit = json.loads(first)
    assert audit["settings"] == "default"
    entry = audit["submissions"]["echo_first_variant"]
    assert [f["flag"] for f in entry["flags"]] == ["ppl_at_one", "few_distinct"]
    assert entry["figures"]["at_one"] == 1.0 and entry["figures"]["distinct"] == 1
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if line.startswith("audit: echo_first_variant: ppl_at_one: 66 of 66 turns")]
    # a ppl check that disagrees flags it, and changes no byte of the scores
    check = {
        d: [p * 2 for p in v]
        for d, v in json.loads(
            (EXAMPLES / "realistic" / "ppl_output.json").read_text(encoding="utf-8")
        ).items()
    }
    write_json(tmp_path / "check.json", check)
    assert score_cli(EXAMPLES / "realistic", tmp_path / "a", "--quiet") == 0
    assert (
        score_cli(EXAMPLES / "realistic", tmp_path / "b", "--quiet", "--ppl-check", tmp_path / "check.json")
        == 0
    )
    for name in ("scores.json", "details.csv", "scores.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    figures = json.loads((tmp_path / "b" / "audit.json").read_text())["submissions"]["realistic"]
    assert figures["figures"]["checked"] == 66 and figures["figures"]["within"] == 0.0
    assert [f["flag"] for f in figures["flags"]] == ["check_mismatch"]


def test_a_bad_ppl_check_file_is_exit_2_naming_it(tmp_path, capsys):
    write_json(tmp_path / "check.json", {"d-0001": [0.5, None], "nope": [2.0]})
    out = tmp_path / "out"
    assert score_cli(EXAMPLES / "realistic", out, "--ppl-check", tmp_path / "check.json") == 2
    err = capsys.readouterr().err
    assert "the recomputed perplexities in check.json are invalid (2 error(s))" in err
    assert "unknown dialog_id 'nope'" in err and "perplexity 0.5 is not a finite number >= 1 (or null)" in err
    assert json.loads((out / "scores.json").read_text())["status"] == "error"


@pytest.mark.slow
def test_codalab_shows_no_audit(tmp_path, capsys):
    root = tmp_path / "input"
    shutil.copytree(PUBLIC, root / "ref")
    shutil.copytree(EXAMPLES / "echo_first_variant", root / "res")
    assert run_cli("codalab", root, tmp_path / "out") == 0
    assert not (tmp_path / "out" / "audit.json").exists()
    captured = capsys.readouterr()
    assert "audit" not in captured.err and "ppl_at_one" not in captured.out
    for path in (tmp_path / "out").iterdir():
        assert "ppl_at_one" not in path.read_text(encoding="utf-8")


def test_leaderboard_flags_column_audit_and_page(tmp_path, capsys):
    folder = board_of(tmp_path, "realistic", "echo_first_variant", "empty_answers")
    shutil.copytree(EXAMPLES / "realistic", folder / "realistic_copy")
    out = tmp_path / "board"
    assert leaderboard_cli(folder, out) == 0
    header, *rows = (out / "leaderboard.csv").read_text(encoding="utf-8").splitlines()
    assert header.split(",")[-1] == "flags"
    flags = {row.split(",")[1]: row.split(",")[-1] for row in rows}
    assert flags["echo_first_variant"] == "ppl_at_one;few_distinct"
    assert flags["realistic"] == flags["realistic_copy"] == "same_ppl_as"
    audit = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    assert sorted(audit["submissions"]) == sorted(flags)
    assert audit["submissions"]["realistic"]["figures"]["same_ppl_as"] == ["realistic_copy"]
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("audit: ")]
    flagged = [line for line in err if "not judged" not in line]
    assert len(flagged) == 3  # one line per flagged entry
    # then one per entry whose checks had too little to judge: 66 turns, none at most confident_ppl
    assert [line for line in err if "not judged" in line] == [
        "audit: echo_first_variant: not judged: ppl_against_meteor (66 of 100)",
        "audit: empty_answers: not judged: ppl_against_meteor (0 of 100), overconfident (0 of 20)",
        "audit: realistic: not judged: ppl_against_meteor (66 of 100), overconfident (0 of 20)",
        "audit: realistic_copy: not judged: ppl_against_meteor (66 of 100), overconfident (0 of 20)",
    ]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Perplexity audit" in page and "same_ppl_as" in page and page.count("<svg") == 3
    assert "not judged: ppl_against_meteor (66 of 100), overconfident (0 of 20)" in page
    entries = json.loads((out / "audit.json").read_text(encoding="utf-8"))["submissions"]
    assert entries["realistic"]["inconclusive"] == [
        {
            "check": "ppl_against_meteor",
            "count": 66,
            "needs": 100,
            "hint": "more turns whose answer has a word",
        },
        {
            "check": "overconfident",
            "count": 0,
            "needs": 20,
            "hint": "more turns whose perplexity is at most [audit] confident_ppl",
        },
    ]


def test_private_audit_settings_are_never_shown(tmp_path, capsys):
    config = tmp_path / "c.toml"
    config.write_text("[audit]\nmax_share_at_one = 0.37\nsame_share = 0.83\n", encoding="utf-8")
    out = tmp_path / "out"
    assert score_cli(EXAMPLES / "echo_first_variant", out, "--config", config) == 0
    shown = capsys.readouterr()
    audit = (out / "audit.json").read_text(encoding="utf-8")
    assert json.loads(audit)["settings"] == "private"
    for text in (audit, shown.out, shown.err, (out / "scores.json").read_text(encoding="utf-8")):
        assert "0.37" not in text and "0.83" not in text and "max_share_at_one" not in text


def test_validate_warns_of_constant_perplexities(tmp_path, capsys):
    assert validate_cli(EXAMPLES / "echo_first_variant") == 0
    assert (
        "warning: ppl_output.json: every one of the 66 perplexities is exactly 1" in capsys.readouterr().err
    )
    sub = tmp_path / "sub"
    shutil.copytree(EXAMPLES / "realistic", sub)
    ppl = json.loads((sub / "ppl_output.json").read_text(encoding="utf-8"))
    write_json(sub / "ppl_output.json", {d: [4.0] * len(v) for d, v in ppl.items()})
    assert validate_cli(sub, "--json") == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert [w["code"] for w in warnings] == ["ppl_suspicious"]
    assert warnings[0]["message"].startswith("all 66 perplexities are equal (4.0)")


def test_audit_sample_is_reproducible_and_proportional(tmp_path):
    rows = api.audit_sample(PUBLIC, EXAMPLES / "realistic", 33, seed=7)
    assert rows == api.audit_sample(PUBLIC, EXAMPLES / "realistic", 33, seed=7)
    assert rows != api.audit_sample(PUBLIC, EXAMPLES / "realistic", 33, seed=8)
    kinds = [r["type"] for r in rows]
    # 15, 17, 16, 18 turns of the four types: half of 66 is 7.5, 8.5, 8, 9 -> 8, 8, 8, 9 by largest remainders
    assert [kinds.count(t) for t in ("Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text")] == [
        8,
        8,
        8,
        9,
    ]
    assert len({(r["dialog_id"], r["turn"]) for r in rows}) == 33
    assert set(rows[0]) == {"dialog_id", "turn", "type", "ppl"}
    out = tmp_path / "sample.jsonl"
    assert (
        run_cli(
            "audit-sample",
            "--data",
            PUBLIC,
            "--submission",
            EXAMPLES / "realistic",
            "--n",
            33,
            "--seed",
            7,
            "--output",
            out,
        )
        == 0
    )
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == rows


def test_a_ppl_check_file_in_another_encoding_gets_the_one_not_utf8_message(tmp_path):
    """The recomputed perplexities are read as every input is: a file that is not UTF-8 is named with the bad
    byte's line and column, in the words and code ppl_output.json's reader gives."""
    from scorer.errors import IssueLog, PplCheckInvalid
    from scorer.inputs.ppl_check import read_ppl_check
    from scorer.inputs.ppl_output import check_ppl
    from scorer.inputs.validation import read_reference_dialogues

    dialogues = read_reference_dialogues(PUBLIC / "dialogues.jsonl")
    data = b"\xef\xbb\xbf" + '{"d-0001":\n [2.0, "ошибка"]}'.encode("cp1251")  # a BOM, then Windows-1251
    (tmp_path / "check.json").write_bytes(data)
    try:
        read_ppl_check(tmp_path / "check.json", dialogues, api.load_config().limits)
    except PplCheckInvalid as exc:
        (issue,) = exc.issues
    assert (issue.code, issue.line, issue.column) == ("not_utf8", 2, 9)  # the "о" after ' [2.0, "'
    assert issue.message.startswith("the file is not valid UTF-8 (bad byte at line 2, column 9)")

    log = IssueLog()
    check_ppl(data, "check.json", {d.dialog_id: d.n_turns for d in dialogues}, api.load_config().limits, log)
    assert [(i.code, i.line, i.column, i.message) for i in log.kept] == [
        (issue.code, issue.line, issue.column, issue.message)
    ]


def with_probes(tmp_path, name, probe):
    """The realistic example with a ppl_probes.json beside its perplexities: ``probe(dialog_id, turn, own)``
    gives each turn's probe value (None: no probe)."""
    sub = tmp_path / name
    shutil.copytree(EXAMPLES / "realistic", sub)
    ppl = json.loads((sub / "ppl_output.json").read_text(encoding="utf-8"))
    write_json(
        sub / "ppl_probes.json", {d: [probe(d, k, p) for k, p in enumerate(v)] for d, v in ppl.items()}
    )
    return sub


def test_score_reads_the_probes_beside_the_perplexities_and_changes_no_score(tmp_path, capsys):
    # a get_ppl without a model gives the shuffled target its own value; turn 0 of each dialogue is probed
    tied = with_probes(tmp_path, "tied", lambda d, k, own: own if k == 0 else None)
    for out in ("plain", "tied", "tied-again"):
        submission = EXAMPLES / "realistic" if out == "plain" else tied
        assert score_cli(submission, tmp_path / out) == 0
    for name in ("scores.json", "details.csv", "scores.txt"):
        assert (tmp_path / "plain" / name).read_bytes() == (tmp_path / "tied" / name).read_bytes()
    audit_bytes = (tmp_path / "tied" / "audit.json").read_bytes()
    assert audit_bytes == (tmp_path / "tied-again" / "audit.json").read_bytes()  # deterministic
    entry = json.loads(audit_bytes)["submissions"]["tied"]
    figures = entry["figures"]
    assert (figures["probes"], figures["probe_higher"], figures["probe_higher_low"]) == (40, 0.0, 0.0)
    assert [f["flag"] for f in entry["flags"]] == ["probe_insensitive"]
    plain = json.loads((tmp_path / "plain" / "audit.json").read_text())["submissions"]["realistic"]
    assert "probes" not in plain["figures"]  # no probes file, no probe figure
    err = capsys.readouterr().err
    assert "audit: tied: probe_insensitive: with the target's words shuffled, the perplexity is higher" in err
    # a language model finds the shuffled words less likely: no flag
    model = with_probes(tmp_path, "model", lambda d, k, own: own * 1.7)
    assert score_cli(model, tmp_path / "m", "--quiet") == 0
    entry = json.loads((tmp_path / "m" / "audit.json").read_text())["submissions"]["model"]
    assert (entry["figures"]["probes"], entry["figures"]["probe_higher"], entry["flags"]) == (66, 1.0, [])


def test_a_bad_probes_file_makes_the_upload_invalid_naming_it(tmp_path, capsys):
    bad = with_probes(tmp_path, "bad", lambda d, k, own: None)
    probes = json.loads((bad / "ppl_probes.json").read_text(encoding="utf-8"))
    probes["d-0001"] = ["high", 0.5]
    del probes["d-0002"]
    write_json(bad / "ppl_probes.json", probes)
    out = tmp_path / "out"
    assert score_cli(bad, out) == 1
    err = capsys.readouterr().err
    assert "ppl_probes.json" in err and "perplexity must be a number or null, not a string" in err
    assert "perplexity 0.5 is below 1" in err
    assert (
        "dialogue of dialogues.jsonl has no perplexities; add a list with one number (or null) per turn"
        in (err)
    )
    scores = json.loads((out / "scores.json").read_text(encoding="utf-8"))
    assert scores["status"] == "invalid"
    assert {e["file"] for e in scores["errors"]} == {"ppl_probes.json"}
    # validate is the participant's check of the two files, and codalab runs no audit: neither reads probes
    assert validate_cli(bad) == 0
    root = tmp_path / "input"
    shutil.copytree(PUBLIC, root / "ref")
    shutil.copytree(bad, root / "res")
    assert run_cli("codalab", root, tmp_path / "codalab") == 0


def test_a_leaderboard_audits_each_entry_with_its_probes(tmp_path):
    folder = tmp_path / "uploads"
    with_probes(folder, "tied", lambda d, k, own: own)
    with_probes(folder, "model", lambda d, k, own: own + 1)
    bad = with_probes(folder, "bad", lambda d, k, own: own + 1)
    (bad / "ppl_probes.json").write_text("{", encoding="utf-8")
    # a zip holds its probes beside its perplexities too, here in its one top-level folder
    with zipfile.ZipFile(folder / "zipped.zip", "w") as archive:
        for name in ("submission.jsonl", "ppl_output.json", "ppl_probes.json"):
            archive.write(folder / "tied" / name, f"outputs/{name}")
    out = tmp_path / "board"
    assert leaderboard_cli(folder, out, "--quiet") == 0
    board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    rows = {row["submission"]: row for row in board["submissions"]}
    assert rows["bad"]["status"] == "invalid" and rows["bad"]["errors"][0]["file"] == "ppl_probes.json"
    audit = json.loads((out / "audit.json").read_text(encoding="utf-8"))["submissions"]
    assert [f["flag"] for f in audit["tied"]["flags"]] == ["probe_insensitive", "same_ppl_as"]
    assert [f["flag"] for f in audit["model"]["flags"]] == ["same_ppl_as"]
    assert audit["model"]["figures"]["probe_higher"] == 1.0
    assert audit["zipped.zip"]["figures"]["probes"] == 66 and "probe_insensitive" in [
        f["flag"] for f in audit["zipped.zip"]["flags"]
    ]


def test_a_flagged_entry_is_marked_in_the_ranking_table(tmp_path):
    out = tmp_path / "board"
    assert leaderboard_cli(EXAMPLES / "board", out, "--quiet", "--no-synonyms", "--resamples", "100") == 0
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
    assert run_cli("audit-sample", "--data", PUBLIC, "--submission", EXAMPLES / "realistic", "--n", "6",
               "--seed", "7", "--output", sample) == 0  # fmt: skip
    rows = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines()]
    rows[0]["ppl"] = rows[0]["ppl"] * 3  # a recomputation that disagrees on one turn
    rows[1]["ppl"] = None  # not recomputed
    sample.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    assert score_cli(EXAMPLES / "realistic", out, "--quiet", "--no-synonyms", "--ppl-check", sample) == 0
    figures = json.loads((out / "audit.json").read_text(encoding="utf-8"))["submissions"]["realistic"][
        "figures"
    ]
    assert figures["checked"] == 5 and figures["within"] == pytest.approx(4 / 5)
    # a bad line is exit 2, located
    rows[2]["ppl"] = 0.5
    rows[3]["turn"] = 99
    sample.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    capsys.readouterr()
    assert score_cli(EXAMPLES / "realistic", out, "--quiet", "--no-synonyms", "--ppl-check", sample) == 2
    err = capsys.readouterr().err
    assert "recompute.jsonl, line 3" in err and "not a finite number >= 1" in err
    assert "recompute.jsonl, line 4" in err and "turn must be 0 to" in err
