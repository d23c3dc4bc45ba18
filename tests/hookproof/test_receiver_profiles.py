"""The reference receivers' Stripe verifier answers as ``stripe.Webhook.construct_event`` does.

`StripeVerifier.verify` checks the signature with the SDK's ``WebhookSignature.verify_header``
and parses the body itself, building the SDK's event object only for a body the SDK would
refuse while building it. The table: each body and header, and the verifier's answer (the
event, or the exception and its message) against the verifier as it was, ``construct_event``
first and its event object dropped. The generic-hmac verifier reads hookproof's own sender
at its default settings.
"""

from __future__ import annotations

import json
import time
from typing import Callable

import pytest
import stripe

from hookproof.receivers.profiles import GenericHmacVerifier, SignatureError, StripeVerifier, WebhookEvent
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.profiles.stripe import StripeProfile
from hookproof.simulator.world.world import World

SECRET = "whsec_hookproof_verifier_test"
OTHER = "whsec_hookproof_verifier_other"


def _header(body: bytes, secret: str = SECRET, at: int | None = None) -> str:
    return stripe.WebhookSignature.generate_signature_header(body.decode(), secret, timestamp=at or int(time.time()))


def _genuine() -> bytes:
    world = World(7)
    world.lifecycle()
    return StripeProfile().envelope(world.events[-1]).body


GENUINE = _genuine()
THIN = b'{"object": "v2.core.event", "id": "evt_1"}'
NOT_AN_EVENT = b'{"id": "evt_1"}'

#: (name, body, the header: made when the test runs, as the SDK's tolerance is read against
#: the clock then; a header made at collection would be stale in a long suite)
CASES: list[tuple[str, bytes, Callable[[], str]]] = [
    ("genuine", GENUINE, lambda: _header(GENUINE)),
    ("future timestamp", GENUINE, lambda: _header(GENUINE, at=int(time.time()) + 3600)),
    ("stale timestamp", GENUINE, lambda: _header(GENUINE, at=int(time.time()) - 3600)),
    ("wrong secret", GENUINE, lambda: _header(GENUINE, OTHER)),
    ("no header", GENUINE, lambda: ""),
    ("garbled header", GENUINE, lambda: "t=abc,v1=00"),
    ("not JSON", b"not json", lambda: _header(b"not json")),
    ("thin event", THIN, lambda: _header(THIN)),
    ("an object, not an event", NOT_AN_EVENT, lambda: _header(NOT_AN_EVENT)),
    ("a JSON list", b"[1, 2]", lambda: _header(b"[1, 2]")),
]


def _sdk(body: bytes, header: str) -> tuple[str, str]:
    """What the SDK says: ("ok", event id) or (exception class, message)."""
    try:
        return "ok", stripe.Webhook.construct_event(body, header, SECRET)["id"]
    except Exception as exc:  # noqa: BLE001 - the verdict is the exception
        return type(exc).__name__, str(exc)


def _with_the_sdks_object(verifier: StripeVerifier, body: bytes, headers: dict[str, str]) -> WebhookEvent:
    """The verifier as it was: ``construct_event`` (its event object built and dropped), then `decode`."""
    try:
        stripe.Webhook.construct_event(body, headers.get("stripe-signature", ""), SECRET)
    except stripe.SignatureVerificationError as exc:
        raise SignatureError(str(exc)) from exc
    except ValueError as exc:
        raise SignatureError(f"unreadable body: {exc}") from exc
    return verifier.decode(body, headers)


def _verdict(call: Callable[[], WebhookEvent]) -> tuple[str, object]:
    try:
        event = call()
    except Exception as exc:  # noqa: BLE001 - the verdict is the exception
        return type(exc).__name__, str(exc)
    return "event", (event.id, event.type, event.created, dict(event.object), event.livemode, event.raw)


@pytest.mark.parametrize(("name", "body", "header"), CASES, ids=[c[0] for c in CASES])
def test_verify_answers_as_with_the_sdks_object(name: str, body: bytes, header: Callable[[], str]) -> None:
    verifier = StripeVerifier((SECRET,))
    headers = {"stripe-signature": header()}
    assert _verdict(lambda: verifier.verify(body, headers)) == _verdict(
        lambda: _with_the_sdks_object(verifier, body, headers))


def test_the_table_covers_each_verdict() -> None:
    """The SDK accepts, refuses the signature, cannot parse, refuses a thin event, and
    fails on a list; the verifier's own decoding refuses an object that is no event."""
    assert {_sdk(body, header())[0] for _, body, header in CASES} == {
        "ok", "SignatureVerificationError", "JSONDecodeError", "ValueError", "AttributeError"}
    verifier = StripeVerifier((SECRET,))
    verdicts = [_verdict(lambda b=body, h=header(): verifier.verify(b, {"stripe-signature": h}))[0]
                for _, body, header in CASES]
    assert verdicts == ["event", "event", "SignatureError", "SignatureError", "SignatureError", "SignatureError",
                        "SignatureError", "SignatureError", "SignatureError", "AttributeError"]


def test_a_second_secret_verifies() -> None:
    event = StripeVerifier((OTHER, SECRET)).verify(GENUINE, {"stripe-signature": _header(GENUINE)})
    assert event.id == json.loads(GENUINE)["id"]


def test_the_generic_hmac_verifier_checks_the_default_scheme_and_decodes_the_envelope() -> None:
    # hookproof's generic-hmac sender at its default settings, as the reference receivers read it
    profile = get_profile("generic-hmac")
    world = World(7)
    world.lifecycle()
    event = world.events[-1]
    request = profile.request(profile.envelope(event), [SECRET], int(time.time()))
    headers = {k.lower(): v for k, v in request.headers.items()}
    got = GenericHmacVerifier([OTHER, SECRET]).verify(request.body, headers)
    assert (got.id, got.type, got.created, dict(got.object)) == (event.id, event.type, event.created, dict(event.object))
    assert got.raw == request.body
    with pytest.raises(SignatureError):
        GenericHmacVerifier([OTHER]).verify(request.body, headers)
    with pytest.raises(SignatureError):
        GenericHmacVerifier([SECRET]).verify(request.body + b" ", headers)
    with pytest.raises(SignatureError):
        GenericHmacVerifier([SECRET]).verify(request.body, {k: v for k, v in headers.items() if k != "x-signature"})
