"""`fetch-overtaken`: a slow fetch's answer, held while a newer event is handled, lands last.

A receiver that follows Stripe's advice and fetches the subscription on each event, but reads
the stored row, fetches and writes without a row lock (`fetch_then_write`, the Django view with
``Subscription.objects.get`` and no ``select_for_update``), keeps the older fetch's state when
that fetch's answer comes after a newer event was handled: the provider API reads the
subscription when the past-due event's fetch arrives and holds the answer (at most
`HOLD_MAX_S`) while the recovery is delivered. Its locked twin (``--option locked=1``) and
`inbox_sync` (no fetch: not applicable) pass.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT
from examples.receivers import config as receiver_config
from hookproof.certify import certify
from hookproof.demo import receiver_config as module_config
from hookproof.reports.model import ScenarioReport
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server.holds import HOLD_MAX_S, HeldFetches, after_phases
from hookproof.simulator.world import World

SCENARIO = "fetch-overtaken"
SECRET = "whsec_fetch_overtaken_" + "0" * 20
RECEIVER = "fetch_then_write"


def test_the_plan_holds_the_past_due_fetch_and_delivers_the_recovery_meanwhile() -> None:
    plan = CATALOG[SCENARIO].plan(Context(profile=get_profile("stripe")), World(4242))
    assert isinstance(plan, Plan)
    assert [[(e.type, e.status) for e in p.events] for p in plan.phases] == [
        [("customer.subscription.created", "active")], [("customer.subscription.updated", "past_due")],
        [("customer.subscription.updated", "active")]]
    assert [p.held for p in plan.phases] == [False, True, False]
    assert plan.held_fetch == plan.phases[0].events[0].object_id and not plan.owes_effects


@pytest.mark.parametrize(("ctx", "reason"), [
    ({"fetches_state": False}, "the receiver has no provider API to fetch from"),
    ({"state_kinds": frozenset({"invoice"})}, "the observer reads no subscription states"),
])
def test_it_does_not_apply_without_a_fetch_or_a_subscription_state(ctx: dict[str, object], reason: str) -> None:
    plan = CATALOG[SCENARIO].plan(Context(profile=get_profile("stripe"), **ctx), World(1))  # type: ignore[arg-type]
    assert getattr(plan, "reason", None) == reason


def test_a_held_fetch_waits_for_its_release_or_its_bound() -> None:
    holds = HeldFetches()
    assert holds.take("sub_1") is None
    holds.arm("sub_1", 0.05)
    hold = holds.take("sub_1")
    assert hold is not None and holds.taken("sub_1") and holds.take("sub_1") is None  # one fetch only
    assert 0.05 <= asyncio.run(hold.wait()) < 0.5  # unreleased: its bound
    holds.arm("sub_2")
    hold = holds.take("sub_2")
    assert hold is not None
    holds.release("sub_2")
    assert asyncio.run(hold.wait()) < 0.05
    with pytest.raises(ValueError, match="at most"):
        holds.arm("sub_3", HOLD_MAX_S + 1)


def test_after_the_phases_a_hold_not_taken_is_released_and_a_taken_one_waited_out() -> None:
    """Before the settle's reads (`after_phases`): a fetch still to come is not held, and a held
    answer (a receiver that fetched after it answered) has gone out."""
    holds = HeldFetches()
    asyncio.run(after_phases(holds, "sub_0"))  # none armed: nothing to do
    holds.arm("sub_1", 0.2)
    asyncio.run(after_phases(holds, "sub_1"))
    hold = holds.take("sub_1")  # a fetch arriving after the phases
    assert hold is not None and asyncio.run(hold.wait()) < 0.05
    holds.arm("sub_2", 0.2)
    assert holds.take("sub_2") is not None  # held, never released by an answer
    started = time.monotonic()
    asyncio.run(after_phases(holds, "sub_2"))
    assert 0.2 <= time.monotonic() - started < 1.0


def _run(tmp_path: Path, seed: int, **options: float) -> ScenarioReport:
    cfg = module_config(RECEIVER, tmp_path, SECRET, seed=seed, settle_window_s=0.15, options=options or None,
                        module=f"tests.scenarios.{RECEIVER}", cwd=PROJECT_ROOT)
    (scenario,) = certify(cfg, scenarios=[SCENARIO], out_dir=tmp_path / f"report-{seed}").report.scenarios
    return scenario


def _certify(tmp_path: Path, seed: int, **options: float) -> tuple[str, list[str], str | None]:
    scenario = _run(tmp_path, seed, **options)
    return scenario.verdict, sorted({f.check_id for f in scenario.findings}), scenario.reason


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_fetch_then_write_without_a_lock_is_found(tmp_path: Path, seed: int) -> None:
    """Found, and told that it did fetch, what it was served, and the lock it lacks (a trial's
    fetching receiver was told Stripe's advice to fetch, which it followed)."""
    scenario = _run(tmp_path, seed)
    assert (scenario.verdict, sorted({f.check_id for f in scenario.findings})) == ("fail", ["stale"])
    (finding,) = scenario.findings
    subscription = next(a.object_id for a in scenario.attempts if a.attempt and a.object_id in finding.message)
    assert "advises fetching" not in finding.message
    assert finding.message.endswith(
        f"; the receiver did fetch it from the provider API ({subscription}, served as active, then past_due, then "
        "active), and an earlier fetch's answer was written last: fetch and write under one lock per object (a row "
        "lock, select_for_update, or an advisory lock), so the answer of the latest fetch is the one kept"), \
        finding.message


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_its_locked_twin_passes(tmp_path: Path, seed: int) -> None:
    assert _certify(tmp_path, seed, locked=1) == ("pass", [], None)


@pytest.mark.slow
def test_a_receiver_that_does_not_fetch_is_told_why_it_does_not_apply(tmp_path: Path) -> None:
    cfg = receiver_config("inbox_sync", tmp_path, SECRET, seed=1, settle_window_s=0.15)
    (scenario,) = certify(cfg, scenarios=[SCENARIO], out_dir=tmp_path / "inbox").report.scenarios
    assert scenario.verdict == "not_applicable"
    assert scenario.reason is not None and scenario.reason.endswith(
        "from the provider API while handling its event, so no fetch could be overtaken")
