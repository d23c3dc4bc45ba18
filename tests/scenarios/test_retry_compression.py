"""Once the receiver has rejected valid events, a scenario's retry schedules share one wall-time
budget (`run.retry_budget_s`): each delivery sent one after another is spread over
max(floor, budget / deliveries), the provider's count and order kept. Against receivers over
HTTP on 127.0.0.1: one answering 400 to everything, and a correct one that answers 503 for
its first second of each event (a transient rejecter), which the floor keeps from being
judged lost."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest

from examples.receivers import load
from hookproof.receivers import ReceiverConfig, receiver_of
from hookproof.scenarios.catalog import Context, NotApplicable, Phase, Plan, Scenario, effect_events
from hookproof.scenarios.observations import Observation
from hookproof.scenarios.observers import observation_from_data
from hookproof.scenarios.runner import RETRY_FLOOR_S, Runner
from hookproof.simulator.delivery import History, Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World
from tests.examples.serving import serve_app

SECRET = "whsec_retry_compression_0123456789"
ACCOUNT = "acct_retrycompress0001"
STRIPE = get_profile("stripe")
RETRIES = len(STRIPE.retry_schedule_s)
#: Stripe's ten retries over 28.7 s per delivery (as chaos scenarios space them): the budget binds.
TIME_SCALE = 1e-4

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def _one_by_one(ctx: Context, w: World) -> Plan | NotApplicable:
    """The first six events of the effect story, each in a phase of its own: six deliveries one
    after another."""
    return Plan(w, tuple(Phase((e,)) for e in effect_events(ctx, w)[:6]))


#: judged on ``lost`` only: a 503 is a server error whatever follows (``no_server_error``'s business)
ONE_BY_ONE = Scenario("one-by-one", "Six events one after another", "Each event is delivered after the last.",
                      ("lost",), ("transient-vs-permanent",), _one_by_one)


async def _answer(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def rejects_all(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    """Answers 400 to every request."""
    if scope["type"] != "http":
        return
    await _body(receive)
    await _answer(send, 400, b"bad")


def busy_at_first(app: Any, busy_s: float) -> Any:
    """`app` behind 503 for the first `busy_s` seconds after each event id is first seen."""
    first_seen: dict[str, float] = {}

    async def middleware(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        body = await _body(receive)
        event_id = str(json.loads(body or b"{}").get("id"))
        if time.monotonic() - first_seen.setdefault(event_id, time.monotonic()) < busy_s:
            return await _answer(send, 503, b"busy")
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, replay, send)

    return middleware


def _runner(url: str, observe: Callable[[], Observation], **kwargs: Any) -> Runner:
    return Runner(target=Target(url=url + "/webhooks"), profile=STRIPE, secrets=(SECRET,), observe=observe,
                  history=History(), account=ACCOUNT, seed=41, time_scale=TIME_SCALE,
                  settle_window_s=0.1, settle_interval_s=0.02, rejecting="an-earlier-scenario", **kwargs)


def _by_delivery(runner: Runner) -> dict[str, list[Any]]:
    deliveries: dict[str, list[Any]] = {}
    for a in sorted(runner.history.attempts("one-by-one"), key=lambda a: (a.delivery_id, a.attempt)):
        deliveries.setdefault(a.delivery_id, []).append(a)
    return deliveries


def test_a_scenario_s_deliveries_share_the_budget_same_count_and_order() -> None:
    """Six deliveries answered 400 share a 3 s budget: each spread over 0.5 s (not 28.7 s, and not
    3 s each as a per-delivery budget would), eleven tries each in order; the note says so."""
    with serve_app(rejects_all) as url:
        runner = _runner(url, lambda: observation_from_data({"effects": [], "states": []}, time.time(), observer="python"),
                         retry_budget_s=3.0, retry_floor_s=0.2)
        runner.run_one(ONE_BY_ONE, 0)
    deliveries = _by_delivery(runner)
    assert len(deliveries) == 6
    assert all([a.attempt for a in tries] == list(range(1, RETRIES + 2)) for tries in deliveries.values())
    scaled = 0.5 / sum(STRIPE.retry_schedule_s)
    assert runner.notes == [
        "retry schedule compressed from one-by-one on, because the receiver rejected valid events in "
        f"an-earlier-scenario: each delivery keeps the provider's {RETRIES} retries in order; a scenario's "
        "deliveries sent one after another share 3 s (run.retry_budget_s), each spread over the budget / their "
        "number but at least 0.2 s, instead of 28.7 s (time scale 0.0001); deliveries x span per scenario: "
        f"one-by-one 6 x 0.5 s (time scale {scaled:.3g})"]
    for tries in deliveries.values():  # each retry waited at least its compressed delay: spread, not squeezed
        gaps = [b.sent_at - a.sent_at for a, b in zip(tries, tries[1:])]
        assert all(gap >= delay * scaled - 0.01 for gap, delay in zip(gaps, STRIPE.retry_schedule_s)), gaps


def test_a_receiver_busy_for_a_second_is_not_lost_under_compression(tmp_path: Path) -> None:
    """A correct receiver answering 503 for the first second of each event: six deliveries sharing a
    3 s budget would get 0.5 s each, all their retries inside the busy second; the floor spreads each
    over 2 s, so every event is applied and nothing is called lost."""
    config = ReceiverConfig(db_url=f"sqlite:///{tmp_path / 'inbox.db'}", secrets=(SECRET,), account=ACCOUNT)
    app = load("inbox_sync").create_app(config)
    receiver = receiver_of(app)
    try:
        with serve_app(busy_at_first(app, 1.0)) as url:
            runner = _runner(url, lambda: observation_from_data(receiver.observe(), time.time(), observer="python"),
                             retry_budget_s=3.0)
            report = runner.run_one(ONE_BY_ONE, 0)
    finally:
        receiver.close()
    assert RETRY_FLOOR_S == 2.0
    assert f"one-by-one 6 x 2 s (the floor) (time scale {2 / sum(STRIPE.retry_schedule_s):.3g})" in runner.notes[0]
    deliveries = _by_delivery(runner)
    assert all(tries[0].status == 503 and tries[-1].status == 200 for tries in deliveries.values()), deliveries
    lost = next(c for c in report.checks if c.check_id == "lost")
    assert lost.verdict == "valid" and "not applicable" not in (lost.detail or ""), lost
    assert report.verdict == "pass", (report.reason, [(c.check_id, c.verdict, c.detail) for c in report.checks])


def test_the_chaos_scenarios_stretched_share_one_note() -> None:
    """`certify --chaos` printed the stretch note once per chaos scenario, six near-identical
    lines: one note now names each scenario stretched, once, with its own spans."""
    runner = _runner("http://127.0.0.1:9", lambda: Observation(effects=[]))
    assert runner._stretched("crash-after-ack", 1e-6, 1.44, 6.35) == pytest.approx(6.35 / 1.44 * 1e-6)
    runner._stretched("kill-during-processing", 1e-6, 2.0, 6.35)
    runner._stretched("crash-after-ack", 1e-6, 1.44, 6.35)
    assert runner.notes == [
        "retry schedules stretched to twice the receiver's longest start plus 1 s, as the provider's real schedule "
        "outlasts "
        "a kill's restart: crash-after-ack from 1.44 s to 6.35 s (time scale 4.41e-06), kill-during-processing "
        "from 2 s to 6.35 s (time scale 3.17e-06)"]


class _Started:
    """What `Runner.restart_outlast_s` reads of a nemesis: the receiver's longest start."""

    def __init__(self, longest_start_s: float) -> None:
        self.longest_start_s = longest_start_s


def test_a_chaos_schedule_outlasts_a_restart_slower_than_twice_the_first_start() -> None:
    """A Node receiver starting in 0.8 s restarted in 1.77 s under load, after the retries of a
    killed delivery compressed to twice its start (1.59 s) ran out: it was reported ``lost``.
    A chaos schedule now spans twice the longest start plus a second; none before a start."""
    runner = _runner("http://127.0.0.1:9", lambda: Observation(effects=[]))
    assert runner.restart_outlast_s() == 0.0
    runner.nemesis = _Started(0.8)
    assert runner.restart_outlast_s() == pytest.approx(2.6)
    assert runner.restart_outlast_s() > 1.77
