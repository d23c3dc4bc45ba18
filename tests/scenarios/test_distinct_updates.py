"""`distinct-updates-same-object`: one object's successive events, in order, each acknowledged.

The plan on every profile with stateful objects is one object's events up to the first that
repeats an earlier one's type with a state a dedupe keyed by type and object would not show
(`updates_run`); the receiver's final state is compared with the provider's (``stale``) and,
when an event owes one, every effect (``lost``). A correct receiver passes; one that
deduplicates on the type and the object (or the object alone) fails ``stale``, even observed
through its states only (the miss this scenario closes: every other state scenario ends on
an event of a type the object had not had yet, which such a receiver still applies).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from examples.receivers import config as receiver_config
from hookproof.certify import certify
from hookproof.scenarios.business_keys import KeyMapping
from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable, Overlap, Plan, updates_run
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world

SCENARIO = CATALOG["distinct-updates-same-object"]
SECRET = "whsec_updates_" + "0" * 24

#: profile -> the provider's event types the plan sends, in order (seed 7).
RUNS: dict[str, list[str]] = {
    "stripe": ["customer.subscription.created"] + ["customer.subscription.updated"] * 3,
    "generic-hmac": ["customer.subscription.created"] + ["customer.subscription.updated"] * 3,
    "standard-webhooks": ["subscription.created"] + ["subscription.updated"] * 3,
    "svix": ["subscription.created"] + ["subscription.updated"] * 3,
    "github": ["issues.opened", "issues.labeled", "issues.closed", "issues.reopened", "issues.closed"],
    "mercadopago": ["payment.created"] + ["payment.updated"] * 3,
    "paddle": ["subscription.created", "subscription.activated"] + ["subscription.updated"] * 3,
    "shopify": ["orders/create", "orders/paid", "orders/updated", "orders/updated"],
}


def _plan(profile: str, **context: object) -> Plan | NotApplicable:
    prof = get_profile(profile)
    return SCENARIO.plan(Context(profile=prof, **context), new_world(prof.world, 7))  # type: ignore[arg-type]


def _type_and_object_dedupe(events: list[Event]) -> str | None:
    """The state a receiver keeping the first event of each type per object ends in."""
    seen: set[str] = set()
    shown = None
    for e in events:
        if e.type not in seen:
            seen.add(e.type)
            shown = e.status
    return shown


@pytest.mark.parametrize("profile", sorted(RUNS))
def test_each_profile_sends_one_objects_updates_up_to_a_repeated_type(profile: str) -> None:
    plan = _plan(profile)
    assert isinstance(plan, Plan), plan
    (phase,) = plan.phases
    prof = get_profile(profile)
    events = list(phase.events)
    assert [prof.provider_type(e.type) for e in events] == RUNS[profile]
    assert len({e.object_id for e in events}) == 1 and all(e.stateful for e in events)
    assert [e.version for e in events] == sorted(e.version for e in events)  # in order
    # each version once, but for one change's own events after the first (Paddle's subscription.activated
    # of subscription.created's version: developer.paddle.com/webhooks/simulator/subscription-created)
    assert all(a.version < b.version or not b.type.endswith((".created", ".updated")) for a, b in zip(events, events[1:]))
    assert events[-1].type in {e.type for e in events[:-1]}
    assert _type_and_object_dedupe(events) != events[-1].status  # such a receiver ends stale
    assert (phase.plan.copies, phase.plan.order, phase.race, phase.together) == (1, "emitted", False, False)
    for e in events:
        prof.envelope(e)  # the provider's own payload
    assert SCENARIO.overlap is Overlap.FRESH


def test_the_run_is_the_shortest_that_a_type_and_object_dedupe_gets_wrong() -> None:
    (base,) = [e for e in new_world("billing", 1).lifecycle() if e.stateful][:1]

    def story(*steps: tuple[str, str, str]) -> list[Event]:
        return [replace(base, id=f"evt_{i}", object_id=obj, type=typ, status=status, version=i + 1)
                for i, (obj, typ, status) in enumerate(steps)]

    def run(*steps: tuple[str, str, str]) -> list[str] | None:
        found = updates_run(story(*steps))
        return None if found is None else [e.id for e in found]

    assert run(("a", "created", "x"), ("a", "updated", "y"), ("a", "updated", "y")) is None  # no state change
    assert run(("a", "created", "x"), ("a", "updated", "y"), ("a", "created", "y")) is None  # what it shows
    assert run(("a", "created", "x"), ("a", "updated", "y"), ("a", "created", "x")) == ["evt_0", "evt_1", "evt_2"]
    assert run(("a", "created", "x"), ("a", "updated", "y"), ("a", "updated", "z"),
               ("a", "updated", "w")) == ["evt_0", "evt_1", "evt_2"]
    assert run(("a", "created", "x"), ("b", "created", "x"), ("b", "updated", "y"), ("a", "deleted", "z"),
               ("b", "updated", "z")) == ["evt_1", "evt_2", "evt_4"]  # one object's events only
    assert run() is None


def test_where_no_object_repeats_a_type_it_says_why() -> None:
    invoices = _plan("stripe", state_kinds=frozenset({"invoice"}))  # an invoice's events are each of their own type
    assert isinstance(invoices, NotApplicable)
    assert invoices.reason == ("the Stripe world tells no story with two events of one type about one object, "
                               "the second changing its state (of a kind whose states the observer reads: invoice)")
    installations = _plan("github", state_kinds=frozenset({"installation"}))  # created, suspend, unsuspend, deleted
    assert isinstance(installations, NotApplicable)
    assert installations.reason.endswith("the observer reads: installation)"), installations.reason
    pulls = _plan("github", state_kinds=frozenset({"pull_request"}))  # closed unmerged, reopened, closed merged
    assert isinstance(pulls, Plan)
    assert [(e.type, e.status) for e in pulls.phases[0].events] == [
        ("pull_request.opened", "open"), ("pull_request.edited", "open"), ("pull_request.closed", "closed"),
        ("pull_request.reopened", "open"), ("pull_request.synchronize", "open"), ("pull_request.closed", "merged")]
    issues = _plan("github", state_kinds=frozenset({"issue", "pull_request"}))
    assert isinstance(issues, Plan) and {e.object_type for e in issues.phases[0].events} == {"issue"}
    narrowed = _plan("stripe", enabled=frozenset({"customer.subscription.created", "customer.subscription.deleted"}))
    assert isinstance(narrowed, NotApplicable) and narrowed.reason.endswith("(enabled_events)")


def test_lost_is_judged_only_when_an_event_owes_an_effect() -> None:
    stripe = _plan("stripe")  # a subscription's events owe no effect under Stripe's built-in keys
    assert isinstance(stripe, Plan) and not stripe.owes_effects
    assert stripe.judged(SCENARIO.checks) == ("stale", "regressed", "duplicated", "unexpected", "no_server_error",
                                              "valid_not_rejected")
    for profile in ("mercadopago", "paddle", "shopify", "github"):  # a license, a fulfilment, a comment...
        plan = _plan(profile)
        assert isinstance(plan, Plan) and plan.owes_effects and plan.judged(SCENARIO.checks) == SCENARIO.checks
    keys = KeyMapping({"customer.subscription.updated": "sync:{data.object.id}"}, get_profile("stripe"),
                      builtin=False)
    team = _plan("stripe", keys=keys)
    assert isinstance(team, Plan) and team.owes_effects


def _certify(name: str, tmp_path: Path, *, states_only: bool) -> tuple[str, list[str], list[str], str]:
    """`name` certified on this scenario alone: its verdict, its checks run, its findings' messages,
    and the go-live checklist's "survives duplicate deliveries"."""
    config = receiver_config(name, tmp_path, SECRET, seed=11, settle_window_s=0.15)
    if states_only:  # the team's keys name none of these events: only the subscription's state tells
        config = config.model_copy(update={"builtin_keys": False})
    run = certify(config, scenarios=[SCENARIO.id], out_dir=tmp_path / "out").report
    (report,) = run.scenarios
    (item,) = [i for i in run.checklist if i.id == "duplicates-tested"]
    return (report.verdict, [c.check_id for c in report.checks], [f"{f.check_id}: {f.message}" for f in report.findings],
            item.verdict)


@pytest.mark.parametrize("states_only", [False, True])
def test_a_receiver_deduplicating_by_event_passes(tmp_path: Path, states_only: bool) -> None:
    verdict, checks, findings, item = _certify("inbox_sync", tmp_path, states_only=states_only)
    assert (verdict, findings, item) == ("pass", [], "pass")
    assert "stale" in checks and "lost" not in checks  # nothing owed: lost is not judged (no unknown)


@pytest.mark.parametrize(("name", "kept"), [("dedupe_by_type_and_object", "evt_Bw3Ht4x4w8fxbaPVDdgv2D0p, customer.subscription.updated"),
                                           ("dedupe_by_object_id", "evt_1XHJWhPg3sDQSca3zlxTI1dl, customer.subscription.created")])
@pytest.mark.parametrize("states_only", [False, True])
def test_a_receiver_deduplicating_by_object_fails_stale(tmp_path: Path, name: str, kept: str,
                                                        states_only: bool) -> None:
    """Type and object: the first `updated` (v2) is its last state; object alone: the `created` (v1).
    The finding names each state's event and its ``created`` (the world's clock starts at the
    wall clock's second: the times are read back, their order checked; seconds apart, no tie)."""
    verdict, _, findings, item = _certify(name, tmp_path, states_only=states_only)
    assert verdict == "fail" and len(findings) == 1, findings
    stale = re.fullmatch(rf"stale: final state is active \(event {re.escape(kept)}, created (\d+)\), the provider's is "
                         r"past_due \(event evt_7utjGc3oS8P5AHfpps3pDWvL, customer\.subscription\.updated, "
                         r"created (\d+)\)", findings[0])
    assert stale is not None and int(stale[1]) < int(stale[2]), findings
    assert item == "fail"  # a later update taken for a duplicate (`SCENARIO_CHECKLIST_CHECKS`)


def test_enabled_events_are_blamed_only_when_enabling_more_would_tell_the_story() -> None:
    """Every pull_request and installation type enabled, the observer reading installations: no
    installation is sent one type twice in GitHub's world whatever is enabled, so the reason
    says the world tells no such story; reading issues, enabling issue types would tell one."""
    from hookproof.simulator.world.github_lifecycle import GITHUB_EVENT_TYPES

    enabled = frozenset(t for t in GITHUB_EVENT_TYPES if t.startswith(("pull_request.", "installation.")))
    installations = _plan("github", enabled=enabled, state_kinds=frozenset({"installation"}))
    assert isinstance(installations, NotApplicable)
    assert installations.reason == (
        "the GitHub world tells no story with two events of one type about one object, the second changing its "
        "state (of a kind whose states the observer reads: installation)")
    issues = _plan("github", enabled=enabled, state_kinds=frozenset({"issue"}))
    assert isinstance(issues, NotApplicable) and issues.reason.endswith("(enabled_events)"), issues.reason
