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
    # (its second erasure of the shop, on the redelivered shop/redact, also erases the orders the
    # state story stored after the first: stale)
    ("examples.receivers.shopify_app_redact_every_delivery",
     {"duplicate-sequential": ["duplicated"], "mass-redelivery": ["duplicated", "stale"]}, "duplicated"),
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


#: Scenario -> the topics a subscribed endpoint is sent in it, phase by phase (seed 3): the first
#: effectful topics, then one event of each compliance topic, which the effect story tells after
#: the order's (a duplicate, a concurrent burst, a timeout, a lost answer, chaos alike).
CONCURRENT_PLANS = {
    "duplicate-concurrent": [["customers/create", "orders/paid", "refunds/create", *SHOPIFY_COMPLIANCE_TOPICS]],
    "sender-timeout": [["customers/create", "orders/paid", "refunds/create", *SHOPIFY_COMPLIANCE_TOPICS]],
    "dropped-response": [["customers/create", "orders/paid", "refunds/create", *SHOPIFY_COMPLIANCE_TOPICS]],
    "pause-past-timeout": [["customers/create", *SHOPIFY_COMPLIANCE_TOPICS], ["orders/paid"]],
    "network-drop-response": [["customers/create"], ["orders/paid"], ["refunds/create"], ["refunds/create"],
                              *([t] for t in SHOPIFY_COMPLIANCE_TOPICS)],
    "replicas-duplicates": [[t] for t in ("customers/create", "orders/paid", "refunds/create", "refunds/create",
                                          *SHOPIFY_COMPLIANCE_TOPICS) for _ in range(3)],
    "restart-between-duplicates": [["customers/create", "orders/paid", "refunds/create", "refunds/create",
                                    *SHOPIFY_COMPLIANCE_TOPICS]] * 2,
}
#: The same scenarios' topics for an endpoint subscribed to no compliance topic: as they always were.
PLAIN_PLANS = {
    "duplicate-concurrent": [["customers/create", "orders/paid", "refunds/create"]],
    "sender-timeout": [["customers/create", "orders/paid", "refunds/create"]],
    "dropped-response": [["customers/create", "orders/paid", "refunds/create"]],
    "pause-past-timeout": [["customers/create"], ["orders/paid"]],
    "network-drop-response": [["customers/create"], ["orders/paid"], ["refunds/create"], ["refunds/create"]],
    "replicas-duplicates": [[t] for t in ("customers/create", "orders/paid", "refunds/create", "refunds/create")
                            for _ in range(3)],
    "restart-between-duplicates": [["customers/create", "orders/paid", "refunds/create", "refunds/create"]] * 2,
}


def _topics(scenario_id: str, config: Config) -> list[list[str]]:
    from hookproof.scenarios.chaos import CHAOS_CATALOG, ChaosSettings

    scenario = CATALOG.get(scenario_id) or CHAOS_CATALOG[scenario_id]
    enabled = frozenset(config.target.enabled_events) if config.target.enabled_events else None
    ctx = Context(profile=config.profile(), enabled=enabled, keys=config.key_mapping(), chaos=ChaosSettings())
    plan = scenario.plan(ctx, new_world("shopify", 3))
    assert isinstance(plan, Plan), plan
    if scenario_id == "pause-past-timeout":  # the frozen receiver's deliveries in flight together, several of them
        assert [p.together for p in plan.phases] == [len(plan.phases[0].events) > 1, False]
    return [[e.type for e in phase.events] for phase in plan.phases]


@pytest.mark.parametrize("scenario_id", sorted(CONCURRENT_PLANS))
def test_the_concurrency_timeout_and_chaos_scenarios_deliver_the_subscribed_compliance_topics(scenario_id: str) -> None:
    assert _topics(scenario_id, Config(target=target(enabled_events=EVERY_TOPIC))) == CONCURRENT_PLANS[scenario_id]
    assert _topics(scenario_id, Config(target=target())) == PLAIN_PLANS[scenario_id]
    # a topic named in [business_keys] alone is the one subscribed to, and the one sent beside the others
    keyed = Config(target=target(), business_keys={"customers/data_request": "report:{data_request.id}"})
    told = [t for phase in _topics(scenario_id, keyed) for t in phase]
    assert set(SHOPIFY_COMPLIANCE_TOPICS) & set(told) == {"customers/data_request"}
    # with builtin_keys off, a subscribed compliance topic owing nothing is not sent for an effect
    only = Config(target=target(enabled_events=EVERY_TOPIC), builtin_keys=False,
                  business_keys={"orders/paid": "fulfil:{id}", "customers/redact": "redact:{customer.id}"})
    told = [t for phase in _topics(scenario_id, only) for t in phase]
    assert set(SHOPIFY_COMPLIANCE_TOPICS) & set(told) == {"customers/redact"}


def keyed_config(module: str, tmp_path: Path) -> Config:
    """`shopify_app`'s config running `module`, subscribed to ``customers/data_request`` by its key."""
    cfg = config_of("shopify_app", module, tmp_path)
    return cfg.model_copy(update={"business_keys": {"customers/data_request": "report:{data_request.id}"}})


@pytest.mark.slow
@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.shopify_app", {}),
    ("tests.examples.shopify_data_request_check_then_insert", {"duplicate-concurrent": ["duplicated"]}),
])
def test_a_data_request_checked_then_inserted_fails_the_concurrent_burst(tmp_path: Path, module: str,
                                                                        failed: dict[str, list[str]]) -> None:
    """Copies of one ``customers/data_request`` released together: the twin checking for the event,
    waiting 40 ms and inserting the report sends several reports (``duplicated``, its ``report:``
    key alone); `shopify_app`, claiming topic and Event-Id in the report's transaction, one. The
    go-live checklist's "Keeps effects unique under concurrency" follows."""
    scenarios = ["duplicate-concurrent", "sender-timeout", "dropped-response"]
    report = certify(keyed_config(module, tmp_path), scenarios=scenarios, out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    # the provider's retry after its 1 ms timeout may land within the twin's 40 ms window too
    assert {k: v for k, v in got.items() if k != "sender-timeout"} == failed
    assert got.get("sender-timeout", ["duplicated"] if failed else None) == (["duplicated"] if failed else None)
    duplicated = {str(f.key).split(":")[0] for s in report.scenarios for f in s.findings if f.check_id == "duplicated"}
    assert duplicated == ({"report"} if failed else set())
    sent = {a.event_type for s in report.scenarios for a in s.attempts}
    assert "customers/data_request" in sent
    verdicts = {i.id: i.verdict for i in report.checklist}
    assert verdicts["unique-under-concurrency"] == ("fail" if failed else "pass")


@pytest.mark.slow
def test_a_checklist_pass_names_the_compliance_topics_its_scenarios_never_sent(tmp_path: Path) -> None:
    """`related-burst` releases a new order's first topics together, never a compliance request:
    alone, its pass of "Keeps effects unique under concurrency" says nothing of
    ``customers/data_request``, and the report says so; beside `duplicate-concurrent`, which
    races the data request too, it says nothing more."""
    def checklist_notes(scenarios: list[str], out: str) -> tuple[str, list[str]]:
        report = certify(keyed_config("examples.receivers.shopify_app", tmp_path / out), scenarios=scenarios,
                         out_dir=tmp_path / out / "report").report
        verdict = {i.id: i.verdict for i in report.checklist}["unique-under-concurrency"]
        return verdict, [n for n in report.notes if n.startswith("the go-live checklist's")]

    (tmp_path / "alone").mkdir()
    (tmp_path / "both").mkdir()
    assert checklist_notes(["related-burst"], "alone") == ("pass", [
        "the go-live checklist's \"Keeps effects unique under concurrency\" passed on scenarios that sent no "
        "customers/data_request (related-burst): it says nothing of that topic, which the endpoint is subscribed "
        "to and owes an effect on"])
    assert checklist_notes(["related-burst", "duplicate-concurrent"], "both") == ("pass", [])


@pytest.mark.slow
@pytest.mark.parametrize(("module", "verdict"), [("examples.receivers.shopify_app", "pass"),
                                                 ("tests.examples.shopify_data_request_check_then_insert", "fail")])
def test_a_data_request_checked_then_inserted_fails_the_pause_past_the_timeout(tmp_path: Path, module: str,
                                                                              verdict: str) -> None:
    """``certify --chaos``: the receiver frozen past Shopify's timeout, a data request among the
    deliveries made meanwhile, its retries queued beside its first delivery and handled together
    on the resume: the twin sends its report more than once (``duplicated`` on ``report:``)."""
    from hookproof.config import ChaosConfig, ProcessTargetConfig
    from tests.examples.test_provider_receivers import PROJECT_ROOT

    cfg = keyed_config(module, tmp_path)
    start = cfg.target.start
    assert start is not None
    env = {k: v for k, v in start.env.items() if k != "PORT"}
    process = ProcessTargetConfig(command=start.command, cwd=str(PROJECT_ROOT), health_path="/healthz", env=env)
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": None, "process": process}),
                                 "chaos": ChaosConfig()})
    (scenario,) = certify(cfg, scenarios=["pause-past-timeout"], out_dir=tmp_path / "report", chaos=True).report.scenarios
    assert "customers/data_request" in {a.event_type for a in scenario.attempts}
    assert scenario.verdict == verdict, (scenario.reason, [f.message for f in scenario.findings])
    assert {str(f.key).split(":")[0] for f in scenario.findings} == ({"report"} if verdict == "fail" else set())
    assert {f.check_id for f in scenario.findings} == ({"duplicated"} if verdict == "fail" else set())
