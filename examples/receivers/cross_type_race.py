"""cross_type_race: grants the license from either of two event types, checked in code.

Like cross_type_keyed it acts on ``payment_intent.succeeded`` and on ``charge.succeeded``
(Polar's double order from one payment), but the "already granted?" test is a lookup in
the effects table, then the fulfilment call (about 50 ms), then the insert. One after
the other the second event finds the license and does nothing; when both events of the
payment arrive together, both find nothing and the license is granted twice. Copies of
one event are still deduplicated by event id.

Options: ``fulfilment_call_s`` (0.05).
"""

from __future__ import annotations

import time
from typing import Any

from examples.receivers.cross_type_keyed import CrossTypeKeyed
from hookproof.receivers import OK, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli


class CrossTypeRace(CrossTypeKeyed):
    """Look the business key up, call the fulfilment service, insert: a window between types."""

    name = "cross_type_race"
    framework = "flask"

    def process(self, event: WebhookEvent) -> Reply:
        effect, state = self.effect_of(event), self.state_of(event)
        if effect is None and state is None:
            return Reply(200, {"ignored": event.type})
        if effect is not None:
            with self.store.transaction() as conn:
                if self.store.has_effect(conn, effect.business_key):
                    effect = None  # granted already, by the other event type
            if effect is not None:
                time.sleep(self.config.option("fulfilment_call_s", 0.05))  # provision the license
        with self.store.transaction() as conn:
            if not self.store.claim(conn, event.id, event.id):
                return Reply(200, {"duplicate": event.id})
            if effect is not None:
                self.store.apply_effect(conn, effect, event.id)
            if state is not None:
                self.store.write_state(conn, state, only_newer=True, event_created=event.created)
        return OK


def create_app(config: ReceiverConfig) -> Any:
    """The Flask app of this receiver."""
    return make_app(CrossTypeRace(config))


def app_from_env() -> Any:
    """The app configured from environment variables."""
    return create_app(ReceiverConfig.from_env())


if __name__ == "__main__":
    run_cli(create_app, CrossTypeRace.name)
