"""The delivery patterns of real bug reports as explore rules (issue 16), against the zoo.

Each pattern the catalog has (`related-burst`, `older-after-newer-redelivery`,
`stale-failure-after-success`, `mass-redelivery-window`, `provider-api-transient`) is a
step the state machine can take: a schedule of it, replayed, catches the zoo receiver the
pattern was added for, and its correct twin passes the same schedule. A search finds,
shrinks and replays the racy get-or-create and the last-refund-marker receivers, and
their correct twins survive a search.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

import pytest

from examples.receivers.pool import ReceiverPool
from hookproof.scenarios.statemachine import Step, explore, format_steps, load_schedule, replay, write_schedule
from hookproof.simulator.server.state import ServerState

SEED = 20240601


@pytest.fixture
def provider() -> ServerState:
    return ServerState()


def run(name: str, steps: list[Step], tmp_path: Path, provider: ServerState, seed: int = 5,
        options: Mapping[str, float] | None = None) -> set[str]:
    """The checks with findings when `steps` are replayed against receiver `name` (empty: none)."""
    receivers = ReceiverPool(name, tmp_path, provider_state=provider, options=options)
    try:
        found = replay(receivers.target(), steps, seed, provider_state=provider)
    finally:
        receivers.close()
    return set() if found is None else {f.check_id for f in found.findings}


# Event numbers of the schedules below: a payment is #0 customer.created, #1
# payment_intent.succeeded, #2 charge.succeeded; two refunds of its charge are #3 and #4.
PAY_AND_TWO_REFUNDS = [Step("emit", action="pay"), Step("emit", action="refund", object=0),
                       Step("emit", action="refund", object=0)]


@pytest.mark.parametrize(("name", "found"), [("get_or_create_racy", {"no_server_error"}),
                                             ("get_or_create_atomic", set())])
def test_a_related_burst_releases_a_new_object_s_first_events_together(name: str, found: set[str],
                                                                        tmp_path: Path, provider: ServerState) -> None:
    steps = [Step("emit", action="pay"), Step("burst_related", events=(1, 2))]
    assert run(name, steps, tmp_path, provider) == found


@pytest.mark.parametrize(("name", "found"), [("last_refund_marker", {"duplicated"}), ("inbox_sync", set())])
def test_an_older_refund_redelivered_after_a_newer_one(name: str, found: set[str], tmp_path: Path,
                                                       provider: ServerState) -> None:
    steps = [*PAY_AND_TWO_REFUNDS, Step("deliver", event=3), Step("deliver", event=4), Step("redeliver", event=3)]
    assert run(name, steps, tmp_path, provider) == found


@pytest.mark.parametrize(("name", "found"), [("stale_failure_order", {"stale"}), ("inbox_sync", set())])
def test_a_failure_delivered_after_the_payment(name: str, found: set[str], tmp_path: Path,
                                               provider: ServerState) -> None:
    """A renewal fails (its invoice.payment_failed), then is paid; the failure arrives last."""
    from hookproof.simulator.world import World

    steps = [Step("emit", action="subscribe"), Step("emit", action="fail_renewal", object=0),
             Step("emit", action="retry_invoice", object=1)]
    world = World(5)
    from hookproof.scenarios.statemachine import apply_action

    for s in steps:
        apply_action(world, s.action or "", s.object)
    types = [e.type for e in world.events]
    failed, paid = types.index("invoice.payment_failed"), len(types) - 1 - types[::-1].index("invoice.paid")
    late = [*steps, *(Step("deliver", event=i) for i in range(len(types)) if i != failed), Step("deliver", event=failed)]
    assert run(name, late, tmp_path, provider) == found
    assert paid > failed


@pytest.mark.parametrize(("name", "found"), [("lru_dedupe", {"duplicated"}), ("inbox_sync", set())])
def test_a_window_of_acknowledged_events_redelivered(name: str, found: set[str], tmp_path: Path,
                                                     provider: ServerState) -> None:
    """The last 4 acknowledged events replayed: an LRU of 2 ids has forgotten the oldest."""
    steps = [*PAY_AND_TWO_REFUNDS, *(Step("deliver", event=i) for i in range(5)), Step("redeliver_window", count=4)]
    assert run(name, steps, tmp_path, provider, options={"lru_size": 2}) == found


@pytest.mark.parametrize(("name", "found"), [("mark_before_fetch", {"lost"}), ("fetch_state", set())])
def test_the_provider_api_fails_the_next_fetch_then_recovers(name: str, found: set[str], tmp_path: Path,
                                                             provider: ServerState) -> None:
    steps = [Step("emit", action="pay"), Step("api_fault", event=1, status=404), Step("deliver", event=1)]
    assert run(name, steps, tmp_path, provider) == found


# ---- searches -----------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize(("name", "checks"), [("get_or_create_racy", {"no_server_error"}),
                                              ("last_refund_marker", {"duplicated", "counter"})])
def test_explore_finds_shrinks_and_replays_the_pattern_receivers(name: str, checks: set[str], tmp_path: Path,
                                                                 provider: ServerState) -> None:
    receivers = ReceiverPool(name, tmp_path, provider_state=provider)
    target = receivers.target()
    try:
        result = explore(target, max_examples=200, seed=SEED, provider_state=provider)
        failure = result.failure
        assert failure is not None, f"{name}: no finding in {result.examples} examples"
        assert {f.check_id for f in failure.findings} & checks, failure.summary()
        assert failure.delivery_steps <= 4, "\n".join(format_steps(failure.steps, failure.event_types))
        path = write_schedule(failure, tmp_path / "failing-schedule.json", target=target.describe, profile="stripe")
        seed, steps, _ = load_schedule(path)
        again = replay(target, steps, seed, provider_state=provider)
        assert again is not None and {f.check_id for f in again.findings} & checks
    finally:
        receivers.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["get_or_create_atomic", "inbox_sync", "fetch_state"])
def test_the_correct_twins_survive_the_pattern_rules(name: str, tmp_path: Path, provider: ServerState) -> None:
    receivers = ReceiverPool(name, tmp_path, provider_state=provider)
    try:
        result = explore(receivers.target(), max_examples=150, seed=SEED, provider_state=provider)
    finally:
        receivers.close()
    assert result.failure is None, "\n".join([result.failure.summary(), *format_steps(
        result.failure.steps, result.failure.event_types)]) if result.failure else ""
    assert result.error is None and result.examples >= 150
