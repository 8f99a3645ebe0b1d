"""Lemma sets from pymorphy3 (the ``lemma`` stage of contract section 4), under a guard.

The analyser runs without pymorphy3's probability estimator: it only
reorders and rescores parses, and the stage uses the set of every parse's
normal form, so leaving it out changes no lemma set and saves a third of
the time. Its parses are plain tuples (``result_type=None``): the stage reads
only their normal form, which is the same, and a run makes no ``Parse``
object (a seventh less time a word). With pymorphy3's ``fast`` extra (the C DAWG) a parse is about
eight times faster still; the results are the same.

No token can make the analysis raise (contract section 6, "no input ends in
exit 3"). pymorphy3 recurses once per known prefix of an unknown word, and
its time grows with the square of the word's length beyond a few hundred
characters; it raises ``ValueError`` on letters without a Unicode name. So
a token longer than :data:`MAX_ANALYSED_CHARS` is not analysed, the analysis
runs with room for its recursion, and a token that still cannot be analysed
is its own lemma. :func:`analyse` says why, and the run lists such words
among its warnings.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from importlib.util import find_spec
from typing import Any

#: Longer tokens are their own lemma, unanalysed (no Russian word comes near; time stays linear below).
MAX_ANALYSED_CHARS = 100
#: The grammeme of a parse that reads the token as an abbreviation: such a parse gives no other lemma.
ABBREVIATION = "Abbr"
#: The lemma rule's version, part of :func:`morphology_id` (the signature and the token cache's key).
LEMMA_RULE = "abbr-self"
#: The recursion limit the analysis runs under (pymorphy3 needs one frame or so per prefix).
ANALYSIS_RECURSION_LIMIT = 4000


@lru_cache(maxsize=1)
def analyzer() -> Any:
    import pymorphy3

    return pymorphy3.MorphAnalyzer(lang="ru", probability_estimator_cls=None, result_type=None)


@lru_cache(maxsize=1_000_000)
def analyse(token: str) -> tuple[frozenset[str], str | None]:
    """(lemma set, None) of ``token``; or ``({token}, why)`` when it was not or could not be analysed.

    The lemma set is the ``normal_form`` of every pymorphy3 parse, ``ё`` ->
    ``е``, except that a parse tagged ``Abbr`` gives its ``normal_form`` only when it is the token
    itself (contract section 4: an abbreviation is not expanded, «к» is not «как», «т» not «так»);
    ``token`` is expected already normalised (see :mod:`scorer.metric.text`).
    """
    if len(token) > MAX_ANALYSED_CHARS:
        return frozenset((token,)), f"longer than {MAX_ANALYSED_CHARS} characters"
    limit = sys.getrecursionlimit()
    try:
        if limit < ANALYSIS_RECURSION_LIMIT:
            sys.setrecursionlimit(ANALYSIS_RECURSION_LIMIT)
        found = frozenset(
            form
            for _, tag, normal_form, *_ in analyzer().parse(token)
            if (form := normal_form.replace("ё", "е")) == token or ABBREVIATION not in tag
        ) or frozenset((token,))
    except RecursionError:
        return frozenset((token,)), "pymorphy3 recursed too deep"
    except Exception as exc:  # noqa: BLE001 - any failure on a word makes it its own lemma
        return frozenset((token,)), f"pymorphy3 failed: {type(exc).__name__}: {str(exc)[:60]}"
    finally:
        if sys.getrecursionlimit() != limit:
            sys.setrecursionlimit(limit)
    return found, None


def lemmas(token: str) -> frozenset[str]:
    """The lemma set of :func:`analyse` (a word that cannot be analysed is its own lemma)."""
    return analyse(token)[0]


@lru_cache(maxsize=1)
def morphology_id() -> str:
    """Versions of pymorphy3 and its Russian dictionary and of the lemma rule, for the signature."""
    return (
        f"pymorphy3-{installed_version('pymorphy3', 'pymorphy3')}"
        f"+dicts-ru-{installed_version('pymorphy3_dicts_ru', 'pymorphy3-dicts-ru')}+{LEMMA_RULE}"
    )


def installed_version(package: str, distribution: str) -> str:
    """The installed version of ``distribution``, which provides the import package ``package``: read off the
    name of the one ``<name>-<version>.dist-info`` folder beside the package (a run would otherwise import
    ``importlib.metadata`` for it, 15-20 ms), else asked of ``importlib.metadata``."""
    spec = find_spec(package)
    if spec is not None and spec.origin:
        prefix = distribution.replace("-", "_").lower() + "-"
        folder = os.path.dirname(os.path.dirname(spec.origin))
        try:
            found = [
                name[len(prefix) : -len(".dist-info")]
                for name in os.listdir(folder)
                if name.lower().startswith(prefix) and name.endswith(".dist-info")
            ]
        except OSError:
            found = []
        if len(found) == 1 and found[0]:
            return found[0]
    from importlib.metadata import version

    return version(distribution)
