"""A run from an empty cache: keys learnt once per type on the workers; the numbers never change."""

from __future__ import annotations

import os
import signal
import time

import pytest
from helpers import MINI_RWN, make_split, make_submission

from scorer import api
from scorer.errors import ThesaurusError
from scorer.inputs import reference_cache
from scorer.inputs.config import load_config
from scorer.metric import morphology, thesaurus
from scorer.metric.engine import accelerator
from scorer.metric.matcher import Matcher
from scorer.metric.meteor import MeteorParams, MeteorRu
from scorer.metric.text import tokenise
from scorer.scoring import turns
from scorer.scoring.run import Run, RunOptions
from scorer.workers import WorkerDied, WorkerPool

ANSWERS = ["кот спит дома", "собака лает громко", "мы летим домой", "кошка лечит кота", "дом стоит"]
REFERENCES = [
    [["кошка", "спит"], ["кот", "дремлет"]],
    [["пес", "лает"]],
    [["мы", "мчимся", "домой"]],
    [["кот", "лечит", "кошку"], ["лечить"]],
    [["здание", "стоит"]],
]


def scored(answers, references, params, jobs):
    metric = MeteorRu(params, matcher=Matcher(thesaurus.load_thesaurus(MINI_RWN), persistent=False))
    found = turns.score_turns(answers, references, metric, jobs)
    return [(best, s.score, s.matches, s.chunks) for best, s in found], metric.matcher


@pytest.mark.slow
@pytest.mark.parametrize("gamma, scored_on_workers", [(0.0, False), (0.0, True), (0.5, True)])
def test_an_empty_matcher_learns_each_type_once_on_the_workers(monkeypatch, gamma, scored_on_workers):
    monkeypatch.setattr(turns, "MIN_TURNS_PER_JOB", 1)
    monkeypatch.setattr(turns, "MIN_TURNS_PER_JOB_WITHOUT_PENALTY", 1 if scored_on_workers else 10**9)
    answers, references = ANSWERS * 8, REFERENCES * 8
    params = MeteorParams(gamma=gamma, beta=3.0)
    absorbed: list[str] = []
    original = Matcher.absorb

    def counting(self, new, unanalysed):
        absorbed.extend(new.get("lemma", ()))
        return original(self, new, unanalysed)

    alone, _ = scored(answers, references, params, 1)
    computed_here: list[str] = []
    analyse = morphology.analyse

    def here(token):
        computed_here.append(token)
        return analyse(token)

    monkeypatch.setattr(Matcher, "absorb", counting)
    monkeypatch.setattr(morphology, "analyse", here)  # in this process only: a worker's calls are its own
    together, matcher = scored(answers, references, params, 2)
    assert together == alone
    types = {t for a in ANSWERS for t in tokenise(a)} | {t for turn in REFERENCES for v in turn for t in v}
    # every type's lemmas computed once: by this process (its share, and the pieces the worker had not taken
    # yet) or by the worker (handed back)
    assert computed_here and sorted(absorbed + computed_here) == sorted(types)
    assert set(matcher.lemmas) == types and set(matcher.synsets) == types


@pytest.mark.slow
def test_learnt_runs_once_every_type_is_known_while_the_worker_scores(monkeypatch):
    """From an empty matcher the run keeps its caches (``learnt``) once every type's keys are known, before
    this process scores a turn and while the worker scores; this process then scores only the pieces the
    worker has not taken, from the last one back. The results are the one-process results."""
    monkeypatch.setattr(turns, "MIN_TURNS_PER_JOB", 1)
    monkeypatch.setattr(turns, "MIN_TURNS_PER_JOB_WITHOUT_PENALTY", 1)
    answers, references = ANSWERS * 8, REFERENCES * 8
    alone, _ = scored(answers, references, MeteorParams(), 1)
    metric = MeteorRu(MeteorParams(), matcher=Matcher(thesaurus.load_thesaurus(MINI_RWN), persistent=False))
    events: list[object] = []

    def learnt():
        events.append(("learnt", set(metric.matcher.lemmas), set(metric.matcher.synsets)))

    note_spans_scored_here(monkeypatch, events)
    monkeypatch.setattr(turns, "_score_on_worker", _lagging)  # this process is sure to find pieces left
    found = turns.score_turns(answers, references, metric, 2, learnt=learnt)
    assert [(best, s.score, s.matches, s.chunks) for best, s in found] == alone
    types = {t for a in ANSWERS for t in tokenise(a)} | {t for turn in REFERENCES for v in turn for t in v}
    assert events[0] == ("learnt", types, types)
    spans = events[1:]
    assert spans and spans[0][1] == len(answers) and spans == sorted(spans, reverse=True)


@pytest.mark.slow
def test_a_matcher_that_knows_types_is_not_taught_first(monkeypatch):
    monkeypatch.setattr(turns, "MIN_TURNS_PER_JOB", 1)
    monkeypatch.setattr(turns, "MIN_TURNS_PER_JOB_WITHOUT_PENALTY", 1)
    taught = []
    monkeypatch.setattr(turns, "_keys_of", lambda types: taught.append(types))
    metric = MeteorRu(MeteorParams(), matcher=Matcher(thesaurus.load_thesaurus(MINI_RWN), persistent=False))
    metric.matcher.lemmas["кот"]  # one type known: the workers learn what they meet, as they score
    found = turns.score_turns(ANSWERS * 4, REFERENCES * 4, metric, 2)
    assert taught == [] and len(found) == 20


@pytest.mark.slow
def test_a_run_from_an_empty_cache_on_two_processes_matches_one_and_fills_the_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(turns, "MIN_TURNS_PER_JOB", 1)
    ids = [f"d{k}" for k in range(len(ANSWERS))]
    data = make_split(
        tmp_path, [(d, "Text2Text", [[" ".join(v) for v in turn]]) for d, turn in zip(ids, REFERENCES)]
    )
    submission = make_submission(tmp_path, {d: [a] for d, a in zip(ids, ANSWERS)}, {d: [3.0] for d in ids})
    results = []
    for jobs in (1, 2):
        monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / f"cache-{jobs}"))
        result = api.score_submission(data, submission, config=load_config(), jobs=jobs)
        results.append([(t.dialog_id, t.meteor, t.best_reference) for t in result.turns] + [result.summary])
        names = sorted(p.name.split("-")[0] for p in (tmp_path / f"cache-{jobs}").iterdir())
        kept_by_the_compiled_engine = ["keys"] if accelerator.active() else []
        assert names == kept_by_the_compiled_engine + ["references", "thesaurus", "tokens", "words"]
        keyed = reference_cache.keyed_digests(
            data / "dialogues.jsonl", data / "answers.jsonl", load_config().limits
        )
        assert keyed and reference_cache.load(keyed[0], load_config().limits) is not None
    assert results[0] == results[1]


@pytest.mark.slow
def test_the_run_s_worker_learns_the_reference_types_from_when_the_data_is_read(tmp_path, monkeypatch):
    """From an empty cache on two processes, the worker that built the index learns the reference data's
    types from the moment the data is read (before the submission is checked), then shares the answers' own
    with this process: each type analysed once, by one of the two, and the numbers those of one process."""
    monkeypatch.setattr(turns, "MIN_TURNS_PER_JOB", 1)
    ids = [f"d{k}" for k in range(len(ANSWERS))]
    data = make_split(
        tmp_path, [(d, "Text2Text", [[" ".join(v) for v in turn]]) for d, turn in zip(ids, REFERENCES)]
    )
    submission = make_submission(tmp_path, {d: [a] for d, a in zip(ids, ANSWERS)}, {d: [3.0] for d in ids})
    analysed_by = tmp_path / "analysed-by"
    analyse = morphology.analyse

    def recording(token):
        with open(analysed_by, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {token}\n")
        return analyse(token)

    def worker_learning() -> bool:
        """Whether another process analysed a word before this one checked the submission (waited for: a
        busy machine may start the worker late)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if analysed_by.exists() and any(
                line.split()[0] != str(os.getpid()) for line in analysed_by.read_text("utf-8").splitlines()
            ):
                return True
            time.sleep(0.01)
        return False

    validate = Run.validate
    seen = []

    def validating(self, *args, **kwargs):
        seen.append(worker_learning())
        return validate(self, *args, **kwargs)

    results = []
    for jobs in (1, 2):
        monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / f"cache-{jobs}"))
        monkeypatch.setattr(morphology, "analyse", recording if jobs == 2 else analyse)
        monkeypatch.setattr(Run, "validate", validating if jobs == 2 else validate)
        result = api.score_submission(data, submission, config=load_config(), jobs=jobs)
        results.append([(t.dialog_id, t.meteor, t.best_reference) for t in result.turns] + [result.summary])
    rows = [line.split() for line in analysed_by.read_text(encoding="utf-8").splitlines()]
    tokens = [token for _, token in rows]
    references = {t for turn in REFERENCES for v in turn for t in v}
    assert sorted(tokens) == sorted(references | {t for a in ANSWERS for t in tokenise(a)})  # each once
    by_worker = {token for pid, token in rows if int(pid) != os.getpid()}
    assert seen == [True] and by_worker & references  # at least the pieces handed to it before this process
    assert len({pid for pid, _ in rows} - {str(os.getpid())}) == 1
    assert results[0] == results[1]


@pytest.mark.slow
def test_the_thesaurus_index_is_built_on_a_worker_while_the_inputs_are_read(tmp_path, monkeypatch):
    """From an empty cache with two processes allowed, the index is built on the pool's worker (the load then
    finds it in the cache); with one process, here. The numbers are the same either way."""
    monkeypatch.setattr(turns, "MIN_TURNS_PER_JOB", 10**9)  # turns scored here: only the index goes out
    built_by = tmp_path / "built-by"
    original = thesaurus._build_index

    def recording(pairs):
        with open(built_by, "a") as out:
            out.write(f"{os.getpid()}\n")
        return original(pairs)

    monkeypatch.setattr(thesaurus, "_build_index", recording)
    data = make_split(tmp_path, [("d1", "Text2Text", [["кошка спит"]]), ("d2", "Text2Text", [["пес лает"]])])
    sub = make_submission(tmp_path, {"d1": ["кот спит"], "d2": ["собака лает"]}, {"d1": [3.0], "d2": [2.0]})
    results = []
    for jobs in (2, 1):
        monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / f"cache-{jobs}"))
        results.append(api.score_submission(data, sub, config=load_config(), jobs=jobs).summary)
        builders = [int(pid) for pid in built_by.read_text().split()]
        assert builders[-1] != os.getpid() if jobs == 2 else builders[-1] == os.getpid()
        built_by.unlink()
    assert results[0] == results[1]
    # a thesaurus that cannot be read is reported by the run itself, as without the worker
    broken = tmp_path / "rwn"
    broken.mkdir()
    (broken / "synsets.V.xml").write_text("<synsets><synset id='1'><sense>", encoding="utf-8")
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache-broken"))
    with pytest.raises(ThesaurusError, match="cannot read RuWordNet file"):
        api.score_submission(data, sub, config=load_config(), jobs=2, thesaurus=broken)


@pytest.mark.parametrize("jobs", [1, pytest.param(2, marks=pytest.mark.slow)])  # 2: a worker forked
def test_a_run_hashes_the_thesaurus_once(tmp_path, monkeypatch, jobs):
    """The identity follows the bytes (contract section 4), and a run reads them once to find it."""
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    hashed = []
    original = thesaurus._identity
    monkeypatch.setattr(
        thesaurus, "_identity", lambda kind, files: hashed.append(kind) or original(kind, files)
    )
    data = make_split(tmp_path, [("d1", "Text2Text", [["кошка спит"]])])
    sub = make_submission(tmp_path, {"d1": ["кот спит"]}, {"d1": [3.0]})
    for _ in range(2):  # from an empty cache, then warm
        hashed.clear()
        api.score_submission(data, sub, config=load_config(), jobs=jobs)
        assert hashed == ["xml"]


_ON_WORKER = turns._score_on_worker


def note_spans_scored_here(monkeypatch, noted: list) -> None:
    """Append to ``noted`` each piece (span of turns) this process scores (a worker's are its own)."""
    score_span = turns.Work.score_span
    main = os.getpid()

    def noting(self, span):
        if os.getpid() == main:
            noted.append(span)
        return score_span(self, span)

    monkeypatch.setattr(turns.Work, "score_span", noting)


def _lagging(span):
    """A worker's piece that takes a while (the pool hands it over by name: a function of this module)."""
    time.sleep(0.3)
    return _ON_WORKER(span)


@pytest.mark.slow
def test_this_process_scores_the_pieces_a_slow_worker_has_not_taken(monkeypatch):
    """When the worker lags, this process scores the last pieces no worker has taken yet (cancelled in the
    pool): the results are the one-process results, in order, and every turn is scored once."""
    monkeypatch.setattr(turns, "MIN_TURNS_PER_JOB", 1)
    monkeypatch.setattr(turns, "MIN_TURNS_PER_JOB_WITHOUT_PENALTY", 1)
    answers, references = ANSWERS * 8, REFERENCES * 8
    alone, _ = scored(answers, references, MeteorParams(), 1)
    here: list[tuple[int, int]] = []
    monkeypatch.setattr(turns, "_score_on_worker", _lagging)
    note_spans_scored_here(monkeypatch, here)
    together, _ = scored(answers, references, MeteorParams(), 2)
    assert together == alone
    pieces = 2 * turns.PIECES_PER_JOB
    own = [(len(answers) * k // pieces, len(answers) * (k + 1) // pieces) for k in range(pieces // 2)]
    assert here[: len(own)] == own and len(here) > len(own)  # its share, then pieces the worker left
    assert sorted(here)[-1][1] == len(answers)  # the last piece among them


@pytest.mark.slow
def test_a_run_s_worker_gone_before_it_is_handed_the_types_leaves_them_to_be_learnt_as_without_it():
    with WorkerPool(1, turns.Learner(("exact", "lemma"), None)) as pool:
        assert turns.learn_ahead(pool, ["кот", "дом"]) is not None  # alive: handed the types
        (process,) = pool.processes.values()
        os.kill(process.pid, signal.SIGKILL)
        process.join(30)
        assert turns.learn_ahead(pool, ["кот", "дом"]) is None


@pytest.mark.slow
def test_a_matcher_of_the_callers_is_not_given_what_the_run_s_worker_learnt(tmp_path, monkeypatch):
    """The run's worker learns with the run's own thesaurus: a score given another matcher leaves it be (the
    worker ends with the run's block), and scores as that matcher says."""
    monkeypatch.setattr(turns, "MIN_TURNS_PER_JOB", 1)
    monkeypatch.setenv("SCORER_CACHE_DIR", str(tmp_path / "cache"))
    ids = [f"d{k}" for k in range(len(ANSWERS))]
    data = make_split(
        tmp_path, [(d, "Text2Text", [[" ".join(v) for v in turn]]) for d, turn in zip(ids, REFERENCES)]
    )
    submission = make_submission(tmp_path, {d: [a] for d, a in zip(ids, ANSWERS)}, {d: [3.0] for d in ids})
    options = RunOptions(config=load_config(), jobs=2)
    with Run.opening(data, options, index=True, learn=True) as run:
        assert run.ahead is not None
        valid = run.validate(submission)
        own = Matcher(thesaurus.load_thesaurus(MINI_RWN), persistent=False)
        result = run.score(valid, matcher=own)
        assert run.ahead is not None
    assert run.ahead is None and run.helper is None
    alone = api.score_submission(data, submission, config=load_config(), jobs=1)
    assert [t.meteor for t in result.turns] == [t.meteor for t in alone.turns]


@pytest.mark.slow
def test_work_handed_to_a_pool_whose_worker_is_gone_names_the_death():
    with WorkerPool(1, None) as pool:
        (process,) = pool.processes.values()
        os.kill(process.pid, signal.SIGKILL)
        process.join(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the pool's own thread notices the death within moments
            try:
                pool.submit_all(int, ["1"])
            except WorkerDied as died:
                assert "killed by SIGKILL" in str(died) and died.exit_code == 2
                break
            time.sleep(0.01)
        else:
            pytest.fail("the pool took work after its worker died")
