"""paddle_fixed_micros: a test twin of `examples.receivers.paddle_billing` that orders each
status by its entity's ``updated_at`` parsed with a fixed six-digit format
(``strptime("%Y-%m-%dT%H:%M:%S.%fZ")``).

Paddle writes an entity's times as Go's ``time.RFC3339Nano`` does: a transaction's
``updated_at`` has nine fractional digits (``07:45:54.783994887Z``), a whole second none, and
``%f`` reads at most six, so those notifications raise and are answered 500: every retry fails
the same way and the transaction's completion is never applied. It passed while every time
hookproof sent had exactly six digits.
Run as ``python -m tests.examples.paddle_fixed_micros`` from the repository root.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Mapping

from examples.receivers.paddle_billing import main


def updated_at(body: Mapping[str, Any]) -> datetime:
    """The notification's ``data.updated_at`` read as six fractional digits always."""
    return datetime.strptime(body["data"]["updated_at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)


if __name__ == "__main__":
    main(clock=updated_at)
