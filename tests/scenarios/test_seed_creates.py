"""A shop's own checkout flow: the seed creates the checkout sessions through the provider API
(`[target.seed] creates = ["checkout.session"]`), and the catalog's scenarios complete and
deliver *those* sessions, with the shop's ``client_reference_id`` and ``metadata``, under
their own fault plans (issue 15, item 3).

The shop (`tests.scenarios.checkout_shop`, from Stripe's Checkout docs) answers 404 for a
session it did not create, so every pass below is over its own sessions; it fulfils once,
and its twin (``SHOP_FULFIL=every``) fails ``duplicated`` on the fulfilment of its own session.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from hookproof.certify import certify
from hookproof.config import load_config, parse_config
from hookproof.errors import ConfigError
from hookproof.reports.model import ScenarioReport
from hookproof.simulator.world import World
from hookproof.simulator.world.world import UnboundCheckout, UnboundReceiverObject

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_checkout_shop_0123456789"
SCENARIOS = ["duplicate-sequential", "duplicate-concurrent", "test-mode-to-live"]


def _config(tmp_path: Path, *, creates: str = '["checkout.session"]', environment: str = "test",
            connect: bool = False, modes: str | None = None) -> Path:
    db = tmp_path / "shop.sqlite"
    path = tmp_path / "hookproof.toml"
    path.write_text(f"""
[target]
app = "tests.scenarios.checkout_shop:app"
profile = "stripe"
secret = "{SECRET}"
environment = "{environment}"
connect = {str(connect).lower()}
enabled_events = ["checkout.session.completed", "checkout.session.expired",
                  "checkout.session.async_payment_succeeded", "checkout.session.async_payment_failed"]

[target.seed]
command = "{sys.executable} -m tests.scenarios.checkout_shop"
cwd = "{ROOT}"
creates = {creates}
{f"checkout_modes = {modes}" if modes else ""}

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key FROM fulfilments"

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
    from tests.scenarios.checkout_shop import connect

    connect().close()  # the tables exist before the observer's first read
    return tmp_path


def _orders(shop: Path) -> dict[str, tuple[str | None, str]]:
    with sqlite3.connect(shop / "shop.sqlite") as conn:
        return {o: (s, st) for o, s, st in conn.execute("SELECT id, session, status FROM orders")}


def _run(shop: Path, scenarios: list[str], **config: Any) -> dict[str, ScenarioReport]:
    result = certify(load_config(_config(shop, **config)), scenarios=scenarios, out_dir=shop / "out")
    return {s.id: s for s in result.report.scenarios}


def test_the_catalog_completes_the_sessions_the_shop_created_and_a_correct_shop_passes(shop: Path) -> None:
    by_id = _run(shop, SCENARIOS[:2])
    assert {i: (s.verdict, s.reason) for i, s in by_id.items()} == {
        "duplicate-sequential": ("pass", None), "duplicate-concurrent": ("pass", None)}
    orders = _orders(shop)
    assert set(orders) == {"duplicate-sequential-1", "duplicate-concurrent-1"}  # one session each: what the story opens
    for scenario, report in by_id.items():
        session, status = orders[f"{scenario}-1"]
        assert status == "paid" and session is not None and session.startswith("cs_test_")
        # every delivery was about the shop's own session, acknowledged (the shop 404s others)
        assert {(a.object_id, a.event_type) for a in report.attempts} == {(session, "checkout.session.completed")}
        assert {a.status for a in report.attempts if a.valid} == {200}


def test_the_twin_that_fulfils_on_every_delivery_fails_duplicated_on_its_own_session(
        shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_FULFIL", "every")
    [report] = _run(shop, ["duplicate-sequential"]).values()
    [(session, _)] = _orders(shop).values()
    assert report.verdict == "fail"
    assert {(f.check_id, f.key) for f in report.findings} == {("duplicated", f"fulfillment:{session}")}
    [finding] = report.findings
    assert (finding.expected, finding.actual) == (1, 3)  # three copies, three fulfilments


def test_a_live_shop_that_never_compares_livemode_fulfils_a_test_mode_session(shop: Path) -> None:
    [report] = _run(shop, ["test-mode-to-live"], environment="live", connect=True).values()
    [(session, status)] = _orders(shop).values()
    assert status == "paid"  # the shop's own session, delivered as a test-mode event, was fulfilled
    assert report.verdict == "fail"
    assert {(f.check_id, f.key) for f in report.findings} == {("unexpected", f"fulfillment:{session}")}


def test_an_account_endpoint_is_never_sent_the_other_mode_so_not_comparing_livemode_is_no_fault(
        shop: Path) -> None:
    """Stripe sends another mode's events only to a Connect endpoint (stripe.com/docs/connect/webhooks)."""
    [report] = _run(shop, ["test-mode-to-live"], environment="live").values()
    assert (report.verdict, report.attempts) == ("not_applicable", ())
    assert report.reason is not None and "Connect endpoint" in report.reason and "target.connect" in report.reason
    assert all(status != "paid" for _, status in _orders(shop).values())


def test_a_seed_that_creates_too_few_sessions_makes_the_scenario_unknown(
        shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_SESSIONS", "0")
    [report] = _run(shop, ["duplicate-sequential"]).values()
    assert (report.verdict, report.attempts) == ("unknown", ())
    assert report.reason == ("the seed hook's checkout sessions do not cover the story: the story needs "
                             "payment-mode checkout session #1 (paid by card) and the receiver opened 0 of that kind")


def test_a_saas_selling_plans_has_its_subscription_mode_sessions_completed_and_provisions_once(
        shop: Path) -> None:
    """A SaaS's checkout opens subscription-mode sessions only (``checkout_modes``): the stories
    complete those, each delivery is about the SaaS's own session in subscription mode, and
    provisioning once per session passes."""
    by_id = _run(shop, SCENARIOS[:2], modes='["subscription"]')
    assert {i: (s.verdict, s.reason) for i, s in by_id.items()} == {
        "duplicate-sequential": ("pass", None), "duplicate-concurrent": ("pass", None)}
    orders = _orders(shop)
    assert set(orders) == {"duplicate-sequential-1", "duplicate-concurrent-1"}
    for scenario, report in by_id.items():
        session, status = orders[f"{scenario}-1"]
        assert status == "paid" and session is not None
        assert {(a.object_id, a.event_type) for a in report.attempts} == {(session, "checkout.session.completed")}
        assert {a.status for a in report.attempts if a.valid} == {200}
    with sqlite3.connect(shop / "shop.sqlite") as conn:
        keys = sorted(k for (k,) in conn.execute("SELECT business_key FROM fulfilments"))
    assert keys == sorted(f"provision:{session}" for session, _ in orders.values())


def test_the_saas_twin_provisioning_on_every_delivery_fails_duplicated_on_its_own_session(
        shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_FULFIL", "every")
    [report] = _run(shop, ["duplicate-sequential"], modes='["subscription"]').values()
    [(session, _)] = _orders(shop).values()
    assert report.verdict == "fail"
    assert {(f.check_id, f.key) for f in report.findings} == {("duplicated", f"provision:{session}")}
    [finding] = report.findings
    assert (finding.expected, finding.actual) == (1, 3)


def test_a_seed_opening_sessions_of_another_mode_than_the_stories_ask_says_which(
        shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The config says the shop sells one-off orders; its seed opens plans: the scenario is
    unknown, its reason naming both modes."""
    monkeypatch.setenv("SHOP_MODE", "subscription")
    [report] = _run(shop, ["duplicate-sequential"]).values()
    assert (report.verdict, report.attempts) == ("unknown", ())
    assert report.reason == ("the seed hook's checkout sessions do not cover the story: the story needs "
                             "payment-mode checkout session #1 (paid by card) and the receiver opened 0 of that kind "
                             "(and 1 subscription-mode paid by card)")


def test_checkout_modes_takes_payment_and_subscription_with_checkout_sessions_created(tmp_path: Path) -> None:
    base = '[target]\nurl = "http://127.0.0.1:1/h"\nsecret = "s"\n[target.seed]\ncommand = "seed"\n'
    config = parse_config(base + 'creates = ["checkout.session"]\ncheckout_modes = ["subscription", "payment"]\n'
                          '[observer]\nkind = "sink"\n')
    assert config.target.seed is not None and config.target.seed.checkout_modes == ["subscription", "payment"]
    with pytest.raises(ConfigError, match="checkout_modes.*payment or subscription mode, not 'setup'"):
        parse_config(base + 'creates = ["checkout.session"]\ncheckout_modes = ["setup"]\n[observer]\nkind = "sink"\n')
    with pytest.raises(ConfigError, match="add \"checkout.session\" to creates"):
        parse_config(base + 'creates = ["customer"]\ncheckout_modes = ["subscription"]\n[observer]\nkind = "sink"\n')


def test_a_story_binds_to_the_receivers_open_sessions_in_creation_order() -> None:
    w = World(5)
    price = w.create_price(interval=None)
    mine = [w.open_checkout(None, price, client_reference_id=f"o-{i}", metadata={"order": f"o-{i}"},
                            by_receiver=True) for i in range(2)]
    w.bind_receiver_sessions()
    other = w.create_price(interval=None)
    assert [w.open_checkout(None, other) for _ in range(2)] == mine
    done = [e for e in w.complete_checkout(mine[1]) if e.type == "checkout.session.completed"]
    assert [(e.object["client_reference_id"], e.object["metadata"]) for e in done] == [("o-1", {"order": "o-1"})]
    with pytest.raises(UnboundCheckout, match="needs payment-mode checkout session #3 .* opened 2 of that kind"):
        w.open_checkout(None, other)
    assert (w.story_sessions, w.receiver_sessions) == (3, mine)


def test_a_story_binds_subscription_mode_sessions_by_their_mode() -> None:
    """A subscription-mode session the receiver opened is bound to the story's subscription
    Checkout, not to its payment-mode one; completing it starts the subscription its
    ``subscription_data`` describes (a trial here) and provisions the session."""
    w = World(6)
    plan = w.open_checkout(None, w.create_price(), mode="subscription", trial=True, client_reference_id="u-1",
                           subscription_metadata={"user": "1"}, by_receiver=True)
    order = w.open_checkout(None, w.create_price(interval=None), client_reference_id="o-1", by_receiver=True)
    w.bind_receiver_creates(["checkout.session"])
    assert w.open_checkout(None, w.create_price(interval=None)) == order
    sub = w.subscribe_through_checkout(None)
    done = next(e for e in w.events if e.type == "checkout.session.completed")
    assert (done.object_id, done.object["client_reference_id"], done.object["payment_status"]) == (
        plan, "u-1", "no_payment_required")
    assert (w.get(sub)["status"], w.get(sub)["metadata"], done.business_key) == ("trialing", {"user": "1"},
                                                                                 f"provision:{plan}")
    with pytest.raises(UnboundCheckout, match="subscription-mode checkout session #3 .* opened 1 of that kind "
                                              r"\(and 1 payment-mode paid by card\)"):
        w.subscribe_through_checkout(None)


def test_creates_names_what_a_seed_can_create_and_needs_the_stripe_profile() -> None:
    base = '[observer]\nkind = "sink"\n[target]\nurl = "http://127.0.0.1:9/h"\nprofile = "{p}"\nsecret = "s"\n' \
           '[target.seed]\ncommand = "x"\n'
    with pytest.raises(ConfigError, match="creates only checkout.session, customer, subscription, payment_intent for "
                                          "the story, not 'refund'"):
        parse_config(base.format(p="stripe") + 'creates = ["customer", "refund"]\n')
    with pytest.raises(ConfigError, match="only the stripe profile's API creates objects, not 'github'"):
        parse_config(base.format(p="github") + 'creates = ["checkout.session"]\n')
    seed = parse_config(base.format(p="stripe") + 'creates = ["checkout.session"]\n').target.seed
    assert seed is not None and seed.creates == ["checkout.session"]
    seed = parse_config(base.format(p="stripe") + 'creates = ["customer", "subscription"]\n').target.seed
    assert seed is not None and seed.creates == ["customer", "subscription"]


# ---- a shop's own subscriptions: `creates = ["customer", "subscription"]` ---------------

SUB_EVENTS = ["customer.created", "customer.subscription.created", "customer.subscription.updated",
              "customer.subscription.deleted", "invoice.paid"]


def _subscription_config(tmp_path: Path, *, creates: str = '["customer", "subscription"]') -> Path:
    db = tmp_path / "members.sqlite"
    path = tmp_path / "hookproof.toml"
    path.write_text(f"""
[target]
url = "http://127.0.0.1:{{port}}/webhooks"
profile = "stripe"
secret = "{SECRET}"
enabled_events = {json.dumps(SUB_EVENTS)}

[target.start]
command = "{sys.executable} -m tests.scenarios.subscription_shop serve {{port}}"
cwd = "{ROOT}"

[target.seed]
command = "{sys.executable} -m tests.scenarios.subscription_shop"
cwd = "{ROOT}"
creates = {creates}

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key FROM grants"
state = "SELECT subscription AS object_id, status FROM accounts WHERE subscription IS NOT NULL"

[run]
seed = 22
""", encoding="utf-8")
    return path


@pytest.fixture()
def members(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'members.sqlite'}")
    monkeypatch.setenv("WEBHOOK_SECRET", SECRET)
    monkeypatch.syspath_prepend(str(ROOT))
    from tests.scenarios.subscription_shop import connect

    connect().close()  # the tables exist before the observer's first read
    return tmp_path


def _accounts(members: Path) -> dict[str, tuple[str, str | None, str]]:
    with sqlite3.connect(members / "members.sqlite") as conn:
        return {u: (c, s, st) for u, c, s, st in conn.execute("SELECT user, customer, subscription, status "
                                                              "FROM accounts")}


def _run_members(members: Path, scenarios: list[str], **config: Any) -> dict[str, ScenarioReport]:
    result = certify(load_config(_subscription_config(members, **config)), scenarios=scenarios,
                     out_dir=members / "out")
    return {s.id: s for s in result.report.scenarios}


def test_the_catalog_delivers_the_subscriptions_the_shop_created_and_a_correct_shop_passes(members: Path) -> None:
    by_id = _run_members(members, ["duplicate-sequential", "duplicate-concurrent", "reorder"])
    assert {i: (s.verdict, s.reason) for i, s in by_id.items()} == {
        "duplicate-sequential": ("pass", None), "duplicate-concurrent": ("pass", None), "reorder": ("pass", None)}
    accounts = _accounts(members)
    with sqlite3.connect(members / "members.sqlite") as conn:
        grants = dict(conn.execute("SELECT business_key, user FROM grants"))
    for scenario in ("duplicate-sequential", "duplicate-concurrent"):  # effects: the first invoice's payment
        paid = {a.object_id for a in by_id[scenario].attempts if a.event_type == "invoice.paid"}
        assert paid and {grants[f"renewal:{i}"] for i in paid} == {f"{scenario}-1"}  # the shop's own account
    subscriptions = {a.object_id for a in by_id["reorder"].attempts}  # states: the subscription's whole life
    assert subscriptions == {s for u, (_, s, _) in accounts.items() if u.startswith("reorder-")}
    for report in by_id.values():  # every delivery was about the shop's objects (it 404s others), acknowledged
        assert {a.status for a in report.attempts if a.valid} == {200}
    # the story paid the shop's default_incomplete subscription: its creation, then the payment, were delivered
    reorder = {a.event_type for a in by_id["reorder"].attempts}
    assert {"customer.subscription.created", "customer.subscription.updated",
            "customer.subscription.deleted"} <= reorder
    assert any(status == "canceled" for _, _, status in accounts.values())


def test_the_twin_without_dedupe_fails_duplicated_on_its_own_subscriptions_invoice(
        members: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_DEDUPE", "off")
    [report] = _run_members(members, ["duplicate-sequential"]).values()
    [(customer, subscription, _)] = _accounts(members).values()
    assert report.verdict == "fail"
    paid = {a.object_id for a in report.attempts if a.event_type == "invoice.paid"}
    assert {(f.check_id, f.key) for f in report.findings} == {("duplicated", f"renewal:{i}") for i in paid}
    assert paid and subscription is not None and customer is not None


def test_a_seed_that_creates_too_few_subscriptions_makes_the_scenario_unknown(
        members: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_SUBSCRIPTIONS", "0")
    [report] = _run_members(members, ["duplicate-sequential"], creates='["subscription"]').values()
    assert (report.verdict, report.attempts) == ("unknown", ())
    assert report.reason == ("the seed hook's subscriptions do not cover the story: the story needs subscription #1 "
                             "(active or incomplete) and the receiver created 0 of that kind")


def test_a_story_binds_to_the_receivers_customers_and_subscriptions_and_tells_their_creation() -> None:
    w = World(5)
    w.hold_receiver_creates(["customer", "subscription"])
    price = w.create_price()
    customers = [w.event(w.create_customer(metadata={"user": f"u{i}"}, by_receiver=True)).object_id
                 for i in range(2)]
    mine = [w.subscribe(c, price, metadata={"user": f"u{i}"}, default_incomplete=i == 0, by_receiver=True)
            for i, c in enumerate(customers)]
    assert w.events == []  # held back while the seed runs
    w.bind_receiver_creates(["customer", "subscription"])
    start = len(w.events)
    assert w.event(w.create_customer()).object_id == customers[0]
    assert w.subscribe(customers[0], trial=False) == mine[0]
    told = w.events[start:]
    assert [e.type for e in told] == ["customer.created", "customer.subscription.created", "invoice.created",
                                      "customer.subscription.updated", "invoice.paid", "customer.subscription.updated"]
    assert told[-1].status == "active"  # the story paid the incomplete subscription's first invoice
    assert {e.object["metadata"]["user"] for e in told if e.object_type != "invoice"} == {"u0"}
    assert {e.object["parent"]["subscription_details"]["metadata"]["user"]
            for e in told if e.object_type == "invoice"} == {"u0"}
    assert w.subscribe(customers[0]) == mine[1]
    with pytest.raises(UnboundReceiverObject, match=r"needs subscription #3 \(active or incomplete\) .* created 2 of"):
        w.subscribe(customers[0])
    with pytest.raises(UnboundReceiverObject, match=r"subscription #4 \(on trial\) and the receiver created 0 of"):
        w.subscribe(customers[0], trial=True)
    w.create_customer()  # the second customer
    with pytest.raises(UnboundReceiverObject, match="needs customer #3 and the receiver created 2"):
        w.create_customer()
    assert (w.story_customers, w.story_subscriptions) == (3, 4)
    later = w.subscribe(customers[1], price, metadata={"user": "u1"}, by_receiver=True)  # emitted at once now
    assert any(e.object_id == later and e.type == "customer.subscription.created" for e in w.events)
