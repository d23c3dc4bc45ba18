"""The storm exchange's attempt deadline (`loadtests.exchange`): one `gevent.Timeout` per
client reused from attempt to attempt still cuts every attempt off at the sender timeout,
and never cuts off one that is answered in time.

Run in a subprocess (`tests.hostile.storm_exchange`: gevent never enters pytest).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.hostile.harness import ROOT, child_env
from tests.hostile.servers import hostile_server

pytestmark = pytest.mark.timeout(120)

TIMEOUT_S = 0.5
BODY_TIMEOUT = {"completion": "unknown", "reason": f"answered 200 but the body did not finish within {TIMEOUT_S:g} s "
                "(sender timeout)", "status": None}


def _attempts(url: str, n: int) -> list[dict[str, Any]]:
    run = subprocess.run([sys.executable, "-m", "tests.hostile.storm_exchange", "--timed", "--attempts", str(n),
                          str(TIMEOUT_S), "65536", url], capture_output=True, text=True, timeout=90, cwd=ROOT,
                         env=child_env())
    assert run.returncode == 0, run.stderr
    out: list[dict[str, Any]] = json.loads(run.stdout)
    return out


def test_every_attempt_on_one_client_meets_its_own_deadline() -> None:
    """A body dripped a byte every 50 ms defeats the per-read timeout: only the attempt's
    deadline ends it, at the sender timeout, on each of three attempts in a row (the
    second and third on a reused timer)."""
    with hostile_server("slowloris-body") as server:
        attempts = _attempts(server.url, 3)
    assert [{k: v for k, v in a.items() if k != "elapsed_s"} for a in attempts] == [BODY_TIMEOUT] * 3
    for a in attempts:
        assert TIMEOUT_S * 0.9 <= a["elapsed_s"] < TIMEOUT_S + 1.0, attempts


def test_a_stopped_deadline_never_fires_on_a_later_attempt() -> None:
    """Answered attempts stop their deadline; reused, it cuts none of the next ones off."""
    with hostile_server("answer-ok") as server:
        attempts = _attempts(server.url, 20)
    assert [{k: v for k, v in a.items() if k != "elapsed_s"} for a in attempts] == [
        {"completion": "ok", "reason": None, "status": 200}] * 20


def _timed_with_network_timeout(url: str, network_s: float, timeout_s: float) -> dict[str, Any]:
    run = subprocess.run([sys.executable, "-m", "tests.hostile.storm_exchange", "--timed", "--network-timeout",
                          str(network_s), str(timeout_s), "65536", url], capture_output=True, text=True, timeout=90,
                         cwd=ROOT, env=child_env())
    assert run.returncode == 0, run.stderr
    (attempt,) = json.loads(run.stdout)
    assert isinstance(attempt, dict)
    return attempt


def test_a_per_read_timeout_shorter_than_the_deadline_still_ends_the_attempt() -> None:
    """The exchange takes a connection's per-read timeout off only when the attempt's
    deadline would end the attempt first: a client whose network timeout (0.3 s) is shorter
    than the deadline (3 s) still has a silent receiver cut off by it, and one whose
    network timeout is longer (3 s) by the deadline (0.5 s)."""
    with hostile_server("silent") as server:
        shorter = _timed_with_network_timeout(server.url, 0.3, 3.0)
        longer = _timed_with_network_timeout(server.url, 3.0, TIMEOUT_S)
    assert shorter["completion"] == longer["completion"] == "unknown" and shorter["status"] is None
    assert 0.25 <= shorter["elapsed_s"] < 2.0, shorter
    assert TIMEOUT_S * 0.9 <= longer["elapsed_s"] < 2.0, longer
