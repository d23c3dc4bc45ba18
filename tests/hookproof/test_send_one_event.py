"""`hookproof send --event T` sends one event of type T per object (`--objects`), with no
`--copies`: the latest of that type the story emitted about the object. Stripe's smallest
`customer.subscription.updated` story emits two (the subscription turning active, then its
renewal), and the receiver was sent both, two event ids, as if copies had been asked for."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest

from hookproof.send import SendOptions, latest_per_object, send
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import emit_events, new_world


def test_latest_per_object_keeps_the_newest_event_of_each_object() -> None:
    events = emit_events(new_world("billing", 3), "customer.subscription.updated", 2)
    assert len(events) == 4 and len({e.object_id for e in events}) == 2  # two per subscription
    kept = latest_per_object(events)
    assert [e.object_id for e in kept] == list(dict.fromkeys(e.object_id for e in events))
    for e in kept:
        assert e.version == max(x.version for x in events if x.object_id == e.object_id)


@pytest.fixture()
def receiver() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    bodies: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/webhooks", bodies
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("objects", [1, 3])
def test_send_delivers_one_event_per_object(receiver: tuple[str, list[dict[str, Any]]], objects: int) -> None:
    url, bodies = receiver
    options = SendOptions(profile=get_profile("stripe"), url=url, event="customer.subscription.updated",
                          objects=objects, seed=5)
    attempts = send(options, ["whsec_send_one"])
    assert len(attempts) == len(bodies) == objects
    assert len({b["id"] for b in bodies}) == objects
    assert len({b["data"]["object"]["id"] for b in bodies}) == objects
    assert {b["type"] for b in bodies} == {"customer.subscription.updated"}


@pytest.mark.parametrize(("mode", "status"), [(None, "paid"), ("payment", "paid"), ("subscription", "paid")])
def test_send_checkout_mode_picks_the_mode_of_the_completed_session(
        receiver: tuple[str, list[dict[str, Any]]], mode: str | None, status: str) -> None:
    """``--checkout-mode subscription`` sends a subscription-mode session's completion, naming its
    subscription and first invoice; without it (or with ``payment``) a payment-mode one."""
    url, bodies = receiver
    options = SendOptions(profile=get_profile("stripe"), url=url, event="checkout.session.completed",
                          objects=2, seed=5, checkout_mode=mode)
    assert len(send(options, ["whsec_send_one"])) == 2
    sessions = [b["data"]["object"] for b in bodies]
    assert {(s["mode"], s["payment_status"]) for s in sessions} == {(mode or "payment", status)}
    if mode == "subscription":
        assert all(s["subscription"].startswith("sub_") and s["invoice"].startswith("in_")
                   and s["payment_intent"] is None for s in sessions)
    else:
        assert all(s["subscription"] is None and s["payment_intent"].startswith("pi_") for s in sessions)


@pytest.mark.parametrize(("profile", "event", "mode", "said"), [
    ("stripe", "checkout.session.async_payment_succeeded", "subscription",
     "--checkout-mode subscription: a subscription-mode Checkout Session emits no "
     "checkout.session.async_payment_succeeded (it emits checkout.session.completed, checkout.session.expired)"),
    ("stripe", "checkout.session.completed", "setup", "--checkout-mode: 'setup' is not a mode (known: payment, "
                                                      "subscription)"),
    ("github", "issues.opened", "subscription", "--checkout-mode: the GitHub profile sends no Stripe Checkout "
                                                "Sessions"),
])
def test_a_checkout_mode_that_emits_no_such_event_is_a_usage_error(profile: str, event: str, mode: str,
                                                                   said: str) -> None:
    from hookproof.errors import UsageError

    options = SendOptions(profile=get_profile(profile), url="http://127.0.0.1:9/h", event=event, seed=5,
                          checkout_mode=mode)
    with pytest.raises(UsageError) as caught:
        send(options, ["whsec_send_one"])
    assert str(caught.value) == said


def test_two_sends_of_one_seed_never_give_two_event_types_one_event_id(
        receiver: tuple[str, list[dict[str, Any]]]) -> None:
    """A team sending `--event transaction.completed --seed 7` then `--event subscription.activated
    --seed 7` got both with one Paddle `event_id` and `notification_id` (each story's events drew
    their ids at the same positions of one seed), so a receiver deduplicating on `event_id`, as
    Paddle says to, dropped the second. Each type now has its own world of the seed; one type
    sent again with the seed is the same event."""
    url, bodies = receiver
    for event in ("transaction.completed", "subscription.activated", "transaction.completed"):
        send(SendOptions(profile=get_profile("paddle"), url=url, event=event, seed=7), ["pdl_ntfset_send_one_seed"])
    assert [b["event_type"] for b in bodies] == ["transaction.completed", "subscription.activated",
                                                 "transaction.completed"]
    ids = [b["event_id"] for b in bodies]
    assert ids[0] != ids[1] and ids[0] == ids[2]


def _cli_send(*args: str) -> Any:
    """`hookproof send --event invoice.paid --seed 5` with `args`, in process."""
    from typer.testing import CliRunner

    from hookproof.cli import app

    return CliRunner().invoke(app, ["send", "--event", "invoice.paid", "--seed", "5", *args])


@pytest.mark.parametrize("how", ["config", "flag", "flag over config"])
def test_send_renders_the_endpoint_s_api_version(receiver: tuple[str, list[dict[str, Any]]], tmp_path: Any,
                                                 how: str) -> None:
    """`send --config` ignored `target.api_version`: an endpoint pinned to 2024-06-20 was sent
    the latest shapes (the invoice's subscription under ``parent``), which certify never sends
    it. The config's version, or ``--api-version``, now shapes the events as certify's do."""
    url, bodies = receiver
    config = tmp_path / "hookproof.toml"
    pinned = "2025-03-31.basil" if how == "flag over config" else "2024-06-20"
    config.write_text(f'[target]\nurl = "{url}"\nprofile = "stripe"\nsecret = "whsec_send_version"\n'
                      f'api_version = "{pinned}"\n', encoding="utf-8")
    args = ["--config", str(config)] if how != "flag" else ["--url", url, "--secret", "whsec_send_version"]
    if how != "config":
        args += ["--api-version", "2024-06-20"]
    result = _cli_send(*args)
    assert result.exit_code == 0, result.output
    (body,) = bodies
    invoice = body["data"]["object"]
    assert body["api_version"] == "2024-06-20"
    assert invoice["subscription"].startswith("sub_") and "parent" not in invoice  # before basil


def test_send_says_an_api_version_later_than_modelled_and_refuses_a_malformed_one(
        receiver: tuple[str, list[dict[str, Any]]], tmp_path: Any) -> None:
    from hookproof.simulator.events import LATEST_API_VERSION

    url, bodies = receiver
    base = ["--url", url, "--secret", "whsec_send_version"]
    later = _cli_send(*base, "--api-version", "2099-01-01.future")
    assert later.exit_code == 0, later.output
    assert (f"send: --api-version 2099-01-01.future is later than {LATEST_API_VERSION}, the latest Stripe API "
            f"version hookproof models: the events say \"api_version\": \"2099-01-01.future\" but carry "
            f"{LATEST_API_VERSION}'s shapes") in " ".join(later.output.split())
    assert [b["api_version"] for b in bodies] == ["2099-01-01.future"]
    bad = _cli_send(*base, "--api-version", "banana")
    assert bad.exit_code == 2 and "--api-version: must be a Stripe API version like 2024-06-20" in bad.output
    other = _cli_send("--url", url, "--secret", "pdl_ntfset_x", "--profile", "paddle",
                      "--api-version", "2024-06-20")
    assert other.exit_code == 2 and "--api-version: only the stripe profile's events have API versions" in other.output
    assert len(bodies) == 1
