"""The scoring step of a code competition (contract section 10): ``codalab`` runs the team's ``get_ppl``
on the reference answers itself, and keeps one invariant: **the code can make its own upload fail, never
make it score.**

The code runs here beside the organizer's answers and the scorer, as the same user, so the step is built
around the moment it starts:

1. Before: the reference data and the upload are read and checked, the METEOR half is scored, and the
   outputs are rendered once with placeholder perplexities, so every module the step will use is imported
   and every file it will read (fonts included) has been read. The output folder is opened (its
   descriptor held, no link followed) and the resource limits are recorded.
2. The guard (:class:`Guard`, an audit hook) is switched on: from now until the outputs are written any
   import is an error of the step, and until the code's last process is dead any file opened outside the
   phase's scratch folder and ``/proc`` is one too. This process becomes non-dumpable and the child
   subreaper, and every catchable signal is a surprise.
3. The ``ppl`` phase runs sealed (:func:`scorer.runner.perplexities`): the code's output discarded, a fault
   named by kind and place only. Every output is then held in memory.
4. After: what the code left is killed (and none may remain), the resource limits are restored, the output
   folder is emptied of everything in it (not by name), and the outputs are written from memory through
   the held descriptor (``O_NOFOLLOW``, ``O_EXCL``), ``scores.json`` last.

Any surprise on the way (a signal, a process that cannot be killed, a limit that cannot be restored, a
file that cannot be removed, an import, a file opened, anything unexpected) is :class:`StepSurprise`:
exit 1, one line naming it, and no ``scores.json`` or ``scores.txt``.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scorer import runner
from scorer.api import RunOptions, ScoreResult, load_reference, score_submission, with_perplexities
from scorer.errors import EXIT_INVALID, Issue, ScorerError, SubmissionInvalid, UsageError
from scorer.inputs.config import Config
from scorer.inputs.contract import PPL, SUBMISSION
from scorer.inputs.jsonio import shorten
from scorer.outputs.report import SCORES_JSON, SCORES_TXT, failure_files, score_files
from scorer.scoring.audience import Audience

#: The upload's files that the prediction step writes (contract section 10).
RUN_FAULT = runner.RUN_FAULT
TEAM_CODE = runner.TEAM_CODE
#: The most of ``run_fault.json`` that is read.
MAX_FAULT_BYTES = 64 << 10
#: Signals whose default action ends or stops a process: each is a surprise during the step.
_SIGNALS = sorted(
    {
        getattr(signal, name)
        for name in (
            "SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM",
            "SIGPROF", "SIGXCPU", "SIGXFSZ", "SIGIO", "SIGPWR", "SIGSYS", "SIGTRAP", "SIGTSTP", "SIGTTIN",
            "SIGTTOU", "SIGABRT", "SIGSTKFLT",
        )
        if hasattr(signal, name)
    }
    | set(range(signal.SIGRTMIN, signal.SIGRTMAX + 1))
)  # fmt: skip


class StepSurprise(ScorerError):
    """Something the step does not expect happened once the code could act (contract section 10): exit 1,
    and no scores."""

    exit_code = EXIT_INVALID
    kind = "surprise"

    def __init__(self, what: str):
        self.what = what
        super().__init__(
            f"the scoring step stopped ({what}); it wrote no scores.json or scores.txt, and the upload "
            "is not scored"
        )


class Guard:
    """An audit hook installed once per process: while ``imports`` is on, an import is a surprise (and
    fails); while ``allowed`` is set, opening a file outside those folders is one (and fails). What it
    caught is in ``caught``."""

    _installed: Guard | None = None

    def __init__(self) -> None:
        self.imports = False
        self.allowed: tuple[str, ...] | None = None
        self.caught: list[str] = []

    @classmethod
    def get(cls) -> Guard:
        if cls._installed is None:
            cls._installed = Guard()
            sys.addaudithook(cls._installed._hook)
        return cls._installed

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "import" and self.imports:
            self.caught.append(f"an import of {shorten(str(args[0]), 80)}")
            raise ImportError("the scoring step imports nothing once the team's code has started")
        if event == "open" and self.allowed is not None and args and isinstance(args[0], (str, bytes)):
            path = os.fsdecode(args[0])
            if not any(path == a.rstrip("/") or path.startswith(a) for a in self.allowed):
                self.caught.append(f"a file opened while the code ran: {shorten(path, 120)}")
                raise PermissionError("the scoring step reads nothing while the team's code runs")

    def off(self) -> None:
        self.imports = False
        self.allowed = None


@dataclass
class _Signals:
    """Every catchable signal recorded as a surprise; the first one raises while ``raising`` is on."""

    received: list[int]
    raising: bool = False
    raised: bool = False

    def __call__(self, signum: int, frame: object) -> None:
        self.received.append(signum)
        if self.raising and not self.raised:
            self.raised = True
            raise StepSurprise(f"it received {_signal_name(signum)}")


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


@dataclass(frozen=True)
class Upload:
    """A code upload in the scoring step: the folder holding ``submission.jsonl`` and ``team_code/``."""

    folder: Path


def find_upload(res: Path, dialog_turns: Mapping[str, int]) -> Upload:
    """The upload in ``res`` (or its one top-level folder) of a competition whose config says ``submissions
    = "code"``; SubmissionInvalid (exit 1) saying why when it cannot be scored: the prediction step's
    ``run_fault.json`` repeated, a ``ppl_output.json`` (this competition computes perplexities itself), no
    ``team_code/``."""
    folders = [p for p in res.iterdir() if p.is_dir() and not p.is_symlink() and p.name != TEAM_CODE]
    candidates = [res] + (folders if len(folders) == 1 and not (res / SUBMISSION).exists() else [])
    for folder in candidates:
        fault = read_run_fault(folder / RUN_FAULT, dialog_turns)
        if fault is not None:
            raise SubmissionInvalid(
                [
                    Issue(
                        RUN_FAULT,
                        f"the prediction step failed: the team's code failed ({fault})",
                        "run_fault",
                    )
                ]
            )
    for folder in candidates:
        if os.path.lexists(folder / PPL):
            raise SubmissionInvalid(
                [
                    Issue(
                        PPL,
                        "this competition computes the perplexities itself, by running the team's get_ppl "
                        "(team_code/generate.py): an upload of ppl_output.json is not scored; upload a zip "
                        "holding team_code/",
                        "code_competition",
                    )
                ]
            )
    for folder in candidates:
        code = folder / TEAM_CODE
        if code.is_dir() and not code.is_symlink():
            return Upload(folder)
    raise SubmissionInvalid(
        [
            Issue(
                TEAM_CODE,
                "this competition runs the team's code: the upload holds no team_code/ (upload a zip holding "
                "the package team_code/ with __init__.py and generate.py)",
                "code_competition",
            )
        ]
    )


def read_run_fault(path: Path, dialog_turns: Mapping[str, int]) -> str | None:
    """The fault ``run_fault.json`` records, as the step repeats it (kind and place), or None when there is
    no such file or it is not one the runner writes (a kind of its closed set, a dialog_id and turn of the
    data): it is read as untrusted."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, MAX_FAULT_BYTES + 1)
    finally:
        os.close(fd)
    try:
        record = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return _fault_text(record, dialog_turns)


def _fault_text(record: object, dialog_turns: Mapping[str, int]) -> str | None:
    """A ``run_fault.json`` record as the step repeats it, or None when it is not one the runner writes."""
    if not isinstance(record, dict) or set(record) != {"kind", "phase", "function", "dialog_id", "turn"}:
        return None
    kind, phase, function = record["kind"], record["phase"], record["function"]
    dialog_id, turn = record["dialog_id"], record["turn"]
    functions = (*runner.FUNCTIONS, "import team_code.generate")
    if (
        kind not in runner.FAULT_KINDS
        or phase not in ("generate", "ppl", None)
        or function not in (*functions, None)
        or not (dialog_id is None or (isinstance(dialog_id, str) and dialog_id in dialog_turns))
        or not (
            turn is None
            or (type(turn) is int and isinstance(dialog_id, str) and 0 <= turn < dialog_turns[dialog_id])
        )
    ):
        return None
    fault = runner.CodeFault(kind, "", phase or "", function or "", dialog_id, turn)
    return f"{kind}; {fault.where()}" if fault.where() else kind


@dataclass(frozen=True)
class StepSettings:
    """The step's inputs: the reference data folder, where the outputs go, the run options of the METEOR
    half, who reads the outputs, and the runner's two limits."""

    data: str
    output: Path
    options: RunOptions
    audience: Audience
    page: str
    setup_timeout: float
    turn_timeout: float


def score_step(res: Path, settings: StepSettings) -> ScoreResult | SubmissionInvalid:
    """The step on the upload the platform put in ``res``: the organizer's reference data checked first (its
    errors name file and line), the upload found (:func:`find_upload`), then :func:`score_code_upload`."""
    load_reference(settings.data, settings.options.settled_config().limits)
    try:
        dialogues = runner.read_dialogues(settings.data)
    except runner.UsageFault as exc:
        raise UsageError(str(exc)) from None
    upload = find_upload(res, {d["dialog_id"]: len(d["turns"]) for d in dialogues})
    return score_code_upload(upload, settings, dialogues)


def score_code_upload(
    upload: Upload, settings: StepSettings, dialogues: list[runner.CodeDialogue]
) -> ScoreResult | SubmissionInvalid:
    """Run the step on ``upload`` (``dialogues``: the reference data's, as the runner reads them): the scored
    result, or the verdict when the team's code failed; both are written to ``settings.output`` by the step
    itself. StepSurprise (exit 1, no scores) for a surprise; UsageError for the organizer's data."""
    guard = Guard.get()
    data = settings.data
    try:
        targets = runner.read_targets(data, dialogues)
    except runner.UsageFault as exc:
        raise UsageError(str(exc)) from None
    if targets is None:
        raise UsageError(f"{data}: the reference data holds no answers.jsonl for the ppl phase")
    scratch = tempfile.mkdtemp(prefix="scorer-code-")
    try:
        placeholder = {d["dialog_id"]: [1.0] * len(d["turns"]) for d in dialogues}
        placeholder_file = Path(scratch) / "placeholder_ppl.json"
        placeholder_file.write_text(json.dumps(placeholder), encoding="utf-8")
        scored = score_submission(
            data,
            str(upload.folder / SUBMISSION),
            str(placeholder_file),
            options=settings.options,
            audience=settings.audience,
        )
        config = settings.options.config
        assert config is not None
        # a rehearsal of what follows the phase: every module imported, every file (fonts) read
        score_files(with_perplexities(scored, placeholder, config), report=True)
        rehearsal = SubmissionInvalid([Issue("team_code/generate.py", "rehearsal", "exception")])
        failure_files(rehearsal, "invalid", settings.page)
        str(rehearsal)
        try:
            code_root = runner.find_code(str(upload.folder), scratch)
        except runner.CodeFault as fault:
            return _written(_verdict(fault), settings)
        return _run_sealed(guard, scored, config, dialogues, targets, code_root, scratch, settings)
    finally:
        guard.off()
        shutil.rmtree(scratch, ignore_errors=True)


def _verdict(fault: runner.CodeFault) -> SubmissionInvalid:
    return SubmissionInvalid(
        [Issue("team_code/generate.py", f"the code failed ({fault.kind}; {fault.where()})", fault.kind)]
    )


def _run_sealed(
    guard: Guard,
    scored: ScoreResult,
    config: Config,
    dialogues: list[runner.CodeDialogue],
    targets: dict[str, list[str]],
    code_root: str,
    scratch: str,
    settings: StepSettings,
) -> ScoreResult | SubmissionInvalid:
    digest = runner.code_digest(code_root)  # read now: nothing is read once the code runs
    output_fd = os.open(settings.output, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    limits = _limits()
    signals = _Signals([])
    previous = {sig: signal.signal(sig, signals) for sig in _SIGNALS}
    surprises: list[str] = []
    phase = runner.PhaseSettings(
        None,
        quiet=True,
        setup_timeout=settings.setup_timeout,
        turn_timeout=settings.turn_timeout,
        sealed=True,
        scratch=scratch,
    )
    outcome: ScoreResult | SubmissionInvalid | None = None
    try:
        guard.imports = True
        guard.allowed = (scratch.rstrip("/") + "/", "/proc/", os.devnull)
        if not runner.become_undumpable() or not runner.become_subreaper():
            raise StepSurprise("this system cannot make the step non-dumpable and the child subreaper")
        values: dict[str, list[float | None]] | None = None
        try:
            signals.raising = True
            values, _ = runner.perplexities(dialogues, targets, code_root, phase, digest=digest)
        except runner.CodeFault as fault:
            outcome = _verdict(fault)
        except StepSurprise as exc:
            surprises.append(exc.what)
        except BaseException as exc:  # noqa: BLE001 - whatever the code made happen here is a surprise
            surprises.append(f"{type(exc).__name__} while the code ran")
        finally:
            signals.raising = False
            restored = _restore(limits)  # first, so that the processes can be listed and killed
            surprises.extend(_kill_the_rest())
            guard.allowed = None
            surprises.extend(restored or _restore(limits))
        if values is not None:
            outcome = with_perplexities(scored, runner.numbers(values), config)
        if outcome is None:
            raise StepSurprise(_first(surprises) if surprises else "no outcome")
        files = _files_of(outcome, settings)
        surprises.extend(_empty(output_fd))
        surprises.extend(_late(signals, guard))
        if surprises:
            raise StepSurprise(_first(surprises))
        _write_all(output_fd, files)
        late = _late(signals, guard)  # while the outputs were written
        if late:
            _remove_scores(output_fd)
            raise StepSurprise(_first(late))
        return outcome
    except StepSurprise:
        _remove_scores(output_fd)
        raise
    except BaseException as exc:  # noqa: BLE001 - the invariant: anything unexpected is no score
        _remove_scores(output_fd)
        raise StepSurprise(f"{type(exc).__name__} after the code ran") from None
    finally:
        guard.off()
        for sig, before in previous.items():
            signal.signal(sig, before)
        os.close(output_fd)


def _late(signals: _Signals, guard: Guard) -> list[str]:
    """The signals received and the guard's catches so far, as surprises."""
    return [f"it received {_signal_name(s)}" for s in signals.received] + guard.caught


def _first(surprises: list[str]) -> str:
    return surprises[0] + (f", and {len(surprises) - 1} more" if len(surprises) > 1 else "")


def _files_of(outcome: ScoreResult | SubmissionInvalid, settings: StepSettings) -> dict[str, bytes]:
    if isinstance(outcome, SubmissionInvalid):
        return failure_files(outcome, "invalid", settings.page)
    return score_files(outcome, report=True)


def _written(
    outcome: ScoreResult | SubmissionInvalid, settings: StepSettings
) -> ScoreResult | SubmissionInvalid:
    """Write a verdict found before the code started (through a descriptor of the output folder)."""
    output_fd = os.open(settings.output, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        problems = _empty(output_fd)
        if problems:
            raise StepSurprise(problems[0])
        _write_all(output_fd, _files_of(outcome, settings))
    finally:
        os.close(output_fd)
    return outcome


def _limits() -> dict[int, tuple[int, int]]:
    return {
        getattr(resource, name): resource.getrlimit(getattr(resource, name))
        for name in dir(resource)
        if name.startswith("RLIMIT_")
    }


def _restore(limits: Mapping[int, tuple[int, int]]) -> list[str]:
    """Put back every resource limit the step had before the code ran; what could not be put back."""
    failed = []
    for which, value in limits.items():
        try:
            if resource.getrlimit(which) != value:
                resource.setrlimit(which, value)
            if resource.getrlimit(which) != value:
                raise ValueError
        except (ValueError, OSError):
            failed.append(f"a resource limit ({which}) that the code changed could not be restored")
    return failed


def _kill_the_rest() -> list[str]:
    """Kill every process the code left; a surprise when one remains or the processes cannot be listed."""
    try:
        try:
            left = runner.kill_descendants(strict=True)
        except OSError as exc:
            if exc.errno != errno.EMFILE:
                raise
            # the code lowered this process's descriptor limit below what it holds: standard input (never
            # read here) makes room for the one descriptor listing the processes needs at a time
            os.close(0)
            left = runner.kill_descendants(strict=True)
            raise OSError(exc.errno, "the code lowered the scorer's descriptor limit") from None
    except OSError as exc:
        return [f"the processes the code left could not be listed at first ({exc.strerror})"]
    return [f"{len(left)} process(es) the code left could not be killed"] if left else []


def _empty(fd: int) -> list[str]:
    """Remove everything in the output folder (its descriptor ``fd``), links not followed."""
    try:
        names = os.listdir(fd)
        for name in names:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(name, dir_fd=fd)
            else:
                os.unlink(name, dir_fd=fd)
        left = os.listdir(fd)
    except OSError as exc:
        return [f"the output folder could not be emptied ({exc.strerror})"]
    return [f"the output folder still holds {len(left)} file(s) after it was emptied"] if left else []


def _write_all(fd: int, files: Mapping[str, bytes]) -> None:
    """Write ``files`` into the output folder (its descriptor ``fd``), each new (``O_EXCL``), no link
    followed; ``scores.json`` last."""
    order = sorted(files, key=lambda name: name == SCORES_JSON)
    for name in order:
        if "/" in name or name in ("", ".", ".."):
            raise ValueError(f"not a name of the output folder: {name!r}")
        target = os.open(
            name,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
            0o644,
            dir_fd=fd,
        )
        try:
            view = memoryview(files[name])
            while view:
                view = view[os.write(target, view) :]
            os.fsync(target)
        finally:
            os.close(target)
    os.fsync(fd)


def _remove_scores(fd: int) -> None:
    for name in (SCORES_JSON, SCORES_TXT):
        try:
            os.unlink(name, dir_fd=fd)
        except OSError:
            pass


__all__ = ["StepSettings", "StepSurprise", "Upload", "find_upload", "read_run_fault", "score_code_upload"]
