"""mark_before_fetch: marks the event processed, then fetches the object and applies it.

fetch_state's strategy (the provider API is the truth), with dj-stripe's ordering
(#832): the event id is committed to ``processed_events`` first, then the object is
fetched from the provider API (one try) and the effect applied. When the provider API
fails that fetch (a 404 for an object not visible yet, a 500), the handler answers 500;
the provider retries, the retry finds the event marked and answers 200 without doing
anything: the effect (or, for a subscription event, the state update) is lost although the
provider did everything right.

Stripe profile only. Needs ``--api-base`` and ``--api-key``.
"""

from __future__ import annotations

from typing import Any

from examples.receivers.fetch_state import FetchState, ProviderUnavailable
from hookproof.receivers import OK, ReceiverConfig, Reply, WebhookEvent, handles, make_app, run_cli


class MarkBeforeFetch(FetchState):
    """Commit "processed", then fetch and apply."""

    name = "mark_before_fetch"
    framework = "flask"

    def process(self, event: WebhookEvent) -> Reply:
        if not handles(event.type):
            return Reply(200, {"ignored": event.type})
        with self.store.transaction() as conn:
            if not self.store.claim(conn, "event:" + event.id, event.id):
                return Reply(200, {"duplicate": event.id})
        try:
            state = self._current_state(event)
            confirmed = self._confirmed(event)
        except ProviderUnavailable as exc:
            return Reply(500, {"error": str(exc)})  # the event stays marked: the retry is a no-op
        effect = self.effect_of(confirmed) if confirmed is not None else None
        with self.store.transaction() as conn:
            if state is not None:
                self.store.write_state(conn, state, only_newer=True)
            if effect is not None and self.store.claim(conn, effect.business_key, event.id):
                self.store.apply_effect(conn, effect, event.id)
        return OK

    def _get(self, path: str, *, tries: int = 3, account: str | None = None) -> Any:
        return super()._get(path, tries=1, account=account)  # no retry of its own: the provider retries


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(MarkBeforeFetch(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, MarkBeforeFetch.name)
