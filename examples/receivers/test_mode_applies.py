"""test_mode_applies: ignores the event's mode and account.

Exactly inbox_sync, except that it admits every authentic event: a test-mode event
(a developer's ``stripe trigger``) sent to the live endpoint grants real licenses and
credits in production. (Admitting every account's events is no fault under Stripe: a
Connect endpoint is sent every connected account's events and never another's, so
``foreign-account`` does not apply.)
"""

from __future__ import annotations

from typing import Any

from hookproof.receivers import ReceiverConfig, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class TestModeApplies(InboxSync):
    """inbox_sync without the livemode/account check."""

    __test__ = False  # not a pytest test class
    name = "test_mode_applies"
    framework = "fastapi"

    def admit(self, event: WebhookEvent) -> str | None:
        return None


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(TestModeApplies(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, TestModeApplies.name)
