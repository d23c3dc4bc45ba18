"""mark_before_state_fetch: a test twin of `examples.receivers.mark_before_fetch` that fetches only state.

Effects come from the event's own snapshot (no fetch); a subscription event commits its id to
``processed_events``, then fetches the subscription (one try) and stores it. A 404 or 500 from
the provider API answers 500; the provider's retry finds the event marked and answers 200, so
the subscription's state update is lost while every effect is applied: the pattern of a
receiver that follows Stripe's advice to fetch the subscription, with its dedupe too early.
Run as ``python -m tests.scenarios.mark_before_state_fetch`` from the repository root.
"""

from __future__ import annotations

from typing import Any

from examples.receivers.mark_before_fetch import MarkBeforeFetch
from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli


class MarkBeforeStateFetch(MarkBeforeFetch):
    """mark_before_fetch whose effects are the payload's: only the state is fetched."""

    name = "mark_before_state_fetch"

    def _confirmed(self, event: WebhookEvent) -> WebhookEvent | None:
        return event


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(MarkBeforeStateFetch(config))


if __name__ == "__main__":
    run_cli(create_app, MarkBeforeStateFetch.name)
