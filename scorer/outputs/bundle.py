"""``bundle``: a Codabench competition bundle (``competition.yaml`` version 2) built from a reference
directory.

The bundle holds a title and logo, four pages (overview, evaluation, data,
terms), the scoring program (``metadata.yaml`` running ``codalab`` in the
image), the reference data (``dialogues.jsonl``, ``answers.jsonl``, the
organizer's configuration and the media files the dialogues name), the public
data (``dialogues.jsonl`` and the same media files), a starting kit (an
example submission that ``validate`` accepts, with how to check one), one
task, one phase with its time limit (``execution_time_limit``, seconds), and a
leaderboard whose columns are the top-level numbers of ``scores.json``.
Nothing private (``answers.jsonl``, the configuration) is written outside
``reference_data/``, and the pages say of the hidden metric only that it is
derived from the perplexities. A configuration that says ``[competition]
submissions = "code"`` makes only a code competition (``--code``), whose own
configuration says so (:func:`scorer.outputs.code_bundle.code_config`).

The same inputs give the same bytes: every file is made from the inputs
alone, and ``bundle.zip`` lists the files in a fixed order with a fixed date.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import struct
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scorer.errors import ConfigError, UsageError
from scorer.inputs.config import Config
from scorer.inputs.contract import ANSWERS, CONFIG_IN_REFERENCE, DIALOGUE_TYPES, DIALOGUES, PPL, SUBMISSION
from scorer.inputs.validation import Dialogue

from .code_bundle import (
    EXECUTION_TIME_LIMIT,
    INGESTION_PROGRAM,
    INPUT_DATA,
    RUN_FOLDER,
    TIMEOUT_OPTIONS,
    code_config,
    code_pages,
    kit_readme,
    salted_config,
)
from .output_dir import publish

COMPETITION_YAML, BUNDLE_ZIP = "competition.yaml", "bundle.zip"
SCORING_PROGRAM, REFERENCE_DATA, PUBLIC_DATA, STARTING_KIT = (
    "scoring_program",
    "reference_data",
    "public_data",
    "starting_kit",
)
DEFAULT_TITLE = "Multimodal dialogue answers in Russian"
#: The command the platform runs in the image (Codabench mounts the run's folders at /app).
SCORING_COMMAND = "python3 -m scorer codalab /app/input /app/output"
#: The phase's start; the organizer moves it (and may add an end) on the platform's editor.
PHASE_START = "2026-01-01"
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)
_PAGES = (
    ("Overview", "pages/overview.md"),
    ("Evaluation", "pages/evaluation.md"),
    ("Data", "pages/data.md"),
    ("Terms", "pages/terms.md"),
)


@dataclass(frozen=True)
class BundleSource:
    """What a bundle is made of: the reference files' bytes, the checked dialogues, the configuration in
    force and its file's bytes (None for the built-in default), and the media files the dialogues name
    (:func:`scorer.outputs.media.media_files`: path in the data folder -> bytes)."""

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


def leaderboard_columns(types: Iterable[str]) -> list[tuple[str, str]]:
    """(key, title) of each leaderboard column: ``integral`` (the ranking column), ``meteor``,
    ``hidden_metric``, then one per dialogue type present, each a top-level number of ``scores.json``."""
    return [
        ("integral", "Integral score"),
        ("meteor", "METEOR"),
        ("hidden_metric", "Hidden metric"),
        *((t, t) for t in types),
    ]


def bundle_files(
    source: BundleSource, image: str, title: str = DEFAULT_TITLE, code: dict[str, bytes] | None = None
) -> dict[str, bytes]:
    """Every file of the bundle folder by its path in it, ``bundle.zip`` (the folder zipped) included; with
    ``code`` (:func:`scorer.outputs.code_bundle.code_files`), a code competition (contract section 10).

    The media files (``source.media``, and those ``code`` puts in ``input_data/``) go to ``public_data/``,
    ``reference_data/`` and, for a code competition, ``input_data/``. A code competition's configuration
    says ``[competition] submissions = "code"``; a configuration that says so without ``code``, or says
    ``"files"`` with it, is a :class:`~scorer.errors.ConfigError`."""
    present = Counter(d.type for d in source.dialogues)
    types = [t for t in DIALOGUE_TYPES if t in present]
    turns: Counter[str] = Counter()
    for d in source.dialogues:
        turns[d.type] += d.n_turns
    config_bytes = source.config_bytes
    if config_bytes is not None and source.config.hidden_metric.unsalted:
        config_bytes = salted_config(config_bytes)
    if code is not None:
        config_bytes = code_config(config_bytes)
    elif source.config.competition.submissions == "code":
        raise ConfigError(
            'config key competition.submissions is "code": make a code competition with bundle --code, or '
            'set it to "files"'
        )
    media = dict(source.media)  # and those code_files was given for input_data/ (the same files)
    prefix = f"{INPUT_DATA}/"
    media.update({k[len(prefix) :]: v for k, v in (code or {}).items() if k.startswith(prefix)})
    media.pop(DIALOGUES, None)
    command = SCORING_COMMAND + (f" {TIMEOUT_OPTIONS}" if code is not None else "")
    files: dict[str, bytes] = {
        COMPETITION_YAML: _competition_yaml(title, image, types, code is not None).encode("utf-8"),
        "logo.png": logo_png(),
        "pages/overview.md": _overview(
            title, image, source.config.participants.turn_details, sum(turns.values()) if code else None
        ).encode("utf-8"),
        "pages/evaluation.md": _evaluation(source.config, types).encode("utf-8"),
        "pages/data.md": _data(source.config, types, present, turns, bool(media)).encode("utf-8"),
        "pages/terms.md": _TERMS.encode("utf-8"),
        f"{SCORING_PROGRAM}/metadata.yaml": (
            f"command: {command}\ndescription: "
            f"{_q('Scores an upload: Russian METEOR, the hidden metric and the integral')}"
            "\n"
        ).encode(),
        f"{REFERENCE_DATA}/{DIALOGUES}": source.dialogues_bytes,
        f"{REFERENCE_DATA}/{ANSWERS}": source.answers_bytes,
        f"{PUBLIC_DATA}/{DIALOGUES}": source.dialogues_bytes,
        **{
            f"{STARTING_KIT}/{name}": data
            for name, data in starting_kit(source.dialogues_bytes, image).items()
        },
    }
    if config_bytes is not None:
        files[f"{REFERENCE_DATA}/{CONFIG_IN_REFERENCE}"] = config_bytes
    if code is not None:  # the starting kit is code, not files
        for name in (SUBMISSION, PPL):
            del files[f"{STARTING_KIT}/{name}"]
        files.update(code)
        check = _how_to_check(image, RUN_FOLDER, f"`{RUN_FOLDER}/`")
        files[f"{STARTING_KIT}/README.md"] = kit_readme(check).encode("utf-8")
    for name, data in media.items():  # where the participants' models and the scoring step's get_ppl look
        for folder in (PUBLIC_DATA, REFERENCE_DATA, *((INPUT_DATA,) if code is not None else ())):
            files[f"{folder}/{name}"] = data
    files[BUNDLE_ZIP] = zip_bytes(files)
    return dict(sorted(files.items()))


#: Every path a bundle can hold (a file of an earlier bundle that this one lacks is removed).
def bundle_paths() -> list[str]:
    return [
        COMPETITION_YAML,
        BUNDLE_ZIP,
        "logo.png",
        *(path for _, path in _PAGES),
        f"{SCORING_PROGRAM}/metadata.yaml",
        f"{REFERENCE_DATA}/{DIALOGUES}",
        f"{REFERENCE_DATA}/{ANSWERS}",
        f"{REFERENCE_DATA}/{CONFIG_IN_REFERENCE}",
        f"{PUBLIC_DATA}/{DIALOGUES}",
        *(f"{STARTING_KIT}/{name}" for name in (SUBMISSION, PPL, "README.md")),
    ]


#: The bundle's folders that hold only what the bundle writes: a rebuild removes whatever else stands in
#: them (an earlier bundle's media, a code bundle's files), and the folders it leaves empty.
OWNED_FOLDERS = (PUBLIC_DATA, REFERENCE_DATA, STARTING_KIT, INGESTION_PROGRAM, INPUT_DATA)


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


def _q(text: str) -> str:
    """``text`` as a YAML scalar: a JSON string (YAML reads JSON's double-quoted strings as they are)."""
    return json.dumps(text, ensure_ascii=False)


def _competition_yaml(title: str, image: str, types: Sequence[str], code: bool = False) -> str:
    columns = "".join(
        f"      - title: {_q(name)}\n        key: {_q(key)}\n        index: {k}\n        sorting: desc\n"
        f"        computation: null\n        computation_indexes: null\n"
        for k, (key, name) in enumerate(leaderboard_columns(types))
    )
    pages = "".join(f"  - title: {_q(name)}\n    file: {_q(path)}\n" for name, path in _PAGES)
    return f"""# Codabench competition bundle (version 2), made by `python -m scorer bundle`.
version: 2
title: {_q(title)}
description: {
        _q(
            "Answer multimodal dialogues (text, images, audio) in Russian; scored by a Russian METEOR and a "
            "hidden metric derived from the model's perplexities, weighted by dialogue type."
        )
    }
image: logo.png
registration_auto_approve: false
docker_image: {_q(image)}
enable_detailed_results: true
terms: pages/terms.md
pages:
{pages}tasks:
  - index: 0
    name: {_q("Dialogue answers")}
    description: {_q("Answers and perplexities for every turn of the test dialogues.")}
    scoring_program: {SCORING_PROGRAM}
    reference_data: {REFERENCE_DATA}
{
        f"    ingestion_program: {INGESTION_PROGRAM}{chr(10)}    input_data: {INPUT_DATA}{chr(10)}"
        if code
        else ""
    }solutions: []
phases:
  - index: 0
    name: {_q("Test")}
    description: {
        _q(
            "Upload a .zip holding team_code/ (generate.py with the three functions)."
            if code
            else "Upload submission.jsonl and ppl_output.json (or one .zip of them)."
        )
    }
    start: {PHASE_START}
    max_submissions_per_day: 5
    max_submissions: 100
    execution_time_limit: {EXECUTION_TIME_LIMIT}
    tasks:
      - 0
    solutions: []
    starting_kit: {STARTING_KIT}
    public_data: {PUBLIC_DATA}
leaderboards:
  - index: 0
    title: Results
    key: Results
    columns:
{columns}"""


def _how_to_check(image: str, submission: str, beside: str = "your upload") -> str:
    """How a participant runs ``validate`` on ``submission`` locally: in the competition's own image (no
    install), or with the scorer installed from its source; ``beside`` names it in the sentence."""
    return f"""With Docker, in the competition's own scoring image (nothing to install; run it in the
folder that holds `public_data/` and {beside}):

    docker run --rm -v "$PWD:/work" -w /work {image} \\
        python3 -m scorer validate --data public_data --submission {submission}

Or with the scorer installed in Python 3.11 or newer (ask the organizers for its source, then
`pip install .` in it):

    python -m scorer validate --data public_data --submission {submission}"""


def _overview(title: str, image: str, turn_details: bool, code_turns: int | None = None) -> str:
    """The overview page; ``code_turns`` (the data's turns) for a code competition."""
    intro = f"""# {title}

Models hold dialogues that mix text, images and audio, and answer every user turn in Russian.
For each turn of the test dialogues you submit the model's answer and the model's perplexity
of that turn's target answer given the dialogue so far.

"""
    after = f"""## What you see after scoring

The leaderboard shows the integral score, METEOR, the hidden metric and the score of
each dialogue type. The detailed results page shows the per-type table with its counts,
the warnings and the run's signature{_turn_details_sentence(turn_details)} It never shows
the test set's answers.
"""
    if code_turns is not None:
        check = _how_to_check(image, RUN_FOLDER, f"`{RUN_FOLDER}/`")
        return intro + code_pages(image, code_turns, check) + "\n" + after
    return (
        intro
        + f"""## What to submit

One upload: the two files below, or one `.zip` holding them (at its root or in one folder).

- `{SUBMISSION}`: one JSON object a line, one line per dialogue of `{DIALOGUES}`:
  `{{"dialog_id": "d-0001", "answers": ["first turn's answer", "second turn's answer"]}}`.
  Every dialogue exactly once, one string per turn (an empty string is allowed and scores 0).
- `{PPL}`: one JSON object mapping each dialog_id to its turns' perplexities:
  `{{"d-0001": [3.71, 5.2]}}`. Every value a finite number of at least 1.

The starting kit holds an example of both files.

## Check your files before you upload

{_how_to_check(image, "my_submission.zip")}

It lists every error with its file, line, dialog_id and turn, and says `valid` when the
upload will be scored. An invalid upload is not scored: the platform shows the same list
in the scoring log and on the submission's detailed results.

"""
        + after
    )


def _turn_details_sentence(turn_details: bool) -> str:
    if turn_details:
        return (
            ", and each turn's METEOR with your answer's matched words marked (the scoring output's "
            "`details.csv` holds the same figures)."
        )
    return "; it shows no per-turn figure."


def _evaluation(config: Config, types: Sequence[str]) -> str:
    weights = "\n".join(f"| `{t}` | {config.weights[t]:g} |" for t in types)
    return f"""# Evaluation

Every answered turn gets two numbers, each in [0, 1]:

- **METEOR** for Russian: the answer against every reference variant of the turn; the
  turn's value is the best over its variants. Texts are normalised (Unicode NFKC, lower
  case, `ё` as `е`) and split into words. Words are matched in stages: equal words first,
  then words sharing a lemma (pymorphy3), then synonyms (RuWordNet). With m matched words,
  t words in the answer and r in the reference, P = m / t, R = m / r and
  METEOR = P R / (alpha P + (1 - alpha) R), alpha = {config.meteor.alpha:g}.
- **The hidden metric**: a number derived from the perplexity you report for the turn;
  a lower perplexity gives a higher value.

A dialogue's score is (its mean METEOR + its mean hidden metric) / 2; a type's score is
the mean over its dialogues; the **integral score**, which ranks the leaderboard, is the
weighted mean of the types' scores:

| dialogue type | weight |
| --- | --- |
{weights}

The perplexities must be the model's own: the organizers may recompute them for a sample
of turns with your model and compare.

To see how one answer is scored, word by word:

    python -m scorer explain --candidate "your answer" --reference "a reference"
"""


def _data(
    config: Config, types: Sequence[str], dialogs: Counter[str], turns: Counter[str], media: bool
) -> str:
    rows = "\n".join(f"| `{t}` | {dialogs[t]:,} | {turns[t]:,} |" for t in types)
    return f"""# Data

`public_data/{DIALOGUES}` holds the test dialogues, one a line:

    {{"dialog_id": "d-0001", "type": "Image2Text", "turns": [[{{"type": "text", "content": "..."}},
      {{"type": "image", "content": "images/0001.jpg"}}]]}}

Every user turn is a list of parts of type `text`, `image` or `audio`. The reference
answers are kept by the organizers.
{_media_paragraph(media)}
| type | dialogues | turns |
| --- | ---: | ---: |
{rows}

Limits: each file at most {config.limits.max_file_mib} MiB, each answer at most
{config.limits.max_answer_chars:,} characters. Files are UTF-8 JSON; `NaN` and `Infinity`
are not numbers here.
"""


def _media_paragraph(media: bool) -> str:
    if not media:
        return ""
    return """
The content of an `image` or `audio` part is the path of its file in `public_data/`, beside
`dialogues.jsonl`: `images/0001.jpg` is `public_data/images/0001.jpg`.
"""


_TERMS = """# Terms

- Submissions are scored automatically; the organizers may disqualify an entry whose
  perplexities are not those of the submitted model.
- The reference answers stay private; do not try to obtain them.
- By submitting you agree that your scores and team name appear on the leaderboard.
"""


def starting_kit(dialogues_bytes: bytes, image: str = "IMAGE") -> dict[str, bytes]:
    """An example upload that ``validate`` accepts, for the dialogues of ``dialogues_bytes`` (a checked
    ``dialogues.jsonl``): each turn answered with its own text parts (a baseline that repeats the
    question) and a perplexity between 2 and 22 drawn from the turn's dialog_id, and a README that says how
    to check one."""
    lines, ppl = [], {}
    for line in dialogues_bytes.decode("utf-8-sig").split("\n"):
        if not line.strip():
            continue
        d = json.loads(line)
        answers = [" ".join(p["content"] for p in turn if p["type"] == "text")[:2000] for turn in d["turns"]]
        lines.append(json.dumps({"dialog_id": d["dialog_id"], "answers": answers}, ensure_ascii=False))
        ppl[d["dialog_id"]] = [_example_ppl(d["dialog_id"], k) for k in range(len(answers))]
    readme = f"""# Starting kit

`{SUBMISSION}` and `{PPL}` are an example upload: every turn answered by repeating the
user's text (a weak baseline), with made-up perplexities. Replace both with your model's.

Check an upload before you submit it.

{_how_to_check(image, "starting_kit")}

Then upload the two files, or one `.zip` of them:

    zip submission.zip {SUBMISSION} {PPL}
"""
    return {
        SUBMISSION: ("\n".join(lines) + "\n").encode("utf-8"),
        PPL: (json.dumps(ppl, ensure_ascii=False) + "\n").encode("utf-8"),
        "README.md": readme.encode("utf-8"),
    }


def _example_ppl(dialog_id: str, turn: int) -> float:
    digest = hashlib.sha256(f"{dialog_id}\0{turn}".encode()).digest()
    return round(2 + int.from_bytes(digest[:4], "big") % 2000 / 100, 2)


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
