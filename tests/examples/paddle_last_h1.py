"""paddle_last_h1: a test twin of `examples.receivers.paddle_billing` that verifies
``Paddle-Signature`` as @paddle/paddle-node-sdk 3.x's ``WebhooksValidator`` does: the header
split on ``;`` into keys, each ``h1`` overwriting the one before, so only the last ``h1`` is
compared (HMAC-SHA256 of ``{ts}:{body}``, lowercase hex), and a timestamp more than 5 s in the
past refused.

During a secret rotation whose header lists the receiver's own signature first, it refuses
the delivery (an advisory of ``secret-rotation``); it accepts everything else
`paddle_billing` accepts. Run as ``python -m tests.examples.paddle_last_h1`` from the
repository root.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Any

from examples.receivers import paddle_billing

#: Seconds a timestamp may lie in the past (the Node SDK's ``MAX_VALID_TIME_DIFFERENCE``).
MAX_VALID_TIME_DIFFERENCE_S = 5


class LastH1Verifier:
    """``Verifier().verify(request, secret)`` as the Node SDK's validator decides it."""

    def verify(self, request: Any, secret: Any) -> bool:
        header = request.headers.get("Paddle-Signature") or ""
        fields: dict[str, str] = {}
        for part in header.split(";"):
            key, _, value = part.partition("=")
            if value and key in ("ts", "h1"):
                fields[key] = value  # a later h1 overwrites an earlier one
        if "ts" not in fields or "h1" not in fields:
            raise ValueError("[Paddle] Invalid webhook signature")
        ts = int(fields["ts"])
        if time.time() > ts + MAX_VALID_TIME_DIFFERENCE_S:
            return False
        body = request.body if isinstance(request.body, bytes) else str(request.body).encode()
        computed = hmac.new(secret.secret_key.encode(), f"{ts}:".encode() + body, hashlib.sha256).hexdigest()
        return computed == fields["h1"]


if __name__ == "__main__":
    paddle_billing.Verifier = LastH1Verifier  # type: ignore[misc, assignment]
    paddle_billing.main()
