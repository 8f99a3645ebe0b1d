"""What ``bundle --code`` adds to a competition bundle (contract section 10): a code competition.

The participant uploads a zip holding ``team_code/``; Codabench's prediction step runs the ingestion
program (the standard-library runner, :mod:`scorer.runner`, with its ``metadata.yaml``) on
``input_data`` (``dialogues.jsonl`` and the media it names, never ``answers.jsonl``): ``--phase generate``
writes ``submission.jsonl`` and copies ``team_code/`` beside it; the scoring step (``codalab``) then runs
the ``ppl`` phase on that copy with the reference answers, and scores. The starting kit holds a complete
working ``team_code/`` in plain Python: a smoothed word-bigram model over the texts it ships, which
answers with its closest known text and whose perplexities are real.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from scorer.errors import UsageError

INGESTION_PROGRAM, INPUT_DATA = "ingestion_program", "input_data"
RUNNER = "runner.py"
INGESTION_COMMAND = (
    f"python3 /app/program/{RUNNER} --data /app/input_data --code /app/ingested_program --output /app/output "
    "--phase generate --keep-code"
)
KIT_CODE = "starting_kit/team_code"

#: The starting kit's model: plain Python, its texts beside it.
KIT_GENERATE = '''"""A small working model for the competition's protocol: a word-bigram model with add-one
smoothing over the texts in texts.txt. It answers with the known text closest to the question (most
shared words) and gives real perplexities of the target text."""

import math
import os
import re

WORD = re.compile(r"\\w+")


def _words(text):
    return WORD.findall(text.lower().replace("ё", "е"))


def _text_of(parts):
    return " ".join(p["content"] for p in parts if p["type"] == "text")


def setup_model_and_tokenizer():
    """Read texts.txt (one text a line) and count its words and word pairs."""
    folder = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(folder, "texts.txt"), encoding="utf-8") as fh:
        texts = [line.strip() for line in fh if line.strip()]
    unigrams, bigrams = {}, {}
    for text in texts:
        words = ["<s>"] + _words(text)
        for a, b in zip(words, words[1:]):
            unigrams[a] = unigrams.get(a, 0) + 1
            bigrams[(a, b)] = bigrams.get((a, b), 0) + 1
    model = {"texts": texts, "unigrams": unigrams, "bigrams": bigrams, "vocabulary": len(unigrams) + 1}
    return model, _words


def generate_text(model, tokenizer, cur_query_list, history_list):
    """The known text sharing the most words with the question (and the dialogue so far)."""
    asked = set(tokenizer(_text_of(cur_query_list)))
    for query, _answer in history_list[-1:]:
        asked |= set(tokenizer(_text_of(query)))
    return max(model["texts"], key=lambda text: (len(asked & set(tokenizer(text))), -len(text)))


def get_ppl(model, tokenizer, cur_query_tuple, history_list):
    """exp of the mean negative log-probability of the target's words under the smoothed bigram model."""
    _query, target = cur_query_tuple
    words = ["<s>"] + tokenizer(target)
    if len(words) < 2:
        return 1.0
    unigrams, bigrams, size = model["unigrams"], model["bigrams"], model["vocabulary"]
    total = 0.0
    for a, b in zip(words, words[1:]):
        p = (bigrams.get((a, b), 0) + 1) / (unigrams.get(a, 0) + size)
        total -= math.log(p)
    return math.exp(total / (len(words) - 1))
'''

#: The texts the starting kit's model knows (everyday Russian, written for it).
KIT_TEXTS = """Столица России — Москва.
В Москве живёт около тринадцати миллионов человек.
Доброе утро! Как у вас дела?
Два плюс два равно четырём.
На картинке кот, он сидит на окне.
Кот рыжий и очень пушистый.
Сегодня тёплая солнечная погода.
На улице прохладно, около десяти градусов.
Я слышу шум дождя и раскаты грома.
На записи играет спокойная музыка.
Почитайте роман «Мастер и Маргарита» Булгакова.
Это собака породы лабрадор.
На фотографии изображён горный пейзаж.
В кадре двое людей разговаривают за столом.
Голос на записи говорит по-английски.
Чтобы приготовить чай, вскипятите воду и заварите листья.
Поезд отправляется в восемь часов утра.
Красная площадь находится в центре Москвы.
Я не уверен, но, кажется, это птица.
Спасибо, рад помочь!
"""

KIT_README = """# Starting kit (code competition)

`team_code/` is a complete, working upload: a word-bigram model over `team_code/texts.txt`
(plain Python, no dependencies). Replace its `generate.py` with your model's, keeping the three
functions.

Run it locally as the platform will, with the scorer's runner (`runner.py` here: one file, Python 3.8 or
newer, nothing to install), from the folder that holds `public_data/` and `starting_kit/`:

    python3 starting_kit/runner.py --data public_data --code starting_kit --output my_run

then check the files it wrote (the perplexities are of the model's own answers: the targets are hidden):

    python -m scorer validate --data public_data --submission my_run

Upload a zip holding the `team_code/` folder at its root:

    cd starting_kit && zip -r ../my_upload.zip team_code
"""


def code_pages(image: str, setup_timeout: float, turn_timeout: float) -> str:
    """The overview's part for a code competition: what to upload, the protocol, the time limits, how to
    run the runner locally."""
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

A complete example is the starting kit's `team_code/generate.py`:

```python
{KIT_GENERATE.strip()}
```

Time limits: `setup_model_and_tokenizer` {setup_timeout:g} s, each call {turn_timeout:g} s; the code runs in
the competition's image (`{image}`), so put your weights in your upload only if they are small, and ask the
organizers to add large ones to the image. An exception, a wrong value, a missing function, a call past
its limit or a process that dies stops the run, and the submission is not scored: the scoring log names
the phase, the function, the dialogue and the turn.

## Run your code locally first

    python3 starting_kit/runner.py --data public_data --code my_upload.zip --output my_run
    python -m scorer validate --data public_data --submission my_run

The runner (`starting_kit/runner.py`: one file, Python 3.8 or newer, no dependencies) calls your
functions exactly as the platform does and names every fault; `--turn-timeout` and `--setup-timeout`
set the limits, `--resume` continues a run you stopped. Without the hidden answers its perplexities are
of your model's own answers.
"""


def media_files(data_dir: Path, dialogues_bytes: bytes) -> dict[str, bytes]:
    """The image and audio files ``dialogues.jsonl`` names that are regular files inside ``data_dir``
    (never a reference file, never through a symbolic link), by their path in it; a name that leaves the
    folder, or a link on the way, is a UsageError naming it."""
    found: dict[str, bytes] = {}
    for name in sorted(set(_named_media(dialogues_bytes))):
        parts = Path(os.path.normpath(name)).parts
        if not parts or ".." in parts or parts[0] in ("answers.jsonl", "config.toml", "dialogues.jsonl"):
            raise UsageError(
                f"{data_dir}: dialogues.jsonl names {name!r}, which is not a media file inside it"
            )
        for depth in range(1, len(parts) + 1):
            place = data_dir.joinpath(*parts[:depth])
            if place.is_symlink():
                raise UsageError(f"{place}: a symbolic link; the bundle publishes regular files only")
        candidate = data_dir.joinpath(*parts)
        if candidate.is_file():
            found["/".join(parts)] = candidate.read_bytes()
    return found


def _named_media(dialogues_bytes: bytes) -> Iterable[str]:
    for line in dialogues_bytes.decode("utf-8").split("\n"):
        if line.strip():
            for turn in json.loads(line)["turns"]:
                for part in turn:
                    if part["type"] in ("image", "audio") and not os.path.isabs(part["content"]):
                        yield part["content"]


def code_files(runner_source: bytes, dialogues_bytes: bytes, media: dict[str, bytes]) -> dict[str, bytes]:
    """The files a code competition adds: the ingestion program, the input data, the starting kit's code."""
    files = {
        f"{INGESTION_PROGRAM}/{RUNNER}": runner_source,
        f"{INGESTION_PROGRAM}/metadata.yaml": (
            f"command: {INGESTION_COMMAND}\n"
            'description: "Runs the team\'s team_code/generate.py on every dialogue (generation)"\n'
        ).encode(),
        f"{INPUT_DATA}/dialogues.jsonl": dialogues_bytes,
        f"{KIT_CODE}/__init__.py": b"",
        f"{KIT_CODE}/generate.py": KIT_GENERATE.encode("utf-8"),
        f"{KIT_CODE}/texts.txt": KIT_TEXTS.encode("utf-8"),
        "starting_kit/README.md": KIT_README.encode("utf-8"),
        f"starting_kit/{RUNNER}": runner_source,
    }
    files.update({f"{INPUT_DATA}/{name}": data for name, data in media.items()})
    return files
