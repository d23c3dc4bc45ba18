"""unlocked_state_check: a test receiver whose subscription state is a check-then-act without a lock.

inbox_sync, except that a subscription event's state is read, compared with the event's
version in code and, after a short pause (the work a real handler does between its read and
its write: `--option pause_s=`, 0.03 s by default), written unconditionally, in a
transaction of its own. Two events of one subscription handled at once both read the old
row; the older one's write can land last and the newer state is lost (a lost update: the
Django twin reading ``Subscription.objects.filter(...).first()`` with no
``select_for_update``). With ``--option stored_only=1`` an object's first write is atomic (no pause, the read
again and the write under the lock: the unique insert that serialises two Django workers
creating one row), so only two events finding a stored row race (the gap of a receiver whose
``get()`` of an existing row has no ``select_for_update``). With ``--option locked=1`` the read,
the pause and the write share one transaction (SQLite's ``BEGIN IMMEDIATE``: the row is locked from the read to the write), the
correct twin. Run as ``python -m tests.scenarios.unlocked_state_check`` from the repository root.
"""

from __future__ import annotations

import time
from typing import Any

from hookproof.receivers import OK, ReceiverConfig, Reply, WebhookEvent, make_app, run_cli
from hookproof.receivers.inbox_sync import InboxSync


class UnlockedStateCheck(InboxSync):
    """inbox_sync whose state write is a read, a comparison in code and a blind write."""

    name = "unlocked_state_check"

    def process(self, event: WebhookEvent) -> Reply:
        state = self.state_of(event)
        if state is None:
            return super().process(event)
        with self.store.transaction() as conn:
            if not self.store.claim(conn, self.dedupe_key(event), event.id):
                return self.duplicate_reply(event)
            if self.config.option("locked", 0):
                current = self.store.read_state(conn, state.object_id)
                self._pause()
                if current is None or current.version < state.version:
                    self.store.write_state(conn, state, only_newer=False, event_created=event.created)
                return OK
        with self.store.transaction() as read:
            current = self.store.read_state(read, state.object_id)
        if current is None and self.config.option("stored_only", 0):  # the row's first write: an atomic insert
            with self.store.transaction() as conn:
                current = self.store.read_state(conn, state.object_id)
                if current is None or current.version < state.version:
                    self.store.write_state(conn, state, only_newer=False, event_created=event.created)
            return OK
        self._pause()
        if current is None or current.version < state.version:
            with self.store.transaction() as write:
                self.store.write_state(write, state, only_newer=False, event_created=event.created)
        return OK

    def _pause(self) -> None:
        time.sleep(self.config.option("pause_s", 0.03))


def create_app(config: ReceiverConfig) -> Any:
    """The FastAPI app of this receiver."""
    return make_app(UnlockedStateCheck(config))


if __name__ == "__main__":
    run_cli(create_app, UnlockedStateCheck.name)
