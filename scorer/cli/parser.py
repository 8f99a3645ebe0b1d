"""The command line's arguments (contract section 6): the parser, one small function per command adding its
arguments (:data:`ARGUMENTS`, in the help's order), and each command's help: its summary, description,
example and exit codes."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from scorer.runner.names import DEFAULT_SETUP_TIMEOUT, DEFAULT_TURN_TIMEOUT
from scorer.runner.options import add_arguments as add_run_arguments
from scorer.scoring.significance import DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.version import __version__, engine_description


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (every core) or more")
    return value


_INVALID = "  1  the submission is invalid (every error listed, with file, line, dialog_id and turn)"
_ENDINGS = """  3  unexpected internal error
  130, 143  interrupted by SIGINT, SIGTERM (earlier outputs are left as they were)"""
_SCORED = [
    "  0  scored",
    _INVALID,
    "  2  usage, configuration, thesaurus or reference-data error (scores.json says so, status error)",
]
#: Each subcommand's exit codes: only those it can return.
EXIT_CODES = {
    "validate": [
        "  0  the submission is valid",
        _INVALID,
        "  2  usage, configuration or reference-data error",
    ],
    "score": _SCORED,
    "codalab": _SCORED,
    "leaderboard": [
        "  0  ranked (invalid and failed entries are listed in the table, not an exit code)",
        "  2  usage, configuration, thesaurus or reference-data error",
    ],
    "correlate": [
        "  0  correlated (invalid entries are listed and left out)",
        "  2  usage, configuration, thesaurus, reference-data or human-ratings error",
    ],
    "explain": ["  0  explained", "  2  usage, configuration or thesaurus error"],
    "signature": ["  0  printed", "  2  usage, configuration, thesaurus or reference-data error"],
    "check-data": [
        "  0  the reference data, its media files and its configuration are valid",
        "  2  usage error, or invalid reference data, media files or configuration (every error listed, with "
        "file, line, dialog_id and turn)",
    ],
    "bundle": ["  0  written", "  2  usage, configuration or reference-data error"],
    "audit-sample": ["  0  written", _INVALID, "  2  usage, configuration or reference-data error"],
    "run": [
        "  0  written",
        "  1  the team's code failed (named: phase, function, dialog_id, turn)",
        "  2  usage or data error",
    ],
}
NO_THESAURUS = "without RuWordNet at hand: add --no-synonyms; the signature then says rwn:none"

CONFIG_RULE = (
    "configuration: --config FILE, else config.toml in the reference directory, else the built-in "
    "default; the run says which on stderr (not with --quiet)."
)

EXAMPLES = {
    "signature": "python -m scorer signature --data reference_data/public --no-synonyms",
    "check-data": "python -m scorer check-data --data reference_data/public",
    "validate": "python -m scorer validate --data reference_data/public --submission my_submission.zip",
    "score": "python -m scorer score --data reference_data/public --submission "
    "submissions_examples/realistic "
    "--output out --report",
    "leaderboard": "python -m scorer leaderboard --data private_ref --submissions uploads/ --output board",
    "codalab": "python -m scorer codalab /app/input /app/output",
    "correlate": "python -m scorer correlate --data reference_data/public --submissions submissions_examples "
    "--human reference_data/public/human_turns.csv --output meta --baselines chrf,bleu",
    "explain": 'python -m scorer explain --candidate "лечу мчаться" --reference "лететь лечить" --gamma 0.5',
    "audit-sample": "python -m scorer audit-sample --data reference_data/public --submission "
    "submissions_examples/realistic --n 20 --output recompute.jsonl",
    "bundle": "python -m scorer bundle --data reference_data/public --output competition "
    "--image docker.io/you/dialogue-scorer:1.0",
    "run": "python -m scorer run --data reference_data/public --code my_team/ --output generated "
    "--trusted-code",
}

#: Each subcommand's one line in the command line's help.
SUMMARIES = {
    "validate": "check a submission without scoring it (needs only dialogues.jsonl)",
    "score": "validate and score a submission",
    "leaderboard": "score and rank every submission (subfolder or .zip) of a folder",
    "codalab": "CodaLab/Codabench scoring program: INPUT/ref + INPUT/res -> OUTPUT",
    "correlate": "agreement of the figures with human ratings (meta-evaluation)",
    "bundle": "write a Codabench competition bundle for a reference directory",
    "audit-sample": "the turns whose perplexities to recompute (for score --ppl-check)",
    "explain": "show how METEOR scores one answer: tokens, matches, chunks, formula",
    "signature": "print the signature a run against the reference data carries, scoring nothing",
    "check-data": "check the reference data, its media and its configuration alone, every error in one run",
    "run": "run a team's code (team_code/) as a code competition does",
}

DESCRIPTIONS = {
    "validate": "Check a submission against the public dialogues without scoring it (needs only "
    "dialogues.jsonl). "
    "Lists every error with its file, line, dialog_id and turn.",
    "score": "Validate and score a submission: writes scores.json, details.csv and scores.txt (and "
    "report.html "
    "with --report) into --output, atomically; an invalid submission gets scores.json with its errors.",
    "leaderboard": "Score every subfolder or .zip of --submissions against one reference directory and "
    "rank them, "
    "with bootstrap intervals and paired p-values: leaderboard.csv, leaderboard.json, report.html.",
    "codalab": "The CodaLab/Codabench scoring program: INPUT/ref is the reference data, INPUT/res the "
    "upload; writes OUTPUT/scores.json, scores.txt and detailed_results.html (and details.csv with "
    "[participants] turn_details), none of them holding anything of the answers.",
    "correlate": "Measure how well the competition's figures (METEOR, hidden metric, integral; chrF and "
    "BLEU as "
    "baselines) agree with human ratings at turn, dialogue and system level: Pearson, Spearman and "
    "Kendall with 95% bootstrap intervals, pairwise accuracy; correlation.csv, correlation.json, "
    "report.html.",
    "explain": "Show how METEOR scores one answer: tokens, the alignment (each link's stage), chunks, "
    "formula.",
    "audit-sample": "Draw the turns whose perplexities the organizer should recompute with the entry's "
    "model (N turns, in proportion to each dialogue type's turns, reproducible from --seed), as JSON "
    "Lines of dialog_id, turn, type and the reported ppl; the recomputed values go back through "
    "score --ppl-check.",
    "run": "Run a team's code (team_code/generate.py) on every dialogue as the competition does: "
    "submission.jsonl from generate_text, then ppl_output.json from get_ppl, each phase in a child "
    "process of its own (contract section 10).",
    "signature": "Print the signature that scores against --data carry (the metric's settings, the "
    "thesaurus, the hidden metric, the weights, the reference data's ref: field and the version), scoring "
    "nothing: the configuration is found as every command finds it.",
    "check-data": "Check an organizer's reference directory alone, for everything score and bundle check of "
    "it: the configuration (--config, else config.toml in --data, else the built-in default), "
    "dialogues.jsonl and answers.jsonl, the image and audio files the dialogues name, and what the "
    "configuration asks of the data (the weights of the types present, a final's held-out dialogues); every "
    "error listed in one run (at most 100, then how many more), each with its file, line, dialog_id and turn "
    "where it has them.",
    "bundle": "Write a Codabench competition bundle (competition.yaml, pages, scoring program, reference and "
    "public data, starting kit, leaderboard) into --output, with bundle.zip to upload. Only "
    "reference_data/ holds the answers and the configuration.",
}


def _epilog(name: str) -> str:
    example = f"example:\n  {EXAMPLES[name]}"
    if name not in ("validate", "bundle", "audit-sample", "run"):
        example += f"\n  ({NO_THESAURUS})"
    parts = [example]
    if name not in ("explain", "run"):
        parts.append(CONFIG_RULE)
    parts.append("\n".join(["exit codes:", *EXIT_CODES[name], _ENDINGS]))
    return "\n\n".join(parts)


def _command(sub: Any, name: str) -> argparse.ArgumentParser:
    """One subcommand: its one-line summary, its description and its examples (:data:`SUMMARIES`,
    :data:`DESCRIPTIONS`, :func:`_epilog`)."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=SUMMARIES[name],
        description=DESCRIPTIONS[name],
        epilog=_epilog(name),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: the subcommands of :data:`ARGUMENTS`, in its order, each with the arguments
    its function adds."""
    parser = argparse.ArgumentParser(
        prog="scorer",
        description="Score multimodal dialogue submissions "
        "(Russian METEOR + hidden metric, type-weighted integral).",
        formatter_class=argparse.RawTextHelpFormatter,  # --version on one line
    )
    parser.add_argument(
        "--version", action="version", version=f"scorer {__version__} ({engine_description()})"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, add_arguments in ARGUMENTS.items():
        add_arguments(_command(sub, name))
    add_run_arguments(_command(sub, "run"))  # listed in the help; main hands run to the runner whole
    return parser


CONFIG_HELP = "TOML file overriding the default configuration"


def _data_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, metavar="DIR", help="reference directory (dialogues.jsonl ...)")


def _submission_args(p: argparse.ArgumentParser) -> None:
    """The reference directory, the submission, its perplexities and the configuration."""
    _data_arg(p)
    p.add_argument(
        "--submission",
        required=True,
        metavar="PATH",
        help="submission.jsonl, or a directory or .zip holding it and ppl_output.json",
    )
    p.add_argument(
        "--ppl",
        metavar="FILE",
        help="ppl_output.json when --submission is a file (default: ppl_output.json next to it)",
    )
    p.add_argument("--config", metavar="FILE", help=CONFIG_HELP)


def _scoring_args(p: argparse.ArgumentParser) -> None:
    """The run's options (``ScoringFlags`` of :mod:`scorer.cli.commands`): the thesaurus, the synonym stage,
    the processes; and --quiet."""
    p.add_argument(
        "--thesaurus",
        metavar="PATH",
        help="RuWordNet SQLite file or XML directory "
        "(default: $RUWORDNET_PATH, else the ruwordnet package's download)",
    )
    p.add_argument("--no-synonyms", action="store_true", help="score without the RuWordNet synonym stage")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.add_argument(
        "--jobs",
        type=_jobs,
        default=0,
        metavar="N",
        help="processes to score on (default 0: every core); outputs do not depend on it",
    )


def _many_submissions_args(p: argparse.ArgumentParser, outputs: str, human: bool = False) -> None:
    """A folder of submissions scored against one reference directory, and the bootstrap's settings."""
    _data_arg(p)
    p.add_argument("--submissions", required=True, metavar="DIR", help="one subfolder or .zip per submission")
    if human:
        p.add_argument(
            "--human",
            required=True,
            metavar="FILE",
            help="CSV: submission,score | submission,dialog_id,score | submission,dialog_id,turn,score",
        )
    p.add_argument("--output", required=True, metavar="DIR", help=f"where {outputs} go")
    p.add_argument(
        "--resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        metavar="N",
        help=f"bootstrap resamples (default {DEFAULT_RESAMPLES})",
    )
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"bootstrap seed (default {DEFAULT_SEED})")


def _validate_args(p: argparse.ArgumentParser) -> None:
    _submission_args(p)
    p.add_argument("--json", action="store_true", help="print the verdict as JSON on stdout")


def _score_args(p: argparse.ArgumentParser) -> None:
    _submission_args(p)
    p.add_argument(
        "--output", required=True, metavar="DIR", help="where scores.json, details.csv, scores.txt go"
    )
    _scoring_args(p)
    p.add_argument("--report", action="store_true", help="also write report.html (charts; takes a second)")
    p.add_argument(
        "--ppl-check",
        metavar="FILE",
        help="perplexities the organizer recomputed for some turns "
        "(ppl_output.json's shape, null where not recomputed; or the JSONL of audit-sample with each "
        "ppl filled in): audit.json compares them",
    )


def _leaderboard_args(p: argparse.ArgumentParser) -> None:
    _many_submissions_args(p, "leaderboard.csv, leaderboard.json, report.html and submissions/<name>/")
    p.add_argument("--no-report", action="store_true", help="skip report.html")
    p.add_argument("--config", metavar="FILE", help=CONFIG_HELP)
    _scoring_args(p)


def _codalab_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="INPUT", help="holds ref/ (reference data) and res/ (the submission)")
    p.add_argument("output", metavar="OUTPUT", help="where scores.txt (and the other outputs) go")
    for name, default in (("setup", DEFAULT_SETUP_TIMEOUT), ("turn", DEFAULT_TURN_TIMEOUT)):
        p.add_argument(
            f"--{name}-timeout",
            type=float,
            default=default,
            metavar="S",
            help=f"a code upload's {name} limit in seconds (default {default:g})",
        )
    p.add_argument(
        "--step-timeout",
        type=float,
        default=None,
        metavar="S",
        help="a code upload's limit for its whole get_ppl phase, setup and every call, in seconds (default: "
        "none; bundle passes the step's limit less max(30 s, 10%%))",
    )
    p.add_argument(
        "--config", metavar="FILE", help=CONFIG_HELP + " (default: INPUT/ref/config.toml when present)"
    )
    _scoring_args(p)


def _correlate_args(p: argparse.ArgumentParser) -> None:
    _many_submissions_args(p, "correlation.csv, correlation.json and report.html", human=True)
    p.add_argument(
        "--baselines", default="", metavar="LIST", help="comma-separated: chrf,bleu (sacreBLEU defaults)"
    )
    p.add_argument("--config", metavar="FILE", help=CONFIG_HELP)
    _scoring_args(p)


def _bundle_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data",
        required=True,
        metavar="DIR",
        help="reference directory (dialogues.jsonl, "
        "answers.jsonl, and config.toml when the organizer keeps one there)",
    )
    p.add_argument("--output", required=True, metavar="DIR", help="where the bundle folder and bundle.zip go")
    p.add_argument(
        "--image",
        metavar="NAME",
        help="the scorer's image the platform pulls (competition.yaml's docker_image; default: the "
        "configuration's [platform] image)",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        help="the organizer's configuration (default: config.toml in "
        "--data when present); copied into the bundle's reference data only",
    )
    p.add_argument("--title", metavar="TEXT", help="the competition's title")
    p.add_argument(
        "--code",
        action="store_true",
        help="a code competition: teams upload team_code/, which an ingestion program runs "
        "(contract section 10)",
    )
    p.add_argument("--quiet", action="store_true", help="print nothing on success")


def _audit_sample_args(p: argparse.ArgumentParser) -> None:
    _submission_args(p)
    p.add_argument("--n", type=_jobs, required=True, metavar="N", help="how many turns to draw")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"the draw's seed (default {DEFAULT_SEED})")
    p.add_argument("--output", required=True, metavar="FILE", help="the JSON Lines file to write")


def _signature_args(p: argparse.ArgumentParser) -> None:
    _data_arg(p)
    p.add_argument("--config", metavar="FILE", help=CONFIG_HELP)
    p.add_argument(
        "--thesaurus",
        metavar="PATH",
        help="RuWordNet SQLite file or XML directory "
        "(default: $RUWORDNET_PATH, else the ruwordnet package's download)",
    )
    p.add_argument("--no-synonyms", action="store_true", help="without the RuWordNet synonym stage")
    p.add_argument(
        "--participant",
        action="store_true",
        help="as codalab's outputs write it (the answers' digest 'private' when the config has no salt)",
    )


def _check_data_args(p: argparse.ArgumentParser) -> None:
    _data_arg(p)
    p.add_argument("--config", metavar="FILE", help=CONFIG_HELP)


def _explain_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--candidate", required=True, metavar="TEXT", help="the model's answer")
    p.add_argument(
        "--reference",
        required=True,
        action="append",
        metavar="TEXT",
        help="a reference variant (repeat for several)",
    )
    p.add_argument("--config", metavar="FILE", help=CONFIG_HELP)
    p.add_argument("--thesaurus", metavar="PATH", help="RuWordNet SQLite file or XML directory")
    p.add_argument("--no-synonyms", action="store_true", help="explain without the synonym stage")
    for name in ("alpha", "beta", "gamma"):
        p.add_argument(f"--{name}", type=float, help=f"override meteor.{name}")


#: Every subcommand of the parser (but ``run``, the runner's own), in the order of the help, and the function
#: that adds its arguments.
ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "validate": _validate_args,
    "score": _score_args,
    "leaderboard": _leaderboard_args,
    "codalab": _codalab_args,
    "correlate": _correlate_args,
    "bundle": _bundle_args,
    "audit-sample": _audit_sample_args,
    "explain": _explain_args,
    "signature": _signature_args,
    "check-data": _check_data_args,
}
