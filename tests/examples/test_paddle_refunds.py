"""Paddle's refunds as Paddle runs them: created ``pending_approval``, then approved or rejected.

developer.paddle.com/webhooks/adjustments/adjustment-updated: refund adjustments "are created as
pending_approval initially. On review, they move to approved or rejected and adjustment.updated
occurs"; …/build/transactions/create-transaction-adjustments: the money goes back once approved.
So the refund (``refund:{adj}``) is owed on the approval alone: `paddle_billing`, which refunds
on the ``adjustment.updated`` saying ``approved``, is never ``lost`` while a refund waits for
Paddle's review, and passes the catalog's effect scenarios, whose story has a refund approved and
another rejected; its twin `paddle_refund_on_request`, which refunds on ``adjustment.created``,
gives back the money of the rejected one (``unexpected`` on its key). An adjustment's status is a
state: stored as it arrives, its request delivered after its approval leaves ``pending_approval``
(``stale``).
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping

import pytest

from examples.receivers import paddle_billing
from hookproof.certify import certify
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.scenarios.checks import run_checks
from hookproof.scenarios.observations import Effect, ObjectState, Observation
from hookproof.scenarios.statemachine import ExploreTarget, Prepared, Step, replay
from hookproof.simulator.delivery import Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from tests.examples.test_provider_receivers import SECRETS, SEED, config_of
from tests.scenarios.test_checks import att, exp, hist, obs

SECRET = SECRETS["paddle"]
#: `paddle_refund_on_request`'s effects: a refund on its request, whatever its status.
ON_REQUEST: Mapping[str, Callable[[Mapping[str, Any]], str | None]] = {
    **{t: f for t, f in paddle_billing.EFFECTS.items() if not t.startswith("adjustment.")},
    "adjustment.created": lambda d: f"refund:{d['id']}"}


def _adjustments(scenario: str) -> list[tuple[str, str | None, bool]]:
    profile = get_profile("paddle")
    plan = CATALOG[scenario].plan(Context(profile=profile), new_world(profile.world, SEED))
    assert isinstance(plan, Plan), plan
    return [(e.type, e.status, e.business_key is not None) for e in plan.phases[0].events
            if e.object_type == "adjustment"]


def test_the_effect_stories_send_a_refund_approved_and_one_rejected_with_its_request() -> None:
    """The refund owed first (its approval), then, among the events owing nothing, the approved
    refund's request and the rejected refund's request and rejection."""
    for scenario in ("duplicate-sequential", "mass-redelivery"):
        assert _adjustments(scenario) == [("adjustment.updated", "approved", True),
                                          ("adjustment.created", "pending_approval", False),
                                          ("adjustment.created", "pending_approval", False),
                                          ("adjustment.updated", "rejected", False)], scenario


def _target(tmp_path: Path, effects: Mapping[str, Callable[[Mapping[str, Any]], str | None]] | None = None, *,
            ordered: bool = True) -> ExploreTarget:
    """`paddle_billing` in process (with `effects`, a twin's), its effects and adjustments read from SQLite."""
    count = iter(range(1_000))
    profile = get_profile("paddle")

    def open_one() -> Prepared:
        db = tmp_path / f"paddle-{next(count)}.sqlite"
        app = paddle_billing.create_app(str(db), SECRET, effects=effects, ordered=ordered)

        def observe() -> Observation:
            with sqlite3.connect(db) as conn:
                effects_read = tuple(Effect(str(k), a) for k, a in conn.execute(
                    "SELECT business_key, amount FROM effects"))
                states = tuple(ObjectState(str(o), str(s)) for o, s in conn.execute(
                    "SELECT object_id, status FROM adjustments"))
            return Observation(time.time(), effects_read, states, frozenset({"adjustment"}))

        return Prepared(Target(app=app), observe)

    return ExploreTarget(profile=profile, secrets=(SECRET,), open=open_one, describe="in-process paddle_billing",
                         settle_window_s=0.02)


def _emit(*actions: tuple[str, int | None]) -> list[Step]:
    return [Step("emit", action=a, object=i) for a, i in actions]


def test_a_refund_waiting_for_approval_owes_nothing_yet(tmp_path: Path) -> None:
    """A checkout, then a refund requested and never reviewed: its request delivered and
    acknowledged, no refund applied, no finding (not ``lost``)."""
    assert replay(_target(tmp_path), _emit(("buy", None), ("refund", 0)), SEED) is None


def test_an_approved_refund_is_owed_once_and_a_rejected_one_never(tmp_path: Path) -> None:
    """Two refunds of one checkout, the first approved, the second (requested once the first was
    reviewed) rejected: `paddle_billing` applies the first once and passes; the twin refunding
    on the request applies both, and the rejected one's refund is ``unexpected``, naming its
    rejection. Refunding a refund still pending is ``unexpected`` too, naming its request."""
    steps = _emit(("buy", None), ("refund", 0), ("approve_refund", 0), ("refund", 0), ("reject_refund", 1))
    assert replay(_target(tmp_path), steps, SEED) is None
    found = replay(_target(tmp_path, ON_REQUEST), steps, SEED)
    assert found is not None
    (finding,) = found.findings
    assert finding.check_id == "unexpected" and finding.key is not None
    adj = finding.key.removeprefix("refund:")
    assert re.fullmatch(r"adj_01[0-9a-z]{24}", adj), finding.key
    assert re.search(rf"evt_01[0-9a-z]{{24}} adjustment\.updated was validly sent about {adj}, and it owed no "
                     r"refund: Paddle rejected it \(status rejected;", finding.message), finding.message
    pending = replay(_target(tmp_path, ON_REQUEST), _emit(("buy", None), ("refund", 0)), SEED)
    assert pending is not None
    assert [(f.check_id, "adjustment.created was validly sent" in f.message, "pending_approval" in f.message)
            for f in pending.findings] == [("unexpected", True, True)]


#: A checkout's events (created, a new customer's customer.created and address.created, updated,
#: ready, updated, paid, updated, completed): the refund's request is event 9, its approval event 10.
REQUEST, APPROVAL = 9, 10


@pytest.mark.parametrize(("ordered", "checks"), [(True, []), (False, ["regressed"])])
def test_an_adjustments_request_after_its_approval_is_an_older_state(tmp_path: Path, ordered: bool,
                                                                      checks: list[str]) -> None:
    """The approval delivered before the request: a receiver keeping a status only over an older
    ``occurred_at`` ends ``approved``; one storing each status as it arrives ends
    ``pending_approval``: its state went back (``regressed``)."""
    steps = [*_emit(("buy", None), ("refund", 0), ("approve_refund", 0)),
             Step("deliver", event=APPROVAL), Step("deliver", event=REQUEST)]
    found = replay(_target(tmp_path, ordered=ordered), steps, SEED)
    assert sorted({f.check_id for f in found.findings} if found else set()) == checks
    if found:
        assert all("pending_approval" in f.message and "approved" in f.message for f in found.findings), \
            [f.message for f in found.findings]


def _adjustment(event: str, event_type: str, version: int) -> object:
    return replace(att(event, obj="adj_1", version=version), event_type=event_type)


@pytest.mark.parametrize(("events", "named", "why"), [
    ([("e1", "adjustment.created", 1)], "e1 adjustment.created",
     "it owed no refund: Paddle creates a refund pending_approval, and the money goes back only once Paddle "
     "approves it, on the adjustment.updated saying approved"),
    ([("e1", "adjustment.created", 1), ("e2", "adjustment.updated", 2)], "e2 adjustment.updated",
     "it owed no refund: Paddle rejected it (status rejected; a refund is owed only on the adjustment.updated "
     "saying approved"),
])
def test_unexpected_names_a_refund_pending_or_rejected(events: list[tuple[str, str, int]], named: str,
                                                       why: str) -> None:
    history = hist(*(_adjustment(*e) for e in events))  # type: ignore[arg-type]
    [result] = run_checks(["unexpected"], history, exp(), [obs(20, "refund:adj_1")])
    [finding] = result.findings
    assert finding.key == "refund:adj_1"
    assert finding.message.startswith(f"applied, but no validly sent event owes this key: {named} was validly "
                                      f"sent about adj_1, and {why}"), finding.message


@pytest.mark.slow
@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.paddle_billing", {}),
    ("tests.examples.paddle_refund_on_request", {"duplicate-sequential": ["unexpected"],
                                                 "mass-redelivery": ["counter", "unexpected"]}),
])
def test_refunding_on_the_request_fails_on_the_rejected_refund(tmp_path: Path, module: str,
                                                               failed: dict[str, list[str]]) -> None:
    cfg = config_of("paddle_billing", module, tmp_path)
    report = certify(cfg, scenarios=["duplicate-sequential", "mass-redelivery"], out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    for finding in (f for s in report.scenarios for f in s.findings):
        assert finding.key.startswith("refund:adj_01"), finding.key
