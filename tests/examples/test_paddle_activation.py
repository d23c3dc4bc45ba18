"""A receiver that provisions on ``subscription.activated`` alone, as Paddle's lifecycle pages suggest.

Paddle's "Subscription created" scenario (developer.paddle.com/webhooks/simulator/subscription-created)
sends ``subscription.activated`` right after ``subscription.created`` for a subscription without a
trial, and its "Subscription resumed" scenario calls the activation the point to "handle access
provisioning". Paddle activates a resumed subscription again (that scenario's "Subscription is
activated" step; the catalog's state story pauses and resumes its subscription), so a team provisioning on
each activation keys the activation's period (``business_keys."subscription.activated" =
"provision:{data.id}:{data.current_billing_period.starts_at}"``, built-in keys off): a key per
subscription alone would promise one provisioning where Paddle asks for two. It gets the catalog's
stories over it: `paddle_activation`,
which claims ``event_id`` before provisioning, passes; its twin without the claim provisions again
for every redelivered copy (``duplicated``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config import Config
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import emit_events, new_world
from tests.examples.test_provider_receivers import SEED, config_of

KEYS = {"subscription.activated": "provision:{data.id}:{data.current_billing_period.starts_at}"}
SCENARIOS = ["duplicate-sequential", "duplicate-concurrent", "dropped-response", "transport-fields-change",
             "mass-redelivery"]


def team_config(module: str, tmp_path: Path, *, dedupe: bool = True) -> Config:
    cfg = config_of("paddle_billing", module, tmp_path)
    assert cfg.target.start is not None
    command = cfg.target.start.command + ("" if dedupe else " --no-dedupe")
    start = cfg.target.start.model_copy(update={"command": command})
    return cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": start}),
                                  "builtin_keys": False, "business_keys": KEYS})


def test_the_activation_is_keyed_and_sent_in_the_catalog_s_stories(tmp_path: Path) -> None:
    profile = get_profile("paddle")
    (event,) = emit_events(new_world("paddle", 3), "subscription.activated")
    assert (event.status, event.business_key) == ("active", None)  # no built-in key: the team's own
    keys = team_config("tests.examples.paddle_activation", tmp_path).key_mapping()
    assert keys.key_of(event) == f"provision:{event.object_id}:{event.object['current_billing_period']['starts_at']}"
    ctx = Context(profile=profile, keys=keys)
    plan = CATALOG["duplicate-sequential"].plan(ctx, new_world(profile.world, SEED))
    assert isinstance(plan, Plan), plan
    sent = [e for p in plan.phases for e in p.events]
    assert {e.type for e in sent if keys.key_of(e)} == {"subscription.activated"}


@pytest.mark.slow
@pytest.mark.parametrize(("dedupe", "failed"), [
    (True, {}),
    (False, {"dropped-response": ["duplicated"], "duplicate-concurrent": ["duplicated"],
             "duplicate-sequential": ["duplicated"], "mass-redelivery": ["duplicated"],
             "transport-fields-change": ["duplicated"]}),
])
def test_provisioning_on_activation_passes_with_dedupe_and_fails_without(tmp_path: Path, dedupe: bool,
                                                                        failed: dict[str, list[str]]) -> None:
    cfg = team_config("tests.examples.paddle_activation", tmp_path, dedupe=dedupe)
    report = certify(cfg, scenarios=SCENARIOS, out_dir=tmp_path / "report").report
    assert [s.verdict for s in report.scenarios if s.verdict not in ("pass", "fail")] == []
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    with sqlite3.connect(tmp_path / "paddle_billing.sqlite") as db:
        keys = {k for (k,) in db.execute("SELECT business_key FROM effects")}
    assert keys and all(k.startswith("provision:sub_") for k in keys), keys


@pytest.mark.parametrize("event_type", ["subscription.trialing", "subscription.paused", "subscription.resumed",
                                        "transaction.payment_failed", "transaction.past_due", "transaction.ready",
                                        "transaction.billed", "transaction.created", "transaction.updated"])
def test_a_team_key_on_each_new_type_is_exercised(tmp_path: Path, event_type: str) -> None:
    """certify can tell a receiver acting on any of these types is tested: the catalog's
    duplicate scenario sends that type's events under the team's key."""
    cfg = team_config("tests.examples.paddle_activation", tmp_path)
    keys = cfg.model_copy(update={"business_keys": {event_type: "effect:{event_id}"}}).key_mapping()
    profile = get_profile("paddle")
    plan = CATALOG["duplicate-sequential"].plan(Context(profile=profile, keys=keys), new_world(profile.world, SEED))
    assert isinstance(plan, Plan), plan
    assert {e.type for p in plan.phases for e in p.events if keys.key_of(e)} == {event_type}
