"""The provider API's truth during a storm: every object the storm's replays are about.

A storm's senders replay a few template stories under fresh ids (`loadtests.stories`),
copy after copy, as fast as the load shape asks; the provider API must know each of those
objects before its first event is delivered, on whichever machine it was sent from. It
can: every process's template world is deterministic from the storm's seed, the
process's index and the storm's clock start (`StormSpec.world_start_us`), so the provider
API builds the same templates (`template_worlds`) and serves any renamed id from its
template, renamed on the fly (`served_world`): ``GET /v1/payments/<a copy's id>`` answers
that copy's payment, at its final version (a storm's clock does not move with
deliveries).

With the provider-API transient (`StormSpec.api_transient`), a chosen object fails its
first fetch: half "not visible yet" (404, `served_world`), half a 500 (`transient_outage`,
a `Switches.first_request` rule `serve_truth` installs); later fetches serve it.

`served_world` wraps a `RecordWorld` (Mercado Pago, Paddle, and any other world built on
it), a `GitHubWorld` or the billing `World` in a subclass of its own class, so the
provider routes that look for their world's class find it; only the reading interface
(``has``, ``get``, ``version``, ``object_type``, ``event``, and GitHub's ``find``) is
served: no list shows a storm's objects, and an object a receiver creates (``POST
/v1/customers``) is not served back. The billing world's ids are renamed by their pattern
(`BillingRenamer`, `loadtests.stories.renamed`), the others' by an `IdRenamer`.
Pure; no Locust import.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from hookproof.loadtests.plan import api_transient_status
from hookproof.loadtests.renaming import IdRenamer
from hookproof.loadtests.spec import StormSpec
from hookproof.loadtests.stories import (
    STORIES,
    cut_at_tails,
    original_id,
    play_stories,
    process_seed,
    renamed,
    renamed_text,
    storm_sends,
    tail,
    template_world,
)
from hookproof.simulator.errors import WorldError
from hookproof.simulator.events import Event
from hookproof.simulator.server.state import Switch
from hookproof.simulator.world import World


class BillingRenamer:
    """The billing world's renaming (`loadtests.stories.renamed`) with an `IdRenamer`'s
    interface: `value`, `events`, `cut`, `join`, `original` (over the ids of one template world)."""

    def __init__(self, world: World) -> None:
        self._heads: dict[str, str] = {}
        for oid in [*world.objects(), *(e.id for e in world.events)]:
            found = original_id(oid)
            if found is not None:
                self._heads[found[0]] = oid

    def value(self, value: Any, copy_no: int) -> Any:
        return json.loads(renamed_text(json.dumps(value), copy_no))

    def events(self, story: Any, copy_no: int) -> list[Event]:
        return renamed(list(story), copy_no)

    def cut(self, text: str) -> tuple[str, ...]:
        """`text` split around its ids' tails (`join` renames it as `renamed_text` would)."""
        return cut_at_tails(text)

    def join(self, parts: tuple[str, ...], copy_no: int) -> str:
        return tail(copy_no).join(parts)

    def joiner(self, copy_no: int) -> Callable[[tuple[str, ...]], str]:
        """`join` for one copy (its tail computed once)."""
        return tail(copy_no).join

    def original(self, renamed_id: str) -> tuple[str, int] | None:
        found = original_id(renamed_id)
        if found is None or found[0] not in self._heads:
            return None
        return self._heads[found[0]], found[1]


def renamer_of(world: Any) -> "IdRenamer | BillingRenamer":
    """How a template `world`'s ids are renamed per copy."""
    return BillingRenamer(world) if isinstance(world, World) else IdRenamer.of(world)


class _RenamedReads:
    """The reading interface of a template world, for its renamed copies."""

    _renamer: "IdRenamer | BillingRenamer"
    _api_transient: float
    _hides: bool  # an object may be "not visible yet" (False for Stripe's)
    _fetched: set[str]
    _objects: dict[str, Any]
    _event_index: dict[str, Event]
    _template: Any

    def _record(self, object_id: str) -> Any:
        found = self._renamer.original(object_id)
        record = self._objects.get(found[0]) if found is not None else None
        if found is None or record is None:
            raise WorldError(f"no object {object_id}", object_id=object_id)
        copy_no = found[1]
        return type(record)(record.object_type, [self._renamer.value(v, copy_no) for v in record.versions])

    def has(self, object_id: str) -> bool:
        found = self._renamer.original(object_id)
        if found is None or not (found[0] in self._objects or found[0] in self._event_index):
            return False
        if self._api_transient and self._hides and found[0] in self._objects \
                and api_transient_status(object_id, self._api_transient) == 404 and object_id not in self._fetched:
            # objects only, as the deliveries' tag: an event's own id is never "not visible yet"
            self._fetched.add(object_id)  # "not visible yet" once: the provider API's transient
            return False
        return True

    def serves_object(self, object_id: str) -> bool:
        """True when `object_id` is one of the storm's objects (not an event) this world serves."""
        found = self._renamer.original(object_id)
        return found is not None and found[0] in self._objects

    def event(self, event_id: str) -> Event:
        found = self._renamer.original(event_id)
        template = self._event_index.get(found[0]) if found is not None else None
        if found is None or template is None:
            raise WorldError(f"no event {event_id}", object_id=event_id)
        return self._renamer.events([template], found[1])[0]

    def line_items(self, session: str) -> list[dict[str, Any]]:
        """A renamed Checkout Session's line items: its template's, renamed as the copy's (the
        billing world keeps them by the template's session id)."""
        found = self._renamer.original(session)
        if found is None or found[0] not in self._objects:
            raise WorldError(f"no object {session}", object_id=session)
        items: list[dict[str, Any]] = self._renamer.value(self._template.line_items(found[0]), found[1])
        return items

    def objects(self, object_type: str | None = None) -> list[str]:
        """None listed: a storm's objects are countless (each is served by its id)."""
        return []

    def find(self, full_name: str, number: int) -> str | None:
        """GitHub's lookup of issue or pull request `number` of a renamed repository."""
        object_id = f"{full_name}#{number}"
        found = self._renamer.original(object_id)
        return object_id if found is not None and found[0] in self._objects else None


_CLASSES: dict[type, type] = {}


def served_world(template: Any, renamer: "IdRenamer | BillingRenamer | None" = None, *,
                 api_transient: float = 0.0) -> Any:
    """A world the provider API serves in place of `template`'s renamed copies (see the
    module docstring); `renamer` defaults to `renamer_of(template)`. The share
    `api_transient` of objects (`plan.api_transient_object`) is not found on its first
    lookup, as a provider's read replica that has not caught up."""
    cls = type(template)
    served_cls = _CLASSES.get(cls)
    if served_cls is None:
        served_cls = _CLASSES[cls] = type(f"Storm{cls.__name__}", (_RenamedReads, cls), {})
    world: Any = object.__new__(served_cls)
    world.__dict__.update(template.__dict__)
    world._template = template  # what the template alone reads by its own ids (a session's line items)
    world._renamer = renamer or renamer_of(template)
    world._objects = dict(template._objects)  # a write (POST /v1/...) must not reach the template
    world.events = []  # no list shows a storm's events (the template's are not the storm's)
    world._api_transient = api_transient
    world._hides = template.api_hides_new_objects  # False for Stripe's: its 404 half is a 503
    world._fetched = set()
    return world


def transient_outage(worlds: list[Any], share: float) -> Callable[[str], Switch | None] | None:
    """The provider API's 5xx half of the transient (`plan.api_transient_status`), as a rule
    for `Switches.first_request`: the first fetch of each chosen object of `worlds`
    (`served_world`s) is answered 500, then the object is served. None when `share` is 0.
    The 404 half is `served_world`'s (the object "not visible yet" on its first lookup),
    but for Stripe's objects: answered 503 (Stripe documents no "not visible yet"; its 404
    is "no such object", which dj-stripe takes as deleted)."""
    if share <= 0:
        return None
    outage, unavailable = Switch(status=500), Switch(status=503)

    def rule(object_id: str) -> Switch | None:
        status = api_transient_status(object_id, share)
        if status == 500:
            return outage if any(w.serves_object(object_id) for w in worlds) else None
        if status == 404:
            return unavailable if any(not w._hides and w.serves_object(object_id) for w in worlds) else None
        return None

    return rule


def template_worlds(spec: StormSpec, processes: int) -> list[Any]:
    """The template worlds of a storm's `processes` sending processes (worker indexes 0
    to processes-1; a single local process is index 0), their stories played as each
    process plays them."""
    profile = spec.sending_profile()
    sends = storm_sends(profile, spec.enabled_types, spec.keys).sends_type
    worlds = []
    for index in range(max(1, processes)):
        world = template_world(profile.world, process_seed(spec.seed, index), live=spec.live, account=spec.account,
                               start_us=spec.world_start_us, checkout_modes=spec.checkout_modes)
        world.sent_only(sends)  # the endpoint's stories, as its senders tell them (`StormState.story_book`)
        play_stories(world, STORIES)
        worlds.append(world)
    return worlds


def storm_start_us(spec: StormSpec, processes: int, *, now_us: int | None = None) -> int:
    """The clock start (unix µs, a whole second) of a storm of `processes` sending
    processes so that no template story of any of them is dated after `now_us` (default: now;
    `simulator.world.registry.story_start_us`): every copy is sent later, so no event a storm
    sends is dated after it is sent. A billing template's stories renew monthly one after
    another, so they start a few years back."""
    from hookproof.simulator.world import story_start_us

    profile = spec.sending_profile()
    sends = storm_sends(profile, spec.enabled_types, spec.keys).sends_type
    starts = []
    for index in range(max(1, processes)):
        seed = process_seed(spec.seed, index)

        def make(start_us: int, seed: int = seed) -> Any:
            world = template_world(profile.world, seed, live=spec.live, account=spec.account, start_us=start_us,
                                   checkout_modes=spec.checkout_modes)
            world.sent_only(sends)  # the endpoint's stories, as its senders tell them
            return world

        starts.append(story_start_us(make, lambda world: play_stories(world, STORIES), now_us=now_us))
    return min(starts)


def storm_truth(spec: StormSpec, processes: int) -> list[Any]:
    """What the provider API serves for a storm of `processes` sending processes."""
    return [served_world(w, api_transient=spec.api_transient) for w in template_worlds(spec, processes)]


def serve_truth(state: Any, spec: StormSpec, processes: int) -> None:
    """Let the provider API (`state`, a `simulator.server.state.ServerState`) serve the storm's
    objects (`storm_truth`), with the transient's 5xx half on their first fetch
    (`transient_outage`, on `state.switches`)."""
    worlds = storm_truth(spec, processes)
    for world in worlds:
        state.add_world(world)
    state.switches.first_request(transient_outage(worlds, spec.api_transient))


__all__ = ["BillingRenamer", "renamer_of", "serve_truth", "served_world", "storm_start_us", "storm_truth", "template_worlds",
           "transient_outage"]
