"""`hookproof certify` (a real subprocess) against every hostile server: it finishes within a
bound derived from the configured timeouts, records no ``ok``, says what went wrong in
the report, and stays within a bounded memory."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from hookproof.simulator.profiles import get_profile
from tests.hostile.harness import CliRun, attempts_unbounded, empty_effects_db, run_hookproof
from tests.hostile.servers import BEHAVIOURS, HUGE_BODY_BYTES, hostile_server
from tests.hostile.test_send import PLAIN_WORDS

SENDER_TIMEOUT_S = 0.3
TIME_SCALE = 1e-5
SETTLE_DEADLINE_S = 2.0
#: forged-signature: 2 events x 2 attempts; unknown-event-type: 1 x 2, then 1 x the full schedule.
SCENARIOS = ("forged-signature", "unknown-event-type")
#: Seconds on top of what a run is asked to do (`asked_s`): interpreter start-up, the provider
#: server, observing and writing reports, with every behaviour's run started side by side.
#: Generous on purpose: on a loaded machine (load 15) start-up alone takes tens of seconds.
#: Whether each attempt and each retry delay kept to its limit is checked from the report's
#: own timestamps (`attempts_unbounded`); this bound only says the run as a whole ended.
STARTUP_SLACK_S = 120.0


def delays_s() -> tuple[float, ...]:
    """The retry delays certify waits at most, in seconds: the profile's schedule at `TIME_SCALE`."""
    return tuple(d * TIME_SCALE for d in get_profile("stripe").retry_schedule_s)


def asked_s() -> float:
    """What certify is asked to do, in seconds: every attempt's deadline, the scaled retries, the settles."""
    attempts = 2 * 2 + 2 + (1 + len(delays_s()))
    return attempts * SENDER_TIMEOUT_S + 2 * sum(delays_s()) + len(SCENARIOS) * SETTLE_DEADLINE_S


def bound_s() -> float:
    """The longest certify may take as a process: what it is asked to do plus start-up."""
    return asked_s() + STARTUP_SLACK_S


def write_config(directory: Path, url: str, *, extra: str = "") -> Path:
    """A hookproof.toml for `url` with a working SQL observer (an empty effects table)."""
    db = empty_effects_db(directory / "observed.sqlite")
    config = directory / "hookproof.toml"
    config.write_text(f"""
[target]
url = "{url}"
profile = "stripe"
secret = "whsec_hostile_certify_secret"
{extra}
[observer]
kind = "sql"
url = "{db}"
effects = "SELECT business_key, amount FROM effects"

[settle]
window_s = 0.2
deadline_s = {SETTLE_DEADLINE_S}

[run]
seed = 7
time_scale = {TIME_SCALE}
sender_timeout_s = {SENDER_TIMEOUT_S}
scenarios = {json.dumps(list(SCENARIOS))}
""", encoding="utf-8")
    return config


def _certify(behaviour: str, directory: Path) -> CliRun:
    directory.mkdir(parents=True, exist_ok=True)
    with hostile_server(behaviour) as server:
        config = write_config(directory, server.url)
        return run_hookproof("certify", "--config", str(config), "--out", str(directory / "out"),
                             timeout_s=bound_s() + 60)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[CliRun, Path]]:
    root = tmp_path_factory.mktemp("certify-hostile")
    with ThreadPoolExecutor(max_workers=len(BEHAVIOURS)) as pool:
        futures = {b: pool.submit(_certify, b, root / b) for b in BEHAVIOURS}
        return {b: (f.result(), root / b / "out") for b, f in futures.items()}


@pytest.mark.slow
@pytest.mark.parametrize("behaviour", list(BEHAVIOURS))
def test_certify_is_bounded_never_ok_and_reports_the_fault(runs, behaviour: str) -> None:
    run, out = runs[behaviour]
    assert not run.killed and run.elapsed_s < bound_s(), run
    assert run.returncode in (0, 1), run  # see test_a_receiver_that_never_answers_does_not_pass
    assert "Traceback" not in run.stderr + run.stdout, run
    assert run.max_rss_bytes < 400 * 1024 * 1024, run  # a sanity ceiling; see test_send for the cap itself
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] is False
    attempts = [a for s in report["scenarios"] for a in s["attempts"]]
    assert len(attempts) >= 6, [s["reason"] for s in report["scenarios"]]
    assert attempts_unbounded(attempts, sender_timeout_s=SENDER_TIMEOUT_S, delays_s=delays_s()) == [], run
    assert all(a["completion"] in ("unknown", "fail") for a in attempts), attempts
    errors = [a["error"] for a in attempts if a["error"]]
    assert any(w in e for e in errors for w in PLAIN_WORDS[behaviour]), errors
    for name in ("junit.xml", "summary.md", "report.html", "history.sqlite"):
        assert (out / name).is_file(), name


@pytest.mark.slow
def test_certify_memory_stays_far_below_the_huge_body(runs) -> None:
    huge, _ = runs["huge-body"]
    quiet, _ = runs["close-before-reading"]
    assert huge.max_rss_bytes - quiet.max_rss_bytes < HUGE_BODY_BYTES // 5, (huge.max_rss_bytes, quiet.max_rss_bytes)


@pytest.mark.slow
@pytest.mark.parametrize("behaviour", ["silent", "garbage"])
def test_a_receiver_that_never_answers_does_not_pass(runs, behaviour: str) -> None:
    run, out = runs[behaviour]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] != "pass" and run.returncode == 1
