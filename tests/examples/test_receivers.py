"""The reference receivers: every one applies a genuine delivery, inbox_sync holds under real
concurrency (PostgreSQL and SQLite, over HTTP, in a subprocess), and each broken one fails
for its own reason, with exact counts.

fetch_state, downstream_keyed and fresh_idempotency_key run against the real provider
server (`simulator.server.run_server`: the Stripe-shaped API and the effect sink).
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

import httpx
import pytest
from sqlalchemy import create_engine, text

from examples.receivers import (
    BROKEN,
    COMPLIANCE_TWINS,
    CORRECT,
    FETCH,
    FULFILMENT_TWINS,
    PROVIDER_RECEIVERS,
    RECEIVERS,
    SCENARIO_TWINS,
    SINK,
    VARIANTS,
    load,
)
from hookproof.receivers import (
    EFFECTS_QUERY,
    STATE_QUERY,
    Receiver,
    ReceiverConfig,
    WebhookEvent,
    effect_of,
    receiver_of,
)
from hookproof.receivers.profiles import StripeVerifier
from hookproof.simulator.delivery import DeliveryResult, Dispatcher, History, Target
from hookproof.simulator.events import Event
from hookproof.simulator.faults import FaultPlan, Mutation, schedule
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.profiles.stripe import StripeProfile
from hookproof.simulator.server import ServerState, run_server
from hookproof.simulator.world.world import World
from tests.examples.serving import serve_app, wait_until
from tests.support import free_port

pytestmark = pytest.mark.timeout(60)

SECRET = "whsec_hookproof_examples_secret"
API_KEY = "sk_test_hookproof_examples"
ROOT = Path(__file__).resolve().parents[2]

#: Receivers whose effects go to the sink instead of their own tables.
SINK_RECEIVERS = SINK
#: Receivers that apply after answering (observe after they settle).
ASYNC_RECEIVERS = ("ack_before_persist", "inbox_queue")
#: Options that take the environment's faults out of a single genuine delivery.
CALM = {"mark_before_effect": {"ledger_lock_timeouts": 0}, "slow_then_record": {"effect_delay_s": 0.05}}


def of_type(world: World, event_type: str) -> list[Event]:
    return [e for e in world.events if e.type == event_type]


class Rig:
    """One receiver under test with the provider server it needs: the app, the sink, observations."""

    def __init__(self, app: Any, server: ServerState | None) -> None:
        self.app = app
        self.receiver = receiver_of(app)
        self.server = server

    def effects(self) -> list[tuple[str, int | None]]:
        if self.receiver.name in SINK_RECEIVERS and self.server is not None:
            return sorted((e.business_key, e.amount) for e in self.server.sink.records())
        return sorted((e["business_key"], e["amount"]) for e in self.receiver.observe()["effects"])

    def states(self) -> list[tuple[str, str, int]]:
        return sorted((s["object_id"], s["status"], s["version"]) for s in self.receiver.observe()["states"])


@contextmanager
def rig(name: str, tmp_path: Path, world: World, *, db_url: str | None = None, live: bool = False,
        profile: str = "stripe", secret: str = SECRET, **options: float) -> Iterator[Rig]:
    """Build receiver `name` on a fresh SQLite file (or `db_url`), with simulator.server when it needs one."""
    with ExitStack() as stack:
        api_base = sink_url = None
        server = None
        if name in FETCH or name in SINK_RECEIVERS:
            server = ServerState([world], api_keys=(API_KEY,))
            handle = stack.enter_context(run_server(server))
            api_base, sink_url = handle.api_base, handle.sink_url
        config = ReceiverConfig(
            db_url=db_url or f"sqlite:///{tmp_path / (name + '.db')}", profile=profile, secrets=(secret,), live=live,
            account=world.account, api_base=api_base, api_key=API_KEY, sink_url=sink_url,
            options={**CALM.get(name, {}), **options},
        )
        app = load(name).create_app(config)
        stack.callback(receiver_of(app).close)
        yield Rig(app, server)


async def deliver(target: Target, events: Sequence[Event], plan: FaultPlan = FaultPlan(), *,
                  profile: str = "stripe", secret: str = SECRET, max_attempts: int = 3) -> list[DeliveryResult]:
    """Deliver `events` under `plan` with hookproof's dispatcher."""
    async with Dispatcher(target, get_profile(profile), [secret], History(), max_attempts=max_attempts) as dispatcher:
        return await dispatcher.run(schedule(events, plan))


def statuses(results: Sequence[DeliveryResult]) -> list[int | None]:
    return [a.status for r in results for a in r.attempts]


def settle(r: Rig, name: str, expected: int) -> None:
    if name in ASYNC_RECEIVERS:
        wait_until(lambda: len(r.effects()) >= expected, what=f"{name} to apply {expected} effect(s)")


def genuine_events(world: World) -> tuple[list[Event], list[tuple[str, int | None]], list[tuple[str, str, int]]]:
    """A payment and the subscription's latest update, with the effect and state they must give."""
    pi = of_type(world, "payment_intent.succeeded")[0]
    sub = of_type(world, "customer.subscription.updated")[-1]
    effects = [(f"license:{pi.object_id}", pi.amount)]
    states = [(sub.object_id, "active", world.version(sub.object_id))]
    return [pi, sub], effects, states


# ---------------------------------------------------------------- every receiver, genuine


@pytest.mark.parametrize("name", RECEIVERS)
async def test_genuine_delivery_in_process(name: str, tmp_path: Path, world: World) -> None:
    events, effects, states = genuine_events(world)
    with rig(name, tmp_path, world) as r:
        results = await deliver(Target(app=r.app), events)
        if name == "reserialize_before_verify":  # its one fault: genuine deliveries fail verification
            assert statuses(results) == [400] * 6 and r.effects() == [] and r.states() == []
            return
        assert statuses(results) == [200, 200]
        settle(r, name, 1)
        assert r.effects() == effects
        wait_until(lambda: r.states() == states, what="the subscription state")


@pytest.mark.parametrize("name", RECEIVERS)
async def test_genuine_delivery_over_http(name: str, tmp_path: Path, world: World) -> None:
    events, effects, states = genuine_events(world)
    with rig(name, tmp_path, world) as r, serve_app(r.app) as url:
        results = await deliver(Target(url=url + "/webhooks"), events, max_attempts=1)
        assert httpx.get(url + "/healthz").json()["receiver"] == name
        if name == "reserialize_before_verify":
            assert statuses(results) == [400, 400]
            return
        assert statuses(results) == [200, 200]
        settle(r, name, 1)
        observed = httpx.get(url + "/hookproof/observe").json()
        if name not in SINK_RECEIVERS:
            assert sorted((e["business_key"], e["amount"]) for e in observed["effects"]) == effects
        assert sorted((s["object_id"], s["status"], s["version"]) for s in observed["states"]) == states
        assert r.effects() == effects


@pytest.mark.parametrize("name", CORRECT)
async def test_correct_receivers_hold_duplicates_reorder_and_bad_requests(name: str, tmp_path: Path) -> None:
    world = World(seed=11)
    customer = world.event(world.create_customer()).object_id
    pi = world.pay(customer)
    sub = world.subscribe(customer)
    charge = world.get(pi)["latest_charge"]
    world.refund(charge, 100)
    world.refund(charge)
    world.cancel(sub)
    money = [e for e in world.events if e.business_key]
    expected = sorted((e.business_key, e.amount) for e in money)
    sub_events = [e for e in world.events if e.object_id == sub]
    with rig(name, tmp_path, world) as r:
        target = Target(app=r.app)
        bad = await deliver(target, money[:1], FaultPlan(mutations=(Mutation.FORGED,)), max_attempts=1)
        bad += await deliver(target, money[:1], FaultPlan(mutations=(Mutation.STALE_TIMESTAMP,)), max_attempts=1)
        bad += await deliver(target, money[:1], FaultPlan(mutations=(Mutation.LIVEMODE_MISMATCH,)), max_attempts=1)
        bad += await deliver(target, money[:1], FaultPlan(mutations=(Mutation.FOREIGN_ACCOUNT,)), max_attempts=1)
        # forged and stale are refused; a wrong mode or account is refused, or acknowledged
        # and ignored (foreign_acked: what Stripe's docs advise); either way no effect
        assert statuses(bad) == ([400, 400, 200, 200] if name == "foreign_acked" else [400, 400, 400, 400])
        unknown = await deliver(target, of_type(world, "customer.created") + of_type(world, "invoice.created"))
        assert statuses(unknown) == [200, 200]
        ok = await deliver(target, money, FaultPlan(copies=3, mutations=(Mutation.RESERIALIZE,), mutate="retries"))
        ok += await deliver(target, sub_events, FaultPlan(order="reversed"))
        assert set(statuses(ok)) == {200}
        settle(r, name, len(expected))
        wait_until(lambda: r.states() == [(sub, "canceled", world.version(sub))], what="the final state")
        assert r.effects() == expected


# ------------------------------------------------------------------- real concurrency


@contextmanager
def subprocess_receiver(name: str, db_url: str, account: str, *extra: str) -> Iterator[str]:
    """``python -m examples.receivers.<name>`` on a free port; yields its base URL."""
    port = free_port()
    cmd = [sys.executable, "-m", f"examples.receivers.{name}", "--port", str(port), "--db", db_url,
           "--profile", "stripe", "--secret", SECRET, "--account", account, *extra]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    url = f"http://127.0.0.1:{port}"
    try:
        def healthy() -> bool:
            if proc.poll() is not None:
                raise AssertionError(f"{name} exited {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
            try:
                return httpx.get(url + "/healthz", timeout=1).status_code == 200
            except httpx.TransportError:
                return False
        wait_until(healthy, timeout_s=20, what=f"{name} to listen")
        yield url
    finally:
        proc.kill()
        proc.wait(timeout=10)


def sql_observe(db_url: str) -> tuple[list[tuple[str, int | None]], list[tuple[str, str, int]]]:
    """The two observer queries, exactly as hookproof's `sql` observer runs them."""
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            effects = sorted(tuple(r) for r in conn.execute(text(EFFECTS_QUERY)))
            states = sorted(tuple(r) for r in conn.execute(text(STATE_QUERY)))
    finally:
        engine.dispose()
    return effects, states  # type: ignore[return-value]


async def burst_against_inbox_sync(db_url: str, world: World) -> None:
    pi = of_type(world, "payment_intent.succeeded")[0]
    with subprocess_receiver("inbox_sync", db_url, world.account) as url:
        results = await deliver(Target(url=url + "/webhooks"), [pi], FaultPlan(copies=16, concurrency=16), max_attempts=1)
    assert statuses(results) == [200] * 16
    assert sql_observe(db_url)[0] == [(f"license:{pi.object_id}", pi.amount)]


async def test_inbox_sync_16_concurrent_duplicates_postgres(pg_db: str, world: World) -> None:
    await burst_against_inbox_sync(pg_db, world)


async def test_inbox_sync_16_concurrent_duplicates_sqlite(tmp_path: Path, world: World) -> None:
    await burst_against_inbox_sync(f"sqlite:///{tmp_path / 'inbox.db'}", world)


# ---------------------------------------------------------- the zoo, one fault each


async def test_no_dedupe_applies_each_copy(tmp_path: Path, world: World) -> None:
    pi = of_type(world, "payment_intent.succeeded")[:1]
    with rig("no_dedupe", tmp_path, world) as r:
        assert statuses(await deliver(Target(app=r.app), pi, FaultPlan(copies=3))) == [200, 200, 200]
        assert len(r.effects()) == 3


async def test_conflict_on_duplicate_answers_409(tmp_path: Path, world: World) -> None:
    pi = of_type(world, "payment_intent.succeeded")[:1]
    with rig("conflict_on_duplicate", tmp_path, world) as r:
        assert statuses(await deliver(Target(app=r.app), pi, FaultPlan(copies=2), max_attempts=1)) == [200, 409]
        assert len(r.effects()) == 1


async def test_check_then_insert_races_a_concurrent_pair(tmp_path: Path, world: World) -> None:
    pi = of_type(world, "payment_intent.succeeded")[:1]
    with rig("check_then_insert", tmp_path, world, fulfilment_call_s=0.2) as r:
        results = await deliver(Target(app=r.app), pi, FaultPlan(copies=2, concurrency=2))
        assert statuses(results) == [200, 200]
        assert len(r.effects()) == 2


async def test_dedupe_by_body_hash_applies_a_reserialized_retry(tmp_path: Path, world: World) -> None:
    pi = of_type(world, "payment_intent.succeeded")[:1]
    plan = FaultPlan(copies=2, mutations=(Mutation.RESERIALIZE,), mutate="retries")
    with rig("dedupe_by_body_hash", tmp_path, world) as r:
        assert statuses(await deliver(Target(app=r.app), pi, plan)) == [200, 200]
        assert len(r.effects()) == 2


async def test_dedupe_by_object_id_loses_the_second_partial_refund(tmp_path: Path) -> None:
    world = World(seed=3)
    customer = world.event(world.create_customer()).object_id
    charge = world.get(world.pay(customer, amount=900))["latest_charge"]
    world.refund(charge, 300)
    world.refund(charge)
    refunds = of_type(world, "charge.refunded")
    with rig("dedupe_by_object_id", tmp_path, world) as r:
        assert statuses(await deliver(Target(app=r.app), refunds)) == [200, 200]
        assert r.effects() == [(f"refund:{charge}:300", 300)]


async def test_mark_before_effect_loses_the_effect_after_a_transient_failure(tmp_path: Path, world: World) -> None:
    pi = of_type(world, "payment_intent.succeeded")[:1]
    with rig("mark_before_effect", tmp_path, world, ledger_lock_timeouts=1) as r:
        assert statuses(await deliver(Target(app=r.app), pi)) == [500, 200]
        assert r.effects() == []


async def test_blind_overwrite_revives_a_canceled_subscription(tmp_path: Path, world: World) -> None:
    sub = of_type(world, "customer.subscription.updated")[-1].object_id
    world.cancel(sub)
    late = of_type(world, "customer.subscription.deleted") + of_type(world, "customer.subscription.updated")[-1:]
    for name, status in (("blind_overwrite", "active"), ("inbox_sync", "canceled")):
        with rig(name, tmp_path, world) as r:
            await deliver(Target(app=r.app), late)
            assert [s[1] for s in r.states()] == [status], name


async def test_timestamp_seconds_order_drops_same_second_updates(tmp_path: Path) -> None:
    world = World(seed=5, step_us=1)  # every change within one second
    customer = world.event(world.create_customer()).object_id
    sub = world.subscribe(customer)
    world.cancel(sub)
    sub_events = [e for e in world.events if e.object_id == sub]
    assert len({e.created for e in sub_events}) == 1
    with rig("timestamp_seconds_order", tmp_path, world) as r:
        assert set(statuses(await deliver(Target(app=r.app), sub_events))) == {200}
        assert r.states() == [(sub, "active", 1)]  # truth: canceled


async def test_reserialize_before_verify_rejects_genuine_deliveries(tmp_path: Path, world: World) -> None:
    pi = of_type(world, "payment_intent.succeeded")[:1]
    with rig("reserialize_before_verify", tmp_path, world) as r:
        assert statuses(await deliver(Target(app=r.app), pi)) == [400, 400, 400]
        assert r.effects() == []


@pytest.mark.parametrize("name, mutation", [
    ("no_signature_check", Mutation.FORGED),
    ("no_signature_check", Mutation.MISSING_SIGNATURE),
    ("no_timestamp_tolerance", Mutation.STALE_TIMESTAMP),
    ("test_mode_applies", Mutation.LIVEMODE_MISMATCH),
    ("test_mode_applies", Mutation.FOREIGN_ACCOUNT),
])
async def test_accepts_what_must_be_refused(name: str, mutation: Mutation, tmp_path: Path, world: World) -> None:
    pi = of_type(world, "payment_intent.succeeded")[:1]
    with rig(name, tmp_path, world) as r:
        assert statuses(await deliver(Target(app=r.app), pi, FaultPlan(mutations=(mutation,)))) == [200]
        assert len(r.effects()) == 1


async def test_unknown_type_500(tmp_path: Path, world: World) -> None:
    unknown = of_type(world, "customer.created")
    with rig("unknown_type_500", tmp_path, world) as r:
        assert statuses(await deliver(Target(app=r.app), unknown)) == [500, 500, 500]


async def test_memory_dedupe_forgets_across_replicas(tmp_path: Path, world: World) -> None:
    pi = of_type(world, "payment_intent.succeeded")[:1]
    db = f"sqlite:///{tmp_path / 'shared.db'}"
    with rig("memory_dedupe", tmp_path, world, db_url=db) as one, rig("memory_dedupe", tmp_path, world, db_url=db) as two:
        assert statuses(await deliver(Target(app=one.app), pi, FaultPlan(copies=2))) == [200, 200]
        assert statuses(await deliver(Target(app=two.app), pi)) == [200]
        assert len(one.effects()) == 2


async def test_memory_dedupe_forgets_across_a_restart(tmp_path: Path, world: World) -> None:
    pi = of_type(world, "payment_intent.succeeded")[:1]
    db = f"sqlite:///{tmp_path / 'restart.db'}"
    for _ in range(2):
        with subprocess_receiver("memory_dedupe", db, world.account) as url:
            assert statuses(await deliver(Target(url=url + "/webhooks"), pi, max_attempts=1)) == [200]
    assert len(sql_observe(db)[0]) == 2


async def test_slow_then_record_applies_a_retry_sent_during_the_effect(tmp_path: Path, world: World) -> None:
    # Over real HTTP: the provider gives up after 0.2 s and retries while the 0.6 s effect runs.
    pi = of_type(world, "payment_intent.succeeded")[:1]
    with rig("slow_then_record", tmp_path, world, effect_delay_s=0.6) as r, serve_app(r.app) as url:
        results = await deliver(Target(url=url + "/webhooks"), pi, FaultPlan(sender_timeout_s=0.2), max_attempts=2)
        assert statuses(results) == [None, None]  # both attempts timed out on the provider's side
        wait_until(lambda: len(r.effects()) == 2, what="both effects")
        assert len(r.effects()) == 2


@pytest.mark.parametrize("name, applied", [("downstream_keyed", 1), ("fresh_idempotency_key", 2)])
async def test_sink_drops_the_answer_after_applying(name: str, applied: int, tmp_path: Path, world: World) -> None:
    pi = of_type(world, "payment_intent.succeeded")[:1]
    with rig(name, tmp_path, world) as r:
        assert r.server is not None
        r.server.sink.fault(f"license:{pi[0].object_id}", drop_times=1)
        assert statuses(await deliver(Target(app=r.app), pi)) == [200]
        assert len(r.effects()) == applied


async def test_ack_before_persist_loses_what_was_queued_at_a_crash(tmp_path: Path, world: World) -> None:
    pi = of_type(world, "payment_intent.succeeded")[:1]
    db = f"sqlite:///{tmp_path / 'ack.db'}"
    with rig("ack_before_persist", tmp_path, world, db_url=db) as r:
        r.receiver.queue.put(None)  # the worker stops, as it would when the process dies
        r.receiver._worker.join(timeout=5)
        assert statuses(await deliver(Target(app=r.app), pi)) == [200]
        assert r.receiver.queue.qsize() == 1 and r.effects() == []
    with rig("ack_before_persist", tmp_path, world, db_url=db) as restarted:
        assert restarted.effects() == []  # acknowledged, never applied, never resent


# ------------------------------------------------------------- strategies in detail


async def test_fetch_state_stores_the_providers_truth_not_the_payload(tmp_path: Path, world: World) -> None:
    old = of_type(world, "customer.subscription.updated")[-1]
    world.cancel(old.object_id)
    with rig("fetch_state", tmp_path, world) as r:
        assert statuses(await deliver(Target(app=r.app), [old])) == [200]
        assert r.states() == [(old.object_id, "canceled", world.version(old.object_id))]


async def test_inbox_queue_dead_letters_a_permanent_failure(tmp_path: Path, world: World) -> None:
    broken = WebhookEvent(id="evt_broken", type="charge.refunded", created=0, object={"id": "ch_x"})
    with rig("inbox_queue", tmp_path, world) as r:
        assert r.receiver.process(broken).status == 200
        wait_until(lambda: r.receiver.counts().get("dead") == 1, what="the dead letter")
        assert r.effects() == []


async def test_standard_webhooks_profile(tmp_path: Path, world: World) -> None:
    secret = get_profile("standard-webhooks").generate_secret(1)
    events, effects, states = genuine_events(world)
    with rig("inbox_sync", tmp_path, world, profile="standard-webhooks", secret=secret) as r:
        target = Target(app=r.app)
        kw: dict[str, Any] = {"profile": "standard-webhooks", "secret": secret}
        assert statuses(await deliver(target, events, FaultPlan(copies=2), **kw)) == [200] * 4
        assert statuses(await deliver(target, events[:1], FaultPlan(mutations=(Mutation.FORGED,)), max_attempts=1, **kw)) == [400]
        assert r.effects() == effects and r.states() == states


def test_business_keys_match_the_worlds_contract() -> None:
    world = World(seed=2)
    world.lifecycle()
    customer = world.event(world.create_customer()).object_id
    price = world.create_price(interval=None)
    world.complete_checkout(world.open_checkout(customer, price))
    session = world.open_checkout(customer, price, asynchronous=True)
    world.complete_checkout(session)
    world.settle_async_checkout(session)
    world.subscribe_through_checkout(customer, trial=True)  # provisions with nothing paid
    assert {e.business_key.split(":")[0] for e in world.events if e.business_key} >= {"provision", "fulfillment"}
    profile = StripeProfile()
    for event in world.events:
        effect = effect_of(StripeVerifier.from_event_object(profile.event_object(event)))
        got = (effect.business_key, effect.amount) if effect else None
        assert got == ((event.business_key, event.amount) if event.business_key else None), event.type


def test_registry_lists_every_module() -> None:
    modules = {p.stem for p in (ROOT / "examples" / "receivers").glob("*.py") if p.stem not in ("__init__", "pool")}
    assert modules == (set(RECEIVERS) | set(PROVIDER_RECEIVERS) | set(SCENARIO_TWINS) | set(COMPLIANCE_TWINS)
                       | set(FULFILMENT_TWINS) | set(VARIANTS))
    assert len(CORRECT) == 7 and len(BROKEN) == 30
    frameworks = {}
    for name in RECEIVERS:
        classes = [v for v in vars(load(name)).values()
                   if isinstance(v, type) and issubclass(v, Receiver) and v.name == name]
        assert len(classes) == 1, name
        frameworks[name] = classes[0].framework
    assert set(frameworks.values()) == {"fastapi", "flask"}
