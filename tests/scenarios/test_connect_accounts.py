"""Stripe Connect's ``account.updated`` on a Connect endpoint (``[target] connect = true``, one
connected ``account``): the connected account's onboarding told as events in Stripe's shape,
served by the provider API as of the deliveries, and a kind ``[observer.states]`` may name
(``account``), so a platform that keeps the last ``account.updated`` to arrive regresses its
seller's onboarding (``stale``) while one that fetches the account, or keeps the newest, passes.

The platform is `tests.scenarios.connect_platform` (``PLATFORM_STATE``: ``fetch``, ``newest``,
``last``)."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import stripe

from hookproof.certify import certify
from hookproof.config import load_config, parse_config
from hookproof.errors import ConfigError, UsageError
from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable, Plan
from hookproof.simulator.errors import WorldError
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World
from hookproof.simulator.world.stripe_shapes import account_status
from tests.simulator.stripe_oracle import compare, resources
from tests.support import free_port

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_connect_platform_0123456789"
PLATFORM_SELLER = "acct_1ConnectedSeller00"  # the endpoint's connected account (target.account)
STRIPE = get_profile("stripe")
CONNECT = Context(profile=STRIPE, account=PLATFORM_SELLER, connect=True, state_kinds=frozenset({"account"}))


def _onboarded(seed: int = 5) -> tuple[World, str, list[Any]]:
    """A Connect world (the endpoint's connected account `PLATFORM_SELLER`) that onboarded a new seller."""
    world = World(seed, account=PLATFORM_SELLER)
    world.create_customer()
    start = len(world.events)
    seller = world.onboard_account()
    return world, seller, world.events[start:]


# ---- the events, in Stripe's shape ------------------------------------------------------------

def test_the_onboarding_is_two_account_updated_events_progressing_a_new_sellers_account() -> None:
    world, seller, events = _onboarded()
    assert re.fullmatch(r"acct_[A-Za-z0-9]{16}", seller) and seller != PLATFORM_SELLER
    assert len(resources()["account"]["id"]) == len(seller)  # Stripe's example Account's id: acct_ and 16
    assert [(e.type, e.object_type, e.object_id, e.version, e.status, e.business_key, e.account, e.connected)
            for e in events] == [("account.updated", "account", seller, 2, "pending", None, seller, True),
                                 ("account.updated", "account", seller, 3, "enabled", None, seller, True)]
    assert events[1].created - events[0].created >= World.VERIFICATION_S  # never one created second
    assert events[0].request_id is not None and events[1].request_id is None  # verification: Stripe's own doing
    first, second = (e.object for e in events)
    assert (first["details_submitted"], first["charges_enabled"], first["payouts_enabled"]) == (True, False, False)
    assert (second["details_submitted"], second["charges_enabled"], second["payouts_enabled"]) == (True, True, True)
    assert first["requirements"]["currently_due"] == [] and first["requirements"]["pending_verification"] == [
        "business_profile.url"]
    assert second["requirements"]["pending_verification"] == [] and second["requirements"]["disabled_reason"] is None
    assert world.get(seller, 1)["requirements"]["currently_due"] == resources()["account"]["requirements"][
        "currently_due"]
    assert account_status(world.get(seller, 1)) == "restricted"
    assert _onboarded()[1] == seller  # the same seed, the same seller
    assert world.onboard_account() != seller  # each onboarding a new seller


def test_stripe_python_parses_every_account_updated_body_and_its_account_has_stripes_shape() -> None:
    _, seller, events = _onboarded()
    for event in events:
        envelope = STRIPE.envelope(event)
        header = STRIPE.sign(envelope, [SECRET], event.created)["Stripe-Signature"]
        parsed = stripe.Webhook.construct_event(envelope.body, header, SECRET, tolerance=None)
        body = json.loads(envelope.body)
        assert stripe.Event.construct_from(body, "sk_test").data.object.object == "account"
        assert isinstance(parsed.data.object, stripe.Account)
        assert (parsed.type, parsed.account, parsed.data.object.id) == ("account.updated", seller, seller)
        assert compare(body["data"]["object"], "account") == []
    pending, enabled = (json.loads(STRIPE.envelope(e).body)["data"]["previous_attributes"] for e in events)
    assert pending["details_submitted"] is False and pending["tos_acceptance"] == {"date": None, "ip": None}
    assert pending["capabilities"] == {"card_payments": "inactive", "transfers": "inactive"}
    assert enabled == {
        "capabilities": {"card_payments": "pending", "transfers": "pending"}, "charges_enabled": False,
        "hookproof_version": 2, "payouts_enabled": False,
        "requirements": {"disabled_reason": "requirements.pending_verification",
                         "pending_verification": ["business_profile.url"]}}


def test_only_a_connect_world_onboards_a_seller() -> None:
    with pytest.raises(WorldError) as caught:
        World(5).onboard_account()
    assert str(caught.value) == ("account.updated is about a connected account: only a Connect world (one given "
                                 "a connected account, target.account) onboards one")


# ---- the provider API ---------------------------------------------------------------------------

def test_the_api_serves_the_account_as_of_the_deliveries() -> None:
    from hookproof.simulator.server import clock
    from hookproof.simulator.server.provider import Catalog

    world, seller, events = _onboarded()
    catalog = Catalog([world])
    assert account_status(catalog.account(seller) or {}) == "enabled"  # a world never advanced: current
    clock.advance(world, world.events[:1])  # the customer's creation delivered: the seller not onboarded yet
    seen = [account_status(catalog.account(seller) or {})]
    for event in events:
        clock.advance(world, [event])
        served = catalog.account(seller)
        assert served is not None and compare(dict(served), "account") == []
        seen.append(f"{served['hookproof_version']} {account_status(served)}")
        own = Catalog([world], stripe_account=seller)  # GET /v1/account with Stripe-Account: the seller
        assert own.account(None) == served and own.render(event.id) is not None  # its own events too
        assert own.render(world.objects("customer")[0]) is None  # none of the platform's connected account's
    assert seen == ["restricted", "2 pending", "3 enabled"]
    assert (catalog.account(PLATFORM_SELLER) or {})["id"] == PLATFORM_SELLER  # the endpoint's account: as before
    # an event of the seller's asked for without its Stripe-Account: the refusal's hint names the seller
    assert catalog.other_account_of(events[0].id) == seller
    assert catalog.other_account_of(world.objects("customer")[0]) == PLATFORM_SELLER


# ---- the config -----------------------------------------------------------------------------------

BASE = """[target]
url = "http://127.0.0.1:9/webhooks"
profile = "stripe"
secret = "whsec_x"
{target}
[observer]
kind = "sql"
url = "sqlite:///x.sqlite"
effects = "SELECT business_key, amount FROM effects"
states = {{ account = "SELECT id AS object_id, 'enabled' AS status FROM sellers" }}
"""


def test_account_is_a_state_kind_of_a_connect_endpoint_with_its_connected_account() -> None:
    config = parse_config(BASE.format(target=f'connect = true\naccount = "{PLATFORM_SELLER}"'))
    assert config.observed.state_kinds == frozenset({"account"})


def test_an_accounts_flags_may_be_compared_as_state_fields() -> None:
    text = BASE.format(target=f'connect = true\naccount = "{PLATFORM_SELLER}"').replace(
        "'enabled' AS status FROM", "'enabled' AS status, charges_enabled FROM")
    config = parse_config(text + '[observer.state_fields]\naccount = { charges_enabled = "data.object.charges_enabled" }\n')
    fields = config.state_field_map()
    _, _, events = _onboarded()
    assert [fields.state_of(e) for e in events] == ["pending, charges_enabled=false", "enabled, charges_enabled=true"]


@pytest.mark.parametrize("target", ["", "connect = true", f'account = "{PLATFORM_SELLER}"'])
def test_account_states_without_a_connect_endpoint_and_its_account_are_one_error(target: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(BASE.format(target=target))
    assert caught.value.message == (
        "a connected account's states come from account.updated, which hookproof sends a Connect endpoint about "
        "a connected account (docs.stripe.com/connect/webhooks): set connect = true and account = \"acct_…\" "
        "under [target]")
    assert caught.value.field == "observer.states.account"


def test_account_updated_is_modelled_on_a_connect_endpoint_alone() -> None:
    listed = '\nenabled_events = ["account.updated", "payout.paid", "payout.failed", "application_fee.created"]'
    connect = parse_config(BASE.format(target=f'connect = true\naccount = "{PLATFORM_SELLER}"' + listed))
    assert connect.target.unmodelled_types() == ["payout.paid", "payout.failed", "application_fee.created"]
    plain = parse_config(BASE.format(target=listed.strip()).replace(
        "states = { account = \"SELECT id AS object_id, 'enabled' AS status FROM sellers\" }\n", ""))
    assert plain.target.unmodelled_types() == ["account.updated", "payout.paid", "payout.failed",
                                               "application_fee.created"]


def test_events_lists_account_updated_as_a_connect_endpoints_alone(tmp_path: Path) -> None:
    """`hookproof events` names ``account.updated`` (``send --event`` takes it): sent to a Connect
    endpoint alone, unmarked under a config whose target is one, "not sent" where its
    ``enabled_events`` leaves it out."""
    from typer.testing import CliRunner

    from hookproof.cli import app

    def listed(*args: str) -> tuple[str, list[dict[str, Any]]]:
        text = CliRunner().invoke(app, ["events", *args], env={"COLUMNS": "200"})
        as_json = CliRunner().invoke(app, ["events", "--json", *args], env={"COLUMNS": "200"})
        assert text.exit_code == 0 and as_json.exit_code == 0, text.output + as_json.output
        line = next(x for x in text.output.splitlines() if x.startswith("account.updated"))
        return " ".join(line.split()), json.loads(as_json.output)

    line, rows = listed("--profile", "stripe")
    assert line == "account.updated sent only to a Connect endpoint (target.connect, target.account)"
    assert rows[-1] == {"event": "account.updated", "world_type": "account.updated", "sent": False}
    connect = tmp_path / "connect.toml"
    connect.write_text(BASE.format(target=f'connect = true\naccount = "{PLATFORM_SELLER}"'))
    line, rows = listed("--config", str(connect))
    assert line == "account.updated" and rows[-1] == {"event": "account.updated", "world_type": "account.updated"}
    assert all("sent" not in r for r in rows)
    listing = tmp_path / "listing.toml"
    listing.write_text(BASE.format(target=f'connect = true\naccount = "{PLATFORM_SELLER}"\n'
                                          'enabled_events = ["charge.refunded"]'))
    line, rows = listed("--config", str(listing))
    assert line == "account.updated not sent (not in target.enabled_events)"
    assert {r["event"]: r["sent"] for r in rows if r["sent"]} == {"charge.refunded": True}
    for profile in ("github", "paddle", "shopify"):
        assert all(r["event"] != "account.updated" for r in listed_json(profile))


def listed_json(profile: str) -> list[dict[str, Any]]:
    from typer.testing import CliRunner

    from hookproof.cli import app

    return list(json.loads(CliRunner().invoke(app, ["events", "--json", "--profile", profile]).output))


# ---- the catalog's stories ---------------------------------------------------------------------------

def test_stale_after_newer_delivers_the_submitted_details_after_the_verification() -> None:
    plan = CATALOG["stale-after-newer"].plan(CONNECT, World(7, account=PLATFORM_SELLER))
    assert isinstance(plan, Plan)
    assert [[(e.type, e.status) for e in p.events] for p in plan.phases] == [
        [("account.updated", "enabled")], [("account.updated", "pending")]]
    reorder = CATALOG["reorder"].plan(CONNECT, World(7, account=PLATFORM_SELLER))
    assert isinstance(reorder, Plan)
    assert [(e.type, e.status) for e in reorder.phases[0].events] == [
        ("account.updated", "pending"), ("account.updated", "enabled")]


def test_an_account_endpoint_walks_no_account() -> None:
    """Without ``connect`` (or a world without a connected account) the stories are as before."""
    for ctx, world in ((Context(profile=STRIPE, account=PLATFORM_SELLER, state_kinds=frozenset({"account"})),
                        World(7, account=PLATFORM_SELLER)),
                       (Context(profile=STRIPE, connect=True, state_kinds=frozenset({"account"})), World(7))):
        plan = CATALOG["stale-after-newer"].plan(ctx, world)
        events = [e for p in plan.phases for e in p.events] if isinstance(plan, Plan) else []
        assert not isinstance(plan, NotApplicable) and all(e.type != "account.updated" for e in events)


# ---- send ------------------------------------------------------------------------------------------------

def test_send_asks_for_the_connected_account() -> None:
    from hookproof.send import SendOptions, send

    options = SendOptions(url="http://127.0.0.1:9/webhooks", profile=STRIPE, event="account.updated", seed=1)
    with pytest.raises(UsageError) as caught:
        send(options, [SECRET])
    assert str(caught.value) == ("--event account.updated: Stripe sends it a Connect endpoint about a connected "
                                 "account; give a --config whose [target] names the endpoint's connected account "
                                 "(account = \"acct_…\")")


@pytest.mark.parametrize("objects", [1, 2])
def test_send_delivers_each_sellers_last_account_updated(objects: int) -> None:
    from hookproof.send import SendOptions, send
    from tests.hookproof.test_send_one_event import receiver

    with contextlib.contextmanager(receiver.__wrapped__)() as (url, bodies):  # type: ignore[attr-defined]
        options = SendOptions(url=url, profile=STRIPE, event="account.updated", account=PLATFORM_SELLER,
                              objects=objects, seed=1)
        attempts = send(options, [SECRET])
    assert len(attempts) == len(bodies) == objects
    sellers = {b["account"] for b in bodies}
    assert len(sellers) == objects and PLATFORM_SELLER not in sellers
    for body in bodies:
        assert (body["type"], body["data"]["object"]["object"], body["data"]["object"]["id"]) == (
            "account.updated", "account", body["account"])
        assert body["data"]["object"]["charges_enabled"] is True  # the onboarding's last: enabled


# ---- certify ---------------------------------------------------------------------------------------------

def _config(tmp_path: Path, state: str, *, events: str = '"account.updated", "payout.paid", "payout.failed", '
            '"application_fee.created"', env: str = "", keys: str = "") -> Path:
    """The platform's config (`PLATFORM_STATE` `state`): its Connect endpoint sent `events`
    (TOML), its start given `env` (TOML pairs) more, then `keys` (TOML: its ``[business_keys]``)."""
    from tests.scenarios.connect_platform import EFFECTS, STATES

    tmp_path.mkdir(parents=True, exist_ok=True)
    port = free_port()
    db = tmp_path / "platform.sqlite"
    path = tmp_path / "hookproof.toml"
    path.write_text(f"""{"builtin_keys = false" if keys else ""}
[target]
url = "http://127.0.0.1:{port}/webhooks"
profile = "stripe"
secret = "{SECRET}"
connect = true
account = "{PLATFORM_SELLER}"
enabled_events = [{events}]

[target.start]
command = "{sys.executable} -m tests.scenarios.connect_platform"
cwd = "{ROOT}"
health_url = "http://127.0.0.1:{port}/healthz"
startup_timeout_s = 30
env = {{ PORT = "{port}", DATABASE_URL = "sqlite:///{db}", WEBHOOK_SECRET = "{SECRET}", PLATFORM_STATE = "{state}"{env} }}

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "{EFFECTS}"
states = {{ account = "{STATES}" }}

[run]
seed = 11

[settle]
window_s = 0.15
{keys}""", encoding="utf-8")
    return path


SCENARIOS = ["stale-after-newer", "reorder"]
#: The scenarios walking states, each onboarding a seller of its own (one scenario's stored seller never
#: meets another's): run side by side, a fetching platform must be served each seller's own state.
WALKS = [*SCENARIOS, "distinct-updates-same-object", "mass-redelivery"]


@pytest.mark.slow
@pytest.mark.parametrize("state", ["fetch", "newest"])
def test_a_platform_keeping_the_newest_account_state_passes(tmp_path: Path, state: str) -> None:
    result = certify(load_config(_config(tmp_path, state)), scenarios=WALKS, out_dir=tmp_path / "out")
    verdicts = {s.id: (s.verdict, [f.message for c in s.checks for f in c.findings]) for s in result.report.scenarios}
    assert verdicts == {scenario: ("pass", []) for scenario in WALKS}
    sellers = [{a.object_id for a in s.attempts} for s in result.report.scenarios]
    assert all(len(one) == 1 for one in sellers) and len(set().union(*sellers)) == len(WALKS)
    for scenario in result.report.scenarios:
        assert {a.event_type for a in scenario.attempts} == {"account.updated"}
    assert "enabled but not modelled: payout.paid, payout.failed, application_fee.created; their handling is not " \
           "certified" in result.report.notes


@pytest.mark.slow
def test_a_platform_keeping_the_last_account_updated_to_arrive_is_stale(tmp_path: Path) -> None:
    result = certify(load_config(_config(tmp_path, "last")), scenarios=SCENARIOS, out_dir=tmp_path / "out")
    by_id = {s.id: s for s in result.report.scenarios}
    assert {i: s.verdict for i, s in by_id.items()} == {"stale-after-newer": "fail", "reorder": "fail"}
    for scenario in by_id.values():
        stale = [f for c in scenario.checks if c.check_id == "stale" for f in c.findings]
        [seller] = {a.object_id for a in scenario.attempts}  # the seller this scenario onboarded
        assert seller.startswith("acct_") and seller != PLATFORM_SELLER
        assert [(f.key, f.expected.split(" (")[0], f.actual.split(" (")[0]) for f in stale] == [
            (seller, "enabled", "pending")], stale
        assert stale[0].message.startswith("final state is pending (event evt_"), stale[0].message
        assert "account.updated" in stale[0].message and "enabled" in stale[0].message


def _payments_config(tmp_path: Path, owner: str) -> Path:
    """The platform recording its sellers' payments under the team's key naming the account."""
    return _config(tmp_path, "fetch", events='"payment_intent.succeeded"', env=f', PAYMENT_OWNER = "{owner}"',
                   keys='[business_keys]\n"payment_intent.succeeded" = "payment:{account}:{data.object.id}"\n')


@pytest.mark.slow
def test_a_payment_booked_under_another_account_is_named_in_its_lost_finding(tmp_path: Path) -> None:
    """A trial's platform booked every seller's payment to itself (``payment:platform:pi_…``) and
    was told only that it answered 2xx and applied nothing: the row it did write was outside the
    scenario's view (its key names the payment last, not second). Now the finding names it."""
    scenarios = ["duplicate-sequential"]
    right = certify(load_config(_payments_config(tmp_path / "right", "account")), scenarios=scenarios,
                    out_dir=tmp_path / "right" / "out").report
    assert [(s.id, s.verdict, [f.message for f in s.findings]) for s in right.scenarios] == [
        ("duplicate-sequential", "pass", [])]
    wrong = certify(load_config(_payments_config(tmp_path / "wrong", "platform")), scenarios=scenarios,
                    out_dir=tmp_path / "wrong" / "out").report
    (scenario,) = wrong.scenarios
    lost = [f for f in scenario.findings if f.check_id == "lost"]
    assert lost and all(f.key.startswith(f"payment:{PLATFORM_SELLER}:pi_") for f in lost), scenario.findings
    for finding in lost:
        intent = finding.key.rsplit(":", 1)[1]
        assert (f"; the receiver applied payment:platform:{intent} instead, a key no event owed that names the "
                f"same {intent}: its key is made from other fields than the config's template says") \
            in finding.message, finding.message
    # the row it wrote under its own key is also an effect no event owed
    unexpected = sorted(f.key for f in scenario.findings if f.check_id == "unexpected")
    assert unexpected == sorted(f"payment:platform:{f.key.rsplit(':', 1)[1]}" for f in lost), scenario.findings

