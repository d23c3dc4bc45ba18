"""generic_fetch: `fetch_state` on a generic-hmac endpoint (Stripe's envelope and types, the
Stripe-shaped provider API) that checks no account: it fetches each object with its own key
(no ``Stripe-Account`` header: it is no Connect platform) and decides on what the API
answers, as Stripe advises. On a 404 it applies nothing and answers 503: it cannot tell
another account's object from one not visible yet. Run as
``python -m tests.examples.generic_fetch`` with the reference receivers' flags."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx

from examples.receivers.fetch_state import FetchState
from hookproof.receivers import Receiver, ReceiverConfig, make_app, run_cli


class GenericFetch(FetchState):
    """fetch_state for any Stripe-shaped sender, without the account check."""

    name = "generic_fetch"

    def __init__(self, config: ReceiverConfig) -> None:
        if not config.api_base or not config.api_key:
            raise ValueError("generic_fetch needs --api-base and --api-key")
        Receiver.__init__(self, replace(config, account=None))  # the API alone decides
        self.api = httpx.Client(base_url=config.api_base.rstrip("/"), timeout=httpx.Timeout(5.0, connect=2.0),
                                headers={"Authorization": f"Bearer {config.api_key}"})

    def _get(self, path: str, *, tries: int = 3, account: str | None = None) -> Any:
        return super()._get(path, tries=tries)  # its own key, never another account's scope


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(GenericFetch(config))


if __name__ == "__main__":
    run_cli(create_app, GenericFetch.name)
