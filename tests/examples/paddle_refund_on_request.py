"""paddle_refund_on_request: a test twin of `examples.receivers.paddle_billing` that refunds when a
refund is requested (``adjustment.created``), whatever its status, and not on its approval.

Paddle creates a refund ``pending_approval`` and approves or rejects it later
(developer.paddle.com/webhooks/adjustments/adjustment-updated): this twin gives back the money of
every refund Paddle rejects (``unexpected`` on its ``refund:{adj}``). Run as
``python -m tests.examples.paddle_refund_on_request`` from the repository root.
"""

from __future__ import annotations

from examples.receivers import paddle_billing

if __name__ == "__main__":
    effects = {**paddle_billing.EFFECTS, "adjustment.created": lambda d: f"refund:{d['id']}"}
    del effects["adjustment.updated"]
    paddle_billing.EFFECTS = effects
    paddle_billing.main()
