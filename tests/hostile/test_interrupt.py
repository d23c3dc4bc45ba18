"""Interrupting a real `certify` run (SIGINT, then SIGTERM): everything it started is stopped,
the history on disk is complete up to the interruption and readable, a partial report is
written and says so (a note naming the signal, the scenarios not finished unknown), and `hookproof report --history` re-renders it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hookproof.simulator.delivery import load_history
from tests.hostile.harness import ROOT, empty_effects_db, history_attempts, run_hookproof
from tests.support import free_port

SCENARIOS = ["duplicate-sequential", "dropped-response", "reorder", "mass-redelivery", "distinct-events-same-object"]


def _config(root: Path) -> tuple[Path, Path]:
    port = free_port()
    pidfile = root / "receiver.pid"
    db = empty_effects_db(root / "observed.sqlite")
    config = root / "hookproof.toml"
    config.write_text(f"""
[target]
url = "http://127.0.0.1:{port}/webhooks"
profile = "stripe"
secret = "whsec_interrupt_test"

[target.start]
cwd = "{ROOT}"
command = "{sys.executable} -m tests.hostile.slow_receiver --port {port} --delay 0.2 --pidfile {pidfile}"
port = {port}

[observer]
kind = "sql"
url = "{db}"
effects = "SELECT business_key, amount FROM effects"

[settle]
window_s = 0.2
deadline_s = 2

[run]
seed = 3
scenarios = {json.dumps(SCENARIOS)}
""", encoding="utf-8")
    return config, pidfile


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_leaves_a_readable_history_and_a_partial_report(tmp_path, sig: signal.Signals) -> None:
    config, pidfile = _config(tmp_path)
    out = tmp_path / "out"
    history_file = out / "history.sqlite"

    def interrupt(proc: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and history_attempts(history_file) < 20:  # mid-run
            time.sleep(0.05)
        os.kill(proc.pid, sig)

    run = run_hookproof("certify", "--config", str(config), "--out", str(out), timeout_s=120, during=interrupt)
    assert not run.killed, run
    assert run.returncode == 128 + sig, run
    assert "Traceback" not in run.stdout + run.stderr, run
    assert "partial run" in run.stdout, run

    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), "the receiver hookproof started is still running"

    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] is True
    # every scenario is listed; those the signal cut short or kept from starting are unknown, saying why
    assert [s["id"] for s in report["scenarios"]] == SCENARIOS
    unfinished = [s["id"] for s in report["scenarios"]  # the one cut short adds what its attempts came to
                  if (s["reason"] or "").startswith(f"not finished: the run was stopped by {sig.name}")]
    assert unfinished and all(s["verdict"] == "unknown" for s in report["scenarios"] if s["id"] in unfinished)
    assert report["notes"] == [f"stopped by {sig.name}; the {len(unfinished)} scenario(s) not finished by then are "
                               f"unknown ({', '.join(unfinished)})"]
    assert "partial run" in (out / "summary.md").read_text(encoding="utf-8")
    assert not (out / "history.sqlite-wal").exists() or (out / "history.sqlite-wal").stat().st_size == 0
    history = load_history(history_file)
    try:
        attempts = history.attempts()
        meta = history.meta()
    finally:
        history.close()
    assert len(attempts) >= 20
    assert meta["finished"] is False and meta["report"]["partial"] is True
    reported = sum(len(s["attempts"]) for s in report["scenarios"])
    assert reported <= len(attempts)

    again = run_hookproof("report", "--history", str(history_file), "--out", str(tmp_path / "again"), timeout_s=60)
    assert again.returncode == 0 and "partial run" in again.stdout, again
    rerendered = json.loads((tmp_path / "again" / "report.json").read_text(encoding="utf-8"))
    assert rerendered["partial"] is True
    assert [s["id"] for s in rerendered["scenarios"]] == [s["id"] for s in report["scenarios"]]
