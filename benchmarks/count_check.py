"""Check on real text that counting gives the alignment's match count (gamma = 0).

For every system of the WMT21 en-ru corpus, every segment and both
references, compares :func:`scorer.counting.count_matches` with the number
of pairs of the full staged alignment, and reports how often counting had
to hand over (undecided)::

    python benchmarks/count_check.py [--corpus ../shared/benchmarks/wmt21-en-ru]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from scorer.counting import Bag, count_matches
from scorer.meteor import Matcher, align
from scorer.text import tokenise
from scorer.thesaurus import load_thesaurus

SYSTEMS = ["Facebook-AI", "Manifold", "NVIDIA-NeMo", "NiuTrans", "Online-A", "Online-B", "Online-G",
           "Online-W", "Online-Y"]
STAGES = ("exact", "lemma", "synonym")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path,
                        default=Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "wmt21-en-ru")
    args = parser.parse_args()
    read = lambda name: (args.corpus / name).read_text(encoding="utf-8").rstrip("\n").split("\n")  # noqa: E731
    refs = [read("newstest2021.en-ru.ref.A.ru"), read("newstest2021.en-ru.ref.B.ru")]
    matcher = Matcher(load_thesaurus())
    keys, any_keys = matcher.stage_keys(STAGES), matcher.any_keys(STAGES)
    pairs = undecided = wrong = 0
    counting_time = aligning_time = 0.0
    for system in SYSTEMS:
        for hyp, *variants in zip(read(f"newstest2021.en-ru.hyp.{system}.ru"), *refs):
            cand = tokenise(hyp)
            for variant in variants:
                ref = tokenise(variant)
                if not cand or not ref:
                    continue
                pairs += 1
                start = time.perf_counter()
                m = count_matches(Bag.of(cand), Bag.of(ref), keys, any_keys)
                counting_time += time.perf_counter() - start
                start = time.perf_counter()
                aligned = len(align(cand, ref, matcher, STAGES)[0])
                aligning_time += time.perf_counter() - start
                undecided += m is None
                wrong += m is not None and m != aligned
    print(f"{pairs} pairs: counting differs from the alignment in {wrong}, undecided in {undecided} "
          f"({100 * undecided / pairs:.2f}%)")
    print(f"time per pair: counting {1e6 * counting_time / pairs:.1f} us, aligning {1e6 * aligning_time / pairs:.1f} us")


if __name__ == "__main__":
    main()
