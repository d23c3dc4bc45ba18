"""Profiles: registry, envelopes, ids and delivery contracts (no verifiers here).

Official-verifier cross-checks live in test_profiles_verifiers.py; generic HMAC
settings in test_profiles_generic.py; the optional Node cross-check in
test_profiles_node.py.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest

from hookproof.simulator import profiles
from hookproof.simulator.errors import ProfileError, SecretError
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import PROFILES, STRIPE_EVENT_TYPES, get_profile
from hookproof.simulator.profiles.base import Profile, canonical_json
from hookproof.simulator.profiles.formats import rfc3339_ns, rfc3339_s, rfc3339_us
from hookproof.simulator.world import GITHUB_EVENT_TYPES, SCRIPTS, emit_events, new_world, world_event_types
from hookproof.simulator.world.mercadopago import MercadoPagoWorld, mp_date
from hookproof.simulator.world.shopify import own_shop
from tests.simulator.stripe_format import stripe_reference

CREATED_US = 1_700_000_000_123_456


def make_event(
    type: str = "payment_intent.succeeded",
    *,
    event_id: str = "evt_1Test",
    object_id: str = "pi_3AbCdEf",
    obj: dict[str, Any] | None = None,
    previous: dict[str, Any] | None = None,
    livemode: bool = False,
    account: str = "acct_hookproof",
) -> Event:
    """A hand-built world event (Stripe vocabulary), with a non-ASCII field in the object."""
    object_type = type.rpartition(".")[0].removeprefix("customer.") if type.startswith("customer.subscription") else type.rpartition(".")[0]
    snapshot = obj if obj is not None else {
        "id": object_id,
        "object": object_type,
        "amount": 1999,
        "currency": "brl",
        "status": "succeeded",
        "description": "Café ☕",
    }
    return Event(
        id=event_id,
        type=type,
        created=CREATED_US // 1_000_000,
        created_us=CREATED_US,
        object_type=object_type,
        object_id=object_id,
        version=1,
        object=snapshot,
        previous_attributes=previous,
        livemode=livemode,
        account=account,
    )


def sample_event(profile: Profile, type: str | None = None, *, event_id: str | None = None,
                 account: str | None = None) -> Event:
    """An event `profile` sends: `make_event` for the billing world's profiles, a repository
    world event (seeded by `event_id`) for GitHub's."""
    if profile.world == "billing":
        return make_event(type or profile.default_event, **({"event_id": event_id} if event_id else {}),
                          **({"account": account} if account else {}))
    seed = sum(map(ord, event_id or "evt_1Test"))
    event = emit_events(new_world(profile.world, seed), type or profile.default_event)[0]
    return replace(event, account=account) if account else event


ALL = [get_profile(name) for name in PROFILES]
IDS = list(PROFILES)


# ---- registry ---------------------------------------------------------------------

def test_shipped_profiles() -> None:
    assert PROFILES == ("generic-hmac", "github", "mercadopago", "paddle", "shopify", "standard-webhooks", "stripe", "svix")


def test_all_is_sorted_and_complete() -> None:
    assert profiles.__all__ == sorted(profiles.__all__)
    for name in profiles.__all__:
        assert hasattr(profiles, name), name
    exported_classes = {type(p).__name__ for p in ALL}
    assert exported_classes <= set(profiles.__all__)


@pytest.mark.parametrize("name", PROFILES)
def test_get_profile_returns_the_named_profile(name: str) -> None:
    profile = get_profile(name)
    assert profile.name == name
    assert isinstance(profile, Profile)


def test_unknown_profile_names_the_known_ones() -> None:
    with pytest.raises(ProfileError) as info:
        get_profile("paypal")
    assert info.value.field == "profile"
    assert "stripe" in str(info.value) and "svix" in str(info.value)


def test_settings_are_refused_for_fixed_profiles() -> None:
    with pytest.raises(ProfileError) as info:
        get_profile("stripe", settings={"algorithm": "sha1"})
    assert info.value.field == "settings"


# ---- envelopes --------------------------------------------------------------------

@pytest.mark.parametrize("profile", ALL, ids=IDS)
def test_envelope_is_stable_and_utf8_json(profile: Profile) -> None:
    event = sample_event(profile)
    first, second = profile.envelope(event), profile.envelope(event)
    assert first == second
    text = first.body.decode("utf-8")
    if profile.world == "billing":
        assert ("Café ☕" in text) is (not profile.thin)  # fat bodies carry the snapshot, unescaped
    json.loads(first.body)


@pytest.mark.parametrize("profile", ALL, ids=IDS)
def test_bodies_are_the_bytes_json_dumps_writes(profile: Profile) -> None:
    """canonical_json (orjson) writes what ``json.dumps`` compact, unescaped, would: for
    every event of a whole lifecycle, in each profile's own envelope. Stripe's bodies are
    pretty-printed as Stripe sends them instead (`stripe_format.stripe_reference`)."""
    world = new_world(profile.world, 11)
    world.lifecycle()
    for event in world.events:
        body = profile.envelope(event).body
        if profile.name == "stripe":
            assert body == stripe_reference(json.loads(body)).encode()
        else:
            assert body == json.dumps(json.loads(body), separators=(",", ":"), ensure_ascii=False).encode()


def test_canonical_json_falls_back_to_json_for_what_orjson_refuses() -> None:
    value = {"big": 2**70, 1: "x", "s": "Café ☕"}
    assert canonical_json(value) == '{"big":1180591620717411303424,"1":"x","s":"Café ☕"}'.encode()
    assert canonical_json({1: [True, None]}) == b'{"1":[true,null]}'


@pytest.mark.parametrize("profile", ALL, ids=IDS)
def test_signing_twice_gives_the_same_headers(profile: Profile) -> None:
    envelope = profile.envelope(sample_event(profile))
    secret = profile.generate_secret(7)
    assert profile.sign(envelope, [secret], 1_700_000_000) == profile.sign(envelope, [secret], 1_700_000_000)


@pytest.mark.parametrize("profile", ALL, ids=IDS)
def test_default_event_is_mapped_and_types_are_world_types(profile: Profile) -> None:
    if profile.world == "github":  # GitHub's own events, from the repository world
        assert profile.default_event == "issues.opened"
        assert profile.event_types() == {t: t for t in GITHUB_EVENT_TYPES}
        return
    if profile.world != "billing":  # the provider's own events, from its own world
        assert profile.event_types() == {t: t for t in world_event_types(profile.world)}
        assert profile.provider_type(profile.default_event) == profile.default_event
        return
    assert profile.default_event == "payment_intent.succeeded"
    assert profile.provider_type(profile.default_event) is not None
    assert set(profile.event_types()) <= set(SCRIPTS)


@pytest.mark.parametrize("profile", ALL, ids=IDS)
def test_envelope_type_is_the_mapped_name(profile: Profile) -> None:
    for stripe_type, provider_type in profile.event_types().items():
        assert profile.envelope(sample_event(profile, stripe_type)).type == provider_type


@pytest.mark.parametrize("profile", ALL, ids=IDS)
def test_distinct_events_get_distinct_dedupe_ids(profile: Profile) -> None:
    a = profile.envelope(sample_event(profile, event_id="evt_A"))
    b = profile.envelope(sample_event(profile, event_id="evt_B"))
    assert a.event_id != b.event_id


@pytest.mark.parametrize("profile", ALL, ids=IDS)
def test_empty_secret_is_refused(profile: Profile) -> None:
    envelope = profile.envelope(sample_event(profile))
    with pytest.raises(SecretError):
        profile.sign(envelope, [], 1_700_000_000)
    with pytest.raises(SecretError):
        profile.sign(envelope, [""], 1_700_000_000)


@pytest.mark.parametrize("profile", ALL, ids=IDS)
def test_generated_secrets_are_deterministic_and_seeded(profile: Profile) -> None:
    assert profile.generate_secret(1) == profile.generate_secret(1)
    assert profile.generate_secret(1) != profile.generate_secret(2)


SECRET_FORMATS = {
    "generic-hmac": r"[0-9a-f]{64}",
    "github": r"[0-9a-f]{40}",
    "mercadopago": r"[0-9a-f]{64}",
    "paddle": r"pdl_ntfset_[0-9a-hjkmnp-tv-z]{26}_[0-9A-Za-z]{32}",
    "shopify": r"shpss_[0-9a-f]{32}",
    "standard-webhooks": r"whsec_[A-Za-z0-9+/]{32}",
    "stripe": r"whsec_[A-Za-z0-9]{32}",
    "svix": r"whsec_[A-Za-z0-9+/]{32}",
}


@pytest.mark.parametrize("profile", ALL, ids=IDS)
def test_secret_format(profile: Profile) -> None:
    assert re.fullmatch(SECRET_FORMATS[profile.name], profile.generate_secret(3))


def test_time_renderings() -> None:
    assert rfc3339_us(CREATED_US) == "2023-11-14T22:13:20.123456Z"
    assert rfc3339_ns(CREATED_US) == "2023-11-14T22:13:20.123456000Z"
    assert rfc3339_s(CREATED_US) == "2023-11-14T22:13:20Z"
    assert rfc3339_us(1_700_000_000_000_007) == "2023-11-14T22:13:20.000007Z"


# ---- delivery contracts -----------------------------------------------------------

CONTRACTS = {
    # name: (timeout_s, retry delays, tolerance (past, future), livemode, account, thin, rotation)
    "generic-hmac": (10.0, (), (None, None), True, True, False, False),
    "github": (10.0, (), (None, None), False, True, False, False),
    "mercadopago": (22.0, (900.0, 900.0, 19800.0, 151200.0, 172800.0), (None, None), True, True, True, False),
    "shopify": (5.0, (60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 3840.0, 6780.0), (None, None), False, True, False, False),
    "standard-webhooks": (15.0, (5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0, 50400.0, 72000.0, 86400.0), (300.0, 300.0), False, False, False, True),
    "svix": (15.0, (5.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0, 36000.0), (300.0, 300.0), False, False, False, True),
}


@pytest.mark.parametrize("name", sorted(CONTRACTS))
def test_delivery_contract(name: str) -> None:
    profile = get_profile(name)
    timeout, schedule, (past, future), livemode, account, thin, rotation = CONTRACTS[name]
    assert profile.sender_timeout_s == timeout
    assert profile.retry_schedule_s == schedule
    assert (profile.tolerance.past_s, profile.tolerance.future_s) == (past, future)
    assert (profile.has_livemode, profile.has_account, profile.thin, profile.multiple_signatures) == (livemode, account, thin, rotation)


def test_svix_attempts_land_at_the_documented_offsets() -> None:
    offsets, elapsed = [], 0.0
    for delay in get_profile("svix").retry_schedule_s:
        elapsed += delay
        offsets.append(elapsed)
    # docs.svix.com/retries: last attempt 27 h 35 min 5 s after the first.
    assert offsets[-1] == 27 * 3600 + 35 * 60 + 5


def test_shopify_retries_end_four_hours_after_the_first_attempt() -> None:
    assert sum(get_profile("shopify").retry_schedule_s) == 4 * 3600


def test_mercadopago_retries_land_at_the_documented_offsets() -> None:
    elapsed, offsets = 0.0, []
    for delay in get_profile("mercadopago").retry_schedule_s:
        elapsed += delay
        offsets.append(elapsed)
    assert offsets == [15 * 60, 30 * 60, 6 * 3600, 48 * 3600, 96 * 3600]


def test_mercadopago_success_codes_and_timeouts() -> None:
    profile = get_profile("mercadopago")
    assert [s for s in (200, 201, 202, 204, 299, 301, 400, 500) if profile.is_success(s)] == [200, 201]
    assert [profile.attempt_timeout_s(n) for n in (1, 2, 6)] == [22.0, 5.0, 5.0]


def test_default_success_is_any_2xx_and_timeout_is_constant() -> None:
    profile = get_profile("svix")
    assert [s for s in (199, 200, 204, 299, 300, 410) if profile.is_success(s)] == [200, 204, 299]
    assert profile.attempt_timeout_s(5) == 15.0


def test_paddle_contract() -> None:
    paddle = get_profile("paddle")
    schedule = paddle.retry_schedule_s
    assert len(schedule) == 60
    assert list(schedule) == sorted(schedule)
    assert 71 * 3600 <= sum(schedule) <= 72 * 3600
    assert paddle.sender_timeout_s == 5.0
    # the Node SDK's WebhooksValidator checks only the past; paddle-python-sdk's Verifier ±5 s
    assert (paddle.tolerance.past_s, paddle.tolerance.future_s) == (5.0, None)
    assert paddle.future_dispute is not None and paddle.future_dispute.window_s == 5.0
    assert paddle.future_offset_s() == 65
    assert paddle.words().future == (
        "signed 65 s ahead; Paddle's Node SDK (@paddle/paddle-node-sdk's WebhooksValidator) accepts them (it checks "
        "only the past) while paddle-python-sdk's Verifier refuses a timestamp more than 5 s ahead: Paddle Billing's "
        "official verifiers disagree, so refusing is not required, but a real delivery from a sender whose clock "
        "runs ahead would be refused")
    assert (paddle.has_livemode, paddle.has_account, paddle.multiple_signatures) == (False, False, True)


def test_only_a_future_timestamp_no_official_verifier_accepts_must_be_refused() -> None:
    """Standard Webhooks' and Svix's libraries refuse a timestamp 5 min ahead: no advisory words, 360 s
    ahead; Stripe's checks only the past (an hour and a minute ahead); Paddle's verifiers disagree."""
    words = {name: get_profile(name).words().future for name in ("standard-webhooks", "svix", "stripe", "paddle")}
    assert words["standard-webhooks"] is None and words["svix"] is None
    assert [get_profile(n).future_offset_s() for n in ("standard-webhooks", "stripe", "paddle")] == [360, 3660, 65]
    assert words["stripe"] is not None and words["stripe"].startswith("signed 3660 s ahead; Stripe's official verifier")
    assert words["paddle"] is not None and "disagree" in words["paddle"]


def test_github_has_no_retries_but_a_redelivery_window() -> None:
    github = get_profile("github")
    assert github.retry_schedule_s == ()
    assert github.redelivery_window_s == 3 * 86400  # type: ignore[attr-defined]


# ---- per-provider envelopes -------------------------------------------------------

def test_standard_webhooks_envelope() -> None:
    profile = get_profile("standard-webhooks")
    envelope = profile.envelope(make_event())
    assert re.fullmatch(r"msg_[0-9A-Za-z]{27}", envelope.event_id)
    assert envelope.headers["webhook-id"] == envelope.event_id
    assert json.loads(envelope.body) == {
        "type": "payment.succeeded",
        "timestamp": "2023-11-14T22:13:20.123456Z",
        "data": {"id": "pi_3AbCdEf", "object": "payment_intent", "amount": 1999, "currency": "brl", "status": "succeeded", "description": "Café ☕"},
    }
    assert set(profile.sign(envelope, ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], 1)) == {"webhook-timestamp", "webhook-signature"}


def test_standard_webhooks_maps_every_world_type() -> None:
    mapping = get_profile("standard-webhooks").event_types()
    assert set(mapping) == set(STRIPE_EVENT_TYPES)
    assert mapping["customer.subscription.deleted"] == "subscription.deleted"
    assert mapping["checkout.session.completed"] == "checkout.completed"
    assert mapping["payment_intent.payment_failed"] == "payment.failed"
    assert all(re.fullmatch(r"[a-z_]+\.[a-z_]+", t) for t in mapping.values())


def test_svix_uses_svix_header_names() -> None:
    profile = get_profile("svix")
    envelope = profile.envelope(make_event())
    assert envelope.headers["svix-id"].startswith("msg_")
    assert "webhook-id" not in envelope.headers
    assert set(profile.sign(envelope, [profile.generate_secret(1)], 1)) == {"svix-timestamp", "svix-signature"}


def test_standard_webhooks_rotation_is_space_separated() -> None:
    profile = get_profile("standard-webhooks")
    envelope = profile.envelope(make_event())
    value = profile.sign(envelope, [profile.generate_secret(1), profile.generate_secret(2)], 1_700_000_000)["webhook-signature"]
    assert re.fullmatch(r"v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=", value)


def test_standard_webhooks_refuses_a_secret_that_is_not_base64() -> None:
    profile = get_profile("standard-webhooks")
    with pytest.raises(SecretError) as info:
        profile.sign(profile.envelope(make_event()), ["whsec_@@@"], 1)
    assert "@@@" not in str(info.value)


def test_github_envelope() -> None:
    profile = get_profile("github")
    world = new_world("github", 3)
    issue = world.open_issue()  # type: ignore[union-attr]
    world.edit_issue(issue)  # type: ignore[union-attr]
    event = world.events[-1]
    envelope = profile.envelope(event)
    body = json.loads(envelope.body)
    assert list(body) == ["action", "issue", "changes", "repository", "organization", "sender", "installation"]
    assert body["action"] == "edited"
    assert body["changes"] == {"title": {"from": world.get(issue, 1)["title"]}}
    assert body["issue"]["title"] == world.get(issue)["title"]
    assert body["installation"] == {"id": int(world.account), "node_id": body["installation"]["node_id"]}
    assert body["sender"]["type"] == "User" and body["organization"]["login"] == body["repository"]["owner"]["login"]
    assert envelope.headers["X-GitHub-Hook-Installation-Target-Type"] == "integration"
    assert envelope.headers["X-GitHub-Hook-Installation-Target-ID"] == str(world.app_id)  # type: ignore[union-attr]
    assert envelope.type == "issues.edited"
    assert envelope.headers["X-GitHub-Event"] == "issues"
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", envelope.headers["X-GitHub-Delivery"])
    assert envelope.event_id == envelope.headers["X-GitHub-Delivery"] == event.id
    assert re.fullmatch(r"GitHub-Hookshot/[0-9a-f]{7}", envelope.headers["User-Agent"])
    assert envelope.headers["X-GitHub-Hook-ID"] == str(world.hook_id)  # type: ignore[union-attr]


def test_github_push_and_ping_have_no_action() -> None:
    profile = get_profile("github")
    for name in ("push", "ping"):
        envelope = profile.envelope(sample_event(profile, name))
        assert envelope.headers["X-GitHub-Event"] == name and envelope.type == name
        assert "action" not in json.loads(envelope.body)


def test_github_event_names() -> None:
    mapping = get_profile("github").event_types()
    assert set(mapping) == set(GITHUB_EVENT_TYPES)
    assert not set(mapping) & set(STRIPE_EVENT_TYPES)  # a GitHub App never receives billing events
    assert {"issues.opened", "issue_comment.created", "pull_request.synchronize", "push", "ping"} <= set(mapping)


def test_github_refuses_billing_events() -> None:
    with pytest.raises(ProfileError, match="GitHub sends no 'payment_intent.succeeded' event"):
        get_profile("github").envelope(make_event())


def test_github_installation_follows_the_account() -> None:
    profile = get_profile("github")
    ours = json.loads(profile.envelope(sample_event(profile)).body)["installation"]
    foreign = json.loads(profile.envelope(sample_event(profile, account="acct_other")).body)["installation"]
    assert ours["id"] != foreign["id"] and ours["node_id"] != foreign["node_id"]


def test_github_and_shopify_ignore_the_attempt_time() -> None:
    for name in ("github", "shopify"):
        profile = get_profile(name)
        envelope = profile.envelope(sample_event(profile))
        assert profile.sign(envelope, ["s"], 1) == profile.sign(envelope, ["s"], 1_900_000_000)


def test_single_secret_providers_sign_with_the_first_secret() -> None:
    for name in ("github", "shopify", "mercadopago"):
        profile = get_profile(name)
        envelope = profile.envelope(sample_event(profile))
        assert profile.sign(envelope, ["first", "second"], 5) == profile.sign(envelope, ["first"], 5)


def test_shopify_envelope() -> None:
    profile = get_profile("shopify")
    event = emit_events(new_world("shopify", 3, start_us=1_700_000_000_000_000), "refunds/create")[0]
    envelope = profile.envelope(event)
    assert envelope.type == "refunds/create"
    assert envelope.headers["X-Shopify-Topic"] == "refunds/create"
    assert envelope.headers["X-Shopify-Shop-Domain"] == f"{own_shop(3)}.myshopify.com"  # the world's own shop
    assert envelope.headers["X-Shopify-API-Version"] == "2024-10"
    assert envelope.headers["X-Shopify-Triggered-At"] == rfc3339_ns(event.created_us)
    # a refund's refunds/create is its action's first event: the action's Event-Id is its id
    assert envelope.headers["X-Shopify-Event-Id"] == event.id
    assert envelope.event_id == f"refunds/create:{event.id}"
    assert envelope.headers["X-Shopify-Webhook-Id"] != event.id
    assert json.loads(envelope.body)["id"] == int(event.object_id)


def test_shopify_topics() -> None:
    mapping = get_profile("shopify").event_types()
    assert mapping == {t: t for t in world_event_types("shopify")}
    assert {"orders/create", "orders/paid", "orders/cancelled", "refunds/create", "app/uninstalled",
            "customers/create"} <= set(mapping)
    assert all(re.fullmatch(r"[a-z_]+/[a-z_]+", t) for t in mapping.values())


def test_mercadopago_envelope() -> None:
    profile = get_profile("mercadopago")
    event = emit_events(MercadoPagoWorld(3, livemode=True), "payment.updated")[0]
    envelope = profile.envelope(event)
    body = json.loads(envelope.body)
    assert list(body) == ["id", "live_mode", "type", "date_created", "user_id", "api_version", "action", "data"]
    assert body["data"] == {"id": event.object_id} and re.fullmatch(r"\d{11}", event.object_id)
    assert (body["type"], body["action"], body["api_version"], body["live_mode"]) == ("payment", "payment.updated", "v1", True)
    assert body["date_created"] == mp_date(event.created_us)  # ms and the offset, as Mercado Pago's example
    assert isinstance(body["id"], int) and envelope.event_id == str(body["id"]) == event.id
    assert body["user_id"] == int(event.account)
    assert envelope.query == {"data.id": event.object_id, "type": "payment"}
    assert get_profile("mercadopago").thin is True


def test_mercadopago_sends_its_own_event_types() -> None:
    assert dict(get_profile("mercadopago").event_types()) == {
        "payment.created": "payment.created", "payment.updated": "payment.updated", "merchant_order": "merchant_order"}


def test_mercadopago_request_id_is_a_uuid_per_attempt() -> None:
    profile = get_profile("mercadopago")
    envelope = profile.envelope(sample_event(profile))
    first = profile.sign(envelope, ["s"], 1_700_000_000)
    again = profile.sign(envelope, ["s"], 1_700_000_000)
    later = profile.sign(envelope, ["s"], 1_700_000_900)
    assert re.fullmatch(r"[0-9a-f-]{36}", first["x-request-id"])
    assert first == again
    assert first["x-request-id"] != later["x-request-id"]
    assert re.fullmatch(r"ts=1700000000,v1=[0-9a-f]{64}", first["x-signature"])


def test_mercadopago_timestamp_unit() -> None:
    from hookproof.simulator.profiles import MercadoPagoProfile

    profile = MercadoPagoProfile(timestamp_unit="ms")
    headers = profile.sign(profile.envelope(sample_event(profile)), ["s"], 1_700_000_000)
    assert headers["x-signature"].startswith("ts=1700000000000,v1=")
    with pytest.raises(ProfileError) as info:
        MercadoPagoProfile(timestamp_unit="us")  # type: ignore[arg-type]
    assert info.value.field == "timestamp_unit"


def test_paddle_envelope() -> None:
    profile = get_profile("paddle")
    event = sample_event(profile)
    envelope = profile.envelope(event)
    body = json.loads(envelope.body)
    assert list(body) == ["event_id", "event_type", "occurred_at", "notification_id", "data"]
    assert (body["event_id"], body["event_type"], body["occurred_at"]) == (
        event.id, "transaction.completed", rfc3339_us(event.created_us))
    # Paddle's ids: a ULID after the prefix, ``01`` first (ntf_01ghbkd0frb9k95cnhwd1bxpvk in Paddle's docs)
    assert re.fullmatch(r"ntf_01[0-9a-hjkmnp-tv-z]{24}", body["notification_id"])
    assert re.fullmatch(r"ntf_[a-z\d]{26}", body["notification_id"])  # the pattern of Paddle's schema
    assert body["notification_id"] == profile.notification_id(event)  # stable across retries
    assert re.fullmatch(r"evt_01[0-9a-hjkmnp-tv-z]{24}", envelope.event_id) and envelope.event_id == event.id
    assert re.fullmatch(r"pdl_ntfset_01[0-9a-hjkmnp-tv-z]{24}_[0-9A-Za-z]{32}", profile.generate_secret(3))
    assert body["data"] == dict(event.object) and body["data"]["id"].startswith("txn_")


def test_paddle_types() -> None:
    assert list(get_profile("paddle").event_types()) == [
        "transaction.created", "transaction.updated", "transaction.ready", "transaction.billed", "transaction.paid",
        "transaction.completed", "transaction.payment_failed", "transaction.past_due",
        "subscription.created", "subscription.trialing", "subscription.activated", "subscription.updated",
        "subscription.past_due", "subscription.paused", "subscription.resumed", "subscription.canceled",
        "adjustment.created", "adjustment.updated", "customer.created", "customer.updated", "address.created"]


def test_paddle_header_has_only_ts_and_h1() -> None:
    profile = get_profile("paddle")
    value = profile.sign(profile.envelope(sample_event(profile)), ["a", "b", "c"], 1_700_000_000)["Paddle-Signature"]
    keys = [part.split("=")[0] for part in value.split(";")]
    assert keys == ["ts", "h1", "h1", "h1"]


def test_unmapped_types_pass_through_verbatim() -> None:
    event = make_event("widget.exploded")
    assert get_profile("standard-webhooks").envelope(event).type == "widget.exploded"
    for name in ("github", "mercadopago", "paddle"):  # these render only their own world's events
        with pytest.raises(ProfileError):
            get_profile(name).envelope(event)


# ---- the request's headers without the request ------------------------------------


def _world_event(name: str) -> Event:
    """One event of `name`'s own world (the first its default event script emits)."""
    profile = get_profile(name)
    world = new_world(profile.world, 7)
    return emit_events(world, world_event_types(profile.world)[0])[0]


@pytest.mark.parametrize("name", PROFILES)
@pytest.mark.parametrize("secrets_n", [1, 2])
def test_request_headers_are_the_requests_headers_in_order(name: str, secrets_n: int) -> None:
    profile = get_profile(name)
    envelope = profile.envelope(_world_event(name))
    secrets = [profile.generate_secret(s) for s in range(secrets_n)]
    request = profile.request(envelope, secrets, 1_790_000_000)
    assert profile.request_headers(envelope, secrets, 1_790_000_000) == list(request.headers.items())
    # what a sender of the pairs sends besides them: POST, the envelope's body and query
    assert (request.method, request.body, dict(request.query)) == ("POST", envelope.body, dict(envelope.query))


def test_a_profile_making_its_requests_otherwise_gives_no_request_headers() -> None:
    class Stamped(type(get_profile("github"))):  # type: ignore[misc]
        def request(self, envelope, secrets, timestamp):  # type: ignore[no-untyped-def]
            made = super().request(envelope, secrets, timestamp)
            return replace(made, headers={**made.headers, "X-Stamp": "1"})

    profile = Stamped()
    envelope = profile.envelope(_world_event("github"))
    assert profile.request_headers(envelope, ["s3cret"], 0) is None
    assert get_profile("github").request_headers(envelope, ["s3cret"], 0) is not None


def test_a_stripe_signature_header_in_the_envelope_is_replaced_in_place() -> None:
    stripe = get_profile("stripe")
    plain = stripe.envelope(_world_event("stripe"))
    envelope = replace(plain, headers={"Stripe-Signature": "stale", **plain.headers})
    pairs = stripe.request_headers(envelope, ["whsec_a"], 1_790_000_000)
    assert pairs == list(stripe.request(envelope, ["whsec_a"], 1_790_000_000).headers.items())
    assert pairs is not None and pairs[0][0] == "Stripe-Signature" and pairs[0][1] != "stale"


def test_every_profile_checks_its_subscribed_types_against_its_optional_types_alike() -> None:
    """`Profile.__init__`: one check for every profile, worded by its `optional_noun`; kept in
    `optional_types` order, repeats dropped."""
    stripe_cls, shopify_cls, github_cls = (type(get_profile(n)) for n in ("stripe", "shopify", "github"))
    assert stripe_cls(["invoice.payment_succeeded"] * 2).subscribed == ("invoice.payment_succeeded",)
    assert shopify_cls(["shop/redact", "customers/redact"]).subscribed == ("customers/redact", "shop/redact")
    assert stripe_cls().subscribed == () and github_cls().subscribed == ()
    with pytest.raises(ProfileError, match=r"^'invoice.finalized' is no optional Stripe type \(they are: "
                                           r"invoice.payment_succeeded, customer.subscription.trial_will_end, "
                                           r"charge.dispute.created, charge.dispute.funds_withdrawn, "
                                           r"charge.dispute.updated, charge.dispute.closed, "
                                           r"charge.dispute.funds_reinstated, refund.updated, refund.failed\)$"
                       ) as info:
        stripe_cls(["invoice.payment_succeeded", "invoice.finalized"])
    assert info.value.field == "subscribed"
    with pytest.raises(ProfileError, match=r"^'a/b' is no optional Shopify topic \(they are: "
                                           r"customers/data_request, customers/redact, shop/redact, "
                                           r"orders/fulfilled, orders/partially_fulfilled\)$"):
        shopify_cls(["orders/paid", "a/b"])
    assert github_cls(["check_run.completed", "check_suite.requested"]).subscribed == (
        "check_suite.requested", "check_run.completed")
    with pytest.raises(ProfileError, match=r"^'shop/redact' is no optional GitHub type \(they are: "
                                           r"check_suite.requested, .*, check_run.completed\)$"):
        github_cls(["shop/redact"])
    with pytest.raises(ProfileError, match=r"^'shop/redact' is no optional type \(they are: none\)$"):
        type(get_profile("paddle"))(["shop/redact"])
