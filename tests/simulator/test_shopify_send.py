"""``hookproof send --profile shopify --event orders/paid`` reaches a Shopify app written from Shopify's docs.

The receiver is `examples.receivers.shopify_app` (shopify.dev's base64 HMAC check, dedupe by
``X-Shopify-Event-Id``), started as its own process on 127.0.0.1: both copies of the
delivery are accepted and the order is fulfilled once. Its fetching variant reads the order
from the provider's Admin REST API, and answers 503 (claiming nothing) while it cannot.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx

from examples.receivers import PROJECT_ROOT
from hookproof.send import SendOptions, send, send_world_seed
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState, run_server
from hookproof.simulator.server.state import Switch
from hookproof.simulator.world import emit_events, new_world
from tests.examples.test_provider_receivers import SECRETS, rows, start


def test_send_orders_paid_reaches_the_shopify_app(tmp_path: Path) -> None:
    db = tmp_path / "shop.sqlite"
    events = emit_events(new_world("shopify", send_world_seed(5, "orders/paid")), "orders/paid")  # `send --seed 5`'s
    proc, url = start("shopify_app", db)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "hookproof", "send", "--profile", "shopify", "--event", "orders/paid", "--url", url,
             "--secret", SECRETS["shopify"], "--seed", "5", "--copies", "2", "--json"],
            capture_output=True, text=True, timeout=60, cwd=PROJECT_ROOT)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    attempts = json.loads(done.stdout)
    assert [(a["event_type"], a["status"]) for a in attempts] == [("orders/paid", 200)] * 2
    (event,) = events
    assert rows(db, "SELECT business_key FROM effects") == [(f"fulfil:{event.object_id}",)]
    assert rows(db, "SELECT object_id, status FROM orders") == [(event.object_id, "paid")]


def test_a_forged_shopify_delivery_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "shop.sqlite"
    proc, url = start("shopify_app", db)
    try:
        attempts = send(SendOptions(profile=get_profile("shopify"), url=url, seed=3), ["shpss_wrong"])
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert [a.status for a in attempts][:1] == [401]
    assert rows(db, "SELECT COUNT(*) FROM effects") == [(0,)]


def test_the_fetching_app_stores_the_order_the_admin_api_serves(tmp_path: Path) -> None:
    """An ``orders/create`` about an order since paid: the state stored is the API's ``paid``;
    while the API answers 404 the delivery gets 503 and nothing is claimed."""
    world = new_world("shopify", 8)
    (created,) = emit_events(world, "orders/create")
    world.mark_paid(created.object_id)
    state = ServerState([world])
    db = tmp_path / "shop.sqlite"
    profile = get_profile("shopify")
    with run_server(state) as api:
        proc, url = start("shopify_app_fetch", db, api_base=api.url)
        try:
            request = profile.request(profile.envelope(created), [SECRETS["shopify"]], 0)
            state.switches.set(created.object_id, Switch(not_found=True, times=1))
            first = httpx.post(url, content=request.body, headers=dict(request.headers), timeout=10)
            again = httpx.post(url, content=request.body, headers=dict(request.headers), timeout=10)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    assert (first.status_code, again.status_code) == (503, 200)
    assert rows(db, "SELECT object_id, status FROM orders") == [(created.object_id, "paid")]
    assert rows(db, "SELECT COUNT(*) FROM events") == [(1,)]


def test_send_each_compliance_topic_reaches_the_shopify_app_once(tmp_path: Path) -> None:
    """``send --event customers/redact`` (a compliance topic, named): both copies accepted, erased once."""
    db = tmp_path / "shop.sqlite"
    proc, url = start("shopify_app", db)
    expected = []
    try:
        for seed, topic in enumerate(("customers/data_request", "customers/redact", "shop/redact"), start=5):
            (event,) = emit_events(new_world("shopify", send_world_seed(seed, topic)), topic)  # `send --seed N`'s
            expected.append(event.business_key)
            attempts = send(SendOptions(profile=get_profile("shopify"), url=url, seed=seed, event=topic, copies=2),
                            [SECRETS["shopify"]])
            assert [(a.event_type, a.status) for a in attempts] == [(topic, 200)] * 2
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert rows(db, "SELECT business_key FROM effects") == [(k,) for k in expected]
    assert [k.split(":")[0] for k in expected] == ["report", "redact", "erase"]
