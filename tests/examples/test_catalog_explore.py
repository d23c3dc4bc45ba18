"""explore and replay over a user's own catalog: the state machine's world operations are the
document's event types (`scenarios.catalog_ops`), so explore drives the world the README's
OpenAPI example describes, not the billing world.

The receiver written for the document survives a short search; its twin without dedupe is
found (`duplicated`, for the document's own key), the failing schedule names the user's
types, and `hookproof replay` reproduces it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.examples.test_catalog_receivers import ROOT, SECRETS, project


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookproof", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env={**os.environ, "COLUMNS": "200", "WEBHOOK_SECRET": SECRETS["generic-hmac"],
                                        "PYTHONPATH": str(ROOT)})


@pytest.mark.slow
@pytest.mark.parametrize("receiver", ["invoices", "invoices_no_dedupe"])
def test_explore_drives_the_documents_events(tmp_path: Path, receiver: str) -> None:
    config = project(tmp_path, receiver, "generic-hmac")
    found = run("explore", "--config", str(config), "--max-examples", "10", "--seed", "3", "--repeats", "2",
                "--out", str(tmp_path / "out"), cwd=tmp_path)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    findings = {f["check_id"] for s in report["scenarios"] for c in s["checks"] for f in c["findings"]}
    if receiver == "invoices":
        assert found.returncode == 0 and report["verdict"] == "pass", found.stdout + found.stderr
        return
    assert found.returncode == 1 and findings == {"duplicated"}, found.stdout + found.stderr
    schedule = json.loads((tmp_path / "out" / "failing-schedule.json").read_text())
    actions = {s["action"] for s in schedule["steps"] if s["op"] == "emit"}
    assert actions and actions <= {"invoice.created", "invoice.payment_failed", "invoice.paid", "refund.created",
                                   "customer.updated"}
    replayed = run("replay", str(tmp_path / "out" / "failing-schedule.json"), "--config", str(config), cwd=tmp_path)
    assert "finding: duplicated:" in replayed.stdout, replayed.stdout + replayed.stderr
