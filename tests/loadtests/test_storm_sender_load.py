"""`hookproof storm` charges the receiver only for what it controls (slow: real storms).

A correct, fast receiver behind a worker whose loop stalls again and again (the
`stalled_worker` test hook: every second it blocks for 1.5 s, as a saturated CPU would)
passes ``ack_latency`` and the report calls the storm sender-bound; a receiver that
answers after the sender timeout still fails it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hookproof.simulator.delivery import History
from tests.hostile.servers import hostile_server
from tests.loadtests.test_storm_command import SECRET, _checks, _config

ROOT = Path(__file__).resolve().parents[2]
STALL_HOOK = Path(__file__).resolve().parent / "stalled_worker"
#: Seconds the stalled worker's process stops, every second.
STALL_S = 1.5


def _storm(config: Path, out: Path, *args: str, stall_s: float | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOOKPROOF_TEST_SECRET": SECRET, "COLUMNS": "200",
           "PYTHONPATH": os.pathsep.join([str(STALL_HOOK), str(ROOT)]) if stall_s else str(ROOT)}
    if stall_s:
        env["HOOKPROOF_TEST_STALL_S"] = str(stall_s)
    return subprocess.run([sys.executable, "-m", "hookproof", "storm", "--config", str(config), "--out", str(out),
                           *args], cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=240)


def _latency(out: Path) -> dict[str, Any]:
    scenario = json.loads((out / "report.json").read_text(encoding="utf-8"))["scenarios"][0]
    check: dict[str, Any] = next(c for c in scenario["checks"] if c["check_id"] == "ack_latency")
    return check


def _checklist(out: Path) -> dict[str, str]:
    """The report's go-live checklist: item id -> verdict."""
    items = json.loads((out / "report.json").read_text(encoding="utf-8"))["checklist"]
    return {i["id"]: i["verdict"] for i in items}


def _with_timeout(config: Path, seconds: float) -> Path:
    config.write_text(config.read_text(encoding="utf-8") + f"\n[run]\nsender_timeout_s = {seconds}\n",
                      encoding="utf-8")
    return config


@pytest.mark.slow
def test_a_fast_receiver_behind_a_stalled_sender_passes_and_the_storm_is_sender_bound(tmp_path: Path) -> None:
    out = tmp_path / "out"
    config = _with_timeout(_config(tmp_path, "inbox_sync"), 2.0)
    result = _storm(config, out, "--users", "4", "--spawn-rate", "4", "--rate", "30", "--duration", "12s",
                    "--workers", "1", "--duplicates", "0.2", "--burst", "3", stall_s=STALL_S)
    assert result.returncode == 0, result.stdout + result.stderr
    assert {c: v for c, (v, _) in _checks(out).items()} == dict.fromkeys(
        ("duplicated", "lost", "unexpected", "valid_not_rejected", "no_server_error", "duplicate_acked",
         "counter", "stale", "regressed", "ack_latency"), "valid")
    latency = _latency(out)
    # counted from the wire and net of the stalls, the answers are not charged with them (a
    # stall's backlog, sent at once after it, may still make the receiver's own p99 an advisory)
    assert [f for f in latency["findings"] if f["severity"] == "finding"] == []
    stats = latency["stats"]
    assert stats["sender_bound"] is True and stats["sender_lag_max_ms"] >= 1000 * STALL_S * 0.9
    assert "storm: sender-bound: " in result.stdout and "verdict: PASS" in result.stdout
    assert _checklist(out)["accepts-valid"] == "pass"


@pytest.mark.slow
def test_a_receiver_answering_after_the_sender_timeout_fails_ack_latency(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with hostile_server("answer-late") as server:
        config = tmp_path / "hookproof.toml"
        config.write_text("\n".join([
            "[target]", f'url = "{server.url}"', 'profile = "stripe"', 'secret = "env:HOOKPROOF_TEST_SECRET"', "",
            "[observer]", 'kind = "python"', 'callable = "tests.loadtests.test_storm_command:no_effects"', "",
            "[settle]", "window_s = 0.2", "deadline_s = 5", "", "[run]", "sender_timeout_s = 0.5", ""]),
            encoding="utf-8")
        result = _storm(config, out, "--users", "1", "--spawn-rate", "1", "--rate", "4", "--duration", "4s",
                        "--duplicates", "0")
    assert result.returncode == 1, result.stdout + result.stderr
    history = History(out / "history.sqlite")
    attempts = history.attempts()
    history.close()
    timed_out = [a for a in attempts if a.outcome.value == "timeout"]
    assert attempts and len(timed_out) == len(attempts)
    latency = _latency(out)
    assert latency["verdict"] == "invalid"
    assert [f["message"] for f in latency["findings"] if f["severity"] == "finding"] == [
        f"{len(timed_out)} of {len(timed_out)} attempts sent whole got no answer within the sender timeout 500 ms "
        "(besides them: 0 acknowledged; an attempt answered with an error, or timed out before it was sent whole, is "
        "not counted here) at 4 events/s offered, each unanswered attempt retried on top of them on the storm's compressed retry "
        "schedule (a receiver slow at any load fails at every --rate; one that fell behind passes at the rate it "
        "sustains)"]
    # every valid delivery went unanswered: "Accepts every valid delivery" fails with ack_latency (it read
    # PASS beside 100 % timeouts, as no delivery was refused)
    assert _checklist(out)["accepts-valid"] == "fail"
