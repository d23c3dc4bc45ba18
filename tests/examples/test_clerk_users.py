"""A user sync over a team's own catalog (`tests/fixtures/clerk/webhooks.yaml`, Clerk-like,
profile svix) end to end: the receiver written for it passes certify and explore, the user's
first name declared as a state field (a deleted user's is not compared: the deletion's stub
does not carry it, and a receiver that learned of the deletion first never knew it); its twin
writing users in arrival order is found by certify (its state stories update one user twice
and leave it active, where the name is compared, before another user is deleted) and by
explore, which sends a user's updates again and again and delivers them out of order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
FIXTURE = PROJECT_ROOT / "tests" / "fixtures" / "clerk" / "webhooks.yaml"


def project(tmp_path: Path, arrival: bool) -> Path:
    db = tmp_path / "users.sqlite"
    (tmp_path / "webhooks.yaml").write_text(FIXTURE.read_text(encoding="utf-8"), encoding="utf-8")
    config = tmp_path / "hookproof.toml"
    config.write_text(f"""builtin_keys = false

[target]
url = "http://127.0.0.1:{{port}}/webhooks"
profile = "svix"
secret = "{SECRET}"

[target.process]
command = "{sys.executable} -m tests.examples.clerk_users"
env = {{ PORT = "{{port}}", DATABASE = "{db}", WEBHOOK_SECRET = "{{secret}}", ARRIVAL = "{int(arrival)}", PYTHONPATH = "{PROJECT_ROOT}" }}

[catalog]
openapi = "webhooks.yaml"

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key FROM emails"

[observer.states]
user = "SELECT id AS object_id, CASE WHEN deleted = 1 THEN 'deleted' ELSE 'active' END AS status, first_name FROM users"

[observer.state_fields]
user = {{ first_name = "data.first_name" }}

[run]
seed = 4
""", encoding="utf-8")
    return config


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookproof", *args], capture_output=True, text=True, timeout=400,
                          cwd=cwd, env={**os.environ, "COLUMNS": "200"})


def findings(report: Path) -> set[str]:
    doc = json.loads(report.read_text(encoding="utf-8"))
    return {f["check_id"] for s in doc["scenarios"] for c in s["checks"] for f in c["findings"]}


@pytest.mark.slow
@pytest.mark.parametrize("arrival", [False, True])
def test_certify_and_explore_judge_a_user_sync_by_its_declared_field(tmp_path: Path, arrival: bool) -> None:
    config = project(tmp_path, arrival)
    certify = run("certify", "-c", str(config), "reorder", "stale-after-newer", "distinct-updates-same-object",
                  "duplicate-sequential", "--out", str(tmp_path / "c"), cwd=tmp_path)
    explore = run("explore", "-c", str(config), "--max-examples", "60", "--seed", "5", "--out", str(tmp_path / "e"),
                  cwd=tmp_path)
    assert "Traceback" not in certify.stderr + explore.stderr, certify.stderr + explore.stderr
    if not arrival:
        assert certify.returncode == 0, certify.stdout + certify.stderr
        assert explore.returncode == 0, explore.stdout + explore.stderr
        return
    assert certify.returncode == 1, certify.stdout + certify.stderr
    assert findings(tmp_path / "c" / "report.json") == {"stale", "regressed"}, certify.stdout
    assert explore.returncode == 1, explore.stdout + explore.stderr
    assert findings(tmp_path / "e" / "report.json") & {"stale", "regressed"}, explore.stdout
