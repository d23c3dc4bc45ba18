"""The engine shared by the provider worlds other than billing and GitHub: versioned records.

`RecordWorld` keeps objects as lists of snapshots (version n is ``versions[n-1]``) and
the events emitted so far, with the reading interface every world offers the engine
(``get``, ``version``, ``object_type``, ``objects``, ``event``, ``has``, ``advance``,
``events``, and ``sent_only``: the types the endpoint is sent, before the stories). A provider world (`simulator.world.mercadopago.MercadoPagoWorld`,
`simulator.world.paddle.PaddleWorld`) adds its operations and stories and calls
`_create`/`_update`/`_record_event`. Time is whole microseconds from a clock that moves
forward by at least a second per change, so timestamps order an object's versions.
"""

from __future__ import annotations

import copy
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

from hookproof.simulator.errors import WorldError
from hookproof.simulator.events import Event
from hookproof.simulator.wording import a_or_an
from hookproof.simulator.world.snapshot import copy_snapshot


@dataclass
class Record:
    """One object: its type and every snapshot it had (oldest first)."""

    object_type: str
    versions: list[dict[str, Any]]

    @property
    def current(self) -> dict[str, Any]:
        return self.versions[-1]


class RecordReads:
    """The reading interface every provider world shares (the engine's): objects by id,
    at a version, their types, the events by id. A subclass fills `_objects` and
    `_event_index`."""

    _objects: dict[str, Record]
    _event_index: dict[str, Event]
    #: The provider API may answer 404 for an object an event just named ("not visible
    #: yet", then served): the 404 half of every provider-API transient (certify's
    #: `provider-api-transient`, explore's ``api_fault``, the storm's `served_world`).
    #: Mercado Pago's payments are reported not found right after their notification;
    #: Stripe's `World` says False.
    api_hides_new_objects: ClassVar[bool] = True
    #: hookproof serves this world's objects on a provider API (False: a user catalog's, whose
    #: receiver has nothing to fetch, so no state it stores can have been served).
    serves_api: ClassVar[bool] = True

    def get(self, object_id: str, version: int | None = None) -> dict[str, Any]:
        """A deep copy of the object's snapshot (latest, or at `version`). Raises WorldError."""
        rec = self._record(object_id)
        if version is None:
            return copy_snapshot(rec.current)
        if not 1 <= version <= len(rec.versions):
            raise WorldError(f"{object_id} has no version {version}", object_id=object_id)
        return copy_snapshot(rec.versions[version - 1])

    def peek(self, object_id: str, version: int | None = None) -> Mapping[str, Any]:
        """The object's snapshot itself (latest, or at `version`), not a copy (`get`
        copies): for reading a field or two, as the state machine asks which operations are
        legal before every step. Never change it, nor keep it past the next change of the
        world. Raises WorldError (as `get`)."""
        rec = self._record(object_id)
        if version is None:
            return rec.current
        if not 1 <= version <= len(rec.versions):
            raise WorldError(f"{object_id} has no version {version}", object_id=object_id)
        return rec.versions[version - 1]

    def version(self, object_id: str) -> int:
        """The object's current version (1 after creation). Raises WorldError."""
        return len(self._record(object_id).versions)

    def object_type(self, object_id: str) -> str:
        """The object's type. Raises WorldError."""
        return self._record(object_id).object_type

    def objects(self, object_type: str | None = None) -> list[str]:
        """Ids of every object (of `object_type`), in creation order."""
        return [oid for oid, r in self._objects.items() if object_type is None or r.object_type == object_type]

    def event(self, event_id: str) -> Event:
        """The event with id `event_id`. Raises WorldError."""
        try:
            return self._event_index[event_id]
        except KeyError:
            raise WorldError(f"no event {event_id}", object_id=event_id) from None

    def has(self, object_id: str) -> bool:
        return object_id in self._objects or object_id in self._event_index

    def serve_event(self, event: Event) -> None:
        """Hold `event`, one the provider sends outside the world's stories (an event type the
        receiver does not handle), so that `event` finds it (Stripe serves every event it sent:
        ``GET /v1/events/{id}``); it is no part of `events`, the world's own history."""
        self._event_index.setdefault(event.id, event)

    def sent_only(self, sends: Callable[[str], bool]) -> None:
        """The endpoint is sent only the types `sends` accepts (the world's type names). A world
        whose stories depend on what the endpoint is sent overrides this (the billing world's
        Checkout purchases, `World.sent_only`; a user catalog's state stories,
        `UserCatalogWorld.sent_only`); the others tell the same stories to every endpoint and
        leave the filtering to the scenarios. Call before the stories are played."""

    def _record(self, object_id: str) -> Record:
        try:
            return self._objects[object_id]
        except KeyError:
            raise WorldError(f"no object {object_id}", object_id=object_id) from None

    def _typed(self, object_id: str, object_type: str) -> dict[str, Any]:
        rec = self._record(object_id)
        if rec.object_type != object_type:
            raise WorldError(f"{object_id} is {a_or_an(rec.object_type)}, not {a_or_an(object_type)}", object_id=object_id)
        return rec.current


class RecordWorld(RecordReads):
    """Versioned objects and the events they emitted, deterministic from `seed`.

    Args:
        seed: drives every id, amount and clock step.
        livemode: the world's events are live-mode events (where the provider has the flag).
        account: the seller account the events belong to (None: drawn by the subclass).
        start_us: the clock's start, unix microseconds (default: now, whole second).
        step_us: the largest extra step of the clock per change, microseconds.
    """

    provider = ""

    def __init__(self, seed: int = 0, *, livemode: bool = False, account: str | None = None,
                 start_us: int | None = None, step_us: int = 400_000, api_version: str = "") -> None:
        self.seed = seed
        self.livemode = livemode
        self.api_version = api_version
        self._rng = random.Random(seed)
        self._now_us = start_us if start_us is not None else int(time.time()) * 1_000_000
        self._step_us = max(1, step_us)
        self._objects: dict[str, Record] = {}
        self.events: list[Event] = []
        self._event_index: dict[str, Event] = {}
        self.account = account or ""
        #: The ids the world made inside its objects' bodies for its stories (a refund's, a
        #: line item's), as text, oldest first: what a storm renames in each replay besides
        #: the objects' and events' ids (`loadtests.renaming.IdRenamer.of`).
        self.fresh_ids: list[str] = []
        #: The accounts a storm renames in each copy along with the objects' ids (none: every copy
        #: keeps `account`, a seller's or a shop the config names): those a world drew for itself
        #: and whose ids are renamed with the copy (Shopify's own shops: a domain names one shop
        #: id, so a copy with its own shop id is a shop of its own, `ShopifyWorld`).
        self.copied_accounts: list[str] = []
        #: Ids of objects every copy of a storm shares, kept as they are (a named Shopify shop's id).
        self.shared_ids: set[str] = set()

    def advance(self, seconds: int) -> None:
        """Move the clock forward `seconds` (>= 0)."""
        self._now_us += max(0, seconds) * 1_000_000

    # ---- internals for the subclasses ------------------------------------------------
    def _tick(self) -> int:
        """Move the clock by 1 s plus a random fraction of `step_us`; the new time in µs."""
        self._now_us += 1_000_000 + self._rng.randrange(self._step_us)
        return self._now_us

    def _create(self, object_id: str, object_type: str, snapshot: dict[str, Any]) -> None:
        if object_id in self._objects:
            raise WorldError(f"{object_id} exists already", object_id=object_id)
        self._objects[object_id] = Record(object_type, [snapshot])

    def _update(self, object_id: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        """Append a new version with `changes` applied; returns it."""
        rec = self._record(object_id)
        snap = copy.deepcopy(rec.current)
        snap.update(copy.deepcopy(dict(changes)))
        rec.versions.append(snap)
        return snap

    def _record_event(self, event: Event) -> Event:
        self.events.append(event)
        self._event_index[event.id] = event
        return event
