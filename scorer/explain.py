"""A readable account of one METEOR score: tokens, matches by stage, chunks, the formula."""
from __future__ import annotations

from typing import Sequence

from .meteor import Matcher, MeteorParams, chunk_runs, meteor_tokens
from .text import tokenise


def _shared(matcher: Matcher, stage: str, a: str, b: str) -> str:
    if stage == "exact":
        return ""
    common = sorted(matcher.keys(stage, a) & matcher.keys(stage, b))
    label = "lemma" if stage == "lemma" else "synset"
    return f"  ({label} {', '.join(common[:3])}{', ...' if len(common) > 3 else ''})"


def explain(candidate: str, references: Sequence[str], matcher: Matcher, params: MeteorParams) -> str:
    """The text ``scorer explain`` prints for a candidate against each reference."""
    cand = tokenise(candidate)
    lines = [f"candidate tokens ({len(cand)}): " + " ".join(f"{i}:{t}" for i, t in enumerate(cand))]
    best_index, best_score = None, -1.0
    for index, reference in enumerate(references):
        ref = tokenise(reference)
        lines.append("")
        lines.append(f"reference {index} tokens ({len(ref)}): " + " ".join(f"{j}:{t}" for j, t in enumerate(ref)))
        if not ref:
            lines.append("  no tokens: this variant is skipped")
            continue
        s = meteor_tokens(cand, ref, matcher, params, with_alignment=True)
        for m in s.alignment:
            lines.append(f"  {m.stage:<8} cand {m.cand}:{cand[m.cand]}  <->  ref {m.ref}:{ref[m.ref]}"
                         f"{_shared(matcher, m.stage, cand[m.cand], ref[m.ref])}")
        runs = chunk_runs(s.alignment)
        lines.append(f"  chunks: {s.chunks}  " + " ".join("[" + " ".join(cand[m.cand] for m in run) + "]" for run in runs))
        lines.append(f"  m={s.matches} t={s.cand_len} r={s.ref_len}  P={s.precision:.6f}  R={s.recall:.6f}  "
                     f"Fmean={s.fmean:.6f}  penalty={s.penalty:.6f}  METEOR={s.score:.6f}"
                     + ("" if s.exact_search else "  (search budget reached: best alignment found)"))
        if s.score > best_score:
            best_index, best_score = index, s.score
    lines.append("")
    if best_index is None:
        lines.append("no reference variant has a token")
    else:
        lines.append(f"best reference: {best_index}  METEOR = {best_score!r}")
    lines.append(f"settings: alpha={params.alpha} beta={params.beta} gamma={params.gamma} "
                 f"stages={'+'.join(params.stages)}")
    return "\n".join(lines)
