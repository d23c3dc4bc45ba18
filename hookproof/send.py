"""`hookproof send`: deliver one event type to a URL with faults, like `stripe trigger`."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Callable, Iterator

from hookproof.errors import UsageError
from hookproof.simulator.delivery import Attempt, Dispatcher, History, Target, url_problem
from hookproof.simulator.events import Event
from hookproof.simulator.faults import FaultPlan, schedule
from hookproof.simulator.profiles import Profile
from hookproof.simulator.server.state import DEFAULT_API_KEY
from hookproof.simulator.world import AnyWorld, emit_events, new_world, story_start_us


@dataclass(frozen=True)
class SendOptions:
    """What `hookproof send` was asked to do (secrets are passed separately)."""

    profile: Profile
    url: str
    event: str | None = None
    copies: int = 1
    concurrent: bool = False
    reverse: bool = False
    objects: int = 1
    drop_response: bool = False
    sender_timeout_s: float | None = None
    seed: int | None = None
    live: bool = False
    time_scale: float = 1e-6
    max_duration_s: float | None = None  # whole-run deadline (default `default_max_duration_s()`)
    serve_api_port: int | None = None  # serve the world on the provider API at 127.0.0.1:<port> (0: a free port)
    api_key: str = DEFAULT_API_KEY  # the key the served provider API accepts
    account: str | None = None  # the provider account the events come from (`target.account`)
    checkout_mode: str | None = None  # the mode of the Checkout Session a checkout.session.* event comes from
    api_version: str | None = None  # the Stripe API version the events are rendered at (None: the latest modelled)


#: Seconds the provider API `send --serve-api` starts stays up after the last attempt, for a
#: receiver that fetches the objects after it answers (as Mercado Pago's docs advise).
API_GRACE_S = 2.0


def default_max_duration_s() -> float:
    """send's whole-run deadline when ``--max-duration`` is not given: certify's default
    (``run.max_duration_s``, 900 s). The profile's retry schedule itself is compressed
    (`SendOptions.time_scale`), so a run lasts about attempts × the sender timeout; the
    deadline bounds the rest (a receiver that never answers, many copies)."""
    from hookproof.config_model import RunConfig

    return float(RunConfig.model_fields["max_duration_s"].default)


class SendInterrupted(KeyboardInterrupt):
    """Ctrl-C during `send`, or its deadline: `attempts` are the attempts recorded before
    it; `reason` is the deadline's one line (``deadline.deadline_note``), None for Ctrl-C."""

    def __init__(self, attempts: list[Attempt], reason: str | None = None) -> None:
        super().__init__(reason or f"{len(attempts)} attempt(s) made")
        self.attempts = attempts
        self.reason = reason


def first_line(text: str, limit: int = 120) -> str:
    """The first non-blank line of an answer's body, at most `limit` characters ("" if none):
    what a table shows of a receiver's HTML error page (``--json`` has all of it)."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[:limit - 1] + "…"


def attempt_line(a: Attempt) -> str:
    """One attempt as a progress line: event, try, status, outcome, time, and why."""
    why = a.error or ("" if a.outcome.value == "acked" else first_line(a.response_excerpt))
    return (f"send: {a.event_type} {a.event_id} try {a.attempt}: {a.status or '-'} {a.outcome.value} "
            f"({a.completion.value}) in {a.latency_ms:.0f} ms" + (f": {why}" if why else ""))


def resolve_event(profile: Profile, name: str | None) -> str:
    """The world event type for `name`, given as a world type or the provider's own name.

    Raises UsageError naming the event types the profile sends (for a real Stripe type the
    stripe profile does not model, `simulator.profiles.stripe_types`, saying so).
    """
    if name is None:
        return profile.default_event
    types = profile.event_types()
    if name in types or name in profile.optional_types:  # an optional type named is one asked for
        return name
    if profile.name == "stripe":
        from hookproof.simulator.profiles.stripe import CONNECT_EVENT_TYPES

        if name in CONNECT_EVENT_TYPES:  # a Connect endpoint's: `send` asks for the connected account
            return name
    for stripe_type, provider_type in types.items():
        if provider_type == name:
            return stripe_type
    known = ", ".join(sorted(set(types.values()) | set(profile.optional_types)))
    if profile.name == "stripe":
        from hookproof.simulator.profiles.stripe_types import STRIPE_WEBHOOK_TYPES

        if name in STRIPE_WEBHOOK_TYPES:
            raise UsageError(f"--event: Stripe sends {name!r}, and hookproof does not model it yet (it sends: {known})")
    if profile.name == "shopify":
        from hookproof.simulator.profiles.shopify_topics import SHOPIFY_WEBHOOK_TOPICS

        if name in SHOPIFY_WEBHOOK_TOPICS:
            raise UsageError(f"--event: Shopify sends {name!r}, and hookproof does not model it yet (it sends: {known})")
    from hookproof.config_model import nearest

    # the closest names it sends first, as the config's enabled_events error names them
    hint = nearest(name, known.split(", "))
    from hookproof.catalog_file import CATALOG_PROFILES

    # the profiles taking a [catalog] send the billing world's types until one names others
    own = ("; your own event types (a provider hookproof does not ship) are sent from a config's [catalog]: "
           "--config hookproof.toml" if profile.name in CATALOG_PROFILES
           and not profile.world.startswith("catalog:") else "")
    raise UsageError(f"--event: the {profile.title} profile sends no event {name!r} "
                     f"({hint + ' ' if hint else ''}known: {known}){own}")


def check_checkout_mode(profile: Profile, stripe_type: str, mode: str | None) -> None:
    """Raise UsageError unless `mode` (``--checkout-mode``; None: nothing asked) is a Checkout
    Session mode that emits `stripe_type` (a world type) in `profile`'s world: the billing world's
    sessions (`simulator.world.scripts.CHECKOUT_MODE_SCRIPTS`)."""
    if mode is None:
        return
    from hookproof.simulator.world.scripts import CHECKOUT_MODE_SCRIPTS

    if profile.world != "billing":
        raise UsageError(f"--checkout-mode: the {profile.title} profile sends no Stripe Checkout Sessions")
    scripts = CHECKOUT_MODE_SCRIPTS.get(mode)
    if scripts is None:
        raise UsageError(f"--checkout-mode: {mode!r} is not a mode (known: {', '.join(CHECKOUT_MODE_SCRIPTS)})")
    if stripe_type not in scripts:
        sent = profile.event_types()
        names = ", ".join(sorted(str(sent.get(t, t)) for t in scripts))
        raise UsageError(f"--checkout-mode {mode}: a {mode}-mode Checkout Session emits no "
                         f"{sent.get(stripe_type, stripe_type)} (it emits {names})")


def check_connect_event(profile: Profile, stripe_type: str, account: str | None) -> None:
    """Raise UsageError when `stripe_type` is one Stripe sends a Connect endpoint about a
    connected account (`stripe.CONNECT_EVENT_TYPES`: ``account.updated``, a new seller's
    onboarding) and no connected account is given (`account`: the endpoint's, the ``--config``'s
    ``target.account``)."""
    if profile.name != "stripe":
        return
    from hookproof.simulator.profiles.stripe import CONNECT_EVENT_TYPES

    if stripe_type in CONNECT_EVENT_TYPES and not account:
        raise UsageError(f"--event {stripe_type}: Stripe sends it a Connect endpoint about a connected account; give "
                         "a --config whose [target] names the endpoint's connected account (account = \"acct_…\")")


def latest_per_object(events: list[Event]) -> list[Event]:
    """One event per object: the latest of `events` about each (in the order of those kept).

    The smallest story for a type may emit it more than once for its object (Stripe's
    ``customer.subscription.updated``: the subscription becomes active, then renews); `send`
    delivers one event per object (``--objects``), so it keeps the latest: the one the object's
    current state, served with ``--serve-api``, agrees with.
    """
    last = {e.object_id: i for i, e in enumerate(events)}
    return [e for i, e in enumerate(events) if last[e.object_id] == i]



def send_world_seed(seed: int, event_type: str) -> int:
    """The seed of the world `send --seed seed --event event_type` tells (`event_type` in the
    world's names): each type its own world of the seed, so two sends of one seed never give two
    events one id (a Paddle ``event_id``, a Stripe ``evt_``: every provider's dedupe key), and one
    type sent again is the same event. Derived as certify's scenarios derive theirs."""
    from hookproof.scenarios.runner import scenario_seed

    return scenario_seed(seed, event_type)


def send(options: SendOptions, secrets: list[str], history: History | None = None,
         serving: Callable[[str], None] | None = None, noting: Callable[[str], None] | None = None) -> list[Attempt]:
    """Build a world, emit the event, deliver it with the faults, return the attempts.

    Attempts are recorded into `history` (default: a new in-memory one) as they end, so
    a caller can show them live. With `options.serve_api_port`, the world is served on the
    provider API (`simulator.server`, accepting `options.api_key`) from before the first
    attempt until `API_GRACE_S` after the last, and `serving` is called with its base URL
    first, `noting` at the end with the provider API's note on the Stripe-Versions it served in
    an older modelled shape (`ServerState.api_version_note`), if any; a port that cannot be had is a UsageError. Raises UsageError for a bad URL or event,
    SendInterrupted on Ctrl-C, and at `options.max_duration_s` (certify's deadline,
    `deadline.run_deadline`; only on the main thread) with its `reason` set: no attempt
    starts after it, and the attempts in flight then are not recorded.
    """
    import random

    from hookproof.deadline import run_deadline

    problem = url_problem(options.url)  # the same check as the config's target.url (and Target's)
    if problem is not None:
        raise UsageError(f"--url: {problem}")
    target = Target(url=options.url)
    stripe_type = resolve_event(options.profile, options.event)
    check_checkout_mode(options.profile, stripe_type, options.checkout_mode)
    check_connect_event(options.profile, stripe_type, options.account)
    seed = options.seed if options.seed is not None else random.SystemRandom().randrange(2**31)
    world_seed = send_world_seed(seed, stripe_type)

    def make(start_us: int) -> AnyWorld:
        return new_world(options.profile.world, world_seed, livemode=options.live, account=options.account or None,
                         start_us=start_us, **({"api_version": options.api_version} if options.api_version else {}))

    def tell(world: AnyWorld) -> list[Event]:
        return emit_events(world, stripe_type, options.objects, checkout_mode=options.checkout_mode)

    world = make(story_start_us(make, tell))  # nothing dated after it is sent
    events = latest_per_object(tell(world))
    copies = options.copies
    plan = FaultPlan(
        copies=copies,
        concurrency=copies if options.concurrent else 1,
        order="reversed" if options.reverse else "emitted",
        drop_responses=1 if options.drop_response else 0,
        sender_timeout_s=options.sender_timeout_s,
    )
    history = History() if history is None else history

    async def run() -> None:
        async with Dispatcher(target, options.profile, secrets, history, time_scale=options.time_scale) as d:
            await d.run(schedule(events, plan))
        if options.serve_api_port is not None:
            await asyncio.sleep(API_GRACE_S)

    limit_s = options.max_duration_s if options.max_duration_s is not None else default_max_duration_s()
    notes: list[str] = []
    try:
        with _served(world, options, serving, noting), run_deadline(limit_s, notes, source="--max-duration",
                                                            after="no attempt was started after that") as disarm:
            asyncio.run(run())
            disarm()
    except KeyboardInterrupt:
        raise SendInterrupted(history.attempts(), notes[0] if notes else None) from None
    return history.attempts()


@contextlib.contextmanager
def _served(world: AnyWorld, options: SendOptions, serving: Callable[[str], None] | None,
            noting: Callable[[str], None] | None = None) -> Iterator[None]:
    """Serve `world` on the provider API while the block runs, when `options` asks for it;
    then its note on unmodelled Stripe-Versions, if any, to `noting`."""
    if options.serve_api_port is None:
        yield
        return
    from hookproof.simulator.server.runner import run_server
    from hookproof.simulator.server.state import ServerState

    state = ServerState([world], api_keys=[options.api_key])  # type: ignore[list-item]  # any provider's world, as certify serves
    try:
        handle = run_server(state, port=options.serve_api_port)
    except OSError as exc:  # ListenError: "cannot listen on 127.0.0.1:PORT: why"
        raise UsageError(f"--serve-api: {exc}") from None
    with handle:
        if serving is not None:
            serving(handle.api_base)
        yield
    note = state.api_version_note()
    if note is not None and noting is not None:
        noting(note)
