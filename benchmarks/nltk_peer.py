"""The alternative a user would otherwise build: NLTK's METEOR made Russian.

NLTK's ``meteor_score`` with a pymorphy3 stemmer (first parse's normal form,
memoised) and a RuWordNet adapter (XML directory; a word's synsets are those
with a single-word sense equal to one of its lemmas). Reads the same files as
the scorer and writes one METEOR per turn, the best over the variants, so
the two programs do the same job::

    python benchmarks/nltk_peer.py --data DIR --submission DIR --output FILE [--thesaurus DIR]

Only a peer for timing: it is not the contract's METEOR (NLTK's alignment is
greedy, its stemmer takes one parse).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import unicodedata
import xml.etree.ElementTree as ET
from functools import lru_cache
from pathlib import Path

import pymorphy3
from nltk.translate.meteor_score import meteor_score


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower().replace("ё", "е")


def tokenise(text: str) -> list[str]:
    return re.findall(r"\w+", normalise(text))


class PymorphyStemmer:
    def __init__(self) -> None:
        self.morph = pymorphy3.MorphAnalyzer(lang="ru")
        self.stem = lru_cache(maxsize=None)(self._stem)

    def _stem(self, word: str) -> str:
        return self.morph.parse(word)[0].normal_form.replace("ё", "е")

    def lemmas(self, word: str) -> set[str]:
        return {p.normal_form.replace("ё", "е") for p in self.morph.parse(word)}


class _Lemma:
    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class _Synset:
    def __init__(self) -> None:
        self.words: list[_Lemma] = []

    def lemmas(self) -> list[_Lemma]:
        return self.words


class RuWordNetAdapter:
    """Just enough of NLTK's WordNet reader for ``meteor_score``."""

    def __init__(self, directory: Path, stemmer: PymorphyStemmer) -> None:
        self.stemmer = stemmer
        self.by_lemma: dict[str, list[_Synset]] = {}
        for name in ("synsets.N.xml", "synsets.V.xml", "synsets.A.xml"):
            path = directory / name
            if not path.exists():
                continue
            for element in ET.parse(path).getroot().iter("synset"):
                synset = _Synset()
                for sense in element.iter("sense"):
                    text = normalise(sense.text or "").strip()
                    if text and " " not in text:
                        synset.words.append(_Lemma(text))
                        self.by_lemma.setdefault(text, []).append(synset)
        self.synsets = lru_cache(maxsize=None)(self._synsets)

    def _synsets(self, word: str) -> list[_Synset]:
        found: list[_Synset] = []
        for lemma in self.stemmer.lemmas(word):
            found.extend(self.by_lemma.get(lemma, ()))
        return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--submission", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--thesaurus", type=Path, default=os.environ.get("RUWORDNET_PATH"))
    parser.add_argument("--gamma", type=float, default=0.0)
    args = parser.parse_args()
    stemmer = PymorphyStemmer()
    wordnet = RuWordNetAdapter(args.thesaurus, stemmer)
    answers = {}
    with open(args.submission / "submission.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            answers[row["dialog_id"]] = row["answers"]
    scores = []
    with open(args.data / "answers.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            for turn, variants in enumerate(row["references"]):
                hyp = tokenise(answers[row["dialog_id"]][turn])
                refs = [tokenise(v) for v in variants]
                score = meteor_score(
                    refs,
                    hyp,
                    preprocess=lambda w: w,
                    stemmer=stemmer,
                    wordnet=wordnet,
                    alpha=0.9,
                    beta=3.0,
                    gamma=args.gamma,
                )
                scores.append(f"{row['dialog_id']}\t{turn}\t{score!r}\n")
    args.output.write_text("".join(scores), encoding="utf-8")


if __name__ == "__main__":
    main()
