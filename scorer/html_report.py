"""``report.html``: a self-contained page a person opens (charts drawn by matplotlib, inlined as SVG).

For one submission: the per-type bars and the per-turn METEOR and
hidden-metric distributions. For a leaderboard: the ranked integrals with
their 95% intervals, the per-type scores, and the table. No external file,
script or font is referenced; the SVG carries no date, so equal inputs give
an equal page.
"""
from __future__ import annotations

import html
import io

from .contract import DIALOGUE_TYPES

_STYLE = """body{font-family:sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}
td:first-child,th:first-child,td.name{text-align:left}.sig{font-family:monospace;font-size:.85em;word-break:break-all}
.invalid{color:#a00}figure{margin:1em 0}figure svg{max-width:100%;height:auto}"""


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "dialogue-scorer"
    import matplotlib.pyplot as plt

    return plt


def _svg(fig) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    _pyplot().close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{_STYLE}</style></head><body>\n<h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n")


def _type_bars(by_type: dict) -> str:
    plt = _pyplot()
    names = list(by_type)
    fig, ax = plt.subplots(figsize=(7, 3.2))
    width = 0.27
    for k, (attr, label) in enumerate((("meteor", "METEOR"), ("hidden_metric", "hidden metric"),
                                       ("score", "score S_j"))):
        ax.bar([i + (k - 1) * width for i in range(len(names))], [getattr(by_type[n], attr) for n in names],
               width, label=label)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylim(0, 1)
    ax.set_title("By dialogue type")
    ax.legend(loc="upper right", fontsize="small")
    return _svg(fig)


def _histogram(values: list[float], title: str) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.5, 2.8))
    ax.hist(values, bins=20, range=(0, 1), color="#4477aa", edgecolor="white")
    ax.set_title(title)
    ax.set_xlabel("value per turn")
    ax.set_ylabel("turns")
    return _svg(fig)


def score_report(result) -> str:
    """The page for one scored submission (an ``api.ScoreResult``)."""
    s = result.summary
    rows = "".join(f"<tr><td>{html.escape(n)}</td><td>{t.weight:g}</td><td>{t.dialogs}</td><td>{t.turns}</td>"
                   f"<td>{t.meteor:.4f}</td><td>{t.hidden_metric:.4f}</td><td>{t.score:.4f}</td></tr>"
                   for n, t in s.by_type.items())
    body = (f"<p><b>Integral: {s.integral:.6f}</b> &middot; METEOR {s.meteor:.4f} &middot; hidden metric "
            f"{s.hidden_metric:.4f} &middot; {s.dialogs} dialogues, {s.turns} turns</p>"
            "<table><tr><th>type</th><th>weight</th><th>dialogues</th><th>turns</th><th>METEOR</th>"
            f"<th>hidden metric</th><th>score</th></tr>{rows}</table>"
            f"<figure>{_type_bars(s.by_type)}</figure>"
            f"<figure>{_histogram([t.meteor for t in result.turns], 'METEOR per turn')}"
            f"{_histogram([t.hidden_metric for t in result.turns], 'Hidden metric per turn')}</figure>"
            f"<p class=\"sig\">{html.escape(result.signature)}</p>")
    return _page("Submission score", body)


def _ranked_intervals(valid: list) -> str:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(valid) + 1.2))
    ys = list(range(len(valid)))[::-1]
    integrals = [e.result.summary.integral for e in valid]
    errors = [[i - e.ci_low for i, e in zip(integrals, valid)], [e.ci_high - i for i, e in zip(integrals, valid)]]
    ax.errorbar(integrals, ys, xerr=errors, fmt="o", color="#4477aa", capsize=3)
    ax.set_yticks(ys, [f"{e.rank}. {e.name}" for e in valid])
    ax.set_xlabel("integral (95% bootstrap interval)")
    ax.set_title("Ranked submissions")
    return _svg(fig)


def _type_scores(valid: list) -> str:
    plt = _pyplot()
    types = [t for t in DIALOGUE_TYPES if t in valid[0].result.summary.by_type]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    width = 0.8 / max(len(valid), 1)
    for k, entry in enumerate(valid):
        ax.bar([i + (k - (len(valid) - 1) / 2) * width for i in range(len(types))],
               [entry.result.summary.by_type[t].score for t in types], width, label=entry.name)
    ax.set_xticks(range(len(types)), types)
    ax.set_ylim(0, 1)
    ax.set_title("Score by dialogue type")
    if len(valid) <= 12:
        ax.legend(fontsize="x-small", ncols=2)
    return _svg(fig)


def leaderboard_report(board) -> str:
    """The page for a ranked leaderboard (a :class:`scorer.leaderboard.Leaderboard`)."""
    valid = [e for e in board.entries if e.result is not None]
    rows = []
    for e in board.entries:
        if e.result is None:
            first = html.escape(str(e.errors[0])) if e.errors else ""
            rows.append(f"<tr class=\"invalid\"><td></td><td class=\"name\">{html.escape(e.name)}</td>"
                        f"<td colspan=\"4\" class=\"name\">invalid: {first}</td></tr>")
            continue
        p = "" if e.p_value is None else f"{e.p_value:.4f}"
        rows.append(f"<tr><td>{e.rank}</td><td class=\"name\">{html.escape(e.name)}</td>"
                    f"<td>{e.result.summary.integral:.6f}</td><td>[{e.ci_low:.4f}, {e.ci_high:.4f}]</td>"
                    f"<td>{e.result.summary.meteor:.4f}</td><td>{p}</td></tr>")
    charts = f"<figure>{_ranked_intervals(valid)}</figure><figure>{_type_scores(valid)}</figure>" if valid else ""
    body = (f"<p>{len(valid)} scored, {len(board.entries) - len(valid)} invalid. Intervals: {board.resamples} "
            f"bootstrap resamples of dialogues, stratified by type, seed {board.seed}; p: paired bootstrap "
            "against the submission ranked just above.</p>"
            "<table><tr><th>rank</th><th>submission</th><th>integral</th><th>95% interval</th><th>METEOR</th>"
            f"<th>p vs above</th></tr>{''.join(rows)}</table>{charts}"
            f"<p class=\"sig\">{html.escape(board.signature)}</p>")
    return _page("Leaderboard", body)


def correlation_report(meta) -> str:
    """The ``correlate`` page: the table, then one scatter plot (human score against figure) per level and figure."""
    plt = _pyplot()

    def fmt(v) -> str:
        return "" if v is None or v != v else f"{v:.3f}"

    rows = "".join(
        f"<tr><td>{r.level}</td><td class=name>{r.figure}</td><td>{r.n}</td>"
        f"<td>{fmt(r.pearson)} [{fmt(r.pearson_low)}, {fmt(r.pearson_high)}]</td>"
        f"<td>{fmt(r.spearman)} [{fmt(r.spearman_low)}, {fmt(r.spearman_high)}]</td>"
        f"<td>{fmt(r.kendall)} [{fmt(r.kendall_low)}, {fmt(r.kendall_high)}]</td>"
        f"<td>{fmt(r.pairwise_accuracy)}</td></tr>" for r in meta.rows)
    body = [f"<p>Human ratings given at <b>{meta.ratings_level}</b> level; {meta.resamples} bootstrap resamples, "
            f"seed {meta.seed}; intervals are 95%.</p>",
            "<table><tr><th>level</th><th>figure</th><th>n</th><th>Pearson r</th><th>Spearman &rho;</th>"
            f"<th>Kendall &tau;-b</th><th>pairwise accuracy</th></tr>{rows}</table>"]
    by_key = {(r.level, r.figure): r for r in meta.rows}
    for data in meta.levels:
        figures = list(data.figures)
        fig, axes = plt.subplots(1, len(figures), figsize=(3.2 * len(figures), 3.0), squeeze=False)
        for ax, name in zip(axes[0], figures):
            ax.scatter(data.human, data.figures[name], s=12, alpha=0.6, color="#3465a4")
            r = by_key[(data.level, name)]
            ax.set_title(f"{name}\nr={fmt(r.pearson)}  \u03c4={fmt(r.kendall)}", fontsize=9)
            ax.set_xlabel("human score", fontsize=8)
            ax.set_ylabel(name, fontsize=8)
            ax.tick_params(labelsize=7)
        fig.tight_layout()
        body.append(f"<h2>{data.level} level ({len(data.human)} items)</h2><figure>{_svg(fig)}</figure>")
    if meta.warnings:
        body.append("<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(w)}</li>" for w in meta.warnings) + "</ul>")
    body.append(f"<p class=sig>{html.escape(meta.signature).replace('|', '|<wbr>')}</p>")
    return _page("Agreement of the competition's figures with human ratings", "\n".join(body))
