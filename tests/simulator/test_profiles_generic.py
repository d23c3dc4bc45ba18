"""The generic HMAC profile: settings validation and signatures checked independently."""

from __future__ import annotations

import base64
import hmac
import json
from typing import Any

import pytest

from hookproof.simulator.errors import ProfileError
from hookproof.simulator.profiles import Envelope, GenericHmacProfile, GenericHmacSettings, get_profile
from tests.simulator.test_profiles import make_event

SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
SLACK_BODY = (
    "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V"
    "&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text="
    "&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN"
    "&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
).encode()


def test_defaults() -> None:
    profile = get_profile("generic-hmac")
    assert isinstance(profile, GenericHmacProfile)
    assert profile.settings == GenericHmacSettings()
    assert profile.signature_headers == ("X-Signature",)
    assert (profile.sender_timeout_s, profile.retry_schedule_s) == (10.0, ())
    assert (profile.tolerance.past_s, profile.tolerance.future_s, profile.multiple_signatures) == (None, None, False)


def test_slack_vector_through_generic_settings() -> None:
    """Slack's published vector: ``v0=`` + hex HMAC-SHA256 of ``v0:{ts}:{body}``."""
    profile = get_profile(
        "generic-hmac",
        settings={
            "signature_header": "X-Slack-Signature",
            "signed_content": "v0:{timestamp}:{body}",
            "prefix": "v0=",
            "id_header": None,
            "timestamp_header": "X-Slack-Request-Timestamp",
            "tolerance_past_s": 300,
            "tolerance_future_s": 300,
            "timeout_s": 3,
            "retry_schedule_s": [0, 60, 300],
        },
    )
    headers = profile.sign(Envelope("e", "x", SLACK_BODY), [SLACK_SECRET], 1531420618)
    assert headers == {
        "X-Slack-Signature": "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503",
        "X-Slack-Request-Timestamp": "1531420618",
    }
    assert profile.signature_headers == ("X-Slack-Signature",)
    assert (profile.tolerance.past_s, profile.tolerance.future_s) == (300.0, 300.0)
    assert (profile.sender_timeout_s, profile.retry_schedule_s) == (3.0, (0.0, 60.0, 300.0))


def test_github_vector_through_generic_settings() -> None:
    settings = GenericHmacSettings(signature_header="X-Hub-Signature-256", prefix="sha256=")
    headers = GenericHmacProfile(settings).sign(Envelope("e", "x", b"Hello, World!"), ["It's a Secret to Everybody"], 0)
    assert headers == {"X-Hub-Signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"}


CASES: list[dict[str, Any]] = [
    {"algorithm": "sha1", "encoding": "hex"},
    {"algorithm": "sha256", "encoding": "base64", "prefix": "v1,"},
    {"algorithm": "sha512", "encoding": "hex", "signed_content": "{id}.{timestamp}.{body}", "timestamp_header": "X-Ts"},
    {"algorithm": "sha256", "encoding": "hex", "signed_content": "{{{timestamp}}}|{body}", "timestamp_header": "X-Ts"},
]


def independent(case: dict[str, Any], secret: str, event_id: str, ts: int, body: bytes) -> str:
    """The signature computed from the settings' meaning, without the profile's code."""
    content = case.get("signed_content", "{body}")
    signed = {
        "{body}": body,
        "{id}.{timestamp}.{body}": f"{event_id}.{ts}.".encode() + body,
        "{{{timestamp}}}|{body}": f"{{{ts}}}|".encode() + body,
    }[content]
    digest = hmac.new(secret.encode(), signed, case["algorithm"]).digest()
    encoded = digest.hex() if case["encoding"] == "hex" else base64.b64encode(digest).decode()
    prefix: str = case.get("prefix", "")
    return prefix + encoded


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_signature_matches_an_independent_computation(case: dict[str, Any]) -> None:
    profile = get_profile("generic-hmac", settings=case)
    event = make_event()
    envelope = profile.envelope(event)
    headers = profile.sign(envelope, ["s3cret"], 1_700_000_000)
    assert headers["X-Signature"] == independent(case, "s3cret", "evt_1Test", 1_700_000_000, envelope.body)
    tampered = envelope.body.replace(b"1999", b"1998", 1)
    assert headers["X-Signature"] != independent(case, "s3cret", "evt_1Test", 1_700_000_000, tampered)
    assert headers["X-Signature"] != independent(case, "other", "evt_1Test", 1_700_000_000, envelope.body)
    if "timestamp_header" in case:
        assert headers["X-Ts"] == "1700000000"
        assert headers["X-Signature"] != independent(case, "s3cret", "evt_1Test", 1_700_000_001, envelope.body)


def test_envelope() -> None:
    profile = get_profile("generic-hmac")
    envelope = profile.envelope(make_event(previous={"status": "processing"}, livemode=True))
    assert envelope.event_id == "evt_1Test"
    assert envelope.headers == {"Content-Type": "application/json", "X-Webhook-Id": "evt_1Test"}
    body = json.loads(envelope.body)
    assert (body["id"], body["type"], body["created"], body["livemode"], body["account"]) == (
        "evt_1Test", "payment_intent.succeeded", 1700000000, True, "acct_hookproof")
    assert body["data"]["previous_attributes"] == {"status": "processing"}


def test_a_type_header_carries_the_type_and_id_header_false_sends_no_id() -> None:
    """Lemon Squeezy's deliveries: the event's name in ``X-Event-Name``, no event-id header
    (``False``, how a config file says none, is None)."""
    profile = get_profile("generic-hmac", settings={"type_header": "X-Event-Name", "id_header": False})
    envelope = profile.envelope(make_event())
    assert envelope.headers == {"Content-Type": "application/json", "X-Event-Name": "payment_intent.succeeded"}
    assert profile.settings.id_header is None
    assert set(profile.sign(envelope, ["s3cret"], 1)) == {"X-Signature"}
    assert get_profile("generic-hmac", settings={"timestamp_header": False}).settings.timestamp_header is None


def test_rotation_when_a_separator_is_set() -> None:
    plain = get_profile("generic-hmac")
    rotating = get_profile("generic-hmac", settings={"rotation_separator": " "})
    envelope = plain.envelope(make_event())
    one = plain.sign(envelope, ["a", "b"], 1)["X-Signature"]
    both = rotating.sign(envelope, ["a", "b"], 1)["X-Signature"]
    assert one == plain.sign(envelope, ["a"], 1)["X-Signature"]
    assert both == one + " " + plain.sign(envelope, ["b"], 1)["X-Signature"]
    assert rotating.multiple_signatures is True


BAD: list[tuple[dict[str, Any], str]] = [
    ({"algorithm": "md5"}, "algorithm"),
    ({"encoding": "base32"}, "encoding"),
    ({"signed_content": "{timestamp}"}, "signed_content"),
    ({"signed_content": "{payload}"}, "signed_content"),
    ({"signed_content": "{body!r}"}, "signed_content"),
    ({"signed_content": "{body"}, "signed_content"),
    ({"signature_header": "X Signature"}, "signature_header"),
    ({"timestamp_header": "X-Ts\r\n"}, "timestamp_header"),
    ({"prefix": "sha256=\n"}, "prefix"),
    ({"signed_content": "{id}.{body}", "id_header": None}, "id_header"),
    ({"signed_content": "{timestamp}.{body}"}, "timestamp_header"),
    ({"tolerance_past_s": 300}, "tolerance_past_s"),
    ({"tolerance_future_s": -1, "signed_content": "{timestamp}.{body}", "timestamp_header": "X-Ts"}, "tolerance_future_s"),
    ({"timeout_s": 0}, "timeout_s"),
    ({"retry_schedule_s": [5, -1]}, "retry_schedule_s"),
    ({"colour": "blue"}, "colour"),
    ({"type_header": "X Event"}, "type_header"),
    ({"type_header": True}, "type_header"),
    ({"signed_content": "{id}.{body}", "id_header": False}, "id_header"),
    ({"type_header": "x-signature"}, "type_header"),  # header names are case-insensitive
    ({"id_header": "Content-Type"}, "id_header"),
    ({"timestamp_header": "X-Webhook-Id"}, "timestamp_header"),
]


@pytest.mark.parametrize(("settings", "field"), BAD, ids=[f for _, f in BAD])
def test_bad_setting_raises_profile_error_naming_the_field(settings: dict[str, Any], field: str) -> None:
    with pytest.raises(ProfileError) as info:
        get_profile("generic-hmac", settings=settings)
    assert info.value.field == field
