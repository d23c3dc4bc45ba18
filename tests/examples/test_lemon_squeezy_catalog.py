"""A Lemon Squeezy store described as a user catalog, from the provider's documented examples.

Lemon Squeezy's documented webhook examples (`tests/fixtures/lemonsqueezy/`) give every object
``"id": "1"`` (and ``store_id``, ``order_id``… 1). hookproof drew each object's fresh id in the
example id's shape, so one digit: nine ids for a whole run, and scenarios' orders collided (a
correct receiver failed 17 of 30 scenarios, ``unexpected: license:2 applied, but no validly
sent event carries this key``). The receiver written from the docs (`tests.examples.lemon_orders`,
one license per order id, one refund per order and cumulative refunded amount) passes certify.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT
from tests.examples import lemon_orders
from tests.hookproof.test_bad_input import run_in_process

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


def write(tmp_path: Path, seed: int, drop: tuple[str, ...] = ()) -> Path:
    text = CONFIG.format(fixtures=FIXTURES, seed=seed)
    for event_type in drop:  # a catalog without that type
        head, _, tail = text.partition(f"[catalog.events.{event_type}]\n")
        text = head + tail.split("\n\n", 1)[1]
    (tmp_path / "hookproof.toml").write_text(text, encoding="utf-8")
    return tmp_path / "hookproof.toml"


@pytest.mark.slow
def test_a_receiver_deduping_per_order_id_passes_certify_over_the_documented_examples(tmp_path: Path) -> None:
    lemon_orders.reset()
    write(tmp_path, 3, drop=("order_refunded",))
    run = run_in_process("certify", "--config", "hookproof.toml", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == 0, run.stdout + run.stderr
    assert lemon_orders.REFUSED == []
    keys = [k for k in lemon_orders.observe()["effects"]]
    orders = {k.split(":")[1] for k in keys if k.startswith("license:")}
    assert len(orders) > 9 and all(o.isdigit() and o[0] != "0" for o in orders), orders


@pytest.mark.slow
def test_refunds_keyed_by_the_cumulative_refunded_amount_stay_within_the_orders_total(tmp_path: Path) -> None:
    """A key naming ``data.attributes.refunded_amount`` (one refund per amount refunded so far)
    made hookproof send 1200, then 1201, on an order whose ``total`` is 1199 (and
    ``refunded_amount_usd`` still 1199): the receiver refused them (422) and failed. Each refund
    now refunds within the order's total, its USD amount with it, and the receiver passes."""
    lemon_orders.reset()
    write(tmp_path, 5)
    run = run_in_process("certify", "--config", "hookproof.toml", "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == 0, run.stdout + run.stderr
    assert lemon_orders.REFUSED == []
    refunds = [k for k in lemon_orders.observe()["effects"] if k.startswith("refund:")]
    assert refunds and all(0 < int(k.split(":")[2]) <= 1199 for k in refunds), refunds
