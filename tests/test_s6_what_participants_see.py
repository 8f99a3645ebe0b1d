"""Contract section 6, "What participants see": nothing `codalab` writes or prints holds the answers.

Each upload is scored by `codalab` as a platform runs it, with and without
`[participants] turn_details`; every output file, stdout and stderr are then
searched for any run of three consecutive reference tokens that none of the
upload's own answers contains. The same search finds such runs on the
organizer's page (`score --report`), so it is not blind.
"""

from __future__ import annotations

import csv
import io
import json
import shutil

import pytest
from helpers import EXAMPLES, PUBLIC, read_jsonl, run_cli, score_cli

from scorer.metric.text import tokenise

REFERENCES = {d["dialog_id"]: d["references"] for d in read_jsonl(PUBLIC / "answers.jsonl")}
PPL = json.loads((EXAMPLES / "realistic" / "ppl_output.json").read_text(encoding="utf-8"))
REALISTIC = {d["dialog_id"]: d["answers"] for d in read_jsonl(EXAMPLES / "realistic" / "submission.jsonl")}


def _half(text: str) -> str:
    words = text.split()
    return " ".join(words[: max(1, len(words) // 2)])


UPLOADS = {
    "empty": {d: ["" for _ in turns] for d, turns in REFERENCES.items()},
    "one-word": {d: ["да" for _ in turns] for d, turns in REFERENCES.items()},
    "half-first-variant": {d: [_half(v[0]) for v in turns] for d, turns in REFERENCES.items()},
    "realistic": REALISTIC,
}


def trigrams(tokens):
    return {tuple(tokens[k : k + 3]) for k in range(len(tokens) - 2)}


def leaked(answers: dict[str, list[str]], text: str) -> set[tuple[str, ...]]:
    """The runs of three reference tokens found in ``text`` that no answer of the upload contains."""
    own = set()
    for turns in answers.values():
        for answer in turns:
            own |= trigrams(tokenise(answer))
    shown = trigrams(tokenise(text))
    found = set()
    for turns in REFERENCES.values():
        for variants in turns:
            for variant in variants:
                found |= (trigrams(tokenise(variant)) - own) & shown
    return found


def codalab_input(tmp_path, answers, config: str | None = None):
    root = tmp_path / "input"
    shutil.copytree(PUBLIC, root / "ref")
    if config is not None:
        (root / "ref" / "config.toml").write_text(config, encoding="utf-8")
    (root / "res").mkdir()
    lines = [json.dumps({"dialog_id": d, "answers": a}, ensure_ascii=False) for d, a in answers.items()]
    (root / "res" / "submission.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "res" / "ppl_output.json").write_text(json.dumps(PPL), encoding="utf-8")
    return root


def everything_shown(out, captured) -> str:
    texts = [captured.out, captured.err]
    texts += [p.read_text(encoding="utf-8") for p in sorted(out.iterdir()) if p.is_file()]
    return "\n".join(texts)


DETAILS_ON = "[participants]\nturn_details = true\n"


@pytest.mark.parametrize("upload", sorted(UPLOADS))
@pytest.mark.parametrize("config", [None, DETAILS_ON], ids=["default", "turn_details"])
def test_codalab_shows_no_reference_text_in_any_output_or_stream(tmp_path, capsys, upload, config):
    answers = UPLOADS[upload]
    root = codalab_input(tmp_path, answers, config)
    out = tmp_path / "out"
    assert run_cli("codalab", root, out) == 0
    shown = everything_shown(out, capsys.readouterr())
    assert leaked(answers, shown) == set()
    names = {p.name for p in out.iterdir()}
    page = (out / "detailed_results.html").read_text(encoding="utf-8")
    assert "best variant" not in page and "reference 0" not in page and "Private:" not in page
    if config is None:
        # no per-turn figure: no details.csv, no distribution, no turn list
        assert names == {"scores.json", "scores.txt", "detailed_results.html"}
        assert "METEOR per turn" not in page and 'class="turn"' not in page
    else:
        assert names == {"scores.json", "scores.txt", "detailed_results.html", "details.csv"}
        rows = list(csv.reader(io.StringIO((out / "details.csv").read_text(encoding="utf-8"))))
        assert rows[0] == [
            "dialog_id",
            "type",
            "turn",
            "meteor",
            "hidden_metric",
            "ppl",
            "matches",
            "precision",
            "cand_tokens",
        ]
        assert len(rows) == 1 + sum(len(t) for t in REFERENCES.values())
        assert page.count('<div class="turn">') == len(rows) - 1


def test_turn_details_mark_the_participants_own_matched_words(tmp_path, capsys):
    answers = {d: list(a) for d, a in REALISTIC.items()}
    root = codalab_input(tmp_path, answers, DETAILS_ON)
    out = tmp_path / "out"
    assert run_cli("codalab", root, out, "--quiet") == 0
    page = (out / "detailed_results.html").read_text(encoding="utf-8")
    # d-0002: "Доброе утро!" against «Доброе утро.»: both words matched exactly, METEOR 0.9 * ... of 1.0
    start = page.index("d-0002 &middot; turn 0")
    turn = page[start : page.index("</div></div>", start)]
    assert 'class="tok exact" title="exact match">доброе</span>' in turn
    assert 'class="tok exact" title="exact match">утро</span>' in turn
    assert "METEOR 1.0000" in turn
    text = (out / "details.csv").read_text(encoding="utf-8")
    rows = {(r["dialog_id"], r["turn"]): r for r in csv.DictReader(io.StringIO(text))}
    assert rows[("d-0002", "0")]["meteor"] == "1.0" and rows[("d-0002", "0")]["matches"] == "2"


def test_the_leak_search_finds_the_references_on_the_organizers_page(tmp_path, capsys):
    """The organizer's page shows each lowest turn's best variant, under a banner saying it is private."""
    answers = UPLOADS["empty"]
    root = codalab_input(tmp_path, answers)
    out = tmp_path / "organizer"
    code = score_cli(root / "res", out, "--report", data=root / "ref")
    assert code == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert len(leaked(answers, page)) >= 5
    body = page[page.index("<body>") :]
    assert body.index("Private: this page holds the test set") < body.index("Integral:")
    assert "best_reference" in (out / "details.csv").read_text(encoding="utf-8").splitlines()[0]


def test_a_warning_about_a_reference_word_is_not_shown_to_participants(tmp_path, capsys):
    """A word the morphology cannot analyse is warned about where it is; the organizer hears of a
    reference's word, a participant only of their own."""
    word = "не" * 60 + "кот"  # longer than 100 characters: its own lemma, with a warning
    answers = {d: ["Москва" for _ in turns] for d, turns in REFERENCES.items()}
    root = codalab_input(tmp_path, answers)
    lines = (root / "ref" / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["references"][0][0] = f"Москва {word}."
    lines[0] = json.dumps(first, ensure_ascii=False)
    (root / "ref" / "answers.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    organizer = tmp_path / "organizer"
    assert score_cli(root / "res", organizer, data=root / "ref") == 0
    warned = json.loads((organizer / "scores.json").read_text(encoding="utf-8"))["warnings"]
    assert [w["file"] for w in warned if w["code"] == "unanalysed_word"] == ["answers.jsonl"]
    capsys.readouterr()
    out = tmp_path / "out"
    assert run_cli("codalab", root, out) == 0
    shown = everything_shown(out, capsys.readouterr())
    assert "некот" not in shown and "ненене" not in shown
    assert json.loads((out / "scores.json").read_text(encoding="utf-8"))["warnings"] == []
