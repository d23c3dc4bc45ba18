"""Secrets never leave hookproof: not in any report, history, log line, message or JSON.

A real `certify` run against a failing receiver (`examples.receivers.no_dedupe`, started
by ``[target.start]``, so findings, timelines and every report format are exercised),
with a recognisable secret read from the environment; then every file of the report
directory and everything printed is searched for the secret in its literal, base64 and
hex forms (and for its key bytes, the part after ``whsec_``, and the bytes a Standard
Webhooks verifier decodes it to, as hex, base64, a bytes repr and a byte list), the receiver's
own kept log (``receiver.log``) included. Same for `hookproof send --json`.
"""

from __future__ import annotations

import base64
import json
import secrets as secrets_module
import sys
from pathlib import Path

import pytest
from standardwebhooks.webhooks import Webhook

from tests.hostile.harness import ROOT, CliRun, run_hookproof
from tests.hostile.servers import hostile_server
from tests.support import free_port

SECRET = "whsec_CANARY" + secrets_module.token_hex(12)


def printed(raw: bytes) -> list[bytes]:
    """How a program prints bytes `raw`: hex (both cases), base64 (standard, URL-safe), the
    inside of Python's bytes repr, a byte list."""
    return [base64.b64encode(raw).rstrip(b"="), base64.urlsafe_b64encode(raw).rstrip(b"="),
            raw.hex().encode(), raw.hex().upper().encode(), repr(raw)[2:-1].encode(),
            ", ".join(str(b) for b in raw).encode()]


def forms(secret: str) -> list[bytes]:
    """The byte strings that would betray `secret`: literal, key part after ``whsec_``, each
    printed (`printed`); for a ``whsec_`` secret also the key bytes the official Standard
    Webhooks verifier decodes it to, printed."""
    out: list[bytes] = []
    for text in (secret, secret.removeprefix("whsec_")):
        raw = text.encode()
        out += [raw, *printed(raw)]
    if secret.startswith("whsec_"):
        out += printed(Webhook(secret)._whsecret)
    return out


def leaks(data: bytes, secret: str = SECRET) -> list[bytes]:
    return [f for f in forms(secret) if f in data]


def test_forms_would_catch_a_leak() -> None:
    assert leaks(b"x " + base64.b64encode(SECRET.encode()) + b" y")
    assert leaks(SECRET.encode().hex().encode())
    assert leaks(repr(Webhook(SECRET)._whsecret).encode()) and leaks(Webhook(SECRET)._whsecret.hex().upper().encode())
    assert not leaks(b"nothing to see")


@pytest.fixture(scope="module")
def certify_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliRun, Path]:
    root = tmp_path_factory.mktemp("secrets")
    port = free_port()
    db = root / "receiver.sqlite"
    config = root / "hookproof.toml"
    config.write_text(f"""
[target]
url = "http://127.0.0.1:{port}/webhooks"
profile = "stripe"
secret = "env:HOOKPROOF_CANARY_SECRET"

[target.start]
cwd = "{ROOT}"
command = "{sys.executable} -m examples.receivers.no_dedupe --port {port} --db sqlite:///{db}"
health_url = "http://127.0.0.1:{port}/healthz"
startup_timeout_s = 30

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key, amount FROM effects"
state = "SELECT object_id, status, version FROM subscription_states"

[settle]
window_s = 0.3
deadline_s = 5

[run]
seed = 11
scenarios = ["duplicate-sequential", "forged-signature", "dropped-response", "reorder"]
""", encoding="utf-8")
    run = run_hookproof("certify", "--config", str(config), "--out", str(root / "out"), timeout_s=240,
                        env={"HOOKPROOF_CANARY_SECRET": SECRET})
    return run, root / "out"


@pytest.mark.slow
def test_certify_artifacts_and_output_never_hold_the_secret(certify_run) -> None:
    run, out = certify_run
    assert run.returncode == 1, run  # no_dedupe fails: the findings' paths are exercised
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert any(s["verdict"] == "fail" for s in report["scenarios"]), report["verdict"]
    files = sorted(p for p in out.rglob("*") if p.is_file())
    names = {p.name for p in files}
    assert {"report.json", "junit.xml", "summary.md", "report.html", "history.sqlite", "receiver.log"} <= names, names
    for path in files:
        assert not leaks(path.read_bytes()), f"{path.name} holds the secret"
    assert not leaks(run.stdout.encode()) and not leaks(run.stderr.encode()), run


@pytest.mark.slow
def test_send_json_never_holds_the_secret(tmp_path) -> None:
    with hostile_server("redirect-loop") as server:
        run = run_hookproof("send", "--url", server.url, "--secret", "env:HOOKPROOF_CANARY_SECRET", "--json",
                            "--copies", "2", "--sender-timeout", "0.5", timeout_s=60,
                            env={"HOOKPROOF_CANARY_SECRET": SECRET})
    assert run.returncode == 1 and json.loads(run.stdout), run
    assert not leaks(run.stdout.encode()) and not leaks(run.stderr.encode()), run
    literal = run_hookproof("send", "--url", "http://127.0.0.1:9/webhooks", "--secret", SECRET, "--json",
                            timeout_s=60)
    assert not leaks(literal.stdout.encode()) and not leaks(literal.stderr.encode()), literal
