"""``bundle``: the organizer's own Codabench competition (``competition.yaml`` version 2) built from a
reference directory and the configuration's ``[platform]`` section (contract sections 6, 10 and 11).

The bundle holds a title and logo, four pages (overview, evaluation, data, terms) in the configuration's
language, the scoring program (``metadata.yaml`` running ``codalab`` in the image), each task's reference
data (``dialogues.jsonl``, ``answers.jsonl``, the configuration it carries and the media files the
dialogues name), the public data (``dialogues.jsonl`` and the same media files), a starting kit, the phases
with their limits, and a leaderboard whose columns are the top-level numbers of ``scores.json``, each with
``posted_decimals`` decimals. Nothing private (``answers.jsonl``, the configuration) is written outside the
tasks' reference-data folders, and the pages say of the hidden metric only that it is derived from the
perplexities. ``--code`` makes a code competition (:mod:`scorer.bundle.competition`), which may have a
final on held-out dialogues (:func:`held_out`, contract section 11): the public competition then has one
phase, development, on the other dialogues, and ``final/`` beside it holds the held-out dialogues as the two
steps need them and ``final/bundle.zip``, the organizer's own competition that runs each team's selected
upload on them. No held-out dialogue reaches the public competition's folders or its ``bundle.zip``.

``competition.yaml`` is data (:func:`competition_spec`) emitted by PyYAML's ``safe_dump``, every value typed
and every date and time a quoted string; the pages come from templates (:mod:`scorer.bundle.pages`).

Every value is checked before anything is written (:func:`plan_competition`), and the same inputs give the
same bytes: every file is made from the inputs alone (the salt a private config without one gets is
derived from ``answers.jsonl`` and the config), and ``bundle.zip`` lists the files in a fixed order with a
fixed date.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import random
import re
import struct
import zipfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from scorer.errors import ConfigError, UsageError
from scorer.inputs.config import AuditSettings, Config
from scorer.inputs.contract import ANSWERS, CONFIG_IN_REFERENCE, DIALOGUE_TYPES, DIALOGUES, PPL, SUBMISSION
from scorer.inputs.media import media_parts, named_media
from scorer.inputs.validation import Dialogue
from scorer.outputs.output_dir import publish
from scorer.scoring.run import Run, RunOptions

from . import pages
from .competition import (
    INGESTION_PROGRAM,
    INPUT_DATA,
    RUNNER,
    Competition,
    Task,
    carried_config,
    config_text,
    derived_salt,
    ingestion_command,
    said_submissions,
    scoring_command,
)
from .kit import example_upload, kit_code
from .runner_file import runner_file

COMPETITION_YAML, BUNDLE_ZIP = "competition.yaml", "bundle.zip"
SCORING_PROGRAM, REFERENCE_DATA, PUBLIC_DATA, STARTING_KIT = (
    "scoring_program",
    "reference_data",
    "public_data",
    "starting_kit",
)
#: The organizer's final (contract section 11): a folder beside the public competition, holding the held-out
#: input and reference data and the final competition's own ``bundle.zip``.
FINAL = "final"
#: The held-out task's folders of earlier bundles (a final phase in the public competition), which a rebuild
#: removes.
EARLIER_FINAL_FOLDERS = ("final_reference_data", "final_input_data")
#: The organizer's final competition keeps every upload on its leaderboard, one row each (Codabench's
#: ``AllModeStrategy``), although one account makes them all; and it has no upload limit (0: none).
FINAL_RULE = "Force_Latest_Multiple"
#: What the audit needs of the held-out set to judge the final (contract sections 9 and 11): probes for
#: ``probe_insensitive``, turns with a token for ``ppl_against_meteor``.
FINAL_MIN_PROBES, FINAL_MIN_TURNS = 20, 100
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
PAGE_FILES = ("pages/overview.md", "pages/evaluation.md", "pages/data.md", "pages/terms.md")


@dataclass(frozen=True)
class BundleSource:
    """What a bundle is made of: the reference files' bytes, the checked dialogues, the configuration in
    force and its file's bytes (None for the built-in default), and the media files the dialogues name
    (:func:`scorer.inputs.reference.load_reference_and_media`: path in the data folder -> bytes)."""

    dialogues_bytes: bytes
    answers_bytes: bytes
    dialogues: Sequence[Dialogue]
    config: Config
    config_bytes: bytes | None
    media: Mapping[str, bytes] = field(default_factory=dict)


_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN = (
    r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?"
)
#: An image reference as ``docker build -t`` and ``docker pull`` take it (the distribution project's grammar).
IMAGE_REFERENCE = re.compile(
    rf"(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*(?::[\w][\w.-]{{0,127}})?(?:@[a-z0-9]+:[a-fA-F0-9]{{32,}})?"
)


def image_problem(image: str) -> str | None:
    """Why ``image`` is not a valid image reference (the rule it breaks), or None."""
    if not image:
        return "it is empty; give the name of the scorer's image the platform pulls"
    if len(image) > 255:
        return "it is longer than 255 characters"
    if IMAGE_REFERENCE.fullmatch(image):
        return None
    path = image.split("@")[0]
    if ":" in path.rsplit("/", 1)[-1]:
        path = path[: path.rindex(":")]
    if path.split("/")[-1] != path.split("/")[-1].lower() or (
        "/" in path and any(c.isupper() for c in path.split("/", 1)[1])
    ):
        return "the repository name must be lowercase (docker.io/your-org/dialogue-scorer:1.0, say)"
    return (
        "it is not an image reference: [registry/]name[:tag], the name's parts lowercase letters, digits "
        "and single separators (. _ __ -), the tag at most 128 of letters, digits, . _ -"
    )


def held_out(dialogues: Sequence[Dialogue], share: float, seed: int) -> set[str]:
    """The dialog_ids held out for the organizers' final (contract section 11): for each type in the
    contract's order, one ``random.Random(seed)`` shuffles the type's sorted dialog_ids in turn, and the first
    k = min(n - 1, max(1, round(share x n))) of its n are held out (Python's ``round``: half to even). A type
    with one dialogue is a :class:`~scorer.errors.ConfigError`: it would have none left to develop on."""
    rng = random.Random(seed)
    chosen: set[str] = set()
    for kind in DIALOGUE_TYPES:
        ids = sorted(d.dialog_id for d in dialogues if d.type == kind)
        if not ids:
            continue
        if len(ids) == 1:
            raise ConfigError(
                f"config key platform.final_start: the data has one {kind} dialogue ({ids[0]!r}), so the "
                "final cannot hold one out and keep one for the development phase; add dialogues of that "
                "type or leave final_start empty"
            )
        rng.shuffle(ids)
        chosen.update(ids[: min(len(ids) - 1, max(1, round(share * len(ids))))])
    return chosen


def _lines_of(data: bytes) -> list[tuple[str, str]]:
    """(dialog_id, line) of each line of a checked JSON Lines file (its BOM, CRs and blank lines dropped)."""
    rows = []
    for line in data.decode("utf-8-sig").split("\n"):
        line = line.rstrip("\r")
        if line.strip():
            rows.append((json.loads(line)["dialog_id"], line))
    return rows


def _subset(data: bytes, ids: set[str]) -> bytes:
    kept = [line for dialog_id, line in _lines_of(data) if dialog_id in ids]
    return ("\n".join(kept) + "\n").encode("utf-8")


def _probes(answers_bytes: bytes) -> int:
    """The probe calls the scoring step makes on these answers (contract section 10): as many as the turns
    whose first variant has at least ``probe_min_words`` words, two of them different, and at most
    ``probe_turns``; the scoring step reads the carried configuration, which has no ``[audit]``, so the
    built-in values."""
    audit = AuditSettings()
    eligible = 0
    for _, line in _lines_of(answers_bytes):
        for variants in json.loads(line)["references"]:
            words = variants[0].split()
            eligible += len(words) >= audit.probe_min_words and len(set(words)) > 1
    return min(audit.probe_turns, eligible)


def _task(
    source: BundleSource, index: int, phase: str, folders: tuple[str, str], ids: set[str] | None
) -> Task:
    dialogues = tuple(d for d in source.dialogues if ids is None or d.dialog_id in ids)
    chosen = {d.dialog_id for d in dialogues}
    dialogues_bytes = source.dialogues_bytes if ids is None else _subset(source.dialogues_bytes, chosen)
    answers_bytes = source.answers_bytes if ids is None else _subset(source.answers_bytes, chosen)
    named = {"/".join(media_parts(name)) for _, _, name in named_media(dialogues_bytes)}
    media = {name: data for name, data in source.media.items() if name in named}
    return Task(
        index, phase, *folders, dialogues, dialogues_bytes, answers_bytes, media, _probes(answers_bytes)
    )


def plan_competition(
    source: BundleSource, image: str | None = None, title: str | None = None, code: bool = False
) -> Competition:
    """The public competition ``source`` makes, every value checked before anything is written (contract
    section 11): ``image`` and ``title`` override ``[platform]``'s (a bundle with no image anywhere is a
    :class:`~scorer.errors.UsageError`); ``code`` makes a code competition, which a configuration that says
    ``submissions = "files"`` contradicts, as one that says ``"code"`` contradicts a files competition; a
    final (``final_start``) only in a code competition: its held-out task is the competition's ``held_out``
    (:func:`final_competition` makes the organizer's own competition of it). Each fault is a
    :class:`~scorer.errors.ConfigError` naming the key."""
    config, platform = source.config, source.config.platform
    if image is None or not image.strip():
        image = platform.image.strip()
        if not image:
            raise UsageError(
                "no image: give the scorer's image with --image NAME, or set [platform] image in the "
                "configuration"
            )
        problem = image_problem(image)
        if problem is not None:
            raise ConfigError(f"config key platform.image: {problem}")
    else:
        image = image.strip()
        problem = image_problem(image)
        if problem is not None:
            raise UsageError(f"image {image[:60]!r}: {problem}")
    said = said_submissions(source.config_bytes)
    if code and said == "files":
        raise ConfigError(
            "config key competition.submissions is 'files', but bundle --code makes a code competition: set "
            'it to "code" (or leave it out: the bundle adds it), or bundle without --code'
        )
    if not code and (said == "code" or config.competition.is_code):
        raise ConfigError(
            'config key competition.submissions is "code": make a code competition with bundle --code, or '
            'set it to "files"'
        )
    task = _task(source, 0, "test", (REFERENCE_DATA, INPUT_DATA), None)
    final_task = None
    if platform.final_start is not None:
        if not code:
            raise ConfigError(
                "config key platform.final_start: the final runs the teams' code on held-out dialogues, so "
                "it needs a code competition (bundle --code); a files competition would have to publish "
                "them. Leave final_start empty"
            )
        final = held_out(source.dialogues, platform.final_share, platform.seed)
        development = {d.dialog_id for d in source.dialogues} - final
        task = _task(source, 0, "development", (REFERENCE_DATA, INPUT_DATA), development)
        final_task = _task(source, 0, "final", (REFERENCE_DATA, INPUT_DATA), final)
    salt = None
    if source.config_bytes is not None and config.hidden_metric.unsalted:
        salt = derived_salt(source.answers_bytes, source.config_bytes)
    present = {d.type for d in source.dialogues}
    return Competition(
        title=title.strip() if title and title.strip() else platform.title,
        image=image,
        code=code,
        config=config,
        types=tuple(t for t in DIALOGUE_TYPES if t in present),
        task=task,
        carried=carried_config(source.config_bytes, code=code, salt=salt),
        salted=salt is not None,
        held_out=final_task,
    )


def final_competition(competition: Competition) -> Competition | None:
    """The organizer's own final competition of ``competition`` (contract section 11), or None without a
    final: its one task and phase hold the held-out dialogues, with the same image, queue, time limits and
    commands; the organizer uploads each team's selected development upload to it, under the team's name."""
    if competition.held_out is None:
        return None
    return replace(competition, task=competition.held_out, organizers_final=True)


def final_warnings(competition: Competition) -> list[str]:
    """What the audit cannot judge on the held-out set (contract section 11): one line where its scoring step
    gives fewer than 20 probes, one where it has fewer than 100 turns (so fewer with a token), each naming
    the count, ``final_share`` and the checks that cannot judge. Empty without a final."""
    final = competition.held_out
    if final is None:
        return []
    share = competition.platform.final_share
    found = []
    if final.probes < FINAL_MIN_PROBES:
        found.append(
            f"bundle: the held-out dialogues give the final's scoring step {final.probes} probe(s) "
            f"(final_share {share}), fewer than the {FINAL_MIN_PROBES} the audit needs: probe_insensitive "
            "cannot judge the final (raise final_share, or add dialogues whose answers have at least "
            "probe_min_words words)"
        )
    if final.turns < FINAL_MIN_TURNS:
        found.append(
            f"bundle: the held-out dialogues have {final.turns} turn(s) (final_share {share}), fewer than "
            f"the {FINAL_MIN_TURNS} turns with a token the audit needs: ppl_against_meteor cannot judge the "
            "final (raise final_share, or add dialogues)"
        )
    return found


def competition_files(competition: Competition, runner_source: bytes | None = None) -> dict[str, bytes]:
    """The files of ``competition``'s bundle folder, ``bundle.zip`` included, and with a final the organizer's
    ``final/`` beside them (:func:`final_files`); ``runner_source`` (the runner module's bytes) for a code
    competition."""
    files = _tree(competition, runner_source)
    files[BUNDLE_ZIP] = zip_bytes(files)
    final = final_competition(competition)
    if final is not None:
        files.update(final_files(final, runner_source))
    return dict(sorted(files.items()))


def final_files(final: Competition, runner_source: bytes | None) -> dict[str, bytes]:
    """``final/`` (contract section 11): the held-out dialogues as the two steps need them
    (``final/input_data/``, without answers; ``final/reference_data/``, with them and the carried
    configuration) and ``final/bundle.zip``, the organizer's own competition of them."""
    tree = _tree(final, runner_source)
    data = {
        f"{FINAL}/{path}": content
        for path, content in tree.items()
        if path.startswith((f"{REFERENCE_DATA}/", f"{INPUT_DATA}/"))
    }
    return {**data, f"{FINAL}/{BUNDLE_ZIP}": zip_bytes(tree)}


def _tree(competition: Competition, runner_source: bytes | None) -> dict[str, bytes]:
    """One competition's files as its ``bundle.zip`` holds them: the public competition's with its public
    data and starting kit, the organizer's final without them (it has no participant)."""
    task, platform = competition.task, competition.platform
    files: dict[str, bytes] = {
        COMPETITION_YAML: competition_yaml(competition).encode("utf-8"),
        "logo.png": logo_png(),
        **{path: text.encode("utf-8") for path, text in zip(PAGE_FILES, pages.pages(competition))},
        f"{SCORING_PROGRAM}/metadata.yaml": _metadata(
            scoring_command(platform if competition.code else None),
            pages.word(competition.language, "scoring_program"),
        ),
        f"{task.reference_folder}/{DIALOGUES}": task.dialogues_bytes,
        f"{task.reference_folder}/{ANSWERS}": task.answers_bytes,
    }
    if competition.carried is not None:
        files[f"{task.reference_folder}/{CONFIG_IN_REFERENCE}"] = competition.carried
    folders = (task.reference_folder, *((task.input_folder,) if competition.code else ()))
    for name, data in task.media.items():  # where the models and the scoring step's get_ppl look
        for folder in folders:
            files[f"{folder}/{name}"] = data
    if not competition.organizers_final:
        files[f"{PUBLIC_DATA}/{DIALOGUES}"] = task.dialogues_bytes
        files.update({f"{PUBLIC_DATA}/{name}": data for name, data in task.media.items()})
    if competition.code:
        assert runner_source is not None
        files[f"{task.input_folder}/{DIALOGUES}"] = task.dialogues_bytes
        files[f"{INGESTION_PROGRAM}/{RUNNER}"] = runner_source
        files[f"{INGESTION_PROGRAM}/metadata.yaml"] = _metadata(
            ingestion_command(platform, competition.offline),
            pages.word(competition.language, "ingestion_program"),
        )
        if not competition.organizers_final:
            files.update(kit_code())
            files[f"{STARTING_KIT}/{RUNNER}"] = runner_source
            files[f"{STARTING_KIT}/README.md"] = pages.code_kit_readme(competition).encode("utf-8")
    else:
        example = example_upload(task.dialogues_bytes)
        files[f"{STARTING_KIT}/{SUBMISSION}"] = example[SUBMISSION]
        files[f"{STARTING_KIT}/{PPL}"] = example[PPL]
        files[f"{STARTING_KIT}/README.md"] = pages.files_kit_readme(competition).encode("utf-8")
    return files


def _metadata(command: str, description: str) -> bytes:
    text = _safe_dump({"command": command, "description": description})
    return str(text).encode("utf-8")


@dataclass(frozen=True)
class MadeBundle:
    """A bundle's files, the configuration it used (its ``config_source``, as every result says it) and
    whether it added a salt to the private config it carries."""

    files: dict[str, bytes]
    config_source: str
    salted: bool
    #: What the audit cannot judge on the held-out set (:func:`final_warnings`), one line each.
    warnings: tuple[str, ...] = ()


def make_bundle(
    data_dir: str | os.PathLike[str],
    image: str | None = None,
    *,
    config: Config | str | os.PathLike[str] | None = None,
    title: str | None = None,
    code: bool = False,
) -> MadeBundle:
    """The bundle of the reference directory ``data_dir`` (what ``bundle`` writes): the configuration found
    as every command finds it (``config`` if given, a file or a :class:`Config`, else ``config.toml`` in
    ``data_dir``, else the built-in default), the reference data read and checked, only what was validated
    published. A :class:`Config` is carried as the TOML of its settings that differ from the built-in
    default's (:func:`config_text`). Raises :class:`~scorer.errors.UsageError`,
    :class:`~scorer.errors.ConfigError` or :class:`~scorer.errors.ReferenceDataError` when an input is missing
    or invalid; nothing is written."""
    data = Path(data_dir)
    # the run opened once: the configuration settled, the reference data and the media it names read, every
    # error of both in one round (as check-data gives them)
    run = Run.open(data, RunOptions(config), media=True)
    settings, reference, media = run.config, run.reference, run.media or {}
    config_file = Path(config) if isinstance(config, (str, os.PathLike)) else data / CONFIG_IN_REFERENCE
    try:
        if isinstance(config, Config):
            config_bytes = config_text(config)
        else:
            config_bytes = config_file.read_bytes() if config is not None or config_file.is_file() else None
        dialogues_bytes, answers_bytes = ((data / name).read_bytes() for name in (DIALOGUES, ANSWERS))
    except OSError as exc:
        raise UsageError(f"cannot read {exc.filename}: {exc.strerror}") from None
    public = public_dialogues(dialogues_bytes)  # only what was validated, written anew (contract section 6)
    source = BundleSource(public, answers_bytes, reference.dialogues, settings, config_bytes, media)
    competition = plan_competition(source, image, title, code)
    runner_source = runner_file() if code else None
    return MadeBundle(
        competition_files(competition, runner_source),
        run.config_source,
        competition.salted,
        tuple(final_warnings(competition)),
    )


#: Every path a bundle can hold outside its owned folders, and the owned folders' fixed files (a file of an
#: earlier bundle that this one lacks is removed).
def bundle_paths() -> list[str]:
    return [
        COMPETITION_YAML,
        BUNDLE_ZIP,
        "logo.png",
        *PAGE_FILES,
        f"{SCORING_PROGRAM}/metadata.yaml",
        f"{REFERENCE_DATA}/{DIALOGUES}",
        f"{REFERENCE_DATA}/{ANSWERS}",
        f"{REFERENCE_DATA}/{CONFIG_IN_REFERENCE}",
        f"{PUBLIC_DATA}/{DIALOGUES}",
        *(f"{STARTING_KIT}/{name}" for name in (SUBMISSION, PPL, "README.md")),
        f"{FINAL}/{BUNDLE_ZIP}",
    ]


#: The bundle's folders that hold only what the bundle writes: a rebuild removes whatever else stands in
#: them (an earlier bundle's media, a code bundle's files, a final task's data), and the folders it leaves
#: empty.
OWNED_FOLDERS = (
    PUBLIC_DATA,
    REFERENCE_DATA,
    STARTING_KIT,
    INGESTION_PROGRAM,
    INPUT_DATA,
    FINAL,
    *EARLIER_FINAL_FOLDERS,
)


def _earlier_files(output: Path) -> list[str]:
    """Everything but folders in ``output``'s owned folders (a link to a folder is listed, never entered)."""
    found = []
    for folder in OWNED_FOLDERS:
        top = output / folder
        if top.is_symlink() or not top.is_dir():
            continue
        for root, folders, names in os.walk(top):
            links = [name for name in folders if os.path.islink(os.path.join(root, name))]
            found += [Path(root, name).relative_to(output).as_posix() for name in names + links]
    return sorted(found)


def _remove_empty_folders(output: Path) -> None:
    """Remove the folders under ``output``'s owned folders, and those folders, that are left empty."""
    for folder in OWNED_FOLDERS:
        top = output / folder
        if top.is_symlink() or not top.is_dir():
            continue
        for root, _, _ in os.walk(top, topdown=False):
            try:
                os.rmdir(root)
            except OSError:
                pass  # not empty


def zip_bytes(files: dict[str, bytes]) -> bytes:
    """``files`` (path -> bytes) as a zip: sorted, dated 1980-01-01, mode 0644, deflated."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            info.external_attr = 0o100644 << 16
            info.create_system = 3
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name], compresslevel=9)
    return buffer.getvalue()


def leaderboard_columns(types: Iterable[str], language: str = "en") -> list[tuple[str, str]]:
    """(key, title) of each leaderboard column: ``integral`` (the ranking column), ``meteor``,
    ``hidden_metric``, then one per dialogue type present, each a top-level number of ``scores.json``."""
    return [
        ("integral", pages.word(language, "integral")),
        ("meteor", "METEOR"),
        ("hidden_metric", pages.word(language, "hidden_metric")),
        *((t, t) for t in types),
    ]


def _instant(day: datetime.date, time: str) -> str:
    """A phase's start or end as ``competition.yaml`` gives it: the string ``"YYYY-MM-DD HH:MM:SS"`` (UTC),
    which the emitter quotes (it would read as a date-time otherwise). Codabench's unpacker
    (``get_datetime``) reads an unquoted YAML date-time as a date, at midnight, which would close the
    development phase a day early; a string it parses whole (contract section 11)."""
    return f"{day.isoformat()} {time}"


def _phase_spec(competition: Competition) -> dict[str, Any]:
    """The competition's one phase: the public competition's (``test``, or ``development`` with a final:
    from ``development_start`` 00:00:00 to 23:59:59 of the day before ``final_start``), or the organizer's
    final (from ``final_start``, no end, no upload limit: 0 and 0)."""
    platform, language, task = competition.platform, competition.language, competition.task
    final = competition.organizers_final
    start = pages.final_start(competition) if final else platform.development_start
    phase: dict[str, Any] = {
        "index": task.index,
        "name": pages.word(language, task.phase),
        "description": pages.phase_description(competition, task),
        "start": _instant(start, "00:00:00"),
    }
    end = competition.development_end()
    if not final and end is not None:
        phase["end"] = _instant(end, "23:59:59")
    phase["max_submissions_per_day"] = 0 if final else platform.max_submissions_per_day
    phase["max_submissions"] = 0 if final else platform.max_submissions
    phase["execution_time_limit"] = platform.execution_time_limit
    if competition.code:
        phase["hide_score_output"] = True
    phase["tasks"] = [task.index]
    phase["solutions"] = []
    if not final:
        phase["starting_kit"] = STARTING_KIT
        phase["public_data"] = PUBLIC_DATA
    return phase


def _task_spec(competition: Competition) -> dict[str, Any]:
    task = competition.task
    spec: dict[str, Any] = {
        "index": task.index,
        "name": pages.word(competition.language, "task_" + task.phase),
        "description": pages.task_description(competition, task),
        "scoring_program": SCORING_PROGRAM,
        "reference_data": task.reference_folder,
    }
    if competition.code:
        spec["ingestion_program"] = INGESTION_PROGRAM
        spec["input_data"] = task.input_folder
    return spec


def competition_spec(competition: Competition) -> dict[str, Any]:
    """``competition.yaml``'s contents (version 2), under the keys Codabench's unpacker reads (contract
    section 11): one task and one phase; the organizer's final keeps every upload on its leaderboard."""
    language, platform = competition.language, competition.platform
    final = competition.organizers_final
    spec: dict[str, Any] = {
        "version": 2,
        "title": pages.final_title(competition) if final else competition.title,
        "description": pages.word(language, "final_description" if final else "description"),
        "image": "logo.png",
        "registration_auto_approve": False,
        "docker_image": competition.image,
    }
    if platform.queue:
        spec["queue"] = platform.queue
    spec["enable_detailed_results"] = not competition.code
    spec["terms"] = PAGE_FILES[3]
    spec["pages"] = [
        {"title": name, "file": path} for name, path in zip(pages.page_titles(language), PAGE_FILES)
    ]
    spec["tasks"] = [_task_spec(competition)]
    spec["solutions"] = []
    spec["phases"] = [_phase_spec(competition)]
    columns = [
        {
            "title": name,
            "key": key,
            "index": k,
            "sorting": "desc",
            "precision": competition.decimals,
            "computation": None,
            "computation_indexes": None,
        }
        for k, (key, name) in enumerate(leaderboard_columns(competition.types, language))
    ]
    rule = FINAL_RULE if final else platform.submission_rule
    spec["leaderboards"] = [
        {"index": 0, "title": "Results", "key": "Results", "submission_rule": rule, "columns": columns}
    ]
    return spec


def _safe_dump(data: dict[str, Any]) -> str:
    """``data`` as YAML, by PyYAML's ``safe_dump``: in its own order, one line a value. PyYAML is imported
    here, when a bundle is made, not by every command that imports the package (docs/performance.md)."""
    import yaml

    return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1 << 16, indent=2))


def competition_yaml(competition: Competition) -> str:
    """``competition.yaml`` (:func:`competition_spec`), emitted by PyYAML's ``safe_dump``: every value typed,
    every date and time a quoted string, in the spec's order, one line a value."""
    body = _safe_dump(competition_spec(competition))
    return "# Codabench competition bundle (version 2), made by `python -m scorer bundle`.\n" + str(body)


def logo_png(size: int = 96) -> bytes:
    """The competition's logo: three speech bubbles' bars in the report's stage colours on white, as a PNG."""
    colours = [(0x2E, 0x7D, 0x32), (0x15, 0x65, 0xC0), (0xE6, 0x51, 0x00)]
    rows = []
    for y in range(size):
        row = bytearray(b"\0")  # filter: none
        for x in range(size):
            pixel = (255, 255, 255)
            band = (y - size // 6) // (size // 4)
            inside = size // 8 <= x < size - size // 8 - band * size // 6
            if 0 <= band < 3 and (y - size // 6) % (size // 4) < size // 6 and inside:
                pixel = colours[band]
            row += bytes(pixel)
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + chunk(b"IEND", b"")
    )


def write_bundle(output: Path, files: dict[str, bytes]) -> None:
    """Put the bundle's ``files`` into ``output`` (``competition.yaml`` last), removing the files of an
    earlier bundle there that this one lacks (in the owned folders, everything it does not write, and the
    folders left empty). It never writes through a symbolic link: a link at any path
    it would write or remove, or at a folder on the way, is a :class:`~scorer.errors.UsageError` naming it
    (contract section 6), and nothing is written."""
    output = Path(output)
    for path in sorted({*files, *bundle_paths(), *OWNED_FOLDERS}):
        parts = Path(path).parts
        for depth in range(1, len(parts) + 1):
            place = output.joinpath(*parts[:depth])
            if place.is_symlink():
                raise UsageError(
                    f"{place} is a symbolic link inside the bundle's output folder: the bundle is never "
                    "written through a link (it could put the private answers elsewhere); remove it"
                )
    publish(output, files, bundle_paths() + _earlier_files(output), COMPETITION_YAML)
    _remove_empty_folders(output)


def public_dialogues(dialogues_bytes: bytes) -> bytes:
    """``dialogues.jsonl`` written anew with the contract's fields alone (``dialog_id``, ``type``,
    ``turns``; in each part ``type`` and ``content``), from a file already validated: an extra key the
    organizer's file carries (their own references, notes, hints) is never published (contract section 6)."""
    lines = []
    for line in dialogues_bytes.decode("utf-8-sig").split("\n"):  # JSON lines end at "\n" alone
        if not line.strip():
            continue
        d = json.loads(line)
        turns = [[{"type": p["type"], "content": p["content"]} for p in turn] for turn in d["turns"]]
        lines.append(
            json.dumps({"dialog_id": d["dialog_id"], "type": d["type"], "turns": turns}, ensure_ascii=False)
        )
    return ("\n".join(lines) + "\n").encode("utf-8")
