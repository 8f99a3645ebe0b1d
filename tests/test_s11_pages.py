"""Contract section 11's pages, from templates: every page in both languages, for a files and a code
competition, with and without a final (the organizers' ``final/bundle.zip`` included), carries each value
the configuration sets, and a Russian page holds no English sentence."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import pytest
import yaml

from scorer.bundle import pages
from scorer.bundle.make import make_bundle

PUBLIC = Path(__file__).resolve().parent.parent / "reference_data" / "public"
#: A configuration whose every value the pages state is distinctive (no default, no other value equal).
CONFIG = """
[meteor]
alpha = 0.85
beta = 2.5
gamma = 0.45
stages = ["exact", "lemma"]

[weights]
Text2Text = 0.25
Image2Text = 0.15

[limits]
max_file_mib = 123
max_answer_chars = 12345

[competition]
posted_decimals = 7

[platform]
title = "Диалоги 2027"
language = "LANGUAGE"
image = "docker.io/org/scorer-torch:2.0"
packages = ["torch==2.5.1", "transformers==4.46.3"]
queue = "gpu-queue"
execution_time_limit = 3700
setup_timeout = 611
turn_timeout = 67
max_submissions_per_day = 3
max_submissions = 41
submission_rule = "Force_Best"
development_start = "2027-01-10"
seed = 777
FINAL
"""
FINAL = 'final_start = "2027-02-15"\nfinal_share = 0.4\n'
#: Common English words: none stands outside code in a Russian page.
ENGLISH = re.compile(
    r"\b(the|and|of|your|with|is|are|to|in|a|an|each|every|upload|team|turn)\b", re.IGNORECASE
)


def bundle_pages(tmp_path: Path, language: str, code: bool, final: bool) -> dict[str, str]:
    """Every page and README the bundle writes (the final competition's under ``final/``), by path."""
    config = tmp_path / f"{language}-{code}-{final}.toml"
    text = CONFIG.replace("LANGUAGE", language).replace("FINAL", FINAL if final else "")
    config.write_text(text, encoding="utf-8")
    made = make_bundle(PUBLIC, config=config, code=code)
    found = {p: d.decode("utf-8") for p, d in made.files.items() if p.endswith(".md")}
    if final:
        with zipfile.ZipFile(io.BytesIO(made.files["final/bundle.zip"])) as archive:
            found |= {
                f"final/{n}": archive.read(n).decode("utf-8") for n in archive.namelist() if n.endswith(".md")
            }
    return found


def prose(page: str) -> str:
    """A page without its code: fenced blocks, indented blocks and code spans."""
    page = re.sub(r"```.*?```", "", page, flags=re.DOTALL)
    page = "\n".join(line for line in page.splitlines() if not line.startswith("    "))
    return re.sub(r"`[^`]*`", "", page)


def test_the_pages_are_written_once_per_language():
    assert pages.languages() == ("en", "ru")
    for language in pages.languages():
        assert pages.page_titles(language) and pages.word(language, "integral")


@pytest.mark.parametrize("language", ["en", "ru"])
@pytest.mark.parametrize(
    "code, final", [(False, False), (True, False), (True, True)], ids=["files", "code", "final"]
)
def test_every_page_states_the_values_the_configuration_sets(tmp_path, language, code, final):
    found = bundle_pages(tmp_path, language, code, final)
    thousands = "," if language == "en" else "\u00a0"
    overview, evaluation, data = (
        found["pages/overview.md"],
        found["pages/evaluation.md"],
        found["pages/data.md"],
    )
    assert overview.startswith("# Диалоги 2027\n") and "docker.io/org/scorer-torch:2.0" in overview
    for value in (
        "alpha = 0.85",
        "gamma = 0.45",
        "beta = 2.5",
        "| `Text2Text` | 0.25 |",
        "| `Image2Text` | 0.15 |",
    ):
        assert value in evaluation, value
    assert "123" in data and f"12{thousands}345" in data
    assert "2027-01-10" in overview and f"3{thousands}700 s" in overview.replace(" с", " s")
    assert "3 times a day and 41 times" in overview or "3 раз в день и 41" in overview
    if code:
        assert "`torch==2.5.1`, `transformers==4.46.3`" in overview
        assert "--setup-timeout 611 --turn-timeout 67" in overview.replace("\n", " ")
        assert ("rounded to 7 decimals" if language == "en" else "округлено до 7 знаков") in overview
    if final:
        assert "2027-02-14 23:59:59 UTC" in overview and "2027-02-15" in overview
        final_overview, final_data = found["final/pages/overview.md"], found["final/pages/data.md"]
        assert "2027-02-15" in final_overview and "2027-02-14" in final_overview
        assert "777" in final_data and "0.4" in final_data
        assert final_overview.count("`Force_Latest_Multiple`") == 1
    for path, page in found.items():
        assert "{{" not in page and "{%" not in page, path
        if language == "ru":
            english = ENGLISH.findall(prose(page))
            assert not english, (path, english[:5])


def test_a_stage_the_registry_does_not_describe_is_named_by_its_name(tmp_path, monkeypatch):
    from scorer.metric import stages

    monkeypatch.setitem(stages.REGISTRY, "lemma", stages.REGISTRY["lemma"].__class__(
        **{**stages.REGISTRY["lemma"].__dict__, "described": {}}))  # fmt: skip
    found = bundle_pages(tmp_path, "ru", False, False)
    assert "этап организаторов `lemma`" in found["pages/evaluation.md"]
    assert "совпадающие слова" in found["pages/evaluation.md"]


def test_competition_yaml_is_data_with_every_date_a_quoted_string(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text(CONFIG.replace("LANGUAGE", "en").replace("FINAL", FINAL), encoding="utf-8")
    made = make_bundle(PUBLIC, config=config, code=True)
    text = made.files["competition.yaml"].decode("utf-8")
    assert "  start: '2027-01-10 00:00:00'\n  end: '2027-02-14 23:59:59'\n" in text
    spec = yaml.safe_load(text)
    assert (spec["phases"][0]["start"], spec["phases"][0]["end"]) == (
        "2027-01-10 00:00:00",
        "2027-02-14 23:59:59",
    )
    with zipfile.ZipFile(io.BytesIO(made.files["final/bundle.zip"])) as archive:
        final = yaml.safe_load(archive.read("competition.yaml"))
    assert final["phases"][0]["start"] == "2027-02-15 00:00:00"
    for name in ("scoring_program/metadata.yaml", "ingestion_program/metadata.yaml"):
        assert set(yaml.safe_load(made.files[name])) == {"command", "description"}
