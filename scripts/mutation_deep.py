"""A deeper look at one mutant that the test suite let through: many more random cases against the brute
force.

Run by ``scripts/mutation.py --deep`` inside the mutant's copy of the project. Draws texts of up to
9 tokens from words with shared lemmas and synsets (those of tests/helpers.py), under every
stage order, and compares the pure engine's alignment (links, chunks, exactness) and its rule-1
counts with ``tests/bruteforce.py``. Exits 1 and prints the first difference, else 0.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

HERE = Path.cwd()
sys.path[:0] = [str(HERE), str(HERE / "tests")]

from bruteforce import chunk_count, exhaustive_align  # noqa: E402
from helpers import STAGE_ORDERS, WORDS  # noqa: E402

from scorer.metric.engine.alignment import align  # noqa: E402
from scorer.metric.engine.counting import stage_counts  # noqa: E402
from scorer.metric.engine.links import counts_of, type_graph  # noqa: E402
from scorer.metric.matcher import Matcher  # noqa: E402
from scorer.metric.thesaurus import load_thesaurus  # noqa: E402

CASES = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
#: "dense": pools of two or three words, so that repeated and partly exact types abound.
DENSE = len(sys.argv) > 2 and sys.argv[2] == "dense"


def main() -> int:
    matcher = Matcher(load_thesaurus(HERE / "tests" / "data" / "rwn-mini"), persistent=False)
    rng = random.Random(20261123)
    for case in range(CASES):
        pool = rng.sample(WORDS, rng.randint(2, 3) if DENSE else rng.randint(1, 6))
        cand = [rng.choice(pool) for _ in range(rng.randint(1, 9))]
        ref = [rng.choice(pool) for _ in range(rng.randint(1, 9))]
        stages = rng.choice(STAGE_ORDERS)
        keys = matcher.key_functions(stages)
        expected = exhaustive_align(cand, ref, matcher, stages)
        counts = [sum(1 for _, _, s in expected if s == k) for k in range(len(stages))]
        try:
            found = align(cand, ref, keys)
            got_counts = stage_counts(type_graph(counts_of(cand), counts_of(ref), keys), len(stages))
        except Exception as exc:  # noqa: BLE001 - a mutant may raise: that is a difference too
            print(f"case {case}: {cand} / {ref} under {stages}: engine raised {type(exc).__name__}: {exc}")
            return 1
        if (
            list(found.links) != expected
            or found.chunks != chunk_count(expected)
            or not found.exact
            or got_counts != counts
        ):
            print(
                f"case {case}: {cand} / {ref} under {stages}: engine {list(found.links)} {got_counts}, "
                f"brute force {expected} {counts}"
            )
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
