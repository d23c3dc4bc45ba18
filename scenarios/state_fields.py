"""A team's state fields: what an object's state is beyond its ``status``.

``[observer.state_fields]`` declares, per object kind, extra columns of that kind's state
query and where each lives in the event as the provider sends it (the paths business keys
use: ``data.object.items.data.0.price.id``; ``[0]`` is read as ``.0``). An object's state is
then its status and those fields together, compared as one value, its *combined state*:
``active, price=price_1Ab`` (`combined`). The receiver's side is combined by the SQL
observer from its row (`observers.SqlObserver`); the provider's from each event's body
(`StateFields.stated`: the events carry it as their `Event.status` into the history and
the checks) and, for the versions the provider API could have served, from the world's
events at those versions (`StateFields.servable`). Everything downstream (`ObjectTruth`,
``regressed``, ``stale``, explore's watch) compares these values as it compares statuses,
so a price that goes back to an older version's is ``regressed``, and one left older than
the final version's is ``stale``, with the field named in the finding. Without declared
fields nothing changes: the status alone.

A field the events of one status do not carry (a deletion's stub: Clerk's ``user.deleted``
holds the user's id alone) is not part of the state in that status, on either side
(`StateFields.absent`, found by `Config.state_field_map` over a sample story: the SQL
observer leaves that column out of a row in that status too): a deleted user is
``deleted`` whatever name the receiver kept or cleared, while ``active`` users still
compare their names. A path no event of the kind carries is a config error.

Values are compared as text (a database column holds the price id as the event sends it):
`field_text`. Pure module; O(events) per call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

from hookproof.scenarios.business_keys import TemplateError, lookup
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Profile

#: A list index written as ``[0]`` (``items.data[0].price.id``), read as the segment ``.0``.
_INDEX = re.compile(r"\[(\d+)\]")
#: A column name a state field may have (an SQL column of the state query).
COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: The state query's own columns, which no field may take.
RESERVED = frozenset({"object_id", "status", "version"})
#: Combined states `StateFields` remembers by event (explore reads every version's at each check).
MEMO_SIZE = 65536


def normal_path(path: str) -> str:
    """`path` with ``[N]`` indexes as dotted segments: ``data.object.items.data.0.price.id``."""
    return _INDEX.sub(r".\1", path).strip(".")


def field_text(value: Any) -> str:
    """A field's value as compared: a string as it is, None as ``null``, a number or boolean
    or container as JSON (``true``, ``3``, ``{"a": 1}``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)) or value is None or isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


def combined(status: str, values: Sequence[tuple[str, Any]]) -> str:
    """The combined state: `status`, then each ``name=value`` (`field_text`), comma-separated;
    `status` itself when `values` is empty."""
    if not values:
        return status
    return ", ".join([status, *(f"{name}={field_text(value)}" for name, value in values)])


@dataclass(frozen=True)
class StateFields:
    """Per object kind, its declared fields as ``(column, path)`` pairs, in declaration order.

    Attributes:
        fields: object kind (the world's: ``subscription``) → ((column, dotted path), …).
        profile: renders an event as the provider sends it (the paths read that JSON).
        absent: object kind → status → the columns its events in that status do not carry
            (left out of the state in that status on both sides).
    """

    fields: Mapping[str, tuple[tuple[str, str], ...]]
    profile: Profile
    absent: Mapping[str, Mapping[str, frozenset[str]]] = field(default_factory=dict)
    _memo: dict[tuple[str, str, int, int], str] = field(default_factory=dict, compare=False, repr=False)

    def columns(self) -> dict[str, tuple[str, ...]]:
        """Object kind → the extra columns its state query must return."""
        return {kind: tuple(c for c, _ in pairs) for kind, pairs in self.fields.items() if pairs}

    def reads(self, kind: str, names: Iterable[str]) -> bool:
        """True when a declared field of `kind` reads one of the fields `names` (a segment of its
        path: ``data.object.cancel_at_period_end`` reads ``cancel_at_period_end``)."""
        wanted = frozenset(names)
        return any(wanted.intersection(normal_path(path).split(".")) for _, path in self.fields.get(kind, ()))

    def kinds(self) -> frozenset[str]:
        """The object kinds with declared fields."""
        return frozenset(k for k, pairs in self.fields.items() if pairs)

    def values(self, event: Event) -> list[tuple[str, Any]]:
        """``(column, value)`` of each declared field of the event's object kind that its
        status carries (`absent`), read from the event as the provider sends it. Raises
        TemplateError naming a missing path."""
        pairs = self.fields.get(event.object_type, ())
        if not pairs:
            return []
        left_out = self.absent.get(event.object_type, {}).get(event.status or "", frozenset())
        body = json.loads(self.profile.envelope(event).body)
        return [(column, lookup(body, path, template=path)) for column, path in pairs if column not in left_out]

    def state_of(self, event: Event) -> str | None:
        """The event's combined state (its `status` when its kind declares no field; None
        when it has no status). Raises TemplateError."""
        if event.status is None or event.object_type not in self.fields:
            return event.status
        # an event's body is fixed: read it once. Its time is in the key: a story told once in a
        # scratch world to measure it (`story_start_us`) makes the same ids at another clock, and
        # a time field (current_period_end) read there is not the one the receiver is sent
        at = (event.id, event.object_id, event.version, event.created_us)
        state = self._memo.get(at)
        if state is None:
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            state = self._memo[at] = combined(event.status, self.values(event))
        return state

    def stated(self, events: Iterable[Event]) -> tuple[Event, ...]:
        """`events`, those of a kind with declared fields carrying their combined state as
        `Event.status` (the history and the checks read it there)."""
        return tuple(e if (s := self.state_of(e)) == e.status else replace(e, status=s) for e in events)

    def servable(self, world: Any, servable: Mapping[str, tuple[tuple[int, str], ...]]
                 ) -> dict[str, tuple[tuple[int, str], ...]]:
        """`servable` (`simulator.server.clock.servable_states`: object → its ``(version,
        status)`` pairs the provider API could have served) with the objects of a declared
        kind given their combined state at each version, read from the world's event that
        carried that version; a version no event carried is left out (its fields unknown)."""
        if not servable or not self.kinds():
            return dict(servable)
        at: dict[str, dict[int, str]] = {}
        for e in world.events:
            if e.object_id in servable and e.object_type in self.fields and e.status is not None:
                at.setdefault(e.object_id, {}).setdefault(int(e.version), self.state_of(e) or e.status)
        out: dict[str, tuple[tuple[int, str], ...]] = {}
        for object_id, pairs in servable.items():
            states = at.get(object_id)
            if states is None:
                out[object_id] = pairs
                continue
            kept = tuple((v, states[v]) for v, _ in pairs if v in states)
            if kept:
                out[object_id] = kept
        return out

    def with_absent(self, events: Iterable[Event]) -> "StateFields":
        """These fields with `absent` found over `events` (a sample story of every type): a
        column is absent in a status when an event in that status lacks its path. Raises
        TemplateError naming the path when no event of the kind carries it."""
        absent: dict[str, dict[str, set[str]]] = {}
        carried: dict[str, set[str]] = {}
        first: dict[str, TemplateError] = {}
        for event in events:
            pairs = self.fields.get(event.object_type, ())
            if event.status is None or not pairs:
                continue
            body = json.loads(self.profile.envelope(event).body)
            for column, path in pairs:
                try:
                    lookup(body, path, template=path)
                except TemplateError as exc:
                    absent.setdefault(event.object_type, {}).setdefault(event.status, set()).add(column)
                    first.setdefault(f"{event.object_type}.{column}", exc)
                else:
                    carried.setdefault(event.object_type, set()).add(column)
        for kind, pairs in self.fields.items():
            for column, _ in pairs:
                missing = first.get(f"{kind}.{column}")
                if column not in carried.get(kind, set()) and missing is not None:
                    raise missing
        return StateFields(self.fields, self.profile, {k: {s: frozenset(c) for s, c in by.items()}
                                                       for k, by in absent.items()})


def stated(events: Iterable[Event], fields: StateFields | None) -> tuple[Event, ...]:
    """`events` under `fields` (`StateFields.stated`; unchanged without any)."""
    if fields is None or not fields.kinds():
        return tuple(events)
    return fields.stated(events)


__all__ = ["COLUMN", "RESERVED", "StateFields", "TemplateError", "combined", "field_text", "normal_path", "stated"]
