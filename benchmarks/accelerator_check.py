"""The compiled engine against the pure-Python engine on real text: byte-identical outputs.

Builds the WMT21 en-ru leaderboard data (``build_wmt21.py``, 9,018 turns:
the corpus once per system) when missing, scores its ``ALL`` submission
(every system's output once, two reference variants a turn: 18,036 pairs) once with the compiled core and
once with ``SCORER_PURE_PYTHON=1``,
and compares ``details.csv`` and ``scores.json`` byte for byte. Exit 0 when
identical, 1 otherwise; prints the time of each run::

    python benchmarks/accelerator_check.py
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from build_wmt21 import build, default_corpus  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=HERE / "work" / "wmt21-all")
    args = parser.parse_args()
    args.corpus = args.corpus or default_corpus()
    if not (args.work / "submissions" / "ALL" / "submission.jsonl").exists():
        build(args.corpus, args.work, turns=9 * 1002)
    out = Path(tempfile.mkdtemp(prefix="accelerator-check-"))
    (out / "penalty.toml").write_text("[meteor]\ngamma = 0.5\n", encoding="utf-8")
    same = True
    for mode, config in (("default", []), ("penalty", ["--config", str(out / "penalty.toml")])):
        for name, pure in (("compiled", "0"), ("pure", "1")):
            env = dict(os.environ, SCORER_PURE_PYTHON=pure)
            version = subprocess.run(
                [sys.executable, "-m", "scorer", "--version"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            start = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "scorer",
                    "score",
                    "--data",
                    str(args.work / "data"),
                    "--submission",
                    str(args.work / "submissions" / "ALL"),
                    "--output",
                    str(out / mode / name),
                    "--quiet",
                    *config,
                ],
                env=env,
                check=True,
            )
            print(f"{mode:<8} {name:<9} {time.perf_counter() - start:6.2f} s   {version}")
        equal = all(
            filecmp.cmp(out / mode / "compiled" / f, out / mode / "pure" / f, shallow=False)
            for f in ("details.csv", "scores.json")
        )
        rows = sum(1 for _ in open(out / mode / "pure" / "details.csv", encoding="utf-8")) - 1
        print(
            f"{mode}: details.csv ({rows:,} turns) and scores.json "
            f"{'byte-identical' if equal else 'DIFFERENT'}"
        )
        same = same and equal
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
