"""Shared fixtures: the RuWordNet copy named by RUWORDNET_PATH, small splits on disk."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scorer.matcher import Matcher
from scorer.thesaurus import Thesaurus, load_thesaurus

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = ROOT / "reference_data" / "public"
EXAMPLES = ROOT / "submissions_examples"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(scope="session")
def rwn() -> Thesaurus:
    if not os.environ.get("RUWORDNET_PATH"):
        pytest.fail("set RUWORDNET_PATH to a RuWordNet XML directory or SQLite file to run the tests")
    return load_thesaurus()


@pytest.fixture(scope="session")
def matcher(rwn) -> Matcher:
    return Matcher(rwn)


def write_jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def write_json(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return path


def make_split(root: Path, dialogues: list[tuple[str, str, list[list[str]]]]) -> Path:
    """dialogues: (dialog_id, type, references per turn) -> a reference directory."""
    data = root / "data"
    write_jsonl(data / "dialogues.jsonl", [
        {"dialog_id": d, "type": t, "turns": [[{"type": "text", "content": f"вопрос {k}"}] for k in range(len(r))]}
        for d, t, r in dialogues])
    write_jsonl(data / "answers.jsonl", [{"dialog_id": d, "references": r} for d, _, r in dialogues])
    return data


def make_submission(root: Path, answers: dict[str, list[str]], ppl: dict[str, list[float]], name="sub") -> Path:
    folder = root / name
    write_jsonl(folder / "submission.jsonl", [{"dialog_id": d, "answers": a} for d, a in answers.items()])
    write_json(folder / "ppl_output.json", ppl)
    return folder
