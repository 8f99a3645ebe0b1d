"""contract section 7: defaults, overrides, and every configuration error naming its key."""

import pytest

from scorer.errors import ConfigError
from scorer.inputs.config import load_config


def test_defaults_match_the_spec():
    c = load_config()
    assert dict(c.weights) == {
        "Text2Text": 0.1,
        "Image2Text": 0.2,
        "Audio2Text": 0.3,
        "Image-Audio2Text": 0.4,
    }
    assert (c.meteor.alpha, c.meteor.beta, c.meteor.gamma) == (0.9, 3.0, 0.0)
    assert c.meteor.stages == ("exact", "lemma", "synonym")
    assert (c.hidden_metric.method, dict(c.hidden_metric.params)) == ("inverse", {})
    assert (c.limits.max_file_mib, c.limits.max_answer_chars, c.limits.max_json_depth) == (256, 20000, 64)


def test_file_overrides_only_its_keys(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(
        '[weights]\nText2Text = 1\n[hidden_metric]\nmethod = "log"\np_max = 50\n'
        '[meteor]\ngamma = 0.5\nstages = ["exact"]\n',
        encoding="utf-8",
    )
    c = load_config(path)
    assert c.weights["Text2Text"] == 1.0 and c.weights["Image2Text"] == 0.2
    assert (c.hidden_metric.method, dict(c.hidden_metric.params)) == ("log", {"p_max": 50.0})
    assert c.meteor.gamma == 0.5 and c.meteor.stages == ("exact",) and c.meteor.alpha == 0.9


@pytest.mark.parametrize(
    "text, key",
    [
        ("[colours]\nred = 1\n", "colours"),
        ("[weights]\nVideo2Text = 0.5\n", "weights.Video2Text"),
        ("[weights]\nText2Text = -0.1\n", "weights.Text2Text"),
        ("[weights]\nText2Text = true\n", "weights.Text2Text"),
        ("[meteor]\nalpha = 1.5\n", "meteor.alpha"),
        ("[meteor]\nalpha = -0.1\n", "meteor.alpha"),
        ("[meteor]\ngamma = 2\n", "meteor.gamma"),
        ('[meteor]\nstages = ["exact", "stem"]\n', "meteor.stages"),
        ("[meteor]\nstages = []\n", "meteor.stages"),
        ('[meteor]\nstages = ["exact", "exact"]\n', "meteor.stages"),
        ("[meteor]\ndelta = 1\n", "meteor.delta"),
        ('[hidden_metric]\nmethod = "sqrt"\n', "hidden_metric.method"),
        ('[hidden_metric]\nmethod = "log"\np_max = 1\n', "hidden_metric.p_max"),
        ("[limits]\nmax_file_mib = 0\n", "limits.max_file_mib"),
        ("weights = 3\n", "weights"),
        ('[competition]\nsubmissions = "zip"\n', "competition.submissions"),
        ("[competition]\nsubmissions = 1\n", "competition.submissions"),
        ('[competition]\nkind = "code"\n', "competition.kind"),
        ('[hidden_metric]\nsalt = "fifteen-chars.."\n', "hidden_metric.salt"),
        ("[hidden_metric]\nsalt = 12345678901234567890\n", "hidden_metric.salt"),
        ('[hidden_metric]\nsalt = ["a-list-is-no-salt-at-all"]\n', "hidden_metric.salt"),
    ],
)
def test_config_errors_name_the_key(tmp_path, text, key):
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert key in str(info.value)
    assert info.value.exit_code == 2


def test_unreadable_or_invalid_toml(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.toml")
    (tmp_path / "bad.toml").write_text("[weights\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(tmp_path / "bad.toml")


@pytest.mark.parametrize(
    "text, message",
    [
        ("confident_ppl = 0.9", "audit.confident_ppl must be at least 1, got 0.9"),
        ('confident_ppl = "1.2"', "audit.confident_ppl must be a finite number, got '1.2'"),
        ("confident_meteor = 1.5", "audit.confident_meteor must be at most 1, got 1.5"),
        ("max_share_overconfident = -0.1", "audit.max_share_overconfident must be at least 0, got -0.1"),
        ("probe_turns = -1", "audit.probe_turns must be a whole number >= 0, got -1"),
        ("probe_turns = 2.5", "audit.probe_turns must be a whole number >= 0, got 2.5"),
        ("probe_turns = true", "audit.probe_turns must be a whole number >= 0, got True"),
        ("probe_turns = 100000000", "audit.probe_turns must be at most 10,000,000, got 100000000"),
        ("probe_min_words = 1", "audit.probe_min_words must be a whole number >= 2, got 1"),
    ],
)
def test_the_new_audit_keys_are_checked(tmp_path, text, message):
    path = tmp_path / "c.toml"
    path.write_text(f"[audit]\n{text}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"config key {message}" and info.value.exit_code == 2


def test_the_audit_and_competition_keys(tmp_path):
    c = load_config()
    a = c.audit
    assert (a.confident_ppl, a.confident_meteor, a.max_share_overconfident) == (1.2, 0.5, 0.2)
    assert (a.probe_turns, a.probe_min_words) == (100, 5)
    assert c.competition.submissions == "files"
    path = tmp_path / "c.toml"
    path.write_text(
        '[competition]\nsubmissions = "code"\n[audit]\nconfident_ppl = 1\nprobe_turns = 0\n', encoding="utf-8"
    )
    changed = load_config(path)
    assert changed.competition.submissions == "code" and changed.audit.confident_ppl == 1.0
    assert changed.audit.probe_turns == 0 and changed.audit.is_private  # [audit] changed: private
    path.write_text('[competition]\nsubmissions = "code"\n', encoding="utf-8")
    code = load_config(path)
    assert not code.audit.is_private and not code.hidden_metric.is_private  # [competition] is public


def test_a_wrong_kind_of_submissions_names_both_kinds(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[competition]\nsubmissions = "zip"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == 'config key competition.submissions must be "files" or "code", got \'zip\''


def test_the_kind_of_submissions_changes_no_signature(tmp_path, matcher):
    from scorer.scoring.competition import Competition

    path = tmp_path / "c.toml"
    path.write_text('[competition]\nsubmissions = "code"\n', encoding="utf-8")
    assert (
        Competition.of(load_config(path), matcher).signature()
        == Competition.of(load_config(), matcher).signature()
    )


SALT = "the-organizers-secret-0f3e"


def test_private_settings_are_signed_with_an_hmac_keyed_with_the_salt(tmp_path, matcher):
    """contract section 7: ``hm:private-`` and the first 12 hex digits of the HMAC-SHA-256 of the settings'
    canonical JSON (sorted keys, no spaces, floats as Python's repr, the salt left out), keyed with the
    salt; no salt gives ``hm:private`` alone; the built-in default keeps ``hm:inverse``, salt or not."""
    import hashlib
    import hmac

    from scorer.scoring.competition import Competition

    def hm_field(text):
        path = tmp_path / "c.toml"
        path.write_text(text, encoding="utf-8")
        config = load_config(path)
        fields = dict(f.split(":", 1) for f in Competition.of(config, matcher).signature().split("|"))
        return fields["hm"], config

    canonical = b'{"method":"log","p_max":100.0}'
    expected = hmac.new(SALT.encode("utf-8"), canonical, hashlib.sha256).hexdigest()[:12]
    field, config = hm_field(f'[hidden_metric]\nmethod = "log"\np_max = 100\nsalt = "{SALT}"\n')
    assert field == f"private-{expected}" and not config.hidden_metric.unsalted
    assert expected != hashlib.sha256(canonical).hexdigest()[:12]  # not the digest anyone can recompute
    assert SALT not in repr(config) and SALT not in repr(Competition.of(config, matcher))
    other, _ = hm_field(f'[hidden_metric]\nmethod = "log"\np_max = 100\nsalt = "{SALT[::-1]}"\n')
    assert other.startswith("private-") and other != field  # another salt, another field
    unsalted, config = hm_field('[hidden_metric]\nmethod = "log"\np_max = 100\n')
    assert unsalted == "private" and config.hidden_metric.unsalted and config.hidden_metric.is_private
    public, config = hm_field(f'[hidden_metric]\nmethod = "inverse"\nsalt = "{SALT}"\n')
    assert public == "inverse" and not config.hidden_metric.is_private and not config.hidden_metric.unsalted
    assert not load_config().hidden_metric.unsalted


def test_a_salt_error_never_quotes_the_salt(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[hidden_metric]\nsalt = "not-16-chars"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (
        "config key hidden_metric.salt must be a string of at least 16 characters, got 12 characters"
    )
