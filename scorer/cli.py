"""Command line (SPEC section 6): a thin shell over :mod:`scorer.api`.

Exit codes: 0 scored / valid, 1 submission invalid, 2 usage, configuration,
thesaurus or reference-data error, 3 unexpected internal error (one line on
stderr, the traceback in ``scorer-error.log`` in the output directory).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Sequence

from . import api
from .config import load_config
from .explain import explain
from .meteor import Matcher
from .errors import EXIT_INTERNAL, EXIT_INVALID, EXIT_OK, IssuesError, ScorerError, SubmissionInvalid
from .report import failure_payload, issue_lines, summary_table, write_failure, write_outputs
from .turns import default_jobs
from .version import __version__

ERROR_LOG = "scorer-error.log"


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 (every core) or more")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="scorer", description="Score multimodal dialogue submissions "
                                     "(Russian METEOR + hidden metric, type-weighted integral).")
    parser.add_argument("--version", action="version", version=f"scorer {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def submission_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--data", required=True, metavar="DIR", help="reference directory (dialogues.jsonl ...)")
        p.add_argument("--submission", required=True, metavar="PATH",
                       help="submission.jsonl, or a directory or .zip holding it and ppl_output.json")
        p.add_argument("--ppl", metavar="FILE", help="ppl_output.json when --submission is a file "
                       "(default: ppl_output.json next to it)")
        p.add_argument("--config", metavar="FILE", help="TOML file overriding the default configuration")

    v = sub.add_parser("validate", help="check a submission without scoring it (needs only dialogues.jsonl)")
    submission_args(v)
    v.add_argument("--json", action="store_true", help="print the verdict as JSON on stdout")

    s = sub.add_parser("score", help="validate and score a submission")
    submission_args(s)
    s.add_argument("--output", required=True, metavar="DIR", help="where scores.json, details.csv, scores.txt go")
    s.add_argument("--thesaurus", metavar="PATH", help="RuWordNet SQLite file or XML directory "
                   "(default: $RUWORDNET_PATH, else the ruwordnet package's download)")
    s.add_argument("--no-synonyms", action="store_true", help="score without the RuWordNet synonym stage")
    s.add_argument("--quiet", action="store_true", help="print nothing on success")
    s.add_argument("--jobs", type=_jobs, default=0, metavar="N",
                   help="processes to score on (default 0: every core); outputs do not depend on it")

    e = sub.add_parser("explain", help="show how METEOR scores one answer: tokens, matches, chunks, formula")
    e.add_argument("--candidate", required=True, metavar="TEXT", help="the model's answer")
    e.add_argument("--reference", required=True, action="append", metavar="TEXT",
                   help="a reference variant (repeat for several)")
    e.add_argument("--config", metavar="FILE", help="TOML file overriding the default configuration")
    e.add_argument("--thesaurus", metavar="PATH", help="RuWordNet SQLite file or XML directory")
    e.add_argument("--no-synonyms", action="store_true", help="explain without the synonym stage")
    for name in ("alpha", "beta", "gamma"):
        e.add_argument(f"--{name}", type=float, help=f"override meteor.{name}")
    return parser


def _explain(args: argparse.Namespace) -> int:
    overrides = {"meteor": {k: getattr(args, k) for k in ("alpha", "beta", "gamma") if getattr(args, k) is not None}}
    config = api.with_synonyms(load_config(args.config, overrides), not args.no_synonyms)
    matcher = Matcher(api.thesaurus_for(config, args.thesaurus))
    print(explain(args.candidate, args.reference, matcher, config.meteor))
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    try:
        valid = api.validate_submission(args.data, args.submission, args.ppl, config=config)
    except SubmissionInvalid as exc:
        if args.json:
            payload = failure_payload(exc, "invalid")
            payload["warnings"] = [w.to_dict() for w in exc.warnings]
            print(json.dumps(payload, ensure_ascii=False, indent=2))
        _print_invalid(exc)
        return EXIT_INVALID
    turns = sum(len(a) for a in valid.answers.values())
    if args.json:
        print(json.dumps({"status": "valid", "dialogs": len(valid.answers), "turns": turns,
                          "warnings": [w.to_dict() for w in valid.warnings]}, ensure_ascii=False, indent=2))
    else:
        print(f"valid: {len(valid.answers)} dialogues, {turns} turns")
    _print_warnings(valid.warnings)
    return EXIT_OK


def _score(args: argparse.Namespace) -> int:
    output = Path(args.output)
    try:
        config = load_config(args.config)
        result = api.score_submission(args.data, args.submission, args.ppl, config=config,
                                      thesaurus=args.thesaurus, synonyms=not args.no_synonyms,
                                      jobs=args.jobs or default_jobs())
    except SubmissionInvalid as exc:
        write_failure(exc, "invalid", output)
        _print_invalid(exc)
        return EXIT_INVALID
    except ScorerError as exc:
        _try_write_failure(exc, output)
        raise
    write_outputs(result, output)
    _print_warnings(result.warnings)
    if not args.quiet:
        print(summary_table(result))
    return EXIT_OK


def _try_write_failure(exc: Exception, output: Path) -> None:
    try:
        write_failure(exc, "error", output)
    except OSError:
        pass


def _print_invalid(exc: SubmissionInvalid) -> None:
    print(f"error: the submission is invalid ({len(exc.issues)} error(s)); it was not scored:", file=sys.stderr)
    print(issue_lines(exc.listed(), exc.not_listed), file=sys.stderr)
    _print_warnings(exc.warnings)


def _print_warnings(warnings) -> None:
    for w in warnings[:20]:
        print(f"warning: {w}", file=sys.stderr)
    if len(warnings) > 20:
        print(f"warning: ... and {len(warnings) - 20} more warning(s)", file=sys.stderr)


def _internal_error(args: argparse.Namespace | None) -> int:
    output = getattr(args, "output", None)
    text = traceback.format_exc()
    log = None
    try:
        if output:
            Path(output).mkdir(parents=True, exist_ok=True)
            log = Path(output) / ERROR_LOG
            log.write_text(text, encoding="utf-8")
            _try_write_failure(RuntimeError("internal error; see " + ERROR_LOG), Path(output))
        else:
            with tempfile.NamedTemporaryFile("w", prefix="scorer-error-", suffix=".log", delete=False) as fh:
                fh.write(text)
                log = Path(fh.name)
    except OSError:
        pass
    where = f"; traceback in {log}" if log else ""
    print(f"internal error: {sys.exc_info()[1]!r:.300}{where}", file=sys.stderr)
    return EXIT_INTERNAL


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    handler = {"validate": _validate, "score": _score, "explain": _explain}[args.command]
    try:
        return handler(args)
    except IssuesError as exc:
        print(f"error: {exc}:", file=sys.stderr)
        print(issue_lines(exc.listed(), exc.not_listed), file=sys.stderr)
        return exc.exit_code
    except ScorerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Exception:  # noqa: BLE001 - the one place that turns bugs into exit 3
        return _internal_error(args)


def run() -> None:
    sys.exit(main())
