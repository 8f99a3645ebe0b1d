"""Whole-process speed of ``scorer score`` against the NLTK peer, on real Russian text.

Builds a leaderboard-shaped benchmark from the WMT21 en-ru corpus (the
``ALL`` submission of ``build_wmt21.py``: systems repeated block by block,
two reference variants a turn), then times both programs as whole processes,
interleaved (the order alternates run by run), after one untimed warm-up run
of each; the scorer also from an empty cache directory (a new one each run:
no token cache, thesaurus index or reference cache). Prints every run, the
medians, peak memory (and per turn) and the ratios, warm and from an empty
cache::

    python benchmarks/speed.py                       # 20,000 turns, 5 runs each
    python benchmarks/speed.py --turns 10000 20000 40000 80000 --no-peer --runs 3
    python benchmarks/speed.py --jobs 1              # the scorer on one process
    python benchmarks/speed.py --gamma 0.5           # penalty mode (beta 3), both programs
    SCORER_PURE_PYTHON=1 python benchmarks/speed.py  # the scorer's pure-Python engine alone
    python benchmarks/speed.py --turns 200000 --no-peer --no-empty-cache --runs 1   # memory at 200,000 turns

``RUWORDNET_PATH`` must name the thesaurus (the peer reads its XML).
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


def run(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak resident MiB (the process and the workers it waited for)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed with exit code {process.returncode}")
    return elapsed, usage.ru_maxrss / 1024


def benchmark(
    turns: int,
    corpus: Path,
    work: Path,
    runs: int,
    peer: bool,
    jobs: int | None,
    gamma: float,
    empty_cache: bool,
) -> None:
    root = work / f"speed-{turns}"
    if not (root / "submissions" / "ALL" / "submission.jsonl").exists():
        build(corpus, root, turns=turns)  # every system of the corpus
    data, submission = root / "data", root / "submissions" / "ALL"
    env = dict(os.environ)
    out = Path(tempfile.mkdtemp(prefix="speed-"))
    config = out / "config.toml"
    config.write_text(f"[meteor]\ngamma = {gamma!r}\nbeta = 3.0\n", encoding="utf-8")
    scorer = [
        sys.executable,
        "-m",
        "scorer",
        "score",
        "--data",
        str(data),
        "--submission",
        str(submission),
        "--output",
        str(out / "scorer"),
        "--quiet",
        "--config",
        str(config),
    ] + (["--jobs", str(jobs)] if jobs else [])
    nltk = [
        sys.executable,
        str(HERE / "nltk_peer.py"),
        "--data",
        str(data),
        "--submission",
        str(submission),
        "--output",
        str(out / "peer.tsv"),
        "--gamma",
        repr(gamma),
    ]
    programs = (
        {"scorer": scorer}
        | ({"scorer, empty cache": scorer} if empty_cache else {})
        | ({"nltk-peer": nltk} if peer else {})
    )
    # the package's bytecode, as an install writes it (an editable checkout may run where none is written)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(HERE.parent / "scorer")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    for command in (scorer, nltk if peer else None):
        if command:
            run(command, env)  # warm-up: caches filled, files in the page cache
    times: dict[str, list[float]] = {name: [] for name in programs}
    memory: dict[str, float] = {name: 0.0 for name in programs}
    for r in range(runs):
        order = list(programs) if r % 2 == 0 else list(reversed(programs))
        for name in order:
            # the empty-cache runs each start from a cache directory of their own, empty
            run_env = (
                dict(env, SCORER_CACHE_DIR=tempfile.mkdtemp(dir=out))
                if name == "scorer, empty cache"
                else env
            )
            seconds, mib = run(programs[name], run_env)
            times[name].append(seconds)
            memory[name] = max(memory[name], mib)
            print(f"  {turns:>6} turns  run {r + 1}  {name:<20} {seconds:7.2f} s  {mib:7.0f} MiB", flush=True)
    pairs = 2 * turns
    print(f"{turns} turns, {pairs} pairs")
    for name in programs:
        median = statistics.median(times[name])
        print(
            f"  {name:<20} median {median:7.2f} s  ({pairs / median:8.0f} pairs/s)  peak "
            f"{memory[name]:.0f} MiB"
            f"  ({memory[name] * 1024 / turns:.2f} KiB a turn)"
        )
    if peer:
        ratio = statistics.median(times["nltk-peer"]) / statistics.median(times["scorer"])
        print(f"  ratio (nltk-peer / scorer, medians): {ratio:.2f}")
        if empty_cache:
            ratio = statistics.median(times["nltk-peer"]) / statistics.median(times["scorer, empty cache"])
            print(f"  ratio with an empty cache (nltk-peer / scorer, empty cache, medians): {ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=HERE / "work")
    parser.add_argument("--turns", type=int, nargs="+", default=[20_000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, help="passed to scorer --jobs (default: its own, every core)")
    parser.add_argument("--no-peer", dest="peer", action="store_false", help="time the scorer only")
    parser.add_argument(
        "--gamma", type=float, default=0.0, help="fragmentation penalty (beta 3) for both programs"
    )
    parser.add_argument(
        "--no-empty-cache",
        dest="empty_cache",
        action="store_false",
        help="skip the scorer's runs from an empty cache directory",
    )
    args = parser.parse_args()
    args.corpus = args.corpus or default_corpus()
    if not os.environ.get("RUWORDNET_PATH"):
        raise SystemExit("set RUWORDNET_PATH to the RuWordNet XML directory")
    from scorer.version import engine_description

    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; gamma {args.gamma}; {engine_description()}"
    )
    for turns in args.turns:
        benchmark(
            turns, args.corpus, args.work, args.runs, args.peer, args.jobs, args.gamma, args.empty_cache
        )


if __name__ == "__main__":
    main()
