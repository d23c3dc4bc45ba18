"""paddle_notification_dedupe: a test twin of `examples.receivers.paddle_billing` that claims
``notification_id`` instead of ``event_id``.

Automatic retries keep a notification's id, so duplicates and retries pass; a manual replay
(and a second notification destination) is a new notification of the same event, with a new
``notification_id``: its effect is applied again (``duplicated`` in ``mass-redelivery``).
Run as ``python -m tests.examples.paddle_notification_dedupe`` from the repository root.
"""

from __future__ import annotations

from examples.receivers.paddle_billing import main

if __name__ == "__main__":
    main(dedupe_on="notification_id")
