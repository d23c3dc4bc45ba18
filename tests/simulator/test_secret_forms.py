"""Every spelling of a secret a receiver plausibly prints is masked, for every provider's secrets.

The printed forms are made here the way receivers make them (Python's ``bytes.hex``,
``repr``, ``base64``, Node's ``Buffer`` inspection, Go's ``%v``, Java's signed bytes), from the
key bytes the provider's own verifier derives: the official ``standardwebhooks`` package's
``Webhook(secret)._whsecret`` for a Standard Webhooks/Svix ``whsec_`` secret, the secret's
UTF-8 bytes for Stripe, GitHub, Shopify, Paddle, Mercado Pago and Slack
(docs/providers.md). A receiver answering with them never gets them into the history.
"""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from standardwebhooks.webhooks import Webhook

from hookproof.simulator.delivery import Dispatcher, History, Target
from hookproof.simulator.faults import FaultPlan, schedule
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.secret_forms import Masker, mask_secrets, masker_for, secret_forms
from hookproof.simulator.world import emit_events, new_world

#: The Standard Webhooks spec's test vector secret (docs/providers.md), and one per provider's format.
STANDARD = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SECRETS = {
    "standard-webhooks": STANDARD,
    "stripe": "whsec_Zq7W3kP0sLr9Xy2Vb8Nc4Dm6Hj1Tf5Ga",
    "paddle": "pdl_ntfset_01gkpjp8bkm3tm53kdgkx6sms7_6h3qd3uFSi9YCD3OLYAShQI90XTI3vEQ",
    "shopify": "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",
    "github": "It's a Secret to Everybody",
    "slack": "8f742231b10e8888abcd99yyyzzz85a5",
    "mercadopago": "d3b07384d113edec49eaa6238ad5ff00d3b07384",
}


def printed(raw: bytes) -> list[str]:
    """How programs print key bytes `raw`."""
    signed = [b - 256 if b > 127 else b for b in raw]
    return [
        raw.hex(), raw.hex().upper(),  # Python bytes.hex, Go %x / %X, Node toString("hex")
        raw.hex(" "), raw.hex(":").upper(),  # Node's <Buffer 31 f2 …>, colon-separated dumps
        f"<Buffer {raw.hex(' ')}>",
        base64.b64encode(raw).decode(), base64.b64encode(raw).decode().rstrip("="),
        base64.urlsafe_b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode().rstrip("="),
        repr(raw), repr(bytearray(raw)),  # print(key), print(bytearray(key))
        json.dumps(repr(raw)),  # a JSON log line holding the repr (backslashes doubled)
        str(list(raw)), str(list(raw)).replace(",", ""),  # Python list / JS Array.from, Go's %v
        str(list(raw)).replace(" ", ""),  # JSON.stringify(Buffer)'s data
        str(signed),  # Java's Arrays.toString(byte[])
    ]


def spellings(secret: str) -> list[str]:
    """Every form a receiver could print `secret` in: the secret and its key part after the
    provider's prefix, as text and as UTF-8 bytes printed; a Standard Webhooks key's bytes printed."""
    out = []
    for text in {secret, secret.removeprefix("whsec_").removeprefix("pdl_ntfset_").removeprefix("shpss_")}:
        out += [text, *printed(text.encode())]
    if secret == STANDARD:
        out += printed(Webhook(secret)._whsecret)  # the key the official verifier signs with
    return out


@pytest.mark.parametrize("provider", sorted(SECRETS))
def test_every_printed_form_of_each_provider_s_secret_is_masked(provider: str) -> None:
    secret = SECRETS[provider]
    for form in spellings(secret):
        line = f"starting: key={form} ok"
        masked = mask_secrets(line, [secret])
        assert masked.startswith("starting: key=") and masked.endswith(" ok"), (form, masked)
        leftover = masked.removeprefix("starting: key=").removesuffix(" ok")
        assert "***" in leftover and not any(len(f) >= 8 and f in leftover for f in spellings(secret)), (form, masked)


def test_the_trial_receiver_s_debug_line_is_masked_whole() -> None:
    """A Standard Webhooks receiver printing its secret at start: literal, decoded key as hex
    and base64, the literal's hex and base64 (each value masked, every word around kept)."""
    raw = Webhook(STANDARD)._whsecret
    line = (f"secret={STANDARD} raw_hex={raw.hex()} raw_b64={base64.b64encode(raw).decode()} "
            f"literal_hex={STANDARD.encode().hex()} literal_b64={base64.b64encode(STANDARD.encode()).decode()} "
            f"repr={raw!r}")
    assert mask_secrets(line, [STANDARD]) == ("secret=*** raw_hex=*** raw_b64=*** literal_hex=*** literal_b64=*** "
                                              "repr=b'***'")


def test_ordinary_text_and_short_secrets_are_left_alone() -> None:
    text = "GET /webhooks 200 OK in 3.2 ms; evt_1 payment_intent.succeeded [1, 2, 3]"
    assert mask_secrets(text, list(SECRETS.values())) == text
    assert mask_secrets("abc abc", ["abc"]) == "abc abc"  # too short to mask without masking words
    assert mask_secrets("x", [None, ""]) == "x" and not Masker([None, ""])
    assert secret_forms("abc") == set()


def test_a_masker_never_shows_its_secrets() -> None:
    masker = Masker([STANDARD])
    assert STANDARD not in repr(masker) and "MfKQ" not in repr(masker)


def test_a_receiver_answering_with_its_secret_never_gets_it_into_the_history() -> None:
    """A 500 whose body dumps the key (a debug error page) and a 400 quoting it: the history's
    answer excerpts hold ``***`` instead, in every form."""
    raw = Webhook(STANDARD)._whsecret
    body = f"debug: {STANDARD} {raw.hex()} {raw!r} {base64.b64encode(STANDARD.encode()).decode()}".encode()
    answers = iter([500, 400])

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": next(answers, 200), "headers": []})
        await send({"type": "http.response.body", "body": body})

    history = History()
    events = emit_events(new_world("billing", 3), "payment_intent.succeeded")[:1]

    async def go() -> None:
        async with Dispatcher(Target(app=app), get_profile("standard-webhooks"), [STANDARD], history,
                              max_attempts=3, time_scale=0.0) as d:
            await d.run(schedule(events, FaultPlan()))

    asyncio.run(go())
    excerpts = [a.response_excerpt for a in history]
    assert [a.status for a in history] == [500, 400, 200]
    assert excerpts == ["debug: *** *** b'***' ***"] * 3


def test_masker_for_shares_one_masker_per_tuple_of_secrets() -> None:
    shared = masker_for(["whsec_shared_secret_one"])
    assert masker_for(("whsec_shared_secret_one",)) is shared
    assert masker_for(["whsec_shared_secret_two"]) is not shared
    text = "key whsec_shared_secret_one and shared_secret_one"
    assert shared(text) == Masker(["whsec_shared_secret_one"])(text) == "key *** and ***"
