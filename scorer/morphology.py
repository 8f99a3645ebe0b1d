"""Lemma sets from pymorphy3 (the ``lemma`` stage of SPEC section 4)."""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def _analyzer():
    import pymorphy3

    return pymorphy3.MorphAnalyzer(lang="ru")


@lru_cache(maxsize=1_000_000)
def lemmas(token: str) -> frozenset[str]:
    """The ``normal_form`` of every pymorphy3 parse of ``token``, ``ё`` -> ``е``.

    ``token`` is expected already normalised (see :mod:`scorer.text`).
    """
    return frozenset(p.normal_form.replace("ё", "е") for p in _analyzer().parse(token))


def morphology_id() -> str:
    """Versions of pymorphy3 and its Russian dictionary, for the signature."""
    from importlib.metadata import version

    return f"pymorphy3-{version('pymorphy3')}+dicts-ru-{version('pymorphy3-dicts-ru')}"
