"""A counter over Shopify's money: decimal strings, read exactly in their currency's minor units.

Shopify writes money as decimal strings in major units (``"total_price": "60.42"``, beside the
order's ``currency``). ``[counters."orders/paid"] key = "{customer.id}" amount = "total_price"``
was refused ("not an integer amount"); it now reads 6042 (cents, by ISO 4217's minor units of
the currency beside the amount or at the top of the event; a `Decimal`, never a float), so a
Shopify app's store credit balance can be certified: `shopify_app` (one credit per event) passes
the counter, its twin without dedupe credits a redelivered ``orders/paid`` again.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config import parse_config
from hookproof.config_model import CounterConfig
from hookproof.errors import ConfigError
from hookproof.scenarios.business_keys import CounterRule, KeyMapping, minor_units
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import emit_events, new_world
from tests.examples.test_provider_receivers import config_of

CONFIG = ('[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "shopify"\nsecret = "shpss_x"\n\n'
          '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n'
          'counter = "SELECT customer_id AS key, amount FROM credits"\n\n'
          '[counters."orders/paid"]\nkey = "{customer.id}"\namount = "total_price"\n')


def test_a_decimal_total_is_read_in_cents() -> None:
    mapping = parse_config(CONFIG, "hookproof.toml").key_mapping()
    events = emit_events(new_world("shopify", 5), "orders/paid", 3)
    assert len(events) == 3
    for event in events:
        total = event.object["total_price"]
        assert isinstance(total, str) and "." in total and event.object["currency"] == "USD"
        assert mapping.counter_of(event) == (str(event.object["customer"]["id"]), int(total.replace(".", "")))


def test_the_currency_beside_the_amount_decides_its_minor_units() -> None:
    """A refund's transaction carries its own ``currency``; a zero-decimal currency has no minor
    digits and a three-decimal one three; a decimal with more digits than that is refused."""
    profile = get_profile("shopify")
    (refund,) = emit_events(new_world("shopify", 5), "refunds/create")
    mapping = KeyMapping({}, profile, {"refunds/create": CounterRule("{order_id}", "transactions.0.amount")})
    tx = refund.object["transactions"][0]
    assert mapping.counter_of(refund) == (str(refund.object["order_id"]), int(tx["amount"].replace(".", "")))
    assert (minor_units("60.42", "USD"), minor_units("2400.0", "JPY"), minor_units("1.234", "KWD")) == (6042, 2400, 1234)
    assert minor_units("60.425", "USD") is None and minor_units("2400.5", "JPY") is None
    assert minor_units("-5.10", "eur") == -510
    yen = replace(refund, object={**refund.object, "transactions": [{**tx, "amount": "2400.5", "currency": "JPY"}]})
    with pytest.raises(ValueError, match=r"is '2400.5', a decimal amount with more digits than JPY's minor units"):
        mapping.counter_of(yen)
    bare = replace(refund, object={**refund.object, "transactions": [
        {k: v for k, v in tx.items() if k != "currency"}]})
    with pytest.raises(ValueError, match=r"a decimal amount with no currency_code or currency beside it"):
        mapping.counter_of(bare)


def test_an_amount_that_is_neither_is_one_config_error() -> None:
    with pytest.raises(ConfigError, match=r'counters."orders/paid": email: is \'\S+\', not an amount: a counter\'s '
                                          r"amount is minor units \(a number or a string of digits\) or a decimal "
                                          r"string with its currency beside it") as caught:
        parse_config(CONFIG.replace('"total_price"', '"email"'), "hookproof.toml").key_mapping()
    assert str(caught.value).count("\n") == 0


@pytest.mark.slow
@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.shopify_app", {}),
    ("examples.receivers.shopify_app_no_dedupe", {"duplicate-sequential": ["counter", "duplicated"],
                                                  "mass-redelivery": ["counter", "duplicated"]}),
])
def test_a_store_credit_balance_is_certified(tmp_path: Path, module: str, failed: dict[str, list[str]]) -> None:
    cfg = config_of("shopify_app", module, tmp_path)
    assert cfg.observer is not None
    cfg = cfg.model_copy(update={
        "counters": {"orders/paid": CounterConfig(key="{customer.id}", amount="total_price")},
        "observer": cfg.observer.model_copy(update={"counter": "SELECT customer_id AS key, amount FROM credits"})})
    report = certify(cfg, scenarios=["duplicate-sequential", "mass-redelivery"], out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed
    ran = {s.id: s for s in report.scenarios}
    for scenario in ran.values():
        counter = next(c for c in scenario.checks if c.check_id == "counter")
        assert counter.stats.get("counters", 0) >= 1, counter.stats
