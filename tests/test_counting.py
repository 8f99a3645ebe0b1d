"""Counting the matches (gamma = 0) gives exactly the staged alignment's count."""
import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.counting import Bag, count_matches
from scorer.meteor import MeteorParams, align, meteor_tokens
from scorer.text import tokenise

from conftest import PUBLIC

# Inflections sharing lemmas (стали: сталь+стать), RuWordNet synonyms across lemmas
# (говорить/сказать, зеленый/недозрелый), repeats.
WORDS = ["стали", "стал", "стать", "сталью", "сталь", "говорил", "говорила", "говорили", "сказал",
         "сказала", "заявил", "зеленый", "зеленые", "недозрелый", "незрелый", "дом", "дома", "на", "и"]
phrases = st.lists(st.sampled_from(WORDS), min_size=0, max_size=7)
STAGE_ORDERS = [("exact", "lemma", "synonym"), ("exact", "lemma"), ("exact",), ("lemma", "exact", "synonym"),
                ("synonym", "exact"), ("exact", "synonym", "lemma")]


def counted(cand, ref, matcher, stages, filtered=True):
    any_keys = matcher.any_keys(stages) if filtered else None
    return count_matches(Bag.of(cand), Bag.of(ref), matcher.stage_keys(stages), any_keys)


@settings(max_examples=400, deadline=None)
@given(phrases, phrases, st.sampled_from(STAGE_ORDERS))
def test_count_is_the_alignments_count_or_undecided(matcher, cand, ref, stages):
    m = counted(cand, ref, matcher, stages)
    aligned, _ = align(cand, ref, matcher, stages)
    assert m is None or m == len(aligned)
    unfiltered = counted(cand, ref, matcher, stages, filtered=False)
    assert unfiltered is None or unfiltered == len(aligned)
    params = MeteorParams(stages=stages)
    if cand and ref:
        assert meteor_tokens(cand, ref, matcher, params).score == \
            meteor_tokens(cand, ref, matcher, params, with_alignment=True).score


def test_count_by_hand(matcher):
    # exact: на, на (2); lemma: стали{сталь,стать} and стал{стать} x сталью{сталь}, стать{стать}
    # form one component whose maximum matching is 2; synonym: сказал-говорил (106876-V) -> 1.
    cand = tokenise("на на стали стал сказал")
    ref = tokenise("на на на сталью стать говорил")
    assert counted(cand, ref, matcher, ("exact", "lemma", "synonym")) == 5
    assert counted(cand, ref, matcher, ("exact", "lemma")) == 4
    assert counted(cand, ref, matcher, ("exact",)) == 2


def test_a_larger_lemma_component_uses_its_maximum_matching(matcher):
    # стали{сталь,стать}, стал{стать} x стать{стать}, сталью{сталь}: one component, maximum 2.
    assert counted(tokenise("стали стал"), tokenise("стать сталью"), matcher, ("exact", "lemma", "synonym")) == 2


def test_undecided_when_a_later_link_reaches_a_larger_component(matcher):
    # говорил, говорила both fit говорили (lemma); which one is left decides nothing here, but a
    # synonym link (говорила-сказал) reaches the component, so counting hands over to the alignment.
    cand, ref = tokenise("говорил говорила"), tokenise("говорили сказал")
    assert counted(cand, ref, matcher, ("exact", "lemma", "synonym")) is None
    assert meteor_tokens(cand, ref, matcher).matches == 2
    assert counted(cand, ref, matcher, ("exact", "lemma")) == 1


def test_every_turn_of_the_bundled_references_counts_like_the_alignment(matcher):
    pairs = 0
    for line in (PUBLIC / "answers.jsonl").read_text(encoding="utf-8").splitlines():
        variants = [tokenise(v) for turn in json.loads(line)["references"] for v in turn]
        for cand, ref in itertools.permutations(variants, 2):
            if cand and ref:
                pairs += 1
                m = counted(cand, ref, matcher, ("exact", "lemma", "synonym"))
                assert m is None or m == len(align(cand, ref, matcher)[0])
    assert pairs > 200
