"""What ``bundle --code`` adds to a competition bundle (contract sections 10 and 11): a code competition, and
the configuration every bundle carries into its tasks' reference data.

The participant uploads a zip holding ``team_code/``; Codabench's prediction step runs the ingestion
program (the standard-library runner, :mod:`scorer.runner`, with its ``metadata.yaml``) on
``input_data`` (``dialogues.jsonl`` and the media it names, never ``answers.jsonl``): ``--phase generate``
writes ``submission.jsonl`` and copies ``team_code/`` beside it; the scoring step (``codalab``) then runs
the ``ppl`` phase on that copy with the reference answers, and scores. The reference data's config says
``[competition] submissions = "code"`` (:func:`carried_config`). The starting kit holds a complete working
``team_code/`` in plain Python: a Kneser-Ney bigram model of words and of their endings over the texts it
ships (:mod:`scorer.bundle.pages`), which answers with the question's words and its texts' commonest
words, and whose perplexities are real: a text with its words shuffled is less likely than the text.

Time limits (``[platform]``, contract section 11). Codabench ends a step (the prediction, then the scoring,
each a run of its own) after the phase's ``execution_time_limit`` seconds. Both steps' commands give the
runner ``--setup-timeout`` and ``--turn-timeout`` (one setup, one call) and ``--step-timeout``, the step's
limit less max(30 s, 10 %) (:attr:`~scorer.inputs.config.PlatformSettings.step_timeout`), so a hang or a
slow code is stopped and named by the runner while the step still has time, not cut off by the platform
with no name. The commands are plain argument lists (Codabench splits them as a shell would, and runs no
shell): the image's entry point ``exec``s the program, which is then the container's first process.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scorer.inputs.config import Config, PlatformSettings, config_tables
from scorer.inputs.validation import Dialogue

INGESTION_PROGRAM, INPUT_DATA = "ingestion_program", "input_data"
RUNNER = "runner.py"
#: The folder the pages' local run writes (the runner command's ``--output``), which ``validate`` checks.
RUN_FOLDER = "my_run"
#: The scoring step's command (Codabench mounts the run's folders at /app).
SCORING_COMMAND = "python3 -m scorer codalab /app/input /app/output"


def runner_options(platform: PlatformSettings) -> str:
    """The runner's limits from ``[platform]`` as command-line options: the setup, one call and the whole
    step (contract section 10, "the time")."""
    return (
        f"--setup-timeout {platform.setup_timeout} --turn-timeout {platform.turn_timeout} "
        f"--step-timeout {platform.step_timeout}"
    )


def ingestion_command(platform: PlatformSettings, offline: bool) -> str:
    """The prediction step's command: the runner's ``--phase generate`` on the input data, keeping the code
    for the scoring step; ``--offline`` unless the configuration says ``[competition] network =
    "allowed"``."""
    return (
        f"python3 /app/program/{RUNNER} --data /app/input_data --code /app/ingested_program "
        f"--output /app/output --phase generate --keep-code {runner_options(platform)}"
        + (" --offline" if offline else "")
    )


def scoring_command(platform: PlatformSettings | None) -> str:
    """The scoring step's command: ``codalab``, with the runner's limits in a code competition."""
    return SCORING_COMMAND + (f" {runner_options(platform)}" if platform is not None else "")


def call_seconds(step_timeout: int, setup_timeout: int, calls: int) -> int:
    """The whole seconds a call may take on average in a step: floor((step timeout - setup) / calls)."""
    return (step_timeout - setup_timeout) // max(calls, 1)


@dataclass(frozen=True)
class Task:
    """One task of a competition and the phase that runs it: ``phase`` is ``"test"`` (the one phase of a
    competition without a final), ``"development"`` (the public phase of one with a final) or ``"final"``
    (the organizer's final competition); its dialogues (file order), the bytes of its ``dialogues.jsonl``
    and ``answers.jsonl``, the media they name, and the probe calls its scoring step makes."""

    index: int
    phase: str
    reference_folder: str
    input_folder: str
    dialogues: tuple[Dialogue, ...]
    dialogues_bytes: bytes
    answers_bytes: bytes
    media: Mapping[str, bytes]
    probes: int

    @property
    def turns(self) -> int:
        return sum(d.n_turns for d in self.dialogues)

    def count(self, kind: str) -> tuple[int, int]:
        """The dialogues and turns of type ``kind``."""
        chosen = [d for d in self.dialogues if d.type == kind]
        return len(chosen), sum(d.n_turns for d in chosen)

    def seconds(self, platform: PlatformSettings, scoring: bool) -> int:
        """The whole seconds a call may take on average in the prediction step (``scoring`` False: its turns)
        or the scoring step (its turns and probes) of this task's phase (contract section 11)."""
        calls = self.turns + (self.probes if scoring else 0)
        return call_seconds(platform.step_timeout, platform.setup_timeout, calls)


@dataclass(frozen=True)
class Competition:
    """The competition a bundle makes, every value checked
    (:func:`scorer.bundle.make.plan_competition`): the public one (``task``: its one task and phase;
    ``held_out``: the organizer's final task, when there is a final), or, with ``organizers_final``, the
    organizer's own final competition (``task`` is then the held-out one)."""

    title: str
    image: str
    code: bool
    config: Config
    types: tuple[str, ...]
    task: Task
    carried: bytes | None
    salted: bool
    held_out: Task | None = None
    organizers_final: bool = False

    @property
    def platform(self) -> PlatformSettings:
        return self.config.platform

    @property
    def language(self) -> str:
        return self.config.platform.language

    @property
    def decimals(self) -> int:
        return self.config.competition.posted_decimals

    @property
    def development(self) -> Task:
        """The public competition's task (the development dialogues when there is a final)."""
        return self.task

    @property
    def final(self) -> Task | None:
        """The held-out task of the organizer's final, or None without a final."""
        return self.held_out

    @property
    def offline(self) -> bool:
        """Whether the prediction step's runner refuses a network (``[competition] network``)."""
        return self.config.competition.network != "allowed"

    def development_end(self) -> datetime.date | None:
        """The development phase's last day (it ends at 23:59:59 UTC), with a final."""
        final = self.platform.final_start
        return None if final is None else final - datetime.timedelta(days=1)


#: The line a code competition's private config holds under ``[competition]`` (contract sections 7, 10).
CODE_SUBMISSIONS = 'submissions = "code"'
#: The sections the configuration carried into the tasks' reference data leaves out (contract section 11):
#: ``bundle`` alone reads ``[platform]``, and ``codalab`` reads neither.
LEFT_OUT = ("platform", "audit")


def derived_salt(answers_bytes: bytes, config_bytes: bytes) -> str:
    """The ``[hidden_metric] salt`` that ``bundle`` adds to a private config without one (contract section
    7): the first 32 hex digits of the HMAC-SHA-256 keyed with ``answers.jsonl``'s bytes (before any split)
    over the config's bytes. It is as secret as ``answers.jsonl``, and the same inputs give the same salt."""
    return hmac.new(answers_bytes, config_bytes, hashlib.sha256).hexdigest()[:32]


def said_submissions(config_bytes: bytes | None) -> str | None:
    """What the configuration file itself says of ``[competition] submissions`` (None: it is silent)."""
    if config_bytes is None:
        return None
    table = tomllib.loads(config_bytes.decode("utf-8")).get("competition", {})
    given = table.get("submissions") if isinstance(table, Mapping) else None
    return given if isinstance(given, str) else None


def _header(name: str) -> re.Pattern[str]:
    quoted = rf"""(?:{name}|"{name}"|'{name}')"""
    return re.compile(rf"^[ \t]*\[[ \t]*{quoted}[ \t]*\][ \t]*(?:#[^\n]*)?\r?$", re.MULTILINE)


_ANY_HEADER = re.compile(r"^[ \t]*\[", re.MULTILINE)


def _without_table(text: str, name: str) -> str:
    """``text`` without the table ``[name]`` written as a header: from its header to the next header."""
    header = _header(name).search(text)
    if header is None:
        return text
    following = _ANY_HEADER.search(text, header.end())
    return text[: header.start()] + (text[following.start() :] if following else "")


def _with_line(text: str, name: str, line: str) -> str:
    """``text`` with ``line`` first in the table ``[name]`` (under its header), or in a new one at the end."""
    header = _header(name).search(text)
    if header is not None:
        return text[: header.end()] + "\n" + line + text[header.end() :]
    end = "\n" if text and not text.endswith("\n") else ""
    return f"{text}{end}\n[{name}]\n{line}\n"


def carried_config(config_bytes: bytes | None, *, code: bool, salt: str | None) -> bytes | None:
    """The configuration ``bundle`` carries into every task's reference data (contract sections 7 and 11):
    the organizer's own (``None``: the built-in default) without ``[platform]`` and ``[audit]``, with
    ``[competition] submissions = "code"`` for a code competition and ``[hidden_metric] salt`` when ``salt``
    is given; None when there is nothing to carry (the built-in default of a files competition).

    The organizer's text is kept as it is (comments included), the left-out tables cut at their headers and
    the lines added under theirs; where a table is written otherwise (inline, dotted keys), the carried file
    is the same settings written anew as plain TOML. Either way it reads as the organizer's settings less the
    left-out tables, plus the added keys; None when nothing is left (a files competition's config of
    ``[platform]`` and ``[audit]`` alone)."""
    if config_bytes is None:
        return f"[competition]\n{CODE_SUBMISSIONS}\n".encode() if code else None
    text = config_bytes.decode("utf-8")
    raw = tomllib.loads(text)
    target = {k: dict(v) if isinstance(v, Mapping) else v for k, v in raw.items() if k not in LEFT_OUT}
    if not code and salt is None and target == raw:
        return config_bytes
    if not code and salt is None and not target:
        return None  # [platform] and [audit] alone: the scoring step's configuration is the built-in one
    edited = text
    for name in LEFT_OUT:
        edited = _without_table(edited, name)
    if salt is not None:
        target["hidden_metric"] = {**target.get("hidden_metric", {}), "salt": salt}
        edited = _with_line(edited, "hidden_metric", f'salt = "{salt}"')
    if code and target.get("competition", {}).get("submissions") != "code":
        target["competition"] = {**target.get("competition", {}), "submissions": "code"}
        edited = _with_line(edited, "competition", CODE_SUBMISSIONS)
    try:
        same = tomllib.loads(edited) == target
    except tomllib.TOMLDecodeError:
        same = False
    return (edited if same else _plain_toml(target)).encode("utf-8")


def config_text(config: Config) -> bytes | None:
    """A configuration given as a :class:`Config` (not a file), as the file ``bundle`` carries for it: its
    settings that differ from the built-in default's, as plain TOML; None when none differs (the built-in
    default, as when no file is found)."""
    tables = config_tables(config)
    return _plain_toml(tables).encode("utf-8") if tables else None


def _plain_toml(tables: Mapping[str, Any]) -> str:
    """Configuration tables (of strings, numbers, booleans, dates and lists of them) as plain TOML."""
    lines = ["# The configuration of the competition's scoring step, written by `python -m scorer bundle`."]
    for section, values in tables.items():
        lines.append(f"\n[{_toml_key(section)}]")
        lines += [f"{_toml_key(key)} = {_toml_value(value)}" for key, value in values.items()]
    return "\n".join(lines) + "\n"


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_string(key)


def _toml_string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, and DEL, which JSON leaves, is escaped too."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"a configuration value of type {type(value).__name__}")
