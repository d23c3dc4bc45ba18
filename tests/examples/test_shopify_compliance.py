"""Shopify's mandatory compliance topics, certified.

shopify.dev ("Privacy law compliance"): every App Store app subscribes to ``customers/data_request``,
``customers/redact`` and ``shop/redact`` and answers 401 to one whose HMAC is invalid. A config
names the ones its endpoint is subscribed to (``target.enabled_events``, ``[business_keys]`` or
``[counters]``); the catalog's stories then tell them, with the faults every other topic gets, and
their effects (``report:{data_request.id}``, ``redact:{customer id}``, ``erase:{shop id}``) are
checked like the others. A config that names none is sent what it always was. `shopify_app`
claims every event and passes; `shopify_app_redact_every_delivery` claims none of the compliance
ones and erases again on each redelivery (``duplicated``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config import Config, TargetConfig
from hookproof.errors import ConfigError
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.world import new_world
from hookproof.simulator.world.shopify import SHOPIFY_COMPLIANCE_TOPICS, SHOPIFY_EVENT_TYPES
from tests.examples.test_provider_receivers import SECRETS, config_of

EVERY_TOPIC = [*SHOPIFY_EVENT_TYPES, *SHOPIFY_COMPLIANCE_TOPICS]


def target(**fields: object) -> TargetConfig:
    return TargetConfig(url="http://127.0.0.1:9/webhooks", profile="shopify", secret=SECRETS["shopify"], **fields)


def test_a_config_may_name_the_compliance_topics_and_then_is_sent_them() -> None:
    named = Config(target=target(enabled_events=EVERY_TOPIC))
    assert named.subscribed_types() == list(SHOPIFY_COMPLIANCE_TOPICS)
    assert set(named.profile().event_types()) == set(EVERY_TOPIC)
    keyed = Config(target=target(), business_keys={"customers/redact": "gdpr:{customer.id}"})
    assert keyed.subscribed_types() == ["customers/redact"]
    assert keyed.key_mapping() is not None
    plain = Config(target=target())
    assert plain.subscribed_types() == [] and set(plain.profile().event_types()) == set(SHOPIFY_EVENT_TYPES)


def test_a_business_key_naming_a_field_the_compliance_payload_lacks_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        Config(target=target(), business_keys={"customers/redact": "{customer.name}"}).key_mapping()
    assert 'business_keys."customers/redact"' in str(info.value) or info.value.field == 'business_keys."customers/redact"'


@pytest.mark.parametrize("scenario_id", ["duplicate-sequential", "mass-redelivery", "forged-signature", "missing-signature",
                                         "wrong-secret"])
def test_the_catalog_delivers_the_compliance_topics_only_to_a_subscribed_endpoint(scenario_id: str) -> None:
    subscribed = Config(target=target(enabled_events=EVERY_TOPIC)).profile()
    plain = Config(target=target()).profile()
    told = {}
    for name, profile, enabled in (("subscribed", subscribed, frozenset(EVERY_TOPIC)), ("plain", plain, None)):
        plan = CATALOG[scenario_id].plan(Context(profile=profile, enabled=enabled), new_world("shopify", 3))
        assert isinstance(plan, Plan)
        told[name] = [e.type for phase in plan.phases for e in phase.events]
    keyed = Config(target=target(), business_keys={"customers/redact": "gdpr:{customer.id}"})
    plan = CATALOG[scenario_id].plan(Context(profile=keyed.profile(), keys=keyed.key_mapping()), new_world("shopify", 3))
    assert isinstance(plan, Plan)
    told["keyed"] = [e.type for phase in plan.phases for e in phase.events]
    assert set(SHOPIFY_COMPLIANCE_TOPICS) <= set(told["subscribed"])
    assert not set(SHOPIFY_COMPLIANCE_TOPICS) & set(told["plain"])
    assert set(SHOPIFY_COMPLIANCE_TOPICS) & set(told["keyed"]) == {"customers/redact"}  # named in [business_keys]


def compliance_config(module: str, tmp_path: Path) -> Config:
    cfg = config_of("shopify_app", module, tmp_path)
    return cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": EVERY_TOPIC})})


#: The scenarios that deliver the compliance topics: plainly and again, and with no valid HMAC.
SCENARIOS = ["duplicate-sequential", "mass-redelivery", "forged-signature", "missing-signature"]


@pytest.mark.slow
@pytest.mark.parametrize(("module", "failed", "check"), [
    ("examples.receivers.shopify_app", {}, None),
    ("examples.receivers.shopify_app_redact_every_delivery",
     {"duplicate-sequential": ["duplicated"], "mass-redelivery": ["duplicated"]}, "duplicated"),
    ("examples.receivers.shopify_app_compliance_unverified",
     {"forged-signature": ["unexpected"], "missing-signature": ["unexpected"]}, "unexpected"),
])
def test_a_compliance_request_is_verified_and_acted_on_once(tmp_path: Path, module: str,
                                                            failed: dict[str, list[str]], check: str | None) -> None:
    report = certify(compliance_config(module, tmp_path), scenarios=SCENARIOS, out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed
    assert all(s.verdict == "pass" for s in report.scenarios if s.id not in failed)
    found = [f for s in report.scenarios for f in s.findings if f.check_id == check]
    # the twins err on the compliance topics alone: every other topic is claimed and verified
    assert {str(f.key).split(":")[0] for f in found} == ({"report", "redact", "erase"} if check else set())
