"""Which world a profile's events come from: the seam between profiles and worlds.

Each profile names its world (`Profile.world`): ``billing`` (Stripe's billing objects,
`simulator.world.world.World`, also used by the other billing-like providers for now)
or ``github`` (the repository world, `simulator.world.github.GitHubWorld`), ``mercadopago``
(payments and merchant orders, `simulator.world.mercadopago.MercadoPagoWorld`) or
``paddle`` (Paddle Billing's subscriptions, `simulator.world.paddle.PaddleWorld`) or
``shopify`` (a shop's orders, refunds and customers, `simulator.world.shopify.ShopifyWorld`).
`new_world` builds a fresh one, `emit_events` runs the story that makes it emit a given
event type, `world_event_types` lists the types a world kind emits, and `story_start_us`
dates a story so that none of its events is dated after the moment it is told.

A user's own event catalog (`simulator.world.user_catalog.UserCatalog`) is a world kind
too: `register_catalog` records it under its content's kind (``catalog:<digest>``), which
a profile bound to the catalog names as its `Profile.world`.
"""

from __future__ import annotations

import time
from typing import Callable, Mapping, TypeVar, Union

from hookproof.simulator.errors import WorldError
from hookproof.simulator.events import Event
from hookproof.simulator.world.github import GitHubWorld
from hookproof.simulator.world.github_lifecycle import GITHUB_CHECK_TYPES, GITHUB_EVENT_TYPES
from hookproof.simulator.world.github_scripts import github_events_of_type
from hookproof.simulator.world.mercadopago import MERCADOPAGO_EVENT_TYPES, MercadoPagoWorld, mercadopago_events_of_type
from hookproof.simulator.world.paddle import PADDLE_EVENT_TYPES, PaddleWorld, paddle_events_of_type
from hookproof.simulator.world.scripts import SCRIPTS, events_of_type
from hookproof.simulator.world.shopify import SHOPIFY_EVENT_TYPES, ShopifyWorld, shopify_events_of_type
from hookproof.simulator.world.user_catalog import UserCatalog, UserCatalogWorld, user_events_of_type
from hookproof.simulator.world.world import World

#: Any world a profile can send from.
AnyWorld = Union[World, GitHubWorld, MercadoPagoWorld, PaddleWorld, ShopifyWorld, UserCatalogWorld]

#: World kind -> its class (the constructor takes ``seed`` and the keywords ``livemode``,
#: ``account``, ``start_us``, ``step_us``).
WORLDS: Mapping[str, Callable[..., AnyWorld]] = {"billing": World, "github": GitHubWorld,
                                                 "mercadopago": MercadoPagoWorld, "paddle": PaddleWorld,
                                                 "shopify": ShopifyWorld}


_W = TypeVar("_W", bound="AnyWorld")

#: Registered user catalogs by world kind (``catalog:<digest>``, `UserCatalog.kind`).
CATALOGS: dict[str, UserCatalog] = {}


def register_catalog(catalog: UserCatalog) -> str:
    """Make `catalog` a world kind; its kind (the same for the same content, so registering
    again is harmless; the latest key renderer wins)."""
    CATALOGS[catalog.kind] = catalog
    return catalog.kind


def new_world(kind: str, seed: int = 0, **options: object) -> AnyWorld:
    """A fresh world of `kind` (a key of `WORLDS`) from `seed`.

    `options` are the constructor's keywords (``livemode``, ``account``, ``start_us``,
    ``step_us``). Raises WorldError naming the known kinds.
    """
    if kind in CATALOGS:
        return UserCatalogWorld(seed, catalog=CATALOGS[kind], **options)  # type: ignore[arg-type]
    factory = WORLDS.get(kind)
    if factory is None:
        raise WorldError(f"unknown world {kind!r} (known: {', '.join(sorted(WORLDS))})")
    return factory(seed, **options)


def story_start_us(make: Callable[[int], _W], tell: Callable[[_W], object], *, now_us: int | None = None) -> int:
    """The clock start (unix µs, a whole second) of a world `make(start_us)` builds so that
    the story `tell(world)` makes ends at or before `now_us` (default: now): a provider dates
    an event when it happens, before it delivers it, never after (GitHub's ``updated_at``,
    Stripe's ``created``, Paddle's ``occurred_at``). The story is told once in a scratch world
    started at `now_us` to measure it (a world's steps and a renewal's month do not depend on
    where its clock starts); a story `tell` cannot tell starts at `now_us` (its own build
    reports why)."""
    now = (now_us if now_us is not None else int(time.time() * 1_000_000)) // 1_000_000 * 1_000_000
    scratch = make(now)
    try:
        tell(scratch)
    except Exception:
        return now
    ends = max((e.created_us for e in scratch.events), default=now)
    lead_s = -(-(ends - now) // 1_000_000)  # whole seconds, rounded up
    return now - max(0, lead_s) * 1_000_000


def emit_events(world: AnyWorld, event_type: str, count: int = 1, *, checkout_mode: str | None = None) -> list[Event]:
    """Make `world` emit `event_type` `count` times; the events of that type. `checkout_mode`
    (the billing world's alone: `scripts.events_of_type`) picks the mode of the Checkout
    Session a ``checkout.session.*`` type comes from.

    Raises WorldError naming the types the world emits, or for a `checkout_mode` given to
    another world.
    """
    if checkout_mode is not None and not isinstance(world, World):
        raise WorldError("only Stripe's billing world has Checkout Sessions to pick a mode of")
    if isinstance(world, GitHubWorld):
        return github_events_of_type(world, event_type, count)
    if isinstance(world, MercadoPagoWorld):
        return mercadopago_events_of_type(world, event_type, count)
    if isinstance(world, PaddleWorld):
        return paddle_events_of_type(world, event_type, count)
    if isinstance(world, ShopifyWorld):
        return shopify_events_of_type(world, event_type, count)
    if isinstance(world, UserCatalogWorld):
        return user_events_of_type(world, event_type, count)
    return events_of_type(world, event_type, count, checkout_mode=checkout_mode)


def world_event_types(kind: str) -> tuple[str, ...]:
    """Every event type a world of `kind` can be made to emit (its scripts' types)."""
    if kind == "github":
        return GITHUB_EVENT_TYPES + GITHUB_CHECK_TYPES
    if kind == "mercadopago":
        return MERCADOPAGO_EVENT_TYPES
    if kind == "paddle":
        return PADDLE_EVENT_TYPES
    if kind == "shopify":
        return SHOPIFY_EVENT_TYPES
    if kind in CATALOGS:
        return CATALOGS[kind].types
    return tuple(SCRIPTS)


__all__ = ["CATALOGS", "WORLDS", "AnyWorld", "emit_events", "new_world", "register_catalog", "story_start_us",
           "world_event_types"]
