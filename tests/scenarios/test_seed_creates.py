"""A shop's own checkout flow: the seed creates the checkout sessions through the provider API
(`[target.seed] creates = ["checkout.session"]`), and the catalog's scenarios complete and
deliver *those* sessions, with the shop's ``client_reference_id`` and ``metadata``, under
their own fault plans (issue 15, item 3).

The shop (`tests.scenarios.checkout_shop`, from Stripe's Checkout docs) answers 404 for a
session it did not create, so every pass below is over its own sessions; it fulfils once,
and its twin (``SHOP_FULFIL=every``) fails ``duplicated`` on the fulfilment of its own session.
"""

from __future__ import annotations

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
from hookproof.simulator.world.world import UnboundCheckout

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_checkout_shop_0123456789"
SCENARIOS = ["duplicate-sequential", "duplicate-concurrent", "test-mode-to-live"]


def _config(tmp_path: Path, *, creates: str = '["checkout.session"]', environment: str = "test",
            connect: bool = False) -> Path:
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


def test_creates_names_what_a_seed_can_create_and_needs_the_stripe_profile() -> None:
    base = '[observer]\nkind = "sink"\n[target]\nurl = "http://127.0.0.1:9/h"\nprofile = "{p}"\nsecret = "s"\n' \
           '[target.seed]\ncommand = "x"\n'
    with pytest.raises(ConfigError, match="creates only checkout.session for the story, not 'customer'"):
        parse_config(base.format(p="stripe") + 'creates = ["customer"]\n')
    with pytest.raises(ConfigError, match="only the stripe profile's API creates objects, not 'github'"):
        parse_config(base.format(p="github") + 'creates = ["checkout.session"]\n')
    seed = parse_config(base.format(p="stripe") + 'creates = ["checkout.session"]\n').target.seed
    assert seed is not None and seed.creates == ["checkout.session"]
