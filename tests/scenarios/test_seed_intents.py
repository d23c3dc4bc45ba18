"""A shop that creates its own PaymentIntents, without Checkout: the seed creates them through the
provider API (`[target.seed] creates = ["payment_intent"]`, ``checkout_modes = []``), and the
catalog's one-off payments confirm, decline, pay and refund *those* intents under their own
fault plans, so every event carries the shop's ``metadata.order_id``.

The shop (`tests.scenarios.intent_shop`, FastAPI) answers 404 for an event whose
``metadata.order_id`` names none of its orders (or whose intent is not the order's), so every
pass below is over its own orders; it fulfils once, keyed by the order
(``order:{data.object.metadata.order_id}``), and its twins fail: ``SHOP_FULFIL=every`` is
``duplicated`` on its own order, ``SHOP_LOOKUP=intent`` (the order looked up as
``ord_<intent id>``, an id the shop never set) rejects every valid delivery and loses the order,
and ``SHOP_STATE=payload`` (a failure's status taken after the payment) regresses its own intent.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from hookproof.certify import certify
from hookproof.config import load_config, parse_config
from hookproof.errors import ConfigError
from hookproof.reports.model import ScenarioReport
from hookproof.scenarios.seeding import SeedHook
from hookproof.simulator.world import World

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_intent_shop_0123456789"
TYPES = ["payment_intent.succeeded", "payment_intent.payment_failed", "charge.succeeded", "charge.failed",
         "charge.refunded"]


def _readme_tables() -> str:
    """The README's ``intents.toml`` block (the seed and keys tables of a shop like this one)."""
    (block,) = re.findall(r"```toml intents\.toml\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"),
                          flags=re.S)
    return str(block)


def _config(tmp_path: Path, *, modes: str | None = "[]", types: list[str] = TYPES, readme: bool = False,
            states: bool = False) -> Path:
    db = tmp_path / "shop.sqlite"
    path = tmp_path / "hookproof.toml"
    from tests.scenarios.intent_shop import EFFECTS, STATES

    tables = f"""
[target.seed]
command = "{sys.executable} -m tests.scenarios.intent_shop"
cwd = "{ROOT}"
creates = ["payment_intent"]
{f"checkout_modes = {modes}" if modes is not None else ""}

[business_keys]
"payment_intent.succeeded" = "order:{{data.object.metadata.order_id}}"
"""
    if readme:  # the README's tables, its seed command the shop's own
        tables = _readme_tables().replace('command = "python -m shop.create_orders"',
                                          f'command = "{sys.executable} -m tests.scenarios.intent_shop"\ncwd = "{ROOT}"')
    path.write_text(f"""
[target]
app = "tests.scenarios.intent_shop:app"
profile = "stripe"
secret = "{SECRET}"
enabled_events = {json.dumps(types)}

{tables}
[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "{EFFECTS}"
{f'states = {{ payment_intent = "{STATES}" }}' if states else ""}

[run]
seed = 21
""", encoding="utf-8")
    return path


@pytest.fixture()
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    db = tmp_path / "shop.sqlite"
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db}")
    monkeypatch.setenv("WEBHOOK_SECRET", SECRET)
    monkeypatch.syspath_prepend(str(ROOT))
    from tests.scenarios.intent_shop import connect

    connect().close()  # the tables exist before the observer's first read
    return tmp_path


def _orders(shop: Path) -> dict[str, tuple[str | None, int, str]]:
    with sqlite3.connect(shop / "shop.sqlite") as conn:
        return {o: (i, a, st) for o, i, a, st in conn.execute("SELECT id, intent, amount, status FROM orders")}


def _run(shop: Path, scenarios: list[str], **config: Any) -> dict[str, ScenarioReport]:
    result = certify(load_config(_config(shop, **config)), scenarios=scenarios, out_dir=shop / "out")
    return {s.id: s for s in result.report.scenarios}


def test_the_catalog_pays_the_intents_the_shop_created_and_a_correct_shop_passes(shop: Path) -> None:
    by_id = _run(shop, ["duplicate-sequential", "related-burst"])
    assert {i: (s.verdict, s.reason) for i, s in by_id.items()} == {
        "duplicate-sequential": ("pass", None), "related-burst": ("pass", None)}
    orders = _orders(shop)
    # one payment in the effect story, two in the burst story: each the shop's own order, paid once
    assert {o: (a, st) for o, (_, a, st) in orders.items()} == {
        "duplicate-sequential-1": (2500, "paid"), "related-burst-1": (2500, "paid"), "related-burst-2": (2600, "paid")}
    for scenario, report in by_id.items():
        intents = {i for o, (i, _, _) in orders.items() if o.startswith(scenario)}
        assert all(i is not None and i.startswith("pi_") for i in intents)
        delivered = {a.object_id for a in report.attempts if a.event_type.startswith("payment_intent.")}
        assert delivered == intents  # every intent event was about the shop's own intents
        assert not any(a.event_type.startswith("checkout.") for a in report.attempts)  # no Checkout at all
        assert {a.status for a in report.attempts if a.valid} == {200}  # the shop 404s what is not its own
    burst = by_id["related-burst"]
    assert sorted(a.event_type for a in burst.attempts) == ["charge.succeeded"] * 2 + ["payment_intent.succeeded"] * 2
    with sqlite3.connect(shop / "shop.sqlite") as conn:
        keys = sorted(k for (k,) in conn.execute("SELECT business_key FROM fulfilments"))
    assert keys == ["order:duplicate-sequential-1", "order:related-burst-1", "order:related-burst-2"]


def test_a_refund_of_the_shops_own_payment_is_recorded_once_per_amount(shop: Path) -> None:
    [report] = _run(shop, ["older-after-newer-redelivery"]).values()
    assert (report.verdict, report.reason) == ("pass", None)
    [(order, (intent, amount, status))] = _orders(shop).items()
    assert (order, amount, status) == ("older-after-newer-redelivery-1", 2500, "pending")  # its refunds alone sent
    assert intent is not None and {a.object_id for a in report.attempts} == {  # the charge the shop's intent made
        a.object_id for a in report.attempts if a.event_type == "charge.refunded"}
    refunded = [a for a in report.attempts if a.event_type == "charge.refunded"]
    assert len(refunded) == 3 and len({a.object_id for a in refunded}) == 1  # R1, R2, then R1 again
    with sqlite3.connect(shop / "shop.sqlite") as conn:
        keys = sorted(k for (k,) in conn.execute("SELECT business_key FROM refunds"))
    charge = refunded[0].object_id
    assert keys == [f"refund:{charge}:1250", f"refund:{charge}:625"]  # a quarter of 2500, twice (sorted as text)


def test_the_twin_that_fulfils_on_every_delivery_fails_duplicated_on_its_own_order(
        shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_FULFIL", "every")
    [report] = _run(shop, ["duplicate-sequential"]).values()
    assert report.verdict == "fail"
    assert {(f.check_id, f.key) for f in report.findings} == {("duplicated", "order:duplicate-sequential-1")}
    [finding] = report.findings
    assert (finding.expected, finding.actual) == (1, 3)  # three copies, three fulfilments


def test_the_twin_looking_its_order_up_by_a_field_it_never_set_loses_the_order(
        shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_LOOKUP", "intent")
    [report] = _run(shop, ["duplicate-sequential"]).values()
    assert report.verdict == "fail"
    [charge] = {a.object_id for a in report.attempts if a.event_type.startswith("charge.")}
    owed = {"order:duplicate-sequential-1", f"refund:{charge}:625"}  # its payment, and a quarter refunded
    assert {(f.check_id, f.key) for f in report.findings} == {
        *(("lost", k) for k in owed), *(("valid_not_rejected", k) for k in owed), ("valid_not_rejected", charge)}
    assert {a.status for a in report.attempts if a.valid} == {404}
    assert [st for _, _, st in _orders(shop).values()] == ["pending"]


def test_a_seed_that_creates_too_few_intents_makes_the_scenario_unknown(
        shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_INTENTS", "1")
    [report] = _run(shop, ["related-burst"]).values()
    assert (report.verdict, report.attempts) == ("unknown", ())
    assert report.reason == ("the seed hook's payment intents do not cover the story: the story needs payment "
                             "intent #2 (unconfirmed, payable by card) and the receiver created 0 of that kind")



def test_the_document_counts_the_payments_each_story_makes(shop: Path) -> None:
    """The seed is told how many intents the story pays (the effect story: one) and what each must
    be (payable by card); the burst story's two are counted by the certify test above."""
    from hookproof.scenarios.catalog import Context, effect_events
    from hookproof.scenarios.seeding import seed_document
    from hookproof.simulator.profiles.stripe import StripeProfile

    ctx = Context(profile=StripeProfile(), checkout_modes=frozenset())
    scratch = World(8)
    effect_events(ctx, scratch)
    assert scratch.story_intents == 1
    document = seed_document(World(8), scenario="s", profile="stripe", create={"payment_intent": scratch.story_intents})
    assert (document["create"], document["create_as"]) == (
        {"payment_intent": 1}, {"payment_intent": {"payment_method_types": ["card"]}})
    assert "create_each" not in document


def test_a_shop_selling_nothing_through_checkout_is_told_no_checkout_session() -> None:
    """``checkout_modes = []``: the stories open no session: the one-off order is a direct payment
    intent and the plan starts through ``POST /v1/subscriptions``; with the default modes the same
    story opens three (a card one, two delayed-method ones) and a fourth for the plan."""
    from hookproof.scenarios.catalog import Context, effect_events
    from hookproof.simulator.profiles.stripe import StripeProfile

    shop_world, default_world = World(8), World(8)
    effect_events(Context(profile=StripeProfile(), checkout_modes=frozenset()), shop_world)
    effect_events(Context(profile=StripeProfile()), default_world)
    assert (shop_world.story_sessions, len(shop_world.objects("checkout.session"))) == (0, 0)
    assert not [e.type for e in shop_world.events if e.type.startswith("checkout.")]
    assert [e.type for e in shop_world.events if e.type.startswith("payment_intent.")] == ["payment_intent.succeeded"]
    assert [e.type for e in shop_world.events if e.type == "customer.subscription.created"] == [
        "customer.subscription.created"]
    assert default_world.story_sessions == 4
    hook = SeedHook(argv=("seed",), creates=("payment_intent",), checkout_modes=())
    assert hook.story_checkout_modes() == frozenset()
    assert SeedHook(argv=("seed",), creates=("payment_intent",)).story_checkout_modes() == {"payment", "subscription"}
    with pytest.raises(ValueError, match="checkout_modes takes payment, subscription, not \\(\\)"):
        SeedHook(argv=("seed",), creates=("checkout.session",), checkout_modes=())


BASE = '[observer]\nkind = "sink"\n[target]\nurl = "http://127.0.0.1:9/h"\nprofile = "stripe"\nsecret = "s"\n'


@pytest.mark.parametrize(("table", "field", "message"), [
    ('[target.seed]\ncommand = "x"\ncreates = ["payment_intents"]\n', "target.seed.creates",
     "a seed creates only checkout.session, customer, subscription, payment_intent for the story, not "
     "'payment_intents'"),
    ('[target.seed]\ncommand = "x"\ncreates = ["checkout.session"]\ncheckout_modes = []\n',
     "target.seed.checkout_modes", "a seed that opens checkout sessions names their modes (payment, subscription); "
     "[] says the shop sells nothing through Checkout"),
    ('[target.seed]\ncommand = "x"\ncreates = ["payment_intent"]\ncheckout_modes = ["payment"]\n', "target.seed",
     'checkout_modes says which sessions the seed opens: add "checkout.session" to creates (or write [] for a shop '
     "that sells nothing through Checkout)"),
    ('enabled_events = ["payment_intent.succeeded", "checkout.session.completed"]\n[target.seed]\ncommand = "x"\n'
     'creates = ["payment_intent"]\ncheckout_modes = []\n', "target.enabled_events",
     "checkout.session.completed is listed while seed.checkout_modes = [] says the shop sells nothing through "
     "Checkout, so no story opens a session to send it; remove the checkout.session.* types or name the shop's "
     "checkout modes"),
], ids=["creates", "modes-empty-with-sessions", "modes-without-sessions", "checkout-events-enabled"])
def test_bad_creates_and_checkout_modes_are_one_config_error_naming_the_field(
        table: str, field: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(BASE + table, "hookproof.toml")
    assert (caught.value.field, str(caught.value).split(f"{field}: ", 1)[1]) == (field, message)


def test_a_key_over_the_shops_own_metadata_is_checked_only_where_its_seed_sets_it() -> None:
    keyed = '[business_keys]\n"payment_intent.succeeded" = "order:{data.object.metadata.order_id}"\n' \
            '"charge.refunded" = "refund:{data.object.metadata.order_id}:{data.object.amount_refunded}"\n'
    seed = '[target.seed]\ncommand = "x"\ncreates = ["payment_intent"]\ncheckout_modes = []\n'
    config = parse_config(BASE + seed + keyed, "hookproof.toml")
    assert config.key_mapping() is not None
    with pytest.raises(ConfigError, match="the event has no field data.object.metadata.order_id"):
        parse_config(BASE + keyed, "hookproof.toml")  # hookproof's own intents carry no order id
    with pytest.raises(ConfigError, match="the event has no field data.object.metadata.order_id"):  # not the shop's
        parse_config(BASE + seed.replace('"payment_intent"', '"customer"') + keyed, "hookproof.toml")
    with pytest.raises(ConfigError, match="the event has no field data.object.order_id"):  # only metadata is the shop's
        parse_config(BASE + seed + keyed.replace("metadata.order_id}\"\n\"charge", "order_id}\"\n\"charge"),
                     "hookproof.toml")


def test_the_readmes_tables_certify_the_shop(shop: Path) -> None:
    """The README's ``intents.toml`` (its command the shop's): the seed creates the shop's intents,
    keyed by their ``metadata.order_id``, and the shop passes."""
    config = load_config(_config(shop, readme=True))
    assert config.target.seed is not None
    assert (config.target.seed.creates, config.target.seed.checkout_modes) == (["payment_intent"], [])
    result = certify(config, scenarios=["duplicate-sequential"], out_dir=shop / "out")
    [report] = result.report.scenarios
    assert (report.verdict, report.reason) == ("pass", None)
    with sqlite3.connect(shop / "shop.sqlite") as conn:
        assert [k for (k,) in conn.execute("SELECT business_key FROM fulfilments")] == ["order:duplicate-sequential-1"]


def test_a_shop_that_keeps_hookproofs_checkout_is_told_why_its_metadata_key_fails(shop: Path) -> None:
    """Without ``checkout_modes = []`` the story also buys through Checkout; that session's payment
    intent is hookproof's, without the shop's order id: the scenario is an error saying so."""
    [report] = _run(shop, ["duplicate-sequential"], modes=None).values()
    assert (report.verdict, report.attempts) == ("error", ())
    assert report.reason == (
        "could not read a field the config names: order:{data.object.metadata.order_id}: the event has no field "
        "data.object.metadata.order_id (data.object.metadata has no 'order_id'); the shop's seed sets that metadata, "
        "but an object the story made itself carries none (a Checkout Session's payment intent: with creates = "
        "[\"payment_intent\"], checkout_modes = [] says the shop sells nothing through Checkout; else key that type "
        "with a when rule)")
    assert _orders(shop) and all(status == "pending" for _, _, status in _orders(shop).values())


def test_the_shops_intent_declined_then_paid_keeps_its_success_when_the_failure_arrives_last(shop: Path) -> None:
    """With the intents' states read, the story declines the shop's own intent, then pays it on a
    retry, and delivers the failure last: the shop keeps ``succeeded``."""
    [report] = _run(shop, ["stale-failure-after-success"], states=True).values()
    assert (report.verdict, report.reason) == ("pass", None)
    [(order, (intent, _, status))] = _orders(shop).items()
    assert (order, status) == ("stale-failure-after-success-1", "paid")
    assert [a.event_type for a in report.attempts] == ["payment_intent.succeeded", "payment_intent.payment_failed"]
    assert {a.object_id for a in report.attempts} == {intent}


def test_the_twin_taking_the_failures_status_last_regresses_its_own_intent(
        shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_STATE", "payload")
    [report] = _run(shop, ["stale-failure-after-success"], states=True).values()
    [(intent, _, _)] = _orders(shop).values()
    assert report.verdict == "fail"
    assert {(f.check_id, f.key) for f in report.findings} == {("regressed", intent), ("stale", intent)}


def test_with_customers_bound_too_the_story_pays_the_shops_intent_of_the_shops_customer() -> None:
    """``creates = ["customer", "payment_intent"]``: the story's customer is the shop's, held back
    until the story tells its creation, and its payment confirms the shop's intent for that
    customer with the customer's own card."""
    w = World(5)
    w.hold_receiver_creates(["customer", "payment_intent"])
    customer = w.event(w.create_customer(email="ada@shop.example", by_receiver=True)).object_id
    intent = w.create_payment_intent(amount=4200, currency="eur", customer=customer, metadata={"order_id": "o-9"})
    assert w.events == []  # the customer's creation waits for the story; an intent's emits nothing
    w.bind_receiver_creates(["customer", "payment_intent"])
    story_customer = w.event(w.create_customer()).object_id
    assert w.pay(story_customer) == intent and story_customer == customer
    assert [(e.type, e.object_id) for e in w.events] == [
        ("customer.created", customer), ("payment_intent.succeeded", intent),
        ("charge.succeeded", w.get(intent)["latest_charge"])]
    charge = w.get(w.get(intent)["latest_charge"])
    assert (charge["customer"], charge["amount"], charge["currency"], charge["metadata"]) == (
        customer, 4200, "eur", {"order_id": "o-9"})
    assert charge["payment_method"] == w.get(customer)["invoice_settings"]["default_payment_method"]
    assert (w.story_customers, w.story_intents) == (1, 1)
