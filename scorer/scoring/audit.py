"""The perplexity audit (contract section 9): figures and flags that tell an organizer when a submission's
self-reported perplexities cannot be true. An audit never changes a score or a rank.

Per submission (:func:`audit_submission`): ``at_one`` (the share of turns whose perplexity is exactly 1),
``distinct`` (how many distinct values), ``rho`` (Spearman's rho between ln perplexity and METEOR over the
turns whose answer has a token, with a 95% interval by Fisher's z and the Bonett-Wright standard error),
``confident_turns`` and ``overconfident_share`` (the turns whose perplexity claims near-certainty, and the
share of them with a low METEOR); given the organizer's recomputed perplexities, ``checked``, ``within`` and
``median_log_difference``; given the probe perplexities of ``ppl_probes.json`` (each probe turn's target
with its words shuffled, contract section 10), ``probes`` and ``probe_higher`` (the share of probes whose
perplexity is above the turn's own) with its 95% Wilson score interval. Across a leaderboard's entries
(:func:`audit_board`): ``same_ppl_as`` and ``low_outlier``.

Everything here is plain Python (no numpy or scipy import, which would cost a warm run more than the audit
itself): Spearman's rho is the Pearson correlation of average ranks, as ``scipy.stats.spearmanr`` computes
it (the tests check the two agree).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import compress
from typing import TYPE_CHECKING, Any

from scorer.inputs.config import AuditSettings
from scorer.safe_text import bounded_line, shown, shown_name

if TYPE_CHECKING:
    import pandas as pd

#: Below this many turns with a token, rho is left empty; from this many on, ``ppl_against_meteor`` may be
#: raised.
MIN_RHO_TURNS, MIN_RHO_FLAG_TURNS = 10, 100
#: From this many turns on, ``few_distinct`` compares ``distinct`` with ``min_distinct_share`` of them.
MIN_DISTINCT_TURNS = 20
#: At least this many scored entries for ``low_outlier``; the MAD's scale to a normal's standard deviation.
MIN_OUTLIER_ENTRIES, MAD_SCALE = 5, 1.4826
#: ``overconfident`` needs at least this many turns at most ``confident_ppl``.
MIN_CONFIDENT_TURNS = 20
#: ``probe_insensitive`` needs at least this many probes, and the interval's lower bound at most chance.
MIN_PROBES, CHANCE = 20, 0.5
Z_95 = statistics.NormalDist().inv_cdf(0.975)


@dataclass(frozen=True)
class Flag:
    """A finding an organizer should look at: its name (``ppl_at_one``, ...) and a sentence to act on."""

    flag: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"flag": self.flag, "message": self.message}


@dataclass(frozen=True)
class Inconclusive:
    """A check that applies but had too little to judge (contract section 9): not a pass. ``count`` of the
    ``needs`` it takes (turns, confident turns or probes), and a ``hint`` naming what would let it judge (a
    key or more turns, never a private value)."""

    check: str
    count: int
    needs: int
    hint: str

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "count": self.count, "needs": self.needs, "hint": self.hint}

    def __str__(self) -> str:
        return f"{self.check} ({self.count:,} of {self.needs:,})"


@dataclass(frozen=True)
class Audit:
    """One submission's audit: its figures (``None`` where a figure is empty) and its flags."""

    turns: int
    at_one: float
    distinct: int
    rho: float | None
    rho_low: float | None
    rho_high: float | None
    rho_turns: int
    checked: int | None = None
    within: float | None = None
    median_log_difference: float | None = None
    median_log_ppl: float | None = None
    confident_turns: int = 0
    overconfident_share: float | None = None
    probes: int | None = None
    probe_higher: float | None = None
    probe_higher_low: float | None = None
    probe_higher_high: float | None = None
    flags: tuple[Flag, ...] = ()
    same_ppl_as: tuple[str, ...] = field(default=())
    #: The checks that apply but had too little to judge (not a pass).
    inconclusive: tuple[Inconclusive, ...] = ()

    def figures(self) -> dict[str, Any]:
        """The figures as ``audit.json`` writes them."""
        found: dict[str, Any] = {
            "turns": self.turns,
            "at_one": self.at_one,
            "distinct": self.distinct,
            "rho": self.rho,
            "rho_low": self.rho_low,
            "rho_high": self.rho_high,
            "rho_turns": self.rho_turns,
            "median_log_ppl": self.median_log_ppl,
            "confident_turns": self.confident_turns,
            "overconfident_share": self.overconfident_share,
        }
        if self.checked is not None:
            found.update(
                checked=self.checked, within=self.within, median_log_difference=self.median_log_difference
            )
        if self.probes is not None:
            found.update(
                probes=self.probes,
                probe_higher=self.probe_higher,
                probe_higher_low=self.probe_higher_low,
                probe_higher_high=self.probe_higher_high,
            )
        if self.same_ppl_as:
            found["same_ppl_as"] = list(self.same_ppl_as)
        return found

    @property
    def flag_names(self) -> list[str]:
        return [f.flag for f in self.flags]

    def to_dict(self) -> dict[str, Any]:
        return {
            "figures": self.figures(),
            "flags": [f.to_dict() for f in self.flags],
            "inconclusive": [i.to_dict() for i in self.inconclusive],
        }

    @property
    def not_judged(self) -> str:
        """``not judged: CHECK (COUNT of NEEDS), ...`` for the pages and stderr; empty when every check that
        applies was judged."""
        return f"not judged: {', '.join(map(str, self.inconclusive))}" if self.inconclusive else ""


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks of ``values``, ties given the mean of the ranks they span (``scipy.stats.rankdata``).

    In sorted order a value's rank is its position + 1; only the runs of equal values are visited."""
    n = len(values)
    order = sorted(range(n), key=values.__getitem__)
    ordered = [values[i] for i in order]
    by_position = [float(k) for k in range(1, n + 1)]
    start = stop = -1  # the run of equal values being gathered: positions start .. stop - 1
    for k in [k for k in range(1, n) if ordered[k] == ordered[k - 1]]:
        if k != stop:  # a new run, from the value before k
            _tie(by_position, start, stop)
            start = k - 1
        stop = k + 1
    _tie(by_position, start, stop)
    ranks = [0.0] * n
    for position, i in enumerate(order):
        ranks[i] = by_position[position]
    return ranks


def _tie(by_position: list[float], start: int, stop: int) -> None:
    """Positions ``start`` to ``stop - 1`` given the mean of ranks ``start + 1`` to ``stop`` (none when
    ``start`` is -1)."""
    if start >= 0:
        by_position[start:stop] = [(start + stop + 1) / 2] * (stop - start)


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho of ``x`` and ``y`` (the Pearson correlation of their average ranks); None when either
    side is constant or there are fewer than 2 pairs."""
    if len(x) < 2:
        return None
    rx, ry = average_ranks(x), average_ranks(y)
    mean = (len(x) + 1) / 2
    sxy = sxx = syy = 0.0
    for a, b in zip(rx, ry):
        sxy += (a - mean) * (b - mean)
        sxx += (a - mean) ** 2
        syy += (b - mean) ** 2
    if sxx == 0 or syy == 0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def fisher_interval(rho: float, n: int) -> tuple[float, float]:
    """The 95% interval of Spearman's rho by Fisher's z with the Bonett-Wright standard error
    sqrt((1 + rho^2 / 2) / (n - 3)); ``n`` > 3."""
    if abs(rho) >= 1.0:
        return rho, rho
    se = math.sqrt((1 + rho * rho / 2) / (n - 3))
    z = math.atanh(rho)
    return math.tanh(z - Z_95 * se), math.tanh(z + Z_95 * se)


def wilson_interval(k: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of the share ``k`` / ``n`` (``n`` >= 1): (p + z^2/2n +- z sqrt(p(1 - p)/n
    + z^2/4n^2)) / (1 + z^2/n); exactly 0 below for ``k`` = 0 and 1 above for ``k`` = ``n``, as the formula
    gives them without rounding."""
    p, z2 = k / n, Z_95 * Z_95
    scale = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / scale
    half = Z_95 / scale * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


def _count(n: int, what: str, plural: str = "") -> str:
    return f"{n:,} {what if n == 1 else plural or what + 's'}"


def audit_submission(
    ppl: Sequence[float],
    meteor: Sequence[float],
    has_tokens: Sequence[bool],
    settings: AuditSettings = AuditSettings(),
    checked: Sequence[tuple[float, float]] | None = None,
    probed: Sequence[tuple[float, float]] | None = None,
) -> Audit:
    """The audit of one submission's turns: each turn's reported perplexity, METEOR and whether its answer has
    a token; ``checked``, when the organizer recomputed some turns, the (reported, recomputed) pairs;
    ``probed``, when ``run`` probed some turns, the (own, probe) perplexity pairs."""
    n = len(ppl)
    ones = ppl.count(1.0)  # each compared as p == 1.0
    distinct = len(set(ppl))
    logs = list(map(math.log, ppl))
    xs, ys = list(compress(logs, has_tokens)), list(compress(meteor, has_tokens))  # the turns with a token
    rho = spearman(xs, ys) if len(xs) >= MIN_RHO_TURNS else None
    low = high = None
    if rho is not None:
        low, high = fisher_interval(rho, len(xs))
    flags: list[Flag] = []
    at_one = ones / n if n else 0.0
    if n and at_one > settings.max_share_at_one:
        flags.append(
            Flag(
                "ppl_at_one",
                f"{ones:,} of {_count(n, 'turn')} report perplexity exactly 1: a model "
                "gives every token probability 1 almost never; check the perplexity code",
            )
        )
    if (n >= MIN_DISTINCT_TURNS and distinct < settings.min_distinct_share * n) or (distinct == 1 and n >= 2):
        flags.append(
            Flag(
                "few_distinct",
                f"{_count(n, 'turn')} report only "
                f"{_count(distinct, 'distinct perplexity', 'distinct perplexities')}"
                f"{'' if distinct > 1 else f' ({ppl[0]!r})'}: a constant, rounded or "
                "placeholder value rather than the model's",
            )
        )
    if rho is not None and low is not None and len(xs) >= MIN_RHO_FLAG_TURNS and low > 0:
        flags.append(
            Flag(
                "ppl_against_meteor",
                f"perplexity rises with METEOR (Spearman rho {rho:.3f}, 95% interval "
                f"[{low:.3f}, {high:.3f}] over {_count(len(xs), 'turn')}): a model "
                "usually finds likelier the answers closest to the references; "
                "the values may be inverted, shuffled or another model's",
            )
        )
    confident_ppl, confident_meteor = settings.confident_ppl, settings.confident_meteor
    confident = [m for p, m in zip(ppl, meteor) if p <= confident_ppl]
    unfounded = sum(1 for m in confident if m < confident_meteor)
    overconfident = unfounded / len(confident) if confident else None
    if (
        overconfident is not None
        and len(confident) >= MIN_CONFIDENT_TURNS
        and overconfident > settings.max_share_overconfident
    ):
        flags.append(
            Flag(
                "overconfident",
                f"{unfounded:,} of {_count(len(confident), 'turn')} whose perplexity is near 1 (the model "
                "all but certain of the target answer) have a low METEOR: the numbers claim a certainty "
                "the answers do not show; values just above 1 without a model, or perplexities scaled down",
            )
        )
    inconclusive = _inconclusive(n, distinct, len(xs), rho, len(confident))
    audit = Audit(
        n,
        at_one,
        distinct,
        rho,
        low,
        high,
        len(xs),
        median_log_ppl=statistics.median(logs) if logs else None,
        confident_turns=len(confident),
        overconfident_share=overconfident,
    )
    if checked is not None:
        differences = [abs(math.log(a) - math.log(b)) for a, b in checked]
        within = (
            sum(1 for d in differences if d <= settings.check_tolerance) / len(differences)
            if differences
            else None
        )
        median = statistics.median(differences) if differences else None
        audit = replace(audit, checked=len(differences), within=within, median_log_difference=median)
        if within is not None and within < settings.min_share_within:
            agree = sum(1 for d in differences if d <= settings.check_tolerance)
            flags.append(
                Flag(
                    "check_mismatch",
                    f"the organizer's recomputed perplexities agree with the reported "
                    f"ones on {agree:,} of {_count(len(differences), 'checked turn')} "
                    f"(median |ln difference| {median:.4f}): the reported values are "
                    "not this model's",
                )
            )
    if probed is not None:
        audit, flag = _probe_figures(audit, probed)
        if flag is not None:
            flags.append(flag)
        if len(probed) < MIN_PROBES:
            inconclusive.append(
                Inconclusive(
                    "probe_insensitive",
                    len(probed),
                    MIN_PROBES,
                    "more probes: run probes up to [audit] probe_turns turns whose target has at least "
                    "[audit] probe_min_words words",
                )
            )
    return replace(audit, flags=tuple(flags), inconclusive=tuple(inconclusive))


def _inconclusive(
    n: int, distinct: int, rho_turns: int, rho: float | None, confident: int
) -> list[Inconclusive]:
    """The per-submission checks that apply but had too little to judge (contract section 9):
    ``few_distinct`` below 20 turns (but a single value, which is judged), ``ppl_against_meteor`` below 100
    turns with a token or with rho empty, ``overconfident`` below 20 confident turns."""
    found = []
    if n < MIN_DISTINCT_TURNS and distinct > 1:
        found.append(Inconclusive("few_distinct", n, MIN_DISTINCT_TURNS, "more turns"))
    if rho_turns < MIN_RHO_FLAG_TURNS or rho is None:
        hint = (
            "more turns whose answer has a word"
            if rho_turns < MIN_RHO_FLAG_TURNS
            else "rho is empty: the perplexities or the METEOR values are all equal"
        )
        found.append(Inconclusive("ppl_against_meteor", rho_turns, MIN_RHO_FLAG_TURNS, hint))
    if confident < MIN_CONFIDENT_TURNS:
        found.append(
            Inconclusive(
                "overconfident",
                confident,
                MIN_CONFIDENT_TURNS,
                "more turns whose perplexity is at most [audit] confident_ppl",
            )
        )
    return found


def _probe_figures(audit: Audit, probed: Sequence[tuple[float, float]]) -> tuple[Audit, Flag | None]:
    """``audit`` with the probes' figures (``probed``: each probe turn's own and probe perplexity; a tie is
    not higher), and the ``probe_insensitive`` flag when they are no better than chance."""
    higher = sum(1 for own, probe in probed if probe > own)
    n = len(probed)
    if not n:
        return replace(audit, probes=0), None
    low, high = wilson_interval(higher, n)
    audit = replace(audit, probes=n, probe_higher=higher / n, probe_higher_low=low, probe_higher_high=high)
    if n < MIN_PROBES or low > CHANCE:
        return audit, None
    return audit, Flag(
        "probe_insensitive",
        f"with the target's words shuffled, the perplexity is higher than the turn's own on {higher:,} of "
        f"{_count(n, 'probe')} ({higher / n:.3f}, 95% interval [{low:.3f}, {high:.3f}]): no better than "
        "chance; a language model finds words out of order less likely, a get_ppl without one "
        "(a constant, the text's length, a hash) cannot tell the two apart",
    )


def audit_board(
    entries: Mapping[str, tuple[Audit, Sequence[float]]], settings: AuditSettings = AuditSettings()
) -> dict[str, Audit]:
    """The audits of a leaderboard's scored entries (name -> (its own audit, its perplexities in turn order)),
    with the flags found across entries added: ``same_ppl_as`` (at least 2 entries) and ``low_outlier`` (at
    least 5)."""
    found = dict(entries)
    audits = {name: audit for name, (audit, _) in entries.items()}
    names = sorted(found)
    if len(names) >= 2:
        same: dict[str, list[str]] = {name: [] for name in names}
        for k, a in enumerate(names):
            for b in names[k + 1 :]:
                pa, pb = found[a][1], found[b][1]
                if pa and len(pa) == len(pb):
                    equal = sum(1 for x, y in zip(pa, pb) if x == y)
                    if equal >= settings.same_share * len(pa):
                        same[a].append(b)
                        same[b].append(a)
        for name, others in same.items():
            if others:
                audit = audits[name]
                flag = Flag(
                    "same_ppl_as",
                    f"its perplexities equal those of {', '.join(others)} on nearly every "
                    "turn: the same model scored twice, or values copied from another entry",
                )
                audits[name] = replace(audit, same_ppl_as=tuple(others), flags=audit.flags + (flag,))
    medians = {name: a.median_log_ppl for name, a in audits.items() if a.median_log_ppl is not None}
    if len(medians) >= MIN_OUTLIER_ENTRIES:
        centre = statistics.median(medians.values())
        mad = statistics.median(abs(m - centre) for m in medians.values()) * MAD_SCALE
        if mad > 0:
            for name in sorted(medians):
                distance = (centre - medians[name]) / mad
                if distance > settings.outlier_mads:
                    audit = audits[name]
                    flag = Flag(
                        "low_outlier",
                        f"its median perplexity ({math.exp(medians[name]):.3g}) lies "
                        f"{distance:.1f} scaled MADs below the entries' median "
                        f"({math.exp(centre):.3g}): far likelier answers than every other "
                        "model gives; check how it was computed",
                    )
                    audits[name] = replace(audit, flags=audit.flags + (flag,))
    return audits


def audit_payload(audits: Mapping[str, Audit], private: bool) -> dict[str, Any]:
    """``audit.json``: every audited submission by name, in name order, and whether the thresholds are the
    default's (``"default"``) or the organizer's own (``"private"``, never shown)."""
    return {
        "submissions": {name: audits[name].to_dict() for name in sorted(audits)},
        "settings": "private" if private else "default",
    }


def flagged_lines(audits: Mapping[str, Audit], not_judged: bool = True) -> Iterable[str]:
    """One line per flagged submission, for stderr, then (with ``not_judged``) one per submission with a
    check not judged (``audit: NAME: not judged: CHECK (COUNT of NEEDS), ...``): every name in it, the
    entry's own and those its flags name (``same_ppl_as``), escaped and cut
    (:func:`scorer.safe_text.shown_name`), so that no name starts a line of its own or makes the line longer
    than :data:`~scorer.safe_text.LINE_LIMIT`."""
    for name in sorted(audits):
        audit = audits[name]
        if audit.flags:
            findings = "; ".join(f"{f.flag}: {f.message}" for f in audit.flags)
            for other in sorted(audit.same_ppl_as, key=len, reverse=True):
                findings = findings.replace(other, shown_name(other))
            yield bounded_line(f"audit: {shown_name(name)}: {shown(findings)}")
    for name in sorted(audits) if not_judged else ():
        if audits[name].inconclusive:
            yield bounded_line(f"audit: {shown_name(name)}: {audits[name].not_judged}")


def sample_counts(turns_by_type: Mapping[str, int], n: int) -> dict[str, int]:
    """``n`` turns allotted to the types in proportion to their turns (largest remainders, ties in the
    given order), never more than a type has."""
    total = sum(turns_by_type.values())
    n = min(n, total)
    if not total:
        return {t: 0 for t in turns_by_type}
    exact = {t: n * c / total for t, c in turns_by_type.items()}
    counts = {t: int(v) for t, v in exact.items()}
    order = sorted(turns_by_type, key=lambda t: -(exact[t] - counts[t]))
    for t in order[: n - sum(counts.values())]:
        counts[t] += 1
    return counts


def validate_warnings(ppl: Iterable[float]) -> str | None:
    """The warning ``validate`` gives when every perplexity is 1 or all are equal (nearly always a bug in the
    participant's perplexity function), else None."""
    values = list(ppl)
    if len(values) < 2:
        return None
    if all(p == 1.0 for p in values):
        return (
            f"every one of the {len(values):,} perplexities is exactly 1: a model gives every token "
            "probability 1 almost never; check the perplexity function"
        )
    if len(set(values)) == 1:
        return (
            f"all {len(values):,} perplexities are equal ({values[0]!r}): a constant is nearly always a "
            "bug in "
            "the perplexity function"
        )
    return None


#: The columns of :func:`audit_frame`, in order.
AUDIT_COLUMNS = (
    "submission",
    "turns",
    "at_one",
    "distinct",
    "rho",
    "rho_low",
    "rho_high",
    "rho_turns",
    "median_log_ppl",
    "confident_turns",
    "overconfident_share",
    "checked",
    "within",
    "median_log_difference",
    "probes",
    "probe_higher",
    "probe_higher_low",
    "probe_higher_high",
    "flags",
)


def audit_frame(audits: Mapping[str, Audit]) -> pd.DataFrame:
    """One row per audited submission (pandas, imported here): :data:`AUDIT_COLUMNS`, floats NaN where a
    figure is empty, ``flags`` the flag names joined by ``;``."""
    import pandas as pd

    rows = [
        {"submission": name, **audits[name].figures(), "flags": ";".join(audits[name].flag_names)}
        for name in sorted(audits)
    ]
    frame = pd.DataFrame(rows, columns=list(AUDIT_COLUMNS))
    numbers = [c for c in AUDIT_COLUMNS if c not in ("submission", "flags")]
    frame[numbers] = frame[numbers].astype("float64")
    return frame.astype({"submission": "string", "flags": "string"})
