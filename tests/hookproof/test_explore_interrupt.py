"""SIGINT or SIGTERM during `hookproof explore`: it stops, writes a partial report, exits 128+N."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import run_interrupted

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples" / "pytest_project"
#: Seconds between explore's heartbeat lines here (off a terminal it prints them on stderr).
HEARTBEAT_S = "0.2"
#: A heartbeat line once the search has tried an example: the run is past start-up and into
#: its search, which is where the interruption must land.
SEARCHING = re.compile(rb"^explore: state machine [1-9]\d*/\d+ examples, ", re.M)
#: Seconds to wait for that line: start-up (imports, the app, Hypothesis) takes a few seconds
#: on a quiet machine and tens on a loaded one; a run that never gets there is a failure.
START_BOUND_S = 180.0
#: Seconds an interrupted run has to write its partial report and exit (then it is killed).
UNWIND_BOUND_S = 90.0


def _read_until(proc: subprocess.Popen[str], pattern: re.Pattern[bytes], timeout_s: float) -> bytes:
    """Read the process's stderr straight from its pipe (no buffering: `communicate` reads
    what follows) until `pattern` appears; returns what was read. Fails when the process
    ends or `timeout_s` passes first."""
    assert proc.stderr is not None
    fd = proc.stderr.fileno()
    seen = b""
    deadline = time.monotonic() + timeout_s
    while not pattern.search(seen):
        left = deadline - time.monotonic()
        assert left > 0, f"no search under way after {timeout_s:g} s; stderr so far:\n{seen.decode()[-2000:]}"
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(fd, 65536)
            assert chunk, f"explore ended before its search; stderr:\n{seen.decode()[-2000:]}"
            seen += chunk
    return seen


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_explore_writes_a_partial_report(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOOKPROOF_HEARTBEAT_S": HEARTBEAT_S}
    before: list[bytes] = []

    def searching(proc: subprocess.Popen[str]) -> None:
        before.append(_read_until(proc, SEARCHING, START_BOUND_S))  # well into the search
        assert proc.poll() is None, proc.communicate()

    result = run_interrupted([sys.executable, "-m", "hookproof", "explore", "--max-examples", "100000", "--out",
                              str(out)], signum, cwd=PROJECT, env=env, under_way=searching,
                             timeout_s=UNWIND_BOUND_S)
    stderr = b"".join(before).decode() + result.stderr
    assert result.returncode == 128 + signum, result.stdout + stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] is True and report["verdict"] == "unknown"
    # the run's own target, profile and seed (run.seed of the example project), not placeholders
    assert (report["target"], report["profile"], report["seed"]) == ("in-process ASGI app FastAPI", "stripe", 7)
    assert "interrupted" in result.stdout
    # the note and the unfinished search's reason name the signal, as a --max-duration stop names its limit
    stopped = f"stopped by {signal.Signals(signum).name}; the search stopped there"
    assert report["notes"] == [stopped]
    assert [(s["verdict"], s["reason"]) for s in report["scenarios"]] == [("unknown", stopped)]


#: A heartbeat line once a finding is being shrunk.
SHRINKING = re.compile(rb"^explore: shrinking the finding", re.M)


def _url_config(root: Path, receiver: str) -> Path:
    """`receiver` (a reference receiver) on its own port, started by ``[target.process]``:
    deliveries go over sockets (aiohttp), as to any receiver a team runs."""
    db = root / "receiver.sqlite"
    config = root / "hookproof.toml"
    config.write_text(f"""
[target]
url = "http://127.0.0.1:{{port}}/webhooks"
profile = "stripe"
secret = "whsec_explore_interrupt_test"

[target.process]
cwd = "{ROOT}"
command = "{sys.executable} -m examples.receivers.{receiver} --port {{port}} --db sqlite:///{db}"
health_path = "/healthz"

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key, amount FROM effects"
state = "SELECT object_id, status, version FROM subscription_states"

[settle]
window_s = 0.2
""", encoding="utf-8")
    return config


@pytest.mark.slow
def test_sigterm_while_shrinking_a_finding_closes_the_connections_and_exits_143(tmp_path: Path) -> None:
    """A receiver over sockets with a finding being shrunk: SIGTERM stops the shrinking, the
    finding so far is reported (partial, its note naming the signal), every connection is
    closed (no aiohttp "Unclosed client session" at exit) and the exit code is certify's, 143."""
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOOKPROOF_HEARTBEAT_S": HEARTBEAT_S}
    before: list[bytes] = []

    def shrinking(proc: subprocess.Popen[str]) -> None:
        before.append(_read_until(proc, SHRINKING, START_BOUND_S))
        assert proc.poll() is None, proc.communicate()

    result = run_interrupted([sys.executable, "-m", "hookproof", "explore", "-c", str(_url_config(tmp_path, "no_dedupe")),
                              "--max-examples", "100000", "--seed", "3", "--out", str(out)], signal.SIGTERM,
                             cwd=tmp_path, env=env, under_way=shrinking, timeout_s=UNWIND_BOUND_S)
    stderr = b"".join(before).decode() + result.stderr
    assert result.returncode == 128 + signal.SIGTERM, result.stdout + stderr
    assert "Unclosed" not in stderr and "Unclosed" not in result.stdout, stderr
    assert "explore interrupted by SIGTERM; partial report:" in result.stdout
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] is True and report["verdict"] == "fail"
    assert len(report["notes"]) == 1 and report["notes"][0].startswith("stopped by SIGTERM; shrinking was stopped after")
    assert (out / "failing-schedule.json").is_file()


#: A heartbeat line once the burst race runs (after the search, over sockets).
RACING = re.compile(rb"^explore: burst race", re.M)


@pytest.mark.slow
def test_sigterm_in_the_burst_race_keeps_the_search_s_finding(tmp_path: Path) -> None:
    """A finding found and shrunk, then the burst race stopped (SIGTERM, as a --max-duration
    stop does): the finding is reported (verdict fail, its schedule kept), the run partial
    with a note saying the race was cut short; before, the stop threw the finding away and
    reported every checklist item untested."""
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOOKPROOF_HEARTBEAT_S": HEARTBEAT_S}
    before: list[bytes] = []

    def racing(proc: subprocess.Popen[str]) -> None:
        before.append(_read_until(proc, RACING, START_BOUND_S + UNWIND_BOUND_S))
        assert proc.poll() is None, proc.communicate()

    result = run_interrupted([sys.executable, "-m", "hookproof", "explore", "-c", str(_url_config(tmp_path, "no_dedupe")),
                              "--max-examples", "30", "--seed", "3", "--repeats", "1000", "--out", str(out)],
                             signal.SIGTERM, cwd=tmp_path, env=env, under_way=racing, timeout_s=UNWIND_BOUND_S)
    stderr = b"".join(before).decode() + result.stderr
    assert result.returncode == 128 + signal.SIGTERM, result.stdout + stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] is True and report["verdict"] == "fail", report["notes"]
    assert ("stopped by SIGTERM; the burst race was cut short; the state machine's finding stands"
            in report["notes"]), report["notes"]
    assert [s["verdict"] for s in report["scenarios"]] == ["fail"]
    assert (out / "failing-schedule.json").is_file()
