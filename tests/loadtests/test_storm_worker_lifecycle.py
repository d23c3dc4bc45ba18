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
import re
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from hookproof.simulator.delivery.history import load_history
from tests.loadtests.test_storm_cluster import ENV, ROOT, SECRET, _config, _process, _wait_healthy
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
    (note,) = [n for n in report["notes"] if n.startswith("workers: ")]
    assert note.count(", 127.0.0.1): ") == 2 and "stopped " in note, note
    logs = [(tmp_path / f"worker{i}.log").read_text(errors="replace") for i in range(2)]
    assert not any("Traceback" in log for log in logs)
    # each storm-worker's last line says what it handed over (one stopped by SIGKILL says nothing itself:
    # its Locust child's log line says it)
    handed = [[line for line in log.splitlines() if line.startswith("storm-worker: handed over to the master: ")]
              for log in logs]
    assert len(handed[0]) == 1 and handed[0][0] == logs[0].rstrip().splitlines()[-1], logs[0][-2000:]
    assert len(handed[1]) == (1 if stop == "term" else 0) and "handed over to the master:" in logs[1]


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
    assert scenario["verdict"] == "unknown"  # its row never says PASS under the run's UNKNOWN
    rows = sorted(meta["storm_workers"], key=lambda w: w["index"])
    assert [w["index"] for w in rows] == [0, 1] and sorted(w["closed"] for w in rows) == [False, True], rows
    # the master stopped waiting once the killed worker had sent no heartbeat for a while
    master_log = (tmp_path / "out" / "locust" / "locust-master.log").read_text(errors="replace")
    assert re.search(r"stopped waiting for worker \S+: no heartbeat for 15 s", master_log), master_log[-3000:]


@pytest.mark.slow
def test_a_receiver_without_dedupe_still_fails_when_a_worker_is_lost(tmp_path: Path) -> None:
    code, log, report, meta = _storm_with_a_lost_worker(tmp_path, "no_dedupe", "kill-both")
    assert (code, report["verdict"], report["partial"]) == (1, "fail", True), log[-4000:]
    checks = _checks(report)
    assert checks["duplicated"][0] == "invalid" and checks["duplicated"][1], checks
    assert len(meta["storm_unrecorded"]) == 1


def _worker(master_port: int, *, older: bool = False) -> tuple[list[str], dict[str, str]]:
    """A storm-worker's argv and environment (`older`: another build of this version, with
    another storm protocol: `older_build/sitecustomize.py`)."""
    env = dict(ENV)
    if older:
        env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent / "older_build"), env["PYTHONPATH"]])
    return ([sys.executable, "-m", "hookproof", "storm-worker", "--master-host", "127.0.0.1", "--master-port",
             str(master_port)], env)


def _run(argv: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(argv, cwd=str(ROOT), env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)


@pytest.mark.slow
def test_a_worker_joining_after_the_storm_began_is_refused_in_one_line_and_the_storm_goes_on(tmp_path: Path) -> None:
    port, master_port = free_port(), free_port()
    db = tmp_path / "rcv.sqlite"
    out = tmp_path / "out"
    config = _config(tmp_path, "late", f"http://127.0.0.1:{port}/webhooks", db)
    argv, env = _worker(master_port)
    with ExitStack() as stack:
        stack.enter_context(_process([sys.executable, "-m", "examples.receivers.inbox_sync", "--host", "127.0.0.1",
                                      "--port", str(port), "--db", f"sqlite:///{db}", "--secret", SECRET],
                                     tmp_path / "rcv.log"))
        _wait_healthy([], f"http://127.0.0.1:{port}/healthz")
        master = stack.enter_context(_process(
            [sys.executable, "-m", "hookproof", "storm", "--config", str(config), "--out", str(out),
             "--workers-expected", "1", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(master_port),
             "--workers-timeout", "90s", *STORM], tmp_path / "master.log"))
        first = stack.enter_context(_process(argv, tmp_path / "worker0.log"))
        deadline = time.monotonic() + 120
        while _effects(db) == 0 and time.monotonic() < deadline and master.poll() is None:
            time.sleep(0.2)
        assert _effects(db) > 0, (tmp_path / "master.log").read_text(errors="replace")
        late = _run(argv, tmp_path / "late.log", env)
        try:
            late_code = late.wait(60)
        finally:
            if late.poll() is None:
                late.kill()
        still_running = master.poll() is None
        master.wait(300)
        first.wait(60)
    late_log = (tmp_path / "late.log").read_text(errors="replace")
    refusals = [line for line in late_log.splitlines() if line.startswith("hookproof: ")]
    assert late_code == 2 and "Traceback" not in late_log, late_log
    assert refusals == ["hookproof: storm-worker refused: the storm already started with 1 worker(s): a worker joins "
                        "a storm before it begins (start the storm-workers first, or restart the storm)"], late_log
    assert still_running  # refused while the storm ran, not at its end
    master_log = (tmp_path / "master.log").read_text(errors="replace")
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert (master.returncode, report["verdict"], report["partial"]) == (0, "pass", False), master_log[-4000:]
    history = load_history(out / "history.sqlite")
    try:
        rows = history.meta()["storm_workers"]  # type: ignore[index]
    finally:
        history.close()
    assert [(w["index"], w["closed"]) for w in rows] == [(0, True)], rows
    locust_master = "".join(p.read_text(errors="replace") for p in (out / "locust").glob("*master*.log"))
    assert "joined after the storm began" in locust_master
    assert "Sending spawn jobs" not in locust_master.split("joined after the storm began", 1)[1]


@pytest.mark.slow
def test_a_worker_of_another_build_is_refused_before_any_worker_sends(tmp_path: Path) -> None:
    port, master_port = free_port(), free_port()
    db = tmp_path / "rcv.sqlite"
    out = tmp_path / "out"
    config = _config(tmp_path, "build", f"http://127.0.0.1:{port}/webhooks", db)
    with ExitStack() as stack:
        stack.enter_context(_process([sys.executable, "-m", "examples.receivers.inbox_sync", "--host", "127.0.0.1",
                                      "--port", str(port), "--db", f"sqlite:///{db}", "--secret", SECRET],
                                     tmp_path / "rcv.log"))
        _wait_healthy([], f"http://127.0.0.1:{port}/healthz")
        master = stack.enter_context(_process(
            [sys.executable, "-m", "hookproof", "storm", "--config", str(config), "--out", str(out),
             "--workers-expected", "2", "--master-bind-host", "127.0.0.1", "--master-bind-port", str(master_port),
             "--workers-timeout", "90s", *STORM], tmp_path / "master.log"))
        workers = []
        for i, older in enumerate((False, True)):
            argv, env = _worker(master_port, older=older)
            workers.append(_run(argv, tmp_path / f"worker{i}.log", env))
        try:
            master.wait(300)
            codes = [w.wait(60) for w in workers]
        finally:
            for w in workers:
                if w.poll() is None:
                    w.kill()
    master_log = (tmp_path / "master.log").read_text(errors="replace")
    older_log = (tmp_path / "worker1.log").read_text(errors="replace")
    assert master.returncode == 2, master_log
    (refusal,) = [line for line in master_log.splitlines() if line.startswith("hookproof: storm refused:")]
    assert "refused the storm: this worker is another build of hookproof" in refusal, refusal
    assert codes[1] == 2 and "Traceback" not in older_log, older_log
    (line,) = [line for line in older_log.splitlines() if line.startswith("hookproof: ")]
    assert line.startswith("hookproof: storm-worker refused: this worker is another build of hookproof "), line
    assert _effects(db) == 0  # nobody sent: the good worker waited for the master's go
    assert not (out / "report.json").exists()
