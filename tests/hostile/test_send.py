"""`hookproof send` (a real subprocess) against every hostile server: bounded in time and
memory, never an ``ok`` completion, and the fault said in plain words."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from hookproof.simulator.delivery.dispatcher import TIME_SCALE
from hookproof.simulator.profiles import get_profile
from tests.hostile.harness import CliRun, attempts_unbounded, run_hookproof
from tests.hostile.servers import BEHAVIOURS, HUGE_BODY_BYTES, hostile_server
from tests.support import free_port

SENDER_TIMEOUT_S = 0.3
#: Seconds on top of what a run is asked to do (`asked_s`): interpreter start-up, imports and
#: printing, with every behaviour's run started side by side. Generous on purpose: at load 15
#: these runs took 36-48 s against 6 s asked, nearly all of it start-up. Whether each attempt
#: and each retry delay kept to its limit is checked from the run's own timestamps
#: (`attempts_unbounded`); this bound only says the run as a whole ended.
STARTUP_SLACK_S = 90.0
SECRET = "whsec_hostile_send_secret"

#: behaviour -> words the attempts' errors must contain (any one of them).
PLAIN_WORDS: dict[str, tuple[str, ...]] = {
    "silent": ("timed out", "no answer within"),
    "stall-after-headers": ("timed out", "did not finish within", "no answer within"),
    "slowloris-body": ("did not finish within",),
    "slowloris-headers": ("the status line began and then stopped; the sender timeout",
                          "a status line came and then the headers stopped; the sender timeout"),
    "endless-body": ("read cap",),
    "huge-body": ("read cap",),
    "garbage": ("not valid HTTP",),
    "reset-mid-answer": ("reset",),
    "close-before-reading": ("reset", "closed the connection"),
    "redirect-loop": ("does not follow redirects",),
    "continue-forever": ("answered 100 Continue and then nothing; the sender timeout of",),
    "one-then-refuse": ("connection refused",),
}


def delays_s() -> tuple[float, ...]:
    """The retry delays `send` waits, in seconds: the profile's schedule at the dispatcher's scale."""
    return tuple(d * TIME_SCALE for d in get_profile("stripe").retry_schedule_s)


def asked_s() -> float:
    """What `send` is asked to do, in seconds: every attempt's deadline plus the scaled retry delays."""
    return (1 + len(delays_s())) * SENDER_TIMEOUT_S + sum(delays_s())


def bound_s() -> float:
    """The longest `send` may take as a process: what it is asked to do plus start-up."""
    return asked_s() + STARTUP_SLACK_S


def _send(url: str) -> CliRun:
    return run_hookproof("send", "--url", url, "--secret", SECRET, "--profile", "stripe", "--sender-timeout",
                         str(SENDER_TIMEOUT_S), "--json", timeout_s=bound_s() + 30)


def _against(behaviour: str) -> tuple[CliRun, int]:
    with hostile_server(behaviour) as server:
        run = _send(server.url)
        return run, server.requests


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[CliRun, int]]:
    """Every behaviour's run (in parallel, each against its own server), plus a baseline."""
    names = [*BEHAVIOURS, "baseline"]
    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        futures = {n: pool.submit(_against, n) if n != "baseline"
                   else pool.submit(lambda: (_send(f"http://127.0.0.1:{free_port()}/webhooks"), 0)) for n in names}
        return {n: f.result() for n, f in futures.items()}


@pytest.mark.slow
@pytest.mark.parametrize("behaviour", list(BEHAVIOURS))
def test_send_is_bounded_never_ok_and_says_why(runs, behaviour: str) -> None:
    run, requests = runs[behaviour]
    assert not run.killed and run.elapsed_s < bound_s(), run
    assert run.returncode == 1, run  # no attempt was acknowledged
    assert "Traceback" not in run.stderr, run
    attempts = json.loads(run.stdout)
    assert len(attempts) == 1 + len(delays_s()), run  # the whole schedule, no more
    assert attempts_unbounded(attempts, sender_timeout_s=SENDER_TIMEOUT_S, delays_s=delays_s(),
                              ended_at=run.ended_at) == [], run
    assert all(a["completion"] in ("unknown", "fail") for a in attempts), attempts
    assert all(a["error"] for a in attempts if a["status"] is None or 300 <= a["status"] < 400), attempts
    words = PLAIN_WORDS[behaviour]
    assert any(w in attempts[-1]["error"] for w in words), attempts[-1]["error"]
    assert all("\n" not in a["error"] and len(a["error"]) < 200 for a in attempts if a["error"])
    if behaviour == "redirect-loop":  # reported, never followed: one request per attempt
        assert {a["status"] for a in attempts} == {307}
        assert all(a["completion"] == "fail" for a in attempts)
        assert requests == len(attempts)
    if behaviour == "one-then-refuse":
        assert (attempts[0]["status"], attempts[0]["completion"]) == (503, "unknown")
        assert {a["completion"] for a in attempts[1:]} == {"fail"}


@pytest.mark.slow
@pytest.mark.parametrize("behaviour", ["huge-body", "endless-body"])
def test_the_read_cap_keeps_memory_bounded(runs, behaviour: str) -> None:
    run, _ = runs[behaviour]
    baseline, _ = runs["baseline"]
    assert baseline.max_rss_bytes > 0 and run.max_rss_bytes > 0
    grown = run.max_rss_bytes - baseline.max_rss_bytes
    assert grown < HUGE_BODY_BYTES // 5, f"peak RSS grew by {grown >> 20} MiB over the baseline"
    excerpts = [a["response_excerpt"] for a in json.loads(run.stdout)]
    assert all(len(e) <= 2048 for e in excerpts)


def test_a_child_s_memory_is_its_own_not_the_large_process_that_started_it() -> None:
    """The memory bounds above read the hookproof process's own peak: wait4's ru_maxrss
    carried pytest's resident size into every child across exec, so once the suite's
    process had grown past the ceiling every bounded run read as too large."""
    ballast = b"\x01" * (512 * 1024 * 1024)  # resident in this process while the child runs
    run = run_hookproof("--version", timeout_s=60)
    assert run.returncode == 0 and len(ballast) == 512 * 1024 * 1024
    assert 0 < run.max_rss_bytes < 256 * 1024 * 1024, run
