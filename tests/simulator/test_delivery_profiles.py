"""Every profile end to end: a uvicorn receiver on 127.0.0.1 verifies each delivery with the
provider's official SDK (or the documented algorithm where none exists on PyPI) and counts
deliveries per dedupe id; copies, bursts, dropped answers and timeouts give exact counts,
and `hookproof send` succeeds for every profile."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import itertools
import json
import subprocess
import sys
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import pytest
import standardwebhooks
import stripe
import svix
from fastapi import FastAPI, Request, Response
from mercadopago.webhook import WebhookSignatureValidator
from paddle_billing.Notifications import Secret, Verifier

from hookproof.simulator.delivery import Completion, Dispatcher, History, Outcome, Target
from hookproof.simulator.faults import FaultPlan, schedule
from hookproof.simulator.profiles import PROFILES, get_profile
from hookproof.simulator.serving import serve_app
from hookproof.simulator.world import emit_events, new_world


@dataclass
class Incoming:
    headers: Mapping[str, str]  # case-insensitive (Starlette)
    body: bytes
    query: Mapping[str, str]


def _stripe(r: Incoming, secret: str) -> str:
    return stripe.Webhook.construct_event(r.body, r.headers["stripe-signature"], secret)["id"]


def _standard(r: Incoming, secret: str) -> str:
    standardwebhooks.Webhook(secret).verify(r.body, dict(r.headers))
    return r.headers["webhook-id"]


def _svix(r: Incoming, secret: str) -> str:
    svix.Webhook(secret).verify(r.body, dict(r.headers))
    return r.headers["svix-id"]


def _mercadopago(r: Incoming, secret: str) -> str:
    WebhookSignatureValidator.validate(r.headers["x-signature"], r.headers["x-request-id"],
                                       r.query["data.id"].lower(), secret)
    return str(json.loads(r.body)["id"])


@dataclass
class _PaddleRequest:
    headers: Any
    body: bytes


def _paddle(r: Incoming, secret: str) -> str:
    if not Verifier().verify(_PaddleRequest(r.headers, r.body), Secret(secret)):
        raise ValueError("paddle signature rejected")
    return json.loads(r.body)["event_id"]


def _hmac_check(expected: str, got: str) -> None:
    if not hmac.compare_digest(expected, got):
        raise ValueError("signature mismatch")


def _github(r: Incoming, secret: str) -> str:  # docs: validating-webhook-deliveries
    _hmac_check("sha256=" + hmac.new(secret.encode(), r.body, hashlib.sha256).hexdigest(),
                r.headers["x-hub-signature-256"])
    return r.headers["x-github-delivery"]


def _shopify(r: Incoming, secret: str) -> str:  # shopify.dev: base64 HMAC-SHA256 of the raw body
    _hmac_check(base64.b64encode(hmac.new(secret.encode(), r.body, hashlib.sha256).digest()).decode(),
                r.headers["x-shopify-hmac-sha256"])
    # the Event-Id is shared by one merchant action's topics (shopify.dev, "Webhooks delivery structure")
    return f"{r.headers['x-shopify-topic']}:{r.headers['x-shopify-event-id']}"


def _generic(r: Incoming, secret: str) -> str:  # the default generic-hmac settings: hex HMAC-SHA256 of the body
    _hmac_check(hmac.new(secret.encode(), r.body, hashlib.sha256).hexdigest(), r.headers["x-signature"])
    return r.headers["x-webhook-id"]


VERIFY: dict[str, Callable[[Incoming, str], str]] = {
    "stripe": _stripe, "standard-webhooks": _standard, "svix": _svix, "mercadopago": _mercadopago,
    "paddle": _paddle, "github": _github, "shopify": _shopify, "generic-hmac": _generic,
}
_SEEDS = itertools.count(1000)  # a fresh world (fresh ids) for every delivery run
SECRETS = {name: get_profile(name).generate_secret(77) for name in PROFILES}


class VerifyingReceiver:
    """POST /webhooks/{profile}: verify, count per dedupe id; optionally slow on first sight."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()
        self.rejected: Counter[str] = Counter()
        self.slow_first_s = 0.0
        self.lock = threading.Lock()
        self.app = FastAPI()
        self.app.post("/webhooks/{profile}")(self.handle)

    async def handle(self, profile: str, request: Request) -> Response:
        incoming = Incoming(request.headers, await request.body(), dict(request.query_params))
        try:
            dedupe_id = VERIFY[profile](incoming, SECRETS[profile])
        except Exception:  # any verifier's refusal
            with self.lock:
                self.rejected[profile] += 1
            return Response(status_code=400)
        with self.lock:
            self.counts[(profile, dedupe_id)] += 1
            first = self.counts[(profile, dedupe_id)] == 1
        if first and self.slow_first_s:
            await asyncio.sleep(self.slow_first_s)
        return Response(status_code=200)


def test_every_shipped_profile_has_a_verifier_here() -> None:
    assert set(VERIFY) == set(PROFILES)


@pytest.fixture(scope="module")
def receiver():
    r = VerifyingReceiver()
    with serve_app(r.app) as served:
        r.base = served.url  # type: ignore[attr-defined]
        yield r


def deliver(receiver: VerifyingReceiver, name: str, plan: FaultPlan, n: int = 2) -> tuple[list[str], History]:
    profile = get_profile(name)
    events = emit_events(new_world(profile.world, next(_SEEDS)), profile.default_event, n)
    history = History()

    async def go() -> None:
        async with Dispatcher(Target(url=f"{receiver.base}/webhooks/{name}"), profile, [SECRETS[name]], history,
                              max_attempts=4) as d:
            await d.run(schedule(events, plan))

    asyncio.run(go())
    return sorted({a.event_id for a in history}), history


@pytest.mark.parametrize("name", PROFILES)
def test_copies_and_bursts_verify_and_count_exactly(receiver: VerifyingReceiver, name: str) -> None:
    ids, history = deliver(receiver, name, FaultPlan(copies=3))
    assert [receiver.counts[(name, i)] for i in ids] == [3, 3]
    ids, history = deliver(receiver, name, FaultPlan(copies=4, concurrency=4), n=1)
    assert receiver.counts[(name, ids[0])] == 4
    assert all(a.completion is Completion.OK for a in history) and receiver.rejected[name] == 0


@pytest.mark.parametrize("name", PROFILES)
def test_dropped_answers_are_retried_with_fresh_signatures(receiver: VerifyingReceiver, name: str) -> None:
    ids, history = deliver(receiver, name, FaultPlan(drop_responses=2), n=1)
    assert receiver.counts[(name, ids[0])] == 3
    assert [a.outcome for a in history] == [Outcome.DROPPED, Outcome.DROPPED, Outcome.ACKED]


@pytest.mark.parametrize("name", ["stripe", "paddle", "github", "mercadopago"])
def test_a_sender_timeout_is_unknown_then_retried(receiver: VerifyingReceiver, name: str) -> None:
    receiver.slow_first_s = 0.5
    try:
        ids, history = deliver(receiver, name, FaultPlan(sender_timeout_s=0.1, timeouts=1), n=1)
    finally:
        receiver.slow_first_s = 0.0
    assert [(a.outcome, a.completion) for a in history] == [(Outcome.TIMEOUT, Completion.UNKNOWN),
                                                            (Outcome.ACKED, Completion.OK)]
    assert receiver.counts[(name, ids[0])] == 2


@pytest.mark.parametrize("name", PROFILES)
def test_hookproof_send_succeeds_for_every_profile(receiver: VerifyingReceiver, name: str) -> None:
    before = sum(n for (p, _), n in receiver.counts.items() if p == name)
    run = subprocess.run([sys.executable, "-m", "hookproof", "send", "--profile", name, "--url",
                          f"{receiver.base}/webhooks/{name}", "--secret", SECRETS[name], "--copies", "2", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert [a["status"] for a in json.loads(run.stdout)] == [200, 200]
    assert sum(n for (p, _), n in receiver.counts.items() if p == name) == before + 2
    assert SECRETS[name] not in run.stdout + run.stderr
