"""The matching stages of contract section 4, each one object.

A stage relates a candidate token and a reference token when their keys at
that stage intersect. ``exact``: the key is the token itself. ``lemma``: its
pymorphy3 lemma set. ``synonym``: its RuWordNet synset set. Each
:class:`Stage` owns how its key function is made from a run's token memo,
its title for pages, the name of its keys in explanations, and what it needs
(morphology, thesaurus), so a run loads only that and nothing else compares
stage names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from scorer.metric.engine.links import KeyFunction


class TokenKeys(Protocol):
    """A run's memo of token keys (:class:`scorer.metric.matcher.Matcher`)."""

    @property
    def lemmas(self) -> Mapping[str, frozenset[str]]: ...

    @property
    def synsets(self) -> Mapping[str, frozenset[str]]: ...


@dataclass(frozen=True)
class Stage:
    name: str
    title: str  # what a link of this stage means, for pages
    key_name: str | None  # what its keys are called in explanations; None: the token itself
    needs_morphology: bool
    needs_thesaurus: bool
    keys_from: Callable[[TokenKeys], KeyFunction]  # the stage's key function over a run's memo

    @property
    def is_exact(self) -> bool:
        return self.key_name is None


EXACT = Stage("exact", "exact match", None, False, False, lambda memo: None)
LEMMA = Stage("lemma", "same lemma", "lemma", True, False, lambda memo: memo.lemmas.__getitem__)
SYNONYM = Stage("synonym", "RuWordNet synonym", "synset", True, True, lambda memo: memo.synsets.__getitem__)

#: Every stage by name, in the default order.
REGISTRY: dict[str, Stage] = {stage.name: stage for stage in (EXACT, LEMMA, SYNONYM)}
#: Every known stage name, in the default order.
STAGE_NAMES: tuple[str, ...] = tuple(REGISTRY)


def stage_plan(names: tuple[str, ...]) -> tuple[Stage, ...]:
    """The stages named, in order; ValueError for a name that is not a stage."""
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown METEOR stage {unknown[0]!r}")
    return tuple(REGISTRY[n] for n in names)


def stages_line(stages: tuple[str, ...]) -> str:
    """What every surface says of the stages that ran: ``exact, lemma (synonym: off)``."""
    off = [s for s in STAGE_NAMES if s not in stages]
    return ", ".join(stages) + (f" ({', '.join(off)}: off)" if off else "")


def needs_thesaurus(stages: tuple[str, ...]) -> bool:
    return any(stage.needs_thesaurus for stage in stage_plan(stages))


def needs_morphology(stages: tuple[str, ...]) -> bool:
    return any(stage.needs_morphology for stage in stage_plan(stages))


def without_thesaurus(stages: tuple[str, ...]) -> tuple[str, ...]:
    """``stages`` less those that need the thesaurus."""
    return tuple(stage.name for stage in stage_plan(stages) if not stage.needs_thesaurus)
