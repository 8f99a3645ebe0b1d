"""The perplexity audit (contract section 9) on data made to show each figure and flag: an honest
submission, every value 1, a constant, values rounded to one decimal, a shuffled copy, a copy of another
entry, perplexities rising with METEOR, organizer checks that agree and that do not, values just above 1
without a model, probes a perplexity cannot tell from the target; and the thresholds' edges. No audit changes
a score or a rank."""

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
    flagged_lines,
    sample_counts,
    spearman,
    validate_warnings,
    wilson_interval,
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
    assert audit.at_one == 1.0 and audit.distinct == 1
    # every turn claims certainty, and about half of them score METEOR below 0.5
    assert audit.flag_names == ["ppl_at_one", "few_distinct", "overconfident"]
    assert audit.confident_turns == N and audit.overconfident_share == sum(m < 0.5 for m in meteor) / N
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


def test_the_wilson_interval_by_hand():
    # 15 of 20: p = 0.75, z = 1.959964, z^2 / n = 0.192073;
    # centre (0.75 + 0.096036) / 1.192073 = 0.709719, half 1.644165 x sqrt(0.009375 + 0.002401) = 0.178420
    z = 1.959963984540054
    p, n = 0.75, 20
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = wilson_interval(15, 20)
    assert (low, high) == (pytest.approx(centre - half, abs=1e-15), pytest.approx(centre + half, abs=1e-15))
    assert (low, high) == (pytest.approx(0.531299, abs=1e-6), pytest.approx(0.888138, abs=1e-6))
    # the ends stay within [0, 1]: 0 of 20 starts at 0, 20 of 20 ends at 1
    assert wilson_interval(0, 20) == (0.0, pytest.approx(0.161125, abs=1e-6))
    assert wilson_interval(20, 20) == (pytest.approx(0.838875, abs=1e-6), 1.0)
    assert wilson_interval(10, 20) == (pytest.approx(0.299298, abs=1e-6), pytest.approx(0.700702, abs=1e-6))


def test_a_get_ppl_without_a_model_is_overconfident():
    """Values just above 1 (1.001, 1.002, ...) returned without a model, on answers far from the targets:
    the numbers claim a certainty the answers do not show."""
    rng = random.Random(11)
    n = 100
    fake = [1.0 + 1e-3 * k for k in range(1, n + 1)]  # 1.001 .. 1.1: every one at most confident_ppl 1.2
    poor = [rng.uniform(0.0, 0.3) for _ in range(n)]
    audit = audited(fake, poor)
    assert audit.flag_names == ["overconfident"]
    assert audit.confident_turns == 100 and audit.overconfident_share == 1.0
    message = audit.flags[0].message
    assert message.startswith("100 of 100 turns whose perplexity is near 1") and "1.2" not in message
    figures = audit.figures()
    assert (figures["confident_turns"], figures["overconfident_share"]) == (100, 1.0)
    # an honest model's perplexities are never that low here: no confident turn, an empty share
    honest_audit = audited(*honest())
    assert honest_audit.confident_turns == 0 and honest_audit.overconfident_share is None
    # the same values on answers close to the targets: certainty the answers bear out
    assert audited(fake, [0.9] * n).flag_names == [] and audited(fake, [0.9] * n).overconfident_share == 0.0


def test_edges_of_overconfident():
    high_meteor, low_meteor = 0.8, 0.1
    # 20 turns at most confident_ppl (1.2 itself included), 4 of them (0.2, not above 0.2) below METEOR 0.5
    ppl = [1.2] * 10 + [1.05] * 10 + [1.3, 4.0]
    meteor = [low_meteor] * 4 + [high_meteor] * 16 + [low_meteor, low_meteor]
    audit = audited(ppl, meteor)
    assert (audit.confident_turns, audit.overconfident_share, audit.flag_names) == (20, 0.2, [])
    # a fifth: 0.25 is above 0.2
    meteor[4] = low_meteor
    assert audited(ppl, meteor).flag_names == ["overconfident"]
    # 19 such turns, every one with a low METEOR: too few to flag
    near = [1.1 + 0.001 * k for k in range(20)]
    assert audited(near[:19], [low_meteor] * 19).flag_names == []
    assert audited(near, [low_meteor] * 20).flag_names == ["overconfident"]
    # METEOR exactly confident_meteor is not below it
    assert audited(near, [0.5] * 20).overconfident_share == 0.0
    # the thresholds are the settings'
    strict = AuditSettings(confident_ppl=1.5, confident_meteor=0.9, max_share_overconfident=0.5)
    audit = audited([1.4] * 20 + [1.6] * 5, [0.85] * 11 + [0.95] * 9 + [0.0] * 5, settings=strict)
    assert (audit.confident_turns, audit.overconfident_share) == (20, 0.55)
    assert audit.flag_names == ["overconfident"]


def probed(own, probes):
    return audit_submission(own, [0.5] * len(own), [True] * len(own), probed=list(zip(own, probes)))


def test_probes_a_perplexity_cannot_tell_from_the_target_are_flagged():
    own = [3.0 + 0.1 * k for k in range(20)]
    # a constant, or the text's length: the probe (the same words shuffled) gets the turn's own value
    ties = probed(own, own)
    assert ties.flag_names == ["probe_insensitive"]
    assert (ties.probes, ties.probe_higher, ties.probe_higher_low) == (20, 0.0, 0.0)
    assert ties.probe_higher_high == pytest.approx(0.161125, abs=1e-6)
    assert ties.flags[0].message.startswith(
        "with the target's words shuffled, the perplexity is higher than the turn's own on 0 of 20 probes "
        "(0.000, 95% interval [0.000, 0.161]): no better than chance"
    )
    # a hash: higher on half of them, as a coin falls
    coin = probed(own, [p * 1.5 if k % 2 else p / 1.5 for k, p in enumerate(own)])
    assert coin.flag_names == ["probe_insensitive"] and coin.probe_higher == 0.5
    assert coin.probe_higher_low == pytest.approx(0.299298, abs=1e-6)
    # a language model: higher nearly always
    model = probed(own, [p * 1.5 for p in own])
    assert model.flag_names == [] and model.probe_higher == 1.0
    assert model.figures()["probe_higher_low"] == pytest.approx(0.838875, abs=1e-6)


def test_edges_of_probe_insensitive():
    own = [3.0 + 0.1 * k for k in range(20)]
    # 15 of 20 higher: interval [0.531, 0.888], above chance; 14 of 20: [0.481, 0.855], not
    assert probed(own, [p + 1 for p in own[:15]] + [p - 1 for p in own[15:]]).flag_names == []
    fourteen = probed(own, [p + 1 for p in own[:14]] + own[14:])  # ties are not higher
    assert fourteen.flag_names == ["probe_insensitive"] and fourteen.probe_higher == 0.7
    assert fourteen.probe_higher_low == pytest.approx(0.481027, abs=1e-6)
    assert fourteen.probe_higher_high == pytest.approx(0.854523, abs=1e-6)
    # 19 probes, every one a tie: too few to flag
    nineteen = probed(own[:19], own[:19])
    assert nineteen.flag_names == [] and nineteen.probes == 19 and nineteen.probe_higher == 0.0
    # a probes file with no probe at all: the count alone; without the file, no probe figure
    none = audit_submission(own, [0.5] * 20, [True] * 20, probed=[])
    assert none.flag_names == [] and none.figures()["probes"] == 0 and none.figures()["probe_higher"] is None
    assert "probes" not in audited(own, [0.5] * 20).figures()


def test_probe_and_confidence_settings_are_private():
    assert AuditSettings(confident_ppl=1.3).is_private and AuditSettings(probe_turns=50).is_private
    assert AuditSettings(probe_min_words=5, max_share_overconfident=0.2).is_private is False


# --- checks that had too little to judge (contract section 9: inconclusive, not a pass) -------------------


def _checks(audit):
    return [(i.check, i.count, i.needs) for i in audit.inconclusive]


def test_below_twenty_turns_few_distinct_is_not_judged_unless_a_single_value():
    ppl = [1.5 + k / 10 for k in range(19)]
    meteor = [0.9 - k / 40 for k in range(19)]
    audit = audit_submission(ppl, meteor, [True] * 19)
    assert _checks(audit) == [
        ("few_distinct", 19, 20),
        ("ppl_against_meteor", 19, 100),
        ("overconfident", 0, 20),
    ]
    assert audit.not_judged == (
        "not judged: few_distinct (19 of 20), ppl_against_meteor (19 of 100), overconfident (0 of 20)"
    )
    single = audit_submission([3.0] * 19, meteor, [True] * 19)
    assert "few_distinct" in single.flag_names and "few_distinct" not in [c for c, *_ in _checks(single)]


def test_rho_empty_over_a_hundred_turns_is_not_judged_with_its_reason():
    audit = audit_submission([2.0 + k for k in range(120)], [0.5] * 120, [True] * 120)
    (found,) = [i for i in audit.inconclusive if i.check == "ppl_against_meteor"]
    assert (found.count, found.needs, found.hint) == (
        120,
        100,
        "rho is empty: the perplexities or the METEOR values are all equal",
    )
    assert audit.to_dict()["inconclusive"][0] == found.to_dict()


def test_enough_of_everything_leaves_nothing_unjudged_and_probes_only_when_there():
    n = 120
    ppl = [1.01 + k / 100 for k in range(n)]
    meteor = [1 - k / n for k in range(n)]
    audit = audit_submission(ppl, meteor, [True] * n)
    assert audit.inconclusive == () and audit.not_judged == "" and audit.to_dict()["inconclusive"] == []
    probed = audit_submission(ppl, meteor, [True] * n, probed=[(2.0, 3.0)] * 19)
    assert _checks(probed) == [("probe_insensitive", 19, 20)]
    assert "[audit] probe_turns" in probed.inconclusive[0].hint
    assert _checks(audit_submission(ppl, meteor, [True] * n, probed=[(2.0, 3.0)] * 20)) == []


def test_a_not_judged_entry_has_one_stderr_line():
    audits = {"team\x1b": audit_submission([2.0, 3.0], [0.1, 0.2], [True, True])}
    assert list(flagged_lines(audits)) == [
        "audit: team\\x1b: not judged: few_distinct (2 of 20), ppl_against_meteor (2 of 100), "
        "overconfident (0 of 20)"
    ]


def test_average_ranks_are_scipys_on_random_ties():
    """Ranks with runs of ties anywhere (first, last, one long run, none): scipy's ``rankdata``, value for
    value, and floats equal to it bit for bit."""
    import random

    rng = random.Random(3)
    cases = [[], [1.0], [2.0, 2.0], [1.0, 2.0], [5.0] * 7, [3.0, 1.0, 3.0, 2.0], [1.0, 1.0, 2.0, 3.0, 3.0]]
    for _ in range(300):
        pool = [rng.random() for _ in range(rng.randint(1, 6))]
        cases.append([rng.choice(pool) for _ in range(rng.randint(0, 40))])
    for values in cases:
        expected = [float(r) for r in scipy.stats.rankdata(values)] if values else []
        assert average_ranks(values) == expected, values
