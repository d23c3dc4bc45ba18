"""paddle_activation: a test twin of `examples.receivers.paddle_billing` that provisions only on
``subscription.activated`` (``provision:{sub}:{its period's start}``: a resumed subscription is
activated again, for a new period), as Paddle's lifecycle guides suggest: the
subscription "can now be considered active so you can handle access provisioning"
(developer.paddle.com/webhooks/simulator/subscription-created, -resumed).

It claims ``event_id`` in the effect's transaction, so a redelivery changes nothing;
``--no-dedupe`` is its broken twin, which provisions again for every copy of the event.
Run as ``python -m tests.examples.paddle_activation [--no-dedupe]`` from the repository root.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Mapping

from examples.receivers.paddle_billing import main

#: The one effect: access provisioned when Paddle says the subscription is active.
EFFECTS: Mapping[str, Callable[[Mapping[str, Any]], str | None]] = {
    "subscription.activated": lambda d: f"provision:{d['id']}:{d['current_billing_period']['starts_at']}",
}

if __name__ == "__main__":
    main(dedupe="--no-dedupe" not in sys.argv[1:], effects=EFFECTS)
