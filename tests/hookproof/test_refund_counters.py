"""A counter a refund reduces: ``since`` (count the change of a cumulative amount) and ``sign``.

A SaaS crediting a customer's balance on ``invoice.paid`` and reversing it on
``charge.refunded`` could not declare the reversal: every counted event added its amount, so a
correct receiver netting refunds failed ``counter`` ("counter is 4925; the provider's truth
implies 9900"). Stripe's ``charge.refunded`` carries the charge's cumulative
``amount_refunded``; the refund's own amount is its change since
``data.previous_attributes.amount_refunded``. ``since`` names that path, ``sign = -1``
subtracts; a bad value of either is one config error naming the field and its line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookproof.config import load_config
from hookproof.errors import ConfigError
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome

BASE = ('builtin_keys = false\n[target]\nurl = "http://127.0.0.1:9/webhooks"\nsecret = "whsec_x"\n'
        '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n'
        'counter = "SELECT customer, amount FROM balances"\n'
        '[business_keys]\n"invoice.paid" = "renewal:{data.object.id}"\n'
        '[counters."invoice.paid"]\nkey = "{data.object.customer}"\namount = "data.object.amount_paid"\n')
REFUND = ('[counters."charge.refunded"]\nkey = "{data.object.customer}"\namount = "data.object.amount_refunded"\n'
          'since = "data.previous_attributes.amount_refunded"\nsign = -1\n')
SIGN = ("a counter's sign is 1 (each event adds its amount) or -1 (it subtracts it: a refund reversing a credit)")
SINCE = ("not an integer: a counter with since counts the change between two integers of minor units (a number or "
         "a string of digits)")


def _attempts(events: list) -> list[Attempt]:
    return [Attempt(event_id=e.id, delivery_id=f"dlv_{e.id}_{n}", attempt=1, business_key=e.business_key,
                    object_id=e.object_id, object_version=e.version, event_type=e.type, faults=(), valid=True,
                    sent_at=0.0, answered_at=0.0, status=200, outcome=Outcome.ACKED, completion=Completion.OK,
                    latency_ms=1.0) for n, e in enumerate(events)]


@pytest.mark.parametrize("builtin", [True, False])
def test_the_truth_nets_each_refund_once_from_the_cumulative_amount(tmp_path: Path, builtin: bool) -> None:
    """A credit of 1500, a partial refund of 500 (amount_refunded 500) and a second of 300
    (amount_refunded 800): the truth is 1500 - 500 - 300 = 700, every event delivered twice;
    the same with hookproof's built-in refund keys (``refund:<charge>:<cumulative>``) on."""
    from hookproof.scenarios.business_keys import counter_truth, keyed
    from hookproof.simulator.world import World

    path = tmp_path / "hookproof.toml"
    text = BASE + REFUND
    path.write_text(text if not builtin else text.replace("builtin_keys = false\n", ""), encoding="utf-8")
    mapping = load_config(path).key_mapping()
    w = World(3)
    cus = w.event(w.create_customer()).object_id
    invoice = w.renew(w.subscribe(cus))
    charge = w.get(invoice)["charge"]
    w.refund(charge, 500)
    w.refund(charge, 300)
    events = [e for e in keyed(w.events, mapping) if e.type == "invoice.paid" and e.object_id == invoice
              or e.type == "charge.refunded"]
    assert [(e.type, e.object.get("amount_paid", e.object.get("amount_refunded"))) for e in events] == [
        ("invoice.paid", 1500), ("charge.refunded", 500), ("charge.refunded", 800)]
    assert [mapping.counter_of(e) for e in events] == [(cus, 1500), (cus, -500), (cus, -300)]
    assert counter_truth([*events, *events], _attempts([*events, *events]), mapping) == {cus: 700}
    # without since and sign, the cumulative amounts add: the counter a refund could not reduce
    plain = load_config(path).key_mapping()
    from dataclasses import replace
    grows = replace(plain, counters={**plain.counters, "charge.refunded": replace(
        plain.counters["charge.refunded"], since=None, sign=1)})
    assert counter_truth(events, _attempts(events), grows) == {cus: 1500 + 500 + 800}


def test_the_rule_survives_the_storm_spec() -> None:
    from hookproof.scenarios.business_keys import CounterRule, KeyMapping, from_plain, to_plain
    from hookproof.simulator.profiles import get_profile

    profile = get_profile("stripe")
    rule = CounterRule("{data.object.customer}", "data.object.amount_refunded",
                       "data.previous_attributes.amount_refunded", -1)
    mapping = KeyMapping({}, profile, {"charge.refunded": rule})
    assert from_plain(to_plain(mapping), profile).counters == {"charge.refunded": rule}
    old = {"counters": {"invoice.paid": {"key": "{data.object.customer}", "amount": "data.object.amount_paid"}}}
    assert from_plain(old, profile).counters["invoice.paid"] == CounterRule("{data.object.customer}",
                                                                           "data.object.amount_paid", None, 1)


@pytest.mark.parametrize(("entry", "field", "message"), [
    ("sign = 2", "sign", f"is 2: {SIGN}"),
    ("sign = 0", "sign", f"is 0: {SIGN}"),
    ("sign = -1.0", "sign", f"is -1.0: {SIGN}"),
    ("sign = true", "sign", f"is true: {SIGN}"),
    ('sign = "-1"', "sign", f"is '-1': {SIGN}"),
    ('since = "data.previous_attributes.amount"', "since",
     "data.previous_attributes.amount: the event has no field data.previous_attributes.amount "
     "(data.previous_attributes has no 'amount')"),
    ('since = "data.object.currency"', "since", f"data.object.currency: is 'usd', {SINCE}"),
])
def test_a_bad_sign_or_since_is_one_config_error_naming_its_line(tmp_path: Path, entry: str, field: str,
                                                                  message: str) -> None:
    path = tmp_path / "hookproof.toml"
    path.write_text(BASE + '[counters."charge.refunded"]\nkey = "{data.object.customer}"\n'
                    f'amount = "data.object.amount_refunded"\n{entry}\n', encoding="utf-8")
    line = path.read_text(encoding="utf-8").splitlines().index(entry) + 1
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert (caught.value.field, caught.value.line) == (f'counters."charge.refunded".{field}', line)
    assert str(caught.value) == f'{path}:{line}: counters."charge.refunded".{field}: {message}'


def test_since_needs_an_integer_amount(tmp_path: Path) -> None:
    """Shopify's money is a decimal string: its change is not counted (since names its line)."""
    path = tmp_path / "hookproof.toml"
    path.write_text('[target]\nurl = "http://127.0.0.1:9/webhooks"\nsecret = "shpss_x"\nprofile = "shopify"\n'
                    '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n'
                    'counter = "SELECT 1, 1"\n[counters."orders/paid"]\nkey = "{customer.id}"\namount = "total_price"\n'
                    'since = "subtotal_price"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == (f"{path}:13: counters.\"orders/paid\".since: the amount total_price is "
                                 f"{load_config_total(path)!r}, {SINCE}")


def load_config_total(path: Path) -> str:
    """The sample order's total_price the config check reads (the world's first orders/paid)."""
    from hookproof.config_model import _sample_events
    from hookproof.simulator.profiles import get_profile

    sample = _sample_events("orders/paid", get_profile("shopify").world)[0]
    return str(sample.object["total_price"])


#: The scenarios that deliver a refund more than once: each event twice, and R1 again after R2.
REFUNDED_AGAIN = ("duplicate-sequential", "older-after-newer-redelivery")


def _refund_shop(tmp_path: Path, refunds: str) -> Path:
    """`balance_shop.py` crediting invoices (deduped) and reversing refunds as `refunds` says,
    certified with both counters."""
    from tests.hookproof.test_counters_everywhere import shop_config

    path = shop_config(tmp_path, "with-grant")
    text = path.read_text(encoding="utf-8")
    for old, new in (('enabled_events = ["invoice.paid"]', 'enabled_events = ["invoice.paid", "charge.refunded"]'),
                     ('BALANCE = "with-grant"', f'BALANCE = "with-grant", REFUNDS = "{refunds}"'),
                     ('"invoice.paid" = "inv:{data.object.id}"\n',
                      '"invoice.paid" = "inv:{data.object.id}"\n'
                      '"charge.refunded" = "refund:{data.object.id}:{data.object.amount_refunded}"\n')):
        assert old in text
        text = text.replace(old, new)
    path.write_text(text + "\n" + REFUND, encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("refunds", ["netted", "every-delivery"])
def test_a_receiver_netting_refunds_passes_and_one_reversing_every_delivery_fails_counter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refunds: str) -> None:
    from hookproof.certify import certify
    from tests.hookproof.test_counters_everywhere import SECRET

    monkeypatch.setenv("WEBHOOK_SECRET", SECRET)
    report = certify(load_config(_refund_shop(tmp_path, refunds)), scenarios=list(REFUNDED_AGAIN),
                     out_dir=tmp_path / "out").report
    counted = {s.id: [c.verdict for c in s.checks if c.check_id == "counter"] for s in report.scenarios}
    failing = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.findings}
    if refunds == "netted":
        assert counted == dict.fromkeys(REFUNDED_AGAIN, ["valid"]), counted
        assert report.verdict == "pass" and failing == {}, [(s.id, s.verdict, s.reason) for s in report.scenarios]
        return
    assert failing == dict.fromkeys(REFUNDED_AGAIN, ["counter"]), failing
    for finding in (f for s in report.scenarios for f in s.findings):
        assert finding.key.startswith("cus_") and finding.actual < finding.expected, finding
        # the truth's moves, added up: a credit where the scenario pays an invoice, each refund subtracted once
        assert re.fullmatch(rf"counter is {finding.actual}; the provider's truth implies {finding.expected} "
                            r"\((\+\d+ invoice\.paid evt_\w+, )?-\d+ charge\.refunded evt_\w+"
                            r"(, -\d+ charge\.refunded evt_\w+)*\)", finding.message), finding.message


@pytest.mark.parametrize("builtin", [True, False])
def test_a_paddle_refund_counter_moves_only_on_an_approved_refund(tmp_path: Path, builtin: bool) -> None:
    """Paddle creates a refund pending approval and moves money only once it approves it: a
    counter on adjustment.updated with ``sign = -1`` nets the approved refund and neither the
    pending one's creation nor the rejected one (a correct receiver failed ``counter is 2450;
    the provider's truth implies 1634``), with or without the built-in keys."""
    from hookproof.scenarios.business_keys import counter_truth, keyed
    from hookproof.simulator.world.paddle import PaddleWorld

    path = tmp_path / "hookproof.toml"
    path.write_text(('builtin_keys = false\n' if not builtin else '') + (
        '[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "paddle"\nsecret = "pdl_ntfset_x"\n'
        '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n'
        'counter = "SELECT customer, amount FROM balances"\n'
        '[counters."transaction.completed"]\nkey = "{data.customer_id}"\namount = "data.details.totals.total"\n'
        '[counters."adjustment.created"]\nkey = "{data.customer_id}"\namount = "data.totals.total"\nsign = -1\n'
        '[counters."adjustment.updated"]\nkey = "{data.customer_id}"\namount = "data.totals.total"\nsign = -1\n'),
        encoding="utf-8")
    mapping = load_config(path).key_mapping()
    w = PaddleWorld(3)
    txn = w.buy()
    customer, total = w.peek(txn)["customer_id"], int(w.peek(txn)["details"]["totals"]["total"])
    approved = w.refund(txn, 500)
    w.refund(txn, 300, review="rejected")
    w.refund(txn, 200, review=None)  # still pending
    events = [e for e in keyed(w.events, mapping) if e.type in mapping.counters]
    assert [(e.type, e.object_id, e.object["status"]) for e in events if e.type.startswith("adjustment")] == [
        ("adjustment.created", approved, "pending_approval"), ("adjustment.updated", approved, "approved"),
        ("adjustment.created", events[3].object_id, "pending_approval"),
        ("adjustment.updated", events[3].object_id, "rejected"),
        ("adjustment.created", events[5].object_id, "pending_approval")]
    assert counter_truth([*events, *events], _attempts([*events, *events]), mapping) == {customer: total - 500}


def test_a_fixed_amount_counts_events_and_a_removal_subtracts_it(tmp_path: Path) -> None:
    """Seats per organization are a count, not an amount the event carries: ``amount = 1``
    counts each event once (however often delivered), ``sign = -1`` on the removing type takes
    one back (a new user's Clerk seats: +1 per membership created, -1 per deletion)."""
    from hookproof.scenarios.business_keys import counter_truth, from_plain, keyed, to_plain
    from hookproof.simulator.world import World

    path = tmp_path / "hookproof.toml"
    path.write_text(BASE.replace('[counters."invoice.paid"]\nkey = "{data.object.customer}"\n'
                                 'amount = "data.object.amount_paid"\n', '')
                    + '[counters."customer.subscription.created"]\nkey = "{data.object.customer}"\namount = 1\n'
                    '[counters."customer.subscription.deleted"]\nkey = "{data.object.customer}"\namount = 1\n'
                    'sign = -1\n', encoding="utf-8")
    mapping = load_config(path).key_mapping()
    w = World(5)
    cus = w.event(w.create_customer()).object_id
    w.subscribe(cus)
    w.cancel(w.subscribe(cus))
    w.subscribe(cus)
    events = [e for e in keyed(w.events, mapping) if e.type in mapping.counters]
    assert [e.type for e in events].count("customer.subscription.created") == 3
    assert counter_truth([*events, *events], _attempts([*events, *events]), mapping) == {cus: 2}
    again = from_plain(to_plain(mapping), mapping.profile)  # as a storm's spec carries it to its workers
    assert again.counters == mapping.counters and isinstance(again.counters["customer.subscription.created"].amount, int)


@pytest.mark.parametrize(("entry", "field", "message"), [
    ("amount = 0", "amount", "is 0: a counter's amount is the path of an amount in the event "
     '("data.object.amount_paid") or a whole number each event counts (1: one per event; sign = -1 subtracts it)'),
    ('amount = 1\nsince = "data.previous_attributes.amount_refunded"', "since",
     "a fixed amount (1) has no earlier value in the event; since goes with an amount path"),
])
def test_a_bad_fixed_amount_is_one_config_error(tmp_path: Path, entry: str, field: str, message: str) -> None:
    path = tmp_path / "hookproof.toml"
    path.write_text(BASE + f'[counters."charge.refunded"]\nkey = "{{data.object.customer}}"\n{entry}\n',
                    encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    named = f'counters."charge.refunded".{field}'
    line = max(n for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text.startswith(field))
    assert (caught.value.field, caught.value.line) == (named, line)
    assert str(caught.value) == f"{path}:{line}: {named}: {message}"
