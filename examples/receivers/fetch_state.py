"""fetch_state: treat the webhook as a trigger and fetch the truth from the provider API.

The payload is only a hint. For subscription events the receiver fetches the
subscription's current state (``GET {api_base}/v1/subscriptions/{id}``) and stores it
if its version is newer than the stored one, so reordered, stale or replayed events
cannot regress it. For effects it asks the API whether the object really is in the
state the event claims (``payment_intents``, ``invoices``, ``checkout/sessions``); for
effects whose key depends on the event's own snapshot (a dunning attempt, a cumulative
refund) it fetches the provider's copy of the event (``GET /v1/events/{id}``). The
effect is applied once per business key (a UNIQUE claim on the key, in the effect's
transaction). Every API call is bounded (connect 2 s, total 5 s, 3 tries on 429/5xx);
an unreachable API answers 503 so the provider retries later.

Stripe profile only (the provider API is Stripe's). Needs ``--api-base`` and ``--api-key``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Callable, Mapping

import httpx

from hookproof.receivers import (
    OK,
    Receiver,
    ReceiverConfig,
    Reply,
    StateChange,
    WebhookEvent,
    handles,
    make_app,
    run_cli,
)
from hookproof.receivers.profiles import StripeVerifier

#: Event type -> (API collection of its object, "does the current object confirm the effect?").
CONFIRM: Mapping[str, tuple[str, Callable[[Mapping[str, Any]], bool]]] = {
    "payment_intent.succeeded": ("payment_intents", lambda o: o.get("status") == "succeeded"),
    "invoice.paid": ("invoices", lambda o: o.get("status") == "paid"),
    "checkout.session.completed": ("checkout/sessions", lambda o: o.get("payment_status") == "paid" or (
        o.get("mode") == "subscription" and o.get("payment_status") == "no_payment_required")),  # a trial's plan
    "checkout.session.async_payment_succeeded": ("checkout/sessions", lambda o: o.get("payment_status") == "paid"),
}


class ProviderUnavailable(Exception):
    """The provider API could not answer within its bounds."""


class FetchState(Receiver):
    """Fetch-before-process: the provider API is the source of truth."""

    name = "fetch_state"
    framework = "fastapi"

    def __init__(self, config: ReceiverConfig) -> None:
        if config.profile != "stripe":
            raise ValueError("fetch_state talks to a Stripe-shaped provider API: use --profile stripe")
        if not config.api_base or not config.api_key:
            raise ValueError("fetch_state needs --api-base and --api-key")
        super().__init__(config)
        self.api = httpx.Client(base_url=config.api_base.rstrip("/"), timeout=httpx.Timeout(5.0, connect=2.0),
                                headers={"Authorization": f"Bearer {config.api_key}"})

    def process(self, event: WebhookEvent) -> Reply:
        if not handles(event.type):
            return Reply(200, {"ignored": event.type})
        try:
            state = self._current_state(event)
            confirmed = self._confirmed(event)
            effect = self.effect_of(confirmed) if confirmed is not None else None
        except ProviderUnavailable as exc:
            return Reply(503, {"error": str(exc)})
        with self.store.transaction() as conn:
            if state is not None:
                self.store.write_state(conn, state, only_newer=True)
            if effect is not None and self.store.claim(conn, effect.business_key, event.id):
                self.store.apply_effect(conn, effect, event.id)
        return OK

    def _current_state(self, event: WebhookEvent) -> StateChange | None:
        if self.state_of(event) is None:
            return None
        sub = self._get(f"/v1/subscriptions/{event.object_id}", account=event.account)
        return StateChange(sub["id"], sub["status"], int(sub.get("hookproof_version", 0)))

    def _confirmed(self, event: WebhookEvent) -> WebhookEvent | None:
        """The event with the provider's view of its object, or None when the provider denies it."""
        if event.type in CONFIRM:
            collection, confirms = CONFIRM[event.type]
            current = self._get(f"/v1/{collection}/{event.object_id}", account=event.account)
            return replace(event, object=current) if confirms(current) else None
        if self.effect_of(event) is not None:
            return StripeVerifier.from_event_object(self._get(f"/v1/events/{event.id}", account=event.account))
        return event

    def _get(self, path: str, *, tries: int = 3, account: str | None = None) -> Any:
        """GET `path` from the provider API; a Connect event's objects live on its connected
        `account`, fetched with the ``Stripe-Account`` header (docs.stripe.com/connect/webhooks)."""
        headers = {"Stripe-Account": account} if account else None
        for attempt in range(1, tries + 1):
            try:
                response = self.api.get(path, headers=headers)
            except httpx.TransportError as exc:
                error = f"provider API unreachable: {type(exc).__name__}"
            else:
                if response.status_code == 200:
                    return response.json()
                if response.status_code != 429 and response.status_code < 500:
                    raise ProviderUnavailable(f"provider API answered {response.status_code} for {path}")
                error = f"provider API answered {response.status_code}"
                retry_after = response.headers.get("Retry-After", "")
                if retry_after.isdigit() and attempt < tries:
                    time.sleep(min(float(retry_after), 1.0))
                    continue
            if attempt < tries:
                time.sleep(0.1 * 2 ** (attempt - 1))
        raise ProviderUnavailable(error)

    def close(self) -> None:
        self.api.close()
        super().close()


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(FetchState(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, FetchState.name)
