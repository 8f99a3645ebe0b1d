"""Contract section 6, "No input ends a run with exit 3": an answer's text never raises (a word the morphology
cannot analyse is its own lemma, and the run says so in ``scores.json`` under ``"warnings"``), and in
``leaderboard`` an entry whose scoring fails for any reason other than an invalid upload is listed with status
``error`` and the others are ranked.

The other classes of docs/security.md's "Fault isolation" section are tested in the files of their own
sections: bounded work and the cache in ``test_s3_*.py``, the thesaurus identity in
``test_s4_thesaurus_identity.py``, the organizer's configuration in ``test_s7_configuration_faults.py``, the
human ratings in ``test_s8_ratings_and_resamples.py``, the commit marker in ``test_s6_command_line.py``.
"""

import json
import sys

import pytest
from helpers import leaderboard_cli, score_into, upload
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorer.metric import morphology

# --- a turn's text can never raise ------------------------------------------------------------------


@pytest.mark.parametrize(
    "word, why",
    [("не" * 600 + "кот", "longer than 100 characters"), ("\U00017000", "pymorphy3 failed: ValueError")],
)
def test_a_word_the_morphology_cannot_analyse_is_its_own_lemma_with_a_warning(tmp_path, word, why):
    lemmas, why_not = morphology.analyse(word)
    assert lemmas == frozenset([word]) and why in why_not
    code, scores = score_into(tmp_path, upload(tmp_path / "s", f"Кот {word} спит."), "--no-synonyms")
    assert code == 0 and scores["status"] == "ok"
    warning = next(w for w in scores["warnings"] if w["code"] == "unanalysed_word")
    assert warning["dialog_id"] == "d-0001" and warning["turn"] == 0 and warning["file"] == "submission.jsonl"
    assert why in warning["message"] and len(warning["message"]) < 250
    # a warm run (the token cache written by the first) still says so: such words are never cached
    code, again = score_into(
        tmp_path, upload(tmp_path / "s", f"Кот {word} спит."), "--no-synonyms", out="out2"
    )
    assert again["warnings"] == scores["warnings"] and again["integral"] == scores["integral"]


def test_deep_recursion_in_the_analyser_is_contained(monkeypatch):
    def recurse(token):
        return recurse(token)

    morphology.analyse.cache_clear()
    monkeypatch.setattr(morphology.analyzer(), "parse", recurse)
    try:
        assert morphology.analyse("кошки") == (frozenset(["кошки"]), "pymorphy3 recursed too deep")
        assert sys.getrecursionlimit() < morphology.ANALYSIS_RECURSION_LIMIT  # restored
    finally:
        morphology.analyse.cache_clear()


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.one_of(
            st.text(min_size=1, max_size=40),
            st.builds(lambda k, w: "не" * k + w, st.integers(1, 400), st.sampled_from(["кот", "ь", ""])),
            st.builds(
                lambda k, m: "а" + m * k,
                st.integers(1, 60),
                st.sampled_from(["\u0301", "\u0316\u0301", "\u0344", "\U0001d165"]),
            ),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_score_never_exits_3_on_random_unicode_answers(tmp_path_factory, words):
    root = tmp_path_factory.mktemp("u")
    code, scores = score_into(root, upload(root / "s", " ".join(words)), "--no-synonyms")
    assert code in (0, 1), code
    assert scores["status"] == ("ok" if code == 0 else "invalid")
    if code == 1:
        assert all(e["code"] == "combining_run" for e in scores["errors"])


# --- one entry never stops a leaderboard -------------------------------------------------------------


def test_a_failing_entry_is_listed_as_error_and_the_others_are_ranked(tmp_path, monkeypatch, capsys):
    from scorer.scoring import scored

    folder = tmp_path / "subs"
    for name in ("alpha", "beta", "gamma"):
        upload(folder / name)
    real = scored.score_validated

    def fails_for_beta(reference, valid, config, rwn, jobs, progress, matcher, name, **keywords):
        if name == "beta":
            raise RecursionError("maximum recursion depth exceeded")
        return real(reference, valid, config, rwn, jobs, progress, matcher, name, **keywords)

    monkeypatch.setattr(scored, "score_validated", fails_for_beta)
    code = leaderboard_cli(folder, tmp_path / "b", "--no-synonyms", "--no-report", "--resamples", "40")
    assert code == 0
    rows = json.loads((tmp_path / "b" / "leaderboard.json").read_text())["submissions"]
    assert [(r["submission"], r["status"], r["rank"]) for r in rows] == [
        ("alpha", "ok", 1),
        ("gamma", "ok", 1),
        ("beta", "error", None),
    ]
    assert (
        rows[2]["errors"][0]["message"] == "scoring failed: RecursionError: maximum recursion depth exceeded"
    )
    assert "beta" in capsys.readouterr().out
