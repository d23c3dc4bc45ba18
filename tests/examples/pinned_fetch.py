"""pinned_fetch: `fetch_state` with every provider API request pinned to a Stripe-Version
hookproof does not model (``2026-11-18.endive``, stripe-node 23.2.0's ``apiVersion``), as an
SDK pins its own: the provider API answers in the latest modelled shape and each command's
report says so once. Run as ``python -m tests.examples.pinned_fetch`` with the reference
receivers' flags."""

from __future__ import annotations

from typing import Any

from examples.receivers.fetch_state import FetchState
from hookproof.receivers import ReceiverConfig, make_app, run_cli

#: stripe-node 23.2.0's pinned API version (its ``apiVersion.js``).
PINNED = "2026-11-18.endive"


class PinnedFetch(FetchState):
    """fetch_state sending ``Stripe-Version: 2026-11-18.endive`` on every request."""

    name = "pinned_fetch"

    def __init__(self, config: ReceiverConfig) -> None:
        super().__init__(config)
        self.api.headers["Stripe-Version"] = PINNED


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(PinnedFetch(config))


if __name__ == "__main__":
    run_cli(create_app, PinnedFetch.name)
