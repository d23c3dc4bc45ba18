"""A secret rotation's two signatures with the receiver's own first: an advisory under Paddle.

Paddle's "Verify webhook signatures" page gives the header's schema ("Signatures contain at least
one `h1`") and no order; its official verifiers disagree on several: paddle-python-sdk's
``Verifier`` compares every ``h1``, @paddle/paddle-node-sdk 3.x's ``WebhooksValidator`` keeps only
the last one it parses. So under the paddle profile ``secret-rotation`` also sends one event that
owes nothing signed with the receiver's secret first and an unknown one after it, once: refusing
it is not required, and is an advisory naming the Node SDK (a receiver on it refuses every
delivery of a rotation that lists its secret first). `paddle_billing` (the Python SDK) accepts
both orders and passes with nothing said; `paddle_last_h1`, which verifies as the Node SDK does,
passes with the advisory; the other profiles' official verifiers read every signature, so their
scenario is unchanged.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import pytest
from paddle_billing.Notifications import Secret, Verifier

from hookproof.certify import certify
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.delivery.mutations import build_attempt
from hookproof.simulator.faults import Mutation, applicable
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from tests.examples.paddle_last_h1 import LastH1Verifier
from tests.examples.test_provider_receivers import SECRETS, config_of

SECRET = SECRETS["paddle"]
ADVISORY = ("1 valid transaction.paid event(s) signed for a secret rotation with the receiver's own signature "
            "first refused 1 time(s) with 401")
WHY = ("; Paddle's docs say a Paddle-Signature carries at least one h1 and give no order; "
       "@paddle/paddle-node-sdk's WebhooksValidator (3.x) compares only the last h1 of the header, while "
       "paddle-python-sdk's Verifier accepts any, so a receiver on the Node SDK refuses every delivery of a "
       "rotation in which Paddle lists its secret's signature before another")


@dataclass
class Request:
    headers: Mapping[str, str]
    body: bytes


def _plan(profile_name: str) -> Plan:
    profile = get_profile(profile_name)
    plan = CATALOG["secret-rotation"].plan(Context(profile=profile), new_world(profile.world, 5))
    assert isinstance(plan, Plan), plan
    return plan


def test_only_paddle_sends_the_receivers_own_signature_first() -> None:
    plan = _plan("paddle")
    assert [([e.type for e in p.events], p.plan.mutations, p.max_attempts) for p in plan.phases] == [
        (["transaction.paid"], (Mutation.ROTATION_OWN_FIRST,), 1),  # once: it owes nothing
        # the effect story's first effects: a licence bought once, then a subscription's checkout
        (["transaction.completed", "subscription.created"], (Mutation.ROTATION,), None)]
    assert plan.phases[0].events[0].business_key is None
    for name in ("stripe", "standard-webhooks", "svix"):
        assert [p.plan.mutations for p in _plan(name).phases] == [(Mutation.ROTATION,)], name
        assert applicable(Mutation.ROTATION_OWN_FIRST, get_profile(name)) is not None


@pytest.mark.parametrize(("mutation", "python_sdk", "last_h1"), [
    (Mutation.ROTATION, True, True), (Mutation.ROTATION_OWN_FIRST, True, False)])
def test_the_verifiers_disagree_on_the_order(mutation: Mutation, python_sdk: bool, last_h1: bool) -> None:
    """The header carries two h1 in both orders; paddle-python-sdk's Verifier accepts both, a
    verifier keeping the last h1 (the Node SDK's rule) only the receiver's own last."""
    profile = get_profile("paddle")
    event = _plan("paddle").phases[0].events[0]
    signed = build_attempt(profile, event, [SECRET], (mutation,), now=int(time.time()), attempt=1, seed=5)
    header = signed.request.headers["Paddle-Signature"]
    assert [part.split("=")[0] for part in header.split(";")] == ["ts", "h1", "h1"]
    request = Request(signed.request.headers, signed.request.body)
    assert Verifier().verify(request, Secret(SECRET)) is python_sdk
    assert LastH1Verifier().verify(request, Secret(SECRET)) is last_h1
    assert json.loads(signed.request.body)["event_type"] == "transaction.paid"


@pytest.mark.slow
@pytest.mark.parametrize(("module", "advised"), [
    ("examples.receivers.paddle_billing", False), ("tests.examples.paddle_last_h1", True)])
def test_refusing_the_own_first_order_is_an_advisory(tmp_path: Path, module: str, advised: bool) -> None:
    report = certify(config_of("paddle_billing", module, tmp_path), scenarios=["secret-rotation"],
                     out_dir=tmp_path / "report").report
    (scenario,) = report.scenarios
    assert (scenario.verdict, list(scenario.findings)) == ("pass", []), [f.message for f in scenario.findings]
    advisories = [f for c in scenario.checks for f in c.findings]
    assert [(f.check_id, f.severity) for f in advisories] == ([("valid_not_rejected", "advisory")] if advised else [])
    for finding in advisories:
        assert finding.message.startswith(ADVISORY) and finding.message.endswith(WHY), finding.message
