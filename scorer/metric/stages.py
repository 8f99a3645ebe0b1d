"""The matching stages of contract section 4, each one object.

A stage relates a candidate token and a reference token when their keys at
that stage intersect. ``exact``: the key is the token itself. ``lemma``: its
pymorphy3 lemma set. ``synonym``: its RuWordNet synset set. Each
:class:`Stage` owns its key function, its title and colour for pages, the
name of its keys in explanations, and what it needs (morphology, thesaurus),
so a run loads only that and nothing else compares stage names. A new stage
is one :func:`register` call (docs/architecture.md shows one): the matcher's
memo, the token cache, the signature and the pages take it from here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from scorer.metric.engine.links import KeyFunction

from . import morphology


class TokenKeys(Protocol):
    """What a stage's key function may use of a run (:class:`scorer.metric.matcher.Matcher`): its thesaurus,
    the memo of every stage's keys by stage name, and where to note a word the morphology cannot analyse."""

    @property
    def thesaurus(self) -> Any: ...

    @property
    def memos(self) -> Mapping[str, Mapping[str, frozenset[str]]]: ...

    @property
    def unanalysed(self) -> dict[str, str]: ...


@dataclass(frozen=True)
class Stage:
    """One matching stage: a plug-in. Its key function gives a token's keys (two tokens are related at the
    stage when their keys intersect); the run memoises them (and keeps them across runs in the token cache),
    the signature names the stage, and pages colour its links with ``css``."""

    name: str
    title: str  # what a link of this stage means, for pages
    key_name: str | None  # what its keys are called in explanations; None: the token itself
    needs_morphology: bool
    needs_thesaurus: bool
    #: A token's keys, given the run (None: the exact stage, whose key is the token itself).
    keys: Callable[[TokenKeys, str], frozenset[str]] | None
    css: str = "background:#eeeeee"  # how pages mark its links
    #: What the stage matches, in the words of a competition's pages, by language (``en``, ``ru``); a language
    #: it does not name describes it by its name.
    described: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_exact(self) -> bool:
        return self.keys is None

    def keys_from(self, run: TokenKeys) -> KeyFunction:
        """The stage's key function over the run's memo; None for the exact stage."""
        return None if self.keys is None else run.memos[self.name].__getitem__


def _lemmas(run: TokenKeys, token: str) -> frozenset[str]:
    """pymorphy3's normal forms over all parses (a word it cannot analyse is its own lemma, and noted)."""
    found, why = morphology.analyse(token)
    if why is not None:
        run.unanalysed[token] = why
    return found


def _synsets(run: TokenKeys, token: str) -> frozenset[str]:
    """The RuWordNet synsets of a single-word sense equal to one of the token's lemmas."""
    if run.thesaurus is None:
        raise ValueError("the synonym stage needs a thesaurus")
    found = [run.thesaurus.synsets(lemma) for lemma in run.memos["lemma"][token]]
    return frozenset().union(*found) if found else frozenset()


EXACT = Stage(
    "exact",
    "exact match",
    None,
    False,
    False,
    None,
    "background:#c8e6c9;border-bottom:2px solid #2e7d32",
    {"en": "equal words", "ru": "совпадающие слова"},
)
LEMMA = Stage(
    "lemma",
    "same lemma",
    "lemma",
    True,
    False,
    _lemmas,
    "background:#bbdefb;border-bottom:2px dashed #1565c0",
    {"en": "words sharing a lemma (pymorphy3)", "ru": "слова с общей леммой (pymorphy3)"},
)
SYNONYM = Stage(
    "synonym",
    "RuWordNet synonym",
    "synset",
    True,
    True,
    _synsets,
    "background:#ffe0b2;border-bottom:2px dotted #e65100",
    {"en": "synonyms (RuWordNet)", "ru": "синонимы (RuWordNet)"},
)

#: Every stage by name: the contract's three, then any registered (:func:`register`). A mutable registry at
#: module level on purpose: it is the plugin point for stages (docs/architecture.md, "Adding a stage").
REGISTRY: dict[str, Stage] = {stage.name: stage for stage in (EXACT, LEMMA, SYNONYM)}
#: The contract's stage names, in the default order.
STAGE_NAMES: tuple[str, ...] = tuple(REGISTRY)


def register(stage: Stage) -> Stage:
    """Add a stage to the registry, so that a configuration may name it (``[meteor] stages``); the name must
    be new, a word of letters, digits and ``_``."""
    if stage.name in REGISTRY:
        raise ValueError(f"a stage named {stage.name!r} is registered already")
    if not stage.name.isidentifier() or stage.keys is None:
        raise ValueError("a new stage needs a name made of letters, digits and _, and a key function")
    REGISTRY[stage.name] = stage
    return stage


def stage_plan(names: tuple[str, ...]) -> tuple[Stage, ...]:
    """The stages named, in order; ValueError for a name that is not a stage."""
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown METEOR stage {unknown[0]!r}")
    return tuple(REGISTRY[n] for n in names)


def stages_line(stages: tuple[str, ...]) -> str:
    """What every surface says of the stages that ran: ``exact, lemma (synonym: off)``."""
    off = [s for s in REGISTRY if s not in stages and s in STAGE_NAMES]
    return ", ".join(stages) + (f" ({', '.join(off)}: off)" if off else "")


def needs_thesaurus(stages: tuple[str, ...]) -> bool:
    return any(stage.needs_thesaurus for stage in stage_plan(stages))


def needs_morphology(stages: tuple[str, ...]) -> bool:
    return any(stage.needs_morphology for stage in stage_plan(stages))


def without_thesaurus(stages: tuple[str, ...]) -> tuple[str, ...]:
    """``stages`` less those that need the thesaurus."""
    return tuple(stage.name for stage in stage_plan(stages) if not stage.needs_thesaurus)
