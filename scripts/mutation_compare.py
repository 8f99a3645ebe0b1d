"""Alignment mutants against the unmutated engine, in one process, on longer texts (up to 12 tokens).

    SCORER_PURE_PYTHON=1 python scripts/mutation_compare.py alignment.py:357:0,alignment.py:361:0 20000
    [seed [words]]

Each listed mutant of alignment.py is loaded beside the real module; random pairs of texts of 2 to 12 tokens
from a few words are aligned by both, and a mutant is reported (KILL and the case) at its first difference.
The real engine is the reference here because the brute force is too slow at 12 tokens; it is itself
checked against the brute force by the test suite.
"""

import random
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests"), str(ROOT)]
import mutation  # noqa: E402
from helpers import STAGE_ORDERS, WORDS  # noqa: E402

import scorer.metric.engine.alignment as real  # noqa: E402
from scorer.metric.matcher import Matcher  # noqa: E402
from scorer.metric.thesaurus import load_thesaurus  # noqa: E402

sites = sys.argv[1].split(",")
N = int(sys.argv[2])
m = Matcher(load_thesaurus(ROOT / "tests" / "data" / "rwn-mini"), persistent=False)
ms = mutation.mutants("alignment.py")
mods = {}
for n, mu in enumerate(ms):
    if mu.site in sites:
        name = "scorer.metric.engine._mut_" + str(n)
        mod = types.ModuleType(name)
        mod.__package__ = "scorer.metric.engine"
        sys.modules[name] = mod
        exec(compile(mutation.mutated_source(mu, n), "mut", "exec"), mod.__dict__)
        mods[mu.site] = mod
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
POOL = int(sys.argv[4]) if len(sys.argv) > 4 else 4  # at most this many words a pair
alive = set(mods)
t0 = time.time()
for _ in range(N):
    pool = rng.sample(WORDS, rng.randint(1, POOL))
    c = [rng.choice(pool) for _ in range(rng.randint(2, 12))]
    r = [rng.choice(pool) for _ in range(rng.randint(2, 12))]
    st = rng.choice(STAGE_ORDERS)
    k = m.key_functions(st)
    want = real.align(c, r, k)
    for site in list(alive):
        try:
            got = mods[site].align(c, r, k)
            same = (got.links, got.chunks, got.exact) == (want.links, want.chunks, want.exact)
        except Exception:
            same = False
        if not same:
            print("KILL", site, c, r, st, flush=True)
            alive.discard(site)
    if not alive:
        break
print("alive", sorted(alive), time.time() - t0)
