"""Contract section 6, the signature's ``ref:`` field: just before ``version:``, the first 12 hex digits of
the SHA-256 of ``dialogues.jsonl``'s bytes and of ``answers.jsonl``'s (an HMAC-SHA-256 keyed with the private
config's salt when there is one), joined by ``+``; ``private`` for the answers in ``codalab``'s outputs
without a salt; the canonical JSON Lines of the contract's fields for data in memory; and the ``signature``
command that prints it."""

import hashlib
import hmac
import json
import shutil

from helpers import EXAMPLES, PUBLIC, run_cli, score_into

from scorer import api
from scorer.inputs.reference import ReferenceData
from scorer.inputs.validation import Dialogue, Submission

SALT = "signature-ref-salt-0123456789"


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def keyed(path, salt=SALT):
    return hmac.new(salt.encode(), path.read_bytes(), hashlib.sha256).hexdigest()[:12]


def ref_of(signature):
    fields = signature.split("|")
    assert fields[-1].startswith("version:") and fields[-2].startswith("ref:")
    return fields[-2]


def test_score_writes_the_sha256_of_both_files_just_before_the_version(tmp_path, capsys):
    code, scores = score_into(tmp_path, EXAMPLES / "realistic", "--no-synonyms", out="o")
    assert code == 0
    signature = scores["signature"]
    assert ref_of(signature) == "ref:b997214227d1+066860b25b6d"
    assert ref_of(signature) == f"ref:{sha(PUBLIC / 'dialogues.jsonl')}+{sha(PUBLIC / 'answers.jsonl')}"


def test_a_corrected_answer_changes_the_field(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    before = ref_of(api.score_submission(data, EXAMPLES / "realistic", synonyms=False).signature)
    answers = (data / "answers.jsonl").read_text("utf-8").replace("Москва", "Москва.", 1)
    (data / "answers.jsonl").write_text(answers, encoding="utf-8")
    after = ref_of(api.score_submission(data, EXAMPLES / "realistic", synonyms=False).signature)
    assert before.split("+")[0] == after.split("+")[0] and before != after
    assert after == f"ref:{sha(data / 'dialogues.jsonl')}+{sha(data / 'answers.jsonl')}"


def with_config(tmp_path, text):
    root = tmp_path / "input"
    shutil.copytree(PUBLIC, root / "ref")
    (root / "ref" / "config.toml").write_text(text, encoding="utf-8")
    shutil.copytree(EXAMPLES / "realistic", root / "res")
    return root


def test_a_salt_keys_the_answers_digest_everywhere(tmp_path):
    root = with_config(tmp_path, f'[hidden_metric]\nsalt = "{SALT}"\n')
    expected = f"ref:{sha(root / 'ref' / 'dialogues.jsonl')}+{keyed(root / 'ref' / 'answers.jsonl')}"
    # by hand: `openssl dgst -sha256 -hmac "$SALT" reference_data/public/answers.jsonl` begins b9af177135e1
    assert expected == "ref:b997214227d1+b9af177135e1"
    assert run_cli("codalab", root, tmp_path / "out", "--quiet", "--jobs", "1", "--no-synonyms") == 0
    posted = json.loads((tmp_path / "out" / "scores.json").read_text("utf-8"))["signature"]
    organizer = api.score_submission(root / "ref", root / "res", synonyms=False).signature
    assert ref_of(posted) == ref_of(organizer) == expected


def test_codalab_without_a_salt_writes_private_for_the_answers(tmp_path):
    root = with_config(tmp_path, "")
    assert run_cli("codalab", root, tmp_path / "out", "--quiet", "--jobs", "1", "--no-synonyms") == 0
    posted = json.loads((tmp_path / "out" / "scores.json").read_text("utf-8"))["signature"]
    assert ref_of(posted) == "ref:b997214227d1+private"
    assert "066860b25b6d" not in (tmp_path / "out" / "detailed_results.html").read_text("utf-8")


def test_data_in_memory_is_digested_as_canonical_json_lines():
    reference = ReferenceData([Dialogue("d-1", "Text2Text", 1)], {"d-1": [["Кот.", "Рыжий кот"]]})
    submission = Submission({"d-1": ["кот"]}, {"d-1": [2.0]})
    config = api.RunOptions(synonyms=False).settled_config()
    result = api.score_validated(reference, submission, config, None)
    public = b'{"dialog_id":"d-1","turns":1,"type":"Text2Text"}\n'
    private = '{"dialog_id":"d-1","references":[["Кот.","Рыжий кот"]]}\n'.encode()
    digests = [hashlib.sha256(b).hexdigest()[:12] for b in (public, private)]
    assert ref_of(result.signature) == f"ref:{digests[0]}+{digests[1]}"


def test_the_signature_command_prints_what_score_writes(tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(PUBLIC, data)
    (data / "config.toml").write_text(f'[hidden_metric]\nsalt = "{SALT}"\n', encoding="utf-8")
    assert run_cli("signature", "--data", data, "--no-synonyms") == 0
    printed = capsys.readouterr().out.strip()
    assert ref_of(printed) == f"ref:b997214227d1+{keyed(data / 'answers.jsonl')}"
    assert printed == api.score_submission(data, EXAMPLES / "realistic", synonyms=False).signature
    assert run_cli("signature", "--data", PUBLIC, "--no-synonyms", "--participant") == 0
    assert ref_of(capsys.readouterr().out.strip()) == "ref:b997214227d1+private"
