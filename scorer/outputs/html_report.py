"""``report.html``: a self-contained page a person opens (charts drawn by matplotlib, inlined as SVG).

For one submission: the per-type table and dots, the per-turn METEOR and
hidden-metric distributions, and its lowest-scoring turns with the words
coloured by the stage that matched them. For a leaderboard: the table (with
every invalid entry's first errors), the ranked integrals with their 95%
intervals, and the per-type scores on zoomed axes. No external file,
script or font is referenced; the SVG carries no date, so equal inputs give
an equal page.
"""

from __future__ import annotations

import atexit
import html
import io
import math
import os
import shutil
import sys
import tempfile
import types
import urllib.parse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scorer.errors import IssuesError
from scorer.inputs.contract import SHORT_TYPES
from scorer.metric.stages import REGISTRY, stages_line
from scorer.safe_text import shown
from scorer.stop import STOP

if TYPE_CHECKING:
    from scorer.scoring.aggregate import Summary
    from scorer.scoring.correlation_result import Meta
    from scorer.scoring.explain import ExplainedTurn
    from scorer.scoring.leaderboard_result import Leaderboard, Standing
    from scorer.scoring.result import ScoreResult

_STYLE = """body{font-family:sans-serif;margin:2em;color:#222}p,h2,.turn,.tokens{max-width:72em}
.scroll{overflow-x:auto}table{border-collapse:collapse;margin:1em 0}table.board{width:100%}
td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right;white-space:nowrap}
td.wrap,td.name{white-space:normal;overflow-wrap:break-word;text-align:left}td.name{min-width:8em;max-width:24em}
table.board th{white-space:normal}
td:first-child,th:first-child,td.name,th.name{text-align:left}
tr.total td{font-weight:bold;border-top:2px solid #888}
.sig{font-family:monospace;font-size:.85em}.sig span{white-space:nowrap}.invalid{color:#a00}
.invalid ul{margin:.2em 0;padding-left:1.2em}
figure{margin:1em 0}figure svg{max-width:100%;height:auto}
.turn{border:1px solid #ddd;border-radius:4px;padding:.5em .8em;margin:.8em 0}
.turn h3{font-size:1em;margin:.2em 0 .5em}.turn .raw{color:#666;font-size:.9em;margin:.2em 0 .4em}
.tokens{line-height:2}
.tokens th{width:7em;vertical-align:top;border:none;text-align:left;font-weight:normal;color:#555}
.tokens td{text-align:left;border:none}
.tok{padding:.1em .25em;margin:0 .1em;border-radius:3px;white-space:nowrap}
.none{color:#777}
.legend .tok{margin-right:.6em}
a.flag{color:#a00;font-size:.85em;text-decoration:none;white-space:nowrap}
.private{border:2px solid #a00;background:#fdecea;color:#700;padding:.6em 1em;max-width:72em}"""


def _stage_title(stage: str | None) -> str:
    return REGISTRY[stage].title if stage is not None else "not matched"


def _stage_css() -> str:
    """Each registered stage's colour for its links (``.tok.<stage>``)."""
    return "".join(f".{name}{{{stage.css}}}\n" for name, stage in REGISTRY.items())


def _pyplot() -> Any:
    _private_matplotlib_dirs()
    if "matplotlib.ft2font" not in sys.modules:
        # SIGINT and SIGTERM held back while matplotlib is first imported, and delivered once it is: the
        # initialisation of its compiled ft2font, cut short by a stop (an exception raised in the Python
        # code it calls), leaves Python objects in a C++ table of its own, which the C library's exit then
        # frees after the interpreter has ended: a fatal error (-6) instead of 130 or 143
        with STOP.deferred():
            import matplotlib.ft2font  # noqa: F401 - imports matplotlib with it
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "dialogue-scorer"
    # every label is plain text: a name like "$\\frac{a$" is drawn as written, never parsed as math
    # (contract section 3)
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    _fonts_from_memory()
    return plt


#: Each font file matplotlib has drawn with, as the bytes read the first time it was needed.
_FONT_BYTES: dict[str, bytes] = {}


def _fonts_from_memory() -> None:
    """Make matplotlib draw with fonts held in memory: each font file is read whole the first time it is
    needed and every later glyph comes from those bytes, never again from the file (through a path or a
    descriptor held open). The scoring step of a code competition draws its page after the team's code ran
    and could have rewritten the files (contract section 10, "the reads"); its rehearsal before the code
    starts reads every font the page needs. The same bytes give the same drawing, so pages do not change."""
    from matplotlib import font_manager, ft2font

    # font_manager makes each font through its module attribute ``ft2font`` (matplotlib 3.10 and 3.11)
    if isinstance(getattr(font_manager, "ft2font", None), _InMemoryFt2font):
        return
    setattr(font_manager, "ft2font", _InMemoryFt2font(ft2font))  # noqa: B010 - not an exported attribute


class _InMemoryFt2font(types.ModuleType):
    """matplotlib's ``ft2font`` module as ``font_manager`` sees it, whose ``FT2Font`` reads a font's file
    once and then works from its bytes."""

    def __init__(self, module: types.ModuleType) -> None:
        super().__init__(module.__name__)
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def FT2Font(self, source: Any, *args: Any, **keywords: Any) -> Any:  # noqa: N802 - matplotlib's name
        if isinstance(source, (str, bytes, os.PathLike)):
            path = os.fsdecode(source)
            if path not in _FONT_BYTES:
                with open(path, "rb") as fh:
                    _FONT_BYTES[path] = fh.read()
            source = io.BytesIO(_FONT_BYTES[path])
        return self._module.FT2Font(source, *args, **keywords)


def load_charts() -> None:
    """Load what drawing the charts needs now (matplotlib and its fonts), before anything else may run."""
    _pyplot()


def _private_matplotlib_dirs() -> None:
    """Matplotlib writes its configuration and font cache under ``$MPLCONFIGDIR`` (else ``$HOME``): unless
    the caller chose a place, it gets a private temporary directory, removed when the process ends, so
    drawing a report writes nothing outside the output directory."""
    if "matplotlib" in sys.modules or os.environ.get("MPLCONFIGDIR"):
        return
    folder = tempfile.mkdtemp(prefix="scorer-matplotlib-")
    atexit.register(shutil.rmtree, folder, True)
    os.environ["MPLCONFIGDIR"] = folder


def _svg(fig: Any) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_STYLE}{_stage_css()}</style></head><body>\n<h1>{html.escape(title)}</h1>\n{body}\n"
        "</body></html>\n"
    )


def _stages(stages: tuple[str, ...]) -> str:
    return f"<p>Matching stages: {html.escape(stages_line(stages))}</p>"


def _metric_settings(signature: str) -> str:
    """What the page says of METEOR's settings in force, read from the run's signature (whose fields are
    public): alpha, and the fragmentation penalty, off with gamma 0 (contract section 4)."""
    fields = dict(field.split(":", 1) for field in signature.split("|") if ":" in field)
    if "alpha" not in fields or "gamma" not in fields:
        return ""
    gamma = float(fields["gamma"])
    penalty = "off (gamma 0)" if gamma == 0 else f"gamma {gamma:g}, beta {float(fields.get('beta', 'nan')):g}"
    return f"<p>METEOR settings: alpha {float(fields['alpha']):g}; fragmentation penalty {penalty}</p>"


def _signature(signature: str) -> str:
    """The signature in small type, allowed to wrap after each ``|``."""
    fields = "|<wbr>".join(f"<span>{html.escape(field)}</span>" for field in signature.split("|"))
    return f'<p class="sig">{fields}</p>'


def _type_dots(by_type: dict[str, Any]) -> str:
    """METEOR, hidden metric and S_j per type as dots on one row per type; the legend below the axes."""
    plt = _pyplot()
    names = list(by_type)[::-1]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(names) + 1.0))
    # each figure a little above or below its row, so that equal values (an empty submission's zeros) stay
    # visible
    for attr, label, marker, colour, shift in (
        ("meteor", "METEOR", "o", "#4477aa", 0.18),
        ("hidden_metric", "hidden metric", "^", "#ee7733", 0.0),
        ("score", "score S_j", "s", "#222222", -0.18),
    ):
        ax.plot(
            [getattr(by_type[n], attr) for n in names],
            [k + shift for k in range(len(names))],
            linestyle="none",
            marker=marker,
            color=colour,
            label=label,
            markersize=7,
            alpha=0.9,
            clip_on=False,
        )
    ax.set_yticks(range(len(names)), names)
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.set_xlim(-0.03, 1.03)  # a dot at 0 or 1 stays off the frame
    ax.grid(axis="x", color="#ddd")
    ax.set_xlabel("value (mean over the type's dialogues)")
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.35 if len(names) < 3 else -0.22),
        ncols=3,
        fontsize="small",
        frameon=False,
    )
    return _svg(fig)


def _histogram(values: list[float], title: str) -> str:
    import numpy as np

    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(4.5, 2.8))
    counts, edges = np.histogram(np.fromiter(values, float, len(values)), bins=20, range=(0, 1))
    ax.stairs(counts, edges, fill=True, color="#4477aa", edgecolor="white")
    ax.set_title(title)
    ax.set_xlabel("value per turn")
    ax.set_ylabel("turns")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # a count of turns: whole numbers only
    return _svg(fig)


def _type_table(summary: Summary) -> str:
    """Per-type rows and a weighted total row (the integral)."""
    rows = "".join(
        f"<tr><td>{html.escape(n)}</td><td>{t.weight:g}</td><td>{t.dialogs}</td><td>{t.turns}</td>"
        f"<td>{t.meteor:.4f}</td><td>{t.hidden_metric:.4f}</td><td>{t.score:.4f}</td></tr>"
        for n, t in summary.by_type.items()
    )
    total = (
        f'<tr class="total"><td>weighted total</td><td>{sum(t.weight for t in summary.by_type.values()):g}'
        f"</td><td>{summary.dialogs}</td><td>{summary.turns}</td><td>{summary.meteor:.4f}</td>"
        f"<td>{summary.hidden_metric:.4f}</td><td>{summary.integral:.4f}</td></tr>"
    )
    return (
        "<table><tr><th>type</th><th>weight</th><th>dialogues</th><th>turns</th><th>METEOR</th>"
        f"<th>hidden metric</th><th>score S_j</th></tr>{rows}{total}</table>"
    )


def _tokens(tokens: tuple[str, ...], stages: list[str | None], partners: list[str | None]) -> str:
    spans = []
    for token, stage, partner in zip(tokens, stages, partners):
        title = _stage_title(stage) + (f" \u2194 {partner}" if partner else "")
        spans.append(
            f'<span class="tok {stage or "none"}" title="{html.escape(title)}">{html.escape(token)}</span>'
        )
    return " ".join(spans) or "<i>no tokens</i>"


def _explained_turn(turn: ExplainedTurn, stages: tuple[str, ...]) -> str:
    """One lowest-scoring turn: raw texts, then tokens coloured by the stage that linked them."""
    answer_partner = [
        None if link is None else turn.reference_tokens[link.ref] for link in turn.answer_links()
    ]
    reference_partner = [
        None if link is None else turn.answer_tokens[link.cand] for link in turn.reference_links()
    ]
    counts = ", ".join(f"{sum(1 for x in turn.links if x.stage == st)} {st}" for st in stages)
    return (
        f'<div class="turn"><h3>{html.escape(turn.dialog_id)} &middot; turn {turn.turn} &middot; '
        f"{html.escape(turn.type)} &middot; METEOR {turn.meteor:.4f}</h3>"
        f'<table class="tokens"><tr><th>answer</th><td><div class="raw">{_raw(turn.answer)}'
        f"</div>{_tokens(turn.answer_tokens, turn.answer_stages(), answer_partner)}</td></tr>"
        f'<tr><th>reference {turn.best_reference}<br><small>(best variant)</small></th><td><div class="raw">'
        f"{_raw(turn.reference)}</div>"
        f"{_tokens(turn.reference_tokens, turn.reference_stages(), reference_partner)}</td></tr></table>"
        f"<small>{len(turn.links)} link(s): {counts} &middot; {_precision(turn)}, "
        f"R = {len(turn.links)}/{len(turn.reference_tokens)}</small></div>"
    )


def _precision(turn: ExplainedTurn) -> str:
    return f"P = {len(turn.links)}/{len(turn.answer_tokens)}" if turn.answer_tokens else "no answer tokens"


def _raw(text: str) -> str:
    return html.escape(_clip(text)) if text.strip() else "<i>(empty)</i>"


def _clip(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[:limit] + " \u2026"


def _legend(stages: tuple[str, ...]) -> str:
    """Each stage's colour, and that of a word nothing matched."""
    return " ".join(
        f'<span class="tok {stage or "none"}">{_stage_title(stage)}</span>' for stage in (*stages, None)
    )


def _lowest(result: ScoreResult) -> str:
    if not result.lowest:
        return ""
    legend = _legend(result.stages)
    return (
        f'<h2 id="lowest">Lowest-scoring turns</h2><p>The {len(result.lowest)} turns of lowest METEOR, '
        "each against "
        "its best reference variant. Words are shown as the scorer compares them (normalised tokens); "
        "hover a word to see what it was linked to.</p>"
        f'<p class="legend">{legend}</p>' + "".join(_explained_turn(t, result.stages) for t in result.lowest)
    )


#: The banner at the top of every organizer's page that shows reference text (contract section 6).
PRIVATE_BANNER = (
    '<p class="private"><b>Private: this page holds the test set\'s answers (reference texts).</b> It is for '
    "the organizers only; do not publish it or show it to participants.</p>"
)


def score_report(result: ScoreResult, progress: Callable[[int, int], None] | None = None) -> str:
    """The page for one scored submission (a :class:`scorer.scoring.result.ScoreResult`), as its audience
    may see it (contract section 6): the organizer's shows the lowest turns against their references under
    a banner saying it is private; a participant's shows no reference text, and per-turn figures (the
    distributions, each turn's METEOR with the answer's matched words marked) only with ``turn_details``;
    no turn's hidden-metric value while its settings are private. ``progress(done, total)`` hears its parts
    drawn (the charts, then the turns)."""
    audience = result.audience
    s = result.summary
    parts: list[Callable[[], str]] = [lambda: _type_dots(s.by_type)]
    if audience.turn_details:
        parts.append(lambda: _histogram([t.meteor for t in result.turns], "METEOR per turn"))
        if audience.turn_hidden_metric:
            parts.append(
                lambda: _histogram([t.hidden_metric for t in result.turns], "Hidden metric per turn")
            )
    if audience.references:
        parts.append(lambda: _lowest(result))
    elif audience.marked_answers:
        parts.append(lambda: _marked_turns(result))
    else:
        parts.append(lambda: "")
    drawn = []
    for k, part in enumerate(parts):
        if progress:
            progress(k, len(parts))
        drawn.append(part())
    if progress:
        progress(len(parts), len(parts))
    dots, histograms, turns = drawn[0], "".join(drawn[1:-1]), drawn[-1]
    distribution = f"<h2>Distribution over turns</h2><figure>{histograms}</figure>" if histograms else ""
    body = (
        f"{PRIVATE_BANNER if audience.references else ''}"
        f"<p><b>Integral: {s.integral:.6f}</b> &middot; METEOR {s.meteor:.4f} &middot; hidden metric "
        f"{s.hidden_metric:.4f} &middot; {s.dialogs} dialogues, {s.turns} turns</p>"
        f"{_stages(result.stages)}{_metric_settings(result.signature)}"
        f"<h2>By dialogue type</h2>{_type_table(s)}"
        f"<figure>{dots}</figure>"
        f"{distribution}{turns}{_warnings(result)}{_signature(result.signature)}"
    )
    title = f"Submission score: {result.name}" if result.name and audience.organizer else "Submission score"
    return _page(title, body)


def _warnings(result: ScoreResult) -> str:
    if not result.warnings:
        return ""
    items = "".join(f"<li>{html.escape(str(w))}</li>" for w in result.warnings[:MAX_WARNINGS_SHOWN])
    more = len(result.warnings) - MAX_WARNINGS_SHOWN
    if more > 0:
        items += f"<li>... and {more} more warning(s)</li>"
    return f'<h2 id="warnings">Warnings</h2><ul class="warnings">{items}</ul>'


#: How many warnings a page lists (``scores.json`` holds the first hundred).
MAX_WARNINGS_SHOWN = 20


def _marked_turns(result: ScoreResult) -> str:
    """Every turn's METEOR and the participant's own answer, its words coloured by the stage that matched
    them: no reference text, no partner, no reference length."""
    legend = _legend(result.stages)
    hm = result.audience.turn_hidden_metric
    rows = []
    for t, marked in zip(result.turns, result.marked):
        words = _tokens(marked.tokens, list(marked.stages), [None] * len(marked.tokens))
        figures = f"METEOR {t.meteor:.4f}" + (f" &middot; hidden metric {t.hidden_metric:.4f}" if hm else "")
        rows.append(
            f'<div class="turn"><h3>{html.escape(t.dialog_id)} &middot; turn {t.turn} &middot; '
            f'{html.escape(t.type)} &middot; {figures}</h3><div class="tokens">'
            f"{words}</div></div>"
        )
    return (
        f'<h2 id="turns">Your answers, turn by turn</h2><p>Each turn\'s METEOR and your answer as the '
        "scorer compares it (normalised tokens), each word coloured by the stage that matched it to the "
        f'turn\'s reference; the references themselves stay private.</p><p class="legend">{legend}</p>'
        + "".join(rows)
    )


def _ranked_intervals(ranked: tuple[Standing, ...]) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(ranked) + 1.2))
    ys = list(range(len(ranked)))[::-1]
    integrals = [e.scored().summary.integral for e in ranked]
    intervals = [e.interval() for e in ranked]
    errors = [
        [i - low for i, (low, _) in zip(integrals, intervals)],
        [high - i for i, (_, high) in zip(integrals, intervals)],
    ]
    ax.errorbar(integrals, ys, xerr=errors, fmt="o", color="#4477aa", capsize=3)
    ax.set_yticks(ys, [f"{e.rank}. {shown(e.name)}" for e in ranked])
    ax.grid(axis="x", color="#ddd")
    ax.set_xlabel("integral score, with its 95% bootstrap interval")
    ax.set_title("Ranked submissions")
    return _svg(fig)


def _zoomed(values: list[float]) -> tuple[float, float]:
    """An x range around ``values`` that keeps a difference of 0.01 visible, with a margin on both sides
    (also at 0 and 1, so that no dot sits on the frame)."""
    low, high = min(values), max(values)
    pad = max(0.005, 0.12 * (high - low))
    return low - pad, high + pad


def _type_dot_panels(ranked: tuple[Standing, ...], types: tuple[str, ...]) -> str:
    """One panel per dialogue type: each submission's S_j as a dot, on an axis zoomed to that type's range."""
    plt = _pyplot()
    ys = list(range(len(ranked)))[::-1]
    fig, axes = plt.subplots(
        1, len(types), figsize=(2.4 * len(types) + 1.6, 0.4 * len(ranked) + 1.4), sharey=True, squeeze=False
    )
    for ax, name in zip(axes[0], types):
        values = [e.scored().summary.by_type[name].score for e in ranked]
        span = _zoomed(values)
        ax.hlines(ys, *span, color="#eee", linewidth=1)
        ax.plot(values, ys, "o", color="#4477aa", markersize=6)
        ax.set_xlim(*span)
        ax.set_ylim(-0.7, len(ranked) - 0.3)  # half a row of margin above and below
        ax.set_title(f"{name}\n(weight {ranked[0].scored().summary.by_type[name].weight:g})", fontsize=9)
        ax.set_xlabel("score S_j", fontsize=8)
        ax.tick_params(axis="x", labelsize=7, labelrotation=45)
        ax.grid(axis="x", color="#ddd")
    axes[0][0].set_yticks(ys, [f"{e.rank}. {shown(e.name)}" for e in ranked], fontsize=8)
    fig.suptitle("Score by dialogue type (each axis zoomed to its own range)", fontsize=10)
    fig.tight_layout()
    return _svg(fig)


def _number(value: float | None, digits: int = 4) -> str:
    """``value`` to ``digits`` decimals; empty when there is none (None or NaN)."""
    return "" if value is None or value != value else f"{value:.{digits}f}"


def _flag_mark(board: Leaderboard, name: str) -> str:
    """A flagged entry's marker in the ranking table: its flags, linked to the audit section."""
    audit = board.audit.get(name)
    if audit is None or not audit.flags:
        return ""
    flags = ", ".join(f.flag for f in audit.flags)
    return (
        f' <a class="flag" href="#audit" title="perplexity audit: {html.escape(flags)}">'
        f"\u26a0 {html.escape(flags)}</a>"
    )


def _board_row(standing: Standing, types: tuple[str, ...], board: Leaderboard) -> str:
    row = standing.values()
    name = html.escape(row["submission"])
    if standing.result is None:
        errors = "".join(f"<li>{html.escape(str(issue))}</li>" for issue in row["errors"])
        more = f"<li>... and {standing.errors_not_shown} more</li>" if standing.errors_not_shown else ""
        return (
            f'<tr class="invalid"><td></td><td class="name">{name}</td>'
            f'<td colspan="{5 + len(types)}" class="wrap">{standing.status}:<ul>{errors}{more}</ul></td></tr>'
        )
    # the folder's bytes (leaderboard.folder_name), percent-encoded: "a#b?c" opens its own page
    href = urllib.parse.quote(standing.name.encode("utf-8"), safe="")
    link = (
        f'<a href="submissions/{html.escape(href)}/report.html">{name}</a>{_flag_mark(board, standing.name)}'
    )
    cells = "".join(f"<td>{_number(row[t])}</td>" for t in types)
    return (
        f'<tr><td>{row["rank"]}</td><td class="name">{link}</td><td>{row["integral"]:.6f}</td>'
        f"<td>[{row['ci_low']:.4f}, {row['ci_high']:.4f}]</td><td>{_number(row['meteor'])}</td>"
        f"<td>{_number(row['hidden_metric'])}</td>{cells}<td>{_number(row['p_value'])}</td></tr>"
    )


def leaderboard_report(board: Leaderboard) -> str:
    """The page for a ranked leaderboard (a :class:`scorer.scoring.leaderboard.Leaderboard`)."""
    ranked, types = board.ranked, board.types
    heads = "".join(f'<th title="{t}">{SHORT_TYPES[t]}</th>' for t in types)
    charts = (
        f"<figure>{_ranked_intervals(ranked)}</figure><figure>{_type_dot_panels(ranked, types)}</figure>"
        if ranked
        else ""
    )
    skipped = (
        f"<p>Skipped (not a folder or .zip): {html.escape(', '.join(board.skipped))}</p>"
        if board.skipped
        else ""
    )
    legend = ", ".join(f"{SHORT_TYPES[t]} = {t}" for t in types)
    failed = sum(1 for e in board.entries if e.status == "error")
    body = (
        f"<p>{len(ranked)} scored, {len(board.entries) - len(ranked) - failed} invalid"
        f"{f', {failed} failed (error)' if failed else ''}. Intervals: {board.resamples} "
        f"bootstrap resamples of dialogues, stratified by type, seed {board.seed}; p: paired bootstrap "
        "against the submission ranked just above.</p>"
        f"{_stages(board.stages)}"
        '<div class="scroll"><table class="board"><tr><th>rank</th><th '
        'class="name">submission</th><th>integral</th><th>95% interval</th>'
        f"<th>METEOR</th><th>hidden metric</th>{heads}<th>p vs above</th></tr>"
        f"{''.join(_board_row(e, types, board) for e in board.entries)}</table></div>"
        f"{f'<p><small>Per-type columns: the score S_j; {legend}.</small></p>' if legend else ''}"
        f"{skipped}{charts}"
        f"{_audit_section(board)}{_signature(board.signature)}"
    )
    return _page("Leaderboard", body)


def _audit_section(board: Leaderboard) -> str:
    """The perplexity audit: each scored entry's distribution of ln perplexity (flagged entries in red), then
    every flag with its message. No threshold is shown (they may be the organizer's own)."""
    ranked = [e for e in board.ranked if e.name in board.audit]
    if not ranked:
        return ""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(ranked) + 1.4))
    logs = [[math.log(t.ppl) for t in e.scored().turns] or [0.0] for e in ranked]
    flagged = [bool(board.audit[e.name].flags) for e in ranked]
    parts = ax.boxplot(logs, orientation="horizontal", patch_artist=True, widths=0.6, showfliers=False)
    for box, bad in zip(parts["boxes"], flagged):
        box.set(facecolor="#f4c7c3" if bad else "#cfe0f3", edgecolor="#a00" if bad else "#4477aa")
    ax.set_yticks(
        range(1, len(ranked) + 1),
        [("\u26a0 " if bad else "") + shown(e.name) for e, bad in zip(ranked, flagged)],
    )
    ax.invert_yaxis()
    ax.grid(axis="x", color="#ddd")
    ax.set_xlabel("ln perplexity per turn (box: quartiles; whiskers: 1.5 IQR)")
    ax.set_title("Reported perplexities (flagged entries in red)")
    rows = "".join(
        f'<tr><td class="name">{html.escape(name)}</td><td class="wrap">'
        + "<br>".join(
            [f"<b>{html.escape(f.flag)}</b>: {html.escape(f.message)}" for f in board.audit[name].flags]
            + ([html.escape(board.audit[name].not_judged)] if board.audit[name].inconclusive else [])
        )
        + "</td></tr>"
        for name in sorted(board.audit)
        if board.audit[name].flags or board.audit[name].inconclusive
    )
    table = (
        f'<table><tr><th class="name">submission</th><th class="wrap">flags</th></tr>{rows}</table>'
        if rows
        else "<p>No entry is flagged.</p>"
    )
    return (
        '<h2 id="audit">Perplexity audit</h2><p>The hidden metric rests on perplexities the participants '
        "report. A flag is a reason to look, never a verdict: it changes no score and no rank (audit.json "
        f"holds every figure).</p><figure>{_svg(fig)}</figure>{table}"
    )


def failure_report(error: Exception, status: str) -> str:
    """The page of a run that scored nothing: the verdict and every listed error, one a line, located."""
    if isinstance(error, IssuesError):
        items = [str(issue) for issue in error.listed()]
        if error.not_listed:
            items.append(f"... and {error.not_listed} more error(s)")
        items += error.unchecked_notes()
    else:
        items = [str(error)]
    headline = (
        "The submission is invalid and was not scored: fix every error below and upload it again."
        if status == "invalid"
        else "The submission could not be scored: the scoring program stopped."
    )
    listed = "".join(f"<li>{html.escape(item)}</li>" for item in items)
    return _page(
        "Scoring result", f'<p class="invalid">{html.escape(headline)}</p>\n<ul class="errors">{listed}</ul>'
    )


def correlation_report(meta: Meta) -> str:
    """The ``correlate`` page: the table, then one scatter plot (human score against figure) per level and
    figure."""
    plt = _pyplot()

    def fmt(v: float | None) -> str:
        return _number(v, 3)

    rows = "".join(
        f"<tr><td>{r.level}</td><td class=name>{r.figure}</td><td>{r.n}</td>"
        f"<td>{fmt(r.pearson)} [{fmt(r.pearson_low)}, {fmt(r.pearson_high)}]</td>"
        f"<td>{fmt(r.spearman)} [{fmt(r.spearman_low)}, {fmt(r.spearman_high)}]</td>"
        f"<td>{fmt(r.kendall)} [{fmt(r.kendall_low)}, {fmt(r.kendall_high)}]</td>"
        f"<td>{fmt(r.pairwise_accuracy)}</td></tr>"
        for r in meta.rows
    )
    body = [
        f"<p>Human ratings given at <b>{meta.ratings_level}</b> level; {meta.resamples} bootstrap resamples, "
        f"seed {meta.seed}; intervals are 95%.</p>",
        '<div class="scroll"><table class="board"><tr><th>level</th><th class="name">figure</th><th>n</th>'
        "<th>Pearson r</th><th>Spearman &rho;</th>"
        f"<th>Kendall &tau;-b</th><th>pairwise accuracy</th></tr>{rows}</table></div>",
    ]
    by_key = {(r.level, r.figure): r for r in meta.rows}
    for data in meta.levels:
        figures = list(data.figures)
        # at most three panels a row, so that the page does not shrink the text
        columns = min(3, len(figures))
        rows_of_panels = -(-len(figures) // columns)
        fig, axes = plt.subplots(
            rows_of_panels, columns, figsize=(3.6 * columns, 3.3 * rows_of_panels), squeeze=False
        )
        panels = [ax for row in axes for ax in row]
        for ax, name in zip(panels, figures):
            ax.scatter(data.human, data.figures[name], s=18, alpha=0.7, color="#3465a4", clip_on=False)
            ax.margins(0.1)  # no point on a corner of the frame
            r = by_key[(data.level, name)]
            ax.set_title(f"{name}\nr={fmt(r.pearson)}  \u03c4={fmt(r.kendall)}", fontsize=11)
            ax.set_xlabel("human score", fontsize=10)
            ax.set_ylabel(name, fontsize=10)
            ax.tick_params(labelsize=9)
        for ax in panels[len(figures) :]:
            ax.set_visible(False)
        fig.tight_layout()
        body.append(f"<h2>{data.level} level ({len(data.human)} items)</h2><figure>{_svg(fig)}</figure>")
    notes = meta.warnings + meta.left_out_lines()
    if notes:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in notes) + "</ul>")
    body.append(_signature(meta.signature))
    return _page("Agreement of the competition's figures with human ratings", "\n".join(body))
