"""foreign_acked: acknowledges an event of the other mode or another account, applies nothing.

Exactly inbox_sync, except for its answer to a genuine event that is not this
endpoint's (a test-mode event at a live endpoint, or the reverse; an event of another
account than `--account`, which Stripe itself never sends): 200 and no effect, as Stripe's docs advise ("return a 2xx and
ignore it"), instead of a 400. Both answers are correct; only an effect is a fault.
"""

from __future__ import annotations

from typing import Any, Mapping

from hookproof.receivers import ReceiverConfig, make_app, run_cli
from hookproof.receivers.core import OK, Reply
from hookproof.receivers.inbox_sync import InboxSync
from hookproof.receivers.profiles import SignatureError


class ForeignAcked(InboxSync):
    """inbox_sync that acknowledges and ignores another mode's or account's events."""

    name = "foreign_acked"
    framework = "fastapi"

    def handle(self, body: bytes, headers: Mapping[str, str]) -> Reply:
        try:
            event = self.authenticate(body, headers)
        except SignatureError as exc:
            return Reply(400, {"error": f"signature verification failed: {exc}"})
        refusal = self.admit(event)
        if refusal is not None:
            return Reply(OK.status, {"received": True, "ignored": refusal})
        return self.process(event)


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(ForeignAcked(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, ForeignAcked.name)
