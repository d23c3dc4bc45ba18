"""paddle_billing_fetch_ack_drop: broken twin of `paddle_billing_fetch`.

When Paddle's API fails to answer for the subscription an event is about, it answers 200 and
applies nothing (a read error swallowed), so Paddle never retries and the event is lost; the
correct receiver answers 503 and lets the retry apply it (`provider-api-transient`).
"""

from __future__ import annotations

from examples.receivers.paddle_billing import main

if __name__ == "__main__":
    main(fetch=True, ack_fetch_failures=True)
