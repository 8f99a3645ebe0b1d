"""The matching stages of contract section 4, by name.

A stage relates a candidate token and a reference token. ``exact``: the
tokens are equal. ``lemma``: their pymorphy3 lemma sets intersect.
``synonym``: their RuWordNet synset sets intersect. Each stage says what it
needs, so a run loads only that (no thesaurus without ``synonym``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

#: A token's keys at one stage; None stands for the exact stage (the token itself).
KeyFunction = Callable[[str], frozenset[str]] | None


@dataclass(frozen=True)
class Stage:
    name: str
    needs_morphology: bool
    needs_thesaurus: bool


REGISTRY: dict[str, Stage] = {}


def register(stage: Stage) -> Stage:
    REGISTRY[stage.name] = stage
    return stage


EXACT = register(Stage("exact", False, False))      # equal tokens
LEMMA = register(Stage("lemma", True, False))       # pymorphy3 lemma sets intersect
SYNONYM = register(Stage("synonym", True, True))    # RuWordNet synset sets intersect

#: Every known stage name, in the default order.
STAGE_NAMES: tuple[str, ...] = tuple(REGISTRY)


def stages_line(stages: tuple[str, ...]) -> str:
    """What every surface says of the stages that ran: ``exact, lemma (synonym: off)``."""
    off = [s for s in STAGE_NAMES if s not in stages]
    return ", ".join(stages) + (f" ({', '.join(off)}: off)" if off else "")


def needs_thesaurus(stages: tuple[str, ...]) -> bool:
    return any(REGISTRY[s].needs_thesaurus for s in stages)


def needs_morphology(stages: tuple[str, ...]) -> bool:
    return any(REGISTRY[s].needs_morphology for s in stages)
