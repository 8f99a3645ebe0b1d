"""Rewrite tests/data/search_nodes.json: the search's node counts on the fixed corpus of tests/search_corpus.py.

    python scripts/pin_search_nodes.py

Run it only after a deliberate change to the search's order or pruning: the budget counts these nodes.
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
from scorer.metric.matcher import Matcher  # noqa: E402
from scorer.metric.thesaurus import load_thesaurus  # noqa: E402
from search_corpus import node_counts  # noqa: E402
from test_alignment import STAGE_ORDERS  # noqa: E402

matcher = Matcher(load_thesaurus(ROOT / "tests" / "data" / "rwn-mini"), persistent=False)
counts, digest = node_counts(matcher, STAGE_ORDERS)
out = ROOT / "tests" / "data" / "search_nodes.json"
out.write_text(json.dumps({"links_sha256": digest, "nodes": counts}, separators=(",", ":")) + "\n")
print(f"{out}: {len(counts)} pairs, {sum(counts)} nodes, {sum(1 for n in counts if n)} searched")
