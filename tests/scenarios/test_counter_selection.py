"""Which checks a scenario runs under a team's keys, and when it has nothing to judge.

- ``counter`` runs wherever ``duplicated`` or ``lost`` run, once the config declares counters
  (`Scenario.checks_for`), and `hookproof scenarios` says so;
- a plan none of whose events maps to an effect, moves a counter or is of an object kind the
  observer reads the state of is not applicable under the team's keys (`catalog.unmapped`),
  naming the types; built-in keys are never judged so;
- the scenarios walking one object's states walk invoices when the observer reads invoices'
  states and not subscriptions' (`catalog.state_events`);
- the burst race counts a counter moved past the truth as a double apply, not one short of it.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from hookproof.cli import app
from hookproof.config import ObserverConfig
from hookproof.scenarios.bursts import _applied_twice
from hookproof.scenarios.business_keys import CounterRule, KeyMapping
from hookproof.scenarios.catalog import CATALOG, COUNTED_WITH, SCENARIOS, Context, NotApplicable, state_events, unmapped
from hookproof.scenarios.chaos import CHAOS_CATALOG
from hookproof.scenarios.findings import Finding
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World

STRIPE = get_profile("stripe")
BALANCE = {"invoice.paid": CounterRule("{data.object.customer}", "data.object.amount_paid")}
LEDGER = KeyMapping({"charge.succeeded": "payment:{data.object.payment_intent}", "invoice.paid": "renewal:{data.object.id}"},
                    STRIPE, BALANCE, builtin=False)


# ---- counter wherever an effect can be applied twice or lost ----------------------------------

@pytest.mark.parametrize("scenario", [*SCENARIOS, *CHAOS_CATALOG.values()], ids=lambda s: s.id)
def test_counter_runs_with_counters_wherever_duplicated_or_lost_run(scenario: object) -> None:
    own = scenario.checks  # type: ignore[attr-defined]
    assert scenario.checks_for(counters=False) == own  # type: ignore[attr-defined]
    counted = scenario.checks_for(counters=True)  # type: ignore[attr-defined]
    if COUNTED_WITH & set(own):
        assert counted == own if "counter" in own else counted == (*own, "counter")
    else:
        assert counted == own and "counter" not in counted


def test_the_security_scenarios_run_no_counter_and_the_duplicate_ones_do() -> None:
    assert "counter" not in CATALOG["forged-signature"].checks_for(counters=True)
    assert "counter" not in CATALOG["reorder"].checks_for(counters=True)
    for sid in ("duplicate-sequential", "duplicate-concurrent", "sender-timeout", "dropped-response"):
        assert CATALOG[sid].checks_for(counters=True)[-1] == "counter", sid
        assert "counter" not in CATALOG[sid].checks_for(counters=False), sid


def test_hookproof_scenarios_lists_counter_where_it_runs_with_counters() -> None:
    result = CliRunner().invoke(app, ["scenarios"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line.split("│")[4].strip() for line in result.output.splitlines()
            if line.startswith("│") and line.split("│")[1].strip()}
    assert rows["duplicate-sequential"].endswith("duplicate_acked, counter ([counters])")
    assert rows["sender-timeout"] == "duplicated, lost, unexpected, valid_not_rejected, counter ([counters])"
    assert rows["mass-redelivery"].count("counter") == 1 and "[counters]" not in rows["mass-redelivery"]
    assert "counter" not in rows["forged-signature"]
    assert "counter ([counters]): runs when the config declares [counters]" in result.output


# ---- nothing to judge under the team's keys: not applicable -----------------------------------

def _refunds(keys: KeyMapping | None, state_kinds: frozenset[str] | None = frozenset({"invoice"})) -> object:
    ctx = Context(profile=STRIPE, keys=keys, state_kinds=state_kinds)
    plan = CATALOG["older-after-newer-redelivery"].plan(ctx, World(5))
    assert not isinstance(plan, NotApplicable)
    return unmapped(ctx, plan)


def test_a_scenario_whose_events_map_to_nothing_does_not_apply_and_names_its_types() -> None:
    assert _refunds(LEDGER) == NotApplicable(
        "no event of this scenario (charge.refunded) maps to an effect under [business_keys]; map charge.refunded "
        "or list the types the receiver handles in enabled_events")


@pytest.mark.parametrize(("keys", "state_kinds"), [
    (None, frozenset({"invoice"})),  # hookproof's keys: a refund is an effect
    (KeyMapping({**LEDGER.templates, "charge.refunded": "refund:{data.object.id}"}, STRIPE, BALANCE, builtin=False),
     frozenset({"invoice"})),  # mapped by the team
    (LEDGER, frozenset({"charge"})),  # the observer reads the charges' states
    (LEDGER, None),  # an http observer: its answers say which states it reads
])
def test_a_scenario_with_something_to_judge_still_applies(keys: KeyMapping | None,
                                                          state_kinds: frozenset[str] | None) -> None:
    assert _refunds(keys, state_kinds) is None


def test_a_counter_alone_is_something_to_judge() -> None:
    ctx = Context(profile=STRIPE, keys=KeyMapping({}, STRIPE, BALANCE, builtin=False), state_kinds=frozenset())
    plan = CATALOG["duplicate-sequential"].plan(Context(profile=STRIPE), World(5))
    assert not isinstance(plan, NotApplicable)
    assert unmapped(ctx, plan) is None


# ---- the states the observer reads pick the object a state scenario walks ---------------------

@pytest.mark.parametrize(("state_kinds", "kinds"), [
    (None, {"subscription"}), (frozenset(), {"subscription"}),
    (frozenset({"subscription", "invoice"}), {"subscription"}),
    (frozenset({"invoice"}), {"invoice"}), (frozenset({"payment_intent"}), {"payment_intent"}),
    (frozenset({"invoice", "payment_intent"}), {"invoice", "payment_intent"}),
    (frozenset({"subscription", "invoice", "payment_intent"}), {"subscription", "payment_intent"}),
    (frozenset({"checkout.session"}), {"subscription"}),
])
def test_state_scenarios_walk_an_object_kind_the_observer_reads(state_kinds: frozenset[str] | None,
                                                                kinds: set[str]) -> None:
    """The subscription's story, or its invoices'; and a payment intent declined, then paid on its
    retry, wherever the observer reads payment intents' states (alone when it reads neither)."""
    events = state_events(Context(profile=STRIPE, keys=LEDGER, state_kinds=state_kinds), World(5))
    assert {e.object_type for e in events} == kinds
    if "invoice" in kinds:  # three renewals' invoices: created, then paid (the third: failed first)
        assert [e.type for e in events if e.object_type == "invoice"] == ["invoice.created", "invoice.paid"] * 2 + [
            "invoice.created", "invoice.payment_failed", "invoice.paid"]
    if "payment_intent" in kinds:  # one payment that fails, then is paid on retry, last
        assert [(e.type, e.status) for e in events[-2:]] == [
            ("payment_intent.payment_failed", "requires_payment_method"), ("payment_intent.succeeded", "succeeded")]
        assert sum(e.object_type == "payment_intent" for e in events) == 2


def test_the_observer_config_names_the_state_kinds_it_reads() -> None:
    sql = ObserverConfig(kind="sql", url="sqlite:///x.db", effects="SELECT business_key FROM e",
                         state="SELECT id AS object_id, status FROM s", states={"invoice": "SELECT 1"})
    assert sql.state_kinds == frozenset({"subscription", "invoice"})
    assert ObserverConfig(kind="sql", url="sqlite:///x.db", effects="SELECT 1").state_kinds == frozenset()
    assert ObserverConfig(kind="http", url="http://127.0.0.1:9/effects").state_kinds is None


# ---- the burst race: a counter past the truth is a double apply -------------------------------

@pytest.mark.parametrize(("finding", "twice"), [
    (Finding("duplicated", "renewal:in_1", "applied 2 times instead of once"), True),
    (Finding("counter", "cus_1", "counter is 2000; the provider's truth implies 1000", expected=1000, actual=2000),
     True),
    (Finding("counter", "cus_1", "counter is 0; the provider's truth implies 1000", expected=1000, actual=0), False),
    (Finding("counter", "cus_1", "counter is missing; the provider's truth implies 1000", expected=1000, actual=None),
     False),
])
def test_the_burst_race_counts_a_counter_past_the_truth_as_applied_twice(finding: Finding, twice: bool) -> None:
    assert _applied_twice(finding) is twice
