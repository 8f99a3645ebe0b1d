"""The process model's cases, many times each (contract section 3): a worker killed with SIGKILL mid-run,
and SIGTERM / SIGINT sent to the process group as the workers start and eight times 10 ms apart; and the run's
own process killed with SIGKILL mid-run, which must leave no worker behind.

    python scripts/process_model_check.py [--tries 30]

Each case runs a penalty-mode score of 39,600 turns with ``--jobs 2`` (this process and one worker, the pure
engine, a few seconds) and prints how many tries ended as the contract says (exit 2 naming the worker; 143 or
130 with one line on stderr; for the run killed, every worker gone at once: they hold the run's stderr, so it
reaches its end only when the last one has ended), and every other ending. Exit 0 when all did.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from helpers import big_split  # noqa: E402  the tests' own data maker


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def one(command: list[str], case: str, out: Path) -> str:
    env = {**os.environ, "SCORER_PURE_PYTHON": "1"}
    process = subprocess.Popen(
        [*command, "--output", str(out)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not children(process.pid) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)
    found = children(process.pid)
    if case in ("kill", "killrun"):
        time.sleep(0.3)
        now = children(process.pid)  # from an empty cache, the first pool's worker may have ended meanwhile
        try:
            worker = now[0]
            os.kill(worker if case == "kill" else process.pid, signal.SIGKILL)
        except (IndexError, ProcessLookupError):  # no worker, or it ended meanwhile: the case did not happen
            os.killpg(process.pid, signal.SIGKILL)  # the whole group: a worker keeps stderr open
            process.communicate()
            return f"no worker to kill (children then: {found}, now: {now})"
    else:
        sig = signal.SIGTERM if case.startswith("term") else signal.SIGINT
        for _ in range(8 if case.endswith("x8") else 1):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                break
            time.sleep(0.01)
    try:
        _, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        if os.environ.get("DUMP_HANG"):
            subprocess.run([os.environ["DUMP_HANG"], "dump", "--pid", str(process.pid)])
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return "hang"
    if case == "killrun":  # stderr ended, so did every worker
        return "ok" if process.returncode == -signal.SIGKILL else f"exit {process.returncode}"
    lines = err.splitlines()
    expected = {"kill": 2, "term": 143, "termx8": 143, "int": 130, "intx8": 130}[case]
    if process.returncode == expected and len(lines) == 1 and "Traceback" not in err:
        if case != "kill":
            return "ok"
        verdict = (out / "scores.json").read_text(encoding="utf-8") if (out / "scores.json").exists() else ""
        if (
            "killed by SIGKILL" in lines[0] and '"status": "error"' in verdict
        ):  # the verdict, in scores.json too
            return "ok"
    return f"exit {process.returncode}: {' / '.join(lines)[:300]}"


def penalty_command(root: Path) -> list[str]:
    """A penalty-mode score of 39,600 turns with two jobs (written under ``root``): about 2 s of scoring."""
    data, sub = big_split(root, copies=600)
    config = root / "penalty.toml"
    config.write_text("[meteor]\ngamma = 0.5\nbeta = 3.0\n", encoding="utf-8")
    return [
        sys.executable,
        "-m",
        "scorer",
        "score",
        "--data",
        str(data),
        "--submission",
        str(sub),
        "--config",
        str(config),
        "--jobs",
        "2",
        "--quiet",
        "--no-synonyms",
    ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tries", type=int, default=30)
    parser.add_argument("--cases", default="kill,term,int,termx8,intx8,killrun")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        command = penalty_command(root)
        failed = False
        for case in options.cases.split(","):
            outcomes = Counter(one(command, case, root / f"out-{case}-{k}") for k in range(options.tries))
            print(f"{case:7} {outcomes['ok']}/{options.tries} as the contract says", flush=True)
            for outcome, count in outcomes.items():
                if outcome != "ok":
                    failed = True
                    print(f"        {count} x {outcome}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
