"""explore judges a fetching receiver by every version the provider API could have served it.

In a search, a world operation changes an object before its events are delivered, and the
provider API serves the object as it is now (as Stripe's API serves the current object,
whatever event the receiver is handling). A correct receiver that fetches the subscription
on each event therefore stores, on an older event's arrival, a version whose events were
never delivered. Its state query reads no version (a Stripe object carries none), so
``regressed`` maps the status it shows to a version: it must map it among every version the
API could have served, not only the delivered ones (else ``active`` fetched at v4 reads as
v2, after v3 ``past_due``: a false ``regressed``). The receiver that writes each event's own
status (`blind_overwrite`) must still be caught where nothing it could have fetched explains
its state.

Over HTTP: ``hookproof replay`` starts the reference receivers as processes, and an ``sql``
observer reads their SQLite file with a state query without a version column.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from hookproof.cli import app
from hookproof.scenarios.statemachine import SCHEDULE_FORMAT
from tests.hookproof.subscription_receivers import subscription_config

SECRET = "whsec_fetched_ahead_secret"

#: Seed 3's world, told every type as the replays' is: ``subscribe`` emits customer.created,
#: customer.subscription.created, invoice.created, invoice.paid (and its payment's own
#: charge.succeeded and payment_intent.succeeded), customer.subscription.updated (v2 active);
#: ``fail_renewal`` invoice.created, invoice.payment_failed (and its intent's
#: payment_intent.payment_failed), customer.subscription.updated (v3 past_due); ``renew`` the
#: next (v4 active). The steps find their events' numbers by type (`_numbers`).
SEED = 3


def _numbers(actions: list[tuple[str, int | None]]) -> tuple[list[str], list[int]]:
    """The types of the events `actions` emit in seed 3's world told every type, and the numbers
    of its ``customer.subscription.updated``, oldest first."""
    from hookproof.scenarios.world_ops import apply_action
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.world import World

    world = World(SEED)
    stripe = get_profile("stripe")
    world.sent_only(lambda t: stripe.provider_type(t) is not None)
    for action, index in actions:
        apply_action(world, action, index)
    types = [e.type for e in world.events]
    return types, [i for i, t in enumerate(types) if t == "customer.subscription.updated"]


_TYPES, (_ACTIVE, _PAST_DUE) = _numbers([("subscribe", None), ("fail_renewal", 0)])
#: The failed renewal's invoice.created (the first event after the subscription's first update).
_FAILED_INVOICE = _ACTIVE + 1
#: The renewal (v4 active) is made but not delivered; the older v2 update arrives last: the
#: fetching receiver stores v4 ``active``, what the API serves.
FETCHED_AHEAD = [{"op": "emit", "action": "subscribe"}, {"op": "burst_related", "events": [0, 1, 2]},
                 {"op": "emit", "action": "fail_renewal", "object": 0},
                 {"op": "burst_related", "events": [_FAILED_INVOICE, _PAST_DUE]},
                 {"op": "emit", "action": "renew", "object": 0}, {"op": "deliver", "event": _ACTIVE}]
#: No renewal: nothing the API could serve is ``active`` after v3 ``past_due``.
OLDER_AFTER_NEWER = [{"op": "emit", "action": "subscribe"}, {"op": "emit", "action": "fail_renewal", "object": 0},
                     {"op": "deliver", "event": _PAST_DUE}, {"op": "deliver", "event": _ACTIVE}]


def test_the_schedules_name_the_events_they_mean() -> None:
    assert _TYPES[:3] == ["customer.created", "customer.subscription.created", "invoice.created"]
    assert _TYPES[_FAILED_INVOICE] == "invoice.created" and _ACTIVE < _FAILED_INVOICE < _PAST_DUE
    assert (_ACTIVE, _PAST_DUE) == (6, 10)  # the invoices' payments' own events among them


def _replay(tmp_path: Path, receiver: str, steps: list[dict[str, Any]]) -> str:
    schedule = tmp_path / f"{receiver}-schedule.json"
    schedule.write_text(json.dumps({"format": SCHEDULE_FORMAT, "seed": SEED, "events": [], "findings": [],
                                    "steps": steps}), encoding="utf-8")
    config = subscription_config(tmp_path, receiver, SECRET)
    result = CliRunner().invoke(app, ["replay", str(schedule), "--config", str(config)])
    assert result.exit_code in (0, 1), result.output
    return str(result.output)


@pytest.mark.slow
def test_a_fetching_receiver_that_stored_what_the_api_served_is_not_regressed(tmp_path: Path) -> None:
    output = _replay(tmp_path, "fetch_state", FETCHED_AHEAD)
    assert "no finding: the schedule did not reproduce" in output, output


@pytest.mark.slow
def test_the_fetching_receiver_passes_an_older_event_after_a_newer_one(tmp_path: Path) -> None:
    output = _replay(tmp_path, "fetch_state", OLDER_AFTER_NEWER)
    assert "no finding: the schedule did not reproduce" in output, output


@pytest.mark.slow
def test_a_receiver_writing_each_events_status_still_regresses(tmp_path: Path) -> None:
    started = int(time.time())
    output = _replay(tmp_path, "blind_overwrite", OLDER_AFTER_NEWER)
    ended = time.time()
    assert "finding: regressed" in output, output
    # the failed renewal happens at the period's end, 30 days after the subscription started, so the
    # two events carry different created seconds (each example's ids are fresh: their tails differ
    # from run to run); the replay's clock starts at the second its world is made, and the
    # subscription is made a second later
    found = re.search(r"went back from past_due \(event evt_28zYU49cD6o5pPTXRe\w+, customer\.subscription\.updated, "
                      r"created (\d+)\) to active \(event evt_DbpnIrSLeZBoBi4b7u\w+, customer\.subscription\."
                      r"updated, created (\d+)\)\n", output)
    assert found is not None, output
    past_due, active = int(found[1]), int(found[2])
    assert started + 1 <= active <= int(ended) + 1 and past_due - active == 30 * 86400, output
