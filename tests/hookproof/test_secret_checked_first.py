"""A secret the profile cannot sign with is a config error before anything starts.

A Standard Webhooks secret that is not ``whsec_`` + base64 used to reach certify's
deliveries: the receiver was started, then every scenario was ``ERROR delivery failed:
SecretError``, exit 1. Every command that signs reads the config through `load_config`,
which now asks the profile (`Profile.check_secrets`): one line naming target.secret, its
line and where the secret is read from (never the value), exit 2, no receiver started.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.config import load_config
from hookproof.errors import ConfigError
from tests.hostile.harness import run_hookproof

BAD = "not-a-whsec"

CONFIG = """\
[target]
url = "http://127.0.0.1:{{port}}/webhooks"
profile = "standard-webhooks"
secret = "env:TRIAL_SECRET"

[target.process]
command = "touch {marker} && sleep 30 {{port}}"
health_path = "/healthz"

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT 'k' AS business_key, NULL AS amount"
"""


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text(CONFIG.format(marker=tmp_path / "started", db=tmp_path / "x.db"), encoding="utf-8")
    return path


@pytest.mark.parametrize("argv", [("certify",), ("certify", "--chaos"), ("explore",), ("storm",)],
                         ids=["certify", "certify-chaos", "explore", "storm"])
def test_a_bad_standard_webhooks_secret_is_exit_2_before_anything_starts(tmp_path: Path, argv: tuple[str, ...]) -> None:
    config = _config(tmp_path)
    run = run_hookproof(*argv, "--config", str(config), timeout_s=60, env={"TRIAL_SECRET": BAD}, cwd=tmp_path)
    assert run.returncode == 2, (run.stdout, run.stderr)
    said = (run.stdout + run.stderr).strip()
    assert said.count("\n") == 0, said  # one line
    assert "hookproof.toml:4: target.secret" in said
    assert "whsec_ followed by base64" in said and "env:TRIAL_SECRET" in said
    assert BAD not in said
    assert not (tmp_path / "started").exists()  # the receiver was never started


def test_a_literal_bad_secret_is_named_as_a_literal_and_never_printed(tmp_path: Path) -> None:
    config = _config(tmp_path)
    config.write_text(config.read_text().replace('"env:TRIAL_SECRET"', '"whsec_!!not-base64!!"'))
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    assert caught.value.field == "target.secret" and "a literal in the file" in str(caught.value)
    assert "!!not-base64!!" not in str(caught.value)


def test_a_good_secret_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIAL_SECRET", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
    assert load_config(_config(tmp_path)).target.profile == "standard-webhooks"
