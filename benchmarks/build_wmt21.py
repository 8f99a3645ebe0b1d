"""Build a leaderboard-shaped benchmark from the WMT21 en-ru corpus.

Consecutive segments are grouped into dialogues of 1-5 turns (types cycle
through the four dialogue types); references A and B are the two variants of
each turn; each system's output is one participant's submission, with
deterministic pseudo-random perplexities. ``--repeat N`` repeats the corpus
N times (dialog ids suffixed) to scale the number of turns. One more
submission, ``ALL``, repeats the systems instead: its k-th block of 1,002
turns holds the answers of system k mod 9, so a scaled-up benchmark is not
one system's text over and over.

    python benchmarks/build_wmt21.py --corpus "$WMT21_DIR" --out benchmarks/work/wmt21
"""

from __future__ import annotations

import argparse
import json
import os
import random
from pathlib import Path

TYPES = ["Text2Text", "Image2Text", "Audio2Text", "Image-Audio2Text"]
SYSTEMS = [
    "Facebook-AI",
    "Manifold",
    "NVIDIA-NeMo",
    "NiuTrans",
    "Online-A",
    "Online-B",
    "Online-G",
    "Online-W",
    "Online-Y",
]


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").rstrip("\n").split("\n")


def group_sizes(n: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    sizes, left = [], n
    while left:
        size = min(left, rng.randint(1, 5))
        sizes.append(size)
        left -= size
    return sizes


def default_corpus() -> Path:
    """The WMT21 en-ru folder: ``$WMT21_DIR`` (benchmarks/README.md says where the files come from)."""
    found = os.environ.get("WMT21_DIR")
    if not found:
        raise SystemExit(
            "set WMT21_DIR to the WMT21 en-ru folder, or give --corpus (see benchmarks/README.md)"
        )
    return Path(found)


def build(
    corpus: Path, out: Path, repeat: int = 1, systems: list[str] = SYSTEMS, turns: int | None = None
) -> None:
    src = read_lines(corpus / "newstest2021.en-ru.src.en")
    ref_a = read_lines(corpus / "newstest2021.en-ru.ref.A.ru")
    ref_b = read_lines(corpus / "newstest2021.en-ru.ref.B.ru")
    hyps = {s: read_lines(corpus / f"newstest2021.en-ru.hyp.{s}.ru") for s in systems}
    n = len(src)
    total = turns if turns is not None else n * repeat
    index = [k % n for k in range(total)]
    sizes = group_sizes(total, 21)
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    dialogues, answers, spans = [], [], []
    start = 0
    for d, size in enumerate(sizes):
        rows = index[start : start + size]
        dialog_id = f"wmt-{d:06d}"
        dialogues.append(
            {
                "dialog_id": dialog_id,
                "type": TYPES[d % 4],
                "turns": [[{"type": "text", "content": src[k]}] for k in rows],
            }
        )
        answers.append({"dialog_id": dialog_id, "references": [[ref_a[k], ref_b[k]] for k in rows]})
        spans.append((dialog_id, rows))
        start += size
    write_jsonl(data / "dialogues.jsonl", dialogues)
    write_jsonl(data / "answers.jsonl", answers)
    for s_index, system in enumerate(systems):
        rng = random.Random(1000 + s_index)
        folder = out / "submissions" / system
        folder.mkdir(parents=True, exist_ok=True)
        write_jsonl(
            folder / "submission.jsonl",
            [{"dialog_id": d, "answers": [hyps[system][k] for k in rows]} for d, rows in spans],
        )
        ppl = {d: [round(rng.uniform(1.5, 60.0), 3) for _ in rows] for d, rows in spans}
        (folder / "ppl_output.json").write_text(json.dumps(ppl), encoding="utf-8")
    rng = random.Random(999)
    folder = out / "submissions" / "ALL"
    folder.mkdir(parents=True, exist_ok=True)
    rows_of = [
        [(k, systems[(start + o) // n % len(systems)]) for o, k in enumerate(rows)]
        for start, (_, rows) in zip(_starts(sizes), spans)
    ]
    write_jsonl(
        folder / "submission.jsonl",
        [{"dialog_id": d, "answers": [hyps[s][k] for k, s in rows]} for (d, _), rows in zip(spans, rows_of)],
    )
    ppl = {d: [round(rng.uniform(1.5, 60.0), 3) for _ in rows] for d, rows in spans}
    (folder / "ppl_output.json").write_text(json.dumps(ppl), encoding="utf-8")


def _starts(sizes: list[int]) -> list[int]:
    starts, at = [], 0
    for size in sizes:
        starts.append(at)
        at += size
    return starts


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        default=None,
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "work" / "wmt21")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--turns", type=int, help="exact number of turns (overrides --repeat)")
    parser.add_argument("--systems", nargs="*", default=SYSTEMS)
    args = parser.parse_args()
    args.corpus = args.corpus or default_corpus()
    build(args.corpus, args.out, args.repeat, args.systems, args.turns)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
