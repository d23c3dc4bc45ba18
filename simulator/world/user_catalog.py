"""Events a user defines: a catalog of event types and the world that emits them.

For a provider hookproof does not ship (the ``generic-hmac``, ``standard-webhooks`` and
``svix`` profiles), the user describes its events (`UserCatalog`, read from the config or
an OpenAPI 3.1 ``webhooks`` document by `hookproof.catalog_file`): per event type
(`EventSpec`) the JSON Schema of the body and/or an example body, the path of the
object's id, of the event id (None: the profile's envelope carries it), of the ordering
field, of the status and the status the event moves the object to, and the business-key
template of each effectful type (the syntax of `scenarios.business_keys`:
``"payment:{data.id}"``).

`UserCatalogWorld(seed, catalog=...)` is a `RecordWorld` over those types. Each event's
body starts from the type's example (or an instance of its schema, made once per type
from the seed) and gets fresh values:

- the object's id (each story makes new objects; a fresh id has the example id's prefix,
  length and alphabet, longer when that shape allows fewer than `json_instances.MIN_ID_SPACE`
  ids: Lemon Squeezy's documented ``"1"`` gives nine digits; an integer comes from the world's
  increasing sequence; no two ids the world draws are alike, `_unique`), the event id, the type
  (at `UserCatalog.type_field` when the body has it);
- the ids and email addresses nested in the object's part (a Clerk user's email ids and
  addresses, and its ``external_id`` however plain) and its sequence numbers (an integer
  ``order_number``, ``…_number``, ``number``: from the world's increasing sequence, so a later
  object's is greater): the object's own,
  the same in each of its events (`_own_identities`), so no two objects share what the
  provider never lets them share;
- the status the event sets, at its declared `EventSpec.status` path only (with none, the
  state is hookproof's knowledge for its checks, never a field added to the body); an
  update (a type that sets no status) carries there the status the object has, never its
  example's;
- the ordering field, increasing with every event of the object: a counter, unix seconds
  or ms, or an RFC 3339 time, as its schema or example says;
- the event's own top-level times, the event's time in the field's format (`_time_unit`):
  a field whose example value is an RFC 3339 string, or an integer under a time's name
  (``timestamp``, ``created``, ``occurred_at``…) read as unix ms or s by its magnitude
  (Clerk's ``timestamp``); without an example value, a schema ``date-time`` or an integer
  its description calls a unix time;
- the object's creation time (``created_at``, ``created``, ``createdAt``… beside its id or
  in its JSON:API ``attributes``, when its example or schema value is such a time): the time
  of the object's first event, in that format (an RFC 3339 example's fractional digits and
  offset: Lemon Squeezy's ``.000000Z``); its last-change time (``updated_at``,
  ``modified_at``, ``updatedAt``…): the event's time; a time the example gives no later than
  its last change (an order's ``refunded_at``) is never after the event's;
- each ``X_id`` (or ``XId``) beside an object ``X`` holding an ``id`` of its JSON type: that
  id (`_tie_ids`: Polar's order names its customer by ``customer_id`` and in ``customer``),
  or, where ``X_id`` is the object's id, a reference or a key field, ``X.id`` is set to it;
  ids a schema gives ``format: uuid`` (or ``uuid4``…) are UUIDs;
- in each URL string of the object's part, a path segment equal to the example's object id:
  the object's id (Lemon Squeezy's ``links.self`` ``…/v1/orders/1``). Other times inside the object (a session's ``expire_at``, an email
  address's ``created_at``) move by as much as the object's creation did from its first
  example's (`_shift_times`), so they keep their order; with no creation time in that
  example they keep the example's values;
- for the fields a key template names other than the object id, a value of their own per
  event (so two events of one object are two effects, as a new refund id makes them): a count
  goes up by one, an amount rises within its example's value and the fields named after it move
  with it (`_key_number`), a string is a fresh id;
- at each path a type declares a reference to another kind (`EventSpec.refs`: a Clerk
  membership's ``data.public_user_data.user_id``), the id of an object of that kind made
  earlier whose creating event is of a type the endpoint is sent (drawn from the seed; the
  same in the object's later events), else of one made just before by its kind's first type;
  a path of the type's own kind, the object's own id; each as the field's JSON type. A
  `lifecycle` names only its own objects. `missing_parents` and `parents_first` tell a plan
  which creating events go before the events naming their objects.

An object's later events say what their own type says, keeping the object's identity:
a field the type's example sets as the example of the object's previous event did keeps
the object's value (its id, ids it holds that the examples repeat, values hookproof made);
a field the example sets otherwise is the example's (Clerk's ``user.updated`` renames the
user and makes a second email primary, while ``user.created``'s example is the sign-up).
A type made from its schema alone keeps the object's values but those its schema fixes
(``const``). When a type happens again to one object (a second ``user.updated``), the
free-text strings its example changes from its kind's first type's (no ``enum``,
``const``, ``pattern`` or ``format``, behind a ``$ref`` or in a branch either, `_constrained`:
a nullable enum is ``anyOf [{$ref: Reason}, null]``; not an id, time, email or URL) get the
example's value, a space and 4 random characters from the seed, within ``maxLength``, when
the field's schema allows that text (`_allows`; else the field keeps its value): two
successive events of one object then differ in a field a receiver may compare
(``[observer.state_fields]``), so keeping the last to arrive instead of the newest shows.
The body is
`Event.extra["body"]`; `Event.object` is the object's part of it (the object holding
the id). Events that set a status are stateful (`Event.stateful`).

Stories (what `scenarios.world_plans` asks of a world): `effect_story` (one event of
each effectful type, each about a new object; a type moving a team's counter is effectful
too, its object's earlier counted events with it), `counted_story` (an object through two
types or more moving a team's counter), `state_story` (every kind with
status-setting types the endpoint is sent, the one with the most such types first: per
kind, one object through them in catalog order, after another updated twice when the kind
has an update), `related_groups` (per kind whose sent types set two statuses or more, two
new objects' events of distinct statuses, each object's released together by
`related-burst`), `distinct_story` (an effectful type emitted twice on one object, when that
makes two keys: the catalog's, or the team's given as `key_of`), `unknown_event` (a type
the catalog lacks), `quiet_event`, `lifecycle`. The state stories walk only the types the
endpoint is sent (`sent_only`, called by the catalog before it plans a scenario: an
endpoint enabled for the organization types alone gets an organization's walk, not the
users' it is never sent); the others tell the same story to every endpoint. Every story
is deterministic from the seed. `user_events_of_type` serves ``hookproof send``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import cached_property
from typing import Any, TypeVar

from hookproof.simulator.errors import WorldError
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.formats import rfc3339_us
from hookproof.simulator.world.json_instances import (
    InstanceMaker,
    Path,
    TooDeep,
    deref,
    dotted,
    get_path,
    has_path,
    parse_path,
    schema_at,
    schema_type,
    set_path,
    shape_alphabet,
    uuid_version,
    widened,
    with_flags,
)
from hookproof.simulator.world.records import RecordWorld

#: `Event.extra` key of the whole body a user-catalog event is sent with.
BODY = "body"
#: `Event.extra` key of the other objects an event names (`EventSpec.refs`): dotted path -> object id.
REFS = "refs"
#: `Event.api_version` of user-catalog events (profiles tell them from the billing world's by it).
USER_API_VERSION = "user-catalog"

class InvalidBody(WorldError):
    """A body hookproof made that its type's schema refuses (a bug of hookproof's: it is never sent).

    Attributes: `event_type`, `at` (the dotted place of the first error, or ``the top``),
    `reason` (the validator's message).
    """

    def __init__(self, event_type: str, at: str, reason: str, *, source: str) -> None:
        super().__init__(f"{source}: the body hookproof made for {event_type} does not match its schema at {at}: "
                         f"{reason} (hookproof sends no such body; please report it)")
        self.event_type = event_type
        self.at = at
        self.reason = reason


class CannotMake(WorldError):
    """A type without an example whose schema hookproof makes no value of (`TooDeep`: every way
    out of a recursion needs it again; a reference the schema lacks). Attributes: `event_type`,
    `reason`."""

    def __init__(self, event_type: str, reason: str, *, source: str) -> None:
        super().__init__(f"{source}: hookproof cannot make a body of {event_type} from its schema ({reason}): "
                         "give an example")
        self.event_type = event_type
        self.reason = reason


_T = TypeVar("_T")

#: Renders a business-key template over a body (`scenarios.business_keys.render`).
KeyRenderer = Callable[[str, Any], str]


@dataclass(frozen=True)
class EventSpec:
    """One event type of a user's catalog.

    Attributes:
        type: the user's event type name (``invoice.paid``).
        schema: the JSON Schema of the whole body, self-contained (every ``$ref`` local to it:
            ``#``, or an entry of its ``$defs``, as the loader bundles them), or None.
        example: an example body, or None (at least one of `schema` and `example`).
        object_type: the kind of object the event is about (``invoice``; default the
            type without its last dotted part).
        object_id: path of the object's id in the body (dotted or JSON Pointer).
        event_id: path of the event id in the body, or None (only in the envelope).
        ordering: path of the field that orders the object's versions, or None.
        status: path of the object's status, where the world writes `state`, or None (the
            body carries no status: `state` is known to hookproof's checks alone).
        state: the status this event moves the object to, or None (no state).
        key: business-key template of the event's effect, or None (not effectful).
        amount: path of the money (minor units) the effect moves, or None.
        refs: paths that hold the id of another object, each with that object's kind
            (``{"data.organization.id": "organization"}``), or None: the body names no other
            object. A path mapped to the type's own kind names the object itself (an order's
            ``first_order_item.order_id``). The world writes there an object of that kind it
            made earlier (`UserCatalogWorld.emit`).
        source: where the entry was defined, for messages (``webhooks.yaml: webhook invoice.paid``).
    """

    type: str
    schema: Mapping[str, Any] | None = None
    example: Mapping[str, Any] | None = None
    object_type: str = ""
    object_id: str = "data.id"
    event_id: str | None = None
    ordering: str | None = None
    status: str | None = None
    state: str | None = None
    key: str | None = None
    amount: str | None = None
    refs: Mapping[str, str] | None = None
    source: str = ""

    @property
    def kind(self) -> str:
        """The object kind: `object_type`, else the type without its last dotted part."""
        return self.object_type or (self.type.rsplit(".", 1)[0] if "." in self.type else self.type)

    @property
    def status_path(self) -> str | None:
        """Where the body carries the status the event sets: `status` as declared, or None.

        Without a declared path the state is hookproof's own knowledge (its checks compare
        it with what the receiver reports) and never written into the body: a provider
        whose objects have no status field gets none (Clerk's users)."""
        return self.status


@dataclass(frozen=True)
class UserCatalog:
    """A user's event types (catalog order) and how business keys are rendered.

    Attributes:
        events: the event types, in the order the user gave them.
        type_field: path of the event type in the body (set when the body has it), or None.
        render_key: renders a key template over a body (injected by the front door:
            `scenarios.business_keys.render`); needed when a type has a `key`.
        name: the catalog's origin for messages (a file name, or ``config``).
        test_mode: path of the body's test-mode flag, true for a test event (Lemon Squeezy's
            ``meta.test_mode``), or None: the events carry no test/live flag.
    """

    events: tuple[EventSpec, ...]
    type_field: str | None = "type"
    render_key: KeyRenderer | None = field(default=None, compare=False, repr=False)
    name: str = "config"
    test_mode: str | None = None
    #: event type -> its schema's validator (`validator`), made on first use
    _validators: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    def body_of(self, event: Event) -> dict[str, Any]:
        """The body `event` is sent with: its own (`BODY`), its test-mode flags (`mode_flag`)
        saying the event's mode (`Event.livemode`: the other mode's event a ``test-mode-to-live``
        attempt sends carries the other flags, every one of them). The world's body is never
        changed."""
        body = dict(event.extra[BODY])
        if self.test_mode is not None:
            path = parse_path(self.test_mode)
            if not has_path(body, path) or get_path(body, path) is event.livemode:  # the flags say the other mode
                body = with_flags(body, self.mode_flag, not event.livemode)
        return body

    @property
    def mode_flag(self) -> str:
        """The name of the body's test-mode flags: `test_mode`'s last segment (``test_mode``).
        Every boolean field of that name, at any depth, carries the event's mode: Lemon
        Squeezy's ``meta.test_mode`` and each object's own (``data.attributes.test_mode``,
        ``first_order_item.test_mode``; "A boolean indicating if the object was created within
        test mode", docs.lemonsqueezy.com/api), all false in a live event."""
        assert self.test_mode is not None
        return parse_path(self.test_mode)[-1]

    def check_body(self, spec: EventSpec, body: Any) -> None:
        """Raise `InvalidBody` when `spec`'s schema refuses `body` (with ``format``s checked),
        naming the first error's place; nothing for a type without a schema. Every body a
        world makes is checked so: one the user's schema refuses never leaves hookproof."""
        validator = self.validator(spec.type)
        if validator is None:
            return
        error = next(iter(validator.iter_errors(body)), None)
        if error is not None:
            at, reason = schema_error(error)
            raise InvalidBody(spec.type, at, reason, source=spec.source or self.name)

    def validator(self, event_type: str) -> Any:
        """The `jsonschema` validator of `event_type`'s schema (draft 2020-12, ``format``s
        checked), made once per catalog; None for a type without a schema."""
        if event_type not in self._validators:
            spec = self.spec(event_type)
            if spec.schema is None:
                self._validators[event_type] = None
            else:
                from jsonschema import Draft202012Validator

                self._validators[event_type] = Draft202012Validator(
                    spec.schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        return self._validators[event_type]

    def __post_init__(self) -> None:
        if not self.events:
            raise WorldError(f"{self.name}: the catalog has no event types")
        seen: set[str] = set()
        for spec in self.events:
            if spec.type in seen:
                raise WorldError(f"{self.name}: event type {spec.type!r} is defined twice")
            seen.add(spec.type)
            if spec.schema is None and spec.example is None:
                raise WorldError(f"{spec.source or self.name}: event type {spec.type!r} has neither a schema "
                                 "nor an example")
            if spec.key is not None and self.render_key is None:
                raise WorldError(f"{self.name}: business keys need a key renderer")

    @property
    def types(self) -> tuple[str, ...]:
        """Every event type, in catalog order."""
        return tuple(s.type for s in self.events)

    def spec(self, event_type: str) -> EventSpec:
        """The spec of `event_type`. Raises WorldError naming the catalog's types."""
        for spec in self.events:
            if spec.type == event_type:
                return spec
        raise WorldError(f"the catalog ({self.name}) has no event {event_type!r} (known: {', '.join(self.types)})")

    @cached_property
    def kind(self) -> str:
        """The world kind this catalog's worlds are registered under: ``catalog:`` + a digest
        of its content (the same catalog always gets the same kind), computed once: a
        catalog of twelve 60 KB schemas is 700 KB of JSON to hash."""
        plain = [{k: v for k, v in s.__dict__.items() if k != "source" and not (k == "refs" and v is None)}
                 for s in self.events]
        text = json.dumps([plain, self.type_field, self.test_mode], sort_keys=True, default=str)
        return "catalog:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class UserCatalogWorld(RecordWorld):
    """Objects and events of a `UserCatalog`, deterministic from `seed` (module docstring).

    Operations raise WorldError for an unknown type or object.
    """

    provider = "user"
    serves_api = False

    def __init__(self, seed: int = 0, *, catalog: UserCatalog, livemode: bool = False, account: str | None = None,
                 start_us: int | None = None, step_us: int = 400_000, api_version: str = "") -> None:
        super().__init__(seed, livemode=livemode, account=account, start_us=start_us, step_us=step_us,
                         api_version=USER_API_VERSION)
        self.catalog = catalog
        self.account = account or ""
        self._maker = InstanceMaker(self._rng, self._now_us)
        self._bases: dict[str, dict[str, Any]] = {}
        #: digits -> the last integer id drawn of that many (`_fresh_value`: one increasing sequence)
        self._counters: dict[int, int] = {}
        #: every id-like value drawn so far, as text (`_unique`): no two objects, events or nested ids share one
        self._drawn: set[str] = set()
        #: (object id, key field path) -> how many of the object's events set that number (`_key_number`)
        self._key_numbers: dict[tuple[str, Path], int] = {}
        self._states: dict[str, str] = {}  # object id -> the last status an event set
        self._born: dict[str, int] = {}  # object id -> the time of its first event, unix microseconds
        self._last_type: dict[str, str] = {}  # object id -> the type of its last event
        self._type_counts: dict[tuple[str, str], int] = {}  # (object id, type) -> its events so far
        self._varied_fields: dict[str, list[tuple[str, int | None]]] = {}
        #: object id -> its own values of the examples' nested ids and emails (`_own_identities`)
        self._identities: dict[str, dict[str, str]] = {}
        #: the types the endpoint is sent (`sent_only`): the state stories walk only those
        self._sends: Callable[[str], bool] = _every_type
        #: Every id-like value made so far (objects', events', key fields'), as text, oldest
        #: first: what a storm renames in each replay (`loadtests.renaming.IdRenamer.of`).
        self.fresh_ids: list[str] = []
        #: object id -> (its creating event, that event's index in `events`)
        self._first: dict[str, tuple[Event, int]] = {}
        #: object id -> the object each of its reference paths names (`EventSpec.refs`), kept
        self._chosen: dict[str, dict[Path, str]] = {}
        #: the kinds whose parent object `_parent` is making (a cycle of references stops there)
        self._making: set[str] = set()
        #: the index in `events` from which objects may be referenced (`lifecycle`: its own story's)
        self._scope = 0
        #: object id -> µs its times move from its examples' (`_shift_times`), None: they stay
        self._shifts: dict[str, int | None] = {}

    # ---- operations -----------------------------------------------------------------
    def new_object(self, kind: str) -> str:
        """A fresh id for an object of `kind` (in the shape of the catalog's ids for it)."""
        spec = next((s for s in self.catalog.events if s.kind == kind), None)
        if spec is None:
            raise WorldError(f"the catalog has no object kind {kind!r}")
        return str(self._fresh(spec, parse_path(spec.object_id), kind))

    def emit(self, event_type: str, object_id: str | None = None) -> Event:
        """Emit `event_type` about `object_id` (None: a new object of its kind); the event."""
        spec = self.catalog.spec(event_type)
        oid = object_id if object_id is not None else self.new_object(spec.kind)
        refs = self._resolve_refs(spec, oid)  # a parent made now is made (and sent) first
        at = self._tick()
        self._maker.now_us = at
        body = self._body(spec)
        obj_path = parse_path(spec.object_id)
        parent = obj_path[:-1]
        for name, unit in self._event_times(spec, body).items():  # the envelope's own times: this event's
            body[name] = _time_value(unit, at)
        self._own_identities(spec, body, parent, oid)
        self._shift_times(spec, body, parent, oid, at, skip=self._event_times(spec, body))
        if oid in self._objects:
            self._keep_fields(spec, body, parent, self._record(oid).current, self._last_type.get(oid))
        for path, ref in refs.items():  # the objects it names: made before it
            set_path(body, path, self._typed_id(spec, path, ref))
        repeats = self._type_counts.get((oid, spec.type), 0)
        self._type_counts[(oid, spec.type)] = repeats + 1
        self._last_type[oid] = spec.type
        if repeats:  # the type again on this object: what it changes, changed again
            node = get_path(body, parent) if parent and has_path(body, parent) else body
            for name, limit in self._varied(spec):
                varied = self._vary(str(self._base_node(spec)[name]), limit)
                if self._allows(spec, (*parent, name), varied):  # else the schema refuses it: left unchanged
                    node[name] = varied
        born = self._born.setdefault(oid, at)
        for path, unit in self._object_times(spec, parent, body, _CREATED):  # the object's: when it was made
            set_path(body, path, _time_value(unit, born))
        for path, unit in self._object_times(spec, parent, body, _UPDATED):  # and when it last changed: now
            set_path(body, path, _time_value(unit, at))
        set_path(body, obj_path, self._typed_id(spec, obj_path, oid))
        base = self._bases[spec.type]
        if has_path(base, obj_path) and isinstance(get_path(base, obj_path), (str, int)):
            _rename_in_urls(body, parent, str(get_path(base, obj_path)), oid)
        event_id = str(self._fresh(spec, parse_path(spec.event_id), "evt") if spec.event_id else "evt_" +
                       self._maker.token(24))
        if spec.event_id:
            set_path(body, parse_path(spec.event_id), self._typed_id(spec, parse_path(spec.event_id), event_id))
        if self.catalog.type_field is not None:
            tpath = parse_path(self.catalog.type_field)
            if has_path(body, tpath) or schema_at(spec.schema, tpath) is not None:
                set_path(body, tpath, spec.type)
        if self.catalog.test_mode is not None:  # every flag of the world's own mode
            body = with_flags(body, self.catalog.mode_flag, not self.livemode)
        kept = spec.state if spec.state is not None else self._states.get(oid)  # an update keeps the status
        if kept is not None and spec.status_path is not None:
            set_path(body, parse_path(spec.status_path), kept)
        if spec.state is not None:
            self._states[oid] = spec.state
        version = (len(self._record(oid).versions) if oid in self._objects else 0) + 1
        if spec.ordering is not None:
            set_path(body, parse_path(spec.ordering), self._ordering(spec, version, at))
        for path in self._key_fields(spec):  # a count goes up by one, an amount rises within its example's
            current = get_path(body, path) if has_path(body, path) else None
            if isinstance(current, int) and not isinstance(current, bool):
                self._key_number(spec, body, path, oid, current)
            else:
                set_path(body, path, self._fresh(spec, path, spec.kind))
        self._tie_ids(spec, body)
        self.catalog.check_body(spec, body)  # never a body its schema refuses
        part = get_path(body, parent) if parent and has_path(body, parent) else body
        snapshot: dict[str, Any] = dict(copy.deepcopy(part)) if isinstance(part, Mapping) else {"value": part}
        created = oid not in self._objects
        if created:
            self._create(oid, spec.kind, snapshot)
        else:
            self._update(oid, snapshot)
        key = None
        if spec.key is not None:
            assert self.catalog.render_key is not None  # UserCatalog checks it
            key = self.catalog.render_key(spec.key, body)
        amount = get_path(body, parse_path(spec.amount)) if spec.amount and has_path(body, parse_path(spec.amount)) \
            else None
        extra: dict[str, Any] = {BODY: body, "stateful": spec.state is not None}
        named = {dotted(path): ref for path, ref in refs.items() if ref != oid}
        if named:
            extra[REFS] = named
        event = self._record_event(Event(
            id=event_id, type=spec.type, created=at // 1_000_000, created_us=at, object_type=spec.kind,
            object_id=oid, version=version, object=snapshot, business_key=key,
            amount=amount if isinstance(amount, int) and not isinstance(amount, bool) else None,
            status=spec.state, livemode=self.livemode, account=self.account, api_version=USER_API_VERSION,
            extra=extra))
        if created:
            self._first[oid] = (event, len(self.events) - 1)
        return event

    def creating_event(self, object_id: str) -> Event | None:
        """The first event the world emitted about `object_id` (what made it), or None."""
        first = self._first.get(object_id)
        return first[0] if first is not None else None

    def missing_parents(self, events: Sequence[Event], sends: Callable[[str], bool]) -> list[Event]:
        """The creating events of the objects `events` name (`REFS`), and of the objects those
        name, that `events` lacks and are of a type `sends` accepts, oldest first: what a
        provider sent the endpoint before (a scenario delivers them first, `scenarios.catalog`)."""
        present = {e.id for e in events}
        need: dict[int, Event] = {}
        todo = list(events)
        while todo:
            for ref in (todo.pop().extra.get(REFS) or {}).values():
                first = self._first.get(ref)
                if first is None or first[0].id in present or first[1] in need or not sends(first[0].type):
                    continue
                need[first[1]] = first[0]
                todo.append(first[0])
        return [need[i] for i in sorted(need)]

    def parents_first(self, events: Sequence[Event]) -> list[Event]:
        """`events` in their order, except that the creating event of an object one of them
        names (`REFS`), when among them after it, moves to just before it (a story that lists
        effects first keeps a parent before its child, as the provider sent them)."""
        by_id = {e.id: e for e in events}
        out: list[Event] = []
        placed: set[str] = set()

        def place(event: Event) -> None:
            placed.add(event.id)
            for ref in (event.extra.get(REFS) or {}).values():
                first = self._first.get(ref)
                if first is not None and first[0].id in by_id and first[0].id not in placed:
                    place(by_id[first[0].id])
            out.append(event)

        for event in events:
            if event.id not in placed:
                place(event)
        return out

    def _resolve_refs(self, spec: EventSpec, oid: str) -> dict[Path, str]:
        """Per reference path of `spec` (`EventSpec.refs`), the id of the object it names: `oid`
        itself for the type's own kind; the object the path named in `oid`'s earlier events;
        else one of that kind made earlier whose creating event is of a type the endpoint is
        sent (`sent_only`), drawn from the seed; else a new one, made now by its kind's first
        type (`_parent`)."""
        if not spec.refs:
            return {}
        chosen = self._chosen.setdefault(oid, {})
        out: dict[Path, str] = {}
        for text, kind in spec.refs.items():
            path = parse_path(text)
            if kind == spec.kind:
                out[path] = oid
            else:
                if path not in chosen:
                    chosen[path] = self._parent(kind)
                out[path] = chosen[path]
        return out

    def _parent(self, kind: str) -> str:
        """An object of `kind` a reference may name (`_resolve_refs`), made now when none is."""
        made = [o for o in self.objects(kind) if (first := self._first.get(o)) is not None
                and first[1] >= self._scope and self._sends(first[0].type)]
        if made:
            return made[self._rng.randrange(len(made))]
        if kind in self._making:  # references in a cycle: this one names an object never made
            return self.new_object(kind)
        self._making.add(kind)
        try:
            return self.emit(self._of_kind(kind)[0].type).object_id
        finally:
            self._making.discard(kind)

    def statuses(self, kind: str) -> list[str]:
        """The statuses of `kind`'s objects in the order its types set them (catalog order)."""
        return list(dict.fromkeys(s.state for s in self._of_kind(kind) if s.state is not None))

    def ended_by(self, object_id: str) -> str | None:
        """The type that ended `object_id` (`ends_object`: its last event's), or None."""
        last = self._last_type.get(object_id)
        return last if last is not None and ends_object(last) else None

    def moves_forward(self, event_type: str, object_id: str) -> bool:
        """True when `event_type` may happen to `object_id` as a real provider sends it: it
        sets no status, the object has none yet, its status comes after the object's
        current one in `statuses` (a confirmed booking is not confirmed again), or it is an
        update that keeps the object's status: its status is the current one and an earlier
        type of its kind set it first (Clerk's ``user.updated``, ``active`` as ``user.created``
        left it, happens again and again). Nothing happens to an object after a type ending it
        (`ends_object`: Clerk's ``organizationMembership.deleted``, with or without a declared
        status: a provider sends no event of a deleted object, nor deletes it twice). Raises
        WorldError for an unknown type."""
        spec = self.catalog.spec(event_type)
        if self.ended_by(object_id) is not None:
            return False
        current = self._states.get(object_id)
        if spec.state is None or current is None:
            return True
        order = self.statuses(spec.kind)
        if current not in order:
            return True
        if spec.state == current:
            first = next(s.type for s in self._of_kind(spec.kind) if s.state == current)
            return first != spec.type
        return order.index(spec.state) > order.index(current)

    # ---- stories ----------------------------------------------------------------------
    def lifecycle(self) -> list[Event]:
        """Every event type once: per object kind, one object through its types in catalog order.

        The objects its events name (`EventSpec.refs`) are its own, made within it (a parent
        first where none is yet): a storm replays each story with its ids renamed, the
        references with the objects they name."""
        start = len(self.events)
        scope, self._scope = self._scope, start
        try:
            for kind in self._kinds():
                oid = self.new_object(kind)
                for spec in self._of_kind(kind):
                    self.emit(spec.type, oid)
        finally:
            self._scope = scope
        return self.events[start:]

    def effect_story(self, counted: AbstractSet[str] = frozenset()) -> list[Event]:
        """One event of each effectful type, each about a new object (after its kind's first type),
        in catalog order. A type is effectful by its `EventSpec.key`, or by moving a counter the
        team declares (`counted`, the types ``[counters]`` names: Clerk's
        ``organizationMembership.created`` and ``.deleted`` moving an organization's seats): such a
        type's event comes with its object's earlier events of counted types, as the provider sent
        them, so a deletion follows the creation it takes back (a receiver counting seats by the
        memberships it holds never sees a seat removed that it was never given)."""
        out: list[Event] = []
        for spec in self.catalog.events:
            if spec.key is not None:
                out.append(self.emit_new(spec))
            elif spec.type in counted:
                start = len(self.events)
                event = self.emit_new(spec)
                out += [e for e in self.events[start:-1] if e.object_id == event.object_id and e.type in counted]
                out.append(event)
        return out

    def counted_story(self, counted: AbstractSet[str]) -> list[Event]:
        """Per object kind with two types or more moving a team's counter (`counted`: Clerk's
        ``organizationMembership.created`` and ``.deleted``), one new object through them in
        catalog order: two distinct events of one object, each owing its move (a receiver
        deduplicating by the object takes the second back never). Empty when no kind has two."""
        out: list[Event] = []
        for kind in self._kinds():
            types = [s for s in self._of_kind(kind) if s.type in counted]
            if len(types) >= 2:
                first = self.emit_new(types[0])
                out += [first, *(self.emit(s.type, first.object_id) for s in types[1:])]
        return out

    def sent_only(self, sends: Callable[[str], bool]) -> None:
        """The endpoint is sent only the types `sends` accepts (the catalog's names): the state
        stories (`state_story`, `related_groups`) then walk the kinds, and the types, it is
        sent, not kinds whose status-setting types it never receives. Call before the stories
        are played; without a call, every type is sent."""
        self._sends = sends

    def state_story(self) -> list[Event]:
        """Every kind with status-setting types the endpoint is sent (`sent_only`), the kind with
        the most such types first (catalog order among equals), each through `_kind_walk`: one
        object through its kind's sent status-setting types in catalog order; when the kind has
        an update (a type keeping a status an earlier type set first: Clerk's ``user.updated``),
        another object of that kind first, through its types up to the one that set that
        status, then updated twice (each update's free text varied), so that an object ends in
        a status whose fields are compared, not only in a final one (a deleted user's stub
        carries no name) where they are not; a kind whose update declares no status but carries
        the object's (Polar's ``subscription.updated``, "fires for all changes to the
        subscription") has it so after its second status, or its first when no third follows
        (`_keeping_update`). Empty when no sent
        type sets a status."""
        story: list[Event] = []
        for kind in self._stateful_kinds():
            story += self._kind_walk(kind)
        return story

    def _kind_walk(self, kind: str) -> list[Event]:
        """`state_story`'s objects of `kind` (its updated object, then its walked one)."""
        walk = [s for s in self._of_kind(kind) if s.state is not None and self._sends(s.type)]
        story: list[Event] = []
        update = next((s for i, s in enumerate(walk) if any(t.state == s.state for t in walk[:i])), None)
        if update is not None:
            updated = self.new_object(kind)
            until = next(i for i, s in enumerate(walk) if s.state == update.state)
            story += [self.emit(s.type, updated) for s in (*walk[:until + 1], update, update)]
        elif walk and (keeping := self._keeping_update(kind)) is not None:
            # an update declaring no state keeps the object's (Polar's subscription.updated): after
            # the kind's second status (a subscription made active) when a third follows, else its first
            updated = self.new_object(kind)
            until = 1 if len(walk) > 2 and not ends_object(walk[1].type) else 0
            story += [self.emit(s.type, updated) for s in (*walk[:until + 1], keeping, keeping)]
        oid = self.new_object(kind)
        return story + [self.emit(s.type, oid) for s in walk]

    def _keeping_update(self, kind: str) -> EventSpec | None:
        """`kind`'s first sent type that carries the object's status and sets none (`EventSpec.state`
        None, `EventSpec.status_path` set: an update keeping the status, as `emit` writes it) and
        ends no object, or None."""
        return next((s for s in self._of_kind(kind) if s.state is None and s.status_path is not None
                     and self._sends(s.type) and not ends_object(s.type)), None)

    def related_groups(self, count: int = 2) -> list[tuple[Event, ...]]:
        """Per kind whose sent types (`sent_only`) set at least two statuses, the kind with the
        most first (catalog order among equals): `count` new objects, each through the first
        type setting each of those statuses, in catalog order (an update, a type setting a
        status an earlier one set, left out): each object's events, whose statuses differ, for
        `related-burst` to release together (a subscription created ``active``, then
        ``canceled``: a state read, compared and written without a lock can end on the older).
        Empty when no kind has two sent types setting different statuses."""
        def distinct(kind: str) -> list[EventSpec]:
            walk: dict[str, EventSpec] = {}
            for spec in self._of_kind(kind):
                if spec.state is not None and self._sends(spec.type):
                    walk.setdefault(spec.state, spec)
            return list(walk.values())

        walks = sorted((w for w in (distinct(kind) for kind in self._kinds()) if len(w) >= 2), key=len, reverse=True)
        groups = []
        for walk in walks:
            for _ in range(count):
                oid = self.new_object(walk[0].kind)
                groups.append(tuple(self.emit(spec.type, oid) for spec in walk))
        return groups

    def distinct_story(self, key_of: Callable[[Event], str | None] | None = None) -> list[Event]:
        """Per effectful type whose key differs between two events of one object: both events.

        `key_of` gives an event's business key (the team's mapping, `KeyMapping.key_of`, which
        may key types the catalog does not); None: the catalog's own (`Event.business_key`).
        Every type of the catalog is tried, whatever the endpoint is sent (`sent_only`): an
        empty story says no type gives one object two effects. Raises what `key_of` raises."""
        out: list[Event] = []
        for spec in self.catalog.events:
            if spec.key is None and key_of is None:
                continue
            first = self.emit_new(spec)
            second = self.emit(spec.type, first.object_id)
            keys = (key_of(first), key_of(second)) if key_of is not None else (first.business_key, second.business_key)
            if keys[0] and keys[1] and keys[0] != keys[1]:
                out += [first, second]
        return out

    def unknown_event(self) -> Event:
        """An event of a type the catalog lacks (``<kind>.hookproof_unknown``): not recorded."""
        spec = next((s for s in self.catalog.events if s.key is None), self.catalog.events[0])
        kind = spec.kind
        base = self.emit_new(spec, record=False)
        body = copy.deepcopy(dict(base.extra[BODY]))
        unknown, event_id = f"{kind}.hookproof_unknown", base.id[:-4] + "unkn"
        if self.catalog.type_field is not None and has_path(body, parse_path(self.catalog.type_field)):
            set_path(body, parse_path(self.catalog.type_field), unknown)
        if spec.event_id is not None:
            set_path(body, parse_path(spec.event_id), self._typed_id(spec, parse_path(spec.event_id), event_id))
        return Event(id=event_id, type=unknown, created=base.created, created_us=base.created_us,
                     object_type=kind, object_id=base.object_id, version=base.version, object=base.object,
                     livemode=self.livemode, account=self.account, api_version=USER_API_VERSION,
                     extra={BODY: body, "stateful": False})

    def quiet_event(self) -> Event:
        """An event with no effect and no state (a catalog type if one is quiet, else an unknown one)."""
        spec = next((s for s in self.catalog.events if s.key is None and s.state is None), None)
        if spec is None:
            return self.unknown_event()
        return self.emit_new(spec)

    # ---- internals --------------------------------------------------------------------
    def _kinds(self) -> list[str]:
        return list(dict.fromkeys(s.kind for s in self.catalog.events))

    def _stateful_kinds(self) -> list[str]:
        """The kinds with a status-setting type the endpoint is sent, the most such types first
        (catalog order among equals)."""
        def setting(kind: str) -> int:
            return sum(s.state is not None and self._sends(s.type) for s in self._of_kind(kind))

        return sorted((k for k in self._kinds() if setting(k)), key=setting, reverse=True)

    def _of_kind(self, kind: str) -> list[EventSpec]:
        return [s for s in self.catalog.events if s.kind == kind]

    def emit_new(self, spec: EventSpec, *, record: bool = True) -> Event:
        """`spec`'s event about a new object, after the first type of its kind when that is another."""
        first = self._of_kind(spec.kind)[0]
        oid = self.new_object(spec.kind)
        if first.type != spec.type:
            self.emit(first.type, oid)
        if record:
            return self.emit(spec.type, oid)
        event = self.emit(spec.type, oid)
        assert self.events[-1] is event
        self.events.pop()  # the parents it named stay made (and recorded)
        if self._first.get(oid, (None, 0))[0] is event:  # never sent: no reference may name its object
            del self._first[oid]
        self._event_index.pop(event.id, None)
        return event

    def _body(self, spec: EventSpec) -> dict[str, Any]:
        """A fresh copy of the type's base body (its example, else an instance of its schema)."""
        if spec.type not in self._bases:
            try:
                base = spec.example if spec.example is not None else self._maker.make(spec.schema)
            except (TooDeep, KeyError) as exc:
                raise CannotMake(spec.type, str(exc).strip("'\""), source=spec.source or self.catalog.name) from None
            self._bases[spec.type] = dict(copy.deepcopy(base)) if isinstance(base, Mapping) else {}
        return copy.deepcopy(self._bases[spec.type])

    def _event_times(self, spec: EventSpec, body: Mapping[str, Any]) -> dict[str, str]:
        """The body's top-level event times and their unit (`_time_unit`): fields the example
        gives as a time (an RFC 3339 string; an integer unix time in s or ms by its magnitude,
        under a time's name: Clerk's ``timestamp``), or, where the example has none, that the
        schema makes ``date-time`` strings or integers it describes as unix times."""
        skip = {parse_path(p) for p in (spec.ordering, spec.object_id, spec.event_id, self.catalog.type_field) if p}
        out = {}
        for name in body:
            if (name,) in skip:
                continue
            unit = _time_unit((name,), spec)
            if unit is not None:
                out[name] = unit
        return out

    def _object_times(self, spec: EventSpec, parent: Path, body: Mapping[str, Any],
                      names: re.Pattern[str]) -> list[tuple[Path, str]]:
        """The object's time fields named by `names` (`_CREATED`, `_UPDATED`) beside its id or in
        its JSON:API ``attributes`` (`_time_nodes`), whose example or schema value is a time
        (`_time_unit`), and their unit; the ordering path is left to `_ordering`."""
        ordering = parse_path(spec.ordering) if spec.ordering else None
        out = []
        for at in _time_nodes(body, parent):
            for name in get_path(body, at) if at else body:
                path = (*at, name)
                if names.fullmatch(name) and path != ordering and (unit := _time_unit(path, spec)) is not None:
                    out.append((path, unit))
        return out

    def _shift_times(self, spec: EventSpec, body: dict[str, Any], parent: Path, oid: str, at: int,
                     skip: Mapping[str, str]) -> None:
        """Move the other times inside the object's part of `body` (a session's ``expire_at``, an
        email address's ``created_at``: each a time by `_time_unit`) by as much as the object's
        creation moved from its example's (the object's shift, fixed by its first event at `at`:
        the first type's example creation time to now), so the object's times keep their order
        (a session made now expires after it is made); a time the example gives no later than
        its last change (``updated_at``, or the ordering when it is such a field: Lemon
        Squeezy's ``refunded_at``) is never after the event's. An object whose first example
        names no creation time keeps its example's times. The envelope's times (`skip`), the
        ordering and the creation and last-change times are set by `emit` itself."""
        if oid not in self._shifts:
            example = None
            for path, unit in self._object_times(spec, parent, body, _CREATED):
                example = _time_us(get_path(body, path), unit)
                if example is not None:
                    break
            self._shifts[oid] = None if example is None else at - example
        shift = self._shifts[oid]
        node = get_path(body, parent) if parent and has_path(body, parent) else (body if not parent else None)
        if not shift or not isinstance(node, (dict, list)):
            return
        ordering = parse_path(spec.ordering) if spec.ordering else None
        own = (parse_path(spec.object_id),)
        nodes = _time_nodes(body, parent)
        changed = [t for at_node in nodes for name, value in (get_path(body, at_node) if at_node else body).items()
                   if _UPDATED.fullmatch(name) and (how := _time_unit((*at_node, name), spec)) is not None
                   and (t := _time_us(value, how)) is not None]
        last = max(changed, default=None)  # the example's last change

        def walk(value: Any, path: Path) -> None:
            items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
            for name, child in items:
                at_path = (*path, str(name))
                if isinstance(child, (dict, list)):
                    walk(child, at_path)
                    continue
                if (at_path == ordering or at_path in own or (not path and str(name) in skip)
                        or (path in nodes and (_CREATED.fullmatch(str(name)) or _UPDATED.fullmatch(str(name))))):
                    continue  # set by `emit`: the event's, the ordering, the object's own creation and change
                unit = _time_unit(at_path, spec)
                moved = _time_us(child, unit) if unit is not None else None
                if unit is not None and moved is not None:
                    past = last is not None and moved <= last  # it happened by the example's last change
                    set_path(body, at_path, _time_value(unit, min(moved + shift, at) if past else moved + shift))

        walk(node, parent)

    def _keep_fields(self, spec: EventSpec, body: dict[str, Any], parent: Path, previous: Mapping[str, Any],
                     previous_type: str | None) -> None:
        """Which of the object's values a later event carries (module docstring): a field
        `spec`'s example sets as the example of the object's previous event did keeps the
        object's value (its ids, what hookproof varied); a field the example sets otherwise
        is the example's (what this event changes). A type without an example (made from
        its schema) keeps every value the object had but those its schema fixes (``const``,
        a one-value ``enum``). Only values of the same JSON type are carried."""
        node = get_path(body, parent) if parent and has_path(body, parent) else (body if not parent else None)
        if not isinstance(node, dict):
            return
        own = self._base_node(spec)
        before = self._base_node(self.catalog.spec(previous_type)) if previous_type is not None else {}
        for name, value in previous.items():
            if name not in node or type(node[name]) is not type(value):
                continue
            if spec.example is not None:
                keep = name in before and before[name] == own.get(name)
            else:
                keep = not _fixed(schema_at(spec.schema, (*parent, name)))
            if keep:
                node[name] = copy.deepcopy(value)

    def _own_identities(self, spec: EventSpec, body: dict[str, Any], parent: Path, oid: str) -> None:
        """Give object `oid` its own nested ids, emails and numbers: in the object's part of
        `body`, every id-like string (``idn_2Tq7…``, a UUID, a plain value of an ``external_id``:
        Clerk's ``"567772"``), email address and integer under a sequence number's name
        (`_SEQUENCE_NAME`: Lemon Squeezy's ``order_number``, "the sequential order number for
        this store", docs.lemonsqueezy.com/api/orders; not a count, `_TALLY_NAME`) its example
        gives becomes one of `oid` alone (a number from the world's increasing integer sequence,
        `_fresh`: a later object's is greater), the same each time the object's events carry it (a Clerk user's
        ``email_addresses[0].id`` and ``primary_email_address_id`` still match), in the
        example's shape (an email keeps its address with a ``+`` tag). Two users never share an
        email id or an address, as with the provider, so a receiver keeping them unique sees
        no clash the provider would never cause. The object id, the event id, key fields and
        the ordering are set by `emit`; the envelope (Clerk's ``instance_id``) stays shared."""
        node = get_path(body, parent) if parent and has_path(body, parent) else (body if not parent else None)
        if not isinstance(node, (dict, list)):
            return
        own = self._identities.setdefault(oid, {})
        skip = {parse_path(p)[len(parent):] for p in (spec.object_id, spec.event_id, spec.ordering, spec.status_path)
                if p and parse_path(p)[:len(parent)] == parent}
        skip |= {path[len(parent):] for path in (*self._key_fields(spec), *self._ref_paths(spec))
                 if path[:len(parent)] == parent}

        def mapped(value: str) -> str:
            if value not in own:
                if _EMAIL.fullmatch(value):
                    local, _, domain = value.rpartition("@")
                    tag = self._maker.token(10)
                    self.fresh_ids.append(tag)
                    own[value] = f"{local}+{tag}@{domain}"
                elif _is_uuid(value):
                    own[value] = self._unique(self._maker.uuid)
                    self.fresh_ids.append(own[value])
                elif _NESTED_ID.fullmatch(value):
                    prefix, _, tail = value.rpartition("_")
                    own[value] = self._unique(lambda: f"{prefix}_{self._maker.like(widened(tail))}")
                    self.fresh_ids.append(own[value])
                else:  # a plain external_id (Clerk's "567772")
                    own[value] = self._unique(lambda: self._maker.like(widened(value)))
                    self.fresh_ids.append(own[value])
            return own[value]

        def numbered(value: int, at: Path) -> int:
            name = f"{dotted(at)}={value}"  # the example's number at that place
            if name not in own:
                own[name] = str(self._fresh(spec, (*parent, *at), spec.kind))
            return int(own[name])

        def walk(value: Any, at: Path) -> Any:
            if at in skip:
                return value
            if (isinstance(value, int) and not isinstance(value, bool) and at and _SEQUENCE_NAME.search(at[-1])
                    and not _TALLY_NAME.search(at[-1])):
                return numbered(value, at)
            if isinstance(value, dict):
                return {k: walk(v, (*at, k)) for k, v in value.items()}
            if isinstance(value, list):
                return [walk(v, (*at, str(i))) for i, v in enumerate(value)]
            if isinstance(value, str) and (_NESTED_ID.fullmatch(value) or _EMAIL.fullmatch(value) or _is_uuid(value)
                                           or (at and _ID_NAME.fullmatch(at[-1]) and _PLAIN_ID.fullmatch(value))):
                return mapped(value)
            return value

        remade = walk(node, ())
        if isinstance(node, dict):
            node.clear()
            node.update(remade)
        else:
            node[:] = remade

    def _tie_ids(self, spec: EventSpec, body: dict[str, Any]) -> None:
        """Make every ``X_id`` (or ``XId``) of `body` name the object ``X`` beside it: where an
        object holds both a field ``customer_id`` and an object ``customer`` with an ``id`` of
        the same JSON type, they are one customer, as in the provider's bodies (Polar's order:
        ``customer_id`` is ``customer.id``). The id set by `emit` wins: the object's own id, a
        reference (`EventSpec.refs`) or a key field at ``X_id`` is written to ``X.id``; else
        ``X.id`` (the object's, drawn in its schema's ``format``) is written to ``X_id``."""
        fixed = {parse_path(p) for p in (spec.object_id, spec.event_id) if p}
        fixed |= {*self._key_fields(spec), *self._ref_paths(spec)}

        def walk(node: Any, at: Path) -> None:
            if isinstance(node, list):
                for i, item in enumerate(node):
                    walk(item, (*at, str(i)))
                return
            if not isinstance(node, dict):
                return
            for name, value in list(node.items()):
                base = name[:-3] if name.endswith("_id") else name[:-2] if name.endswith("Id") else ""
                other = node.get(base) if base else None
                if not (isinstance(other, dict) and "id" in other) or isinstance(value, bool):
                    continue
                theirs = other["id"]
                if type(theirs) is not type(value) or not isinstance(value, (str, int)) or theirs == value:
                    continue
                here, there = (*at, name), (*at, base, "id")
                if here in fixed and there not in fixed:
                    other["id"] = value
                elif there in fixed or here not in fixed:
                    node[name] = theirs
            for name, value in node.items():
                walk(value, (*at, name))

        walk(body, ())

    def _base_node(self, spec: EventSpec) -> Mapping[str, Any]:
        """The object's part of `spec`'s base body (the example as given, or its schema instance)."""
        base = self._bases.get(spec.type)
        if base is None:
            self._body(spec)
            base = self._bases[spec.type]
        parent = parse_path(spec.object_id)[:-1]
        node = get_path(base, parent) if parent and has_path(base, parent) else (base if not parent else None)
        return node if isinstance(node, Mapping) else {}

    def _varied(self, spec: EventSpec) -> list[tuple[str, int | None]]:
        """The fields a repeat of `spec` on one object changes again, with their ``maxLength``:
        the object's free-text string fields (no ``enum``, ``const``, ``pattern`` or ``format``
        in the schema, through its ``$ref``s and branches, `_constrained`; not an id, a time, an
        email or a URL by their value) whose value in
        `spec`'s base differs from the base of its kind's first type (what the type changes:
        Clerk's ``user.updated`` renames the user); none for the kind's first type."""
        if spec.type in self._varied_fields:
            return self._varied_fields[spec.type]
        first = self._of_kind(spec.kind)[0]
        out: list[tuple[str, int | None]] = []
        if first.type != spec.type:
            parent = parse_path(spec.object_id)[:-1]
            fixed = {parse_path(p) for p in (spec.object_id, spec.event_id, spec.ordering, spec.status,
                                                 self.catalog.type_field) if p} | set(self._key_fields(spec))
            fixed |= set(self._ref_paths(spec))
            own, initial = self._base_node(spec), self._base_node(first)
            for name, value in own.items():
                path = (*parent, name)
                if not isinstance(value, str) or value == initial.get(name) or path in fixed or _not_free(value):
                    continue
                sub = schema_at(spec.schema, path) or {}
                if _constrained(sub, spec.schema):  # an enum behind anyOf and $ref is no free text either
                    continue
                limit = _max_length(sub, spec.schema)
                if isinstance(limit, int) and limit < 6:
                    continue
                out.append((name, limit if isinstance(limit, int) else None))
        self._varied_fields[spec.type] = out
        return out

    def _allows(self, spec: EventSpec, path: Path, value: Any) -> bool:
        """Whether `spec`'s schema allows `value` at `path` (the subschema there, `schema_at`, checked
        with the references and ``format``s of the whole); True where no schema describes it."""
        sub = schema_at(spec.schema, path)
        validator = self.catalog.validator(spec.type) if sub is not None else None
        return validator is None or bool(validator.evolve(schema=sub).is_valid(value))

    def _vary(self, value: str, limit: int | None) -> str:
        """`value` with a space and 4 random letters and digits after it (within `limit` characters)."""
        suffix = " " + self._maker.token(4)
        return (value[: limit - len(suffix)] if limit is not None else value) + suffix

    def _key_fields(self, spec: EventSpec) -> list[Path]:
        """Paths a key template names, other than the object id, the event id and the type."""
        if spec.key is None:
            return []
        from re import findall

        fixed = {parse_path(spec.object_id)}
        if spec.event_id:
            fixed.add(parse_path(spec.event_id))
        if self.catalog.type_field:
            fixed.add(parse_path(self.catalog.type_field))
        if spec.status_path:
            fixed.add(parse_path(spec.status_path))
        fixed |= set(self._ref_paths(spec))  # another object's id: the one it names, never a new value
        out = []
        for name in findall(r"\{([^{}]*)\}", spec.key):
            path = tuple(name.strip().split("."))
            if name.strip() and path not in fixed:
                out.append(path)
        return out

    def _key_number(self, spec: EventSpec, body: dict[str, Any], path: Path, oid: str, current: int) -> None:
        """Give the integer key field at `path` of object `oid`'s event its own value (`emit`).

        A count (a name saying so, `_COUNT_NAME`: ``attempt_count``, ``retry_number``; or an
        example value below 2) goes up by one from `current`: two declined attempts of one
        invoice are two reminders. Any other number (an amount, such as Lemon Squeezy's
        cumulative ``refunded_amount``, never above the order's ``total``) rises within the
        type's example value v, the object's k-th event at that path (from 0) carrying
        v - v // 2**(k+1) (1199: 600, 900, 1050…, each above the last and below v), and the
        fields beside it named after it move with it (`_move_with`). A value with nowhere left
        to rise (v // 2**(k+1) is 0) goes up by one."""
        base = self._bases[spec.type]
        example = get_path(base, path) if has_path(base, path) else None
        seen = self._key_numbers.get((oid, path), 0)
        self._key_numbers[(oid, path)] = seen + 1
        if (_COUNT_NAME.search(path[-1]) or not isinstance(example, int) or isinstance(example, bool)
                or example < 2 or example // 2 ** (seen + 1) == 0):
            set_path(body, path, current + 1)
            return
        value = example - example // 2 ** (seen + 1)
        set_path(body, path, value)
        self._move_with(body, base, path, example, value)

    @staticmethod
    def _move_with(body: dict[str, Any], base: Mapping[str, Any], path: Path, example: int, value: int) -> None:
        """The fields beside `path` named after it (``refunded_amount_usd``,
        ``refunded_amount_formatted``), moved as the number at `path` moved from `example` to
        `value`: an integer in proportion (the example's 1199 USD of 1199 stays equal to it), a
        string showing the example in major units (``"$11.99"``) showing `value` instead."""
        parent, name = path[:-1], path[-1]
        node = get_path(body, parent) if parent else body
        before = get_path(base, parent) if parent and has_path(base, parent) else (base if not parent else None)
        if not isinstance(node, dict) or not isinstance(before, Mapping):
            return
        shown = f"{example / 100:.2f}"
        for sibling, was in before.items():
            if not sibling.startswith(name + "_") or sibling not in node:
                continue
            if isinstance(was, int) and not isinstance(was, bool):
                node[sibling] = round(value * was / example)
            elif isinstance(was, str) and re.search(rf"(?<![0-9.]){re.escape(shown)}(?![0-9])", was):
                node[sibling] = re.sub(rf"(?<![0-9.]){re.escape(shown)}(?![0-9])", f"{value / 100:.2f}", was)

    @staticmethod
    def _ref_paths(spec: EventSpec) -> list[Path]:
        """The paths of `spec`'s references (`EventSpec.refs`)."""
        return [parse_path(p) for p in spec.refs or ()]

    def _fresh(self, spec: EventSpec, path: Path, hint: str) -> str | int:
        """A new value for an id-like field (kept in `fresh_ids`), never one the world drew before
        (`_unique`): a UUID; an integer (the example's is one) from the world's increasing
        sequence of as many digits as the example's, at least 9; or a string of the example's
        shape: its prefix (up to its last ``_``) kept, the rest drawn from its alphabet
        (`InstanceMaker.like`: ``user_`` + 27 letters and digits stays so), as long as the
        example's or, when that shape allows fewer than `json_instances.MIN_ID_SPACE` values,
        longer (`json_instances.widened`: Lemon Squeezy's documented ``"1"`` gives nine digits,
        the first other than 0); with no example, ``<kind>_`` + 24 letters and digits."""
        value = self._unique(lambda: self._fresh_value(spec, path, hint))
        self.fresh_ids.append(str(value))
        return value

    def _unique(self, draw: Callable[[], _T]) -> _T:
        """`draw()`'s value, drawn again while the world drew it before (as text): no two of its
        objects, events or nested ids share one (a shape allows `json_instances.MIN_ID_SPACE`
        values at least, so a redraw is rare). Raises WorldError after 1000 draws in a row that
        were all taken."""
        for _ in range(1000):
            value = draw()
            if str(value) not in self._drawn and str(value) not in self._objects:
                self._drawn.add(str(value))
                return value
        raise WorldError("every id of the example's shape drawn 1000 times was taken")

    def _fresh_value(self, spec: EventSpec, path: Path, hint: str) -> str | int:
        sub = schema_at(spec.schema, path)
        example = get_path(spec.example, path) if spec.example is not None and has_path(spec.example, path) \
            else None
        if example is None and sub is not None and isinstance(sub.get("examples"), list) and sub["examples"]:
            example = sub["examples"][0]
        kind = schema_type(sub) or (type(example).__name__ if example is not None else "string")
        if kind in ("integer", "int"):  # a provider's sequence: increasing, from a random start
            digits = max(9, len(str(abs(example)))) if isinstance(example, int) else 9
            counter = self._counters.get(digits, self._rng.randrange(10 ** (digits - 1), 9 * 10 ** (digits - 1)))
            self._counters[digits] = counter + 1 + self._rng.randrange(7)
            return self._counters[digits]
        version = _uuid_format(sub)
        if version is not None or (isinstance(example, str) and _is_uuid(example)):
            return self._maker.uuid(version or 4)
        if isinstance(example, str) and shape_alphabet(example.rsplit("_", 1)[-1]):
            prefix, _, tail = example.rpartition("_")  # the example's prefix, then its tail's shape
            wide = prefix + _ + widened(tail)
            if not _schema_allows(sub, wide):  # the user's schema bounds the id: its example's length
                return prefix + _ + self._maker.like(tail)
            return prefix + _ + self._maker.like(widened(tail))
        return f"{hint.replace('.', '_')[:12]}_{self._maker.token(24)}"

    def _typed_id(self, spec: EventSpec, path: Path, value: str) -> str | int:
        """`value` as the field's JSON type (an integer id stays an integer)."""
        kind = schema_type(schema_at(spec.schema, path))
        if kind is None and spec.example is not None and has_path(spec.example, path):
            kind = "integer" if isinstance(get_path(spec.example, path), int) else None
        return int(value) if kind == "integer" and str(value).isdigit() else value

    def _ordering(self, spec: EventSpec, version: int, at_us: int) -> Any:
        """The ordering field's value at `version`: an RFC 3339 time (strings), a counter
        (integers whose example is small, or named ``version``/``seq``), unix seconds or ms."""
        path = parse_path(spec.ordering or "")
        sub = schema_at(spec.schema, path)
        example = get_path(spec.example, path) if spec.example is not None and has_path(spec.example, path) \
            else None
        kind = schema_type(sub) or ("integer" if isinstance(example, int) else "number" if isinstance(example, float)
                                    else "string")
        if kind == "string":
            return _time_value(_time_unit(path, spec) or "rfc3339", at_us)
        name = path[-1].lower()
        if (isinstance(example, int) and example < 1_000_000) or "version" in name or "seq" in name:
            return version
        if isinstance(example, (int, float)) and example > 10**11:
            return at_us // 1000
        return at_us // 1_000_000 if kind == "integer" else at_us / 1_000_000


#: The name of a key field that counts (``attempt_count``, ``retry_number``, ``seq``): it goes up by one.
_COUNT_NAME = re.compile(r"count|attempt|number|retr|seq|version|times", re.IGNORECASE)
#: The name of an object's own sequence number (``order_number``, ``invoiceNumber``, ``number``): an
#: integer there is the object's own, greater for a later object (`_own_identities`).
_SEQUENCE_NAME = re.compile(r"(?:^|_)(?:number|no)$|[a-z]Number$")
#: A name that counts something rather than numbering the object (``retry_number``, ``attempt_number``).
_TALLY_NAME = re.compile(r"count|attempt|retr|seq|version|times|step|page|line", re.IGNORECASE)
#: An RFC 3339 date-time (``2026-01-01T00:00:00Z``, fractions and offsets allowed).
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", re.IGNORECASE)
#: A field name that says it holds a time (``timestamp``, ``created``, ``occurred_at``, ``sentAt``…).
_TIME_NAME = re.compile(r"(?i:timestamp|time|date|created|occurred|_at|^ts)$|[a-z]At$|^(?i:created|occurred|timestamp)")
#: The name of an object's creation time (``created_at``, ``created``, ``createdAt``, ``date_created``…).
_CREATED = re.compile(r"created(_at|_on|_time|At|On)?|date_created|creation_(time|date)")
#: An object's last-change time (a new user's ``data.updated_at``, kept at its example's value
#: while the envelope's ``timestamp`` moved, made a receiver ordering by it keep the older).
_UPDATED = re.compile(r"(updated|modified)(_at|_on|_time|At|On)?|date_(updated|modified)|last_(updated|modified)(_at)?")
#: A description that says an integer is a unix time, and in milliseconds.
_UNIX_WORDS = re.compile(r"\b(unix|epoch|posix)\b", re.IGNORECASE)
_MS_WORDS = re.compile(r"\b(ms|millis|milliseconds?)\b", re.IGNORECASE)


def _schema_allows(schema: Mapping[str, Any] | None, text: str) -> bool:
    """Whether a string as long as `text`, of its characters, meets `schema`'s ``maxLength`` and
    ``pattern`` (a user's schema may bound an id's length: its ids are then never widened)."""
    if schema is None:
        return True
    limit = schema.get("maxLength")
    if isinstance(limit, int) and len(text) > limit:
        return False
    pattern = schema.get("pattern")
    try:
        return not isinstance(pattern, str) or re.search(pattern, text) is not None
    except re.error:
        return True


def _branches(schema: Any, root: Any) -> list[Mapping[str, Any]]:
    """`schema` and every subschema it is made of at the same place: its ``$ref``s followed in
    `root` (each once), its ``anyOf``/``oneOf``/``allOf`` branches; ``{"type": "null"}`` left out."""
    out: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    todo = [schema]
    while todo:
        node = todo.pop(0)
        if isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            if node["$ref"] in seen:
                continue
            seen.add(node["$ref"])
            try:
                node = deref(node, root)
            except KeyError:
                continue
        if not isinstance(node, Mapping) or node.get("type") == "null":
            continue
        out.append(node)
        for combinator in ("anyOf", "oneOf", "allOf"):
            todo += [b for b in node.get(combinator) or () if isinstance(b, Mapping)]
    return out


def _constrained(schema: Mapping[str, Any], root: Any) -> bool:
    """True when a part of `schema` (`_branches`: a nullable enum is ``anyOf [{$ref: Reason}, null]``)
    says an ``enum``, ``const``, ``pattern`` or ``format``: its strings are no free text."""
    return any(k in part for part in _branches(schema, root) for k in ("enum", "const", "pattern", "format"))


def _max_length(schema: Mapping[str, Any], root: Any) -> int | None:
    """The least ``maxLength`` a part of `schema` gives (`_branches`), or None."""
    limits = [part["maxLength"] for part in _branches(schema, root) if isinstance(part.get("maxLength"), int)]
    return min(limits) if limits else None


def schema_error(error: Any) -> tuple[str, str]:
    """Where a `jsonschema` error is (the dotted path, or ``the top``) and one line saying what failed.

    An ``anyOf``/``oneOf`` whose branches fail deeper goes down to the deepest of those errors
    (the branch of the value's own type: a nullable object's, not ``null``'s); one whose branches refuse the value itself says so with
    each branch's reason (``'other x' is not valid under any of the given schemas ('other x' is not
    one of ['unused', 'other']; None is not of type 'null')``, the instance shortened). The
    instance each message starts with is shortened, never the reason."""
    while error.context and error.validator in ("anyOf", "oneOf"):
        deeper = [e for e in error.context if e.relative_path]
        if deeper:  # a branch of the value's own type failed inside: the error it got furthest to
            error = max(deeper, key=lambda e: len(e.relative_path))
            continue
        reasons = list(dict.fromkeys(_said(e) for e in error.context))
        break
    else:
        reasons = []
    at = ".".join(str(p) for p in error.absolute_path) or "the top"
    reason = _said(error)
    if reasons:
        reason += " (" + "; ".join(reasons) + ")"
    return at, reason if len(reason) <= 400 else reason[:399] + "…"


def _said(error: Any) -> str:
    """`error`'s message with the instance it starts with shortened (`_short`)."""
    import reprlib

    shown = repr(error.instance)
    message = str(error.message)
    if message.startswith(shown):
        shorten = reprlib.Repr()
        shorten.maxstring, shorten.maxother, shorten.maxlist, shorten.maxdict, shorten.maxlevel = 40, 40, 4, 3, 2
        short = shorten.repr(error.instance)
        return short + message[len(shown):]
    return message.splitlines()[0] if message else str(error.validator)


def _rename_in_urls(body: dict[str, Any], parent: Path, old: str, new: str) -> None:
    """In the object's part of `body` (at `parent`), every URL string (``scheme://…``) with a
    path segment equal to `old` (the example's object id) gets `new` there instead: Lemon
    Squeezy's ``links.self`` ``…/v1/orders/1`` and ``relationships.*.links`` ``…/orders/1/store``
    name the object. Only whole segments of a URL's path change: a ``1`` elsewhere stays."""
    from urllib.parse import urlsplit, urlunsplit

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, str) and _URL.match(value):
            parts = urlsplit(value)
            segments = parts.path.split("/")
            if old in segments:
                path = "/".join(new if segment == old else segment for segment in segments)
                return urlunsplit(parts._replace(path=path))
        return value

    node = get_path(body, parent) if parent and has_path(body, parent) else (body if not parent else None)
    if isinstance(node, dict):
        remade = walk(node)
        node.clear()
        node.update(remade)


#: A URL as a body gives one: a scheme, then ``://``.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def _time_nodes(body: Mapping[str, Any], parent: Path) -> list[Path]:
    """Where an object's own times live: the object's part of `body` (at `parent`, beside its
    id) and, in a JSON:API resource (Lemon Squeezy's), its ``attributes`` object; those present."""
    node = get_path(body, parent) if parent and has_path(body, parent) else (body if not parent else None)
    if not isinstance(node, Mapping):
        return []
    attributes = node.get("attributes")
    return [parent, (*parent, "attributes")] if isinstance(attributes, Mapping) else [parent]


def _every_type(event_type: str) -> bool:
    """`UserCatalogWorld`'s default endpoint: sent every type."""
    return True


def _time_unit(path: Path, spec: EventSpec) -> str | None:
    """How the body writes the time at `path`: ``"rfc3339"`` followed by the example's text after
    its seconds (``"rfc3339.000000Z"``: Lemon Squeezy's whole seconds with six zeros; bare
    ``"rfc3339"``: microseconds and ``Z``, a schema's ``date-time``), ``"ms"`` or ``"s"`` (unix
    milliseconds or seconds), or None when it cannot tell the field is a time.

    The example's value decides: an RFC 3339 string; an integer under a time's name
    (`_TIME_NAME`), ms from 10**11 to 10**14 and s from 10**8 to 10**11. With no example
    value, the schema's: a ``date-time`` string; an integer under a time's name whose
    description says it is a unix time (``ms``/``milliseconds`` in it: ms)."""
    example = get_path(spec.example, path) if spec.example is not None and has_path(spec.example, path) else None
    name = path[-1]
    if isinstance(example, str):
        return "rfc3339" + example[19:] if _RFC3339.fullmatch(example) else None
    if isinstance(example, int) and not isinstance(example, bool):
        if not _TIME_NAME.search(name):
            return None
        return "ms" if 10**11 <= example < 10**14 else "s" if 10**8 <= example < 10**11 else None
    if example is not None:
        return None
    sub = schema_at(spec.schema, path)
    if sub is None:
        return None
    kind = schema_type(sub)
    if kind == "string":
        return "rfc3339" if sub.get("format") == "date-time" else None
    described = str(sub.get("description") or "")
    if kind == "integer" and _TIME_NAME.search(name) and _UNIX_WORDS.search(described):
        return "ms" if _MS_WORDS.search(described) else "s"
    return None


def _time_value(unit: str, at_us: int) -> str | int:
    """The time `at_us` (unix microseconds) in `unit` (`_time_unit`)."""
    if unit == "ms":
        return at_us // 1000
    if unit == "s":
        return at_us // 1_000_000
    tail = unit[len("rfc3339"):]
    if not tail:
        return rfc3339_us(at_us)
    fraction, offset = re.fullmatch(r"(?:\.(\d+))?(.*)", tail).groups()  # type: ignore[union-attr]
    when = _EPOCH + timedelta(microseconds=at_us)
    if offset.upper() != "Z":  # the example's offset, its time of day in it
        sign = -1 if offset.startswith("-") else 1
        hours, minutes = offset[1:].split(":")
        when = when.astimezone(timezone(sign * timedelta(hours=int(hours), minutes=int(minutes))))
    text = when.strftime("%Y-%m-%dT%H:%M:%S")
    if fraction:  # as many digits as the example's; all zeros when it printed whole seconds so
        digits = f"{when.microsecond:06d}".ljust(len(fraction), "0")[:len(fraction)]
        text += "." + ("0" * len(fraction) if set(fraction) == {"0"} else digits)
    return text + offset


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _time_us(value: Any, unit: str) -> int | None:
    """`value` written in `unit` (`_time_unit`) as unix microseconds, or None when it is not."""
    if unit.startswith("rfc3339"):
        if not isinstance(value, str) or not _RFC3339.fullmatch(value):
            return None
        parsed = datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))
        return (parsed - _EPOCH) // timedelta(microseconds=1)
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    return value * 1000 if unit == "ms" else value * 1_000_000


def _fixed(schema: Mapping[str, Any] | None) -> bool:
    """True when `schema` allows one value only (``const``, or an ``enum`` of one)."""
    if schema is None:
        return False
    enum = schema.get("enum")
    return "const" in schema or (isinstance(enum, list) and len(enum) == 1)


#: Strings that are not free text: ids (``user_2Tq7…``, UUIDs), times, emails, URLs.
_NOT_FREE = re.compile(r"[A-Za-z]+_[A-Za-z0-9]{6,}|[^\s@]+@[^\s@]+|[a-z][a-z0-9+.-]*://\S*|[0-9a-fA-F-]{32,36}")


#: A nested id an object's example gives (``idn_2Tq7Pa1Sd2Fg3Hj4Kl5Zx6Cv7Bn``): a lowercase
#: prefix, ``_``, and at least 8 letters and digits with a digit among them.
_NESTED_ID = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*_(?=[A-Za-z]*[0-9])[A-Za-z0-9]{8,}")
#: The last part of a type's name that says the object is gone (``user.deleted``,
#: ``customers/redact`` is not one: the customer stays).
ENDING_ACTIONS = frozenset({"deleted", "removed", "destroyed"})


def ends_object(event_type: str) -> bool:
    """True when `event_type`'s last ``.``- or ``/``-separated part is one of `ENDING_ACTIONS`:
    after it no event of that object comes (``organizationMembership.deleted``)."""
    return re.split(r"[./]", event_type)[-1] in ENDING_ACTIONS


#: A field naming the object's id in the team's own system (``external_id``, ``externalId``): its
#: plain value (`_PLAIN_ID`) is the object's own too, as Clerk's external_id "must be unique across
#: your instance" (Backend API, CreateUser). Other ids by name (a ``product_id``) may be shared.
_ID_NAME = re.compile(r"external[_-]?id", re.IGNORECASE)
#: A value an id's name gives that no other rule takes for one: letters, digits and ``-``,
#: with a digit, 4 to 64 characters (``567772``, ``cust-8841``).
_PLAIN_ID = re.compile(r"(?=[A-Za-z0-9-]*[0-9])[A-Za-z0-9-]{4,64}")
#: An email address as an example gives one.
_EMAIL = re.compile(r"[^\s@]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")


def _not_free(text: str) -> bool:
    return bool(_NOT_FREE.fullmatch(text) or _RFC3339.fullmatch(text))


def _uuid_format(schema: Mapping[str, Any] | None) -> int | None:
    """The UUID version `schema`'s ``format`` asks for (`json_instances.uuid_version`), looking
    into its ``anyOf``/``oneOf`` branches (a nullable id: ``anyOf [{format: uuid4}, null]``)."""
    if not schema:
        return None
    version = uuid_version(schema.get("format"))
    for branch in (*(schema.get("anyOf") or ()), *(schema.get("oneOf") or ())):
        if version is None and isinstance(branch, Mapping):
            version = uuid_version(branch.get("format"))
    return version


def _is_uuid(text: str) -> bool:
    import uuid

    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return len(text) == 36


def catalog_to_plain(catalog: UserCatalog) -> dict[str, Any]:
    """`catalog` as plain JSON data (every schema and example as loaded, ``$ref``s bundled;
    a value JSON lacks, such as a YAML date, as its text), which `catalog_from_plain` turns
    back into the catalog: how a storm hands a user's catalog to its Locust processes,
    which may run on machines without the config's files."""
    import dataclasses

    return {"name": catalog.name, "type_field": catalog.type_field, "test_mode": catalog.test_mode,
            "events": [json.loads(json.dumps(dataclasses.asdict(s), default=str)) for s in catalog.events]}


def catalog_from_plain(plain: Mapping[str, Any], render_key: KeyRenderer | None) -> UserCatalog:
    """The `UserCatalog` of `catalog_to_plain`'s data, its keys rendered by `render_key`.
    Raises WorldError when `plain` is not such data."""
    try:
        events = tuple(EventSpec(**spec) for spec in plain["events"])
        return UserCatalog(events, type_field=plain.get("type_field"), render_key=render_key,
                           name=str(plain.get("name") or "catalog"), test_mode=plain.get("test_mode"))
    except (KeyError, TypeError) as exc:
        raise WorldError(f"not a catalog's data: {type(exc).__name__}: {exc}") from None


def user_events_of_type(world: UserCatalogWorld, event_type: str, count: int = 1) -> list[Event]:
    """`count` events of `event_type`, each about a new object (after its kind's first type).

    Raises WorldError naming the catalog's types.
    """
    spec = world.catalog.spec(event_type)
    return [world.emit_new(spec) for _ in range(count)]


__all__ = ["BODY", "ENDING_ACTIONS", "REFS", "CannotMake", "EventSpec", "InvalidBody", "KeyRenderer", "ends_object", "USER_API_VERSION", "UserCatalog", "UserCatalogWorld",
           "catalog_from_plain", "catalog_to_plain", "schema_error", "user_events_of_type"]
