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
3. The ``ppl`` phase runs sealed (:func:`scorer.runner.phases.perplexities`): the code's output discarded,
   a fault reported by one fixed line. Every output is then drawn in memory, every figure rounded to
   ``posted_decimals``, while the guard still refuses any read.
4. After: what the code left is killed (and none may remain), the resource limits are restored, the output
   folder is emptied of everything in it through the held descriptor (not by name; first its own user is
   given read, write and search permission again, the 0700 bits, on it and on every folder in it, whatever
   mode the code set, through descriptors, no link followed), the path is checked to still name that
   folder, and the outputs are written from memory by the output folder's own publisher
   (:func:`scorer.outputs.output_dir.publish`), ``scores.json`` last.

Any surprise on the way (a signal, a process that cannot be killed, a limit that cannot be restored, a
file that cannot be removed, an import, a file opened, a swapped output folder, anything unexpected) is
:class:`StepSurprise`: exit 1, the output folder emptied, no ``scores.json`` or ``scores.txt``, and on
stdout and stderr exactly what a fault of the code prints (:meth:`StepSurprise.verdict`: the one fixed line
:data:`~scorer.runner.names.SEALED_FAULT_LINE`), with no signal, limit, count, path or order: which of two
lines a failed upload shows would itself be a bit (contract section 10). Which surprise it was is kept in
:attr:`StepSurprise.what`, for the tests alone.
"""

from __future__ import annotations

import errno
import os
import resource
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scorer.errors import EXIT_INVALID, Issue, ScorerError, SubmissionInvalid, UsageError
from scorer.inputs.config import Config
from scorer.inputs.contract import PPL, SUBMISSION
from scorer.inputs.jsonio import shorten
from scorer.inputs.run_fault import fault_record as _fault_record
from scorer.inputs.run_fault import fault_text as _fault_text
from scorer.outputs.output_dir import publish
from scorer.outputs.report import SCORES_JSON, failure_files, score_files
from scorer.runner.data import CodeDialogue, Part
from scorer.runner.faults import CodeFault
from scorer.runner.names import RUN_FAULT, SEALED_FAULT_LINE, TEAM_CODE
from scorer.runner.network import network_refusal
from scorer.runner.phases import PhaseSettings, numbers, perplexities
from scorer.runner.process import become_subreaper, become_undumpable, kill_descendants
from scorer.runner.upload import code_digest, find_code, irregular_entries
from scorer.scoring.aggregate import Summary, TypeSummary
from scorer.scoring.audience import Audience
from scorer.scoring.result import ScoreResult
from scorer.scoring.run import Run, RunOptions
from scorer.scoring.scored import with_perplexities
from scorer.stop import Surprises


class StepSurprise(ScorerError):
    """Something the step does not expect happened once the code could act (contract section 10): exit 1,
    no scores, and reported as a fault of the code is (:meth:`verdict`), by the same one fixed line. Which
    surprise it was (``what``: a signal's name, a count, a limit) is kept here for the tests and never
    printed: a second line, or one that names it, would tell a surprise from a fault."""

    exit_code = EXIT_INVALID
    kind = "surprise"

    def __init__(self, what: str):
        self.what = what
        super().__init__(SEALED_FAULT_LINE)

    def verdict(self) -> SubmissionInvalid:
        """What the step reports for it: the verdict on an upload whose code failed, exactly."""
        return _verdict()


#: ``os.open`` flags that never read a file's data: a new file made for writing (``O_CREAT | O_EXCL``), or a
#: folder, opened to be emptied or synced (``O_DIRECTORY``: a file there fails to open).
_WRITE_NEW = os.O_CREAT | os.O_EXCL
_FOLDER_ONLY = os.O_DIRECTORY | os.O_NOFOLLOW


class Guard:
    """An audit hook installed once per process: while ``imports`` is on, an import is a surprise (and
    fails); while ``allowed`` is set, opening a file outside those folders is one (and fails), except an
    ``os.open`` that cannot read a file's data (a new file made for writing, a folder opened to be emptied).
    What it caught is in ``caught``."""

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
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            if (flags & _WRITE_NEW) == _WRITE_NEW or flags & os.O_DIRECTORY:
                return
            if not any(path == a.rstrip("/") or path.startswith(a) for a in self.allowed):
                self.caught.append(f"a file opened while the code ran: {shorten(path, 120)}")
                raise PermissionError("the scoring step reads nothing while the team's code runs")

    def off(self) -> None:
        self.imports = False
        self.allowed = None


@dataclass(frozen=True)
class Upload:
    """A code upload in the scoring step: the folder holding ``submission.jsonl`` and ``team_code/``."""

    folder: Path


def find_upload(res: Path, dialog_turns: Mapping[str, int]) -> Upload:
    """The upload in ``res`` (or its one top-level folder) of a competition whose config says ``submissions
    = "code"``; SubmissionInvalid (exit 1) saying why when it cannot be scored: the prediction step's
    ``run_fault.json`` repeated, a ``ppl_output.json`` (this competition computes perplexities itself), no
    ``team_code/``; NetworkRefused (exit 2) when that ``run_fault.json`` says the prediction step refused a
    network (contract section 10: repeated as exit 2 before ``team_code/`` is looked for)."""
    candidates = _candidates(res)
    for folder in candidates:
        record = _fault_record(folder / RUN_FAULT)
        fault = _fault_text(record, dialog_turns)
        if fault is not None and isinstance(record, dict) and record["kind"] == "network":
            raise NetworkRefused(
                "the prediction step refused to run the team's code: a network interface other than "
                "loopback was up in its container (Codabench: set "
                "COMPETITION_CONTAINER_NETWORK_DISABLED=True on the worker, or allow it: "
                '[competition] network = "allowed")'
            )
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


def _candidates(res: Path) -> list[Path]:
    """The folders that may hold the upload: ``res`` itself, and its one top-level folder."""
    folders = [p for p in res.iterdir() if p.is_dir() and not p.is_symlink() and p.name != TEAM_CODE]
    return [res] + (folders if len(folders) == 1 and not (res / SUBMISSION).exists() else [])


@dataclass(frozen=True)
class StepSettings:
    """The step's inputs: the reference data folder, where the outputs go, the run options of the METEOR
    half, who reads the outputs, the runner's limits (``step_timeout``: the whole phase, None for none) and
    whether the phase's progress lines are left out."""

    data: str
    output: Path
    options: RunOptions
    audience: Audience
    page: str
    setup_timeout: float
    turn_timeout: float
    step_timeout: float | None = None
    quiet: bool = False


class NetworkRefused(UsageError):
    """A network interface other than loopback is up where the code would run (contract section 10, "the
    network"): exit 2, naming it and the worker's setting."""


def score_step(res: Path, settings: StepSettings) -> ScoreResult | SubmissionInvalid:
    """The step on the upload the platform put in ``res``: the run opened once on the organizer's reference
    data (its configuration settled by contract section 7's rule, the data checked first: its errors name
    file and line), then the network (unless that configuration allows one), then every entry of the upload
    (a FIFO, a socket, a device or a link is the upload's fault, never opened), the upload found
    (:func:`find_upload`, which repeats the prediction step's fault first), then :func:`score_code_upload`."""
    run = Run.open(settings.data, settings.options, parts=True)
    if run.config.competition.network != "allowed":
        refusal = network_refusal()
        if refusal is not None:
            raise NetworkRefused(refusal)
    irregular = irregular_entries(str(res))
    if irregular:
        raise SubmissionInvalid(
            [
                Issue(
                    name,
                    "not a regular file or a folder (a link, a FIFO, a socket or a device): the upload may "
                    "hold only files and folders, and nothing of it was read",
                    "upload",
                )
                for name in irregular
            ]
        )
    upload = find_upload(res, {d.dialog_id: d.n_turns for d in run.reference.dialogues})
    return score_code_upload(upload, settings, run)


def score_code_upload(upload: Upload, settings: StepSettings, run: Run) -> ScoreResult | SubmissionInvalid:
    """Run the step on ``upload`` on the opened ``run`` (:meth:`Run.open` with ``parts``): the scored result,
    or the verdict when the team's code failed; both are written to ``settings.output`` by the step itself.
    StepSurprise (exit 1, no scores) for a surprise; UsageError for the organizer's data."""
    return SealedStep(run, upload, settings).outcome()


def _code_dialogues(run: Run) -> list[CodeDialogue]:
    """The dialogues as the team's code is given them (contract section 10): each turn's parts as the run
    read them, every image and audio path made absolute against the reference directory."""
    assert run.parts is not None and run.data_dir is not None
    parts, base = run.parts, os.path.abspath(run.data_dir)

    def part(p: dict[str, str]) -> Part:
        media = p["type"] in ("image", "audio") and not os.path.isabs(p["content"])
        content = os.path.normpath(os.path.join(base, p["content"])) if media else p["content"]
        return Part(type=p["type"], content=content)

    return [
        CodeDialogue(
            dialog_id=d.dialog_id, type=d.type, turns=[[part(p) for p in t] for t in parts[d.dialog_id]]
        )
        for d in run.reference.dialogues
    ]


#: The scoring step's log shows the ``get_ppl`` phase at each quarter of its calls, no more often: the code
#: sets its own pace, so each line is a channel (contract section 10; docs/security.md gives its figure).
PROGRESS_MARKS = 4

#: The kind of the one error of an upload whose code failed in the scoring step.
CODE_FAILED = "code_failed"


def _verdict() -> SubmissionInvalid:
    """The verdict on an upload whose code failed in the scoring step: one fixed line, with no kind, function,
    place, signal or excerpt (contract section 10, "the fault": each would be a channel from the answers)."""
    return SubmissionInvalid([Issue(TEAM_CODE, SEALED_FAULT_LINE, CODE_FAILED)])


class SealedStep:
    """The scoring step of one upload, around the moment the team's code starts (contract section 10):
    :meth:`before` (the METEOR half scored, every output rehearsed, the code found and digested, the output
    folder held, the limits recorded), :meth:`during` (the guard on, the ``ppl`` phase run sealed, what the
    code left killed and the limits restored) and :meth:`after` (the outputs drawn from memory, the output
    folder emptied through its descriptor and checked, the outputs published); :meth:`outcome` runs them,
    and anything unexpected once the code could act is a :class:`StepSurprise`."""

    def __init__(self, run: Run, upload: Upload, settings: StepSettings) -> None:
        self.run, self.upload, self.settings = run, upload, settings
        self.guard = Guard.get()
        self.signals = Surprises(StepSurprise)  # every catchable signal is a surprise once installed
        self.surprises: list[str] = []
        self.scratch = ""
        self.output_fd = -1
        self.code_root = self.digest = ""
        self.limits: dict[int, tuple[int, int]] = {}
        self.dialogues: list[CodeDialogue] = []
        self.targets: dict[str, list[str]] = {}
        self.scored: ScoreResult | None = None
        self.values: dict[str, list[float | None]] | None = None
        self.verdict: SubmissionInvalid | None = None

    def outcome(self) -> ScoreResult | SubmissionInvalid:
        """The step's outcome, written to the output folder: before, during and after the code."""
        self.scratch = tempfile.mkdtemp(prefix="scorer-code-")
        try:
            early = self.before()
            if early is not None:
                return early
            try:
                self.during()
                return self.after()
            except StepSurprise:
                _empty(self.output_fd)
                raise
            except BaseException as exc:  # noqa: BLE001 - the invariant: anything unexpected is no score
                _empty(self.output_fd)
                raise StepSurprise(f"{type(exc).__name__} after the code ran") from None
            finally:
                self.guard.off()
                self.signals.restore()
                os.close(self.output_fd)
        finally:
            self.guard.off()
            shutil.rmtree(self.scratch, ignore_errors=True)

    def before(self) -> ScoreResult | SubmissionInvalid | None:
        """Everything the step reads, read now: the METEOR half scored with a perplexity of 1 a turn held in
        memory, every output rehearsed (each module imported, each file such as a font read), the code found
        (its verdict written now when there is none) and digested, the dialogues and targets it is given, the
        output folder opened (its descriptor held, no link followed), the resource limits recorded, and the
        signals taken."""
        run, settings = self.run, self.settings
        valid = run.validate_answers(self.upload.folder / SUBMISSION)
        self.scored = run.score(valid, audience=settings.audience)
        score_files(with_perplexities(self.scored, valid.ppl, run.config), report=True)
        rehearsal = _verdict()
        failure_files(rehearsal, "invalid", settings.page)
        str(rehearsal)
        try:
            self.code_root = find_code(str(self.upload.folder), self.scratch)
        except CodeFault:
            return _written(_verdict(), settings)
        self.dialogues = _code_dialogues(run)
        self.targets = {
            d: [variants[0] for variants in turns] for d, turns in run.reference.variants().items()
        }
        self.digest = code_digest(self.code_root)  # read now: nothing is read once the code runs
        self.output_fd = os.open(settings.output, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        self.limits = _limits()
        self.signals.install()
        return None

    def during(self) -> None:
        """The ``ppl`` phase, sealed: from here until the outputs are written nothing is imported or opened
        but the phase's scratch folder, ``/proc`` and ``/dev/null`` (contract section 10, "the reads"); then
        the limits restored, first, so that the processes the code left can be listed and killed."""
        guard, signals, settings = self.guard, self.signals, self.settings
        guard.imports = True
        guard.allowed = (self.scratch.rstrip("/") + "/", "/proc/", os.devnull)
        if not become_undumpable() or not become_subreaper():
            raise StepSurprise("this system cannot make the step non-dumpable and the child subreaper")
        phase = PhaseSettings(
            None,
            quiet=settings.quiet,
            setup_timeout=settings.setup_timeout,
            turn_timeout=settings.turn_timeout,
            sealed=True,
            scratch=self.scratch,
            step_timeout=settings.step_timeout,
            progress_marks=PROGRESS_MARKS,
        )
        try:
            signals.raising = True
            self.values, _ = perplexities(
                self.dialogues, self.targets, self.code_root, phase, digest=self.digest
            )
        except CodeFault:
            self.verdict = _verdict()
        except StepSurprise as exc:
            self.surprises.append(exc.what)
        except BaseException as exc:  # noqa: BLE001 - whatever the code made happen here is a surprise
            self.surprises.append(f"{type(exc).__name__} while the code ran")
        finally:
            signals.raising = False
            restored = _restore(self.limits)
            self.surprises.extend(_kill_the_rest())
            self.surprises.extend(restored or _restore(self.limits))

    def after(self) -> ScoreResult | SubmissionInvalid:
        """The outcome drawn from memory (the guard still refuses any read), the output folder emptied through
        its descriptor and checked to be the path's, and the outputs written by the output folder's own
        publisher, ``scores.json`` last; a surprise at any point raises."""
        config, settings, surprises = self.run.config, self.settings, self.surprises
        outcome: ScoreResult | SubmissionInvalid | None = self.verdict
        if self.values is not None:
            assert self.scored is not None
            outcome = posted(with_perplexities(self.scored, numbers(self.values), config), config)
        if outcome is None:
            raise StepSurprise(_first(surprises) if surprises else "no outcome")
        files = _files_of(outcome, settings)
        surprises.extend(_empty(self.output_fd))
        surprises.extend(_swapped(self.output_fd, settings.output))
        surprises.extend(_late(self.signals, self.guard))
        if surprises:
            raise StepSurprise(_first(surprises))
        publish(settings.output, files, (), SCORES_JSON)
        late = _late(self.signals, self.guard)  # while the outputs were written
        if late:
            raise StepSurprise(_first(late))
        return outcome


def posted(result: ScoreResult, config: Config) -> ScoreResult:
    """``result`` as a code competition posts it (contract section 10, "the figures"): every figure of its
    summary ``round(x, posted_decimals)`` of the full-precision value (the integral and the means were
    computed from unrounded values first), and no per-turn figure kept beside it."""
    digits = config.competition.posted_decimals
    s = result.summary
    by_type = {
        name: TypeSummary(
            round(t.weight, digits),
            t.dialogs,
            t.turns,
            round(t.meteor, digits),
            round(t.hidden_metric, digits),
            round(t.score, digits),
        )
        for name, t in s.by_type.items()
    }
    figures = (round(s.integral, digits), round(s.meteor, digits), round(s.hidden_metric, digits))
    summary = Summary(*figures, by_type, s.dialogs, s.turns)
    turns = [t._replace(meteor=0.0, hidden_metric=0.0, ppl=0.0, details=None) for t in result.turns]
    return replace(result, summary=summary, turns=turns, lowest=(), marked=(), audit=None)


def _swapped(fd: int, path: Path) -> list[str]:
    """A surprise when ``path`` no longer names the output folder held through ``fd`` (renamed or replaced
    while the code ran): the outputs are written only into the folder the step opened."""
    held = os.fstat(fd)
    try:
        now = os.stat(path, follow_symlinks=False)
    except OSError:
        return ["the output folder was renamed or removed while the code ran"]
    if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
        return ["the output folder was renamed or replaced while the code ran"]
    return []


def _late(signals: Surprises, guard: Guard) -> list[str]:
    """The signals received and the guard's catches so far, as surprises."""
    return signals.names() + guard.caught


def _first(surprises: list[str]) -> str:
    return surprises[0] + (f", and {len(surprises) - 1} more" if len(surprises) > 1 else "")


def _files_of(outcome: ScoreResult | SubmissionInvalid, settings: StepSettings) -> dict[str, bytes]:
    if isinstance(outcome, SubmissionInvalid):
        return failure_files(outcome, "invalid", settings.page)
    return score_files(outcome, report=True)


def _written(
    outcome: ScoreResult | SubmissionInvalid, settings: StepSettings
) -> ScoreResult | SubmissionInvalid:
    """Write a verdict found before the code started: the output folder emptied through its descriptor, then
    published by the output folder's own publisher."""
    output_fd = os.open(settings.output, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        problems = _empty(output_fd)
        if problems:
            raise StepSurprise(problems[0])
        publish(settings.output, _files_of(outcome, settings), (), SCORES_JSON)
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
            left = kill_descendants(strict=True)
        except OSError as exc:
            if exc.errno != errno.EMFILE:
                raise
            # the code lowered this process's descriptor limit below what it holds: standard input (never
            # read here) makes room for the one descriptor listing the processes needs at a time
            os.close(0)
            left = kill_descendants(strict=True)
            raise OSError(exc.errno, "the code lowered the scorer's descriptor limit") from None
    except OSError as exc:
        return [f"the processes the code left could not be listed at first ({exc.strerror})"]
    return [f"{len(left)} process(es) the code left could not be killed"] if left else []


def _empty(fd: int) -> list[str]:
    """Remove everything in the output folder (its descriptor ``fd``): no link followed, no file opened (a
    folder is opened ``O_DIRECTORY | O_NOFOLLOW`` to be emptied in turn). First this process's user is given
    read, write and search permission again on the folder and on each folder in it (:func:`_owner_may_enter`):
    a ``chmod 000`` the code set is no obstacle, since the owner needs no capability to change a mode, and
    Codabench runs the step as root with every capability dropped, for whom a folder of mode 000 cannot be
    opened or emptied."""
    try:
        _owner_may_enter(fd, os.fstat(fd))
        left = os.listdir(fd)
        while left:  # a round empties MAX_EMPTY_DEPTH levels and lifts what lies deeper into the folder
            _remove_all(fd, depth=0, top=fd)
            before, left = left, os.listdir(fd)
            if sorted(left) == sorted(before):  # no progress: what remains cannot be removed
                break
    except OSError as exc:
        return [f"the output folder could not be emptied ({exc.strerror or type(exc).__name__})"]
    return [f"the output folder still holds {len(left)} file(s) after it was emptied"] if left else []


#: The deepest folder :func:`_empty` goes into in one round: a folder deeper is lifted into the output folder
#: (renamed there, through the descriptors), so that no nesting the code made holds more than this many
#: descriptors open, and none leaves a file behind.
MAX_EMPTY_DEPTH = 64

#: What a folder's own user needs to empty it: read, write and search permission (mode 0700).
_OWNER_ALL = stat.S_IRWXU


def _owner_may_enter(fd: int, info: os.stat_result) -> None:
    """Give this process's user read, write and search permission again (the 0700 bits, the other bits
    kept) on the folder held through ``fd`` (``info`` its status), when it lacks one: through the
    descriptor, never a name. ``fd`` may be an ``O_PATH`` descriptor, which ``fchmod`` refuses: its mode is
    then changed through ``/proc/self/fd``, which names that very folder whatever its path has become."""
    mode = stat.S_IMODE(info.st_mode)
    if mode & _OWNER_ALL == _OWNER_ALL:
        return
    try:
        os.fchmod(fd, mode | _OWNER_ALL)
    except OSError as exc:
        if exc.errno != errno.EBADF:
            raise
        os.chmod(f"/proc/self/fd/{fd}", mode | _OWNER_ALL)


def _opened_folder(fd: int, name: str, info: os.stat_result) -> int:
    """A descriptor to read the folder ``name`` in the folder ``fd`` (``info`` its no-follow status),
    its mode first made to let this process's user empty it: the folder is held ``O_PATH | O_NOFOLLOW |
    O_DIRECTORY`` (which needs no permission on it, and opens no link), checked to be the folder ``info``
    describes, its mode restored through that descriptor, and only then opened for reading, through it."""
    path_only = os.O_PATH | _FOLDER_ONLY | getattr(os, "O_CLOEXEC", 0)
    held = os.open(name, path_only, dir_fd=fd)
    try:
        found = os.fstat(held)
        if (found.st_dev, found.st_ino) != (info.st_dev, info.st_ino):
            raise OSError(errno.ESTALE, "a folder in it was replaced while it was emptied")
        _owner_may_enter(held, found)
        return os.open(".", os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0), dir_fd=held)
    finally:
        os.close(held)


def _remove_all(fd: int, depth: int, top: int) -> None:
    """Remove what the folder ``fd`` holds, ``depth`` levels below the output folder ``top``; a folder at
    :data:`MAX_EMPTY_DEPTH` is not entered but renamed into ``top`` (a name no entry there has), for the
    next round of :func:`_empty`."""
    for name in os.listdir(fd):
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            sub = _opened_folder(fd, name, info)
            try:
                if depth >= MAX_EMPTY_DEPTH:
                    os.rename(name, _free_name(top), src_dir_fd=fd, dst_dir_fd=top)
                    continue
                _remove_all(sub, depth + 1, top)
            finally:
                os.close(sub)
            os.rmdir(name, dir_fd=fd)
        else:
            os.unlink(name, dir_fd=fd)


def _free_name(fd: int) -> str:
    """A name no entry of the folder ``fd`` has."""
    taken = set(os.listdir(fd))
    return next(name for k in range(len(taken) + 1) if (name := f".deeper-{k}") not in taken)


__all__ = ["StepSettings", "StepSurprise", "Upload", "find_upload", "score_code_upload"]
