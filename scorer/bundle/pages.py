"""The words a bundle publishes (contract sections 10 and 11): the pages (overview, evaluation, data, terms),
the starting kit's README and the short texts of ``competition.yaml``, in the competition's language
(``[platform] language``), rendered from templates: one folder a language under ``templates/`` (each page
a Jinja2 template, the shared parts in ``_parts.md.j2``, the short texts in ``words.toml``), fed one set of
values computed once from the competition a bundle plans (:func:`values`). A third language is a folder of
templates; a stage the registry describes in no word of that language is named by its name.

The pages follow the configuration in force (the METEOR stages, alpha, beta and gamma, the weights, the
limits), never the defaults, and say of the hidden metric only that it is derived from the perplexities. A
value a template names that is not given fails the build (``StrictUndefined``), never the page.
"""

from __future__ import annotations

import datetime
import tomllib
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from scorer.inputs.contract import DIALOGUES, PPL, SUBMISSION
from scorer.metric.stages import REGISTRY

from .competition import RUN_FOLDER, Competition, Task, runner_options
from .kit import KIT_GENERATE

if TYPE_CHECKING:
    import jinja2

#: The page files and the templates they are rendered from: overview, evaluation, data, terms.
PAGES = ("overview", "evaluation", "data", "terms")
#: The organizer's final competition has an overview and a data page of its own.
FINAL_PAGES = ("final_overview", "evaluation", "final_data", "terms")
#: How a participant copies the scorer out of the competition's image (the pages' second way to get it).
COPY_SCORER = (
    'python3 -c "import os, shutil, scorer; shutil.copytree(os.path.dirname(scorer.__file__), '
    "'/work/scorer', ignore=shutil.ignore_patterns('__pycache__'))\""
)


def languages() -> tuple[str, ...]:
    """The languages the pages are written in: a folder of templates each."""
    folder = resources.files("scorer.bundle").joinpath("templates")
    return tuple(sorted(entry.name for entry in folder.iterdir() if entry.is_dir()))


@cache
def _words(language: str) -> dict[str, Any]:
    """The language's ``words.toml``."""
    text = resources.files("scorer.bundle").joinpath("templates", language, "words.toml").read_text("utf-8")
    return tomllib.loads(text)


@cache
def _environment(language: str) -> jinja2.Environment:
    """The language's templates: Markdown, so no autoescaping; a missing value is an error. Jinja2 is
    imported here, when a bundle is made, not by every command that imports the package
    (docs/performance.md)."""
    import jinja2

    folder = resources.files("scorer.bundle").joinpath("templates", language)
    environment = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: folder.joinpath(name).read_text("utf-8")),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    thousands = _words(language)["thousands"]
    environment.filters["num"] = lambda n: f"{n:,}".replace(",", thousands)
    environment.filters["code"] = lambda text: f"`{text}`"
    return environment


def word(language: str, key: str) -> str:
    """A short text of the bundle (a name, a description) in ``language``."""
    return str(_words(language)["words"][key])


def page_titles(language: str) -> tuple[str, ...]:
    """The four pages' titles: overview, evaluation, data, terms."""
    return tuple(_words(language)["page_titles"])


def phase_description(competition: Competition, task: Task) -> str:
    """The phase's description in ``competition.yaml``."""
    kind = "final" if task.phase == "final" else "code" if competition.code else "files"
    return word(competition.language, f"phase_{kind}")


def task_description(competition: Competition, task: Task) -> str:
    """The task's description in ``competition.yaml``."""
    return word(
        competition.language, "task_description_final" if task.phase == "final" else "task_description"
    )


def final_title(c: Competition) -> str:
    """The title of the organizer's final competition."""
    return str(_words(c.language)["final_title"]).format(title=c.title)


def final_start(c: Competition) -> datetime.date:
    start = c.platform.final_start
    assert start is not None
    return start


def _stage(language: str, name: str) -> str:
    """A stage in the pages' words: the registry's description in ``language``, else its name."""
    stage = REGISTRY.get(name)
    described = stage.described.get(language) if stage is not None else None
    return described or str(_words(language)["stage_unknown"]).format(name=name)


def _explain_flags(c: Competition) -> str | None:
    """``explain``'s options with this competition's METEOR settings, or None when its options cannot give
    its stages."""
    m = c.config.meteor
    flags = {("exact", "lemma", "synonym"): "", ("exact", "lemma"): " --no-synonyms"}
    if m.stages not in flags:
        return None
    return f"--alpha {m.alpha:g} --beta {m.beta:g} --gamma {m.gamma:g}{flags[m.stages]}"


def _task_values(c: Competition, task: Task) -> dict[str, Any]:
    return {
        "dialogues": len(task.dialogues),
        "turns": task.turns,
        "media": bool(task.media),
        "rows": [(t, *task.count(t)) for t in c.types],
    }


def values(c: Competition) -> dict[str, Any]:
    """Every value the templates use, computed once from the competition: its limits, the seconds a call may
    take in each phase and step, the counts, the stages in force in the language's words, the weights, the
    dates."""
    p, m, language = c.platform, c.config.meteor, c.language
    words = _words(language)
    end = c.development_end()
    rule = p.submission_rule
    return {
        "title": c.title,
        "final_title": final_title(c),
        "image": c.image,
        "code": c.code,
        "offline": c.offline,
        "decimals": c.decimals,
        "turn_details": c.config.participants.turn_details,
        "p": {
            "execution_time_limit": p.execution_time_limit,
            "setup_timeout": p.setup_timeout,
            "turn_timeout": p.turn_timeout,
            "step_timeout": p.step_timeout,
            "max_submissions_per_day": p.max_submissions_per_day,
            "max_submissions": p.max_submissions,
            "development_start": p.development_start.isoformat(),
            "development_end": None if end is None else end.isoformat(),
            "final_start": None if p.final_start is None else p.final_start.isoformat(),
            "packages": list(p.packages),
            "seed": p.seed,
            "final_share": p.final_share,
        },
        "rule_text": words["rules"][rule],
        "selected": words["selected"].get(rule, words["selected"]["other"]),
        "dev": _task_values(c, c.development),
        "final": None if c.final is None else _task_values(c, c.final),
        # the competition's own phase: the public pages never state the held-out one's calls, whose probes
        # are counted from the held-out answers (contract section 11); the organizers' final states them
        "timed": [
            {
                "phase": word(language, c.task.phase),
                "turns": c.task.turns,
                "probes": c.task.probes,
                "generation": c.task.seconds(p, False),
                "scoring": c.task.seconds(p, True),
            }
        ],
        "meteor": {
            "alpha": f"{m.alpha:g}",
            "beta": f"{m.beta:g}",
            "gamma": f"{m.gamma:g}",
            "penalty": m.gamma > 0,
            "stages": [_stage(language, s) for s in m.stages],
        },
        "weights": [(t, f"{c.config.weights[t]:g}") for t in c.types],
        "explain_flags": _explain_flags(c),
        "limits": {
            "max_file_mib": c.config.limits.max_file_mib,
            "max_answer_chars": c.config.limits.max_answer_chars,
        },
        "run_folder": RUN_FOLDER,
        "runner_options": runner_options(p),
        "local_command": (
            f"python3 starting_kit/runner.py --data public_data --code my_upload.zip --output {RUN_FOLDER} "
            + runner_options(p)
        ),
        "copy_scorer": COPY_SCORER,
        "kit_generate": KIT_GENERATE.strip(),
        "SUBMISSION": SUBMISSION,
        "PPL": PPL,
        "DIALOGUES": DIALOGUES,
    }


def render(c: Competition, name: str, given: dict[str, Any] | None = None) -> str:
    """The template ``name`` of the competition's language, rendered with its :func:`values` (``given``:
    those values, computed once for several pages)."""
    return _environment(c.language).get_template(f"{name}.md.j2").render(given or values(c))


def pages(competition: Competition) -> tuple[str, str, str, str]:
    """The overview, evaluation, data and terms pages of ``competition``, in its language (the organizer's
    final competition has an overview and a data page of its own)."""
    names = FINAL_PAGES if competition.organizers_final else PAGES
    given = values(competition)
    overview, evaluation, data, terms = (render(competition, name, given) for name in names)
    return overview, evaluation, data, terms


def code_kit_readme(competition: Competition) -> str:
    """The starting kit's README of a code competition: how to run the kit's code and check its files."""
    return render(competition, "kit_code")


def files_kit_readme(competition: Competition) -> str:
    """The starting kit's README of a files competition: the example upload and how to check one."""
    return render(competition, "kit_files")
