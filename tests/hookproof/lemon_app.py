"""A Lemon Squeezy-like receiver for the ``[target.signing]`` tests (an in-process ASGI app).

Lemon Squeezy signs ``X-Signature`` (lowercase hex HMAC-SHA256 of the raw body), names the
event in ``X-Event-Name``, sends no event-id header and retries a failed delivery. This
receiver dispatches on ``X-Event-Name`` (400 without it), answers the first delivery of each
body 503 (a transient failure: only a retry gets it applied) and applies each order once,
deduping on the body's ``data.id``. With ``DEDUPE_ON_HEADER`` it dedupes on an
``X-Webhook-Id`` header instead, as a twin written against hookproof's default headers did:
against Lemon Squeezy it drops every event after the first.
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from tests.support import answer_status, hmac_signed_request

SECRET = "lemon-s3cret"
LOCK = threading.Lock()
STATE: dict[str, Any] = {"effects": [], "seen_bodies": set(), "seen_ids": set(), "headers": [],
                         "fail_first": True, "dedupe_on_header": False, "test_mode": None}


def reset(*, fail_first: bool = True, dedupe_on_header: bool = False, test_mode: bool | None = None) -> None:
    """Forget every delivery (each test starts from none). `test_mode`: the receiver's own mode,
    and an event whose ``meta.test_mode`` is another is acknowledged and not applied (None: every
    event is applied, whatever its mode)."""
    with LOCK:
        STATE.update(effects=[], seen_bodies=set(), seen_ids=set(), headers=[], fail_first=fail_first,
                     dedupe_on_header=dedupe_on_header, test_mode=test_mode)


def observe() -> dict[str, list[str]]:
    """The python observer: the business keys applied, in order."""
    with LOCK:
        return {"effects": list(STATE["effects"]), "states": []}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body, headers, signed = await hmac_signed_request(scope, receive, SECRET)
    with LOCK:
        STATE["headers"].append(headers)  # every request, answered or refused
    if not signed:
        return await answer_status(send, 401)
    event_name = headers.get("x-event-name")
    if event_name is None:
        return await answer_status(send, 400)
    try:
        data = json.loads(body)
    except ValueError:
        return await answer_status(send, 400)
    with LOCK:
        digest = hashlib.sha256(body).hexdigest()
        if STATE["fail_first"] and digest not in STATE["seen_bodies"]:
            STATE["seen_bodies"].add(digest)
            failed = True
        else:
            failed = False
        other_mode = STATE["test_mode"] is not None and data.get("meta", {}).get("test_mode") is not STATE["test_mode"]
        if not failed and event_name == "order_created" and not other_mode:
            dedupe = headers.get("x-webhook-id") if STATE["dedupe_on_header"] else data["data"]["id"]
            if dedupe not in STATE["seen_ids"]:
                STATE["seen_ids"].add(dedupe)
                STATE["effects"].append(f"order:{data['data']['id']}")
    return await answer_status(send, 503 if failed else 200)
