"""A Lemon Squeezy store described as a user catalog, from the provider's documented examples.

Lemon Squeezy's documented webhook examples (`tests/fixtures/lemonsqueezy/`) give every object
``"id": "1"`` (and ``store_id``, ``order_id``… 1). hookproof drew each object's fresh id in the
example id's shape, so one digit: nine ids for a whole run, and scenarios' orders collided (a
correct receiver failed 17 of 30 scenarios, ``unexpected: license:2 applied, but no validly
sent event carries this key``). The receiver written from the docs (`tests.examples.lemon_orders`,
one license per order id, one refund per order and cumulative refunded amount) passes certify,
as do its variants the docs allow (`lemon_orders.reset`: the object's own test-mode flag read,
order numbers kept unique); its twins answering another 2xx than 200 fail.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from examples.receivers import PROJECT_ROOT
from tests.examples import lemon_orders
from tests.hookproof.test_bad_input import run_in_process
from tests.hostile.harness import CliRun

FIXTURES = PROJECT_ROOT / "tests" / "fixtures" / "lemonsqueezy"

CONFIG = """builtin_keys = false

[target]
app = "tests.examples.lemon_orders:app"
profile = "generic-hmac"
secret = "lemon-s3cret"

[target.signing]
type_header = "X-Event-Name"
id_header = false
retry_schedule_s = [5, 25, 125]
{signing}
[catalog]
type_field = "meta.event_name"
test_mode = "meta.test_mode"

[catalog.events.order_created]
example = "{fixtures}/order_created.json"
object_type = "order"
ordering = "data.attributes.updated_at"
status = "data.attributes.status"
state = "paid"
key = "license:{{data.id}}"
refs = {{ "data.attributes.first_order_item.order_id" = "order" }}

[catalog.events.order_refunded]
example = "{fixtures}/order_refunded.json"
object_type = "order"
ordering = "data.attributes.updated_at"
status = "data.attributes.status"
state = "refunded"
key = "refund:{{data.id}}:{{data.attributes.refunded_amount}}"
refs = {{ "data.attributes.first_order_item.order_id" = "order" }}

[catalog.events.subscription_created]
example = "{fixtures}/subscription_created.json"
object_type = "subscription"
ordering = "data.attributes.updated_at"
status = "data.attributes.status"
state = "active"
refs = {{ "data.attributes.order_id" = "order", "data.attributes.first_subscription_item.subscription_id" = "subscription" }}

[catalog.events.subscription_payment_success]
example = "{fixtures}/subscription_payment_success.json"
object_type = "invoice"
key = "payment:{{data.id}}"
refs = {{ "data.attributes.subscription_id" = "subscription" }}

[catalog.events.license_key_created]
example = "{fixtures}/license_key_created.json"
object_type = "license_key"
key = "licensekey:{{data.id}}"
refs = {{ "data.attributes.order_id" = "order" }}

[observer]
kind = "python"
callable = "tests.examples.lemon_orders:observe"

[settle]
window_s = 0.2
deadline_s = 5

[run]
seed = {seed}
"""


def write(tmp_path: Path, seed: int, drop: tuple[str, ...] = (), signing: str = "") -> Path:
    text = CONFIG.format(fixtures=FIXTURES, seed=seed, signing=signing)
    for event_type in drop:  # a catalog without that type
        head, _, tail = text.partition(f"[catalog.events.{event_type}]\n")
        text = head + tail.split("\n\n", 1)[1]
    (tmp_path / "hookproof.toml").write_text(text, encoding="utf-8")
    return tmp_path / "hookproof.toml"


class Certified:
    """One certify run of the store: the command's output and its report.json."""

    def __init__(self, run: CliRun, report: dict[str, Any]) -> None:
        self.run, self.report = run, report

    def findings(self) -> dict[str, list[tuple[str, str, str]]]:
        """Scenario id -> its findings as (check, severity, message)."""
        return {s["id"]: [(f["check_id"], f["severity"], f["message"]) for c in s["checks"] for f in c["findings"]]
                for s in self.report["scenarios"]}


@pytest.fixture
def certify_store(tmp_path: Path) -> Callable[..., Certified]:
    """Certify the store (`lemon_orders`, set up by `setup`: `lemon_orders.reset`) from a config of
    the documented examples (`CONFIG`; `drop`: types left out, `signing`: lines added to
    ``[target.signing]``), every scenario or those named; each call in a folder of its own."""
    calls: list[int] = []

    def certify(seed: int, *, drop: tuple[str, ...] = (), signing: str = "", scenarios: tuple[str, ...] = (),
                **setup: Any) -> Certified:
        calls.append(seed)
        where = tmp_path / f"run{len(calls)}"
        where.mkdir()
        lemon_orders.reset(**setup)
        write(where, seed, drop, signing)
        picked = [arg for name in scenarios for arg in ("--scenario", name)]
        run = run_in_process("certify", "--config", "hookproof.toml", "--out", str(where / "out"), *picked, cwd=where)
        assert "Traceback" not in run.stderr, run.stderr
        report = json.loads((where / "out" / "report.json").read_text(encoding="utf-8"))
        return Certified(run, report)

    return certify


@pytest.mark.slow
def test_a_receiver_deduping_per_order_id_passes_certify_over_the_documented_examples(
        certify_store: Callable[..., Certified]) -> None:
    certified = certify_store(3, drop=("order_refunded",))
    assert certified.run.returncode == 0, certified.run.stdout + certified.run.stderr
    assert lemon_orders.REFUSED == []
    keys = [k for k in lemon_orders.observe()["effects"]]
    orders = {k.split(":")[1] for k in keys if k.startswith("license:")}
    assert len(orders) > 9 and all(o.isdigit() and o[0] != "0" for o in orders), orders


@pytest.mark.slow
def test_refunds_keyed_by_the_cumulative_refunded_amount_stay_within_the_orders_total(
        certify_store: Callable[..., Certified]) -> None:
    """A key naming ``data.attributes.refunded_amount`` (one refund per amount refunded so far)
    made hookproof send 1200, then 1201, on an order whose ``total`` is 1199 (and
    ``refunded_amount_usd`` still 1199): the receiver refused them (422) and failed. Each refund
    now refunds within the order's total, its USD amount with it, and the receiver passes."""
    certified = certify_store(5)
    assert certified.run.returncode == 0, certified.run.stdout + certified.run.stderr
    assert lemon_orders.REFUSED == []
    refunds = [k for k in lemon_orders.observe()["effects"] if k.startswith("refund:")]
    assert refunds and all(0 < int(k.split(":")[2]) <= 1199 for k in refunds), refunds


@pytest.mark.slow
@pytest.mark.parametrize("mode_field", ["meta", "attributes", "none"])
def test_the_live_event_is_live_in_every_test_mode_flag(certify_store: Callable[..., Certified],
                                                        mode_field: str) -> None:
    """``test-mode-to-live`` turned ``meta.test_mode`` alone: the order's own
    ``data.attributes.test_mode`` (and its first item's) still said test, so a store reading
    the object's flag applied the live order and was told ``unexpected``. Every flag now says
    live: a store reading either ignores it and passes; one reading none applies it and fails."""
    certified = certify_store(7, drop=("order_refunded",), scenarios=("test-mode-to-live",), mode_field=mode_field)
    (found,) = certified.findings().values()
    if mode_field != "none":
        assert (certified.run.returncode, found) == (0, []), certified.run.stdout
        return
    assert certified.run.returncode == 1 and {f[0] for f in found} == {"unexpected"}, found


@pytest.mark.slow
def test_lemon_squeezy_counts_only_a_200_as_received(certify_store: Callable[..., Certified]) -> None:
    """"Return a 200 response to show that the webhook was successfully received. If the
    response status is anything else, the webhook will be retried" (Lemon Squeezy, "Webhook
    requests"). Any 2xx was an acknowledgement, so a store answering 202 passed; with
    ``success_statuses = [200]`` its 202 is a failed attempt, retried on the schedule (1 + 3
    attempts), and a finding for each event, while the store answering 200 passes."""
    only_200 = "success_statuses = [200]"
    scenarios = ("duplicate-sequential",)
    good = certify_store(11, drop=("order_refunded",), signing=only_200, scenarios=scenarios)
    assert (good.run.returncode, good.findings()) == (0, {"duplicate-sequential": []}), good.run.stdout
    twin = certify_store(11, drop=("order_refunded",), signing=only_200, scenarios=scenarios, ok_status=202)
    (found,) = twin.findings().values()
    advice = "Generic HMAC counts only 200 as delivered: it retries the event and marks the delivery failed; answer 200"
    attempts = {"subscription_created": 4, "order_created": 12, "subscription_payment_success": 12,
                "license_key_created": 12}  # the parent sent first once, then three copies, each 1 + 3 attempts
    assert twin.run.returncode == 1 and sorted(found) == sorted(
        ("valid_not_rejected", "finding", f'1 valid {t} event(s) answered 202 {n} time(s); the receiver answered "202"; '
                                          f"{advice}") for t, n in attempts.items()), found
    expected = {f["expected"] for s in twin.report["scenarios"] for c in s["checks"] for f in c["findings"]}
    assert expected == {"200"}  # what the receiver should answer: never "2xx"
    any_2xx = certify_store(11, drop=("order_refunded",), scenarios=scenarios, ok_status=202)
    assert (any_2xx.run.returncode, any_2xx.findings()) == (0, {"duplicate-sequential": []}), any_2xx.run.stdout


@pytest.mark.slow
def test_a_store_keeping_order_numbers_unique_passes(certify_store: Callable[..., Certified]) -> None:
    """Every order carried the documented ``order_number`` 1, so a store keeping the number
    unique (it is: "the sequential order number for this store") took each later order for a
    redelivery of the first and was told ``lost``. Each order now has its own number."""
    certified = certify_store(13, drop=("order_refunded",), scenarios=("duplicate-sequential", "dropped-response"),
                              unique_order_number=True)
    assert certified.run.returncode == 0, certified.run.stdout
    licensed = [k for k in lemon_orders.observe()["effects"] if k.startswith("license:")]
    assert len(licensed) >= 2 and len(lemon_orders.ORDER_NUMBERS) == len(licensed), licensed
