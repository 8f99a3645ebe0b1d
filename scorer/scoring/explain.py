"""A readable account of one METEOR score: tokens, the alignment of rules 1-5 by stage, chunks, the formula.

The alignment is shown in both modes: with the penalty off it does not
change the number (only the link count does), but it shows a participant
what matched.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from scorer.metric.engine.alignment import chunk_runs
from scorer.metric.meteor import Link, MeteorRu, MeteorScore
from scorer.metric.stages import REGISTRY, stages_line
from scorer.metric.text import tokenise

from .aggregate import TurnScore

#: How many turns a submission's report explains.
LOWEST_TURNS = 10


@dataclass(frozen=True)
class ExplainedTurn:
    """One turn with what matched: the answer's and the best variant's tokens and the rules 1-5 links."""

    dialog_id: str
    type: str
    turn: int
    meteor: float
    answer: str
    best_reference: int
    reference: str
    answer_tokens: tuple[str, ...]
    reference_tokens: tuple[str, ...]
    links: tuple[Link, ...]

    def answer_links(self) -> list[Link | None]:
        """The link of each answer token, None where it was not linked."""
        found: list[Link | None] = [None] * len(self.answer_tokens)
        for link in self.links:
            found[link.cand] = link
        return found

    def reference_links(self) -> list[Link | None]:
        """The link of each reference token, None where it was not linked."""
        found: list[Link | None] = [None] * len(self.reference_tokens)
        for link in self.links:
            found[link.ref] = link
        return found

    def answer_stages(self) -> list[str | None]:
        """The stage each answer token was linked by, None where it was not linked."""
        return [None if link is None else link.stage for link in self.answer_links()]

    def reference_stages(self) -> list[str | None]:
        """The stage each reference token was linked by, None where it was not linked."""
        return [None if link is None else link.stage for link in self.reference_links()]


@dataclass(frozen=True)
class MarkedAnswer:
    """A participant's own answer as the scorer compared it: its tokens, each with the stage that linked it
    to the turn's best variant (None where nothing matched). It holds nothing of the reference."""

    tokens: tuple[str, ...]
    stages: tuple[str | None, ...]


def marked_answers(
    turns: Sequence[TurnScore],
    variant_tokens: Sequence[Sequence[Sequence[str]]],
    metric: MeteorRu,
    progress: Callable[[int], None] | None = None,
) -> tuple[MarkedAnswer, ...]:
    """Every turn's answer with its matched words marked (the page a participant sees with
    ``[participants] turn_details``); ``variant_tokens[k]`` holds turn ``k``'s variants, tokenised."""
    marked = []
    for k, (t, variants) in enumerate(zip(turns, variant_tokens)):
        if progress and k % 1024 == 0:
            progress(k)
        cand = tokenise(t.answer)
        ref = list(variants[t.best_reference]) if variants else []
        stages: list[str | None] = [None] * len(cand)
        if cand and ref:
            for link in metric.score_tokens(cand, ref, with_alignment=True).alignment:
                stages[link.cand] = link.stage
        marked.append(MarkedAnswer(tuple(cand), tuple(stages)))
    if progress:
        progress(len(marked))
    return tuple(marked)


def lowest_turns(
    turns: Sequence[TurnScore],
    references: Mapping[str, Sequence[Sequence[str]]],
    metric: MeteorRu,
    count: int = LOWEST_TURNS,
    progress: Callable[[int], None] | None = None,
) -> tuple[ExplainedTurn, ...]:
    """The ``count`` turns of lowest METEOR (file order among equals), each aligned against its best variant.

    ``references[dialog_id][turn]`` holds the turn's reference variants as raw text; ``progress(done)``
    hears each turn explained.
    """
    chosen = heapq.nsmallest(count, range(len(turns)), key=lambda k: (turns[k].meteor, k))
    explained = []
    for k in chosen:
        t = turns[k]
        reference = references[t.dialog_id][t.turn][t.best_reference]
        cand, ref = tokenise(t.answer), tokenise(reference)
        links = metric.score_tokens(cand, ref, with_alignment=True).alignment if cand and ref else ()
        explained.append(
            ExplainedTurn(
                t.dialog_id,
                t.type,
                t.turn,
                t.meteor,
                t.answer,
                t.best_reference,
                reference,
                tuple(cand),
                tuple(ref),
                links,
            )
        )
        if progress:
            progress(len(explained))
    return tuple(explained)


def _shared(metric: MeteorRu, stage_name: str, a: str, b: str) -> str:
    """The keys ``a`` and ``b`` share at the stage, as explanations show them ("" for the exact stage)."""
    stage = REGISTRY[stage_name]
    if stage.is_exact:
        return ""
    common = sorted(metric.matcher.keys(stage_name, a) & metric.matcher.keys(stage_name, b))
    return f"  ({stage.key_name} {', '.join(common[:3])}{', ...' if len(common) > 3 else ''})"


def _chunks(s: MeteorScore, cand: Sequence[str]) -> list[list[str]]:
    runs = chunk_runs([(link.cand, link.ref, 0) for link in s.alignment])
    return [[cand[i] for i, _, _ in run] for run in runs]


def explain(candidate: str, references: Sequence[str], metric: MeteorRu) -> str:
    """The text ``scorer explain`` prints for a candidate against each reference."""
    params = metric.params
    cand = tokenise(candidate)
    lines = [f"candidate tokens ({len(cand)}): " + " ".join(f"{i}:{t}" for i, t in enumerate(cand))]
    best_index, best_score = None, -1.0
    for index, reference in enumerate(references):
        ref = tokenise(reference)
        lines.append("")
        lines.append(
            f"reference {index} tokens ({len(ref)}): " + " ".join(f"{j}:{t}" for j, t in enumerate(ref))
        )
        if not ref:
            lines.append("  no tokens: this variant is skipped")
            continue
        s = metric.score_tokens(cand, ref, with_alignment=True)
        for link in s.alignment:
            lines.append(
                f"  {link.stage:<8} cand {link.cand}:{cand[link.cand]}  <->  ref {link.ref}:{ref[link.ref]}"
                f"{_shared(metric, link.stage, cand[link.cand], ref[link.ref])}"
            )
        by_stage = ", ".join(
            f"{stage} {sum(1 for x in s.alignment if x.stage == stage)}" for stage in params.stages
        )
        lines.append(f"  links: {s.matches} ({by_stage})")
        lines.append(
            f"  chunks: {s.chunks}  " + " ".join("[" + " ".join(run) + "]" for run in _chunks(s, cand))
        )
        lines.append(
            f"  m={s.matches} t={s.cand_len} r={s.ref_len}  P={s.precision:.6f}  R={s.recall:.6f}  "
            f"Fmean={s.fmean:.6f}  penalty={s.penalty:.6f}  METEOR={s.score:.6f}"
            + ("" if s.exact_search else "  (search budget reached: best alignment found)")
        )
        if s.score > best_score:
            best_index, best_score = index, s.score
    lines.append("")
    if best_index is None:
        lines.append("no reference variant has a token")
    else:
        lines.append(f"best reference: {best_index}  METEOR = {best_score!r}")
    lines.append(f"settings: alpha={params.alpha} beta={params.beta} gamma={params.gamma}")
    lines.append(f"stages: {stages_line(params.stages)}")
    return "\n".join(lines)
