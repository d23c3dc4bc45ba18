"""paddle_paid_too: a test twin of `examples.receivers.paddle_billing` that fulfils a transaction
on ``transaction.paid`` as well as on ``transaction.completed``.

Paddle sends both for every successful checkout (``paid``, then ``completed``), so each
transaction is fulfilled twice: ``duplicated`` on ``fulfil:{txn}`` wherever the scenario sends a
transaction's whole story. Run as ``python -m tests.examples.paddle_paid_too`` from the
repository root.
"""

from __future__ import annotations

from examples.receivers import paddle_billing

if __name__ == "__main__":
    paddle_billing.EFFECTS = {**paddle_billing.EFFECTS, "transaction.paid": lambda d: f"fulfil:{d['id']}"}
    paddle_billing.main()
