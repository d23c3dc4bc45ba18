"""Targets the state machine drives: one example's receiver, how to open it, and the
provider API routed to in-process receivers (respx)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from hookproof.scenarios.observations import Observation
from hookproof.simulator.delivery import Target
from hookproof.simulator.profiles.base import Profile

#: Base URL in-process receivers are given for the provider API (routed by respx, never resolved).
PROVIDER_API_BASE = "http://provider.hookproof.test"


# ---- targets ----------------------------------------------------------------------------

@dataclass
class Prepared:
    """One example's receiver: where to deliver, how to observe it, how to release it."""

    target: Target
    observe: Callable[[], Observation]
    close: Callable[[], None] = lambda: None


@dataclass
class ExploreTarget:
    """What the machine explores, and how each example gets a receiver.

    Attributes:
        profile: signs and envelopes deliveries.
        secrets: the receiver's secrets (never reported).
        open: called once per example; returns the receiver to use (it may be shared
            between examples: ids are fresh per example).
        describe: the target as reports name it.
        in_process: True for in-process apps (the deterministic tier: bursts are on).
        live / account: the receiver's environment and account.
        settle_window_s / settle_deadline_s / settle_interval_s / settle_stall_s: liveness settle at
            teardown (`observers.settle`).
        fell_short: an example's teardown waited its settle deadline, or `settle_stall_s` of
            unchanged reads, for what the receiver owed and never saw it (`session.Session._settle`); later examples give a
            read that falls short the window only.
        enabled: the event types the receiver is sent, in the world's names (the config's
            ``enabled_events``); None: every type the profile sends.
        keys: the team's business keys and counters (`scenarios.business_keys.KeyMapping`,
            the config's ``[business_keys]``/``[counters]``); None: hookproof's built-in keys.
        state_fields: the observer's declared state fields (`scenarios.state_fields.StateFields`,
            ``[observer.state_fields]``): the events carry each object's combined state, and
            with a subscription's, the billing world's operations change plans; None: statuses.
        checkout_modes: the modes the shop's Checkout opens sessions in (the config's
            ``checkout_modes``, `World.checkout_modes`); None: both.
        stored_bursts: the observer reads objects' states (`hookproof explore` sets it from the
            config: an observer with a state query, or an ``http`` or ``python`` one), so the
            machine races two later updates of an object whose state the receiver stored
            (`statemachine`'s ``burst_stored``); False: it has no such rule (a rule drawn at
            all changes every search's draws).
        ops_memo: the world operations the search's examples draw from, per (world kind,
            priced), made once (`Session`: `world_ops.focused` on what the endpoint is sent).
    """

    profile: Profile
    secrets: Sequence[str]
    open: Callable[[], Prepared]
    describe: str
    in_process: bool = True
    live: bool = False
    account: str | None = None
    settle_window_s: float = 0.05
    settle_deadline_s: float = 5.0
    settle_stall_s: float | None = 5.0
    settle_interval_s: float = 0.005
    enabled: frozenset[str] | None = None
    keys: Any = None
    state_fields: Any = None
    checkout_modes: frozenset[str] | None = None
    stored_bursts: bool = False
    fell_short: bool = field(default=False, init=False)
    ops_memo: dict[tuple[str, bool], Any] = field(default_factory=dict, init=False, repr=False)

    def sends_type(self, world_type: str) -> bool:
        """True when the receiver is sent events of `world_type` (a world name): the profile
        sends it and `enabled` lists it (or is None)."""
        return self.profile.provider_type(world_type) is not None and (self.enabled is None
                                                                       or world_type in self.enabled)

    def tell(self, world: Any) -> None:
        """Tell a fresh `world` what this endpoint is sent (`tell_world`): every world an example,
        a replay or a schedule's check plays steps on is told the same."""
        tell_world(world, self.sends_type, self.checkout_modes)


def tell_world(world: Any, sends_type: Callable[[str], bool], checkout_modes: frozenset[str] | None) -> None:
    """Tell a fresh `world`, before any step plays, the endpoint's types (`sends_type` of a world
    type name: ``World.sent_only``, a GitHub App's checks, Stripe's ``invoice.payment_succeeded``)
    and the shop's Checkout modes (`checkout_modes`, None: both), as explore's sessions are told:
    what an operation emits depends on both."""
    world.sent_only(sends_type)  # its stories are the endpoint's (a Checkout intent's license)
    if checkout_modes is not None and hasattr(world, "checkout_modes"):
        world.checkout_modes = checkout_modes  # the shop's own Checkout


def sends_of(profile: Profile, enabled: frozenset[str] | None) -> Callable[[str], bool]:
    """`ExploreTarget.sends_type` of an endpoint sent `enabled` (world names; None: every type
    `profile` sends), without a receiver."""
    return lambda world_type: profile.provider_type(world_type) is not None and (enabled is None
                                                                                 or world_type in enabled)


def shared_target(target: Target, observe: Callable[[], Observation], profile: Profile, secrets: Sequence[str],
                  **options: Any) -> ExploreTarget:
    """An ExploreTarget whose every example uses the same receiver (fresh ids keep them apart)."""
    prepared = Prepared(target, observe)
    options.setdefault("in_process", target.in_process)
    return ExploreTarget(profile=profile, secrets=tuple(secrets), open=lambda: prepared, describe=target.describe(),
                         **options)


# ---- the provider API for in-process receivers --------------------------------------------

def _bridge(make_app: Callable[[], Any]) -> Callable[[Any], Any]:
    """A respx side effect answering a request with the in-process ASGI app `make_app()`
    makes, made on the first request (a search whose receiver never calls the API never
    builds it: its routes take longer to build than a hundred examples take to run).

    Receivers call the API from worker threads with sync httpx clients, so the app is
    run on a private event loop (in a helper thread when the caller's thread has one).
    """
    import threading

    import httpx

    made: list[httpx.ASGITransport] = []
    lock = threading.Lock()

    def app_transport() -> httpx.ASGITransport:
        with lock:
            if not made:
                made.append(httpx.ASGITransport(app=make_app()))
            return made[0]

    def handler(request: Any) -> Any:
        transport = app_transport()
        try:
            body = request.content
        except httpx.RequestNotRead:
            body = request.read()
        inner = httpx.Request(request.method, request.url, headers=request.headers, content=body)

        async def go() -> httpx.Response:
            response = await transport.handle_async_request(inner)
            content = await response.aread()
            return httpx.Response(response.status_code, headers=response.headers, content=content)

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(go())
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, go()).result()

    return handler


@contextmanager
def provider_api(state: Any, base_url: str = PROVIDER_API_BASE) -> Iterator[Any]:
    """Route httpx calls to `base_url` into the simulator's provider API over `state` (respx).

    Every other request passes through untouched. Yields the respx router.
    """
    from urllib.parse import urlsplit

    import respx

    def make_app() -> Any:
        from hookproof.simulator.server.app import create_app

        return create_app(state)

    host = urlsplit(base_url).hostname
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as router:
        router.route(host=host).mock(side_effect=_bridge(make_app))
        router.route().pass_through()
        yield router
