"""The runner's command line (contract section 10): :func:`run`, the phases of one
:class:`~.options.RunnerOptions` into ``--output`` (and the refusals before them), and :func:`main`, which
reads the configuration and turns a fault, a usage error or a stop by SIGINT or SIGTERM (the runner's own
signal handling) into the exit code.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from .configuration import RunConfig, read_configuration
from .data import CodeDialogue, read_dialogues, read_only, read_targets
from .faults import CodeFault, UsageFault
from .names import (
    ANSWERS,
    DIALOGUES,
    EXIT_CODE_FAULT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USAGE,
    NETWORK_FAULT,
    PPL,
    PPL_CHECK,
    PPL_PROBES,
    PPL_TARGETS,
    RUN_FAULT,
    STATE_DIR,
    SUBMISSION,
    excerpt,
    printable,
    signal_name,
    target_digest,
)
from .network import network_refusal
from .options import RunnerOptions, build_parser
from .outputs import Outputs, json_bytes
from .phases import PhaseSettings, generate, numbers, perplexities
from .process import become_subreaper, become_undumpable, kill_descendants
from .state import json_line
from .upload import code_digest, find_code


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def run(options: RunnerOptions) -> int:
    """The whole run of the command line's ``options`` (see the module docstring); its exit code."""
    if _inside(options.code, options.output) or _inside(options.data, options.output):
        raise UsageFault(
            f"--output {excerpt(options.output, 200)} holds --code or --data: give the run a folder of its "
            "own (whatever else stands in it is removed when the run ends)"
        )
    if options.resume and options.sealed:
        raise UsageFault("--sealed keeps no turns on disk, so there is nothing to --resume from")
    with_answers = os.path.lexists(os.path.join(options.data, ANSWERS))
    generating = options.phase in ("all", "generate") and not options.only
    if generating and with_answers:
        if not options.trusted_code:
            raise UsageFault(answers_refusal(options))
        print(
            f"run: --trusted-code: the code runs beside {excerpt(os.path.join(options.data, ANSWERS), 200)} "
            "and could read the answers while it generates; use it only for code you trust",
            file=sys.stderr,
        )
    withheld = options.sealed and with_answers  # a phase that has the answers: one fixed line for a fault
    os.makedirs(options.output, exist_ok=True)
    become_subreaper()
    if options.sealed:
        become_undumpable()
        print(
            "run: sealed: the code's output is discarded and "
            + ("a fault is reported by one fixed line" if withheld else "faults are named by kind and place"),
            file=sys.stderr,
        )
    dialogues = read_dialogues(options.data)
    if options.limit is not None:
        total = len(dialogues)
        dialogues = dialogues[: options.limit]
        print(
            f"run: --limit {options.limit}: a trial on the first {len(dialogues)} of {total} dialogues; the "
            "outputs do not cover the data set (validate names the dialogues they miss)",
            file=sys.stderr,
        )
    only = read_only(options.only, dialogues) if options.only else None
    keep = {
        "all": (),
        "generate": (),
        "ppl": (SUBMISSION,) if only is None else (SUBMISSION, PPL, PPL_PROBES, PPL_TARGETS),
    }[options.phase if only is None else "ppl"]
    outputs = Outputs(options.output, keep)
    if options.offline:
        if options.network == "allowed" and not options.quiet:
            print(
                "run: --offline: the network is checked, although the configuration says [competition] "
                'network = "allowed"',
                file=sys.stderr,
            )
        refusal = network_refusal()
        if refusal is not None:
            outputs.put(RUN_FAULT, json_bytes(NETWORK_FAULT), now=False)
            outputs.finish(keep_state=not options.sealed)
            raise UsageFault(refusal)
    state = None if options.sealed else os.path.join(options.output, STATE_DIR)
    scratch = tempfile.mkdtemp(prefix="scorer-code-")
    settings = PhaseSettings.of(options, state)
    not_kept: str | None = None
    try:
        code_root = find_code(options.code, scratch)
        digest = code_digest(code_root)
        answers: dict[str, list[str]] | None = None
        if generating:
            answers = generate(dialogues, code_root, settings, digest)
            lines = "".join(
                json.dumps(
                    {"dialog_id": d["dialog_id"], "answers": answers[d["dialog_id"]]}, ensure_ascii=False
                )
                + "\n"
                for d in dialogues
            )
            outputs.put(SUBMISSION, lines.encode("utf-8"))
            if not options.quiet:
                print(f"run: wrote {os.path.join(options.output, SUBMISSION)}", file=sys.stderr)
            if options.keep_code:  # the prediction step hands the code on to the scoring step
                outputs.code = code_root
        if options.phase in ("all", "ppl"):
            # every answer is written and closed before answers.jsonl is opened
            targets = read_targets(options.data, dialogues)
            with_targets = targets is not None
            if targets is None:
                print(
                    f"run: no {ANSWERS} in {options.data}: the perplexities are of the model's own answers "
                    f"({SUBMISSION}), not of the competition's targets",
                    file=sys.stderr,
                )
                targets = answers or _own_answers(outputs.kept.get(SUBMISSION), options.output, dialogues)
            settings = PhaseSettings.of(options, state, probes=with_targets)
            values, probed = perplexities(dialogues, targets, code_root, settings, only, digest)
            if only is None:
                outputs.put(PPL, json_bytes(numbers(values)))
                if probed is not None:
                    outputs.put(PPL_PROBES, json_bytes(probed))
                if with_targets:
                    digests = {
                        d["dialog_id"]: target_digest(targets[d["dialog_id"]], options.salt)
                        for d in dialogues
                    }
                    outputs.put(PPL_TARGETS, json_bytes({"digests": digests}))
            else:
                check = {k: vs for k, vs in values.items() if any(v is not None for v in vs)}
                outputs.put(PPL_CHECK, json_bytes(check))
            if not options.quiet:
                for name in (PPL, PPL_PROBES, PPL_TARGETS, PPL_CHECK):
                    if name in outputs.files:
                        print(f"run: wrote {os.path.join(options.output, name)}", file=sys.stderr)
                if PPL_TARGETS in outputs.files and options.salt is None:
                    print(
                        f"run: {PPL_TARGETS} is unsalted (the configuration has no [hidden_metric] salt): "
                        "like audit.json, it is for the organizer only",
                        file=sys.stderr,
                    )
    except CodeFault as fault:
        if withheld:
            fault = fault.withhold()
        outputs.put(RUN_FAULT, json_bytes(fault.record()), now=False)
        raise fault from None
    finally:
        left = kill_descendants()
        try:
            if not left:  # before the scratch folder goes: an unpacked zip's team_code/ is copied from there
                not_kept = outputs.finish(keep_state=not options.sealed, named=not options.sealed)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    if not_kept is not None:
        raise UsageFault(not_kept)
    return EXIT_OK


def answers_refusal(options: RunnerOptions) -> str:
    """Why ``run --phase all`` or ``generate`` refuses a ``--data`` holding ``answers.jsonl``, and the two
    ways out."""
    data, code, output = (_shown_path(x) for x in (options.data, options.code, options.output))
    return (
        f"--data {data} holds {ANSWERS}, and the team's code could read the answers while it generates (it "
        "runs as your user). Generate on data without answers (a bundle's input_data/, or a folder holding "
        f"only {DIALOGUES} and its media): run --phase generate --data PUBLIC --code {code} --output "
        f"{output}, then run --phase ppl --data {data} --code {code} --output {output}, which keeps the "
        f"{SUBMISSION} it finds there and writes {PPL} and {PPL_PROBES}; or, for code you trust (your own "
        "baseline, a demo on the bundled example), add --trusted-code"
    )


def _shown_path(path: str) -> str:
    """A path as a command line would take it (quoted for the shell), or an excerpt of a long one."""
    return shlex.quote(printable(path)) if len(path) <= 200 else excerpt(path, 200)


def _own_answers(kept: bytes | None, output: str, dialogues: list[CodeDialogue]) -> dict[str, list[str]]:
    path = os.path.join(output, SUBMISSION)
    if kept is None:
        raise UsageFault(
            f"there is no {ANSWERS} and no {path}: run the generate phase first (--phase all or generate)"
        )
    answers = {}
    for number, line in enumerate(kept.split(b"\n"), 1):
        if not line.strip():
            continue
        row = json_line(line)
        if not isinstance(row, dict):
            raise UsageFault(f"{path}, line {number}: not a JSON object")
        if isinstance(row.get("dialog_id"), str) and isinstance(row.get("answers"), list):
            answers[row["dialog_id"]] = [a if isinstance(a, str) else "" for a in row["answers"]]
    for d in dialogues:
        if len(answers.get(d["dialog_id"], [])) != len(d["turns"]):
            raise UsageFault(f"{path}: dialog_id {excerpt(d['dialog_id'])} has no answer for every turn")
    return answers


_STOPPED = {signal.SIGINT: 130, signal.SIGTERM: 143}


class Stopped(Exception):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: object) -> None:
    for sig in _STOPPED:
        signal.signal(sig, signal.SIG_IGN)
    raise Stopped(signum)


def main(
    argv: list[str] | None = None,
    prog: str = "runner.py",
    configure: Callable[[str | None, str], RunConfig] | None = None,
    held: Sequence[int] = (),
) -> int:
    """The command line (``argv``, default ``sys.argv[1:]``) and its exit code. ``configure`` reads the
    configuration (``--config`` or None, ``--data``) into a :class:`RunConfig`, raising UsageFault for one
    that cannot be used: ``python -m scorer run`` passes the scorer's reader; the default is
    :func:`read_configuration`. ``held``: the SIGINT and SIGTERM received before the runner took the signals
    (its ``__main__`` holds them from its first line, the scorer's command line from its first import), read
    once the runner's handler is set: the first ends the run as if it had come then."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        arguments = build_parser(prog).parse_args(argv)
    except SystemExit as exc:
        return EXIT_USAGE if exc.code else 0
    previous: dict[signal.Signals, Any] = {}
    sealed, begun = bool(arguments.sealed), False
    try:
        for sig in _STOPPED:  # inside the try: a stop from the first handler set on is the run's
            previous[sig] = signal.signal(sig, _stop)
        for signum in held[:1]:
            _stop(signum, None)
        configuration = (configure or read_configuration)(arguments.config, arguments.data)
        if not arguments.quiet:
            print(f"config: {configuration.source or 'none'}", file=sys.stderr)
        begun = True
        return run(RunnerOptions.of(arguments, configuration))
    except Stopped as exc:
        kill_descendants()
        where = (
            f" in {os.path.join(arguments.output, STATE_DIR)} (run again with --resume)"
            if begun and not sealed
            else ""
        )
        print(
            f"run: stopped by {signal_name(exc.signum)}"
            + (f"; the finished turns are kept{where}" if where else ""),
            file=sys.stderr,
        )
        return _STOPPED[signal.Signals(exc.signum)]
    except CodeFault as fault:
        kill_descendants()
        print(fault.report(not sealed), file=sys.stderr)
        if fault.kind == "exception" and not sealed and "ModuleNotFoundError" in fault.detail:
            print(
                f"run: the code ran under {sys.executable}; install what it imports there, or run the runner "
                "with the Python that has the team's packages (python3 runner.py ..., the runner needs only "
                "the standard library)",
                file=sys.stderr,
            )
        if fault.kind not in ("missing", "upload") and not sealed:
            print(
                f"run: the finished turns are kept in {os.path.join(arguments.output, STATE_DIR)}",
                file=sys.stderr,
            )
        return EXIT_CODE_FAULT
    except UsageFault as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception:  # noqa: BLE001 - the runner's own bug
        kill_descendants()
        print(f"internal error: {traceback.format_exc().splitlines()[-1]}", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)


if __name__ == "__main__":
    sys.exit(main())
