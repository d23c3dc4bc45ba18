"""Our signatures against each provider's official verifier and published test vectors.

Official verifiers (PyPI): stripe ``Webhook.construct_event``, standardwebhooks
``Webhook.verify``, svix ``Webhook.verify``, mercadopago
``WebhookSignatureValidator.validate``, paddle-python-sdk ``Verifier.verify``.
GitHub and Shopify publish no Python verifier: they are checked by an independent
computation written from their docs (and by their Node libraries in
test_profiles_node.py when Node is available).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from dataclasses import dataclass, replace
from typing import Callable, Mapping

import pytest
import standardwebhooks.webhooks as standardwebhooks
import stripe
import svix.webhooks as svix
from mercadopago.webhook import InvalidWebhookSignatureError, SignatureFailureReason, WebhookSignatureValidator
from paddle_billing.Notifications import PaddleSignature, Secret, Verifier

from hookproof.simulator.profiles import Envelope, SignedRequest, get_profile
from hookproof.simulator.profiles.base import Profile
from hookproof.simulator.profiles.github import github_signature
from hookproof.simulator.profiles.mercadopago import mercadopago_signature
from hookproof.simulator.profiles.paddle import paddle_signature
from hookproof.simulator.profiles.shopify import shopify_hmac
from hookproof.simulator.profiles.standard_webhooks import standard_signature
from hookproof.simulator.profiles.stripe import stripe_signature
from tests.simulator.test_profiles import sample_event


@pytest.fixture(autouse=True)
def _paddle_clock_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Paddle SDK skips its ±5 s check when TEST_MODE=1 is set: make sure it is not."""
    monkeypatch.delenv("TEST_MODE", raising=False)


@dataclass
class PaddleRequest:
    """What Paddle's Verifier reads from a framework request: `.headers.get()` and `.body`."""

    headers: Mapping[str, str]
    body: bytes


# ---- official verifiers, one function per provider: True = accepted --------------

def verify_stripe(request: SignedRequest, secret: str, **_: object) -> bool:
    try:
        event = stripe.Webhook.construct_event(request.body, request.headers["Stripe-Signature"], secret)
    except stripe.SignatureVerificationError:
        return False
    assert event.id == "evt_1Test"
    return True


def verify_standard(request: SignedRequest, secret: str, **_: object) -> bool:
    try:
        payload = standardwebhooks.Webhook(secret).verify(request.body, dict(request.headers))
    except standardwebhooks.WebhookVerificationError:
        return False
    assert payload["type"] == "payment.succeeded"
    return True


def verify_svix(request: SignedRequest, secret: str, **_: object) -> bool:
    try:
        svix.Webhook(secret).verify(request.body, dict(request.headers))
    except svix.WebhookVerificationError:
        return False
    return True


def verify_mercadopago(request: SignedRequest, secret: str, tolerance_s: int | None = None, **_: object) -> bool:
    """As the docs tell a receiver: ``data.id`` from the query, lowercased."""
    try:
        WebhookSignatureValidator.validate(
            request.headers["x-signature"],
            request.headers["x-request-id"],
            request.query["data.id"].lower(),
            secret,
            tolerance_seconds=tolerance_s,
        )
    except InvalidWebhookSignatureError:
        return False
    return True


def verify_paddle(request: SignedRequest, secret: str, **_: object) -> bool:
    return bool(Verifier().verify(PaddleRequest(request.headers, request.body), Secret(secret)))


def verify_github(request: SignedRequest, secret: str, **_: object) -> bool:
    """The check from GitHub's docs (validating-webhook-deliveries), written independently."""
    expected = "sha256=" + hmac.new(secret.encode(), request.body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, request.headers["X-Hub-Signature-256"])


def verify_github_legacy(request: SignedRequest, secret: str, **_: object) -> bool:
    expected = "sha1=" + hmac.new(secret.encode(), request.body, hashlib.sha1).hexdigest()
    return hmac.compare_digest(expected, request.headers["X-Hub-Signature"])


def verify_shopify(request: SignedRequest, secret: str, **_: object) -> bool:
    """The check from shopify.dev (base64 HMAC-SHA256 of the raw body), written independently."""
    expected = base64.b64encode(hmac.new(secret.encode(), request.body, hashlib.sha256).digest()).decode()
    return hmac.compare_digest(expected, request.headers["X-Shopify-Hmac-Sha256"])


Verify = Callable[..., bool]

VERIFIERS: dict[str, Verify] = {
    "stripe": verify_stripe,
    "standard-webhooks": verify_standard,
    "svix": verify_svix,
    "mercadopago": verify_mercadopago,
    "paddle": verify_paddle,
    "github": verify_github,
    "shopify": verify_shopify,
}
NAMES = sorted(VERIFIERS)
ROTATING = ["paddle", "standard-webhooks", "stripe", "svix"]


def signed(name: str, secrets: list[str], skew_s: int = 0, body: bytes | None = None) -> tuple[Profile, SignedRequest]:
    """A request for the profile's default event, signed now + `skew_s` seconds."""
    profile = get_profile(name)
    envelope = profile.envelope(sample_event(profile))
    if body is not None:
        envelope = envelope.with_body(body)
    return profile, profile.request(envelope, secrets, int(time.time()) + skew_s)


def tampered(body: bytes) -> bytes:
    """The same body with one byte changed (a digit of the amount, of a GitHub issue's
    number or of a Paddle item's quantity; still valid UTF-8 JSON)."""
    for old, new in ((b"1999", b"1998"), (b'"number":1', b'"number":2'), (b'"quantity":1', b'"quantity":2')):
        if old in body:
            changed = body.replace(old, new, 1)
            break
    else:
        changed = body
    assert changed != body and len(changed) == len(body)
    return changed


def replace_body(request: SignedRequest, body: bytes) -> SignedRequest:
    return SignedRequest(headers=request.headers, body=body, query=request.query, method=request.method)


# ---- accepted --------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_official_verifier_accepts_our_signature(name: str) -> None:
    profile = get_profile(name)
    secret = profile.generate_secret(11)
    _, request = signed(name, [secret])
    assert VERIFIERS[name](request, secret) is True


def test_github_legacy_sha1_header_is_correct() -> None:
    _, request = signed("github", ["It's a Secret to Everybody"])
    assert verify_github_legacy(request, "It's a Secret to Everybody") is True


def test_standard_webhooks_and_svix_verify_each_other() -> None:
    """The svix library reads ``svix-*`` and the standardwebhooks one ``webhook-*`` headers."""
    secret = get_profile("svix").generate_secret(4)
    _, standard_request = signed("standard-webhooks", [secret])
    svix.Webhook(secret).verify(standard_request.body, dict(standard_request.headers))


# ---- rejected: tampered body, wrong secret, stale timestamp ------------------------

@pytest.mark.parametrize("name", sorted(set(NAMES) - {"mercadopago"}))
def test_official_verifier_rejects_a_one_byte_body_change(name: str) -> None:
    secret = get_profile(name).generate_secret(12)
    _, request = signed(name, [secret])
    assert VERIFIERS[name](replace_body(request, tampered(request.body)), secret) is False


def test_mercadopago_does_not_sign_the_body_but_rejects_a_changed_data_id() -> None:
    """Mercado Pago signs the query's data.id, request id and ts only: the body is not covered."""
    secret = get_profile("mercadopago").generate_secret(12)
    _, request = signed("mercadopago", [secret])
    assert verify_mercadopago(replace_body(request, request.body.replace(b"payment", b"paymenx", 1)), secret) is True
    other_id = SignedRequest(request.headers, request.body, {**request.query, "data.id": "pi_3AbCdEg"})
    assert verify_mercadopago(other_id, secret) is False


@pytest.mark.parametrize("name", NAMES)
def test_official_verifier_rejects_a_wrong_secret(name: str) -> None:
    profile = get_profile(name)
    _, request = signed(name, [profile.generate_secret(13)])
    assert VERIFIERS[name](request, profile.generate_secret(14)) is False


STALE = [
    # (profile, skew in seconds outside the official verifier's window)
    ("stripe", -301),
    ("standard-webhooks", -301),
    ("standard-webhooks", 301),
    ("svix", -301),
    ("svix", 301),
    ("paddle", -6),
]


@pytest.mark.parametrize(("name", "skew_s"), STALE)
def test_official_verifier_rejects_a_timestamp_outside_the_tolerance(name: str, skew_s: int) -> None:
    profile = get_profile(name)
    secret = profile.generate_secret(15)
    _, request = signed(name, [secret], skew_s)
    assert VERIFIERS[name](request, secret) is False
    assert profile.tolerance.accepts(skew_s) is False


def test_paddle_python_sdk_refuses_a_future_timestamp_the_profile_leaves_to_its_dispute() -> None:
    """paddle-python-sdk's Verifier refuses ts more than 5 s ahead; the Node SDK checks only the
    past, so the profile's tolerance has no future side and its dispute names the 5 s window."""
    profile = get_profile("paddle")
    secret = profile.generate_secret(18)
    _, request = signed("paddle", [secret], 6)
    assert verify_paddle(request, secret) is False
    assert profile.tolerance.accepts(6) is True
    assert profile.future_dispute is not None and profile.future_dispute.window_s == 5.0


INSIDE = [("stripe", -298), ("standard-webhooks", -298), ("standard-webhooks", 298), ("svix", 298), ("paddle", -3), ("paddle", 3)]


@pytest.mark.parametrize(("name", "skew_s"), INSIDE)
def test_official_verifier_accepts_a_timestamp_inside_the_tolerance(name: str, skew_s: int) -> None:
    profile = get_profile(name)
    secret = profile.generate_secret(16)
    _, request = signed(name, [secret], skew_s)
    assert VERIFIERS[name](request, secret) is True
    assert profile.tolerance.accepts(skew_s) is True


def test_stripe_accepts_a_future_timestamp() -> None:
    """Documented quirk: stripe-python checks only the past side of the window."""
    profile = get_profile("stripe")
    secret = profile.generate_secret(17)
    _, request = signed("stripe", [secret], 3600)
    assert verify_stripe(request, secret) is True
    assert profile.tolerance.accepts(3600) is True


def test_mercadopago_tolerance_is_opt_in_and_in_seconds() -> None:
    profile = get_profile("mercadopago")
    secret = profile.generate_secret(18)
    _, stale = signed("mercadopago", [secret], -301)
    assert verify_mercadopago(stale, secret) is True  # no tolerance by default
    assert verify_mercadopago(stale, secret, tolerance_s=300) is False
    _, fresh = signed("mercadopago", [secret])
    assert verify_mercadopago(fresh, secret, tolerance_s=300) is True


def test_mercadopago_millisecond_timestamps_fail_the_sdk_tolerance() -> None:
    from hookproof.simulator.profiles import MercadoPagoProfile

    profile = MercadoPagoProfile(timestamp_unit="ms")
    secret = profile.generate_secret(19)
    request = profile.request(profile.envelope(sample_event(profile)), [secret], int(time.time()))
    assert verify_mercadopago(request, secret) is True
    assert verify_mercadopago(request, secret, tolerance_s=300) is False


def test_mercadopago_data_id_is_signed_lowercase() -> None:
    """A receiver passing the query's data.id as received (with capitals, like an order's
    ``ORD01…`` id) is rejected."""
    profile = get_profile("mercadopago")
    secret = profile.generate_secret(20)
    event = replace(sample_event(profile), object_id="ORD01JQ4S4KY8HWQ6NA5PXB65B3D3")
    request = profile.request(profile.envelope(event), [secret], int(time.time()))
    assert request.query["data.id"] == "ORD01JQ4S4KY8HWQ6NA5PXB65B3D3"
    assert verify_mercadopago(request, secret) is True
    with pytest.raises(InvalidWebhookSignatureError) as info:
        WebhookSignatureValidator.validate(request.headers["x-signature"], request.headers["x-request-id"], request.query["data.id"], secret)
    assert info.value.reason is SignatureFailureReason.SIGNATURE_MISMATCH


# ---- rotation ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ROTATING)
def test_rotation_verifies_with_either_secret(name: str) -> None:
    profile = get_profile(name)
    old, new, other = profile.generate_secret(21), profile.generate_secret(22), profile.generate_secret(23)
    _, request = signed(name, [old, new])
    assert VERIFIERS[name](request, old) is True
    assert VERIFIERS[name](request, new) is True
    assert VERIFIERS[name](request, other) is False


def test_paddle_rotation_with_a_list_of_secrets() -> None:
    profile = get_profile("paddle")
    old, new = profile.generate_secret(24), profile.generate_secret(25)
    _, request = signed("paddle", [old, new])
    assert Verifier().verify(PaddleRequest(request.headers, request.body), [Secret(profile.generate_secret(26)), Secret(new)]) is True


# ---- published test vectors --------------------------------------------------------

def test_stripe_vector() -> None:
    body = b'{"id":"evt_test_webhook","object":"event"}'
    expected = "t=1700000000,v1=d95c6b7477fbd7e9f90b1b0ef5f9c7ac25abca5382460e0d988c2b2a5b71b990"
    assert stripe_signature("whsec_test_secret", 1700000000, body) == expected.split("v1=")[1]
    envelope = Envelope(event_id="evt_test_webhook", type="x", body=body)
    assert get_profile("stripe").sign(envelope, ["whsec_test_secret"], 1700000000) == {"Stripe-Signature": expected}
    assert stripe.WebhookSignature.generate_signature_header(body.decode(), "whsec_test_secret", 1700000000) == expected



@pytest.mark.parametrize("secret", ["whsec_test_secret", "k" * 64, "k" * 65, "é" * 40, "whsec_" + "a" * 200])
def test_stripe_signature_is_hmac_sha256_for_any_secret_length(secret: str) -> None:
    # signed from the secret's keyed states (made once): RFC 2104's HMAC, keys past the block hashed
    for body in (b"", b'{"id":"evt_1"}', bytes(range(256)) * 9):
        want = hmac.digest(secret.encode("utf-8"), b"1700000000." + body, "sha256").hex()
        assert stripe_signature(secret, 1700000000, body) == want
        assert stripe_signature(secret, 1700000000, body) == want  # the second time from the kept states


STANDARD_VECTOR = ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, b'{"test": 2432232314}')
STANDARD_VECTOR_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


@pytest.mark.parametrize(("name", "prefix"), [("standard-webhooks", "webhook"), ("svix", "svix")])
def test_standard_webhooks_vector(name: str, prefix: str) -> None:
    secret, msg_id, ts, body = STANDARD_VECTOR
    assert standard_signature(secret, msg_id, ts, body) == STANDARD_VECTOR_SIGNATURE
    envelope = Envelope(event_id=msg_id, type="x", body=body, headers={f"{prefix}-id": msg_id})
    assert get_profile(name).sign(envelope, [secret], ts) == {
        f"{prefix}-timestamp": "1614265330",
        f"{prefix}-signature": STANDARD_VECTOR_SIGNATURE,
    }


def test_github_vector() -> None:
    expected = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert github_signature("It's a Secret to Everybody", b"Hello, World!") == expected
    headers = get_profile("github").sign(Envelope("d", "x", b"Hello, World!"), ["It's a Secret to Everybody"], 0)
    assert headers["X-Hub-Signature-256"] == expected


def test_shopify_vector() -> None:
    body = b'{"id":1,"topic":"orders/create"}'
    assert shopify_hmac("hush", body) == "rlYwtxSz64KhPygOLXbekmzsjq0OqrcotnlUzAe2yuQ="
    assert get_profile("shopify").sign(Envelope("e", "x", body), ["hush"], 0) == {
        "X-Shopify-Hmac-Sha256": "rlYwtxSz64KhPygOLXbekmzsjq0OqrcotnlUzAe2yuQ="
    }


def test_mercadopago_vector() -> None:
    digest = "633f91233312dd391ec75fa0bea539cfc2d6c4918873305b84a96cc1c58db71c"
    request_id = "2066ca19-c6f1-498a-be75-1923005edd06"
    assert mercadopago_signature("your_secret_key_here", "ord01jq4s4ky8hwq6na5pxb65b3d3", request_id, "1742505638683") == digest
    WebhookSignatureValidator.validate(f"ts=1742505638683,v1={digest}", request_id, "ord01jq4s4ky8hwq6na5pxb65b3d3", "your_secret_key_here")


def test_mercadopago_profile_signs_the_lowercased_query_id() -> None:
    """With the vector's secret and id, our header matches an independent manifest HMAC."""
    profile = get_profile("mercadopago")
    envelope = Envelope("1", "payment.created", b"{}", query={"data.id": "ORD01JQ4S4KY8HWQ6NA5PXB65B3D3", "type": "payment"})
    headers = profile.sign(envelope, ["your_secret_key_here"], 1742505638)
    manifest = f"id:ord01jq4s4ky8hwq6na5pxb65b3d3;request-id:{headers['x-request-id']};ts:1742505638;"
    expected = hmac.new(b"your_secret_key_here", manifest.encode(), hashlib.sha256).hexdigest()
    assert headers["x-signature"] == f"ts=1742505638,v1={expected}"


PADDLE_SECRET = "pdl_ntf_01hbpjmytsa32fhr36nqgc3kgb_WvRO0eL4Bj9rgYYIBZY6wZhG4EHy9jzh"
PADDLE_H1 = "d96299976a6eb066f484d7fde011ac56fc32b38fc9940bc419d6e537fdc6ef02"


def test_paddle_vector() -> None:
    assert paddle_signature(PADDLE_SECRET, 1696195954, b"hello-world") == PADDLE_H1
    headers = get_profile("paddle").sign(Envelope("e", "x", b"hello-world"), [PADDLE_SECRET], 1696195954)
    assert headers == {"Paddle-Signature": f"ts=1696195954;h1={PADDLE_H1}"}
    assert PaddleSignature().verify(headers["Paddle-Signature"], "hello-world", Secret(PADDLE_SECRET)) is True


def _naive_stripe_verify(body: bytes, header: str, secret: str) -> bool:
    """A hand-rolled check seen in the wild: everything after ``v1=`` taken as the signature
    (right on a header of ``t`` and one ``v1``; wrong on Stripe's test-mode header, whose fake
    ``v0`` follows)."""
    timestamp = header.split("t=", 1)[1].split(",", 1)[0]
    given = header.split("v1=", 1)[1]
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(given, expected)


@pytest.mark.parametrize("livemode", [False, True])
def test_a_test_mode_stripe_event_carries_stripe_s_fake_v0_which_stripe_python_ignores(livemode: bool) -> None:
    """docs.stripe.com/webhooks/signature: "To aid with testing, Stripe sends an extra signature
    with a fake v0 scheme, for test mode events". stripe-python's `Webhook.construct_event` keeps
    the ``v1`` signatures and ignores it; a verifier taking everything after ``v1=`` breaks on it,
    as it would on Stripe in test mode. Live-mode events carry none."""
    from hookproof.simulator.world import World

    profile = get_profile("stripe")
    event = World(5, livemode=livemode).lifecycle()[1]
    now = int(time.time())
    request = profile.request(profile.envelope(event), ["whsec_v0_case"], now)
    header = request.headers["Stripe-Signature"]
    schemes = [part.split("=", 1)[0] for part in header.split(",")]
    assert schemes == (["t", "v1"] if livemode else ["t", "v1", "v0"])
    assert stripe.Webhook.construct_event(request.body, header, "whsec_v0_case").id == event.id
    assert _naive_stripe_verify(request.body, header, "whsec_v0_case") is livemode
    v0 = header.rsplit("v0=", 1)[1] if not livemode else None
    assert v0 is None or (len(v0) == 64 and v0 != header.split("v1=", 1)[1].split(",", 1)[0])
