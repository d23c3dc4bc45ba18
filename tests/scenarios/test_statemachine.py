"""The state machine over delivery schedules: rules, replay, and the reference zoo.

The zoo tests are the issue's bar: with 200 examples each broken receiver is found and
shrunk to at most 4 delivery steps, and replaying the saved schedule reproduces the
finding; the correct receivers survive the same search (`SEARCH_EXAMPLES`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import Phase

from examples.receivers.pool import ReceiverPool
from hookproof.scenarios.statemachine import (
    Step,
    explore,
    format_steps,
    legal_actions,
    load_schedule,
    replay,
    write_schedule,
)
from hookproof.simulator.server.state import ServerState
from hookproof.simulator.world import World


@pytest.fixture
def provider() -> ServerState:
    return ServerState()


def pool(name: str, tmp_path: Path, provider: ServerState) -> ReceiverPool:
    return ReceiverPool(name, tmp_path, provider_state=provider)


def test_the_world_decides_what_is_legal_next() -> None:
    world = World(1)
    assert legal_actions(world) == [("subscribe", None), ("pay", None), ("subscribe_incomplete", None),
                                    ("checkout", None)]
    sub = world.subscribe(world.event(world.create_customer()).object_id)
    assert ("renew", 0) in legal_actions(world) and ("cancel", 0) in legal_actions(world)
    world.cancel(sub)
    assert not any(a in ("renew", "cancel", "fail_renewal") for a, _ in legal_actions(world))


def test_checkout_is_an_operation_of_the_billing_world() -> None:
    """A card session is paid at once; a delayed-method session completes unpaid and its payment then
    succeeds or fails, once (Stripe's "Fulfill orders" guide); a subscription-mode session
    completes paid once its subscription's first invoice is (Stripe's subscriptions guide)."""
    from hookproof.scenarios.world_ops import apply_action
    from hookproof.simulator.errors import WorldError

    world = World(3)
    for _ in range(5):  # card, delayed, a plan, card, delayed
        apply_action(world, "checkout", None)
    sessions = world.objects("checkout.session")
    assert [(world.peek(s)["mode"], world.peek(s)["payment_status"]) for s in sessions] == [
        ("payment", "paid"), ("payment", "unpaid"), ("subscription", "paid"), ("payment", "paid"),
        ("payment", "unpaid")]
    plan = world.peek(sessions[2])
    assert world.peek(plan["subscription"])["status"] == "active" and world.peek(plan["invoice"])["status"] == "paid"
    legal = legal_actions(world)
    assert [a for a in legal if a[0] in ("settle_delayed", "fail_delayed")] == [
        ("settle_delayed", 1), ("fail_delayed", 1), ("settle_delayed", 4), ("fail_delayed", 4)]
    apply_action(world, "settle_delayed", 1)
    apply_action(world, "fail_delayed", 4)
    assert [world.peek(s)["payment_status"] for s in sessions] == ["paid", "paid", "paid", "paid", "unpaid"]
    assert not any(a[0] in ("settle_delayed", "fail_delayed") for a in legal_actions(world))
    with pytest.raises(WorldError, match="no pending delayed payment"):
        apply_action(world, "settle_delayed", 4)
    assert [e.type for e in world.events if e.type.startswith("checkout.session.async")] == [
        "checkout.session.async_payment_succeeded", "checkout.session.async_payment_failed"]


def test_incomplete_expired_and_unpaid_are_operations_of_the_billing_world() -> None:
    """A first payment that fails leaves a subscription incomplete, which may expire
    (incomplete_expired, for good); a past_due one may be marked unpaid, and paid again."""
    from hookproof.scenarios.world_ops import apply_action

    world = World(2)
    apply_action(world, "subscribe_incomplete", None)
    apply_action(world, "subscribe", None)
    assert [world.peek(s)["status"] for s in world.objects("subscription")] == ["incomplete", "active"]
    legal = legal_actions(world)
    assert ("expire_incomplete", 0) in legal and ("cancel", 0) not in legal and ("mark_unpaid", 1) not in legal
    apply_action(world, "expire_incomplete", 0)
    assert not [a for a, i in legal_actions(world) if i == 0 and a != "refund"]  # nothing more happens to it
    apply_action(world, "fail_renewal", 1)
    assert ("mark_unpaid", 1) in legal_actions(world)
    apply_action(world, "mark_unpaid", 1)
    assert [world.peek(s)["status"] for s in world.objects("subscription")] == ["incomplete_expired", "unpaid"]
    invoice = world.objects("invoice").index(world.peek(world.objects("subscription")[1])["latest_invoice"])
    apply_action(world, "retry_invoice", invoice)  # a later payment makes it active
    assert world.peek(world.objects("subscription")[1])["status"] == "active"
    assert {e.status for e in world.events if e.type == "customer.subscription.updated"} >= {
        "incomplete", "incomplete_expired", "past_due", "unpaid", "active"}


def test_steps_round_trip_through_the_schedule_file(tmp_path: Path, provider: ServerState) -> None:
    steps = [Step("emit", action="pay"), Step("deliver", event=1), Step("redeliver", event=1, mutation="reserialize"),
             Step("advance_clock", seconds=2), Step("burst", event=1, copies=3)]
    receivers = pool("inbox_sync", tmp_path, provider)
    found = replay(receivers.target(), steps, 5, provider_state=provider)
    receivers.close()
    assert found is None
    assert [Step.from_dict(s.to_dict()) for s in steps] == steps


PLANTED_GOLDEN = """\
replay seed 11
 1. emit pay -> #0 customer.created, #1 payment_intent.succeeded, #2 charge.succeeded
 2. deliver #1 payment_intent.succeeded -> acked 200
 3. redeliver #1 payment_intent.succeeded (transport-fields) -> acked 200
finding: duplicated (step)
schedule:
 1. emit pay
 2. deliver #1 payment_intent.succeeded
 3. redeliver #1 payment_intent.succeeded (transport-fields)
 4. teardown: deliver everything pending, settle, check"""


def test_golden_reproducer_of_a_planted_fault(tmp_path: Path, provider: ServerState) -> None:
    """no_dedupe (the planted fault: no processed-events table) and a redelivery."""
    steps = [Step("emit", action="pay"), Step("deliver", event=1),
             Step("redeliver", event=1, mutation="transport-fields")]
    lines = ["replay seed 11"]
    types = ["customer.created", "payment_intent.succeeded", "charge.succeeded"]

    def on_step(step: Step, note: str) -> None:
        from hookproof.scenarios.statemachine import format_step

        lines.append(f"{len(lines):>2}. {format_step(step, types)} -> {note}")

    receivers = pool("no_dedupe", tmp_path, provider)
    target = receivers.target()
    found = replay(target, steps, 11, provider_state=provider, on_step=on_step)
    receivers.close()
    assert found is not None
    lines.append(f"finding: {found.findings[0].check_id} ({found.phase})")
    lines.append("schedule:")
    lines += format_steps(found.steps, found.event_types)
    assert "\n".join(lines) == PLANTED_GOLDEN
    path = write_schedule(found, tmp_path / "s.json", target=target.describe, profile="stripe")
    seed, loaded, doc = load_schedule(path)
    assert (seed, loaded) == (11, steps)
    assert doc["events"][:3] == types and json.loads(path.read_text())["findings"][0]["check_id"] == "duplicated"


#: Examples of every search here. The broken receivers are each found within this many, so
#: a correct receiver surviving as many has faced a search that finds every fault of the
#: zoo; 500 (the earlier bar) cost about 11 of this file's 13 minutes and proved nothing more.
SEARCH_EXAMPLES = 200

# receiver -> checks that may report it (the fault's signature)
BROKEN = {
    "no_dedupe": {"duplicated"},
    "blind_overwrite": {"regressed", "stale"},
    "timestamp_seconds_order": {"regressed", "stale"},
    "dedupe_by_body_hash": {"duplicated"},
    "check_then_insert": {"duplicated"},
    "fulfil_check_then_insert": {"duplicated"},  # only its checkout fulfilments race: explore's checkout actions
}
FAST = {"no_dedupe"}
#: Delivering steps a shrunk finding may keep: 4, and one more when the schedule races copies
#: or states (``burst``, ``burst_related``): a shrink candidate counts only if its race recurs,
#: so a schedule found through a race can keep a step a deterministic one sheds (a full run
#: once left blind_overwrite's at 5: two identical bursts, each needed for the race to recur).
SHRUNK_STEPS, RACED_SHRUNK_STEPS = 4, 5
RACE_OPS = frozenset({"burst", "burst_related"})
#: Replays of a raced finding before its reproduction counts as failed (a full CI run once
#: missed blind_overwrite's overlapping writes on its single replay).
RACED_REPLAYS = 10


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in FAST else (pytest.mark.slow,)) for n in BROKEN])
def test_explore_finds_and_shrinks_each_broken_receiver(name: str, tmp_path: Path, provider: ServerState) -> None:
    receivers = pool(name, tmp_path, provider)
    target = receivers.target()
    try:
        result = explore(target, max_examples=SEARCH_EXAMPLES, seed=20240601, provider_state=provider)
        failure = result.failure
        assert failure is not None, f"{name}: no finding in {result.examples} examples"
        checks = {f.check_id for f in failure.findings}
        assert checks & BROKEN[name], (name, failure.summary())
        raced = any(step.op in RACE_OPS for step in failure.steps)
        assert failure.delivery_steps <= (RACED_SHRUNK_STEPS if raced else SHRUNK_STEPS), \
            "\n".join(format_steps(failure.steps, failure.event_types))
        print(name, "->", failure.summary(), *format_steps(failure.steps, failure.event_types), sep="\n  ")
        # A raced schedule's interleaving differs from run to run: replayed as a user is told to
        # (`hookproof replay --repeats N`), until it reproduces; a deterministic one, once.
        for _ in range(RACED_REPLAYS if raced else 1):
            again = replay(target, failure.steps, failure.seed, provider_state=provider)
            if again is not None:
                break
        assert again is not None and {f.check_id for f in again.findings} & checks
    finally:
        receivers.close()


#: Seeds besides the zoo's: Hypothesis's draws for one seed also depend on the integer
#: constants of every local module loaded so far (it draws from them now and then), so a
#: seed's search differs between a run of one test and a full run. The re-serialized
#: duplicate must be found whatever the draws.
OTHER_SEEDS = (1, 2, 3)


@pytest.mark.slow
@pytest.mark.parametrize("seed", OTHER_SEEDS)
def test_a_reserialized_duplicate_is_found_whatever_the_seed(seed: int, tmp_path: Path,
                                                              provider: ServerState) -> None:
    """dedupe_by_body_hash is only caught by a redelivery with other body bytes (a
    re-serialized duplicate) of an event with an effect: the search draws one in time."""
    receivers = pool("dedupe_by_body_hash", tmp_path, provider)
    try:
        result = explore(receivers.target(), max_examples=SEARCH_EXAMPLES, seed=seed, provider_state=provider)
    finally:
        receivers.close()
    assert result.failure is not None, f"seed {seed}: no finding in {result.examples} examples"
    assert {f.check_id for f in result.failure.findings} == {"duplicated"}
    assert any(s.op == "redeliver" and s.mutation == "reserialize" for s in result.failure.steps)


@pytest.mark.parametrize(("name", "expected"), [("fetch_state", set()), ("inbox_sync", set()),
                                                ("blind_overwrite", {"regressed"})])
def test_an_unpaid_subscription_paid_again_is_judged_like_any_state(name: str, expected: set[str], tmp_path: Path,
                                                                   provider: ServerState) -> None:
    """A renewal fails (past_due), the dunning gives up (unpaid), a later payment makes it
    active; the unpaid update arrives last: the correct receivers stay active, one that
    writes whatever status arrives goes back to unpaid."""
    steps = [Step("emit", action="subscribe"), Step("emit", action="fail_renewal", object=0),
             Step("emit", action="mark_unpaid", object=0), Step("emit", action="retry_invoice", object=1)]
    from hookproof.scenarios.world_ops import apply_action

    receivers = pool(name, tmp_path, provider)
    try:
        target = receivers.target()
        world = World(5)
        target.tell(world)  # the events the replay's world emits (a paid invoice's charge and intent too)
        for step in steps:
            apply_action(world, step.action or "", step.object)
        statuses = [e.status for e in world.events if e.object_type == "subscription"]
        assert statuses[-2:] == ["unpaid", "active"] and "past_due" in statuses
        unpaid = next(i for i, e in enumerate(world.events) if e.status == "unpaid")
        schedule = [*steps, *(Step("deliver", event=i) for i in range(len(world.events)) if i != unpaid),
                    Step("deliver", event=unpaid)]
        result = replay(target, schedule, 5, provider_state=provider)
    finally:
        receivers.close()
    checks = set() if result is None else {f.check_id for f in result.findings}
    assert checks >= expected and (not checks) == (not expected), result.summary() if result else ""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["inbox_sync", "inbox_queue", "fetch_state", "downstream_keyed"])
def test_correct_receivers_survive_the_search(name: str, tmp_path: Path, provider: ServerState) -> None:
    """Each survives the search the broken receivers are found by; its examples (each a `Session`)
    are kept to say what the search drew (`_every_example_starts_from_an_event_and_reserializes_what_can_show`,
    `_explore_draws_incomplete_and_expired_subscriptions`)."""
    from hookproof.scenarios import session as session_module

    seen: list[session_module.Session] = []
    original = session_module.Session.__init__

    def recording(self: session_module.Session, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)
        seen.append(self)

    receivers = pool(name, tmp_path, provider)
    with pytest.MonkeyPatch.context() as patch:
        if name in ("inbox_sync", "fetch_state"):
            patch.setattr(session_module.Session, "__init__", recording)
        try:
            result = explore(receivers.target(), max_examples=SEARCH_EXAMPLES, seed=7, provider_state=provider)
        finally:
            receivers.close()
    assert result.failure is None, result.failure.summary() if result.failure else ""
    assert result.error is None
    assert result.examples >= SEARCH_EXAMPLES
    assert len(seen) == (result.examples if name in ("inbox_sync", "fetch_state") else 0)
    if name == "inbox_sync":
        _every_example_starts_from_an_event_and_reserializes_what_can_show(seen)
    if name == "fetch_state":  # it keeps subscription states
        _explore_draws_incomplete_and_expired_subscriptions(seen)


def _every_example_starts_from_an_event_and_reserializes_what_can_show(seen: list[Any]) -> None:
    """The two reasons a body-hash dedupe went unfound in some runs: examples that only moved
    the clock (swarm testing had turned `emit` off), and a re-serialized redelivery drawn in
    about one step in twenty. Every example now begins with an emit, and the re-serialized
    redelivery is a rule of its own over events with an effect or a state."""
    assert all(x.steps and x.steps[0].op == "emit" for x in seen)
    reserialized = [x.events[s.event] for x in seen for s in x.steps
                    if s.op == "redeliver" and s.mutation == "reserialize" and s.event is not None]
    assert reserialized
    assert all(e.business_key is not None or e.stateful for e in reserialized)
    # Stripe's API never hides an object an event names (its 404 is "no such object"): faults are 5xx
    faults = [s.status for x in seen for s in x.steps if s.op == "api_fault"]
    assert faults and set(faults) <= {500, 503}


def _explore_draws_incomplete_and_expired_subscriptions(seen: list[Any]) -> None:
    """explore's world operations start subscriptions whose first payment fails and let them
    expire, and deliver their events, to a receiver that keeps subscription states (which
    survives them). (`mark_unpaid` needs a past_due subscription first, which a search draws
    rarely: `test_an_unpaid_subscription_paid_again_is_judged_like_any_state` walks it.)"""
    drawn = {s.action for x in seen for s in x.steps if s.op == "emit"}
    assert {"subscribe_incomplete", "expire_incomplete"} <= drawn
    delivered = set()
    for x in seen:  # the subscriptions' states the receiver was sent
        sent = {a.event_id for a in x.history.attempts()}
        delivered |= {e.status for e in x.world.events if e.id in sent and e.object_type == "subscription"}
    assert {"incomplete", "incomplete_expired"} <= delivered


def test_correct_receiver_survives_a_short_run(tmp_path: Path, provider: ServerState) -> None:
    receivers = pool("inbox_sync", tmp_path, provider)
    try:
        result = explore(receivers.target(), max_examples=30, seed=3, provider_state=provider)
    finally:
        receivers.close()
    assert result.failure is None and result.steps > 0


def test_a_search_stopped_while_shrinking_keeps_its_finding(tmp_path: Path, provider: ServerState) -> None:
    """The run's deadline (a KeyboardInterrupt) landing while a finding shrinks must not lose
    it: the result holds the smallest failing schedule found so far, and says it was stopped."""
    receivers = pool("no_dedupe", tmp_path, provider)
    tried: list[int] = []

    def stop_once_shrinking(examples: int, attempts: int, shrunk: int) -> None:
        if shrunk:
            tried.append(shrunk)
            if len(tried) == 2:
                raise KeyboardInterrupt

    try:
        result = explore(receivers.target(), max_examples=SEARCH_EXAMPLES, seed=20240601, provider_state=provider,
                         on_example=stop_once_shrinking)
        assert result.interrupted and result.failure is not None
        assert "duplicated" in {f.check_id for f in result.failure.findings}
        assert result.error == ("shrinking was stopped after 2 smaller schedule(s) tried: the schedule is the "
                                "smallest failing one found so far")
        again = replay(receivers.target(), result.failure.steps, result.failure.seed, provider_state=provider)
        assert again is not None and "duplicated" in {f.check_id for f in again.findings}
    finally:
        receivers.close()


@pytest.mark.parametrize(("budget", "seconds", "tried"), [(3, 60.0, 3), (300, 0.0, 1)])
def test_hypothesis_s_shrink_stops_at_its_budget(budget: int, seconds: float, tried: int, tmp_path: Path,
                                                 provider: ServerState, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new user's search found a duplicate in 5 s and Hypothesis then shrank it for 275 s:
    its shrink stops after `SHRINK_EXAMPLES` schedules or `SHRINK_SECONDS`, the finding stands
    (a whole run, not an interrupted one), its steps are deleted next, and the note says so."""
    from hookproof.scenarios import statemachine

    monkeypatch.setattr(statemachine, "SHRINK_EXAMPLES", budget)
    monkeypatch.setattr(statemachine, "SHRINK_SECONDS", seconds)
    receivers = pool("no_dedupe", tmp_path, provider)
    heard: list[tuple[int, int]] = []  # (examples, shrunk): the step deletions after it are heard too
    try:
        result = explore(receivers.target(), max_examples=SEARCH_EXAMPLES, seed=20240601, provider_state=provider,
                         on_example=lambda examples, attempts, shrunk: heard.append((examples, shrunk)))
    finally:
        receivers.close()
    assert result.failure is not None and not result.interrupted
    assert "duplicated" in {f.check_id for f in result.failure.findings}
    found = next(examples for examples, shrunk in heard if shrunk) - 1  # the example that found it
    assert result.examples == found + tried, heard
    assert result.error is not None and re.fullmatch(
        rf"Hypothesis's shrink stopped after {tried} smaller schedule\(s\) in \d+ s \(at most {budget} or "
        rf"{seconds:.0f} s\); the schedule's steps were then deleted one at a time", result.error), result.error


def test_a_search_stopped_before_any_finding_is_interrupted(tmp_path: Path, provider: ServerState) -> None:
    receivers = pool("inbox_sync", tmp_path, provider)

    def stop(examples: int, attempts: int, shrunk: int) -> None:
        if examples == 3:
            raise KeyboardInterrupt

    try:
        with pytest.raises(KeyboardInterrupt):
            explore(receivers.target(), max_examples=SEARCH_EXAMPLES, seed=5, provider_state=provider, on_example=stop)
    finally:
        receivers.close()


def _flaky_searches(monkeypatch: pytest.MonkeyPatch, runs: list[int]) -> list[tuple[int | None, int]]:
    """Make each search Hypothesis runs end in FlakyStrategyDefinition (a receiver that answered
    a replayed example differently) after the next number of examples in `runs` (the last
    search, past `runs`, is left alone). Returns the (seed, max_examples) each search got."""
    import hypothesis.stateful
    from hypothesis import settings as hypothesis_settings
    from hypothesis.errors import FlakyStrategyDefinition

    real = hypothesis.stateful.run_state_machine_as_test
    searches: list[tuple[int | None, int]] = []

    def flaky(machine: Any, *, settings: Any = None) -> None:
        searches.append((getattr(machine, "_hypothesis_internal_use_seed", None), settings.max_examples))
        if len(searches) > len(runs):
            return real(machine, settings=settings)
        if runs[len(searches) - 1]:
            real(machine, settings=hypothesis_settings(settings, max_examples=runs[len(searches) - 1],
                                                       phases=[Phase.generate]))
        raise FlakyStrategyDefinition("the receiver answered a replayed example differently")

    monkeypatch.setattr(hypothesis.stateful, "run_state_machine_as_test", flaky)
    return searches


def test_a_search_hypothesis_cannot_replay_begins_again_with_a_fresh_seed(tmp_path: Path, provider: ServerState,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """FlakyStrategyDefinition before any finding is not the end of the search: the examples
    left of the budget are searched with a fresh seed, and the result says how often."""
    searches = _flaky_searches(monkeypatch, [6, 5])
    receivers = pool("inbox_sync", tmp_path, provider)
    try:
        result = explore(receivers.target(), max_examples=20, seed=3, provider_state=provider)
    finally:
        receivers.close()
    assert result.failure is None and not result.cut_short
    assert result.restarts == 2
    assert len(searches) == 3 and searches[0] == (3, 20)
    assert 0 < searches[2][1] < searches[1][1] <= 20 - 6  # the rest of the budget, each time
    assert len({seed for seed, _ in searches}) == 3  # a fresh seed each time
    assert result.examples >= 20
    assert result.error == ("the receiver answered a replayed example differently (timing), so Hypothesis could not "
                            f"replay it; the search began again with a fresh seed 2 time(s), {result.examples} "
                            "example(s) in all")


def test_a_search_that_cannot_go_on_is_cut_short_not_passed(tmp_path: Path, provider: ServerState,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A new beginning that runs no example ends the search short of its budget: cut short,
    which the report makes unknown, not a pass."""
    from hookproof.commands.explore import machine_report

    _flaky_searches(monkeypatch, [6, 0, 0, 0])
    receivers = pool("inbox_sync", tmp_path, provider)
    try:
        result = explore(receivers.target(), max_examples=20, seed=3, provider_state=provider)
    finally:
        receivers.close()
    assert result.failure is None and result.cut_short and result.restarts == 1
    assert 6 <= result.examples < 20
    assert result.error == (f"the search was cut short after {result.examples} of 20 example(s): the receiver answered a replayed "
                            "example differently (timing), so Hypothesis could not replay it; the search began "
                            "again with a fresh seed 1 time(s), and the last search ran no new example")
    report = machine_report(result, "in-process")
    assert (report.verdict, report.reason) == ("unknown", result.error)
