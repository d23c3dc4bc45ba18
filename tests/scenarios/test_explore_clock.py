"""explore's and replay's events are dated on the run's day.

A new user's trial: every Shopify delivery of `hookproof explore` carried
``X-Shopify-Triggered-At: 2026-01-01T00:00:03.79Z`` and an order ``updated_at`` of
``2025-12-31T19:00:03-05:00`` while the machine's clock said December: explore's and replay's
worlds started at a fixed instant, so a receiver comparing a webhook's timestamp with the current
time, as Shopify's "Best practices for webhooks" advises ("Manage delays",
shopify.dev/docs/apps/build/webhooks/best-practices), took every delivery for a year late. Each
example's world, and each replay's, now starts at the second it begins
(`schedules.clock_start_us`).

A schedule file records no clock, and needs none: where a world's clock starts changes its
events' times (and the period a Paddle ``dunning:`` key names), never which events an operation
makes, their ids, or the operations allowed next, so a schedule written before (the same
``hookproof-schedule/1``) replays the same story, dated on the replay's day.
"""

from __future__ import annotations

import json
import random
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from examples.receivers.pool import ReceiverPool
from hookproof.scenarios.explore_targets import Prepared, tell_world
from hookproof.scenarios.schedules import CLOCK_STEP_US, SCHEDULE_FORMAT, clock_start_us
from hookproof.scenarios.statemachine import explore, load_schedule, replay, write_schedule
from hookproof.scenarios.world_ops import new_world_of, ops_for
from hookproof.simulator.delivery import Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState, run_server
from tests.scenarios.test_explore_worlds import ProviderReceivers
from tests.support import read_body

#: How far ahead of the run an example's events may be dated: its clock moves a second at least
#: per operation (`world_ops.apply_action`), faster than the wall clock; none of these stories
#: renews a period.
AHEAD_S = 300
#: Where explore's clock started before: 2026-01-01T00:00:00Z.
OLD_START_US = 1_767_225_600 * 1_000_000


class Recorder:
    """An ASGI app passing each request to `app` after keeping its headers and body."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[dict[str, str], bytes]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        self.requests.append(({k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}, body))
        given = False

        async def again() -> Any:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, again, send)


def _recorded(prepared: Prepared, recorders: list[Recorder]) -> Prepared:
    recorder = Recorder(prepared.target.app)
    recorders.append(recorder)
    return Prepared(Target(app=recorder, path=prepared.target.path), prepared.observe, prepared.close)


def _within(seconds: float, started: int, ended: float, what: str) -> None:
    assert started <= seconds <= ended + AHEAD_S, (
        f"{what} is dated {datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat()}, the run "
        f"{datetime.fromtimestamp(started, tz=timezone.utc).isoformat()}")


def _triggered_at(value: str) -> float:
    """``X-Shopify-Triggered-At`` (RFC 3339, UTC, up to nine fractional digits) as unix seconds."""
    whole, _, fraction = value.rstrip("Z").partition(".")
    return datetime.fromisoformat(whole).replace(tzinfo=timezone.utc).timestamp() + float(f"0.{fraction or 0}")


def test_an_explore_search_sends_shopify_events_of_the_run_day(tmp_path: Path) -> None:
    """The trial's search, small: every delivery's ``X-Shopify-Triggered-At`` and its body's
    ``updated_at`` are of the run's time, not of 1 January 2026."""
    state = ServerState()
    recorders: list[Recorder] = []
    with run_server(state) as api:
        receivers = ProviderReceivers("shopify_app", tmp_path, api.url)
        target = receivers.target()
        opened = target.open
        target.open = lambda: _recorded(opened(), recorders)
        started = int(time.time())
        result = explore(target, max_examples=8, seed=20240601, provider_state=state)
        ended = time.time()
    assert result.failure is None and result.error is None, result.failure.summary() if result.failure else ""
    requests = [r for recorder in recorders for r in recorder.requests]
    assert result.acked > 0 and len(requests) >= result.acked
    stamped = 0
    for headers, body in requests:
        topic = headers["x-shopify-topic"]
        _within(_triggered_at(headers["x-shopify-triggered-at"]), started, ended, f"{topic}'s X-Shopify-Triggered-At")
        updated = json.loads(body).get("updated_at")
        if updated is not None:  # an order's, a customer's, the shop's: the shop's offset, whole seconds
            _within(datetime.fromisoformat(updated).timestamp(), started, ended, f"{topic}'s updated_at")
            stamped += 1
    assert stamped > 0


class RecordedPool(ReceiverPool):
    """Reference receivers whose every request is kept (`Recorder`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.recorders: list[Recorder] = []

    def _make(self) -> tuple[Any, Prepared]:
        receiver, prepared = super()._make()
        return receiver, _recorded(prepared, self.recorders)

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(body) for recorder in self.recorders for _, body in recorder.requests]


#: A schedule file as explore wrote it before its clock moved to the run's day (no clock in it:
#: the format never had one). Seed 5: ``pay`` emits customer.created, payment_intent.succeeded,
#: charge.succeeded; the payment delivered twice, a receiver without dedupe credits it twice.
OLD_FILE: dict[str, Any] = {
    "format": SCHEDULE_FORMAT, "seed": 5, "profile": "stripe", "target": "in-process reference receiver no_dedupe",
    "phase": "step", "events": ["customer.created", "payment_intent.succeeded", "charge.succeeded"],
    "steps": [{"op": "emit", "action": "pay"}, {"op": "deliver", "event": 1}, {"op": "redeliver", "event": 1}],
    "findings": [{"check_id": "duplicated", "key": "payment:pi_x", "message": "applied 2 times"}],
}


@pytest.mark.parametrize("written", ["before", "by-this-run"])
def test_a_replayed_schedule_sends_stripe_events_of_the_run_day(written: str, tmp_path: Path) -> None:
    """A schedule file written before the clock moved, or by this explore (`write_schedule`),
    replays its finding, each event's ``created`` of the replay's time."""
    path = tmp_path / "failing-schedule.json"
    path.write_text(json.dumps(OLD_FILE), encoding="utf-8")
    stripe = get_profile("stripe")

    def tell(world: Any) -> None:
        tell_world(world, lambda t: stripe.provider_type(t) is not None, None)

    pool = RecordedPool("no_dedupe", tmp_path)
    try:
        if written == "by-this-run":
            seed, steps, _ = load_schedule(path, tell=tell)
            first = replay(pool.target(), steps, seed)
            assert first is not None
            write_schedule(first, path, target="in-process reference receiver no_dedupe", profile="stripe")
            for recorder in pool.recorders:  # the pool keeps its receiver: forget the first replay's requests
                recorder.requests.clear()
        seed, steps, doc = load_schedule(path, tell=tell)
        assert doc["events"] == OLD_FILE["events"] and len(steps) == 3
        started = int(time.time())
        found = replay(pool.target(), steps, seed)
        ended = time.time()
    finally:
        pool.close()
    assert found is not None and {f.check_id for f in found.findings} == {"duplicated"}, found
    bodies = pool.bodies()
    assert [b["type"] for b in bodies] == ["payment_intent.succeeded", "payment_intent.succeeded"]
    for body in bodies:
        _within(body["created"], started, ended, f"{body['type']}'s created")
        _within(body["data"]["object"]["created"], started, ended, f"{body['type']}'s object's created")


#: (world kind, profile, priced operations) of every provider world explore drives.
KINDS = [("billing", "stripe", False), ("billing", "stripe", True), ("github", "github", False),
         ("mercadopago", "mercadopago", False), ("paddle", "paddle", False), ("shopify", "shopify", False)]


def _walk(kind: str, profile: str, priced: bool, seed: int, start_us: int) -> tuple[list[Any], list[Any]]:
    """A random walk of 30 of the world's operations (and clock moves), the same draws at any
    start: the operations allowed before each, and every event's type, ids, key, state, amount."""
    ops = ops_for(kind, priced=priced)
    world = new_world_of(kind, seed, start_us=start_us, step_us=CLOCK_STEP_US)
    sends = get_profile(profile)
    tell_world(world, lambda t: sends.provider_type(t) is not None, None)
    draws = random.Random(seed)
    allowed = []
    for _ in range(30):
        legal = ops.legal(world)
        allowed.append(legal)
        if not legal or draws.random() < 0.1:
            world.advance(draws.randint(1, 3))
            continue
        action, index = legal[draws.randrange(len(legal))]
        ops.apply(world, action, index)

    def key(k: str | None) -> str | None:  # Paddle's dunning key names its period by time
        return ":".join(k.split(":")[:2]) if k is not None and k.startswith("dunning:") else k

    events = [(e.type, e.id, e.object_id, key(e.business_key), e.status, e.version, e.amount) for e in world.events]
    return allowed, events


@pytest.mark.parametrize(("kind", "profile", "priced"), KINDS, ids=[f"{k}{'-priced' if p else ''}" for k, _, p in KINDS])
def test_a_world_tells_the_same_story_wherever_its_clock_starts(kind: str, profile: str, priced: bool) -> None:
    """Why a schedule needs no clock: at the old fixed start, at the run's, and on a leap day
    (a Paddle year's cycle ends on a calendar date), a walk of one seed allows the same
    operations and makes the same events, ids and keys."""
    starts = [OLD_START_US, clock_start_us(), 1_835_438_400 * 1_000_000]  # 2028-02-29T12:00:00Z
    for seed in range(1, 9):
        first = _walk(kind, profile, priced, seed, starts[0])
        assert first[1], f"seed {seed}: the walk made no events"
        for start in starts[1:]:
            assert _walk(kind, profile, priced, seed, start) == first, f"seed {seed}, start {start}"
