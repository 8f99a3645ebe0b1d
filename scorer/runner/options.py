"""The runner's options: one :class:`RunnerOptions` a run, made once from its command line and its
configuration (:meth:`RunnerOptions.of`). Each option is written once, as a field: its flag (``--`` and the
field's name with dashes), default and help are the field's, and :func:`add_arguments` makes the parser's
arguments from the fields, in their order.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from .configuration import RunConfig
from .faults import UsageFault
from .names import DEFAULT_SETUP_TIMEOUT, DEFAULT_TURN_TIMEOUT, NETWORK_SETTINGS, PROBE_MIN_WORDS, PROBE_TURNS

#: The metadata key of a field given on the command line: the rest of its ``add_argument`` keywords.
FLAG = "flag"


def _flag(default: Any = MISSING, **argument: Any) -> Any:
    """A field given on the command line: its default (none: a required option) and its other
    ``add_argument`` keywords (``help``, ``metavar``, ``type``, ``choices``, ``action``)."""
    if default is MISSING:
        return field(metadata={FLAG: {"required": True, **argument}})
    return field(default=default, metadata={FLAG: argument})


def _switch(text: str) -> Any:
    """A field given on the command line as a switch (``store_true``), with its help ``text``."""
    return _flag(False, action="store_true", help=text)


@dataclass(frozen=True)
class RunnerOptions:
    """One run of the runner: what its command line gives (the fields with a flag, in the help's order), then
    what it reads from the configuration (``probe_turns``, ``probe_min_words``, ``network``, ``salt``)."""

    data: str = _flag(metavar="DIR", help="holds dialogues.jsonl (and the media)")
    code: str = _flag(metavar="PATH", help="a folder or .zip holding team_code/")
    output: str = _flag(
        metavar="DIR",
        help="the run's own folder: the files are written there, and whatever else stands there is removed",
    )
    phase: str = _flag("all", choices=("all", "generate", "ppl"))
    only: str | None = _flag(
        None,
        metavar="FILE",
        help="the JSONL of audit-sample: perplexities of those turns alone, "
        "written as ppl_check.json (the shape of score --ppl-check)",
    )
    limit: int | None = _flag(
        None, type=int, metavar="N", help="a trial: run the phases on the first N dialogues only"
    )
    setup_timeout: float = _flag(DEFAULT_SETUP_TIMEOUT, type=float, metavar="S")
    turn_timeout: float = _flag(DEFAULT_TURN_TIMEOUT, type=float, metavar="S")
    step_timeout: float | None = _flag(
        None,
        type=float,
        metavar="S",
        help="bound each phase as a whole (import, setup and every call); default: no bound",
    )
    resume: bool = _switch("continue from OUTPUT/.run-state/")
    sealed: bool = _switch(
        "for code that can read what must not be shown: its output discarded, faults by kind and place "
        "(with answers.jsonl in --data, by one fixed line)"
    )
    offline: bool = _switch("refuse to run the code where a network interface other than loopback is up")
    trusted_code: bool = _switch(
        "generate although --data holds answers.jsonl, which the code could read (your own baseline)"
    )
    config: str | None = _flag(
        None,
        metavar="FILE",
        help="TOML file (default: config.toml in --data when present); run reads [audit] probe_turns and "
        "probe_min_words, [competition] network and [hidden_metric] salt",
    )
    quiet: bool = _switch("no progress lines")
    keep_code: bool = _switch(
        "copy team_code/ into --output after generating (a code competition's prediction step)"
    )
    probe_turns: int = PROBE_TURNS
    probe_min_words: int = PROBE_MIN_WORDS
    network: str = NETWORK_SETTINGS[0]
    salt: str | None = field(default=None, repr=False)

    @classmethod
    def of(cls, arguments: argparse.Namespace, configuration: RunConfig | None = None) -> RunnerOptions:
        """The run's options, once, from the parsed command line and the ``configuration`` it reads (None:
        the built-in one); UsageFault for values out of range."""
        configuration = configuration or RunConfig()
        problem = check_timeouts(arguments.setup_timeout, arguments.turn_timeout, arguments.step_timeout)
        if problem:
            raise UsageFault(problem)
        if arguments.limit is not None and arguments.limit < 1:
            raise UsageFault(f"--limit {arguments.limit}: give how many dialogues to run (1 or more)")
        given = {
            option.name: getattr(arguments, option.name) for option in fields(cls) if FLAG in option.metadata
        }
        return cls(
            **given,
            probe_turns=configuration.probe_turns,
            probe_min_words=configuration.probe_min_words,
            network=configuration.network,
            salt=configuration.salt,
        )


#: Each option's default by its name (a required option has none): where another settings type takes the
#: same default (the phases', :class:`~.phases.PhaseSettings`), it takes it from here.
DEFAULTS: dict[str, Any] = {
    option.name: option.default for option in fields(RunnerOptions) if option.default is not MISSING
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command line's options, one for each field of :class:`RunnerOptions` that has a flag."""
    for option in fields(RunnerOptions):
        if FLAG in option.metadata:
            argument = dict(option.metadata[FLAG])
            if option.default is not MISSING and argument.get("action") != "store_true":
                argument["default"] = option.default
            parser.add_argument("--" + option.name.replace("_", "-"), **argument)


def build_parser(prog: str = "runner.py") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run a team's team_code/generate.py on every dialogue, as the competition does: "
        "submission.jsonl, then ppl_output.json.",
    )
    add_arguments(parser)
    return parser


def check_timeouts(setup: float, turn: float, step: float | None = None) -> str | None:
    """What is wrong with the limits (each a positive, finite number of seconds; ``step`` may be None), or
    None."""
    for name, value in (("--setup-timeout", setup), ("--turn-timeout", turn), ("--step-timeout", step)):
        if value is not None and not 0 < value < math.inf:
            return f"{name} {value:g}: give a positive number of seconds"
    return None
