"""The request pipeline every receiver shares: authenticate, admit, process.

A receiver is a `Receiver` subclass whose `process` is the strategy (or the mistake)
it demonstrates; the framework adapters in `web` turn it into a FastAPI or Flask app.
Subclasses override `authenticate` or `admit` only when that step is the point.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Mapping

from hookproof.receivers.business import Effect, StateChange, effect_of, state_of
from hookproof.receivers.config import ReceiverConfig
from hookproof.receivers.db import Store
from hookproof.receivers.profiles import SignatureError, WebhookEvent, get_verifier

log = logging.getLogger("hookproof.receivers")


@dataclass(frozen=True)
class Reply:
    """The HTTP answer to one delivery."""

    status: int
    body: Mapping[str, Any] = field(default_factory=dict)


OK = Reply(200, {"received": True})


class Receiver:
    """Base of every reference receiver.

    Class attributes:
        name: the module name (``inbox_sync``).
        framework: ``"fastapi"`` (served by uvicorn) or ``"flask"`` (threaded werkzeug).
    """

    name: str = "receiver"
    framework: str = "fastapi"

    def __init__(self, config: ReceiverConfig) -> None:
        self.config = config
        self.verifier = get_verifier(config.profile, config.secrets)
        self.store = Store(config.db_url)

    # ---- the pipeline --------------------------------------------------------
    def handle(self, body: bytes, headers: Mapping[str, str]) -> Reply:
        """Answer one webhook request (`headers` keys lowercase)."""
        try:
            event = self.authenticate(body, headers)
        except SignatureError as exc:
            return Reply(400, {"error": f"signature verification failed: {exc}"})
        refusal = self.admit(event)
        if refusal is not None:
            return Reply(400, {"error": refusal})
        return self.process(event)

    def authenticate(self, body: bytes, headers: Mapping[str, str]) -> WebhookEvent:
        """Verify with the profile's official SDK (default tolerance) and decode."""
        return self.verifier.verify(body, headers)

    def admit(self, event: WebhookEvent) -> str | None:
        """None when the event belongs to this endpoint's mode and account, else why not."""
        if event.livemode is not None and event.livemode != self.config.live:
            mode = "live" if event.livemode else "test"
            return f"{mode}-mode event sent to a {'live' if self.config.live else 'test'}-mode endpoint"
        if self.config.account and event.account is not None and event.account != self.config.account:
            return f"event of account {event.account}, this endpoint serves {self.config.account}"
        return None

    def process(self, event: WebhookEvent) -> Reply:
        """The strategy: apply the event's effect and state, answer the provider."""
        raise NotImplementedError

    # ---- helpers for strategies ---------------------------------------------
    @staticmethod
    def effect_of(event: WebhookEvent) -> Effect | None:
        return effect_of(event)

    @staticmethod
    def state_of(event: WebhookEvent) -> StateChange | None:
        return state_of(event)

    def observe(self) -> dict[str, list[dict[str, Any]]]:
        """What the test-only ``GET /hookproof/observe`` returns."""
        return self.store.observe()

    def close(self) -> None:
        """Stop background work and release the database."""
        self.store.dispose()
