"""Meta-evaluation (contract section 8): how well the competition's figures agree with human ratings.

Ratings come at one of three levels, told by the CSV header
(``submission,score`` / ``submission,dialog_id,score`` /
``submission,dialog_id,turn,score``); repeated keys are averaged and only
rated items take part. Turn ratings are lifted to dialogues (mean over the
dialogue's rated turns), and both to systems (mean over the submission's
rated items).

Per level and figure: n, Pearson r, Spearman rho and Kendall tau-b as
``scipy.stats`` computes them, each with a 95% bootstrap interval; at system
level also the pairwise accuracy. Bootstrap: at turn and dialogue level the
items are resampled with replacement (``default_rng(seed).integers(0, n,
(resamples, n))``, the same indices for every figure of the level); at system
level the dialogues are resampled, stratified by type, with the indices of
:mod:`scorer.scoring.significance` (those ``leaderboard`` uses), every figure and the
human system score (unless the CSV is at system level) recomputed on each
resample. The interval is the order statistics ``k // 40`` and
``k - k // 40 - 1`` of the k resampled coefficients that are defined (the
leaderboard's rule, :func:`scorer.scoring.significance.interval_positions`), widened
to hold the point estimate when the resampled values all lie to one side of
it (as happens for coefficients near +-1 on few items).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

from scorer.inputs.contract import DIALOGUE_TYPES
from scorer.inputs.human_ratings import HumanRatings, finite_mean
from scorer.progress import BOOTSTRAP, Progress

from .aggregate import TurnScore, by_dialogue, dialogue_figures
from .competition import combined, mean
from .correlation_result import Correlation
from .leaderboard_result import Leaderboard
from .significance import interval_positions, make_strata, resampled_integrals

FIGURES = {
    "turn": ("meteor", "hidden_metric", "turn_score"),
    "dialog": ("meteor", "hidden_metric", "dialog_score"),
    "system": ("meteor", "hidden_metric", "integral"),
}
BASELINES = ("chrf", "bleu")
MIN_ITEMS = 3
SYSTEMS_STEP = "system-level figures"


def coefficients(x: Sequence[float], y: Sequence[float]) -> tuple[float, float, float]:
    """Pearson r, Spearman rho, Kendall tau-b as scipy.stats computes them (NaN when undefined)."""
    from scipy import stats

    if len(x) < 2:
        return math.nan, math.nan, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (
            float(stats.pearsonr(x, y)[0]),
            float(stats.spearmanr(x, y)[0]),
            float(stats.kendalltau(x, y)[0]),
        )


def resampled_coefficients(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`coefficients` of every row pair of ``x`` and ``y`` (resamples x items) at once, to the last bit
    the same values: scipy's Pearson and Kendall over the rows' axis, and Spearman as scipy computes it
    (NaN for a constant or NaN-holding row, else the correlation matrix of the rows' ranks)."""
    import numpy as np
    from scipy import stats

    rows, n = x.shape
    if n < 2:
        nan = np.full(rows, math.nan)
        return nan, nan.copy(), nan.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pearson = np.asarray(stats.pearsonr(x, y, axis=1)[0], dtype=np.float64)
        kendall = np.asarray(stats.kendalltau(x, y, axis=1)[0], dtype=np.float64)
        undefined = (
            (x == x[:, :1]).all(axis=1)
            | (y == y[:, :1]).all(axis=1)
            | np.isnan(x).any(axis=1)
            | np.isnan(y).any(axis=1)
        )
        x_ranks, y_ranks = stats.rankdata(x, axis=1), stats.rankdata(y, axis=1)
        spearman = np.array(
            [
                math.nan
                if undefined[r]
                else float(np.corrcoef(np.column_stack((x_ranks[r], y_ranks[r])), rowvar=False)[1, 0])
                for r in range(rows)
            ]
        )
    return pearson, spearman, kendall


def pairwise_accuracy(figure: Sequence[float], human: Sequence[float]) -> float | None:
    """Share of pairs with unequal human scores that ``figure`` orders the same way (ties in it count
    wrong)."""
    agree = pairs = 0
    for a in range(len(human)):
        for b in range(a + 1, len(human)):
            if human[a] != human[b]:
                pairs += 1
                agree += (figure[a] - figure[b]) * (human[a] - human[b]) > 0
    return agree / pairs if pairs else None


def interval(samples: Sequence[float], estimate: float) -> tuple[float, float]:
    """The 95% percentile interval of the defined resampled values, widened to hold ``estimate``."""
    values = sorted(v for v in samples if not math.isnan(v))
    if not values or math.isnan(estimate):
        return math.nan, math.nan
    low, high = interval_positions(len(values))
    return min(values[low], estimate), max(values[high], estimate)


# --- levels --------------------------------------------------------------------------------------

Series = dict[str, list[float]]  # figure name -> values, aligned with the items


@dataclass(frozen=True)
class LevelData:
    """Rated items of one level: human scores and every figure, aligned; ``resamples()`` gives every
    bootstrap draw recomputed: (figure -> array, human array), each of shape (resamples, items)."""

    level: str
    human: list[float]
    figures: Series
    resamples: Callable[[], tuple[dict[str, np.ndarray], np.ndarray]]


@dataclass(frozen=True)
class Statistics:
    """The three coefficients of a level: on the items (``point``: Pearson, Spearman, Kendall) and on every
    bootstrap draw at once (``resampled``: three arrays, one value per draw)."""

    point: Callable[[Sequence[float], Sequence[float]], tuple[float, float, float]]
    resampled: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


def correlate(
    levels: Sequence[LevelData], progress: Progress | None = None, statistics: Statistics | None = None
) -> list[Correlation]:
    """Coefficients, intervals and (at system level) pairwise accuracy for every level and figure;
    ``statistics``: the coefficients (by default :data:`CONTRACT_STATISTICS`, contract section 8);
    ``progress`` hears the (level, figure) pairs done."""
    statistics = statistics or CONTRACT_STATISTICS
    rows: list[Correlation] = []
    total = sum(len(data.figures) for data in levels)
    for data in levels:
        drawn_figures, drawn_human = data.resamples()
        for figure, values in data.figures.items():
            if progress:
                progress(BOOTSTRAP, len(rows), total)
            point = statistics.point(values, data.human)
            per_draw = statistics.resampled(drawn_figures[figure], drawn_human)
            bounds = [interval(per_draw[k].tolist(), point[k]) for k in range(3)]
            accuracy = pairwise_accuracy(values, data.human) if data.level == "system" else None
            rows.append(
                Correlation(
                    data.level,
                    figure,
                    len(values),
                    point[0],
                    *bounds[0],
                    point[1],
                    *bounds[1],
                    point[2],
                    *bounds[2],
                    accuracy,
                )
            )
    if progress:
        progress(BOOTSTRAP, total, total)
    return rows


#: Pearson r, Spearman rho and Kendall tau-b, as scipy.stats computes them (contract section 8).
CONTRACT_STATISTICS = Statistics(coefficients, resampled_coefficients)


def item_resamples(n: int, resamples: int, seed: int) -> np.ndarray:  # noqa: F821
    import numpy as np

    return np.random.default_rng(seed).integers(0, n, size=(resamples, n), dtype=np.int64)


def types_in_order(types: Sequence[str]) -> list[str]:
    return [t for t in DIALOGUE_TYPES if t in set(types)]


# --- building the levels from a scored leaderboard -----------------------------------------------


def _sentence_baselines(
    names: Sequence[str], hyps: Sequence[str], refs: Sequence[Sequence[str]]
) -> dict[str, list[float]]:
    import sacrebleu

    functions: dict[str, Callable[..., Any]] = {
        "chrf": sacrebleu.sentence_chrf,
        "bleu": sacrebleu.sentence_bleu,
    }
    return {name: [functions[name](h, list(r)).score for h, r in zip(hyps, refs)] for name in names}


def _corpus_metric(name: str, refs: Sequence[Sequence[str]]) -> Any:
    """sacreBLEU's corpus metric ``name`` with ``refs`` (one list of variants per turn) cached once,
    as sacreBLEU does for comparing many systems on one test set."""
    from sacrebleu.metrics import BLEU, CHRF

    width = max(len(r) for r in refs)
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(width)]
    return {"chrf": CHRF, "bleu": BLEU}[name](references=streams)


# sacreBLEU's corpus scores are functions of summed per-segment statistics. Its public API gives
# BLEU's statistics but not chrF's, so these two functions use the methods its own paired bootstrap
# uses; they are the only calls outside the public API, and tests/test_s8_correlate.py checks them
# against the public ``corpus_score`` for both baselines (sacrebleu is pinned below version 3).
def _corpus_stats(metric: Any, hyps: Sequence[str]) -> list[list[int]]:
    """Per-turn sufficient statistics of ``hyps`` against the metric's cached references."""
    return [list(s) for s in metric._extract_corpus_statistics(list(hyps), None)]


def _score_of_stats(metric: Any, totals: Sequence[int]) -> float:
    """The corpus score of summed statistics (one column sum per statistic)."""
    return float(metric._compute_score_from_stats(list(map(int, totals))).score)


class _Figures:
    """The scored leaderboard's turns and dialogues by entry, and the sentence baselines (computed once)."""

    def __init__(
        self, board: Leaderboard, references: Mapping[str, list[list[str]]], baselines: Sequence[str]
    ):
        self.entries = {e.name: e for e in board.entries if e.result is not None}
        self.turns_of = {
            name: {(t.dialog_id, t.turn): t for t in e.scored().turns} for name, e in self.entries.items()
        }
        self.dialogs_of: dict[str, dict[str, list[TurnScore]]] = {
            name: by_dialogue(e.scored().turns) for name, e in self.entries.items()
        }
        self.references, self.baselines = references, tuple(baselines)
        self._sentence: dict[tuple[Any, ...], dict[str, float]] = {}

    def baseline_of(self, name: str, dialog_id: str, turn: int) -> dict[str, float]:
        """The sentence-level baselines of one turn of one entry."""
        key = (name, dialog_id, turn)
        if key not in self._sentence and self.baselines:
            t = self.turns_of[name][(dialog_id, turn)]
            values = _sentence_baselines(self.baselines, [t.answer], [self.references[dialog_id][turn]])
            self._sentence[key] = {b: values[b][0] for b in self.baselines}
        return self._sentence.get(key, {})


def _item_draws(
    figures: Series, human_values: list[float], resamples: int, seed: int
) -> Callable[[], tuple[dict[str, np.ndarray], np.ndarray]]:
    """The bootstrap draws of a turn- or dialogue-level: the items resampled with replacement."""

    def make() -> tuple[dict[str, np.ndarray], np.ndarray]:
        import numpy as np

        idx = item_resamples(len(human_values), resamples, seed)
        return (
            {f: np.asarray(v, dtype=np.float64)[idx] for f, v in figures.items()},
            np.asarray(human_values, dtype=np.float64)[idx],
        )

    return make


def _turn_level(data: _Figures, human: HumanRatings, resamples: int, seed: int) -> LevelData:
    keys = sorted(k for k in human.scores if k[0] in data.entries)
    figures: Series = {f: [] for f in FIGURES["turn"] + data.baselines}
    for name, dialog_id, turn in keys:
        t = data.turns_of[name][(dialog_id, turn)]
        figures["meteor"].append(t.meteor)
        figures["hidden_metric"].append(t.hidden_metric)
        figures["turn_score"].append(combined(t.meteor, t.hidden_metric))
        for b, v in data.baseline_of(name, dialog_id, turn).items():
            figures[b].append(v)
    hv = [human.scores[k] for k in keys]
    return LevelData("turn", hv, figures, _item_draws(figures, hv, resamples, seed))


def _dialog_level(data: _Figures, human: HumanRatings, resamples: int, seed: int) -> LevelData:
    lifted: dict[tuple[Any, ...], list[float]] = {}
    for key, value in human.scores.items():
        if key[0] in data.entries:
            lifted.setdefault(key[:2], []).append(value)
    keys = sorted(lifted)
    figures: Series = {f: [] for f in FIGURES["dialog"] + data.baselines}
    for name, dialog_id in keys:
        ts = data.dialogs_of[name][dialog_id]
        dialogue = dialogue_figures(ts)
        figures["meteor"].append(dialogue.meteor)
        figures["hidden_metric"].append(dialogue.hidden_metric)
        figures["dialog_score"].append(dialogue.score)
        for b in data.baselines:
            figures[b].append(mean([data.baseline_of(name, dialog_id, t.turn)[b] for t in ts]))
    hv = [finite_mean(lifted[k]) for k in keys]
    return LevelData("dialog", hv, figures, _item_draws(figures, hv, resamples, seed))


def _system_level(
    data: _Figures,
    human: HumanRatings,
    resamples: int,
    seed: int,
    weights: Mapping[str, float],
    progress: Progress | None,
) -> LevelData | None:
    """Every figure per rated system, and its draws: the dialogues resampled by type (as the leaderboard
    does), each figure and the human score recomputed on every resample."""
    import numpy as np

    entries, dialogs_of, baselines, references = (
        data.entries,
        data.dialogs_of,
        data.baselines,
        data.references,
    )
    names = sorted(n for n in entries if any(k[0] == n for k in human.scores))
    first = entries[names[0]].result if names else None
    if first is None:
        return None
    types = types_in_order([t.type for t in first.turns])
    order = {t: [d for d in dict.fromkeys(x.dialog_id for x in first.turns if x.type == t)] for t in types}
    strata = make_strata({t: len(order[t]) for t in types}, weights, resamples, seed)
    figures: Series = {f: [] for f in FIGURES["system"] + baselines}
    drawn: dict[str, list[np.ndarray]] = {f: [] for f in figures}
    human_fixed = human.level == "system"
    hv: list[float] = []
    h_drawn: list[np.ndarray] = []
    turn_order = [(x.dialog_id, x.turn) for t in types for d in order[t] for x in dialogs_of[names[0]][d]]
    metrics = {b: _corpus_metric(b, [references[d][k] for d, k in turn_order]) for b in baselines}
    for done, name in enumerate(names):
        if progress:
            progress(SYSTEMS_STEP, done, len(names))
        summary = entries[name].scored().summary
        figures["meteor"].append(summary.meteor)
        figures["hidden_metric"].append(summary.hidden_metric)
        figures["integral"].append(summary.integral)
        per_dialog = {t: [dialogs_of[name][d] for d in order[t]] for t in types}
        dialogues = {t: [dialogue_figures(ts) for ts in per_dialog[t]] for t in types}
        for f, attribute in (("meteor", "meteor"), ("hidden_metric", "hidden_metric"), ("integral", "score")):
            drawn[f].append(
                resampled_integrals(strata, {t: [getattr(d, attribute) for d in dialogues[t]] for t in types})
            )
        for b in baselines:
            metric = metrics[b]
            all_turns = [x for t in types for ts in per_dialog[t] for x in ts]
            if [(x.dialog_id, x.turn) for x in all_turns] != turn_order:
                raise ValueError(
                    f"{name}: its turns are not in the test set's order (validated submissions are)"
                )
            stats = _corpus_stats(metric, [x.answer for x in all_turns])
            figures[b].append(_score_of_stats(metric, [sum(col) for col in zip(*stats)]))
            by_turn = {(x.dialog_id, x.turn): s for x, s in zip(all_turns, stats)}
            dstats = {
                t: np.asarray(
                    [
                        [sum(col) for col in zip(*(by_turn[(x.dialog_id, x.turn)] for x in ts))]
                        for ts in per_dialog[t]
                    ]
                )
                for t in types
            }
            total = sum(dstats[t][strata.indices[t]].sum(axis=1) for t in types)
            drawn[b].append(np.asarray([_score_of_stats(metric, row) for row in total]))
        if human_fixed:
            hv.append(human.scores[(name,)])
            h_drawn.append(np.full(resamples, hv[-1]))
        else:
            rated = {k: v for k, v in human.scores.items() if k[0] == name}
            hv.append(finite_mean(list(rated.values())))
            # sums of ratings scaled by a power of two (exact), so that ratings near the largest double
            # cannot overflow; the means are scaled back
            shift = -math.frexp(max(abs(v) for v in rated.values()))[1]
            sums = {
                t: np.asarray(
                    [sum(math.ldexp(v, shift) for k, v in rated.items() if k[1] == d) for d in order[t]]
                )
                for t in types
            }
            counts = {t: np.asarray([sum(1 for k in rated if k[1] == d) for d in order[t]]) for t in types}
            num = sum(sums[t][strata.indices[t]].sum(axis=1) for t in types)
            den = sum(counts[t][strata.indices[t]].sum(axis=1) for t in types)
            with np.errstate(invalid="ignore", divide="ignore"):
                h_drawn.append(np.ldexp(num / den, -shift))
    if progress:
        progress(SYSTEMS_STEP, len(names), len(names))

    def system_draws() -> tuple[dict[str, np.ndarray], np.ndarray]:
        return (
            {f: np.column_stack(arrays).astype(np.float64) for f, arrays in drawn.items()},
            np.column_stack(h_drawn).astype(np.float64),
        )

    return LevelData("system", hv, figures, system_draws)


def build_levels(
    board: Leaderboard,
    references: Mapping[str, list[list[str]]],
    human: HumanRatings,
    baselines: Sequence[str],
    resamples: int,
    seed: int,
    weights: Mapping[str, float],
    progress: Progress | None = None,
) -> tuple[list[LevelData], list[str]]:
    """The levels contract section 8 asks for, from the leaderboard's scored entries; and the warnings.

    Turn ratings give all three levels, dialogue ratings the dialogue and system levels, system ratings the
    system level. ``progress`` hears the systems whose system-level figures are computed."""
    data = _Figures(board, references, baselines)
    levels: list[LevelData] = []
    warnings_: list[str] = []
    if human.level == "turn":
        levels.append(_turn_level(data, human, resamples, seed))
    if human.level in ("turn", "dialog"):
        levels.append(_dialog_level(data, human, resamples, seed))
    system = _system_level(data, human, resamples, seed, weights, progress)
    if system is not None:
        levels.append(system)
    kept = []
    for level in levels:
        if len(level.human) < MIN_ITEMS:
            warnings_.append(
                f"{level.level} level left out: {len(level.human)} rated item(s), at least {MIN_ITEMS} "
                "are needed"
            )
        else:
            kept.append(level)
    return kept, warnings_
