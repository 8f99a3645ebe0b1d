"""The two phases (contract section 10): :func:`generate` (every answer) and :func:`perplexities` (every
turn's, and the probe calls of :func:`choose_probes`), each with its kept turns, its child process and its
scratch folder; how they run (:class:`PhaseSettings`) and what they tell on stderr (:class:`ProgressLines`).
"""

from __future__ import annotations

import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .data import CodeDialogue
from .faults import CodeFault
from .names import PROBE_SEED
from .options import DEFAULTS, RunnerOptions
from .process import Child, kill_descendants
from .protocol import Reply, Request, is_answer, is_perplexity
from .state import State, data_digest
from .upload import code_digest

#: The least time between two progress lines (:class:`ProgressLines`), in seconds.
PROGRESS_SECONDS = 5.0
#: The rounding of a marked progress line's times (:class:`ProgressLines`), in seconds.
PROGRESS_ROUNDING = 10.0


class ProgressLines:
    """One stderr line every few seconds: phase, dialogues and turns done, rate, time left. The rate and the
    time left count the turns computed since the first one (import and setup are reported once, apart).

    With ``marks`` n of 2 or more, a line only when the turns done first reach k/n of the phase's turns (k =
    1 .. n - 1), its times counted from the phase's start and rounded down to :data:`PROGRESS_ROUNDING`
    seconds, and no other line (no setup line, no last line): what the lines tell beyond the data's own
    counts is when each mark was reached, at most (n - 1) x log2(L / 10 + 1) bits for a phase of L
    seconds."""

    def __init__(self, phase: str, dialogues: int, turns: int, quiet: bool, marks: int = 0):
        self.phase, self.dialogues, self.turns, self.quiet = phase, dialogues, turns, quiet
        self.started = self.shown = time.monotonic()
        self.first: tuple[float, int] | None = None
        self.marks = sorted({max(1, -(-k * turns // marks)) for k in range(1, marks)}) if marks >= 2 else None

    @classmethod
    def of(cls, phase: str, dialogues: int, turns: int, settings: PhaseSettings) -> ProgressLines:
        return cls(phase, dialogues, turns, settings.quiet, settings.progress_marks)

    def setup_done(self, seconds: float) -> None:
        if not self.quiet and self.marks is None:
            print(f"run: {self.phase}: import and setup took {seconds:.1f} s", file=sys.stderr, flush=True)

    def __call__(self, dialogues_done: int, turns_done: int, force: bool = False) -> None:
        now = time.monotonic()
        if self.first is None:
            self.first = (now, turns_done)
        if self.marks is not None:
            self._mark(dialogues_done, turns_done, now)
            return
        if self.quiet or (not force and now - self.shown < PROGRESS_SECONDS):
            return
        self.shown = now
        since, before = self.first
        self._line(dialogues_done, turns_done, turns_done - before, now - since, "")

    def _mark(self, dialogues_done: int, turns_done: int, now: float) -> None:
        reached = False
        while self.marks and turns_done >= self.marks[0]:
            self.marks.pop(0)
            reached = True
        if reached and not self.quiet:
            seconds = (now - self.started) // PROGRESS_ROUNDING * PROGRESS_ROUNDING
            if not seconds:  # no rate to tell yet
                print(
                    f"run: {self.phase}: {dialogues_done}/{self.dialogues} dialogues, "
                    f"{turns_done}/{self.turns} turns (in under {PROGRESS_ROUNDING:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
                return
            self._line(
                dialogues_done,
                turns_done,
                turns_done,
                seconds,
                f" (after {seconds:.0f} s, to {PROGRESS_ROUNDING:.0f} s)",
            )

    def _line(self, dialogues_done: int, turns_done: int, made: int, seconds: float, after: str) -> None:
        rate = made / seconds if seconds > 0 and made > 0 else 0.0
        left = (
            f", {int((self.turns - turns_done) / rate)} s left"
            if rate > 0 and turns_done < self.turns
            else ""
        )
        print(
            f"run: {self.phase}: {dialogues_done}/{self.dialogues} dialogues, "
            f"{turns_done}/{self.turns} turns, {rate:.2f} turns/s{left}{after}",
            file=sys.stderr,
            flush=True,
        )


@dataclass(frozen=True)
class PhaseSettings:
    """How the phases run: ``state`` is the folder of their kept turns (None: kept in memory only),
    ``resume`` continues from them, ``quiet`` drops the progress lines, the two limits in seconds (one for
    the code's import and its setup together, one for each call), whether the run is ``sealed`` (the code's
    output discarded, faults by kind and place only), whether the ppl phase makes ``probes`` calls, and the
    folder the phases' scratch folders are made in (None: the system's).

    ``step_timeout`` bounds a whole phase in seconds (its import, setup and every call, probes included;
    None: no bound): each call may take the least of its own limit and the time the phase has left, and
    past it the fault is ``timeout`` with function ``step``. Progress lines (``quiet`` False) hold counts
    and times only, never text of the code, sealed or not. Their turns done, rate and time left follow the
    code's pace, which the code sets: where participants read them, ``progress_marks`` n (2 or more) prints
    a line only at each k/n of the turns, its times rounded down to 10 s (:class:`ProgressLines`)."""

    state: str | None
    # a setting that is also an option of the run (RunnerOptions) takes its default from there
    resume: bool = DEFAULTS["resume"]
    quiet: bool = DEFAULTS["quiet"]
    setup_timeout: float = DEFAULTS["setup_timeout"]
    turn_timeout: float = DEFAULTS["turn_timeout"]
    sealed: bool = DEFAULTS["sealed"]
    probes: bool = False
    scratch: str | None = None
    probe_turns: int = DEFAULTS["probe_turns"]
    probe_min_words: int = DEFAULTS["probe_min_words"]
    step_timeout: float | None = DEFAULTS["step_timeout"]
    progress_marks: int = 0

    @classmethod
    def of(cls, options: RunnerOptions, state: str | None, probes: bool = False) -> PhaseSettings:
        """The phases' settings of a run of the command line (``probes``: whether this phase makes them)."""
        return cls(
            state,
            options.resume,
            options.quiet,
            options.setup_timeout,
            options.turn_timeout,
            options.sealed,
            probes,
            probe_turns=options.probe_turns,
            probe_min_words=options.probe_min_words,
            step_timeout=options.step_timeout,
        )


class _Phase:
    """One phase of the run: its kept turns (:class:`State`), its child process, started at the first call
    the phase needs (none when every turn was kept), and its scratch folder. Leaving it closes all three
    (no process of the code outlives it); the kept turns are removed once the phase finished without a
    fault."""

    def __init__(
        self,
        name: str,
        state_name: str,
        code_root: str,
        settings: PhaseSettings,
        digests: dict[str, str],
        turns: dict[str, int],
        accept: Callable[[object], bool],
        progress: ProgressLines,
    ):
        self.name, self.code_root, self.settings, self.progress = name, code_root, settings, progress
        self.state = State(
            settings.state, state_name, digests, settings.resume, turns, accept, settings.quiet
        )
        self.child: Child | None = None
        self.scratch = tempfile.mkdtemp(prefix="scorer-run-", dir=settings.scratch)
        step = settings.step_timeout
        self.deadline = None if step is None else time.monotonic() + step

    def __enter__(self) -> _Phase:
        return self

    def call(self, request: Request, function: str, dialog_id: str, turn: int) -> Any:
        """The value the code's ``function`` returned for this turn's ``request``."""
        if self.child is None:
            started = time.monotonic()
            self.child = Child(self.name, self.code_root, self.scratch, self.settings.sealed)
            limit = self.settings.setup_timeout  # the import and the setup together, from the child's start
            self._ask(None, "ready", limit, "import team_code.generate", dialog_id, turn, started)
            self._ask(
                {"call": "setup"}, "setup", limit, "setup_model_and_tokenizer", dialog_id, turn, started
            )
            self.progress.setup_done(time.monotonic() - started)
        return self._ask(request, request["call"], self.settings.turn_timeout, function, dialog_id, turn)[
            "ok"
        ]

    def _ask(
        self,
        message: Request | None,
        call: str,
        limit: float,
        function: str,
        dialog_id: str,
        turn: int,
        since: float | None = None,
    ) -> Reply:
        """The child's reply, waited for until ``limit`` seconds after ``since`` (None: now) or the end of
        the time the phase has left, whichever comes first; a call that the phase's limit stops is the fault
        ``timeout`` of function ``step``, in the turn it was made for. The setup and the import are named by
        their function, with no turn."""
        assert self.child is not None
        place = (dialog_id, turn) if call in ("generate", "ppl") else (None, None)
        now = time.monotonic()
        own = limit if since is None else limit - (now - since)
        left = None if self.deadline is None else self.deadline - now
        if left is not None and left <= 0:
            raise self._past_step(*place)
        try:
            wait = own if left is None else min(own, left)
            return self.child.ask(message, call, wait, function, place[0], place[1], limit=limit)
        except CodeFault as fault:
            if fault.kind == "timeout" and left is not None and left < own:
                raise self._past_step(*place) from None
            raise

    def _past_step(self, dialog_id: str | None, turn: int | None) -> CodeFault:
        if self.child is not None:
            self.child.kill()
        return CodeFault(
            "timeout",
            f"the phase ran past --step-timeout {self.settings.step_timeout:g} s (the import, the setup and "
            "every call together); it was stopped",
            self.name,
            "step",
            dialog_id,
            turn,
        )

    def __exit__(self, kind: object, *rest: object) -> None:
        if self.child is not None:
            self.child.close()
        kill_descendants()
        self.state.close(finished=kind is None)
        shutil.rmtree(self.scratch, ignore_errors=True)


def generate(
    dialogues: list[CodeDialogue], code_root: str, settings: PhaseSettings, digest: str = ""
) -> dict[str, list[str]]:
    """Every dialogue's answers: a_i = generate_text(model, tokenizer, q_i, [(q_k, a_k) for k < i])."""
    total = sum(len(d["turns"]) for d in dialogues)
    progress = ProgressLines.of("generate", len(dialogues), total, settings)
    answers: dict[str, list[str]] = {}
    digests = {"code": digest or code_digest(code_root), "data": data_digest("generate", dialogues)}
    turns = {d["dialog_id"]: len(d["turns"]) for d in dialogues}
    with _Phase("generate", "generate", code_root, settings, digests, turns, is_answer, progress) as phase:
        done = 0
        for n, d in enumerate(dialogues):
            found: list[str] = []
            for i, query in enumerate(d["turns"]):
                key = (d["dialog_id"], i, False)
                if key in phase.state.done:
                    found.append(str(phase.state.done[key]))
                else:
                    request = Request(call="generate", query=query, history=list(zip(d["turns"], found)))
                    answer = phase.call(request, "generate_text", d["dialog_id"], i)
                    found.append(answer)
                    phase.state.keep(d["dialog_id"], i, answer)
                done += 1
                progress(n, done)
            answers[d["dialog_id"]] = found
        progress(len(dialogues), done, force=True)
    return answers


def choose_probes(
    dialogues: list[CodeDialogue],
    targets: dict[str, list[str]],
    count: int,
    min_words: int,
    seed: int = PROBE_SEED,
) -> dict[tuple[str, int], tuple[str, bool]]:
    """The probe calls (contract section 10): for up to ``count`` turns whose target has at least
    ``min_words`` whitespace-separated words (and two different ones), drawn reproducibly from ``seed``,
    the target's words in another order and whether the probe is made before the turn's own call."""
    eligible = [
        (d["dialog_id"], i)
        for d in dialogues
        for i, target in enumerate(targets[d["dialog_id"]])
        if len(target.split()) >= min_words and len(set(target.split())) > 1
    ]
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(eligible)), min(count, len(eligible))))
    probes = {}
    for k in chosen:
        dialog_id, i = eligible[k]
        words = targets[dialog_id][i].split()
        shuffled = list(words)
        while shuffled == words:
            rng.shuffle(shuffled)
        probes[(dialog_id, i)] = (" ".join(shuffled), rng.random() < 0.5)
    return probes


def perplexities(
    dialogues: list[CodeDialogue],
    targets: dict[str, list[str]],
    code_root: str,
    settings: PhaseSettings,
    only: set[tuple[str, int]] | None = None,
    digest: str = "",
) -> tuple[dict[str, list[float | None]], dict[str, list[float | None]] | None]:
    """p_i = get_ppl(model, tokenizer, (q_i, t_i), [(q_k, t_k) for k < i]) for every turn (or ``only``'s),
    and with ``settings.probes`` the probe calls' values (None for a turn without a probe; None for both
    without probes)."""
    wanted = [
        (d, i)
        for d in dialogues
        for i in range(len(d["turns"]))
        if only is None or (d["dialog_id"], i) in only
    ]
    probes = (
        choose_probes(dialogues, targets, settings.probe_turns, settings.probe_min_words)
        if settings.probes and only is None
        else {}
    )
    progress = ProgressLines.of("ppl", len({d["dialog_id"] for d, _ in wanted}), len(wanted), settings)
    values: dict[str, list[float | None]] = {d["dialog_id"]: [None] * len(d["turns"]) for d in dialogues}
    probed: dict[str, list[float | None]] = {d["dialog_id"]: [None] * len(d["turns"]) for d in dialogues}
    digests = {
        "code": digest or code_digest(code_root),
        "data": data_digest("ppl", dialogues, targets, sorted(only or []), sorted(probes.items())),
    }
    turns = {d["dialog_id"]: len(d["turns"]) for d in dialogues}
    name = "ppl" if only is None else "ppl-only"
    with _Phase("ppl", name, code_root, settings, digests, turns, is_perplexity, progress) as phase:
        seen: set[str] = set()

        def value_of(
            dialog_id: str, i: int, target: str, probe: bool, history: list[Any], query: Any
        ) -> float:
            key = (dialog_id, i, probe)
            if key in phase.state.done:
                return float(phase.state.done[key])  # type: ignore[arg-type]
            request = Request(call="ppl", query=query, target=target, history=history)
            value = phase.call(request, "get_ppl", dialog_id, i)
            if not is_perplexity(value):
                raise CodeFault(
                    "wrong_value",
                    f"it returned {value!r}{' (a probe call)' if probe else ''}; a perplexity must be finite "
                    "and at least 1",
                    "ppl",
                    "get_ppl",
                    dialog_id,
                    i,
                )
            phase.state.keep(dialog_id, i, value, probe)
            return float(value)

        for done, (d, i) in enumerate(wanted, 1):
            dialog_id, queries, target = d["dialog_id"], d["turns"], targets[d["dialog_id"]]
            history = [[queries[k], target[k]] for k in range(i)]
            probe = probes.get((dialog_id, i))
            if probe is not None and probe[1]:
                probed[dialog_id][i] = value_of(dialog_id, i, probe[0], True, history, queries[i])
            values[dialog_id][i] = value_of(dialog_id, i, target[i], False, history, queries[i])
            if probe is not None and not probe[1]:
                probed[dialog_id][i] = value_of(dialog_id, i, probe[0], True, history, queries[i])
            seen.add(dialog_id)
            progress(len(seen), done)
        progress(len(seen), len(wanted), force=True)
    return values, (probed if settings.probes and only is None else None)


def numbers(values: dict[str, list[float | None]]) -> dict[str, list[float]]:
    """The perplexities of a run of every turn (no ``only``), where each value is a number."""
    return {k: [float(v) for v in vs if v is not None] for k, vs in values.items()}
