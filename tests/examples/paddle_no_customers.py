"""paddle_no_customers: a test twin of `examples.receivers.paddle_billing` that keeps no
customers: it answers 200 to ``customer.created`` and ``customer.updated`` and stores nothing,
so an observer reading its customers (``[observer.states] customer``) finds none of them.
Run as ``python -m tests.examples.paddle_no_customers`` from the repository root.
"""

from __future__ import annotations

import examples.receivers.paddle_billing as receiver

if __name__ == "__main__":
    receiver.STATE_TABLES = {prefix: table for prefix, table in receiver.STATE_TABLES.items() if prefix != "customer."}
    receiver.main()
