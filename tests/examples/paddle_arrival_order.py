"""paddle_arrival_order: a test twin of `examples.receivers.paddle_billing` that stores each
subscription's and transaction's status as its event arrives, without comparing ``occurred_at``.

An older event delivered after a newer one leaves the older status: a transaction's
``transaction.paid`` after its ``transaction.completed`` leaves it ``paid`` (``stale``).
Run as ``python -m tests.examples.paddle_arrival_order`` from the repository root.
"""

from __future__ import annotations

from examples.receivers.paddle_billing import main

if __name__ == "__main__":
    main(ordered=False)
