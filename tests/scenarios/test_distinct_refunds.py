"""distinct-events-same-object and older-after-newer-redelivery send a charge's two refunds' own ``refund.created``.

Stripe sends ``refund.created`` for every refund (docs.stripe.com/changelog/acacia/2024-10-28/
refund-webhook-update); a team keying each refund by its id (``refund:{data.object.id}``) owes
one effect per refund, and a receiver deduplicating refunds per charge drops the second partial
refund, and one remembering the last refund per charge applies the first again when it comes
back. Each event is about its refund, not the charge: the scenarios took only the charge's
(and invoice's) own events, and called themselves not applicable to such an endpoint.
"""

from __future__ import annotations

from pathlib import Path

from hookproof.config import load_config
from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable, Plan
from hookproof.simulator.world import World

CONFIG = """
[target]
url = "http://127.0.0.1:9/webhooks"
secret = "whsec_distinct_refunds_0123"
enabled_events = ["checkout.session.completed", "refund.created"]

[business_keys]
"refund.created" = "refund:{data.object.id}"
"""


def _context(tmp_path: Path) -> Context:
    path = tmp_path / "hookproof.toml"
    path.write_text(CONFIG, encoding="utf-8")
    config = load_config(path)
    return Context(profile=config.profile(), enabled=frozenset(config.target.enabled_events or ()),
                   keys=config.key_mapping())


def test_a_charge_s_two_refunds_are_sent_each_owing_its_own_key(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    world = World(5)
    plan = CATALOG["distinct-events-same-object"].plan(ctx, world)
    assert isinstance(plan, Plan), plan.reason if isinstance(plan, NotApplicable) else plan
    events = [e for phase in plan.phases for e in phase.events]
    assert [e.type for e in events] == ["refund.created", "refund.created"]
    charges = {world.peek(e.object_id)["charge"] for e in events}
    keys = [ctx.key_of(e) for e in events]
    assert len(charges) == 1 and len(set(keys)) == 2 and all(k.startswith("refund:re_") for k in keys), keys


def test_the_older_refund_comes_back_after_the_newer(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    world = World(5)
    plan = CATALOG["older-after-newer-redelivery"].plan(ctx, world)
    assert isinstance(plan, Plan), plan.reason if isinstance(plan, NotApplicable) else plan
    (r1, r2), (again,) = (phase.events for phase in plan.phases)
    assert (r1.type, r2.type, again.id) == ("refund.created", "refund.created", r1.id)
    assert world.peek(r1.object_id)["charge"] == world.peek(r2.object_id)["charge"] and r1.object_id != r2.object_id
