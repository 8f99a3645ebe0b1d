"""The optional compiled engine against the pure-Python engine it accelerates: same numbers, or it
declines."""

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import EXAMPLES, PUBLIC, WORDS, counted, pair_counts, process
from hypothesis import given, settings
from hypothesis import strategies as st

import scorer
from scorer.metric.engine import accelerator
from scorer.metric.matcher import Matcher
from scorer.metric.meteor import MeteorParams, MeteorRu, meteor_tokens
from scorer.metric.text import tokenise

STAGES = ("exact", "lemma", "synonym")
#: CI builds the core and sets this, so a silently failed build fails the suite instead of skipping it.
REQUIRED = os.environ.get("SCORER_REQUIRE_COMPILED") == "1"
needs_core = pytest.mark.skipif(not accelerator.compiled() and not REQUIRED, reason="compiled core not built")


def test_the_core_is_built_where_it_is_required():
    if REQUIRED:
        assert accelerator.compiled()


_COUNTERS = {}


def bundled_variants() -> list[list[str]]:
    """Every reference variant of the bundled data, tokenised."""
    return [
        tokenise(v)
        for line in (PUBLIC / "answers.jsonl").read_text(encoding="utf-8").splitlines()
        for turn in json.loads(line)["references"]
        for v in turn
    ]


def core(matcher, stages):
    """The compiled core's token table for ``stages``, whether or not the environment switches it off."""
    if stages not in _COUNTERS:
        _COUNTERS[stages] = accelerator.FastCounts(
            accelerator._built()[0]["id_counts"], matcher.key_functions(stages)
        ).table
    return _COUNTERS[stages]


@needs_core
def test_hand_cases(matcher):
    counter = core(matcher, STAGES)
    assert pair_counts(counter, tokenise("на на стали сказал"), tokenise("на на на сталью говорил")) == [
        2,
        1,
        1,
    ]
    assert pair_counts(counter, ["лечу"], ["лететь", "лечить"]) == [0, 1, 0]  # a star: one centre token
    assert pair_counts(counter, ["лечу", "лечу"], ["лететь", "лечить"]) == [0, 2, 0]
    # лечу-лететь, лечу-лечить, мчаться-лететь and стали-сталью, стали-стать, стал-стать are paths,
    # not stars: the pure engine's flow answers them
    assert pair_counts(counter, ["лечу", "мчаться"], ["лететь", "лечить"]) is None
    assert pair_counts(counter, ["стали", "стал"], ["сталью", "стать"]) is None
    params = MeteorParams(stages=STAGES)
    assert meteor_tokens(["лечу", "мчаться"], ["лететь", "лечить"], matcher, params).matches == 2
    assert meteor_tokens(["стали", "стал"], ["сталью", "стать"], matcher, params).matches == 2


@needs_core
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(WORDS + ["лечу", "мчаться", "стали", "стал"]), min_size=1, max_size=7),
    st.lists(
        st.lists(st.sampled_from(WORDS + ["лететь", "лечить", "сталью", "стать"]), max_size=7), max_size=3
    ),
)
def test_what_the_core_declines_the_engine_counts_as_the_definition(matcher, cand, variants):
    """The compiled engine's counts of an answer against its variants are the definition's, the pairs the
    token table declines (a general component) counted on the type graph it finds on ids."""
    engine = accelerator._new_engine(compiled=True)
    keys = matcher.key_functions(STAGES)
    counts = [None if not v else counted(cand, v, matcher, STAGES) for v in variants]
    assert engine.variant_counts_each([cand], [variants], keys) == [counts]


@needs_core
@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(WORDS + ["на", "и", "говорил", "сказал"]), min_size=1, max_size=9),
    st.lists(st.sampled_from(WORDS + ["на", "и", "говорил", "сказал"]), min_size=1, max_size=9),
    st.sampled_from([STAGES, ("exact", "lemma"), ("exact", "synonym", "lemma"), ("exact",)]),
)
def test_same_counts_as_the_pure_engine_or_none(matcher, cand, ref, stages):
    found = pair_counts(core(matcher, stages), cand, ref)
    assert found is None or found == counted(cand, ref, matcher, stages)


@needs_core
def test_same_counts_on_the_bundled_references(matcher):
    counter, rng, settled = core(matcher, STAGES), random.Random(5), 0
    variants = bundled_variants()
    for cand in variants:
        for ref in rng.sample(variants, 20):
            found = pair_counts(counter, cand, ref)
            assert found is None or found == counted(cand, ref, matcher, STAGES)
            settled += found is not None
    assert settled > 0.95 * 20 * len(variants)  # the core settles nearly every pair itself


def test_pure_engine_when_switched_off_or_for_other_stage_orders(rwn, monkeypatch):
    monkeypatch.setenv(accelerator.PURE_ENV, "1")
    matcher = Matcher(rwn, persistent=False)
    assert accelerator.engine().fast_counts(matcher.key_functions(STAGES)) is None
    assert MeteorRu(matcher=matcher).engine.name == "pure Python"
    assert accelerator.description() == (
        "engine: pure Python (SCORER_PURE_PYTHON set)"
        if accelerator.compiled()
        else "engine: pure Python (compiled engine not built: links, counting, alignment, id_counts)"
    )
    assert accelerator.engine().alignment.__name__ == "scorer.metric.engine.alignment"
    monkeypatch.delenv(accelerator.PURE_ENV)
    assert accelerator.engine().fast_counts(matcher.key_functions(("lemma", "exact", "synonym"))) is None


@pytest.mark.slow
def test_version_names_the_active_path(monkeypatch):
    monkeypatch.delenv(accelerator.PURE_ENV, raising=False)
    out = process("--version").stdout
    expected = (
        "engine: compiled (Cython)"
        if accelerator.compiled()
        else "engine: pure Python (compiled engine not built: links, counting, alignment, id_counts)"
    )
    assert out.strip().endswith(f"({expected})")


def test_a_whole_submission_scores_the_same_on_both_paths(rwn, monkeypatch):
    from scorer import score_submission

    runs = []
    for pure in ("1", "0"):
        monkeypatch.setenv(accelerator.PURE_ENV, pure)
        result = score_submission(PUBLIC, EXAMPLES / "realistic", thesaurus=rwn)
        runs.append([(t.meteor, t.best_reference, t.details.matches) for t in result.turns])
    assert runs[0] == runs[1] and len(runs[0]) == 66


@needs_core
def test_the_compiled_modules_are_the_pure_ones_compiled(rwn, monkeypatch):
    monkeypatch.delenv(accelerator.PURE_ENV, raising=False)
    engine = accelerator.engine()
    assert engine.alignment.__name__ == "scorer._compiled.alignment" and engine.alignment.__file__.endswith(
        ".so"
    )
    from scorer.metric.engine import alignment, counting, links

    assert engine.alignment.NODE_BUDGET == alignment.NODE_BUDGET
    params = MeteorParams(stages=STAGES, gamma=0.5)
    pure = accelerator.Engine("pure Python", links, counting, alignment)
    matcher = Matcher(rwn, persistent=False)
    keys = matcher.key_functions(STAGES)
    rng = random.Random(11)
    variants = bundled_variants()
    for cand in variants:
        ref = rng.choice(variants)
        a = meteor_tokens(cand, ref, matcher, params, with_alignment=True, engine=pure)
        b = meteor_tokens(cand, ref, matcher, params, with_alignment=True, engine=engine)
        assert (a.score, a.chunks, a.alignment) == (b.score, b.chunks, b.alignment)
        if cand and ref:  # both engines return the same types
            assert (
                type(pure.align(cand, ref, keys))
                is type(engine.align(cand, ref, keys))
                is alignment.Alignment
            )


@pytest.mark.slow
@needs_core
def test_a_compiled_engine_built_from_another_source_is_never_called_current(tmp_path):
    """The installed package copied with its compiled modules: then its sources edited, as a rebuild that
    failed would leave them (the old modules carry the old sources' stamps), then a module missing."""
    import shutil

    copy = tmp_path / "scorer"
    shutil.copytree(Path(scorer.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    engine = copy / "metric" / "engine"
    env = dict(os.environ, PYTHONPATH=str(tmp_path), PYTHONDONTWRITEBYTECODE="1")
    env.pop("SCORER_PURE_PYTHON", None)

    def version() -> str:
        done = process("--version", cwd=tmp_path, env=env, check=True)
        return done.stdout.strip().split(" (", 1)[1]

    assert version() == "engine: compiled (Cython))"
    with open(engine / "counting.py", "a", encoding="utf-8") as fh:
        fh.write("# edited after the build\n")
    assert (
        version() == "engine: pure Python (compiled engine out of date: counting built from another source))"
    )
    with open(engine / "id_counts.pxd", "a", encoding="utf-8") as fh:  # its C types are part of its source
        fh.write("# edited after the build\n")
    assert version().endswith("out of date: counting, id_counts built from another source))")
    for built in (copy / "_compiled").glob("links.*.so"):
        built.unlink()
    assert version() == "engine: pure Python (compiled engine not built: links))"


@needs_core
def test_the_core_declines_pairs_beyond_its_bound(matcher):
    # 300 x 300 distinct free types is 90,000 type pairs, above MAX_TYPE_PAIRS: the pure engine's index
    # answers
    cand = [f"слово{k}" for k in range(300)]
    ref = [f"другое{k}" for k in range(300)]
    counter = core(matcher, STAGES)
    assert pair_counts(counter, cand, ref) is None
    assert pair_counts(counter, cand[:200], ref[:200]) == [
        0,
        0,
        0,
    ]  # 40,000 pairs: settled here, nothing links


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_a_build_whose_compiler_fails_on_one_module_runs_the_pure_engine_and_says_why(tmp_path):
    """The project's files copied (with the checkout's compiled engine) and built in place; then counting.py
    edited and rebuilt with a compiler that fails on counting only: the build goes on, the old compiled
    counting stays, and --version says why the pure engine runs. Then a copy of the first build with
    counting never compiled, whose build of counting fails: "not built"."""
    pytest.importorskip("Cython")
    root = Path(scorer.__file__).resolve().parent.parent
    failing = tmp_path / "cc-failing-on-counting"
    real_cc = shutil.which("cc") or shutil.which("gcc")
    failing.write_text(
        f'#!/bin/sh\ncase "$*" in *counting.c*) echo "no: counting" >&2; exit 1;; esac\nexec {real_cc} "$@"\n'
    )
    failing.chmod(0o755)

    def copy_project(into: Path) -> Path:
        # with the checkout's own build, times kept: a current one is not built again (the test is about what
        # later builds do); a checkout edited since its build is built here
        shutil.copytree(root / "scorer", into / "scorer", ignore=shutil.ignore_patterns("__pycache__"))
        for name in ("setup.py", "pyproject.toml", "README.md"):
            shutil.copy(root / name, into / name)
        return into

    def build(where: Path, cc: str | None = None) -> subprocess.CompletedProcess:
        # unoptimised C: the build's steps are what is tested, and -O0 makes the test a quarter as long
        env = dict(os.environ, CFLAGS="-O0", **({"CC": cc, "LDSHARED": f"{real_cc} -shared"} if cc else {}))
        return subprocess.run(
            [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
            cwd=where,
            env=env,
            capture_output=True,
            text=True,
        )

    def version(where: Path) -> str:
        env = dict(os.environ, PYTHONPATH=str(where), PYTHONDONTWRITEBYTECODE="1")
        env.pop("SCORER_PURE_PYTHON", None)
        done = process("--version", cwd=where, env=env, check=True)
        return done.stdout.strip().split(" (", 1)[1]

    built = copy_project(tmp_path / "a")
    assert build(built).returncode == 0
    assert version(built) == "engine: compiled (Cython))"
    # a copy of this build with counting never compiled: its first build of counting fails (the other modules,
    # up to date, are not built again, which keeps the test short)
    fresh = tmp_path / "b"
    shutil.copytree(built, fresh)
    for made in (fresh / "scorer" / "_compiled").glob("counting.*"):
        if made.suffix != ".py":
            made.unlink()
    stale = built / "scorer" / "_compiled" / "links.pxd"  # as a build from a source with a .pxd leaves it
    stale.write_text("cdef object never_declared_in_links\n", encoding="utf-8")
    assert build(built).returncode == 0 and not stale.exists()
    with open(built / "scorer" / "metric" / "engine" / "counting.py", "a", encoding="utf-8") as fh:
        fh.write("# edited after the build\n")
    rebuilt = build(built, str(failing))
    assert (
        rebuilt.returncode == 0
        and "scorer._compiled.counting was not built" in rebuilt.stdout + rebuilt.stderr
    )
    assert (
        version(built)
        == "engine: pure Python (compiled engine out of date: counting built from another source))"
    )

    assert build(fresh, str(failing)).returncode == 0
    assert version(fresh) == "engine: pure Python (compiled engine not built: counting))"


def test_scoring_turns_uses_the_metrics_own_engine(matcher):
    """score_turns asks the metric's engine (chosen once, holding its token table), never a shared one."""
    from scorer.scoring.turns import score_turns

    asked = []

    class Spy(accelerator.Engine):
        def variant_counts_each(self, cands, variants, key_functions):
            asked.extend(list(c) for c in cands)
            return super().variant_counts_each(cands, variants, key_functions)

    pure = accelerator.engine()
    spy = Spy("spy", pure.links, pure.counting, pure.alignment, pure.id_counts)
    metric = MeteorRu(MeteorParams(stages=("exact", "lemma")), matcher=matcher, engine=spy)
    scored = score_turns(["кот спит", "собака"], [[["кошка", "спит"]], [["пес"], ["собака"]]], metric)
    assert asked == [["кот", "спит"], ["собака"]]
    assert [(best, round(s.score, 6)) for best, s in scored] == [
        (0, 0.5),
        (1, 1.0),
    ]  # кот != кошка: 1 of 2 each way
