"""A distributed storm that loses a worker tells the truth: a master and two real
`hookproof storm-worker` processes on 127.0.0.1, one of them stopped mid-storm.

- SIGTERM (Ctrl-C on a worker's machine): the worker hands its last records and its
  closing message over before it exits; the run stays complete and a correct receiver passes.
- SIGKILL of the `storm-worker` alone: its Locust child gets SIGTERM as its parent dies
  (``PR_SET_PDEATHSIG``), hands over and exits; the run stays complete.
- SIGKILL of the `storm-worker` and its Locust child: the run is partial and UNKNOWN, naming
  the worker; no finding that the missing records could explain fails a correct receiver,
  and a receiver without dedupe still fails on ``duplicated`` (a key applied twice is wrong
  whatever went unrecorded).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from hookproof.simulator.delivery.history import load_history
from tests.loadtests.test_storm_cluster import SECRET, _config, _process, _wait_healthy
from tests.support import free_port

#: Long enough to stop a worker well inside it, and to see the other one go on sending.
STORM = ("--users", "4", "--spawn-rate", "100", "--rate", "30", "--duration", "14s", "--waves", "0",
         "--duplicates", "0.3", "--burst", "3")


def _children(pid: int) -> list[int]:
    """The direct children of `pid` (Linux's /proc)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _effects(db: Path) -> int:
    """Effect rows the receiver holds so far (0 before its table exists)."""
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            return int(conn.execute("SELECT count(*) FROM effects").fetchone()[0])
    except sqlite3.Error:
        return 0


def _storm_with_a_lost_worker(tmp_path: Path, receiver: str, stop: str) -> tuple[int, str, dict[str, Any], Any]:
    """Run the storm against `receiver` with two workers; once the receiver holds effects, stop
    worker 1 as `stop` says (``term``: SIGTERM to its storm-worker; ``kill-parent``: SIGKILL to
    its storm-worker alone; ``kill-both``: SIGKILL to its Locust child, then its storm-worker).
    Returns the master's exit code, its log, report.json, and the history's meta."""
    port, master_port = free_port(), free_port()
    db = tmp_path / "rcv.sqlite"
    out = tmp_path / "out"
    config = _config(tmp_path, "loss", f"http://127.0.0.1:{port}/webhooks", db)
    worker = [sys.executable, "-m", "hookproof", "storm-worker", "--master-host", "127.0.0.1", "--master-port",
              str(master_port)]
    with ExitStack() as stack:
        stack.enter_context(_process([sys.executable, "-m", f"examples.receivers.{receiver}", "--host", "127.0.0.1",
                                      "--port", str(port), "--db", f"sqlite:///{db}", "--secret", SECRET],
                                     tmp_path / "rcv.log"))
        _wait_healthy([], f"http://127.0.0.1:{port}/healthz")
        master = stack.enter_context(_process(
            [sys.executable, "-m", "hookproof", "storm", "--config", str(config), "--out", str(out),
             "--workers-expected", "2", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(master_port),
             "--workers-timeout", "90s", "--collect-timeout", "20s", *STORM], tmp_path / "master.log"))
        workers = [stack.enter_context(_process(worker, tmp_path / f"worker{i}.log")) for i in range(2)]
        deadline = time.monotonic() + 120
        while _effects(db) == 0 and time.monotonic() < deadline and master.poll() is None:
            time.sleep(0.2)
        assert _effects(db) > 0, (tmp_path / "master.log").read_text(errors="replace")
        time.sleep(2.0)
        victim = workers[1]
        (child,) = _children(victim.pid)
        if stop == "term":
            victim.send_signal(signal.SIGTERM)
        elif stop == "kill-parent":
            victim.kill()
        else:
            os.kill(child, signal.SIGKILL)
            victim.kill()
        victim.wait(30)
        if stop == "kill-parent":  # its Locust child dies with it (after handing over)
            gone_by = time.monotonic() + 20
            while _alive(child) and time.monotonic() < gone_by:
                time.sleep(0.1)
            assert not _alive(child), "the Locust worker outlived its storm-worker"
        master.wait(300)
        workers[0].wait(60)
    log = (tmp_path / "master.log").read_text(errors="replace")
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    history = load_history(out / "history.sqlite")
    try:
        meta = history.meta()
    finally:
        history.close()
    return master.returncode, log, report, meta


def _checks(report: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
    (scenario,) = report["scenarios"]
    return {c["check_id"]: (c["verdict"], [f["message"] for f in c["findings"] if f["severity"] == "finding"])
            for c in scenario["checks"]}


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["term", "kill-parent"])
def test_a_worker_stopped_mid_storm_hands_its_records_over_and_a_correct_receiver_passes(
        tmp_path: Path, stop: str) -> None:
    code, log, report, meta = _storm_with_a_lost_worker(tmp_path, "inbox_sync", stop)
    assert (code, report["verdict"], report["partial"]) == (0, "pass", False), log[-4000:]
    rows = sorted(meta["storm_workers"], key=lambda w: w["index"])
    assert [w["index"] for w in rows] == [0, 1] and all(w["closed"] for w in rows), rows
    # the stopped one (which storm-worker got which index is Locust's choice) says so
    assert sorted(w["stopped"].startswith("stopped ") for w in rows) == [False, True], rows
    assert sorted(w["stopped"] for w in rows)[0] == ""
    assert all(w["attempts"] > 0 and w["address"] == "127.0.0.1" for w in rows), rows
    assert meta["storm_unrecorded"] == []
    worker_log = (tmp_path / "worker1.log").read_text(errors="replace")
    assert "handed over to the master:" in worker_log and "Traceback" not in worker_log


@pytest.mark.slow
def test_a_worker_killed_with_its_locust_leaves_a_partial_unknown_run_not_false_findings(tmp_path: Path) -> None:
    code, log, report, meta = _storm_with_a_lost_worker(tmp_path, "inbox_sync", "kill-both")
    assert (code, report["verdict"], report["partial"]) == (1, "unknown", True), log[-4000:]
    checks = _checks(report)
    assert [c for c, (verdict, _) in checks.items() if verdict == "invalid"] == [], checks
    (lost,) = meta["storm_unrecorded"]
    assert lost.startswith("worker ") and "127.0.0.1" in lost
    (scenario,) = report["scenarios"]
    assert f"{lost} sent no closing message" in scenario["reason"]
    rows = sorted(meta["storm_workers"], key=lambda w: w["index"])
    assert [w["index"] for w in rows] == [0, 1] and sorted(w["closed"] for w in rows) == [False, True], rows


@pytest.mark.slow
def test_a_receiver_without_dedupe_still_fails_when_a_worker_is_lost(tmp_path: Path) -> None:
    code, log, report, meta = _storm_with_a_lost_worker(tmp_path, "no_dedupe", "kill-both")
    assert (code, report["verdict"], report["partial"]) == (1, "fail", True), log[-4000:]
    checks = _checks(report)
    assert checks["duplicated"][0] == "invalid" and checks["duplicated"][1], checks
    assert len(meta["storm_unrecorded"]) == 1
