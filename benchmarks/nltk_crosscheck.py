"""Cross-check the exact stage and the fragmentation penalty against NLTK's METEOR.

For every system of the WMT21 en-ru corpus and every segment, both
implementations score the hypothesis against reference A on the same tokens
(this scorer's tokeniser), with the exact stage only, alpha 0.9, beta 3,
gamma 0.5. NLTK's stem and synonym stages are disabled (identity stemmer,
empty WordNet), so its alignment is its exact stage alone.

Prints how often the scores agree (to 1e-9) and, where they differ, whether
this scorer found at least as many matches and no more chunks.

    python benchmarks/nltk_crosscheck.py [--corpus DIR]   # default: $WMT21_DIR
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nltk.translate.meteor_score import _count_chunks, _enum_align_words, _generate_enums, single_meteor_score

from scorer.metric.matcher import Matcher
from scorer.metric.meteor import MeteorParams, meteor_tokens
from scorer.metric.text import tokenise

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_wmt21 import SYSTEMS, default_corpus  # noqa: E402


class _Identity:
    def stem(self, word: str) -> str:
        return word


class _NoSynonyms:
    def synsets(self, word: str, pos=None) -> list:
        return []


def nltk_alignment(hyp: list[str], ref: list[str]) -> tuple[int, int]:
    enum_hyp, enum_ref = _generate_enums(hyp, ref, preprocess=lambda w: w)
    matches, _, _ = _enum_align_words(enum_hyp, enum_ref, stemmer=_Identity(), wordnet=_NoSynonyms())
    return len(matches), _count_chunks(matches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        default=None,
    )
    args = parser.parse_args()
    args.corpus = args.corpus or default_corpus()
    refs = (args.corpus / "newstest2021.en-ru.ref.A.ru").read_text(encoding="utf-8").rstrip("\n").split("\n")
    params = MeteorParams(alpha=0.9, beta=3.0, gamma=0.5, stages=("exact",))
    matcher = Matcher(None, persistent=False)
    total = agree = more_matches = fewer_chunks = more_chunks = fewer_matches = 0
    example = None
    for system in SYSTEMS:
        hyps = (
            (args.corpus / f"newstest2021.en-ru.hyp.{system}.ru")
            .read_text(encoding="utf-8")
            .rstrip("\n")
            .split("\n")
        )
        for hyp_text, ref_text in zip(hyps, refs):
            hyp, ref = tokenise(hyp_text), tokenise(ref_text)
            ours = meteor_tokens(hyp, ref, matcher, params)
            theirs = single_meteor_score(
                ref,
                hyp,
                preprocess=lambda w: w,
                stemmer=_Identity(),
                wordnet=_NoSynonyms(),
                alpha=0.9,
                beta=3.0,
                gamma=0.5,
            )
            total += 1
            if abs(ours.score - theirs) <= 1e-9:
                agree += 1
                continue
            m, chunks = nltk_alignment(hyp, ref)
            if ours.matches > m:
                more_matches += 1
            elif ours.matches == m and ours.chunks < chunks:
                fewer_chunks += 1
            elif ours.matches == m:
                more_chunks += 1
                example = example or (system, hyp_text, ref_text, ours.chunks, chunks)
            else:
                fewer_matches += 1
                print(f"  FEWER MATCHES on {system}: {hyp_text!r} / {ref_text!r}")
    print(f"segments: {total} ({len(SYSTEMS)} systems x {total // len(SYSTEMS)})")
    print(f"scores agree to 1e-9: {agree} ({100 * agree / total:.2f}%)")
    print(f"differ, this scorer has more matches: {more_matches}")
    print(f"differ, same matches and fewer chunks: {fewer_chunks}")
    print(f"differ, same matches and more chunks: {more_chunks}")
    print(f"differ, fewer matches: {fewer_matches}")
    if example:
        system, hyp_text, ref_text, ours, theirs = example
        print(
            f"first case of more chunks ({system}; {ours} chunks here, {theirs} in NLTK):\n"
            f"  hyp: {hyp_text}\n  ref: {ref_text}"
        )


if __name__ == "__main__":
    main()
