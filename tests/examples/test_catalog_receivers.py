"""A user's own events end to end: the README's OpenAPI example certifies a receiver written for it.

`examples/openapi/hookproof.toml` (shown in the README, "Your own events") names
`examples/openapi/webhooks.yaml` as its catalog and starts
`examples.receivers.catalog.invoices`, written from that document alone. Under the
generic-hmac and the standard-webhooks profiles (the user's names in both) it passes the
whole catalog with zero findings, and its twin without dedupe fails `duplicated` for the
document's own business keys. `hookproof events --config` lists the document's types and
`hookproof send --config --event <type>` delivers one.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT
from tests.support import free_port

ROOT = PROJECT_ROOT
EXAMPLE = ROOT / "examples" / "openapi"
README = (ROOT / "README.md").read_text(encoding="utf-8")
TYPES = ["invoice.created", "invoice.payment_failed", "invoice.paid", "refund.created", "customer.updated"]
SECRETS = {"generic-hmac": "s3cret-acme-billing", "standard-webhooks": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
#: Scenarios that must run (not be "not applicable") over the catalog, under both profiles.
MUST_RUN = {"duplicate-sequential", "duplicate-concurrent", "sender-timeout", "dropped-response", "reorder",
            "stale-after-newer", "distinct-events-same-object", "reserialized-retry", "forged-signature",
            "unknown-event-type", "mass-redelivery", "mass-redelivery-window"}


def readme_config() -> str:
    """The README's ``examples/openapi/hookproof.toml`` block."""
    (block,) = re.findall(r"```toml examples/openapi/hookproof\.toml\n(.*?)```", README, flags=re.S)
    return block


def test_the_readme_shows_the_example_config_and_document() -> None:
    assert readme_config() == (EXAMPLE / "hookproof.toml").read_text(encoding="utf-8")
    (excerpt,) = re.findall(r"```yaml examples/openapi/webhooks\.yaml\n(.*?)```", README, flags=re.S)
    document = (EXAMPLE / "webhooks.yaml").read_text(encoding="utf-8")
    assert excerpt.strip() in document


def project(tmp_path: Path, receiver: str, profile: str) -> Path:
    """The README's config in `tmp_path` beside a copy of the document, on a free port,
    starting `receiver` under `profile`."""
    port = str(free_port())
    text = (readme_config().replace("8766", port).replace('"python ', f'"{sys.executable} ')
            .replace('PYTHONPATH = "../.."', f'PYTHONPATH = "{ROOT}", SCHEME = "{profile}"')
            .replace("catalog.invoices", f"catalog.{receiver}")
            .replace('profile = "generic-hmac"', f'profile = "{profile}"'))
    (tmp_path / "webhooks.yaml").write_text((EXAMPLE / "webhooks.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "hookproof.toml").write_text(text, encoding="utf-8")
    return tmp_path / "hookproof.toml"


def run_certify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: str, profile: str,
                scenarios: list[str] | None = None) -> object:
    from hookproof.certify import certify
    from hookproof.config import load_config

    monkeypatch.setenv("WEBHOOK_SECRET", SECRETS[profile])
    config = load_config(project(tmp_path, receiver, profile))
    return certify(config, scenarios=scenarios, out_dir=tmp_path / "out").report


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["generic-hmac", "standard-webhooks"])
def test_the_receiver_written_for_the_document_passes_the_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  profile: str) -> None:
    report = run_certify(tmp_path, monkeypatch, "invoices", profile)
    assert report.verdict == "pass", [(s.id, s.verdict, s.reason, [f.message for f in s.findings])  # type: ignore[attr-defined]
                                      for s in report.scenarios]  # type: ignore[attr-defined]
    assert [f for s in report.scenarios for f in s.findings] == []  # type: ignore[attr-defined]
    ran = {s.id for s in report.scenarios if s.verdict != "not_applicable"}  # type: ignore[attr-defined]
    assert MUST_RUN <= ran, MUST_RUN - ran
    checks = {(s.id, c.check_id): c for s in report.scenarios for c in s.checks}  # type: ignore[attr-defined]
    assert checks[("reorder", "stale")].stats["objects"] == 1  # the invoice's states were compared, not vacuous
    if profile == "standard-webhooks":  # its verifier checks timestamps both ways
        assert {"stale-timestamp", "future-timestamp", "secret-rotation"} <= ran
    # a checklist line none of whose scenarios applied is named, with them (the report alone said
    # "untested"); the crash line has its own note
    untested = {i.title: [s.id for s in report.scenarios if i.id in s.checklist]  # type: ignore[attr-defined]
                for i in report.checklist if i.verdict == "untested"}  # type: ignore[attr-defined]
    said = [n for n in report.notes if n.startswith("checklist item(s) untested by this run")]  # type: ignore[attr-defined]
    named = {t: ids for t, ids in untested.items() if t != "Persists before acknowledging"}
    assert all(named.values()), named  # each names the scenarios that would have tested it
    assert len(said) == (1 if named else 0), (untested, report.notes)  # type: ignore[attr-defined]
    assert all(f"{title} ({', '.join(ids)})" in said[0] for title, ids in named.items()), (said, named)


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["generic-hmac", "standard-webhooks"])
def test_the_twin_without_dedupe_fails_duplicated_for_the_documents_keys(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: str) -> None:
    report = run_certify(tmp_path, monkeypatch, "invoices_no_dedupe", profile,
                         ["duplicate-sequential", "reorder", "distinct-events-same-object"])
    failed = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios  # type: ignore[attr-defined]
              if s.verdict != "pass"}
    assert failed == {"duplicate-sequential": ["duplicated"]}
    keys = {f.key.split(":")[0] for s in report.scenarios for f in s.findings}  # type: ignore[attr-defined]
    assert keys == {"dunning", "fulfil", "refund"}


def hookproof(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookproof", *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, "COLUMNS": "200", **(env or {})})


def test_events_and_send_speak_the_documents_types(tmp_path: Path) -> None:
    config = project(tmp_path, "invoices", "generic-hmac")
    secret = {"WEBHOOK_SECRET": SECRETS["generic-hmac"]}
    listed = hookproof("events", "--profile", "generic-hmac", "--config", str(config), env=secret)
    assert listed.returncode == 0 and listed.stdout.split() == TYPES, listed.stderr
    by_config = hookproof("events", "--config", str(config), env=secret)  # the config's profile
    assert by_config.stdout.split() == TYPES, by_config.stderr
    port = free_port()
    db = tmp_path / "invoices.sqlite"
    proc = subprocess.Popen([sys.executable, "-m", "examples.receivers.catalog.invoices"], cwd=ROOT,
                            env={"PATH": os.environ["PATH"], "PORT": str(port), "DATABASE": str(db),
                                 "WEBHOOK_SECRET": SECRETS["generic-hmac"]},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and "listening on" in proc.stdout.readline()
        sent = hookproof("send", "--profile", "generic-hmac", "--config", str(config), "--event", "invoice.paid",
                         "--url", f"http://127.0.0.1:{port}/webhooks", "--secret", SECRETS["generic-hmac"],
                         "--copies", "2", "--seed", "5", "--json", env=secret)
        unknown = hookproof("send", "--profile", "generic-hmac", "--config", str(config), "--event",
                            "payment_intent.succeeded", "--url", f"http://127.0.0.1:{port}/webhooks",
                            "--secret", "x", env=secret)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert sent.returncode == 0, sent.stderr
    assert [(a["event_type"], a["status"]) for a in json.loads(sent.stdout)] == [("invoice.paid", 200)] * 2
    with sqlite3.connect(db) as conn:
        effects = [k for (k,) in conn.execute("SELECT business_key FROM effects")]
        states = list(conn.execute("SELECT status FROM invoices"))
    assert len(effects) == 1 and effects[0].startswith("fulfil:in_") and states == [("paid",)]
    assert unknown.returncode == 2 and "sends no event 'payment_intent.succeeded'" in unknown.stderr
    assert "known: customer.updated, invoice.created" in unknown.stderr
    assert "[catalog]" not in unknown.stderr  # it has one: its own types are what it names
