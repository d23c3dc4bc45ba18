"""World stories for storms: built once per process, replayed with fresh ids.

A storm sends far more events than a `World` can build at its pace (each lifecycle
renders many object snapshots), so a Locust process builds a few customer lifecycles
once (`StoryBook`) and replays them, every replay with fresh ids: a copy number
replaces the last 6 characters of every world id (`renamed`). The renamed story keeps
the same truth (versions, statuses, amounts, business keys) about new objects.

Rendering a renamed event through its profile costs a JSON round trip per event, so
`StoryBook` also keeps each template's envelope cut at its id tails: a replay is a
join of byte segments. That shortcut is used only for templates where it was shown,
at build time, to give exactly the profile's own rendering for two different copies
(body bytes, dedupe id, headers, query); the others (profiles that derive ids with a
hash, e.g. Standard Webhooks' ``msg_`` ids) are rendered by the profile every time.

Worlds other than billing (GitHub's, Mercado Pago's, Paddle's, any `RecordWorld`) replay
their own lifecycles the same way, their ids renamed in their own formats
(`loadtests.renaming.IdRenamer`) and every replay rendered by the profile.
`template_world` builds the world a process replays, so the provider API can build the
very same one and serve the storm's objects (`loadtests.storm_truth`).
Pure; no Locust import.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, replace
from functools import partial
from types import MappingProxyType
from typing import Any, AnyStr, Callable, Collection, Iterable, Iterator, Mapping, NamedTuple

from hookproof.loadtests.renaming import IdRenamer
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.base import Envelope, Profile, new_envelope
from hookproof.simulator.world import World
from hookproof.simulator.world.lifecycle import RELATED_TYPES
from hookproof.simulator.world.user_catalog import REFS, USER_API_VERSION

#: A world id: a lowercase prefix (``cs_test`` included), 18 to 52 characters kept (a Checkout
#: Session's tail is 58), 6 renamed.
_WORLD_ID = re.compile(r"\b([a-z]{2,5}(?:_test|_live)?_[A-Za-z0-9]{18,52})[A-Za-z0-9]{6}\b")
_WORLD_ID_BYTES = re.compile(_WORLD_ID.pattern.encode("ascii"))
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
#: Length of the renamed tail of a world id, in characters.
TAIL_CHARS = 6
#: Copy numbers a tail can hold (62 ** 6).
MAX_COPIES = 62 ** TAIL_CHARS
#: World lifecycles a storm process builds once and replays.
STORIES = 16


def process_seed(seed: int, worker_index: int) -> int:
    """The seed of one storm process's world and plans (a worker's index, 0 for a single
    local process): the same on every run of one storm seed."""
    return seed * 1_000_003 + (max(0, worker_index) + 1) * 7919


def template_world(kind: str, seed: int, *, live: bool = False, account: str | None = None,
                   start_us: int | None = None, checkout_modes: Iterable[str] | None = None) -> Any:
    """A fresh world of `kind` (``billing``, ``github``, ``mercadopago``, ``paddle``…) from
    `seed`, starting at `start_us` (unix microseconds; None: now); a billing world's shop opens
    Checkout Sessions of `checkout_modes` alone (`World.checkout_modes`; None: both)."""
    if kind == "billing":
        world = World(seed, livemode=live, account=account, start_us=start_us)
        if checkout_modes is not None:
            world.checkout_modes = frozenset(checkout_modes)
        return world
    from hookproof.simulator.world.registry import new_world

    return new_world(kind, seed, livemode=live, account=account, start_us=start_us)


def play_story(world: Any, index: int) -> list[Event]:
    """Story `index` of a storm's mix, played now: the world's `storm_story(index)` where it
    has one (GitHub's: its lifecycle, to an App sent the checks its last push's CI re-run after it,
    then an issue and a pull request each closed, reopened and closed again, in turn; Shopify's:
    its own shop's app uninstalled, then the next shop's lifecycles, never uninstalled), else its
    lifecycle. Each one's events."""
    mix = getattr(world, "storm_story", None)
    return list(mix(index) if mix is not None else world.lifecycle())


def play_stories(world: Any, stories: int = STORIES) -> list[list[Event]]:
    """`stories` stories of `world`'s storm mix (`play_story`), played now: each one's events."""
    return [play_story(world, index) for index in range(stories)]


class StormSends:
    """Which events of a story a storm sends (`storm_sends` makes it).

    Called with an event: True when it is of a type `sendable` accepts (the profile sends it and
    the receiver subscribes to it) and `owes` accepts it (an effect, a state, a related first
    event). `story` keeps, of one story, those and every other event `sendable` accepts about an
    object one of them is about: a provider sends an endpoint the object's whole story (Paddle's
    ``transaction.paid`` beside the ``transaction.completed`` a team's keys make effectful), so
    a receiver applying an effect on an event that owes none too applies it twice (``duplicated``).
    """

    def __init__(self, sends_type: Callable[[str], bool], owes: Callable[[Event], bool]) -> None:
        #: True for a type (world name) the profile sends and the receiver subscribes to
        self.sends_type = sends_type
        self.owes = owes

    def sendable(self, e: Event) -> bool:
        """True when `e` is of a type the storm may send (`sends_type`)."""
        return self.sends_type(e.type)

    def __call__(self, e: Event) -> bool:
        return self.sendable(e) and self.owes(e)

    def story(self, events: Collection[Event]) -> list[Event]:
        """`events` (one story, in emitted order) less those a storm does not send. The creating
        event of an object a kept event names (a user catalog's references, `REFS`: a
        membership's user) is kept too, when sendable: the provider sent the parent first."""
        objects = {e.object_id for e in events if self(e)}
        kept = {id(e) for e in events if self.sendable(e) and (e.object_id in objects or self.owes(e))}
        first: dict[str, Event] = {}
        for e in events:
            first.setdefault(e.object_id, e)
        todo = [e for e in events if id(e) in kept]
        while todo:
            for ref in (todo.pop().extra.get(REFS) or {}).values():
                parent = first.get(ref)
                if parent is not None and id(parent) not in kept and self.sendable(parent):
                    kept.add(id(parent))
                    todo.append(parent)
        return [e for e in events if id(e) in kept]


def storm_sends(profile: Profile, enabled: Collection[str] | None = None,
                team_keys: Mapping[str, Any] | None = None) -> StormSends:
    """Which events of a story a storm sends: those of a type `profile` sends and the receiver
    subscribes to (`enabled`, world type names; None: every type) that owe an effect (a
    user catalog's key; a built-in business key unless the team turned them off, ``builtin_keys = false``, or
    mapped the type to none; a type the team's `[business_keys]` maps to a key or its
    `[counters]` names: `team_keys` as `scenarios.business_keys.to_plain` makes it), move an
    object's state, or are one of a new object's first events a provider emits together
    (`lifecycle.RELATED_TYPES`: a payment's ``charge.succeeded`` beside its
    ``payment_intent.succeeded``, which a receiver granting from either type must not grant
    twice). The storm's related bursts release those together. Of a whole story
    (`StormSends.story`), every other event of those types about the same objects too."""
    kept = set(enabled) if enabled is not None else None
    plain = team_keys or {}
    templates = plain.get("templates") or {}
    builtin = bool(plain.get("builtin", True))
    team = {t for t, template in templates.items() if template is not None}
    team |= set(plain.get("counters") or {}) | set(plain.get("more") or {})
    related = frozenset().union(*RELATED_TYPES)

    def sends_type(world_type: str) -> bool:
        return profile.provider_type(world_type) is not None and (kept is None or world_type in kept)

    def owes(e: Event) -> bool:
        # a user catalog's keys are the team's own: kept whatever builtin_keys says (`KeyMapping.key_of`)
        keyed = (e.business_key is not None and e.type not in templates
                 and (builtin or e.api_version == USER_API_VERSION))
        return keyed or e.stateful or e.type in team or e.type in related

    return StormSends(sends_type, owes)


class Rendered(NamedTuple):
    """An event and its envelope, or None when the sender renders it (`build_attempt`).

    `again`, when the source can, renders the very same event and envelope anew (equal
    fields and bytes): what keeps an item for a later redelivery holds that, not the body.
    """

    event: Event
    envelope: Envelope | None
    again: "Callable[[], Rendered] | None" = None


def tail(copy_no: int) -> str:
    """`copy_no` as 6 base-62 characters. Raises ValueError outside [0, 62**6)."""
    if not 0 <= copy_no < MAX_COPIES:
        raise ValueError(f"copy number {copy_no} is outside [0, {MAX_COPIES})")
    out = ""
    for _ in range(TAIL_CHARS):
        copy_no, r = divmod(copy_no, 62)
        out = _BASE62[r] + out
    return out


def story_events(world: World, keep: Callable[[Event], bool]) -> Iterator[Event]:
    """Endless customer lifecycles of `world` (pay, subscribe, renew, fail, recover,
    refund, cancel), keeping the events `keep` accepts, in emitted order.

    Stops (instead of looping forever) if 100 lifecycles in a row keep no event.
    """
    barren = 0
    while barren < 100:
        kept = [e for e in world.lifecycle() if keep(e)]
        barren = 0 if kept else barren + 1
        yield from kept


def renamed(story: list[Event], copy_no: int) -> list[Event]:
    """`story` with every world id's last 6 characters replaced by `copy_no` in base 62:
    the same truth (versions, statuses, amounts, keys) about fresh objects and events.

    Ids are renamed in the event id, object id, business key, snapshot, previous
    attributes, request id and extras alike, so the renamed story stays consistent.
    """
    new_tail = tail(copy_no)

    def sub(text: str) -> str:
        return _WORLD_ID.sub(lambda m: m.group(1) + new_tail, text)

    out = []
    for e in story:
        payload = json.loads(sub(json.dumps([e.object, e.previous_attributes, dict(e.extra)])))
        out.append(replace(e, id=sub(e.id), object_id=sub(e.object_id), object=payload[0],
                           previous_attributes=payload[1], extra=payload[2],
                           business_key=sub(e.business_key) if e.business_key else None,
                           request_id=sub(e.request_id) if e.request_id else None))
    return out


def renamed_text(text: str, copy_no: int) -> str:
    """`text` with every billing-world id's last 6 characters replaced by `copy_no` (`renamed`'s rule)."""
    new_tail = tail(copy_no)
    return _WORLD_ID.sub(lambda m: m.group(1) + new_tail, text)


def original_id(renamed_id: str) -> tuple[str, int] | None:
    """(the id's first part, copy number) of a billing-world id renamed by `renamed`, or None
    when `renamed_id` does not have a world id's shape."""
    m = _WORLD_ID.fullmatch(renamed_id)
    if m is None:
        return None
    copy_no = 0
    for ch in renamed_id[-TAIL_CHARS:]:
        copy_no = copy_no * 62 + _BASE62.index(ch)
    return m.group(1), copy_no


def cut_at_tails(text: AnyStr) -> tuple[AnyStr, ...]:
    """`text` (str or bytes) split around its world-id tails: ``new_tail.join(parts)`` renames it."""
    pattern = _WORLD_ID_BYTES if isinstance(text, bytes) else _WORLD_ID
    parts, start = [], 0
    for m in pattern.finditer(text):
        parts.append(text[start:m.end(1)])
        start = m.end(1) + TAIL_CHARS
    parts.append(text[start:])
    return tuple(parts)


def _fixed(values: Mapping[str, str]) -> Mapping[str, str] | None:
    """`values` as a read-only mapping every copy shares, or None if a value holds a world id."""
    if any(len(cut_at_tails(v)) > 1 for v in values.values()):
        return None
    return MappingProxyType(dict(values))


@dataclass(frozen=True)
class _Cut:
    """One template event and its envelope, cut at the world-id tails."""

    fields: dict[str, Any]  # the template's other fields, without its object snapshot
    event_id: tuple[str, ...]
    object_id: tuple[str, ...]
    business_key: tuple[str, ...] | None
    request_id: tuple[str, ...] | None
    envelope_id: tuple[str, ...]
    envelope_type: str
    body: tuple[bytes, ...]
    headers: tuple[tuple[str, tuple[str, ...]], ...]
    query: tuple[tuple[str, tuple[str, ...]], ...]
    fixed_headers: Mapping[str, str] | None  # the headers when no value holds a world id
    fixed_query: Mapping[str, str] | None  # the same for the query

    @classmethod
    def of(cls, event: Event, envelope: Envelope) -> "_Cut":
        renamed_fields = {"id", "object_id", "business_key", "request_id"}
        fields = {f.name: getattr(event, f.name) for f in dataclasses.fields(event) if f.name not in renamed_fields}
        fields.update(object={}, previous_attributes=None, extra={})
        return cls(
            fields=fields, event_id=cut_at_tails(event.id), object_id=cut_at_tails(event.object_id),
            business_key=cut_at_tails(event.business_key) if event.business_key else None,
            request_id=cut_at_tails(event.request_id) if event.request_id else None,
            envelope_id=cut_at_tails(envelope.event_id), envelope_type=envelope.type, body=cut_at_tails(envelope.body),
            headers=tuple((k, cut_at_tails(v)) for k, v in envelope.headers.items()),
            query=tuple((k, cut_at_tails(v)) for k, v in envelope.query.items()),
            fixed_headers=_fixed(envelope.headers), fixed_query=_fixed(envelope.query),
        )

    def render(self, new_tail: str) -> Rendered:
        """The event and envelope of this template under `new_tail` (a slim event: the
        object snapshot stays out, as the sender and the checks read only its fields).

        Neither frozen constructor runs (the values come from the template's instances,
        already validated): the event's fields are written straight into a new instance's
        dict, the template's first, in the order keyword arguments to `dict.update` gave
        them before, and the envelope (a slots class) is built by `new_envelope`; a storm
        renders one per event it sends, and this takes half the time of both constructors."""
        event = _new(Event)
        fields = event.__dict__
        fields.update(self.fields)
        fields["id"] = new_tail.join(self.event_id)
        fields["object_id"] = new_tail.join(self.object_id)
        fields["business_key"] = new_tail.join(self.business_key) if self.business_key else None
        fields["request_id"] = new_tail.join(self.request_id) if self.request_id else None
        # an empty mapping is a fresh dict, as before; a fixed one is shared by every copy
        envelope = new_envelope(
            new_tail.join(self.envelope_id), self.envelope_type, new_tail.encode("ascii").join(self.body),
            self.fixed_headers or ({k: new_tail.join(v) for k, v in self.headers} if self.headers else {}),
            self.fixed_query or ({k: new_tail.join(v) for k, v in self.query} if self.query else {}))
        return Rendered(event, envelope, partial(self.render, new_tail))


#: A new instance of a class, its constructor not run (`_Cut.render`).
_new = object.__new__


def _same(a: Rendered, b: Rendered) -> bool:
    ea, eb = a.event, b.event
    va, vb = a.envelope, b.envelope
    assert va is not None and vb is not None
    return ((ea.id, ea.object_id, ea.business_key, ea.request_id) == (eb.id, eb.object_id, eb.business_key, eb.request_id)
            and (va.event_id, va.type, va.body, dict(va.headers), dict(va.query))
            == (vb.event_id, vb.type, vb.body, dict(vb.headers), dict(vb.query)))


#: Copy numbers the shortcut is proven on (they differ in every tail character).
_PROOF_COPIES = (1, MAX_COPIES - 1)


class StoryBook:
    """`stories` stories of `world`'s storm mix (`play_story`) kept by `keep`, rendered once by `profile`
    (`pause`, if given, is called between two stories and two events while they are built).

    `stream` replays them with fresh ids; different `first_copy` values with the same
    `stride` give disjoint ids (one per storm user of a process). A billing `World` is
    renamed by its id pattern (and replayed by joining segments where proven); any other
    world by its `IdRenamer` (`renamer`, None until built), rendered by the profile.
    """

    def __init__(self, world: Any, profile: Profile, keep: Callable[[Event], bool], *,
                 stories: int = STORIES, pause: Callable[[], None] | None = None) -> None:
        self.profile = profile
        rest = pause or (lambda: None)  # between two stories: a Locust process answers its master meanwhile
        played = []
        for index in range(stories):
            played.append(play_story(world, index))
            rest()
        self.renamer: IdRenamer | None = None if isinstance(world, World) else IdRenamer.of(world)
        whole = keep.story if isinstance(keep, StormSends) else (lambda story: [e for e in story if keep(e)])
        self.templates: list[list[Event]] = [kept for kept in (whole(story) for story in played) if kept]
        self._cuts: list[list[_Cut | Event]] = []
        for story in self.templates:
            cuts: list[_Cut | Event] = []
            for e in story:
                if self.renamer is None:
                    cuts.append(self._cut_or_event(e))
                    rest()  # each cut renders its event three times
                else:
                    cuts.append(e)
            self._cuts.append(cuts)

    @property
    def max_copies(self) -> int:
        """Copy numbers `stream` may use (below this)."""
        return MAX_COPIES if self.renamer is None else min(MAX_COPIES, self.renamer.max_copies)

    @property
    def shortcut_share(self) -> float:
        """Share of template events replayed by joining segments (the rest are re-rendered)."""
        flat = [c for story in self._cuts for c in story]
        return sum(isinstance(c, _Cut) for c in flat) / len(flat) if flat else 0.0

    def _cut_or_event(self, event: Event) -> "_Cut | Event":
        cut = _Cut.of(event, self.profile.envelope(event))
        for copy_no in _PROOF_COPIES:
            if not _same(cut.render(tail(copy_no)), self.rendered_by_profile(event, copy_no)):
                return event
        return cut

    def rendered_by_profile(self, event: Event, copy_no: int) -> Rendered:
        """`event` renamed to `copy_no` and rendered by the profile (the slow, sure way)."""
        full = renamed([event], copy_no)[0] if self.renamer is None else self.renamer.events([event], copy_no)[0]
        return Rendered(full, self.profile.envelope(full), partial(self.rendered_by_profile, event, copy_no))

    def render(self, story: int, index: int, copy_no: int) -> Rendered:
        """Event `index` of story `story` under copy number `copy_no`."""
        item = self._cuts[story][index]
        if isinstance(item, _Cut):
            return item.render(tail(copy_no))
        return self.rendered_by_profile(item, copy_no)

    def stream(self, *, first_copy: int = 1, stride: int = 1, max_events: int = 50_000_000) -> Iterator[Rendered]:
        """Every story under copy `first_copy`, then `first_copy + stride`, …, at most
        `max_events` events (and never past the last copy number)."""
        if first_copy < 0 or stride < 1:
            raise ValueError("first_copy must be >= 0 and stride >= 1")
        count = 0
        copy_no = first_copy
        while self._cuts and count < max_events and copy_no < self.max_copies:
            new_tail = tail(copy_no)
            for story in self._cuts:
                for item in story:
                    if count >= max_events:
                        return
                    yield item.render(new_tail) if isinstance(item, _Cut) else self.rendered_by_profile(item, copy_no)
                    count += 1
            copy_no += stride


__all__ = ["MAX_COPIES", "STORIES", "Rendered", "StoryBook", "cut_at_tails", "original_id", "play_stories",
           "play_story", "process_seed", "renamed", "renamed_text", "StormSends", "storm_sends", "story_events",
           "tail", "template_world"]
