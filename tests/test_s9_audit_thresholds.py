"""Contract section 9, the audit's thresholds at their edges, each pinned by the contract's own numbers:
``few_distinct`` on the smallest data sets (a single value flags from 2 turns on, never on 1), and
``low_outlier`` (more than ``outlier_mads`` = 5 scaled MADs, 1.4826 x MAD of the entries' medians, below their
median; from 5 scored entries on)."""

import json
import math

import pytest
from helpers import make_split, make_submission, score_cli

from scorer.scoring.audit import audit_board, audit_submission

# --- few_distinct ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ppl, flags, not_judged",
    [
        # one turn: `distinct` is 1, but neither n >= 2 nor n >= 20 holds; judged (not inconclusive, which
        # needs distinct > 1), and not flagged
        ([7.5], [], []),
        ([7.5, 7.5], ["few_distinct"], []),  # `distinct` is 1 and n >= 2
        ([7.5, 8.0], [], [("few_distinct", 2, 20)]),  # n < 20 and distinct > 1: too little to judge
    ],
)
def test_few_distinct_on_the_smallest_data_sets(ppl, flags, not_judged):
    audit = audit_submission(ppl, [0.3] * len(ppl), [True] * len(ppl))
    assert audit.distinct == len(set(ppl)) and audit.flag_names == flags
    assert [
        (i.check, i.count, i.needs) for i in audit.inconclusive if i.check == "few_distinct"
    ] == not_judged


@pytest.mark.parametrize("turns, flags", [(1, []), (2, ["few_distinct"])])
def test_score_audits_few_distinct_on_one_and_two_turn_data_sets(tmp_path, turns, flags):
    """`score` audits what it scores: a data set of one turn is no constant, one of two equal values is."""
    references = [[f"кошка спит {k}"] for k in range(turns)]
    data = make_split(tmp_path, [("d-1", "Text2Text", references)])
    sub = make_submission(tmp_path, {"d-1": ["кошка спит"] * turns}, {"d-1": [7.5] * turns})
    out = tmp_path / "out"
    code = score_cli(sub, out, "--quiet", "--jobs", "1", "--no-synonyms", data=data)
    assert code == 0
    entry = json.loads((out / "audit.json").read_text(encoding="utf-8"))["submissions"]["sub"]
    assert entry["figures"]["distinct"] == 1 and [f["flag"] for f in entry["flags"]] == flags
    assert "few_distinct" not in [i["check"] for i in entry["inconclusive"]]  # a single value is judged


# --- low_outlier -------------------------------------------------------------------------------------------


def board(medians: dict[str, float]) -> dict:
    """Entries whose median ln perplexity is the value given: three turns each, at ln m - 1, m, m + 1."""
    entries = {}
    for name, m in medians.items():
        ppl = [math.exp(m - 1), math.exp(m), math.exp(m + 1)]
        entries[name] = (audit_submission(ppl, [0.2, 0.5, 0.8], [True] * 3), ppl)
    return entries


def outliers(medians: dict[str, float]) -> list[str]:
    return [
        name
        for name, audit in sorted(audit_board(board(medians)).items())
        if "low_outlier" in audit.flag_names
    ]


# Four entries at medians 12, 13, 14 and 15 (ln perplexity), and one more at `low`: the median of the five
# medians is 13, their absolute deviations from it 13 - low, 1, 0, 1, 2, whose median (the MAD) is 1, scaled
# 1.4826. An entry is flagged when (13 - low) / 1.4826 > 5, that is when low < 13 - 7.413 = 5.587.
OTHERS = {"a": 12.0, "b": 13.0, "c": 14.0, "d": 15.0}


@pytest.mark.parametrize(
    "low, flagged",
    [
        (5.5, ["low"]),  # (13 - 5.5) / 1.4826 = 5.06 scaled MADs below: more than 5
        (5.7, []),  # (13 - 5.7) / 1.4826 = 4.92: not more than 5
        (3.0, ["low"]),  # 6.74 scaled MADs below (4.03 if the MAD were scaled by 2.4826)
    ],
)
def test_low_outlier_lies_more_than_5_scaled_mads_below_the_median(low, flagged):
    assert outliers({**OTHERS, "low": low}) == flagged


def test_low_outlier_is_only_below_and_needs_five_entries():
    # far above the median: 21 - 13 = 8 MADs above, never a low outlier
    assert outliers({**OTHERS, "high": 21.0}) == []
    # four entries at 3, 12, 13, 14: median 12.5, deviations 9.5, 0.5, 0.5, 1.5, MAD 1, scaled 1.4826; 3 lies
    # 9.5 / 1.4826 = 6.4 scaled MADs below, but below 5 scored entries the check does not apply
    assert outliers({"a": 12.0, "b": 13.0, "c": 14.0, "low": 3.0}) == []
