"""What ``bundle --code`` adds to a competition bundle (contract section 10): a code competition.

The participant uploads a zip holding ``team_code/``; Codabench's prediction step runs the ingestion
program (the standard-library runner, :mod:`scorer.runner`, with its ``metadata.yaml``) on
``input_data`` (``dialogues.jsonl`` and the media it names, never ``answers.jsonl``): ``--phase generate``
writes ``submission.jsonl`` and copies ``team_code/`` beside it; the scoring step (``codalab``) then runs
the ``ppl`` phase on that copy with the reference answers, and scores. The reference data's config says
``[competition] submissions = "code"`` (:func:`code_config`). The starting kit holds a complete working
``team_code/`` in plain Python: a Kneser-Ney bigram model of words and of their endings over the texts it
ships (:mod:`scorer.outputs.kit_texts`), which answers with its closest known text and whose perplexities
are real: a text with its words shuffled is less likely than the text.

Time limits. Codabench ends a step (the prediction, then the scoring, each a run of its own) after the
phase's ``execution_time_limit`` seconds, and its public queue allows at most 600 s (a competition's own
queue may allow more). The runner's ``--setup-timeout`` and ``--turn-timeout`` in both steps' commands
are far inside it, so a setup or a call that hangs is stopped and named by the runner (the call, the
dialogue, the turn) while the step still has time, not cut off by the platform with no name. They bound
one call each, not the step: a data set of N turns takes up to setup + N x turn seconds, which no per-call
limit can keep under the step's (N = 66 turns of 30 s is 33 minutes), so a code that is slow on every
turn is still ended by the platform; the pages give the average time a turn may take.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping

from scorer.errors import ConfigError
from scorer.inputs.contract import DIALOGUES

from .kit_texts import KIT_TEXTS
from .media import media_files as media_files  # the bundle's media, read as hostile input

INGESTION_PROGRAM, INPUT_DATA = "ingestion_program", "input_data"
RUNNER = "runner.py"
#: The phase's ``execution_time_limit`` (seconds) of every step: the most Codabench's public queue allows.
EXECUTION_TIME_LIMIT = 600
#: The runner's limits in both steps (seconds): a model's setup, and one call of generate_text or get_ppl.
#: Together they leave 450 s of the step, so the runner names a hang before the platform ends the step.
SETUP_TIMEOUT, TURN_TIMEOUT = 120, 30
#: The runner's limits as command-line options (the ingestion program's and ``codalab``'s).
TIMEOUT_OPTIONS = f"--setup-timeout {SETUP_TIMEOUT} --turn-timeout {TURN_TIMEOUT}"
INGESTION_COMMAND = (
    f"python3 /app/program/{RUNNER} --data /app/input_data --code /app/ingested_program --output /app/output "
    f"--phase generate --keep-code {TIMEOUT_OPTIONS}"
)
KIT_CODE = "starting_kit/team_code"
#: The folder the pages' local run writes (the runner command's ``--output``), which ``validate`` checks.
RUN_FOLDER = "my_run"

#: The starting kit's model: plain Python, its texts beside it (``texts.txt``).
KIT_GENERATE = r'''
"""A small working model for the competition's protocol, in plain Python, over the texts of texts.txt: a
bigram model of words and punctuation marks (interpolated Kneser-Ney), mixed half and half with a bigram
model of the words' endings, which also knows the order of words it has never seen. It answers with the
known text closest to the question (most shared words) and gives real perplexities of the target text."""

import math
import os
import re

TOKEN = re.compile(r"\w+|[^\w\s]")
START, END = "<s>", "</s>"
DISCOUNT = 0.75  # Kneser-Ney's absolute discount
UNSEEN = 0.05  # the share of the lower-order distribution kept for symbols never seen
OPEN_WORDS = 20000  # how many word forms one ending is taken to have (most of them never seen)


def _tokens(text):
    """The text's words and punctuation marks, in lower case, with е for ё."""
    return TOKEN.findall(text.lower().replace("ё", "е"))


def _ending(token):
    """A word's last two letters; a number, a mark and the text's start and end stand for themselves."""
    return "-" + token[-2:] if token[:1].isalpha() else "#" if token.isdigit() else token


def _text_of(parts):
    return " ".join(p["content"] for p in parts if p["type"] == "text")


class Bigrams:
    """An interpolated Kneser-Ney bigram model of sequences of symbols."""

    def __init__(self, sequences):
        self.pairs, self.left, self.after, self.before = {}, {}, {}, {}
        for seq in sequences:
            for a, b in zip(seq, seq[1:]):
                if (a, b) not in self.pairs:
                    self.after[a] = self.after.get(a, 0) + 1  # how many symbols follow a
                    self.before[b] = self.before.get(b, 0) + 1  # how many symbols precede b
                self.pairs[(a, b)] = self.pairs.get((a, b), 0) + 1
                self.left[a] = self.left.get(a, 0) + 1

    def p(self, a, b, unseen):
        """P(b | a), where ``unseen`` is b's probability among symbols never seen."""
        lower = (1 - UNSEEN) * self.before.get(b, 0) / len(self.pairs) + UNSEEN * unseen
        seen = self.left.get(a, 0)
        if not seen:
            return lower
        return (max(self.pairs.get((a, b), 0) - DISCOUNT, 0) + DISCOUNT * self.after[a] * lower) / seen


def setup_model_and_tokenizer():
    """Read texts.txt (one text a line) and count its words, their endings and their pairs."""
    folder = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(folder, "texts.txt"), encoding="utf-8") as fh:
        texts = [line.strip() for line in fh if line.strip()]
    sequences = [[START] + _tokens(text) + [END] for text in texts]
    forms = {}  # ending -> {word: count}
    for seq in sequences:
        for token in seq[1:]:
            counts = forms.setdefault(_ending(token), {})
            counts[token] = counts.get(token, 0) + 1
    model = {
        "texts": texts,
        "words": Bigrams(sequences),
        "endings": Bigrams([[_ending(t) for t in seq] for seq in sequences]),
        "forms": forms,
    }
    return model, _tokens


def _p(model, a, b):
    """P(b | a) over words and marks: half the words' bigrams, half P(b's ending | a's) P(b | its ending)."""
    if b[:1].isalpha():
        forms = model["forms"].get(_ending(b), {})
        total = sum(forms.values())
        discounted = max(forms.get(b, 0) - DISCOUNT, 0) + DISCOUNT * len(forms) / OPEN_WORDS
        of_ending = discounted / total if total else 1 / OPEN_WORDS
    else:
        of_ending = 1 / 1000 if b.isdigit() else 1.0  # a number among a thousand; a mark is its own ending
    by_word = model["words"].p(a, b, 1 / OPEN_WORDS)
    by_ending = model["endings"].p(_ending(a), _ending(b), 1 / 1000) * of_ending
    return (by_word + by_ending) / 2


def generate_text(model, tokenizer, cur_query_list, history_list):
    """The known text sharing the most words with the question (and the dialogue's last question)."""
    asked = set(tokenizer(_text_of(cur_query_list)))
    for query, _answer in history_list[-1:]:
        asked |= set(tokenizer(_text_of(query)))
    return max(model["texts"], key=lambda text: (len(asked & set(tokenizer(text))), -len(text)))


def get_ppl(model, tokenizer, cur_query_tuple, history_list):
    """exp of the mean negative log-probability of the target's words and marks, and of its end."""
    _query, target = cur_query_tuple
    tokens = [START] + tokenizer(target) + [END]
    total = -sum(math.log(_p(model, a, b)) for a, b in zip(tokens, tokens[1:]))
    return math.exp(total / (len(tokens) - 1))
'''.lstrip("\n")


def kit_readme(check: str) -> str:
    """The starting kit's README of a code competition; ``check`` says how to run ``validate`` on the
    run's folder :data:`RUN_FOLDER` (in the competition's image, or with the scorer installed)."""
    return f"""# Starting kit (code competition)

`team_code/` is a complete, working upload: a bigram model of words and of their endings over
`team_code/texts.txt` (plain Python, no dependencies). Replace its `generate.py` with your model's,
keeping the three functions.

Run it locally as the platform will, with the scorer's runner (`runner.py` here: one file, Python 3.8 or
newer, nothing to install) and the platform's time limits, from the folder that holds `public_data/` and
`starting_kit/`:

    python3 starting_kit/runner.py --data public_data --code starting_kit --output my_run {TIMEOUT_OPTIONS}

then check the files it wrote with the scorer's `validate` (the perplexities are of the model's own
answers: the targets are hidden).

{check}

Upload a zip holding the `team_code/` folder at its root:

    cd starting_kit && zip -r ../my_upload.zip team_code
"""


def _seconds(value: float) -> str:
    """A time in seconds as people read it: whole from 10 s on, else two significant digits."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def time_limits(turns: int) -> str:
    """The pages' paragraph on the time limits of a code competition whose data has ``turns`` turns."""
    left = EXECUTION_TIME_LIMIT - SETUP_TIMEOUT
    return f"""Each of the two steps on the platform, the generation of your answers and the scoring
(which computes your perplexities), may take at most {EXECUTION_TIME_LIMIT} s (the phase's
`execution_time_limit`). Within a step the runner stops your code, and names the call, the dialogue
and the turn, when `setup_model_and_tokenizer` runs past {SETUP_TIMEOUT} s or one call of
`generate_text` or `get_ppl` runs past {TURN_TIMEOUT} s. These limits bound one call each, and the
step's limit bounds them all: the test data has {turns:,} turns, so after a setup of {SETUP_TIMEOUT} s
your code has {left} s for them, {_seconds(left / max(turns, 1))} s a turn on average (a faster setup
leaves more). A step that runs past {EXECUTION_TIME_LIMIT} s is ended by the platform ("Execution
Time Limit exceeded") and the submission is not scored. The scoring step may also call `get_ppl`
on some turns with the target's words in another order: the organizers' check that the
perplexities come from a language model, which counts for nothing in the score."""


def code_pages(image: str, turns: int, check: str) -> str:
    """The overview's part for a code competition whose data has ``turns`` turns: what to upload, the
    protocol, the time limits, how to run the runner locally and (``check``) how to run ``validate`` on
    the run's folder :data:`RUN_FOLDER`."""
    return f"""## What to upload (a code competition)

One `.zip` holding the package `team_code/` (a folder with `__init__.py`) at its root or in one
top-level folder. Its module `team_code/generate.py` defines three functions:

    setup_model_and_tokenizer() -> (model, tokenizer)
    generate_text(model, tokenizer, cur_query_list, history_list) -> str
    get_ppl(model, tokenizer, cur_query_tuple, history_list) -> float

The platform runs your code twice, each time in a fresh process with its own
`setup_model_and_tokenizer()`:

1. **Generation**, for each dialogue in order and each turn i: `generate_text(model, tokenizer, q_i,
   [(q_0, a_0), ..., (q_(i-1), a_(i-1))])`, where `q_i` is the turn's list of parts as in
   `dialogues.jsonl` (`{{"type": "text"|"image"|"audio", "content": ...}}`, media paths absolute) and
   `a_k` your own earlier answers. Return a `str` (a tuple counts by its first element).
2. **Perplexity**, after every answer is written: `get_ppl(model, tokenizer, (q_i, t_i),
   [(q_0, t_0), ..., (q_(i-1), t_(i-1))])`, where `t_k` is the turn's target answer. Return a real
   number, finite and at least 1 (an `int`, a `float` or a numpy scalar).

The images and audio files the dialogues name are in `public_data/` beside `dialogues.jsonl`, at the
paths the dialogues give.

A complete example is the starting kit's `team_code/generate.py`:

```python
{KIT_GENERATE.strip()}
```

## Time limits

{time_limits(turns)}

The code runs in the competition's image (`{image}`), so put your weights in your upload only if they
are small, and ask the organizers to add large ones to the image. An exception, a wrong value, a missing
function, a call past its limit or a process that dies stops the run, and the submission is not scored:
the scoring log names the phase, the function, the dialogue and the turn.

## Run your code locally first

    python3 starting_kit/runner.py --data public_data --code my_upload.zip --output my_run {TIMEOUT_OPTIONS}

The runner (`starting_kit/runner.py`: one file, Python 3.8 or newer, no dependencies) calls your
functions exactly as the platform does and names every fault; `--setup-timeout {SETUP_TIMEOUT}
--turn-timeout {TURN_TIMEOUT}` are the platform's limits (without them the runner allows 3,600 s and
600 s), `--resume` continues a run you stopped. Without the hidden answers its perplexities are of your
model's own answers.

Then check the files it wrote with the scorer's `validate`, as the platform will.

{check}
"""


#: The line a code competition's private config holds under ``[competition]`` (contract sections 7, 10).
CODE_SUBMISSIONS = 'submissions = "code"'
_COMPETITION_HEADER = re.compile(
    r"""^[ \t]*\[[ \t]*(?:competition|"competition"|'competition')[ \t]*\][ \t]*(?:#[^\n]*)?\r?$""",
    re.MULTILINE,
)


def code_config(config_bytes: bytes | None) -> bytes:
    """The private config a code competition's reference data carries: the organizer's own (``None``: the
    built-in default) with ``[competition] submissions = "code"``, so that ``codalab`` runs the team's
    ``get_ppl`` itself (contract section 10). The organizer's text is kept as it is, the line added to
    its ``[competition]`` table or in a new one at its end; a config that already says ``"code"`` is kept
    unchanged. One that says ``submissions = "files"`` contradicts ``--code``: a
    :class:`~scorer.errors.ConfigError` (exit 2), never a silent override."""
    if config_bytes is None:
        return f"[competition]\n{CODE_SUBMISSIONS}\n".encode()
    text = config_bytes.decode("utf-8")
    raw = tomllib.loads(text)
    table = raw.get("competition", {})
    given = table.get("submissions") if isinstance(table, Mapping) else None
    if given == "code":
        return config_bytes
    if given is not None:
        raise ConfigError(
            f"config key competition.submissions is {given!r}, but bundle --code makes a code competition: "
            'set it to "code" (or leave it out: the bundle adds it), or bundle without --code'
        )
    if "competition" not in raw:
        end = "\n" if text and not text.endswith("\n") else ""
        merged = f"{text}{end}\n[competition]\n{CODE_SUBMISSIONS}\n"
    else:
        header = _COMPETITION_HEADER.search(text)
        merged = (
            "" if header is None else text[: header.end()] + ("\n" + CODE_SUBMISSIONS) + text[header.end() :]
        )
    try:
        same = tomllib.loads(merged) == {**raw, "competition": {**table, "submissions": "code"}}
    except tomllib.TOMLDecodeError:
        same = False
    if not same:
        raise ConfigError(
            "config key competition.submissions: the configuration's [competition] table is not written "
            'as a [competition] header, so bundle --code cannot add submissions = "code" to it; add that '
            "line to the table yourself"
        )
    return merged.encode("utf-8")


_HIDDEN_HEADER = re.compile(r"^[ \t]*\[[ \t]*hidden_metric[ \t]*\][ \t]*(#[^\n]*)?$", re.MULTILINE)


def salted_config(config_bytes: bytes) -> bytes:
    """The private config with a random ``[hidden_metric] salt`` (contract section 7), so that the
    signature's ``hm`` field of the platform's runs is keyed; the organizer's text kept as it is, the line
    added under its ``[hidden_metric]`` header. A table written otherwise (inline, dotted keys) is a
    :class:`~scorer.errors.ConfigError` asking the organizer to add a salt themselves."""
    import secrets

    text = config_bytes.decode("utf-8")
    raw = tomllib.loads(text)
    salt = secrets.token_hex(16)
    header = _HIDDEN_HEADER.search(text)
    merged = "" if header is None else text[: header.end()] + f'\nsalt = "{salt}"' + text[header.end() :]
    try:
        same = tomllib.loads(merged) == {**raw, "hidden_metric": {**raw["hidden_metric"], "salt": salt}}
    except (tomllib.TOMLDecodeError, KeyError, TypeError):
        same = False
    if not same:
        raise ConfigError(
            "config key hidden_metric.salt: the private settings have no salt and the [hidden_metric] table "
            'is not written as a header, so bundle cannot add one; add salt = "<16 or more random '
            'characters>" to it yourself'
        )
    return merged.encode("utf-8")


def code_files(
    runner_source: bytes, dialogues_bytes: bytes, media: Mapping[str, bytes] | None = None
) -> dict[str, bytes]:
    """The files a code competition adds: the ingestion program, the input data (``dialogues.jsonl`` and
    ``media``, the files it names, by their path in the data folder), the starting kit's code (its README,
    :func:`kit_readme`, names the image and is written by the bundle)."""
    files = {
        f"{INGESTION_PROGRAM}/{RUNNER}": runner_source,
        f"{INGESTION_PROGRAM}/metadata.yaml": (
            f"command: {INGESTION_COMMAND}\n"
            'description: "Runs the team\'s team_code/generate.py on every dialogue (generation)"\n'
        ).encode(),
        f"{INPUT_DATA}/{DIALOGUES}": dialogues_bytes,
        f"{KIT_CODE}/__init__.py": b"",
        f"{KIT_CODE}/generate.py": KIT_GENERATE.encode("utf-8"),
        f"{KIT_CODE}/texts.txt": KIT_TEXTS.encode("utf-8"),
        f"starting_kit/{RUNNER}": runner_source,
    }
    files.update({f"{INPUT_DATA}/{name}": data for name, data in (media or {}).items()})
    return files
