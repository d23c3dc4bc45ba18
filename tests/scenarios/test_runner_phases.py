"""The runner reads the receiver after every delivery phase, so a state that goes back and then
recovers is seen (`regressed`), against real receivers over HTTP on 127.0.0.1."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from examples.receivers import load
from hookproof.receivers import ReceiverConfig, receiver_of
from hookproof.reports.model import ScenarioReport
from hookproof.scenarios.catalog import Context, NotApplicable, Phase, Plan, Scenario, state_events
from hookproof.scenarios.observations import Observation
from hookproof.scenarios.observers import observation_from_data
from hookproof.scenarios.runner import Runner
from hookproof.simulator.delivery import History, Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World
from tests.examples.serving import serve_app

SECRET = "whsec_runner_phases_0123456789"
ACCOUNT = "acct_runnerphases0001"


def _regress_then_recover(ctx: Context, w: World) -> Plan | NotApplicable:
    """A subscription's updates with its past-due update held back until after the recovery,
    then the cancellation: v1, v2, v3, v5 | v4 | v6."""
    events = state_events(ctx, w)
    assert [e.version for e in events] == [1, 2, 3, 4, 5, 6]
    assert [e.status for e in events][3:] == ["past_due", "active", "canceled"]
    held = events[3]
    return Plan(w, (Phase(tuple(e for e in events[:5] if e is not held)), Phase((held,)), Phase((events[5],))))


REGRESS_THEN_RECOVER = Scenario(
    "regress-then-recover", "An old update between two newer ones",
    "A past-due update arrives after the recovery it preceded, then the cancellation.",
    ("regressed", "stale", "no_server_error"), ("reordering-tested",), _regress_then_recover)


def run(name: str, tmp_path: Path) -> ScenarioReport:
    config = ReceiverConfig(db_url=f"sqlite:///{tmp_path / (name + '.db')}", secrets=(SECRET,), account=ACCOUNT)
    app = load(name).create_app(config)
    receiver = receiver_of(app)
    try:
        with serve_app(app) as url:
            def observe() -> Observation:
                return observation_from_data(receiver.observe(), time.time(), observer="python")

            runner = Runner(target=Target(url=url + "/webhooks"), profile=get_profile("stripe"), secrets=(SECRET,),
                            observe=observe, history=History(), account=ACCOUNT, seed=31,
                            settle_window_s=0.1, settle_interval_s=0.02)
            return runner.run_one(REGRESS_THEN_RECOVER, 0)
    finally:
        receiver.close()


def test_a_regression_that_recovers_is_found(tmp_path: Path) -> None:
    report = run("blind_overwrite", tmp_path)
    assert report.verdict == "fail"
    found = [(f.check_id, f.message) for f in report.findings]
    assert len(found) == 1 and found[0][0] == "regressed"
    went = re.fullmatch(r"went back from active \(event (evt_\w+), customer\.subscription\.updated, created (\d+)\) "
                        r"to past_due \(event (evt_\w+), customer\.subscription\.updated, created (\d+)\)", found[0][1])
    assert went is not None, found[0][1]
    assert went[1] != went[3] and int(went[2]) > int(went[4])  # two events, a second apart or more: no tie
    stale = next(c for c in report.checks if c.check_id == "stale")
    assert stale.verdict == "valid"  # it did recover: only the reads between phases show the fault


@pytest.mark.parametrize("name", ["inbox_sync", "get_or_create_atomic"])
def test_correct_receivers_never_go_back(name: str, tmp_path: Path) -> None:
    report = run(name, tmp_path)
    assert report.verdict == "pass", (report.reason, [(c.check_id, c.verdict, c.detail) for c in report.checks])


def test_a_batched_phase_releases_its_deliveries_batch_at_a_time() -> None:
    from hookproof.scenarios.catalog import effect_events
    from hookproof.scenarios.runner import _schedule

    world = World(5)
    events = tuple(effect_events(Context(get_profile("stripe")), world) + effect_events(Context(get_profile("stripe")), world))
    # twice the story: six effectful events (a subscription-mode session's provisioning among
    # them), a delayed checkout's unpaid completion and its async_payment_succeeded, then the
    # refunded charge's charge.succeeded, the two paid checkouts' payment_intent.succeeded (the
    # session's purchase: no license of its own), the invoices' invoice.created and the failed
    # delayed checkout's unpaid completion
    assert len(events) == 28
    assert [len(s.deliveries) for s in _schedule(Phase(events[:10], batch=4)).steps] == [4, 4, 2]
    assert [len(s.deliveries) for s in _schedule(Phase(events, together=True)).steps] == [28]
    assert [len(s.deliveries) for s in _schedule(Phase(events)).steps] == [1] * 28
    assert [d.event.id for s in _schedule(Phase(events, batch=4)).steps for d in s.deliveries] == [e.id for e in events]
