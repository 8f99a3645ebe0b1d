"""Real-text check of the engine: rule-1 counting against the alignment of rules 1-5, and where time goes.

For every system of the WMT21 en-ru corpus, every segment and both
references: the per-stage link counts from counting and from the full
alignment (they must be equal), whether the alignment's search stayed
within its budget, how the type graph looked (nothing left after the exact
stage, no possible link, single links only, a star, a general component),
and the time per pair of each path::

    python benchmarks/count_check.py [--corpus DIR]   # default: $WMT21_DIR
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

from scorer.metric.engine.alignment import align
from scorer.metric.engine.counting import stage_counts
from scorer.metric.engine.links import components, counts_of, type_graph
from scorer.metric.matcher import Matcher
from scorer.metric.text import tokenise
from scorer.metric.thesaurus import load_thesaurus

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_wmt21 import SYSTEMS, default_corpus  # noqa: E402

STAGES = ("exact", "lemma", "synonym")


def shape(graph) -> str:
    if not graph.cand or not graph.ref:
        return "nothing left after exact"
    if not graph.links:
        return "no possible link"
    kinds = {
        (
            "single"
            if len(c) == 1
            else "star"
            if len({a for a, _ in c}) == 1 or len({b for _, b in c}) == 1
            else "general"
        )
        for c in components(graph.links)
    }
    return "general component" if "general" in kinds else "a star" if "star" in kinds else "single links only"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        default=None,
    )
    args = parser.parse_args()
    args.corpus = args.corpus or default_corpus()
    read = lambda name: (args.corpus / name).read_text(encoding="utf-8").rstrip("\n").split("\n")  # noqa: E731
    refs = [read("newstest2021.en-ru.ref.A.ru"), read("newstest2021.en-ru.ref.B.ru")]
    matcher = Matcher(load_thesaurus(), persistent=False)
    keys = matcher.key_functions(STAGES)
    pairs = differ = inexact = 0
    counting_time = aligning_time = 0.0
    shapes: Counter[str] = Counter()
    for system in SYSTEMS:
        for hyp, *variants in zip(read(f"newstest2021.en-ru.hyp.{system}.ru"), *refs):
            cand = tokenise(hyp)
            for variant in variants:
                ref = tokenise(variant)
                if not cand or not ref:
                    continue
                pairs += 1
                start = time.perf_counter()
                graph = type_graph(counts_of(cand), counts_of(ref), keys)
                counts = stage_counts(graph, len(keys))
                counting_time += time.perf_counter() - start
                start = time.perf_counter()
                found = align(cand, ref, keys)
                aligning_time += time.perf_counter() - start
                shapes[shape(graph)] += 1
                inexact += not found.exact
                by_stage = [sum(1 for *_, s in found.links if s == k) for k in range(len(keys))]
                differ += by_stage != counts
    print(
        f"{pairs} pairs: per-stage counts differ between counting and the alignment in {differ}; "
        f"search budget reached in {inexact}"
    )
    for name, n in shapes.most_common():
        print(f"  {name:<26} {n:6d}")
    print(
        f"time per pair: counting {1e6 * counting_time / pairs:.1f} us, "
        f"alignment of rules 1-5 {1e6 * aligning_time / pairs:.1f} us"
    )


if __name__ == "__main__":
    main()
