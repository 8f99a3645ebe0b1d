"""The perplexity audit (contract section 9) on data made to show each figure and flag: an honest
submission, every value 1, a constant, values rounded to one decimal, a shuffled copy, a copy of another
entry, perplexities rising with METEOR, organizer checks that agree and that do not; and the thresholds'
edges. No audit changes a score or a rank."""

import json
import math
import random

import pytest
import scipy.stats

from scorer.scoring.audit import (
    AuditSettings,
    audit_board,
    audit_submission,
    average_ranks,
    fisher_interval,
    sample_counts,
    spearman,
    validate_warnings,
)

N = 2000


def honest(seed=1, n=N):
    """Perplexities from a log-normal whose median falls as METEOR rises: rho clearly negative."""
    rng = random.Random(seed)
    meteor = [rng.random() for _ in range(n)]
    ppl = [1 + math.exp(rng.gauss(3.0 - 2.5 * m, 0.5)) for m in meteor]
    return ppl, meteor


def audited(ppl, meteor, **kwargs):
    return audit_submission(ppl, meteor, [True] * len(ppl), **kwargs)


def test_spearman_is_scipys():
    rng = random.Random(3)
    for n in (2, 3, 10, 57, 400):
        x = [rng.choice([1.0, 2.0, 2.5, rng.random()]) for _ in range(n)]
        y = [rng.choice([0.0, 0.5, rng.random()]) for _ in range(n)]
        expected = scipy.stats.spearmanr(x, y).statistic
        got = spearman(x, y)
        if math.isnan(expected):
            assert got is None
        else:
            assert got == pytest.approx(expected, abs=1e-12)
    assert average_ranks([3.0, 1.0, 3.0, 2.0]) == list(scipy.stats.rankdata([3.0, 1.0, 3.0, 2.0]))
    assert spearman([1.0, 1.0, 1.0], [0.1, 0.2, 0.3]) is None  # a constant side: empty


def test_the_interval_is_fishers_z_with_the_bonett_wright_error():
    rho, n = -0.4, 103
    se = math.sqrt((1 + rho**2 / 2) / (n - 3))
    low, high = fisher_interval(rho, n)
    assert low == pytest.approx(math.tanh(math.atanh(rho) - 1.959963984540054 * se), abs=1e-15)
    assert high == pytest.approx(math.tanh(math.atanh(rho) + 1.959963984540054 * se), abs=1e-15)
    assert fisher_interval(1.0, 50) == (1.0, 1.0)


def test_an_honest_submission_raises_no_flag():
    ppl, meteor = honest()
    audit = audited(ppl, meteor)
    assert audit.flags == () and audit.at_one == 0 and audit.distinct == N
    assert audit.rho < -0.5 and audit.rho_high < 0 and audit.rho_turns == N


def test_every_value_one():
    _, meteor = honest()
    audit = audited([1.0] * N, meteor)
    assert audit.flag_names == ["ppl_at_one", "few_distinct"] and audit.at_one == 1.0 and audit.distinct == 1
    assert audit.rho is None  # a constant side
    assert audit.flags[0].message.startswith("2,000 of 2,000 turns report perplexity exactly 1")


def test_a_constant():
    _, meteor = honest()
    audit = audited([7.5] * N, meteor)
    assert (
        audit.flag_names == ["few_distinct"] and "only 1 distinct perplexity (7.5)" in audit.flags[0].message
    )


def test_rounded_to_one_decimal():
    ppl, meteor = honest()
    rounded = [round(p, 1) for p in ppl]
    audit = audited(rounded, meteor)
    # about 600 distinct values over 2,000 turns: more than 1% of them, so not flagged; rho still negative
    assert audit.flags == () and 20 < audit.distinct < N and audit.rho < -0.5
    coarse = [float(round(p)) for p in ppl][:1000]
    flagged = audited(coarse, meteor[:1000], settings=AuditSettings(min_distinct_share=0.2))
    assert flagged.flag_names == ["few_distinct"] and flagged.distinct > 1
    assert f"1,000 turns report only {flagged.distinct} distinct perplexities" in flagged.flags[0].message


def test_a_shuffled_copy_loses_rho_but_keeps_its_distribution():
    ppl, meteor = honest()
    shuffled = ppl[:]
    random.Random(5).shuffle(shuffled)
    audit = audited(shuffled, meteor)
    assert audit.flags == () and abs(audit.rho) < 0.1 and audit.rho_low < 0 < audit.rho_high
    assert audit.median_log_ppl == audited(ppl, meteor).median_log_ppl


def test_perplexities_rising_with_meteor():
    ppl, meteor = honest()
    inverted = [1 + math.exp(6.0 - math.log(p - 1)) for p in ppl]
    audit = audited(inverted, meteor)
    assert audit.flag_names == ["ppl_against_meteor"] and audit.rho > 0.5 and audit.rho_low > 0


def test_an_organizer_check_that_agrees_and_one_that_does_not():
    ppl, meteor = honest()
    rng = random.Random(9)
    agree = [(p, p * math.exp(rng.uniform(-0.005, 0.005))) for p in ppl[:200]]  # within 0.5%
    audit = audited(ppl, meteor, checked=agree)
    assert (
        audit.flags == ()
        and audit.checked == 200
        and audit.within == 1.0
        and audit.median_log_difference < 0.005
    )
    disagree = [(p, p * 1.3) for p in ppl[:200]]
    audit = audited(ppl, meteor, checked=disagree)
    assert audit.flag_names == ["check_mismatch"] and audit.within == 0.0
    assert audit.median_log_difference == pytest.approx(math.log(1.3))


def test_edges_of_the_thresholds():
    ppl, meteor = honest(n=1000)
    # exactly max_share_at_one (1% of 1,000 = 10 turns at 1): not above it, not flagged; 11 is
    assert audited([1.0] * 10 + ppl[10:], meteor).flag_names == []
    assert audited([1.0] * 11 + ppl[11:], meteor).flag_names == ["ppl_at_one"]
    # few_distinct: from n = 20 on, distinct is compared with min_distinct_share * n; below, only one value
    # flags
    two = [2.0, 3.0]
    assert audited((two * 10)[:19], meteor[:19]).flag_names == []
    assert audited([2.0] * 19, meteor[:19]).flag_names == ["few_distinct"]
    low_share = AuditSettings(
        min_distinct_share=0.2
    )  # 3 distinct values: 3 < 0.2 * 20; at n = 19 not compared
    three = [2.0, 3.0, 4.0]
    assert audited((three * 7)[:19], meteor[:19], settings=low_share).flag_names == []
    assert audited((three * 7)[:20], meteor[:20], settings=low_share).flag_names == ["few_distinct"]
    # ppl_against_meteor: rho clearly positive over 99 turns is not flagged, over 100 it is
    rising = sorted(ppl[:100])
    ordered = sorted(meteor[:100])
    assert audited(rising[:99], ordered[:99]).flag_names == []
    assert audited(rising, ordered).flag_names == ["ppl_against_meteor"]
    # fewer than 10 turns with a token: rho empty
    short = audit_submission(ppl[:20], meteor[:20], [True] * 9 + [False] * 11)
    assert short.rho is None and short.rho_turns == 9


def entries(*named):
    return {name: (audited(ppl, meteor), ppl) for name, (ppl, meteor) in named}


def test_a_copied_entry_and_a_low_outlier():
    teams = [honest(seed) for seed in range(1, 6)]
    board = entries(*((f"team-{k}", t) for k, t in enumerate(teams)), ("copy", teams[0]))
    audits = audit_board(board)
    assert audits["copy"].flag_names == ["same_ppl_as"] and audits["copy"].same_ppl_as == ("team-0",)
    assert audits["team-0"].same_ppl_as == ("copy",)
    assert all(audits[f"team-{k}"].flags == () for k in range(1, 5))
    ppl, meteor = teams[4]
    board["team-4"] = (audited([1 + (p - 1) / 1000 for p in ppl], meteor), [1 + (p - 1) / 1000 for p in ppl])
    audits = audit_board(board)
    assert "low_outlier" in audits["team-4"].flag_names
    # MAD = 0 (every median equal): no outlier, however far one lies
    same = {f"t{k}": (audited(teams[0][0], teams[0][1]), [float(k)] * 3) for k in range(4)}
    same["low"] = (audited([1.0001] * N, teams[0][1]), [1.0001] * N)
    assert all("low_outlier" not in a.flag_names for a in audit_board(same).values())


def test_sampling_is_proportional_and_validate_warns():
    assert sample_counts({"Text2Text": 50, "Image2Text": 30, "Audio2Text": 20}, 10) == {
        "Text2Text": 5,
        "Image2Text": 3,
        "Audio2Text": 2,
    }
    assert sum(sample_counts({"a": 7, "b": 7, "c": 7}, 10).values()) == 10
    assert sample_counts({"a": 1}, 10) == {"a": 1}
    assert validate_warnings([1.0] * 5).startswith("every one of the 5 perplexities is exactly 1")
    assert validate_warnings([3.0, 3.0]).startswith("all 2 perplexities are equal (3.0)")
    assert validate_warnings([3.0, 4.0]) is None and validate_warnings([1.0]) is None


def test_private_settings_are_named_private():
    assert not AuditSettings().is_private and AuditSettings(same_share=0.9).is_private
    assert json.dumps(AuditSettings().__dict__)  # plain numbers
