"""Command line (contract section 6): a thin shell over :mod:`scorer.api`.

Exit codes: 0 scored / valid, 1 submission invalid, 2 usage, configuration,
thesaurus or reference-data error, 3 unexpected internal error (one line on
stderr, the traceback in ``scorer-error.log`` in the output directory).
"""

from __future__ import annotations

import argparse
import errno
import gc
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scorer.inputs.config import UNSALTED_NOTE, Config, config_for, load_config
from scorer.inputs.contract import DETAILED_RESULTS, SCORES_JSON
from scorer.inputs.intake import platform_upload
from scorer.inputs.jsonio import shorten
from scorer.inputs.ppl_targets import stale_line
from scorer.metric.cache import cache_dir, cache_dir_problem
from scorer.metric.nonstarters import long_mark_run, mark_run_message
from scorer.outputs.bundle import make_bundle, write_bundle
from scorer.outputs.output_dir import locked, prepare, write_file
from scorer.outputs.report import (
    CORRELATION_JSON,
    ERROR_LOG,
    LEADERBOARD_JSON,
    correlation_table,
    failure_payload,
    issue_lines,
    leaderboard_table,
    summary_table,
    utf8,
    write_correlation,
    write_failure,
    write_leaderboard,
    write_outputs,
)
from scorer.runner.configuration import RunConfig
from scorer.runner.faults import UsageFault
from scorer.runner.main import main as runner_main
from scorer.runner.names import DEFAULT_SETUP_TIMEOUT, DEFAULT_TURN_TIMEOUT
from scorer.runner.options import add_arguments as add_run_arguments
from scorer.runner.options import check_timeouts
from scorer.scoring.audience import ORGANIZER, Audience
from scorer.scoring.audit import flagged_lines
from scorer.scoring.significance import DEFAULT_RESAMPLES, DEFAULT_SEED
from scorer.scoring.turns import default_jobs
from scorer.workers import no_cycle_collection

from . import api, code_step
from .errors import (
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Issue,
    IssuesError,
    PerplexitiesNotFound,
    ScorerError,
    SubmissionInvalid,
    ThesaurusError,
    UsageError,
)
from .progress import ProgressDisplay
from .safe_text import json_text, shown, shown_name
from .stop import STOP, Terminated
from .streams import forgiving_streams, reopen_closed
from .version import __version__, engine_description, missing_dependencies


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
        "  0  the reference data and its configuration are valid",
        "  2  usage error, or invalid reference data or configuration (every error listed, with file, line, "
        "dialog_id and turn)",
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
    "check-data": "check the reference data and its configuration alone, every error in one run",
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
    "check-data": "Check an organizer's reference directory alone: the configuration (--config, else "
    "config.toml in --data, else the built-in default), dialogues.jsonl and answers.jsonl, every error of "
    "all three listed in one run (at most 100, then how many more), each with its file, line, dialog_id and "
    "turn.",
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
    """The command line's parser: the subcommands of :data:`COMMANDS`, in its order, each with the arguments
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
    for name, (add_arguments, _) in COMMANDS.items():
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
    """The run's options (:func:`_options`): the thesaurus, the synonym stage, the processes; and --quiet."""
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


def _signature(args: argparse.Namespace, state: RunState) -> int:
    config = _config(args, args.data)
    options = api.RunOptions(config, args.thesaurus, not args.no_synonyms)
    emit(api.competition_signature(args.data, options=options, participant=args.participant))
    return EXIT_OK


def _check_data(args: argparse.Namespace, state: RunState) -> int:
    found = api.check_reference_data(args.data, config=args.config)
    kinds = ", ".join(f"{kind} {dialogs}" for kind, (dialogs, _) in found.by_type.items())
    emit(
        f"reference data valid: {found.dialogs} dialogues ({kinds}), {found.turns} turns; "
        f"config: {found.config_source}"
    )
    return EXIT_OK


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


@dataclass
class RunState:
    """What a command has set up that its failure paths need (in place of attributes added to the parsed
    arguments): the output directory once prepared, the page a failure writes there (``codalab``'s), and
    the commit marker that holds the verdict."""

    output: Path | None = None
    failure_page: str | None = None
    marker: str = SCORES_JSON


def _argument_text(value: str) -> str:
    """A command-line argument that is text, not a path: its bytes read as UTF-8. Where the locale's encoding
    is not UTF-8 (the C locale), Python hands arguments over as surrogates, which no word would match."""
    return os.fsencode(value).decode("utf-8", "replace")


@dataclass(frozen=True)
class Explanation:
    """What ``explain`` is asked: the answer and the reference variants as text, each checked, and the run's
    options (the configuration with ``--alpha``, ``--beta`` and ``--gamma`` laid over it)."""

    candidate: str
    references: tuple[str, ...]
    options: api.RunOptions

    @classmethod
    def of(cls, args: argparse.Namespace) -> Explanation:
        candidate = _argument_text(args.candidate)
        references = tuple(_argument_text(r) for r in args.reference)
        for what, text in [("--candidate", candidate)] + [("--reference", r) for r in references]:
            run = long_mark_run(text)
            if run is not None:
                raise UsageError(f"{what}: {mark_run_message(run)}")
        meteor = {k: getattr(args, k) for k in ("alpha", "beta", "gamma") if getattr(args, k) is not None}
        config = load_config(args.config, {"meteor": meteor})
        return cls(candidate, references, api.RunOptions(config, args.thesaurus, not args.no_synonyms))


def _explain(args: argparse.Namespace, state: RunState) -> int:
    asked = Explanation.of(args)
    emit(api.explain_answer(asked.candidate, asked.references, options=asked.options))
    return EXIT_OK


def _bundle(args: argparse.Namespace, state: RunState) -> int:
    _config(args, args.data)  # says which configuration it uses (contract section 7)
    made = make_bundle(args.data, args.image, config=args.config, title=args.title, code=args.code)
    files = made.files  # every value checked, nothing written yet (contract section 11)
    output = state.output = prepare(args.output)
    with locked(output, _waiting(output)):
        write_bundle(output, files)
    if made.salted:
        print(
            "bundle: the hidden metric's private settings had no salt: one derived from answers.jsonl and "
            "the configuration was written into the bundle's reference data (config.toml); it is as secret "
            "as answers.jsonl (copy it into your own config, so that your runs carry the platform's "
            "signature)",
            file=sys.stderr,
        )
    if not args.quiet:
        emit(
            f"bundle: {output / 'competition.yaml'} and {output / 'bundle.zip'} ({len(files) - 1} files); "
            "upload bundle.zip on Codabench (Benchmarks > Management > Upload)"
        )
    return EXIT_OK


def _audit_sample(args: argparse.Namespace, state: RunState) -> int:
    config = _config(args, args.data)
    try:
        rows = api.audit_sample(
            args.data, args.submission, args.n, seed=args.seed, ppl=args.ppl, config=config
        )
    except SubmissionInvalid as exc:
        _print_invalid(exc, scoring=False)
        return EXIT_INVALID
    output = Path(args.output)
    if output.is_dir():
        raise UsageError(f"--output {output} is a folder; give the file to write")
    write_file(output, utf8("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)))
    emit(
        f"audit sample: {len(rows)} turns in {output}; recompute their perplexities with the participant's "
        "model, then score with --ppl-check"
    )
    return EXIT_OK


def _config(args: argparse.Namespace, reference_dir: str | None) -> Config:
    """contract section 7's rule, said on stderr."""
    config, which = config_for(reference_dir, args.config)
    if not getattr(args, "quiet", False):
        print(f"config: {which}", file=sys.stderr)
    if config.hidden_metric.unsalted and args.command != "bundle":
        print(f"warning: {UNSALTED_NOTE}", file=sys.stderr)
    return config


def _validate(args: argparse.Namespace, state: RunState) -> int:
    config = _config(args, args.data)
    with _display(args) as display:
        try:
            valid = api.validate_submission(
                args.data, args.submission, args.ppl, config=config, progress=display
            )
        except SubmissionInvalid as exc:
            display.close()
            if args.json:
                payload = failure_payload(exc, "invalid")
                payload["warnings"] = [w.to_dict() for w in exc.warnings]
                emit_json(payload)
            _print_invalid(exc, scoring=False)
            return EXIT_INVALID
    turns = sum(len(a) for a in valid.answers.values())
    if args.json:
        emit_json(
            {
                "status": "valid",
                "dialogs": len(valid.answers),
                "turns": turns,
                "warnings": [w.to_dict() for w in valid.warnings],
            }
        )
    else:
        emit(f"valid: {len(valid.answers)} dialogues, {turns} turns")
    _print_warnings(valid.warnings)
    return EXIT_OK


def _waiting(output: Path) -> Callable[[], None]:
    return lambda: print(f"waiting: another run is writing to {output}", file=sys.stderr, flush=True)


def _score(args: argparse.Namespace, state: RunState) -> int:
    return _score_upload(
        args, state, args.data, args.submission, args.ppl, report=args.report, ppl_check=args.ppl_check
    )


def _score_upload(
    args: argparse.Namespace,
    state: RunState,
    data: str,
    submission: str,
    ppl: str | None,
    *,
    report: bool,
    ppl_check: str | None = None,
    platform_input: Path | None = None,
) -> int:
    """``score``, or with ``platform_input`` ``codalab`` (its upload found in ``platform_input/res``)."""
    output = state.output = prepare(args.output)
    codalab = platform_input is not None
    # the platforms show the page: for an upload that was not scored it says why
    state.failure_page = DETAILED_RESULTS if codalab else None
    with locked(output, _waiting(output)), _display(args) as display:
        try:
            if platform_input is not None:
                _codalab_folders(platform_input)
            config = _config(args, data)
            # who the outputs are for, decided here once (contract section 6): codalab's are the participant's
            audience = Audience.participant(config) if codalab else ORGANIZER
            if platform_input is not None and config.competition.submissions == "code":
                return _code_step(args, data, platform_input / "res", config, audience, display, output)
            if platform_input is not None:
                submission = str(platform_upload(platform_input / "res"))
            result = api.score_submission(
                data,
                submission,
                ppl,
                options=_options(args, config, display),
                ppl_check=ppl_check,
                audience=audience,
            )
        except SubmissionInvalid as exc:
            display.close()
            write_failure(exc, "invalid", output, page=state.failure_page)
            # the platforms show participants stderr: there, every listed error, one a line
            _print_invalid(exc, every=codalab)
            return EXIT_INVALID
        except ScorerError as exc:
            display.close()
            _try_write_failure(exc, output, page=state.failure_page)
            raise
        write_outputs(result, output, report=report, progress=display)
    _print_warnings(result.warnings)
    if result.stale_perplexities:
        print(stale_line("", result.stale_perplexities), file=sys.stderr)
    if audience.audit and result.audit is not None:
        for line in flagged_lines({result.name: result.audit}, not_judged=not args.quiet):
            print(line, file=sys.stderr)
    if not args.quiet:
        emit(summary_table(result))
    return EXIT_OK


def _code_step(
    args: argparse.Namespace,
    data: str,
    res: Path,
    config: Config,
    audience: Audience,
    display: ProgressDisplay,
    output: Path,
) -> int:
    """The scoring step of a code competition (contract section 10, :mod:`scorer.code_step`): the step
    writes its own outputs; a surprise once the code could act is exit 1 with nothing written here."""
    settings = code_step.StepSettings(
        data,
        output,
        _options(args, config, display),
        audience,
        DETAILED_RESULTS,
        args.setup_timeout,
        args.turn_timeout,
        args.step_timeout,
        args.quiet,
    )
    try:
        outcome = code_step.score_step(res, settings)
    except code_step.StepSurprise as exc:
        display.close()
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    display.close()
    if isinstance(outcome, SubmissionInvalid):
        _print_invalid(outcome, every=True)
        return EXIT_INVALID
    _print_warnings(outcome.warnings)
    if not args.quiet:
        emit(summary_table(outcome))
    return EXIT_OK


def _options(args: argparse.Namespace, config: Config, display: ProgressDisplay) -> api.RunOptions:
    """The run options of a scoring command, as one value: the flags read in one place (the configuration's
    source as the library names it, so that its results say the same)."""
    data = args.data if hasattr(args, "data") else str(Path(args.input) / "ref")
    return api.RunOptions(
        config,
        args.thesaurus,
        not args.no_synonyms,
        args.jobs or default_jobs(),
        display,
        api.config_source(data, args.config),
    )


def _display(args: argparse.Namespace) -> ProgressDisplay:
    """The progress line of a run: on a terminal only, and never with --quiet."""
    return ProgressDisplay(enabled=False if getattr(args, "quiet", False) else None)


def _leaderboard(args: argparse.Namespace, state: RunState) -> int:
    output = state.output = prepare(args.output)
    state.marker = LEADERBOARD_JSON
    with locked(output, _waiting(output)), _display(args) as display, _verdict_on_failure(state, display):
        config = _config(args, args.data)
        board = api.score_leaderboard(
            args.data,
            args.submissions,
            options=_options(args, config, display),
            resamples=args.resamples,
            seed=args.seed,
        )
        write_leaderboard(board, output, report=not args.no_report, progress=display)
    if not args.quiet:
        emit(leaderboard_table(board))
    for entry in board.ranked:
        if entry.scored().stale_perplexities:
            print(stale_line(entry.name, entry.scored().stale_perplexities), file=sys.stderr)
    for line in flagged_lines(board.audit, not_judged=not args.quiet):
        print(line, file=sys.stderr)
    return EXIT_OK


@contextmanager
def _verdict_on_failure(state: RunState, display: ProgressDisplay) -> Iterator[None]:
    """A usage, configuration, thesaurus or reference-data error of ``leaderboard`` or ``correlate`` leaves
    its verdict in the output directory's commit marker (as ``score`` does in ``scores.json``), then goes
    on."""
    try:
        yield
    except ScorerError as exc:
        display.close()
        if state.output is not None:
            _try_write_failure(exc, state.output, marker=state.marker)
        raise


def _codalab(args: argparse.Namespace, state: RunState) -> int:
    """The scoring-program convention: INPUT/ref is the reference data, INPUT/res the submission."""
    problem = check_timeouts(args.setup_timeout, args.turn_timeout)
    if problem:
        raise UsageError(problem)
    root = Path(args.input)
    return _score_upload(
        args, state, str(root / "ref"), str(root / "res"), None, report=True, platform_input=root
    )


def _codalab_folders(root: Path) -> None:
    """Check that ``root`` holds ``ref/`` and ``res/``."""
    for folder in (root / "ref", root / "res"):
        if not folder.is_dir():
            raise UsageError(
                f"{folder} is not a folder; INPUT must hold ref/ (the reference data) "
                "and res/ (the submission)"
            )


def _correlate(args: argparse.Namespace, state: RunState) -> int:
    output = state.output = prepare(args.output)
    state.marker = CORRELATION_JSON
    baselines = tuple(b.strip() for b in args.baselines.split(",") if b.strip())
    with locked(output, _waiting(output)), _display(args) as display, _verdict_on_failure(state, display):
        config = _config(args, args.data)
        meta = api.correlate_submissions(
            args.data,
            args.submissions,
            args.human,
            options=_options(args, config, display),
            resamples=args.resamples,
            seed=args.seed,
            baselines=baselines,
        )
        write_correlation(meta, output)
    for note in meta.warnings:
        print(f"warning: {note}", file=sys.stderr)
    if not args.quiet:
        emit(correlation_table(meta))
    return EXIT_OK


def _try_write_failure(
    exc: Exception, output: Path, log: str | None = None, page: str | None = None, marker: str = SCORES_JSON
) -> None:
    try:
        write_failure(exc, "error", output, {ERROR_LOG: utf8(log)} if log else None, page, marker)
    except OSError:
        pass


def _print_invalid(exc: SubmissionInvalid, every: bool = False, scoring: bool = True) -> None:
    """The verdict on stderr: the first errors of each kind, or with ``every`` each listed error, one a
    line; a command that scores says it did not."""
    count = f"{exc.total} error" + ("" if exc.total == 1 else "s")
    print(
        f"error: the submission is invalid ({count}){'; it was not scored' if scoring else ''}:",
        file=sys.stderr,
    )
    print(issue_lines(exc.listed(), exc.not_listed, exc.unchecked_notes(), every=every), file=sys.stderr)
    _print_warnings(exc.warnings)


def _print_warnings(warnings: Sequence[Issue]) -> None:
    for w in warnings[:20]:
        print(f"warning: {shown(str(w))}", file=sys.stderr)  # one line, whatever a name in it holds
    if len(warnings) > 20:
        print(f"warning: ... and {len(warnings) - 20} more warning(s)", file=sys.stderr)


def _internal_error(state: RunState) -> int:
    """Exit 3: one line on stderr; the traceback goes to ``scorer-error.log`` in the output directory
    when the run has one (nothing is written anywhere else), else to stderr only with SCORER_DEBUG=1."""
    output = state.output
    text = traceback.format_exc()
    where = ""
    if output is not None:
        _try_write_failure(
            RuntimeError("internal error; see " + ERROR_LOG),
            output,
            text,
            state.failure_page,
            state.marker,
        )
        if (output / ERROR_LOG).is_file():
            where = f"; traceback in {output / ERROR_LOG}"
    elif os.environ.get("SCORER_DEBUG"):
        print(text, file=sys.stderr)
    else:
        where = "; set SCORER_DEBUG=1 to see the traceback"
    print(f"internal error: {sys.exc_info()[1]!r:.300}{where}", file=sys.stderr)
    return EXIT_INTERNAL


def _dependencies_missing(argv: Sequence[str]) -> bool:
    """Say, and return True, when this Python lacks the scorer's dependencies: a set-up problem (exit 2),
    never a traceback halfway through a command."""
    missing = missing_dependencies()
    if not missing:
        return False
    shown_args = " ".join(argv) or "..."
    print(
        f"error: this Python ({sys.executable}) lacks the scorer's dependencies (missing: "
        f"{', '.join(missing)}). Run the scorer with its own environment: ./run_scoring.sh {shown_args} "
        f"(it sets up .venv on first use), or .venv/bin/python -m scorer {shown_args} once it exists; "
        "or install the scorer into this Python with: pip install . (in the repository)",
        file=sys.stderr,
    )
    return True


#: Every subcommand of the parser (but ``run``, the runner's own), in the order of the help: the function that
#: adds its arguments, and its handler.
COMMANDS: dict[
    str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace, RunState], int]]
] = {
    "validate": (_validate_args, _validate),
    "score": (_score_args, _score),
    "leaderboard": (_leaderboard_args, _leaderboard),
    "codalab": (_codalab_args, _codalab),
    "correlate": (_correlate_args, _correlate),
    "bundle": (_bundle_args, _bundle),
    "audit-sample": (_audit_sample_args, _audit_sample),
    "explain": (_explain_args, _explain),
    "signature": (_signature_args, _signature),
    "check-data": (_check_data_args, _check_data),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``) and return its exit code. The standard
    streams are :class:`~scorer.streams.Forgiving` meanwhile: whatever becomes of them, the code is the
    outputs'."""
    with forgiving_streams():
        if _dependencies_missing(sys.argv[1:] if argv is None else argv):
            return EXIT_USAGE
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    if given[:1] == ["run"]:  # the standard-library runner, whole (contract section 10)
        return runner_main(given[1:], prog="scorer run", configure=_run_configuration)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    handler = COMMANDS[args.command][1]
    with STOP.taken():  # the first SIGINT or SIGTERM stops the run; the handlers before are put back after
        try:
            STOP.act_on_held()  # one received before: stop as the first of them would have
            return _run(handler, args)
        except (KeyboardInterrupt, Terminated) as stop:
            return STOP.stopped(stop)


def _run_configuration(explicit: str | None, data: str) -> RunConfig:
    """What ``run`` reads of the configuration (contract section 7's rule: ``--config``, else ``config.toml``
    in ``--data``, else the built-in default), every key checked as every command checks it; a configuration
    error is the runner's usage error (exit 2)."""
    try:
        config, which = config_for(data if os.path.isdir(data) else None, explicit)
    except ScorerError as exc:
        raise UsageFault(str(exc)) from None
    audit = config.audit
    return RunConfig(
        audit.probe_turns, audit.probe_min_words, config.competition.network, config.hidden_metric.salt, which
    )


#: The options that mend an error the library raises (the library names no flags; the command line does).
_OPTION_HINTS: dict[type[ScorerError], str] = {
    ThesaurusError: "--thesaurus PATH, or --no-synonyms",
    PerplexitiesNotFound: "--ppl FILE",
}


#: The commands that read or write the persistent caches.
_CACHED = {"score", "codalab", "leaderboard", "correlate", "explain"}


def _cache_notice(args: argparse.Namespace) -> None:
    """One stderr line when the cache directory cannot be used (contract section 3): the run goes on
    without a persistent cache."""
    if args.command in _CACHED:
        problem = cache_dir_problem()
        if problem is not None:
            print(
                f"warning: the cache directory {shown_name(str(cache_dir()))} is not used "
                f"({shown_name(problem)}); "
                "the run goes on without a persistent cache",
                file=sys.stderr,
            )


def _run(handler: Callable[[argparse.Namespace, RunState], int], args: argparse.Namespace) -> int:
    state = RunState()
    try:
        _cache_notice(args)
        with no_cycle_collection():  # one command, then exit: nothing is left for a collection to free
            code = handler(args, state)
            # before the collector resumes: its next collection, and the exit's, skip every object the run
            # left (0.13 s at 20,000 turns)
            gc.freeze()
            return code
    except IssuesError as exc:
        _json_verdict(args, exc)
        print(f"error: {exc.headline}:", file=sys.stderr)
        print(issue_lines(exc.listed(), exc.not_listed, exc.unchecked_notes()), file=sys.stderr)
        return exc.exit_code
    except ScorerError as exc:
        STOP.raise_received()  # an error the stop caused on its way: 130 or 143
        _json_verdict(args, exc)
        hint = next(
            (f" (on the command line: {h})" for kind, h in _OPTION_HINTS.items() if isinstance(exc, kind)), ""
        )
        print(f"error: {exc}{hint}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # a fault of the environment: a path too long, unreadable, on a full disk ...
        STOP.raise_received()  # an error the stop caused on its way: 130 or 143
        error = UsageError(_environment_fault(exc, state))
        _json_verdict(args, error)
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except MemoryError:
        STOP.raise_received()  # an error the stop caused on its way: 130 or 143
        error = UsageError("the run ran out of memory; give it more memory, or fewer --resamples or --jobs")
        _json_verdict(args, error)
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except Exception as exc:  # noqa: BLE001 - the one place that turns bugs into exit 3
        stop = STOP.within(exc)
        if stop is not None:  # a stop that landed where Python wraps what is raised (a class being made)
            raise stop from None
        _json_verdict(args, RuntimeError("internal error"))
        return _internal_error(state)


def _environment_fault(exc: OSError, state: RunState) -> str:
    """A sentence naming the path of a fault of the environment: the file's when the error names one, else
    the output directory's (the run was writing there), with what to do when the fault is a known one."""
    path = shorten(str(exc.filename), 200) if exc.filename else None
    where = state.output
    if path is None:
        path = str(where) if where is not None else "a file"
    reason = exc.strerror or str(exc)
    if exc.errno == errno.EMFILE:
        reason += " (raise the limit, ulimit -n, or give fewer --jobs)"
    elif exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        reason += " (free some space, or give another --output)"
    return f"{path}: {reason}"


def _json_verdict(args: argparse.Namespace, error: Exception) -> None:
    """``validate --json`` prints one JSON document whatever the exit code: here, the error's."""
    if getattr(args, "json", False):
        payload = failure_payload(error, "error")
        payload["warnings"] = []
        emit_json(payload)


def emit(text: str) -> None:
    """Print ``text`` on stdout (a reader that went away, a full device: the rest goes nowhere, and the run
    keeps its exit code; see :mod:`scorer.streams`)."""
    print(text, flush=True)


def emit_json(value: object) -> None:
    """Print ``value`` on stdout as JSON for a program (contract section 3): escaped by JSON's own rules
    (:func:`~scorer.safe_text.json_text`), never by the stream's, and all ASCII where stdout's encoding
    cannot show a character of it, so that whatever a name holds ``json.loads`` gives it back exactly."""
    text = json_text(value)
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        text = json_text(value, ascii_only=True)
    getattr(sys.stdout, "write_raw", sys.stdout.write)(text + "\n")
    sys.stdout.flush()


def run() -> None:
    """The command line's process: closed standard descriptors given ``/dev/null`` first, then :func:`main`,
    whose code is the process's."""
    reopen_closed()
    STOP.hold()  # until main's run takes the signals (it stops on the first)
    STOP.exit(main())
