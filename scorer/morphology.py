"""Lemma sets from pymorphy3 (the ``lemma`` stage of SPEC section 4).

The analyser runs without pymorphy3's probability estimator: it only
reorders and rescores parses, and the stage uses the set of every parse's
normal form, so leaving it out changes no lemma set and saves a third of
the time. With pymorphy3's ``fast`` extra (the C DAWG) a parse is about
eight times faster still; the results are the same.
"""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def analyzer():
    import pymorphy3

    return pymorphy3.MorphAnalyzer(lang="ru", probability_estimator_cls=None)


@lru_cache(maxsize=1_000_000)
def lemmas(token: str) -> frozenset[str]:
    """The ``normal_form`` of every pymorphy3 parse of ``token``, ``ё`` -> ``е``.

    ``token`` is expected already normalised (see :mod:`scorer.text`).
    """
    return frozenset(form.replace("ё", "е") for form in analyzer().normal_forms(token))


def morphology_id() -> str:
    """Versions of pymorphy3 and its Russian dictionary, for the signature."""
    from importlib.metadata import version

    return f"pymorphy3-{version('pymorphy3')}+dicts-ru-{version('pymorphy3-dicts-ru')}"
