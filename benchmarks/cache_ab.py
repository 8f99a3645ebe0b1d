"""Whole-process A/B of each persistent cache: a warm ``score`` run against the same run with that one
cache's files removed first (so it is rebuilt, and written again, in that run), interleaved.

    python benchmarks/cache_ab.py [--turns 20000] [--runs 7] [--gamma 0.5]

Prints, per cache, the median of each side and the gain (the share of the run the cache saves). A cache
earns its place when the gain is at least 10% in the mode it serves. ``RUWORDNET_PATH`` must name the
thesaurus; the WMT21 data is built as ``speed.py`` builds it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from build_wmt21 import build, default_corpus  # noqa: E402

#: Each persistent cache by the prefix of its files' names in the cache directory.
CACHES = {
    "thesaurus index": "thesaurus-",
    "token keys": "tokens-",
    "token table": "keys-",
    "reference data": "references-",
}


def timed(command: list[str], env: dict[str, str], remove: str | None, folder: Path) -> float:
    if remove:
        for path in folder.glob(remove + "*"):
            path.unlink()
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--gamma", type=float, default=0.0)
    parser.add_argument("--corpus", type=Path, default=None)
    args = parser.parse_args()
    args.corpus = args.corpus or default_corpus()
    work = HERE / "work" / f"speed-{args.turns}"
    if not (work / "submissions" / "ALL" / "submission.jsonl").exists():
        build(args.corpus, work, turns=args.turns)
    folder = Path(tempfile.mkdtemp(prefix="cache-ab-"))
    env = dict(os.environ, SCORER_CACHE_DIR=str(folder))
    command = [
        sys.executable,
        "-m",
        "scorer",
        "score",
        "--data",
        str(work / "data"),
        "--submission",
        str(work / "submissions" / "ALL"),
        "--output",
        str(folder / "out"),
        "--quiet",
    ]
    if args.gamma:
        (folder / "penalty.toml").write_text(
            f"[meteor]\ngamma = {args.gamma}\nbeta = 3.0\n", encoding="utf-8"
        )
        command += ["--config", str(folder / "penalty.toml")]
    timed(command, env, None, folder)  # fills every cache
    print(f"{args.turns:,} turns, gamma {args.gamma}, {args.runs} runs a side, interleaved")
    for name, prefix in CACHES.items():
        warm, without = [], []
        for _ in range(args.runs):
            warm.append(timed(command, env, None, folder))
            without.append(timed(command, env, prefix, folder))
        a, b = statistics.median(warm), statistics.median(without)
        print(f"  {name:<16} with {a:6.3f} s   without {b:6.3f} s   gain {100 * (b - a) / b:5.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
