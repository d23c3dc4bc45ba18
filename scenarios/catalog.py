"""The scenario catalog: named fault plans over world scripts, with their checks.

Ids are stable (DESIGN.md, "Scenario catalog"). Each scenario builds a `Plan` for a
context (profile, receiver environment, what the harness can see), or says why it
does not apply (`NotApplicable`); it never passes silently. Chaos and storm
scenarios live with their injectors and load tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Callable, Mapping, Sequence

from hookproof.simulator.delivery.mutations import OVERSIZE_BYTES, foreign_account_id, other_mode_owner
from hookproof.simulator.events import Event
from hookproof.simulator.faults import INVALIDATING, FaultPlan, Mutation, applicable
from hookproof.simulator.profiles.base import Profile
from hookproof.simulator.profiles.stripe import CONNECT_EVENT_TYPES, DISPUTE_EVENT_TYPES, REFUND_UPDATE_TYPES
from hookproof.simulator.world import AnyWorld, GitHubWorld, World
from hookproof.simulator.world.lifecycle import RELATED_TYPES
from hookproof.simulator.world.user_catalog import UserCatalogWorld

#: Go-live checklist items (ids are stable; reports show the titles).
CHECKLIST: Mapping[str, str] = {
    "raw-body-signature": "Verifies the signature over the raw body",
    "accepts-valid": "Accepts every valid delivery",
    "refuses-foreign": "Ignores other accounts', the other mode's and unknown events",
    "persists-before-ack": "Persists before acknowledging",
    "unique-under-concurrency": "Keeps effects unique under concurrency",
    "duplicates-tested": "Survives duplicate deliveries",
    "reordering-tested": "Survives reordering",
    "timeouts-tested": "Survives sender timeouts and lost answers",
    "retries-bounded": "Answers so that retries stay bounded",
    "transient-vs-permanent": "Separates transient from permanent errors",
}

#: Checklist item -> the checks whose findings fail it.
CHECKLIST_CHECKS: Mapping[str, frozenset[str]] = {
    "raw-body-signature": frozenset({"unexpected", "valid_not_rejected"}),
    # a storm's valid deliveries left unanswered past the sender timeout were not accepted either:
    # the provider counts them failed and retries them (ack_latency runs in storms alone)
    "accepts-valid": frozenset({"valid_not_rejected", "ack_latency"}),
    "refuses-foreign": frozenset({"unexpected", "no_server_error"}),
    "persists-before-ack": frozenset({"lost", "counter"}),
    "unique-under-concurrency": frozenset({"duplicated", "counter"}),
    "duplicates-tested": frozenset({"duplicated", "duplicate_acked", "lost", "counter"}),
    "reordering-tested": frozenset({"regressed", "stale"}),
    "timeouts-tested": frozenset({"lost", "duplicated", "duplicate_acked", "counter"}),
    "retries-bounded": frozenset({"duplicate_acked", "retry_storm", "no_server_error", "lost"}),
    "transient-vs-permanent": frozenset({"no_server_error", "lost", "downstream_idempotency", "duplicated"}),
}

#: Checklist item -> the scenarios that alone can pass it (`report_views.checklist`): other
#: scenarios' findings still fail it, but without one of these judged it is ``untested``. A
#: receiver answering 200 and then storing the effect in the background passes every delivery
#: fault; only a crash right after its answer (``certify --chaos``) shows the effect was not stored.
CHECKLIST_DECIDED_BY: Mapping[str, tuple[str, ...]] = {
    "persists-before-ack": ("crash-after-ack", "kill-during-processing"),
}

#: Scenario id -> checklist item -> the checks that fail the item in that scenario beyond the item's
#: own (`CHECKLIST_CHECKS`). In ``distinct-updates-same-object`` every event is sent once and in
#: order, so a state left behind is a later update taken for a duplicate.
SCENARIO_CHECKLIST_CHECKS: Mapping[str, Mapping[str, frozenset[str]]] = {
    "distinct-updates-same-object": {"duplicates-tested": frozenset({"stale", "regressed"})},
}

EFFECTS = ("duplicated", "lost", "unexpected", "valid_not_rejected", "no_server_error")

#: The checks under which an effect can be applied more than once or lost: a scenario running
#: one of them also runs ``counter`` when the team declares counters (`checks_for`).
COUNTED_WITH = frozenset({"duplicated", "lost"})


@dataclass(frozen=True)
class Context:
    """What a scenario may depend on.

    Attributes:
        profile: the provider profile.
        live: the receiver runs in live mode.
        account: the receiver's provider account (None: not configured).
        connect: the endpoint is a Connect endpoint (`target.connect`): the provider may send
            it another mode's or another account's events (`Profile.other_mode_needs_connect`).
        enabled: enabled Stripe event types (None: all the profile sends).
        burst: copies released together in concurrent scenarios.
        has_sink: the receiver's effects go through the effect sink.
        fetches_state: the provider API is reachable by the receiver.
        sender_timeout_s: the sender timeout for timeout scenarios (seconds).
        chaos: the chaos settings (`scenarios.chaos.ChaosSettings`) when hookproof
            controls the receiver (a process or a container); None: chaos scenarios
            do not apply.
        keys: the team's business keys (`scenarios.business_keys.KeyMapping`), or
            None: hookproof's built-in keys decide which events are effectful.
        redelivery_window: events in the window `mass-redelivery-window` delivers and
            then replays (default 200: more than a bounded in-memory dedupe of 100 ids).
        shop_sessions: the receiver creates the checkout sessions the stories complete (a seed
            hook's ``creates``, `scenarios.seeding`): the shop picks their payment methods, so
            no story asks it for a delayed-method session.
        state_kinds: the object kinds whose states the observer reads (``subscription``,
            ``invoice``…; empty: none), or None when only its answers tell (an ``http`` or
            ``python`` observer): the scenarios that walk an object's states pick a kind it reads.
        state_fields: object kind → the fields of its state beyond ``status`` the observer
            reads (``[observer.state_fields]``: ``subscription`` → ``("price",)``), or None:
            the stories that walk a subscription's states change its price when it has fields.
        state_of: an event's combined state, its status and the declared fields the observer
            compares (`scenarios.state_fields.StateFields.state_of`: ``active,
            first_name=Ada``; None for an event without a status; may raise TemplateError), or
            None: an event's state is its status. `distinct-updates-same-object` takes an update
            changing a compared field for a change of state.
        checkout_modes: the modes the billing stories open Checkout Sessions in: ``payment``
            (a one-off purchase) and ``subscription`` (a plan bought through Checkout, where the
            stories otherwise start a subscription through ``POST /v1/subscriptions``); with a
            seed that opens the sessions, the shop's own (`scenarios.seeding.SeedHook.checkout_modes`);
            empty: a shop selling nothing through Checkout, whose stories open no session.
        reads_cancellation: the observer's declared fields of a subscription's state read its
            scheduled cancellation (one of `CANCELLATION_FIELDS`: ``cancel_at_period_end``…):
            the state story's subscription is then canceled as the Customer Portal does it, at
            its period's end (`state_events`).
    """

    profile: Profile
    live: bool = False
    account: str | None = None
    connect: bool = False
    enabled: frozenset[str] | None = None
    burst: int = 8
    has_sink: bool = False
    fetches_state: bool = True
    sender_timeout_s: float = 0.001
    chaos: Any = None
    keys: Any = None
    redelivery_window: int = 200
    shop_sessions: bool = False
    state_kinds: frozenset[str] | None = None
    state_fields: Mapping[str, tuple[str, ...]] | None = None
    checkout_modes: frozenset[str] = frozenset({"payment", "subscription"})
    state_of: Callable[[Event], str | None] | None = None
    reads_cancellation: bool = False

    def key_of(self, event: Event) -> str | None:
        """The event's business key: the team's mapping (`scenarios.business_keys`), else built in."""
        return event.business_key if self.keys is None else self.keys.key_of(event)

    @property
    def world_name(self) -> str:
        """How a reason names the world the scenarios draw from: ``the Paddle Billing world``,
        or ``your catalog`` for a user's own events (a new user read "the Standard Webhooks
        world" as its catalog ignored)."""
        if getattr(self.profile, "catalog", None) is not None:
            return "your catalog"
        return f"the {self.profile.title} world"

    def sends(self, stripe_type: str) -> bool:
        """True when the provider sends `stripe_type` to this receiver (Stripe's
        ``account.updated`` only to a Connect endpoint: `stripe.CONNECT_EVENT_TYPES`)."""
        if self.profile.provider_type(stripe_type) is None and not (
                self.connect and self.profile.name == "stripe" and stripe_type in CONNECT_EVENT_TYPES):
            return False
        return self.enabled is None or stripe_type in self.enabled


@dataclass(frozen=True)
class ChaosContext:
    """What a phase's chaos hooks receive.

    Attributes:
        nemesis: the fault injector (`chaos.nemesis.Nemesis`): kill, pause, toxics...
        history: the run's history (fault operations are recorded there).
        scenario: the scenario id.
        settings: the chaos settings (`Context.chaos`).
    """

    nemesis: Any
    history: Any
    scenario: str
    settings: Any = None


#: A chaos hook: runs before or after a phase's deliveries (blocking is fine).
Hook = Callable[[ChaosContext], None]


@dataclass(frozen=True)
class Phase:
    """Events delivered with one fault plan; `race` releases bursts byte-synchronised.

    Chaos phases may add `before`/`after` hooks (fault operations around the
    deliveries; the runner heals after the scenario whatever happens), their own
    retry `time_scale` (None: the run's), and `together` to release every delivery of
    the phase at once (distinct events in flight together) instead of one by one, or
    `batch` to release them `batch` at a time (a provider's parallel sends).
    """

    events: tuple[Event, ...]
    plan: FaultPlan = FaultPlan()
    race: bool = False
    max_attempts: int | None = None
    before: Hook | None = None
    after: Hook | None = None
    time_scale: float | None = None
    together: bool = False
    batch: int = 1
    #: the provider API holds its answer to this phase's first fetch of the plan's `Plan.held_fetch`
    #: object (read on arrival), and the next phase is delivered meanwhile (`fetch-overtaken`)
    held: bool = False
    #: deliver only the phase's events none of whose attempts in the scenario so far was
    #: acknowledged: a team redelivering its failed deliveries by hand (GitHub's guide lists the
    #: failed ones; a delivery answered 2xx shows as successful and is not redelivered)
    failed_only: bool = False


@dataclass(frozen=True)
class ApiFault:
    """The provider API misbehaving for one object (or event) id, then recovering.

    Attributes:
        not_found: answer 404 ``resource_missing`` ("not visible yet").
        status: answer this 5xx instead (None: no error status).
        times: requests affected before it heals.
    """

    not_found: bool = False
    status: int | None = None
    times: int = 1


@dataclass(frozen=True)
class Plan:
    """What a scenario delivers (phases in order) from which world.

    `api_faults` arms the provider API's switches (object or event id -> fault) before
    the first delivery; a plan with api faults none of which fired says nothing about
    the receiver (it never fetched), so its scenario does not apply. `owes_effects` False:
    a plan about states none of whose events owes an effect or moves a counter (under the
    context's keys), so ``lost`` has nothing to compare and is not run (`judged`).
    """

    world: World
    phases: tuple[Phase, ...]
    sink_faults: Mapping[str, str] = field(default_factory=dict)  # business key -> fault
    api_faults: Mapping[str, ApiFault] = field(default_factory=dict)
    owes_effects: bool = True
    #: the other account that owns `world` (``foreign-account``: every event is delivered
    #: as that account's; ``test-mode-to-live``: as the other mode's, `other_mode_owner`), so the
    #: provider API serves its objects to none of the endpoint's tokens (a fetch is answered 404,
    #: as the provider's API does); None: the endpoint's own.
    world_account: str | None = None
    #: the object whose fetch a `Phase.held` phase holds (`simulator.server.holds`): the runner
    #: arms it, delivers the next phase while the answer is held, then releases it; a plan whose
    #: held fetch never came (the receiver does not fetch) does not apply.
    held_fetch: str | None = None
    #: what of the scenario's story did not apply to this target, in words (a half the receiver's
    #: events or the observer's kinds leave out), said where a judged scenario gives its reason
    note: str | None = None

    def judged(self, checks: Sequence[str]) -> tuple[str, ...]:
        """The checks of `checks` this plan is judged by: all of them, less ``lost`` when it
        owes no effect (`owes_effects`)."""
        return tuple(checks) if self.owes_effects else tuple(c for c in checks if c != "lost")


def with_twins(plan: Plan | NotApplicable, ctx: Context) -> Plan | NotApplicable:
    """`plan` sending, with each event it sends validly that owes a business key (`Context.key_of`),
    the other events of the same object owing that key that the provider sends with it, where one
    of the two is an optional type the endpoint is sent (`Profile.optional_types`): Stripe sends
    ``invoice.payment_succeeded`` right after ``invoice.paid`` for every invoice paid by a payment,
    with the same invoice (docs.stripe.com/invoicing/integration, "Handle payment events"), so an
    endpoint listing it is sent both, and a receiver extending access on either one alone is
    right. A plan sending one of them alone would owe the renewal to a receiver that acts on the
    other, which it never got: a false ``lost``. The one missing is sent in the same phase, right
    after ``invoice.paid`` (or right before ``invoice.payment_succeeded``), where the plan sends
    it nowhere; a phase of requests the receiver must refuse (`INVALIDATING`, every attempt)
    owes nothing and is left as it is. An endpoint sent no optional type gets `plan` unchanged."""
    optional = {t for t in ctx.profile.optional_types if ctx.sends(t)}
    if isinstance(plan, NotApplicable) or not optional:
        return plan
    pairs: dict[tuple[str, str | None], list[Event]] = {}
    for e in plan.world.events:
        if ctx.sends(e.type) and (key := ctx.key_of(e)):
            pairs.setdefault((key, e.object_id), []).append(e)
    sent = {e.id for phase in plan.phases for e in phase.events}
    phases = []
    for phase in plan.phases:
        refused = phase.plan.mutate == "all" and bool(INVALIDATING.intersection(phase.plan.mutations))
        events: list[Event] = []
        for e in phase.events:
            key = None if refused else ctx.key_of(e)
            twins = [t for t in pairs.get((key, e.object_id), ()) if t.id not in sent
                     and (t.type in optional) != (e.type in optional)] if key else []
            sent.update(t.id for t in twins)
            events += [e, *twins] if e.type not in optional else [*twins, e]
        phases.append(replace(phase, events=tuple(events)) if len(events) != len(phase.events) else phase)
    return replace(plan, phases=tuple(phases)) if any(a is not b for a, b in zip(phases, plan.phases)) else plan


def _parents_sent_first(plan: Plan | NotApplicable, ctx: Context) -> Plan | NotApplicable:
    """`plan` after a first phase delivering, plainly, the creating events of the objects its
    events name (a user catalog's references, `UserCatalogWorld.missing_parents`) that it does
    not deliver itself: the provider sent the endpoint the parent before the child (a
    membership's user, a renewal's subscription), so a receiver that needs it first gets it.
    A plan whose every event is another account's or the other mode's (`Plan.world_account`)
    gets none: the provider never sent the endpoint that account's objects."""
    if isinstance(plan, NotApplicable) or not hasattr(plan.world, "missing_parents") \
            or plan.world_account is not None:
        return plan
    missing = plan.world.missing_parents([e for phase in plan.phases for e in phase.events], ctx.sends)
    if not missing:
        return plan
    return replace(plan, phases=(Phase(tuple(missing)), *plan.phases))


@dataclass(frozen=True)
class NotApplicable:
    """Why a scenario does not apply to this target."""

    reason: str


class Overlap(StrEnum):
    """What a scenario may run alongside against the same receiver (scheduling only: what it
    sends and how it is judged do not change; `scenarios.overlap` runs them).

    Scenarios that overlap share the receiver, never an object, an event or a business key
    (each has its own world), so a correct receiver's effects and states are the same. What
    overlap could change is the verdict on a broken receiver whose fault is timing or a
    bounded memory; the classes keep those apart:

    - ``ALONE``: runs with nothing else: byte-synchronised races and sender timeouts (their
      verdict is timing), a payload that may crash the receiver, provider-API and sink faults,
      chaos, and any scenario not classified.
    - ``FRESH``: every valid event is delivered once (a retry follows only a refusal), so a
      receiver's memory of ids cannot change its verdict; overlaps ``FRESH`` and ``REPEATS``.
    - ``REPEATS``: delivers an event again and expects the receiver to remember it; overlaps
      ``FRESH`` and ``REPEATS`` (small: none pushes out what a bounded dedupe remembers).
    - ``FLOODS``: delivers more distinct events than a bounded dedupe remembers, on purpose,
      then replays them: alone, after every other scenario (an LRU of ids it flushes would fail
      a neighbour, and the backlog of its replays would delay the next one's effects).
    """

    ALONE = "alone"
    FRESH = "fresh"
    REPEATS = "repeats"
    FLOODS = "floods"


@dataclass(frozen=True)
class Scenario:
    """A named fault plan over a world script, with its checks and checklist items, and what
    it may run alongside (`Overlap`; ``ALONE`` unless classified)."""

    id: str
    title: str
    description: str
    checks: tuple[str, ...]
    checklist: tuple[str, ...]
    build: Callable[[Context, World], Plan | NotApplicable]
    tier: str = "catalog"
    overlap: Overlap = Overlap.ALONE
    #: (world kind, title, description): the scenario in a provider world's own words, where
    #: its story names the provider's objects and states (``catalog`` for a user's catalog).
    worded: tuple[tuple[str, str, str], ...] = ()
    #: The description with `AFTER_REFUSAL` where it says what the provider does with a refused
    #: event and `EVENT_IDENTITY` where it says what a receiver dedupes on, or "" when it says
    #: neither (`for_world`).
    refusal_template: str = ""

    def for_world(self, world: str, after_refusal: str | None = None, no_event_id: str | None = None) -> "Scenario":
        """This scenario with the title and description in `world`'s words (`Profile.world`:
        ``billing``, ``shopify``, ``github``…, or ``catalog:<digest>`` for a user's catalog),
        what its provider does with a refused event in `after_refusal`'s
        (`Profile.after_refusal`: "GitHub never retries: …"), and what a receiver dedupes on
        where the events carry no id in `no_event_id`'s (`Profile.no_event_id`: the business
        object the keys name); itself when none applies."""
        kind = "catalog" if world.startswith("catalog:") else world
        for w, title, description in self.worded:
            if w == kind:
                return replace(self, title=title, description=description)
        if (after_refusal is not None or no_event_id is not None) and self.refusal_template:
            return replace(self, description=self.refusal_template.replace(
                AFTER_REFUSAL, after_refusal or NEUTRAL_AFTER_REFUSAL).replace(
                EVENT_IDENTITY, no_event_id or NEUTRAL_EVENT_IDENTITY))
        return self

    def plan(self, ctx: Context, world: AnyWorld) -> Plan | NotApplicable:
        """The scenario's `Plan` over `world` (or `NotApplicable`, with the reason), the world
        first told what the endpoint is sent (`sent_only`: its stories are the endpoint's)."""
        world.sent_only(ctx.sends)
        if not isinstance(world, World):  # another provider's world (GitHub's): its own stories
            from hookproof.scenarios.world_plans import plan_for

            return _parents_sent_first(plan_for(self, ctx, world), ctx)
        return with_twins(self.build(ctx, world), ctx)

    def checks_for(self, *, counters: bool) -> tuple[str, ...]:
        """The checks this scenario runs: its own, and ``counter`` last when the team declares
        counters (`counters`) and an effect can be applied twice or lost here (one of
        `COUNTED_WITH` runs): a counter credited without dedupe moves twice even when the
        effect's own row is unique."""
        if counters and "counter" not in self.checks and COUNTED_WITH & set(self.checks):
            return (*self.checks, "counter")
        return self.checks


def unmapped(ctx: Context, plan: Plan) -> NotApplicable | None:
    """Why `plan` has nothing to compare under the team's keys (`Context.keys`), or None.

    With the team's keys, a plan none of whose events maps to an effect or moves a counter,
    and none of whose objects is of a kind the observer reads the state of
    (`Context.state_kinds`; unknown kinds: any object with a status may be read), owes no
    effect and no state: the effect and state checks have nothing to compare. The runner
    still delivers it (a 5xx or a refused valid event is still a finding); a scenario left
    undecided for that reason alone, or passing with a check that had nothing to judge (``lost``
    over events with no business key), does not apply, and the reason names its types.
    """
    keys = ctx.keys
    if keys is None:
        return None
    events = [e for p in plan.phases for e in p.events]
    for e in events:
        if ctx.key_of(e) or _moves_counter(keys, e):
            return None
        if ctx.state_kinds is None and e.status is not None:
            return None
        if ctx.state_kinds is not None and e.object_type in ctx.state_kinds:
            return None
    types = ", ".join(sorted({e.type for e in events}))
    return NotApplicable(f"no event of this scenario ({types}) maps to an effect under [business_keys]; "
                         f"map {types} or list the types the receiver handles in enabled_events")


def owes(ctx: Context, event: Event) -> bool:
    """True when `event` owes the receiver something to compare: a business key (`Context.key_of`)
    or a move of a counter the team declares (`[counters]`, `Context.keys`)."""
    return bool(ctx.key_of(event)) or (ctx.keys is not None and _moves_counter(ctx.keys, event))


def _counted_types(ctx: Context) -> frozenset[str]:
    """The event types moving a counter the team declares (`[counters]`; none without the team's keys)."""
    return frozenset(getattr(ctx.keys, "counters", None) or ())


def _moves_counter(keys: Any, event: Event) -> bool:
    """True when the team's `keys` (`scenarios.business_keys.KeyMapping`) move a counter for `event`."""
    from hookproof.scenarios.business_keys import counter_keys

    return bool(counter_keys((event,), keys))


# ---- world scripts ------------------------------------------------------------------

def _customer(w: World) -> str:
    locale = "pt_BR" if w.seed % 2 else "en_US"
    return w.event(w.create_customer(locale)).object_id


def effect_events(ctx: Context, w: World) -> list[Event]:
    """The effectful events of a story the receiver is sent, then its events of the same
    types that owe no effect (they must cause none), last, so a scenario's first events are
    effectful; among those, every other event the receiver is sent about an object an effectful
    one is about (a provider sends an endpoint the object's whole story: Paddle's
    ``transaction.paid`` beside its ``transaction.completed``), and the events that led to one of
    those that owes nothing (a refund Paddle rejected: its request, ``adjustment.created``), so
    that an effect a receiver
    also applies on an event owing none shows (``duplicated``, ``unexpected``). Stripe's story: a payment, a checkout paid at once, a
    plan bought through a subscription-mode checkout (its ``checkout.session.completed`` owes
    the provisioning, ``provision:``, its first ``invoice.paid`` a renewal; `_new_subscription`:
    each only in the modes `Context.checkout_modes` allows), a failed
    renewal (dunning), (to an endpoint sent ``customer.subscription.trial_will_end``,
    `TRIAL_WILL_END`: a shop with free trials, a second plan bought on a trial, its $0 first
    invoice paid, ``renewal:`` owed for 0, its trial then ending with its first paid invoice,)
    a partial refund, (to an endpoint sent Stripe's dispute events, `DISPUTE_EVENT_TYPES`: the
    payment's rest charged back, its ``charge.dispute.created`` owing ``dispute:``, its later
    events owing nothing,) then two checkouts by an asynchronous method
    (ACH Direct Debit), each ``checkout.session.completed`` saying ``payment_status: unpaid``: the
    first's payment then succeeds (its ``checkout.session.async_payment_succeeded`` owes the
    fulfilment, sent just after its completion, `_completion_before_settlement`), the
    second's fails: Stripe's fulfilment docs tell a receiver to fulfil such a session only
    on ``checkout.session.async_payment_succeeded`` (neither told when the shop creates the
    sessions, `Context.shop_sessions`, or opens no payment-mode session). Another provider's world: its
    effect story (a rejected payment, a pull request closed without merging), and the events
    of the objects its `companion_objects` says go with the owed ones (Mercado Pago: the
    Checkout Pro merchant order a card payment paid, opened, then closed, then updated by a
    refund). A user's catalog: its keyed types, and the types moving a counter the team
    declares (`[counters]`: they are effectful by the counter's definition, so a count moved
    twice by one delivery shows under ``counter``), each with its object's earlier counted
    events (`UserCatalogWorld.effect_story`); an event moving a counter is owed as a keyed one
    is (`owes`)."""
    if isinstance(w, UserCatalogWorld):  # a user's catalog: its keyed types, and those moving a team's counter
        story = [e for e in w.effect_story(_counted_types(ctx)) if ctx.sends(e.type)]
    elif not isinstance(w, World):  # another provider's world tells its own story
        story = [e for e in w.effect_story() if ctx.sends(e.type)]
    else:
        cus = _customer(w)
        start = len(w.events)
        pi = w.pay(cus)
        if "payment" in ctx.checkout_modes:
            w.complete_checkout(w.open_checkout(cus, w.create_price(interval=None)))
        sub = _new_subscription(ctx, w, cus)
        w.renew(sub, pay=False)
        if ctx.sends(TRIAL_WILL_END):  # a shop with free trials: a plan bought on one, its trial then ending
            w.end_trial(_new_subscription(ctx, w, cus, trial=True))
        charge = w.get(pi)["latest_charge"]
        w.refund(charge, w.get(charge)["amount"] // 4)
        if _sends_any(ctx, DISPUTE_EVENT_TYPES):  # a chargeback of the payment's rest: one dispute: effect
            w.dispute(charge)
        if not ctx.shop_sessions and "payment" in ctx.checkout_modes:
            for succeeded in (True, False):  # a delayed payment paid days later, then one that fails
                delayed = w.open_checkout(cus, w.create_price(interval=None), asynchronous=True)
                w.complete_checkout(delayed)
                w.settle_async_checkout(delayed, succeeded=succeeded)
        story = [e for e in w.events[start:] if ctx.sends(e.type)]
    owed = [e for e in story if owes(ctx, e)]
    types = {e.type for e in owed}
    objects = {e.object_id for e in owed}
    if (companions := getattr(w, "companion_objects", None)) is not None:
        objects |= companions(objects)  # Mercado Pago: the Checkout Pro merchant order an owed payment paid
    # an event of an owed type that owes nothing (a refund Paddle rejected) goes with the events of
    # its object before it (the refund's request: a receiver refunding on it shows `unexpected`)
    last_unowed = {e.object_id: i for i, e in enumerate(story) if e.type in types and not owes(ctx, e)}
    rest = [e for i, e in enumerate(story) if not owes(ctx, e) and (
        e.type in types or e.object_id in objects or i < last_unowed.get(e.object_id, -1))]
    ordered = _completion_before_settlement(owed, rest)
    first = getattr(w, "parents_first", None)  # a user catalog's: an object named after the one naming it
    return first(ordered) if first is not None else ordered


#: Stripe's notice of a trial's end, three days before it (`World.trial_will_end`): an endpoint
#: listing it (`Context.sends`; an optional type, `STRIPE_OPTIONAL_EVENT_TYPES`) is a shop with free
#: trials, whose stories walk one.
TRIAL_WILL_END = "customer.subscription.trial_will_end"


def _new_subscription(ctx: Context, w: World, customer: str, *, default_incomplete: bool = False,
                      trial: bool = False) -> str:
    """A new subscription of `customer`: bought through a subscription-mode Checkout Session
    (`World.subscribe_through_checkout`: Stripe's "Build a subscriptions integration" flow)
    where the stories open those (`Context.checkout_modes`), else started through ``POST
    /v1/subscriptions`` (`World.subscribe`; `default_incomplete`: waiting for its first
    payment, always this way: Checkout collects that payment itself); with `trial`, on a free
    trial (its $0 first invoice paid). Returns its id."""
    if "subscription" in ctx.checkout_modes and not default_incomplete:
        return w.subscribe_through_checkout(customer, trial=trial)
    return w.subscribe(customer, default_incomplete=default_incomplete, trial=trial)


def _completion_before_settlement(owed: list[Event], rest: list[Event]) -> list[Event]:
    """`owed` then `rest`, except that a delayed-payment session's unpaid
    ``checkout.session.completed`` (in `rest`: it owes nothing) goes just before the
    ``checkout.session.async_payment_succeeded`` that settles it (in `owed`, not first), in
    the order Stripe sends them (docs.stripe.com/checkout/fulfillment, "Handle delayed
    notification payment methods")."""
    settled = {e.object_id for e in owed[1:] if e.type == "checkout.session.async_payment_succeeded"}
    moved = {e.object_id: e for e in rest if e.type == "checkout.session.completed" and e.object_id in settled}
    out: list[Event] = []
    for e in owed:
        if e.type == "checkout.session.async_payment_succeeded" and e.object_id in moved:
            out.append(moved[e.object_id])
        out.append(e)
    chosen = {id(e) for e in moved.values()}
    return out + [e for e in rest if id(e) not in chosen]


#: A subscription's fields that say its cancellation is scheduled (`World.cancel_at_period_end`):
#: a declared state field reading one (`Context.reads_cancellation`) has the state story cancel
#: at the period's end, as the Customer Portal does.
CANCELLATION_FIELDS: tuple[str, ...] = ("cancel_at_period_end", "cancel_at", "canceled_at", "cancellation_details")

#: Days between the Customer Portal's steps in the state story (`state_events`): a cancellation
#: scheduled, taken back, scheduled again.
_PORTAL_STEP_S = 86400

#: The object kinds a billing story walks the states of, preferred first.
STATE_KINDS: tuple[str, ...] = ("subscription", "invoice")


def state_events(ctx: Context, w: World) -> list[Event]:
    """A subscription's whole life: created, renewed, past due, recovered, (when the observer
    reads fields of a subscription's state beyond its status, `Context.state_fields`: moved to
    a new price,) canceled; the recovery (at the dunning retry) and what follows it happen in
    one second (`World.within_second`), so the story's replays (`reorder`, `mass-redelivery`)
    meet a receiver ordering by ``created`` alone with a tie, whatever the seed. When the
    observer's fields read the scheduled cancellation (`Context.reads_cancellation`), it is
    canceled as the Customer Portal's default cancellation does (`World.cancel_at_period_end`;
    docs.stripe.com/billing/subscriptions/cancel, "Cancel at the end of the current billing
    cycle"): scheduled at the period's end (``customer.subscription.updated``, still
    ``active``, ``cancel_at_period_end`` true, ``cancel_at``, ``canceled_at``,
    ``cancellation_details``), a day later taken back (false), a day later scheduled again,
    then made at the period's end (``customer.subscription.deleted``, ``canceled``,
    ``ended_at``). To an endpoint sent ``customer.subscription.trial_will_end``
    (`TRIAL_WILL_END`) a second subscription follows, on a free trial: created ``trialing`` (its
    $0 invoice paid), told three days before its trial ends, then ``active`` once its first
    invoice is paid. When the observer reads the states of invoices and not of subscriptions (`Context.state_kinds`),
    the same story's invoices instead. When it reads payment intents' states, beside those (or
    alone, when it reads neither kind) a payment intent whose first confirmation is declined,
    then paid on its retry (`declined_then_paid`: ``requires_payment_method``, ``succeeded``).
    When it reads connected accounts' states on a Connect endpoint, likewise a new seller's
    onboarding (`onboarded`: ``account.updated`` ``pending``, then ``enabled``). When it reads
    disputes' states and is sent their events, likewise a chargeback (`disputed`:
    ``needs_response``, ``under_review``, ``won``); when it reads refunds' states and is sent
    ``refund.updated`` or ``refund.failed``, two refunds of an ACH payment, one completed, one
    returned by the bank (`bank_refunds`: ``pending``, then ``succeeded`` or ``failed``).
    Another provider's world: its state story's stateful objects (or the kind the observer reads
    instead, `_other_walked_kind`: Paddle's transactions), and beside them each other kind the
    observer names with two statuses in the story (`_named_beside`: GitHub's installations)."""
    if not isinstance(w, World):  # another provider's world: its stateful objects' lives
        story = [e for e in w.state_story() if ctx.sends(e.type)]
        kind = _other_walked_kind(ctx, story)
        if kind is not None:
            return [e for e in story if e.object_type == kind and e.status is not None]
        beside = _named_beside(ctx, story)
        return [e for e in story if e.stateful or (e.object_type in beside and e.status is not None)]
    cus = _customer(w)
    start = len(w.events)
    sub = w.subscribe(cus)
    w.renew(sub)
    inv = w.renew(sub, pay=False)
    with w.within_second():  # recovered and canceled in one second, on purpose: Stripe's created counts seconds
        w.retry_invoice(inv)
        if ctx.state_fields and ctx.state_fields.get("subscription"):  # its price is part of its state
            w.change_plan(sub, w.create_price(currency=w.get(cus)["currency"]))
        if ctx.reads_cancellation:  # the Customer Portal's cancellation, at the period's end
            w.cancel_at_period_end(sub)
        else:
            w.cancel(sub)
    if ctx.reads_cancellation:  # taken back, scheduled again, then made at the period's end
        for cancel in (False, True):
            w.advance(_PORTAL_STEP_S)
            w.cancel_at_period_end(sub, cancel)
        w.end_period(sub)
    if ctx.sends(TRIAL_WILL_END):  # a shop with free trials: a trial's subscription, told its trial's end
        w.end_trial(w.subscribe(cus, trial=True))
    story = w.events[start:]
    kind = _walked_kind(ctx, story)
    walked = [e for e in story if e.object_type == kind and ctx.sends(e.type)]
    if _reads_intents(ctx):
        walked += declined_then_paid(ctx, w, cus)
    if _reads_accounts(ctx, w):
        walked += onboarded(ctx, w)
    if _reads_disputes(ctx):
        walked += disputed(ctx, w, cus)
    if _reads_refunds(ctx):
        walked += bank_refunds(ctx, w, cus)
    if kind == "subscription" and ctx.state_kinds and "subscription" not in ctx.state_kinds \
            and (_reads_intents(ctx) or _reads_accounts(ctx, w) or _reads_disputes(ctx) or _reads_refunds(ctx)):
        # the observer reads neither subscriptions nor invoices it is sent: the other kinds alone
        return [e for e in walked if e.object_type != "subscription"]
    return walked


def _reads_accounts(ctx: Context, w: World) -> bool:
    """True when the observer names connected accounts among the kinds whose states it reads,
    on a Connect endpoint (`Context.connect`) whose world has a connected account (`World.connected`)."""
    return ctx.connect and w.connected and bool(ctx.state_kinds) and "account" in (ctx.state_kinds or ())


def onboarded(ctx: Context, w: World) -> list[Event]:
    """A new seller's onboarding (`World.onboard_account`: a connected account of its own, so no
    scenario's seller is another's): its ``account.updated`` events the receiver is sent,
    ``pending`` then ``enabled``."""
    start = len(w.events)
    w.onboard_account()
    return [e for e in w.events[start:] if ctx.sends(e.type)]


def _sends_any(ctx: Context, types: Sequence[str]) -> bool:
    """True when the receiver is sent one of `types`."""
    return any(ctx.sends(t) for t in types)


def _reads_disputes(ctx: Context) -> bool:
    """True when the observer names disputes among the kinds whose states it reads and the
    receiver is sent their events (`DISPUTE_EVENT_TYPES`, optional: only when listed)."""
    return bool(ctx.state_kinds) and "dispute" in (ctx.state_kinds or ()) and _sends_any(ctx, DISPUTE_EVENT_TYPES)


def _reads_refunds(ctx: Context) -> bool:
    """True when the observer names refunds among the kinds whose states it reads and the receiver
    is sent a refund's later status (`REFUND_UPDATE_TYPES`, optional: only when listed)."""
    return bool(ctx.state_kinds) and "refund" in (ctx.state_kinds or ()) and _sends_any(ctx, REFUND_UPDATE_TYPES)


def disputed(ctx: Context, w: World, customer: str) -> list[Event]:
    """A card payment of `customer` charged back and won (`World.dispute`): the dispute's events the
    receiver is sent, ``needs_response`` (created, funds withdrawn), ``under_review`` (evidence
    submitted), ``won`` (closed, funds reinstated)."""
    start = len(w.events)
    w.dispute(w.get(w.pay(customer))["latest_charge"])
    return [e for e in w.events[start:] if e.object_type == "dispute" and ctx.sends(e.type)]


def bank_refunds(ctx: Context, w: World, customer: str) -> list[Event]:
    """A payment of `customer` by ACH Direct Debit through a Checkout Session (its bank's method,
    `DELAYED_METHODS`: a refund of it is ``pending`` until the bank answers), refunded twice: the
    bank completes the first refund (``refund.updated``, ``succeeded``) and returns the second
    (``refund.failed``, ``failed``) (`World.settle_refund`); the refunds' events the receiver is
    sent. None when the shop creates the sessions (`Context.shop_sessions`) or opens no
    payment-mode one: the story cannot pick the payment method."""
    if ctx.shop_sessions or "payment" not in ctx.checkout_modes:
        return []
    start = len(w.events)
    session = w.open_checkout(customer, w.create_price(interval=None), asynchronous=True,
                              delayed_method="us_bank_account")
    w.complete_checkout(session)
    w.settle_async_checkout(session)
    charge = w.get(w.get(session)["payment_intent"])["latest_charge"]
    w.settle_refund(w.refund(charge, w.get(charge)["amount"] // 2))
    w.settle_refund(w.refund(charge), succeeded=False)
    return [e for e in w.events[start:] if e.object_type == "refund" and ctx.sends(e.type)]


def _reads_intents(ctx: Context) -> bool:
    """True when the observer names payment intents among the kinds whose states it reads."""
    return bool(ctx.state_kinds) and "payment_intent" in (ctx.state_kinds or ())


def declined_then_paid(ctx: Context, w: World, customer: str) -> list[Event]:
    """A payment intent of `customer` whose first confirmation the card's issuer declines
    (``payment_intent.payment_failed``, ``requires_payment_method``, beside its failed charge's
    ``charge.failed``), then confirmed again and paid (``payment_intent.succeeded``): the intent's
    events the receiver is sent (`World.fail_payment`, `World.retry_payment`)."""
    start = len(w.events)
    w.retry_payment(w.fail_payment(customer))
    return [e for e in w.events[start:] if e.object_type == "payment_intent" and ctx.sends(e.type)]


def _walked_kind(ctx: Context, story: Sequence[Event]) -> str:
    """The kind of object whose states a story's scenario walks: the first of `STATE_KINDS`
    the observer reads and the receiver is sent two events of, else ``subscription``."""
    if ctx.state_kinds is None or not ctx.state_kinds or "subscription" in ctx.state_kinds:
        return "subscription"
    for kind in STATE_KINDS:
        if kind in ctx.state_kinds and sum(e.object_type == kind and ctx.sends(e.type) for e in story) >= 2:
            return kind
    return "subscription"


def _other_walked_kind(ctx: Context, story: Sequence[Event]) -> str | None:
    """In another provider's state story, the kind whose states the scenario walks instead of
    its stateful objects' (None: those): when the observer names its kinds and none of them is a
    stateful kind of the story, the first it names (sorted) with two events of a status in it
    (Paddle's transactions: draft or billed, through completed)."""
    kinds = ctx.state_kinds
    if not kinds or any(e.stateful and e.object_type in kinds for e in story):
        return None
    for kind in sorted(kinds):
        if sum(e.object_type == kind and e.status is not None for e in story) >= 2:
            return kind
    return None


def _named_beside(ctx: Context, story: Sequence[Event]) -> frozenset[str]:
    """In another provider's state story whose stateful objects the observer reads (or may read),
    the other kinds it names whose states the story walks too: each of them with two events of
    a status in it (GitHub's installations, created, suspended, unsuspended and deleted, beside
    its issues and pull requests). Empty when the observer names no kinds (an ``http`` or
    ``python`` observer): only the stateful objects' states are compared then."""
    if not ctx.state_kinds:
        return frozenset()
    return frozenset(kind for kind in ctx.state_kinds
                     if sum(e.object_type == kind and not e.stateful and e.status is not None for e in story) >= 2)


def _need(events: Sequence[Event], what: str, ctx: Context | None = None) -> NotApplicable | None:
    """None when `events` is not empty, else why the scenario has nothing to send: the
    events the receiver is sent (`enabled_events`; with the team's keys too, both named, as
    either may be the cause), else the team's keys (`business_keys` with `builtin_keys =
    false` or ``false`` per type) making none of them effectful, else the world telling no
    such story."""
    if events:
        return None
    if ctx is not None and ctx.enabled is not None and ctx.keys is not None and "effectful" in what:
        return NotApplicable(f"the receiver is sent no {what} events: the types it is sent (enabled_events) and the "
                             f"team's business keys (business_keys, builtin_keys) leave none")
    if ctx is None or ctx.enabled is not None:
        return NotApplicable(f"the receiver is sent no {what} events (enabled_events)")
    if ctx.keys is not None and "effectful" in what:
        return NotApplicable(f"the team's business keys make none of this scenario's events effectful "
                             f"(business_keys, builtin_keys): no {what} events to send")
    return NotApplicable(f"{ctx.world_name} tells no story with {what} events")


def _one_state(events: Sequence[Event], what: str, ctx: Context) -> NotApplicable | None:
    """None when some object of `events` is sent in two different statuses, or the observer
    compares fields of their kind's state beyond the status (`Context.state_fields`: two
    events in one status may still differ), else why a scenario about an object's states
    compares nothing: every event the receiver is sent of each object says the same status
    (a Paddle endpoint subscribed to ``subscription.created`` and ``.updated`` alone, every one
    ``active``), so a receiver keeping them in any order shows the provider's state."""
    statuses: dict[str | None, set[str | None]] = {}
    for e in events:
        statuses.setdefault(e.object_id, set()).add(e.status)
    if any(len(seen) > 1 for seen in statuses.values()):
        return None
    if ctx.state_fields and any(ctx.state_fields.get(e.object_type) for e in events):
        return None
    said = ", ".join(sorted({str(e.status) for e in events}))
    where = "the receiver is sent" if ctx.enabled is not None else f"{ctx.world_name} tells"
    why = " (enabled_events)" if ctx.enabled is not None else ""
    return NotApplicable(f"{where} no story with two {what} events of one object in different states{why}: "
                         f"each object's events all say {said}, so any order shows the provider's state")


def _stateful(w: AnyWorld) -> str:
    """The objects whose states a scenario walks, in the world's words."""
    return "subscription" if isinstance(w, World) else "status-setting"


def _effects_plan(plan: FaultPlan, *, race: bool = False, count: int | None = None,
                  max_attempts: int | None = None) -> Callable[[Context, World], Plan | NotApplicable]:
    def build(ctx: Context, w: World) -> Plan | NotApplicable:
        events = effect_events(ctx, w)
        if (na := _need(events, "effectful", ctx)) is not None:
            return na
        chosen = tuple(events[:count] if count else events)
        return Plan(w, (Phase(chosen, plan, race=race, max_attempts=max_attempts),))
    return build


def _mutation_plan(mutation: Mutation, *, copies: int = 1, mutate: str = "all",
                   max_attempts: int | None = 2) -> Callable[[Context, World], Plan | NotApplicable]:
    def build(ctx: Context, w: World) -> Plan | NotApplicable:
        if (reason := applicable(mutation, ctx.profile, connect=ctx.connect)) is not None:
            return NotApplicable(reason)
        if mutation is Mutation.FOREIGN_ACCOUNT and ctx.account is None:
            return NotApplicable("the config names no provider account for the receiver (target.account)")
        events = effect_events(ctx, w)
        if (na := _need(events, "effectful", ctx)) is not None:
            return na
        plan = FaultPlan(copies=copies, mutations=(mutation,), mutate=mutate)  # type: ignore[arg-type]
        owner = None  # every event another account's or the other mode's: its objects too (`Plan.world_account`)
        if mutation is Mutation.FOREIGN_ACCOUNT and mutate == "all":
            owner = foreign_account_id(events[0].account)
        elif mutation is Mutation.LIVEMODE_MISMATCH and mutate == "all":
            owner = other_mode_owner(not events[0].livemode)
        chosen = events[:2]
        if mutation in _SIGNATURE_MUTATIONS:  # the optional types' own (`_optional_firsts`)
            chosen += _optional_firsts(ctx, events[2:])
        mirrored = ctx.profile.live_event_mirrored if mutation is Mutation.LIVEMODE_MISMATCH and not ctx.live else None
        return Plan(w, (Phase(tuple(chosen), plan, max_attempts=max_attempts),), world_account=owner, note=mirrored)
    return build


#: The mutations whose request carries no valid signature of the receiver's secret.
_SIGNATURE_MUTATIONS: frozenset[Mutation] = frozenset({Mutation.FORGED, Mutation.MISSING_SIGNATURE,
                                                       Mutation.WRONG_SECRET})


def with_optional(ctx: Context, events: Sequence[Event], count: int) -> list[Event]:
    """`events`' first `count`, then the first event owing an effect under the keys in force
    (`Context.key_of`) of each optional type (`Profile.optional_types`: Shopify's compliance
    topics, sent only to an endpoint subscribed to them; Stripe's ``invoice.payment_succeeded``,
    sent only to an endpoint whose ``enabled_events`` lists it, which `with_twins` then sends
    with its ``invoice.paid``) among the others. The effect story
    tells the compliance requests after the order's topics, so a scenario taking its first
    events alone never sends them; Shopify retries them like any other topic (shopify.dev
    "Privacy law compliance", "Ignore duplicate webhooks"), so a scenario about duplicates,
    concurrency or timeouts sends them too. An endpoint subscribed to none (every other
    profile's) is sent its first `count`, as it always was."""
    chosen = list(events[:count])
    return chosen + [e for e in _optional_firsts(ctx, list(events[count:])) if ctx.key_of(e)]


def _optional_firsts(ctx: Context, events: list[Event]) -> list[Event]:
    """The first event of each optional type (`Profile.optional_types`) among `events`: an
    endpoint subscribed to Shopify's compliance topics must answer an invalid HMAC on each with
    401 (shopify.dev "Privacy law compliance"), so the signature scenarios forge one of each; an
    endpoint subscribed to none (every other profile's) is sent what it always was."""
    firsts: dict[str, Event] = {}
    for event in events:
        if event.type in ctx.profile.optional_types:
            firsts.setdefault(event.type, event)
    return list(firsts.values())


def _secret_rotation(ctx: Context, w: World) -> Plan | NotApplicable:
    """Two effectful events, each signed with an unknown new secret and the receiver's, its own
    last. Where an official verifier reads only the last signature (`Profile.rotation_dispute`:
    Paddle's Node SDK) and the provider's docs give no order, first the world's quiet event
    (it owes nothing, so a refusal loses no effect), once, with the receiver's own signature
    first: refusing it is an advisory (``valid_not_rejected``) naming that verifier."""
    plan = _mutation_plan(Mutation.ROTATION, max_attempts=None)(ctx, w)
    if not isinstance(plan, Plan) or applicable(Mutation.ROTATION_OWN_FIRST, ctx.profile) is not None:
        return plan
    quiet = getattr(w, "quiet_event", None)
    event = quiet() if quiet is not None else None
    if event is None or not ctx.sends(event.type) or owes(ctx, event):  # a refusal must lose nothing
        return plan
    own_first = Phase((event,), FaultPlan(mutations=(Mutation.ROTATION_OWN_FIRST,)), max_attempts=1)
    return replace(plan, phases=(own_first, *plan.phases))


def _reserialized_body(ctx: Context, w: World) -> Plan | NotApplicable:
    """Each event once, in re-serialised bytes: evidence of verifying over the raw body."""
    if ctx.profile.body_unsigned is not None:
        return NotApplicable(ctx.profile.body_unsigned)
    return _mutation_plan(Mutation.RESERIALIZE)(ctx, w)


def _reserialized_retry(ctx: Context, w: World) -> Plan | NotApplicable:
    """Two copies of each event, the retry re-serialised; not where the provider retries with the
    original bytes (`Profile.retry_bytes_kept`)."""
    if ctx.profile.retry_bytes_kept is not None:
        return NotApplicable(ctx.profile.retry_bytes_kept)
    return _mutation_plan(Mutation.RESERIALIZE, copies=2, mutate="retries", max_attempts=None)(ctx, w)


def _duplicate_concurrent(ctx: Context, w: World) -> Plan | NotApplicable:
    events = effect_events(ctx, w)
    if (na := _need(events, "effectful", ctx)) is not None:
        return na
    plan = FaultPlan(copies=ctx.burst, concurrency=ctx.burst)
    return Plan(w, (Phase(tuple(with_optional(ctx, events, 3)), plan, race=True),))


def _sender_timeout(ctx: Context, w: World) -> Plan | NotApplicable:
    events = effect_events(ctx, w)
    if (na := _need(events, "effectful", ctx)) is not None:
        return na
    plan = FaultPlan(sender_timeout_s=ctx.sender_timeout_s, timeouts=1)
    return Plan(w, (Phase(tuple(with_optional(ctx, events, 3)), plan),))


def _reorder(ctx: Context, w: World) -> Plan | NotApplicable:
    events = state_events(ctx, w)
    if (na := _need(events, _stateful(w), ctx) or _one_state(events, _stateful(w), ctx)) is not None:
        return na
    return Plan(w, (Phase(tuple(events), FaultPlan(order="reversed")),))


def _stale_after_newer(ctx: Context, w: World) -> Plan | NotApplicable:
    events = state_events(ctx, w)
    if len(events) < 2:
        if ctx.enabled is None or not _told_with_every_type(ctx, w, lambda c, fresh: len(state_events(c, fresh)) >= 2):
            return NotApplicable(f"{ctx.world_name} tells no story with two {_stateful(w)} events")
        return NotApplicable(f"the receiver is sent fewer than two {_stateful(w)} events (enabled_events)")
    if (na := _one_state(events, _stateful(w), ctx)) is not None:
        return na
    # in another provider's world, a stateful object's (a Paddle subscription's, not its transaction's)
    pool: list[Event] = [e for e in events if e.stateful] if not isinstance(w, World) else []
    old = next((e for e in pool or events if e.status == "past_due"), (pool or events)[0])
    newer = [e for e in events if e is not old]
    older = [old]
    if not isinstance(w, (World, UserCatalogWorld)):  # a kind walked beside the stateful ones: its first event last
        beside = [e for e in _stale_per_kind(events) if not e.stateful and e.object_type != old.object_type]
        newer = [e for e in newer if all(e is not b for b in beside)]
        older += beside
    if isinstance(w, UserCatalogWorld) and (stale := _stale_per_kind(events)):  # each walked kind's own
        older = stale
        newer = [e for e in events if all(e is not o for o in older)]
    elif isinstance(w, World) and events[0].object_type == "subscription":
        tied = same_second_story(ctx, w)
        if len(tied) == 4:  # created; then past due, recovered, canceled in one second
            newer += [tied[0], tied[1], tied[3]]
            older.append(tied[2])
    elif hasattr(w, "same_second_story") and events[0].object_type == "order":  # Shopify's updated_at ties
        tied = [e for e in w.same_second_story() if ctx.sends(e.type)]
        partial = [e for e in tied if e.status == "partially_refunded"]
        if len(partial) == 1 and any(e.status == "refunded" for e in tied):
            newer += [e for e in tied if e is not partial[0]]
            older.append(partial[0])
    elif isinstance(w, GitHubWorld):  # GitHub's updated_at ties, over each kind the observer reads
        tied_newer, tied_older, untold = _github_ties(ctx, w)
        newer += tied_newer
        older += tied_older
        if untold is not None:
            return Plan(w, (Phase(tuple(newer)), Phase(tuple(older))), note=untold)
    if isinstance(w, World):  # a payment intent walked beside the other kind: its decline, after its payment
        declined = [e for e in events if e.type == "payment_intent.payment_failed" and e is not old
                    and any(n.object_id == e.object_id and n.version > e.version for n in events)]
        # a connected account walked beside it: its submitted details, after its verification
        declined += [e for e in events if e.type == "account.updated" and e is not old
                     and any(n.object_id == e.object_id and n.version > e.version for n in events)]
        # a dispute or a bank refund walked beside it: its first event (needs_response, pending), after its last
        firsts: dict[str, Event] = {}
        for e in events:
            if e.object_type in ("dispute", "refund"):
                firsts.setdefault(e.object_id, e)
        declined += [e for e in firsts.values() if e is not old
                     and any(n.object_id == e.object_id and n.status != e.status for n in events)]
        newer = [e for e in newer if all(e is not d for d in declined)]
        older += declined
    return Plan(w, (Phase(tuple(newer)), Phase(tuple(older))))


#: The event types of GitHub's same-second stories `stale-after-newer` tells, per kind.
_ISSUE_TIE = ("issues.opened", "issues.labeled", "issue_comment.created", "issues.closed")
_RERUN_TIE = ("pull_request.closed", "pull_request.reopened")
_BOT_MERGE_TIE = ("pull_request.synchronize", "pull_request.closed")


def _github_ties(ctx: Context, w: GitHubWorld) -> tuple[list[Event], list[Event], str | None]:
    """`stale-after-newer`'s same-second half in the repository world (GitHub's ``updated_at``
    counts whole seconds, docs "Webhook events and payloads"): (events delivered in order,
    events delivered last, None) or, where it tells nothing, ``([], [], why)`` in words.

    Told over each kind the observer reads the states of (all when it names none) whose types
    the receiver is sent: an issue labeled, commented on and closed in one second, the comment
    delivered after the close (`GitHubWorld.same_second_story`); a pull request closed and
    reopened in one second, in order (keeping the first of a tie leaves it closed), and another
    pushed to and merged in one second, its synchronize after the merge (keeping the last
    reopens it) (`GitHubWorld.pull_request_same_second_story`; the merge's ``push`` is not sent:
    it moves no pull request)."""
    named = ctx.state_kinds

    def reads(kind: str) -> bool:
        return not named or kind in named

    newer: list[Event] = []
    older: list[Event] = []
    if reads("issue") and all(ctx.sends(t) for t in _ISSUE_TIE[1:]):
        tied = [e for e in w.same_second_story() if ctx.sends(e.type)]
        newer += [e for e in tied if e.type != "issue_comment.created"]  # opened; labeled and closed in one second
        older += [e for e in tied if e.type == "issue_comment.created"]  # the comment of that second, after the close
    rerun = all(ctx.sends(t) for t in _RERUN_TIE)
    merge = all(ctx.sends(t) for t in _BOT_MERGE_TIE)
    if reads("pull_request") and (rerun or merge):
        story = [e for e in w.pull_request_same_second_story() if e.object_type == "pull_request"]
        first, second = story[:3], story[3:]
        if rerun:
            newer += [e for e in first if ctx.sends(e.type)]  # opened; closed and reopened in one second, in order
        if merge:
            newer += [e for e in second if ctx.sends(e.type) and e.type != "pull_request.synchronize"]
            older += [e for e in second if e.type == "pull_request.synchronize"]  # after the merge of its second
    if newer or older:
        return newer, older, None
    if ctx.state_kinds and not ({"issue", "pull_request"} & ctx.state_kinds):
        why = "the observer reads no issue or pull request states ([observer.states])"
    else:
        why = ("the receiver is sent neither an issue's issues.labeled, issue_comment.created and issues.closed "
               "nor a pull request's pull_request.closed with .reopened or .synchronize (enabled_events)")
    return [], [], (f"its same-second half did not apply: {why}, so no two events of one object sharing an "
                    f"updated_at second (GitHub's counts whole seconds) were sent")


def _stale_per_kind(events: Sequence[Event]) -> list[Event]:
    """Per object kind of a user catalog's state story (`UserCatalogWorld.state_story` walks
    each stateful kind), in the story's order, the event `stale-after-newer` delivers last: the
    kind's first ``past_due`` event, else its first event; only kinds the story sends at least
    two events of (a lone event has nothing newer to follow)."""
    by_kind: dict[str, list[Event]] = {}
    for e in events:
        by_kind.setdefault(e.object_type, []).append(e)
    return [next((e for e in kind if e.status == "past_due"), kind[0]) for kind in by_kind.values() if len(kind) >= 2]


def same_second_story(ctx: Context, w: World) -> list[Event]:
    """A second subscription's events the receiver is sent: created, then in one second (Stripe's
    ``created`` counts whole seconds) a failed renewal (past due), its retry paid (active) and
    the cancellation. `_stale_after_newer` sends the past-due and canceled events in order, then
    the recovery after the cancellation: ordering by ``created`` drops the cancellation with
    ``>`` and brings the subscription back with ``>=``; only a real version (or a fetch) is right."""
    cus = _customer(w)
    start = len(w.events)
    sub = w.subscribe(cus)
    with w.within_second():
        inv = w.renew(sub, pay=False)
        w.retry_invoice(inv)
        w.cancel(sub)
    story = [e for e in w.events[start:] if e.object_id == sub and ctx.sends(e.type)]
    created = [e for e in story if e.type == "customer.subscription.created"]
    tail = [e for e in story if e.version > 2 and e.status in ("past_due", "active", "canceled")]
    return created + tail


def _state_reader(state: Callable[[Event], str | None] | None) -> Callable[[Event], str | None]:
    """`state`, or an event's status when None."""
    return state if state is not None else (lambda e: e.status)


def _stateful_runs(events: Sequence[Event]) -> list[list[Event]]:
    """The events with a status of each object of `events`, in order, objects in the order of
    their first such event."""
    by_object: dict[str, list[Event]] = {}
    for e in events:
        if e.object_id is not None and e.status is not None:
            by_object.setdefault(e.object_id, []).append(e)
    return list(by_object.values())


def updates_run(events: Sequence[Event], state: Callable[[Event], str | None] | None = None
                ) -> tuple[Event, ...] | None:
    """The shortest run of one object's events, in order, whose last event repeats the type of
    an earlier one and moves the object to a state a receiver keeping the first event of each
    type per object would not show (that receiver shows the state of the newest event that was
    the first of its type), or None when no object of `events` has one.

    `events`: stateful events in the order the provider emitted them (several objects may
    interleave; the run keeps one object's). `state`: an event's state as the observer compares
    it (`Context.state_of`: its status and declared fields, so a second ``user.updated``
    renaming the user changes it); None: its status. Pure but for `state`, O(len(events)).
    """
    state_of = _state_reader(state)
    for run in _stateful_runs(events):
        types: set[str] = set()
        shown: str | None = None
        for i, e in enumerate(run):
            if e.type not in types:
                types.add(e.type)
                shown = state_of(e)
            elif state_of(e) != shown:
                return tuple(run[:i + 1])
    return None


def _updates_same_object(ctx: Context, w: World) -> Plan | NotApplicable:
    """One object's successive events (`updates_run` of its state story, over the kinds of object
    the observer reads the states of, when it names them; a state being the status and the
    declared fields the observer compares, `Context.state_of`), in order, one by one; judged on
    ``lost`` only when one of them owes an effect (a subscription's events owe none)."""
    kinds = ctx.state_kinds
    run = updates_run([e for e in state_events(ctx, w) if not kinds or e.object_type in kinds], _compared(ctx))
    if run is None:
        what = "two events of one type about one object, the second changing its state"
        if ctx.state_fields:
            what += " (its status or a field [observer.state_fields] compares)"
        if kinds:
            what += f" (of a kind whose states the observer reads: {', '.join(sorted(kinds))})"
        if ctx.enabled is not None and _told_with_every_type(ctx, w, lambda c, fresh: updates_run(
                [e for e in state_events(c, fresh) if not kinds or e.object_type in kinds], _compared(c)) is not None):
            return NotApplicable(f"the receiver is sent no {what} (enabled_events)")
        return NotApplicable(f"{ctx.world_name} tells no story with {what}")
    owed = any(owes(ctx, e) for e in run)
    return Plan(w, (Phase(run),), owes_effects=owed)


#: Objects `concurrent-updates-stored-object` races two updates of, one burst each. The race is
#: timing: a receiver reading, comparing and writing without a lock loses the newer update only
#: when the older one's write lands last, about one burst in two to three (a 30 ms gap between
#: the read and the write, measured in process), so eight make a miss rare (about 2 in 1000 at
#: one in two) while the scenario stays a few seconds long.
STORED_UPDATE_BURSTS = 8


def stored_updates(events: Sequence[Event], state: Callable[[Event], str | None] | None = None
                   ) -> list[tuple[tuple[Event, ...], Event, Event]]:
    """Per object of `events` (in the order of their first events), ``(stored, newer, older)``:
    its last event (`newer`), the last earlier event after its first whose state differs from the
    last one's and whose time falls in another whole second (`older`: no clock or body time of
    a provider ties them; Stripe's ``created``, Shopify's ``updated_at`` and GitHub's count whole
    seconds, and a tie is `stale-after-newer`'s story, not a race's), and its events before
    `older` (`stored`: its creation first, what the receiver holds when the two arrive; every
    one of them, so an effect a receiver reads from the object's fetched state, a Mercado Pago
    payment approved before its refunds, was owed by an event it was sent). Objects without
    such an `older` are left out.

    `events`: stateful events in the order the provider emitted them (objects may interleave).
    `state`: an event's state as the observer compares it (`Context.state_of`); None: its status.
    Pure but for `state`, O(len(events))."""
    state_of = _state_reader(state)
    out: list[tuple[tuple[Event, ...], Event, Event]] = []
    for run in _stateful_runs(events):
        newer = run[-1]
        at = next((i for i in range(len(run) - 2, 0, -1)
                   if state_of(run[i]) != state_of(newer) and run[i].created != newer.created), None)
        if at is not None:
            out.append((tuple(run[:at]), newer, run[at]))
    return out


def _stored_update_bursts(ctx: Context, w: World) -> Plan | NotApplicable:
    """Objects created and stored first, then two later updates of each released together.

    Each telling of the state story (`state_events`, over the kinds the observer reads, as
    `distinct-updates-same-object` takes them) gives objects with two later updates in
    different states (`stored_updates`), until `STORED_UPDATE_BURSTS` objects: the first phase
    delivers, one by one, each object's events before the older update (its creation first: the
    receiver stores its row), then each object's pair is one race burst, the newer update first
    (byte-synchronised, as `related-burst`'s): both find the stored row, so no unique insert
    serialises them, and a receiver reading it, comparing and writing without a lock can let the
    older write land last. Judged on ``lost`` only when an event sent owes an effect."""
    kinds = ctx.state_kinds
    compared = _compared(ctx)

    def told(c: Context, world: Any) -> list[tuple[tuple[Event, ...], Event, Event]]:
        return stored_updates([e for e in state_events(c, world) if not kinds or e.object_type in kinds], compared)

    first = [e for e in state_events(ctx, w) if not kinds or e.object_type in kinds]
    if (na := _need(first, _stateful(w), ctx) or _one_state(first, _stateful(w), ctx)) is not None:
        return na
    found = stored_updates(first, compared)
    if not found:
        what = "an object created and then updated twice in different states in other seconds"
        if ctx.enabled is not None and _told_with_every_type(ctx, w, lambda c, fresh: bool(told(c, fresh))):
            return NotApplicable(f"the receiver is sent no story with {what} (enabled_events)")
        return NotApplicable(f"{ctx.world_name} tells no story with {what}")
    while len(found) < STORED_UPDATE_BURSTS:
        more = told(ctx, w)
        if not more:
            break
        found += more
    found = found[:STORED_UPDATE_BURSTS]
    sent = [e for stored, newer, older in found for e in (*stored, newer, older)]
    phases = (Phase(tuple(e for stored, _, _ in found for e in stored)),
              *(Phase((newer, older), race=True, together=True) for _, newer, older in found))
    return Plan(w, phases, owes_effects=any(owes(ctx, e) for e in sent))


def _told_with_every_type(ctx: Context, w: AnyWorld, told: Callable[[Context, Any], bool]) -> bool:
    """Whether a scenario's story, which `told(ctx, world)` says is there, would be there were the
    receiver sent every type the profile sends (`ctx` without `enabled`), in a fresh world of
    `w`'s kind and seed (`w` is left as it is): a reason blames ``enabled_events`` only then.
    True (blame it, as before) when no fresh world can be made."""
    from hookproof.simulator.errors import SimulatorError
    from hookproof.simulator.world.registry import new_world

    try:
        fresh = new_world(ctx.profile.world, getattr(w, "seed", 0))
    except (SimulatorError, TypeError):  # (a world kind the registry cannot make alone)
        return True
    try:
        return told(replace(ctx, enabled=None), fresh)
    except Exception:  # a story a fresh world cannot tell alone (a seed's objects): blame as before
        return True


def _compared(ctx: Context) -> Callable[[Event], str | None] | None:
    """An event's state as the observer compares it (`Context.state_of`), its status where
    a declared field cannot be read from it (the run's own reading of the events names that
    field: `scenarios.runner`'s "could not read a field the config names"); None: statuses."""
    state_of = ctx.state_of
    if state_of is None:
        return None
    from hookproof.scenarios.business_keys import TemplateError

    def compared(e: Event) -> str | None:
        try:
            return state_of(e)
        except TemplateError:
            return e.status
    return compared


def _distinct_events(ctx: Context, w: World) -> Plan | NotApplicable:
    cus = _customer(w)
    start = len(w.events)
    sub = w.subscribe(cus)
    inv = w.renew(sub, pay=False)
    w.retry_invoice(inv, pay=False)
    w.retry_invoice(inv, pay=True)
    pi = w.pay(cus)
    charge = w.get(pi)["latest_charge"]
    amount = w.get(charge)["amount"]
    w.refund(charge, amount // 3)
    w.refund(charge, amount // 3)
    # a refund's own refund.created is about the refund: each of the charge's two owes its own
    refunds = [r for r in w.objects("refund") if w.peek(r)["charge"] == charge]
    events = [e for e in w.events[start:] if ctx.key_of(e) and ctx.sends(e.type)
              and (e.object_id in (inv, charge, *refunds))]
    if (na := _need(events, "effectful invoice or refund", ctx)) is not None:
        return na
    return Plan(w, (Phase(tuple(events)),))


def _unknown_type(ctx: Context, w: World) -> Plan | NotApplicable:
    """A type outside the profile's catalogue, then an effectful event. Not applicable to an
    endpoint whose subscription is listed (`Context.enabled`): Stripe sends an endpoint only
    the types it enabled, and new types only to one enabled for all (``enabled_events: ["*"]``,
    docs.stripe.com/api/webhook_endpoints/create)."""
    if ctx.enabled is not None:
        return NotApplicable(f"{ctx.profile.title} sends an endpoint only the event types it enabled "
                             "(target.enabled_events lists them), and new types only to an endpoint enabled for "
                             "all; leave enabled_events out to test an unhandled type")
    cus = _customer(w)
    pm = w.get(cus)["invoice_settings"]["default_payment_method"]
    obj = w.get(pm)
    base = w.event(w.events[-1].id)
    unknown = replace(base, id=base.id[:-4] + "unkn", type="payment_method.automatically_updated",
                      object_type="payment_method", object_id=pm, version=w.version(pm), object=obj,
                      previous_attributes=None, business_key=None, amount=None, status=None)
    try:
        ctx.profile.envelope(unknown)
    except (KeyError, ValueError):
        return NotApplicable(f"the {ctx.profile.title} profile renders no event outside its catalogue")
    w.serve_event(unknown)  # a receiver retrieving each event it is sent gets this one too
    events = effect_events(ctx, w)[:1]
    return Plan(w, (Phase((unknown,), max_attempts=2), Phase(tuple(events))))


def _oversized(ctx: Context, w: Any) -> Plan | NotApplicable:
    """A real delivery of several megabytes (`OVERSIZE_BYTES`), grown through the provider's own
    fields by the world (`big_event`: GitHub's push of many commits, an effectful type so that
    refusing it is visible), then the first effectful events. Not applicable where the world has
    no such event (`Profile.no_big_body` says why): a body padded with a field the provider never
    sends is refused by a schema-validating receiver for its field, not its size."""
    events = effect_events(ctx, w)
    if (na := _need(events, "effectful", ctx)) is not None:
        return na
    make = getattr(w, "big_event", None)
    if make is None:
        return NotApplicable(ctx.profile.no_big_body)
    big: Event = make(OVERSIZE_BYTES)
    if not ctx.sends(big.type):
        return NotApplicable(f"the receiver is sent no {big.type} events (enabled_events), and those are "
                             f"{ctx.profile.title}'s deliveries of several megabytes (it sends no other body that large)")
    return Plan(w, (Phase((big,), FaultPlan(mutations=(Mutation.OVERSIZE,)), max_attempts=1),
                    Phase(tuple(events[:2]))))


def _mass_redelivery(ctx: Context, w: World) -> Plan | NotApplicable:
    events = effect_events(ctx, w) + state_events(ctx, w)
    if (na := _need(events, f"effectful or {_stateful(w)}", ctx)) is not None:
        return na
    window = tuple(events)
    replay = tuple(ctx.profile.replayed(e, 1) for e in window)  # Paddle: new notifications of the same events
    return Plan(w, (Phase(window), Phase(replay, FaultPlan(order="shuffled", seed=w.seed))))


def _thin_event(ctx: Context, w: World) -> Plan | NotApplicable:
    if not ctx.profile.thin:
        return NotApplicable(f"{ctx.profile.title} events carry the object (snapshot events), not only its id")
    if not ctx.fetches_state:
        return NotApplicable("the receiver has no provider API to fetch from")
    events = effect_events(ctx, w)
    if (na := _need(events, "effectful", ctx)) is not None:
        return na
    return Plan(w, (Phase(tuple(events), FaultPlan(order="reversed")),))


def _downstream_lost(ctx: Context, w: World) -> Plan | NotApplicable:
    if not ctx.has_sink:
        return NotApplicable("the receiver's effects do not go through the effect sink (observer is not 'sink')")
    events = effect_events(ctx, w)
    if (na := _need(events, "effectful", ctx)) is not None:
        return na
    chosen = tuple(events[:2])
    faults = {key: "drop-after-apply" for e in chosen if (key := ctx.key_of(e))}
    return Plan(w, (Phase(chosen),), sink_faults=faults)


# ---- delivery patterns from real bug reports ---------------------------------------

def _related_burst(ctx: Context, w: World) -> Plan | NotApplicable:
    """Two new subscriptions and two payments; each one's first events in one race burst.

    Each subscription's burst holds states that differ, so an update lost to a concurrent
    one shows: the first starts ``incomplete`` and its paid first invoice makes it
    ``active`` (``payment_behavior=default_incomplete``), the second starts ``active``, bought
    through a subscription-mode Checkout where the stories open those (its
    ``checkout.session.completed`` in the burst beside its subscription's first events: a
    receiver provisioning on the session and on the first invoice races itself), and its next
    renewal fails at once (``past_due``)."""
    cus = _customer(w)
    groups: list[tuple[Event, ...]] = []
    for n in range(2):
        for types in RELATED_TYPES:
            start = len(w.events)
            if "invoice.paid" in types:
                _new_subscription_changing(ctx, w, cus, incomplete_first=n == 0)
            else:
                w.pay(cus)
            group = tuple(e for e in w.events[start:] if e.type in types and ctx.sends(e.type))
            if len(group) >= 2:
                groups.append(group)
    if not groups:
        return NotApplicable("the receiver is sent fewer than two of the first events of a new subscription "
                             "or payment (enabled_events)")
    return Plan(w, tuple(Phase(g, race=True, together=True) for g in groups))


def _new_subscription_changing(ctx: Context, w: World, customer: str, *, incomplete_first: bool) -> None:
    """A new subscription whose first events carry two statuses: ``incomplete`` then paid
    (``active``), or ``active`` (`_new_subscription`) then a failed renewal (``past_due``)."""
    if incomplete_first:
        invoice = w.get(_new_subscription(ctx, w, customer, default_incomplete=True))["latest_invoice"]
        if invoice and w.get(invoice)["status"] == "open":  # not when the seed's own subscription is bound
            w.retry_invoice(invoice, pay=True)
    else:
        w.renew(_new_subscription(ctx, w, customer), pay=False)


def _older_after_newer(ctx: Context, w: World) -> Plan | NotApplicable:
    """Two partial refunds R1, R2 of one charge, then R1 redelivered: the charge's
    ``charge.refunded`` events, or to an endpoint sent ``refund.created`` and not those, each
    refund's own (Stripe sends it for every refund: docs.stripe.com/changelog/acacia/2024-10-28/
    refund-webhook-update)."""
    kind = next((t for t in ("charge.refunded", "refund.created") if ctx.sends(t)), None)
    if kind is None:
        return NotApplicable("the receiver is sent no charge.refunded or refund.created events (enabled_events)")
    cus = _customer(w)
    charge = w.get(w.pay(cus))["latest_charge"]
    amount = w.get(charge)["amount"]
    start = len(w.events)
    w.refund(charge, amount // 4)
    w.refund(charge, amount // 4)
    r1, r2 = (e for e in w.events[start:] if e.type == kind)
    return Plan(w, (Phase((r1, r2)), Phase((r1,))))


def _stale_failure(ctx: Context, w: World) -> Plan | NotApplicable:
    """A renewal fails (attempt 1), then is paid (attempt 2); the failure arrives last. When the
    observer reads payment intents' states (`Context.state_kinds`), a payment intent declined,
    then paid on its retry (`declined_then_paid`), too: its ``payment_intent.payment_failed``
    arrives last beside the invoice's failure."""
    invoices = ctx.sends("invoice.payment_failed") and ctx.sends("invoice.paid")
    intents = _reads_intents(ctx) and ctx.sends("payment_intent.payment_failed") \
        and ctx.sends("payment_intent.succeeded")
    if not (invoices or intents):
        if _reads_intents(ctx):
            return NotApplicable("the receiver is not sent both invoice.payment_failed and invoice.paid, nor both "
                                 "payment_intent.payment_failed and payment_intent.succeeded (enabled_events)")
        return NotApplicable("the receiver is not sent both invoice.payment_failed and invoice.paid (enabled_events)")
    cus = _customer(w)
    story: list[Event] = []
    failed: list[Event] = []
    if invoices:
        start = len(w.events)
        sub = w.subscribe(cus)
        inv = w.renew(sub, pay=False)
        w.retry_invoice(inv, pay=True)
        story += [e for e in w.events[start:] if ctx.sends(e.type)
                  and (e.object_type == "subscription" or e.type in ("invoice.paid", "invoice.payment_failed"))]
        failed.append(next(e for e in story if e.type == "invoice.payment_failed"))
    if intents:
        paid = declined_then_paid(ctx, w, cus)
        story += paid
        failed += [e for e in paid if e.type == "payment_intent.payment_failed"]
    return Plan(w, (Phase(tuple(e for e in story if all(e is not f for f in failed))), Phase(tuple(failed))))


#: Distinct events of the redelivery window in flight together (a provider sends in parallel).
REDELIVERY_BATCH = 10


def _redelivery_window(ctx: Context, w: World) -> Plan | NotApplicable:
    """`ctx.redelivery_window` effectful events delivered once each, then all replayed in order."""
    if ctx.redelivery_window < 1:
        return NotApplicable("the redelivery window is empty")
    events: list[Event] = []
    while len(events) < ctx.redelivery_window:
        more = effect_events(ctx, w)
        if (na := _need(more, "effectful", ctx)) is not None:
            return na
        events += more
    window = tuple(events[:ctx.redelivery_window])
    replay = tuple(ctx.profile.replayed(e, 1) for e in window)  # Paddle: new notifications of the same events
    return Plan(w, (Phase(window, batch=REDELIVERY_BATCH), Phase(replay, batch=REDELIVERY_BATCH)))


#: Event types whose object a receiver fetches to confirm an effect.
FETCHED_TYPES = frozenset({"payment_intent.succeeded", "invoice.paid", "checkout.session.completed",
                           "invoice.payment_failed", "charge.refunded"})


def fetched_states(ctx: Context, w: World) -> list[Event]:
    """The last event the receiver is sent about each of two subscriptions (one renewed and
    active, one canceled), or of their invoices when the observer reads invoices' states
    (`_walked_kind`): a receiver keeping state fetches the object on it. Only the last: a later
    event of the object would fetch it again and hide a state update lost to a failed fetch."""
    cus = _customer(w)
    start = len(w.events)
    w.subscribe(cus)
    w.cancel(w.subscribe(cus))
    story = w.events[start:]
    kind = _walked_kind(ctx, story)
    last: dict[str, Event] = {}
    for e in story:
        if e.object_type == kind and e.status is not None and ctx.sends(e.type):
            last[e.object_id] = e
    return list(last.values())


def _provider_api_transient(ctx: Context, w: World) -> Plan | NotApplicable:
    """The first fetch of each object (or event) is a 500 or a 503; the next one works: the
    objects of the effects a receiver confirms (`FETCHED_TYPES`), and the objects whose state
    it keeps (`fetched_states`)."""
    if not ctx.fetches_state:
        return NotApplicable("the receiver has no provider API to fetch from")
    if ctx.profile.name != "stripe":
        return NotApplicable(f"the provider API serves Stripe's shapes; the {ctx.profile.title} profile's receivers "
                             "do not fetch from it")
    story = effect_events(ctx, w)
    owed_types = {e.type for e in story if ctx.key_of(e)}  # one fault an object: not its whole story's events
    # events that owe an effect themselves: a delayed checkout's unpaid completion owes none, and
    # the session a receiver fetches for it may be served paid already (its later settlement's
    # time is past), so fulfilling it would be right and judged unexpected
    effects = [e for e in story if e.type in FETCHED_TYPES and e.type in owed_types and ctx.key_of(e)]
    seen = {e.object_id for e in effects}
    events = effects + [e for e in fetched_states(ctx, w) if e.object_id not in seen]
    if (na := _need(events, "effectful or subscription", ctx)) is not None:
        return na
    faults: dict[str, ApiFault] = {}
    for i, e in enumerate(events):
        # Stripe answers an object an event names (docs.stripe.com/error-handling: 5xx "something went
        # wrong on Stripe's end"); a 404 is its "no such object", which dj-stripe rightly takes as deleted
        fault = ApiFault(status=500 if i % 2 == 0 else 503)
        faults[e.object_id] = fault
        faults[e.id] = fault
    return Plan(w, (Phase(tuple(events)),), api_faults=faults)


# ---- a fetch overtaken by a newer event ---------------------------------------------

def _fetch_overtaken(ctx: Context, w: World) -> Plan | NotApplicable:
    """A subscription created (delivered alone), then past due (its event's fetch answered late,
    `Phase.held`), then active again (delivered while that answer is held). In another
    provider's world, its state story's object (`state_events`): its first event alone, its
    second with the fetch held, and its last (another status) meanwhile: a Mercado Pago payment
    approved, then refunded while the fetch that read it approved is on its way."""
    if not ctx.fetches_state:
        return NotApplicable("the receiver has no provider API to fetch from")
    if isinstance(w, GitHubWorld) and (tied := _github_overtaken(ctx, w)):
        first, held, newer = tied
        return Plan(w, (Phase((first,)), Phase((held,), held=True), Phase((newer,))),
                    owes_effects=False, held_fetch=held.object_id)
    if not isinstance(w, World):
        if not w.serves_api:  # a user catalog's world
            return NotApplicable("hookproof serves no provider API for a catalog's objects: nothing to fetch")
        walked = state_events(ctx, w)
        story = [e for e in walked if e.object_id == walked[0].object_id] if walked else []
        if len(story) < 3 or story[-1].status == story[1].status:
            return NotApplicable(f"{ctx.world_name} tells no story of three states of one object "
                                 "the receiver is sent (enabled_events)")
        return Plan(w, (Phase((story[0],)), Phase((story[1],), held=True), Phase((story[-1],))),
                    owes_effects=False, held_fetch=story[1].object_id)
    if ctx.profile.name != "stripe":
        return NotApplicable(f"the provider API serves Stripe's shapes; the {ctx.profile.title} profile's receivers "
                             "do not fetch from it")
    if ctx.state_kinds is not None and "subscription" not in ctx.state_kinds:
        return NotApplicable("the observer reads no subscription states")
    cus = _customer(w)
    start = len(w.events)
    sub = w.subscribe(cus)
    inv = w.renew(sub, pay=False)
    w.retry_invoice(inv)
    story = [e for e in w.events[start:] if e.object_id == sub and ctx.sends(e.type)]
    created = [e for e in story if e.type == "customer.subscription.created"]
    past_due = [e for e in story if e.status == "past_due"]
    recovered = [e for e in story if past_due and e.version > past_due[0].version and e.status == "active"]
    if not (created and past_due and recovered):
        return NotApplicable("the receiver is sent no customer.subscription.created and .updated events "
                             "(enabled_events)")
    return Plan(w, (Phase(tuple(created)), Phase((past_due[0],), held=True), Phase((recovered[0],))),
                owes_effects=False, held_fetch=sub)


def _github_overtaken(ctx: Context, w: GitHubWorld) -> tuple[Event, Event, Event] | None:
    """`fetch-overtaken`'s story in the repository world: (delivered first, delivered with its
    fetch's answer held, delivered meanwhile), the last two one second's changes of one object,
    so the held answer and the newer one carry one ``updated_at`` (GitHub's counts whole seconds,
    docs "Webhook events and payloads"); None when the receiver is sent neither story (then the
    state story's walk, `state_events`, as in the other providers' worlds).

    An issue a triage bot labels and closes in one second (`GitHubWorld.triage`): ``issues.opened``,
    then ``issues.labeled`` (its fetch held: open) and ``issues.closed`` (closed), when the observer
    reads issues (or names no kind) and the receiver is sent those three; else a pull request a
    workflow closes and reopens in one second (`GitHubWorld.rerun_ci`): ``pull_request.opened``,
    ``.closed`` (held: closed) and ``.reopened`` (open). A receiver writing what it fetched over an
    older or equal ``updated_at`` without one fetch-and-write at a time per object lets the held,
    older answer land last; comparing with ``>`` instead drops the newer answer of an in-order tie
    (`stale-after-newer`): only the lock is right."""
    named = ctx.state_kinds
    if (not named or "issue" in named) and all(ctx.sends(t) for t in ("issues.opened", "issues.labeled",
                                                                      "issues.closed")):
        issue = w.same_second_story()
        opened, labeled, closed = (next(e for e in issue if e.type == t)
                                   for t in ("issues.opened", "issues.labeled", "issues.closed"))
        return opened, labeled, closed
    if (not named or "pull_request" in named) and all(ctx.sends(t) for t in ("pull_request.opened",
                                                                             "pull_request.closed",
                                                                             "pull_request.reopened")):
        start = len(w.events)
        pull_request = w.open_pull_request()
        w.rerun_ci(pull_request)
        opened, closed, reopened = (e for e in w.events[start:] if e.object_id == pull_request)
        return opened, closed, reopened
    return None


#: Where a scenario's description says what the provider does with a refused event: the
#: profile's own words in a run (`Profile.after_refusal`), `NEUTRAL_AFTER_REFUSAL` elsewhere.
AFTER_REFUSAL = "<after refusal>"
NEUTRAL_AFTER_REFUSAL = "the provider keeps retrying it, for days on most providers' schedules"
#: Where a scenario's description says what a receiver dedupes on: the event id, or in a run
#: whose events carry none, what it dedupes on instead (`Profile.no_event_id`).
EVENT_IDENTITY = "<event identity>"
NEUTRAL_EVENT_IDENTITY = "the event id"


def _scenario(id: str, title: str, description: str, checks: Sequence[str], checklist: Sequence[str],
              build: Callable[[Context, World], Plan | NotApplicable]) -> Scenario:
    template = description if AFTER_REFUSAL in description or EVENT_IDENTITY in description else ""
    neutral = description.replace(AFTER_REFUSAL, NEUTRAL_AFTER_REFUSAL).replace(EVENT_IDENTITY, NEUTRAL_EVENT_IDENTITY)
    return Scenario(id, title, neutral, tuple(checks),
                    with_accepts_valid(checks, checklist), build, overlap=OVERLAP.get(id, Overlap.ALONE),
                    worded=WORDED.get(id, ()), refusal_template=template)


def with_accepts_valid(checks: Sequence[str], checklist: Sequence[str]) -> tuple[str, ...]:
    """`checklist`, and "Accepts every valid delivery" last when `checks` judge the answers to
    valid deliveries (``valid_not_rejected``): a valid delivery refused with a 4xx (a parser
    rejecting one event type's body) fails that item, whatever else the scenario is about,
    and no other item for it (a duplicate refused after an acknowledged copy is
    ``duplicate_acked``'s)."""
    items = tuple(checklist)
    return (*items, "accepts-valid") if "valid_not_rejected" in checks and "accepts-valid" not in items else items


#: Scenarios whose story names a world's objects and states, in each provider world's words
#: (world kind, title, description); the catalog's own text is the billing world's. Each
#: names what `catalog._stale_after_newer` picks in that world (the status Stripe, Paddle,
#: Shopify's ``financial_status``, GitHub's issue ``state`` and Mercado Pago's payment
#: ``status`` take; tests/scenarios/test_scenario_words.py).
WORDED: Mapping[str, tuple[tuple[str, str, str], ...]] = {
    "stale-after-newer": (
        ("shopify", "An old update after the cancellation",
         "An order's delayed first event (orders/create, financial_status pending) arrives after its later "
         "ones (orders/paid, the refunds, orders/cancelled). Applying it would bring back a financial_status "
         "the order has left. A second order is paid, partly refunded and cancelled in one second (Shopify's "
         "updated_at counts whole seconds); its partial refund's orders/updated arrives after the cancellation: "
         "ordering by updated_at alone, with > or >=, gets one of them wrong; X-Shopify-Triggered-At tells them "
         "apart."),
        ("paddle", "An old update after the cancellation",
         "A subscription's delayed subscription.updated event of its declined renewal (status past_due) "
         "arrives after its later ones (subscription.past_due, recovered, then subscription.canceled). "
         "Applying it would bring back a status the subscription has left."),
        ("github", "An old update after the close",
         "An issue's delayed first event (issues.opened, state open) arrives after its later ones (labeled, "
         "closed, reopened, closed again). Applying it would reopen an issue that is closed. A second issue "
         "is labeled, commented on and closed by a bot in one second (GitHub's updated_at counts whole "
         "seconds); the comment's issue_comment.created arrives after the close. Likewise a pull request "
         "closed and reopened by a workflow in one second, in order, and another pushed to and merged by a bot in "
         "one second, its synchronize after the merge: ordering by updated_at, with > or >=, gets one of them "
         "wrong; GitHub sends no event time, so only the issue or pull request fetched from the REST API tells."),
        ("mercadopago", "An old notification after the refund",
         "A payment's delayed first notification (payment.created, when it was pending) arrives after its "
         "later ones (approved, then refunded). The receiver must keep the payment's current status, never "
         "go back to pending."),
        ("catalog", "An old update after newer ones",
         "An object's delayed earlier event arrives after its later ones. Applying it would bring back a "
         "state the object has left."),
    ),
    "concurrent-updates-stored-object": (
        ("shopify", "Two updates of a stored order arrive together",
         "An order is created and paid, each topic delivered and stored (orders/create, orders/paid, "
         "orders/updated); then two later topics of it "
         "in different financial_status and seconds (its partial refund's orders/updated, partially_refunded, "
         "and orders/cancelled, refunded) are released together (byte-synchronised), the newer first, over 8 "
         "orders. Both find the stored row, so no unique insert serialises them: an order read, compared "
         "(updated_at, X-Shopify-Triggered-At) and written without a row lock (select_for_update) or a "
         "conditional update lets the older write land last, and the order goes back to a financial_status "
         "it has left."),
        ("paddle", "Two updates of a stored subscription arrive together",
         "A subscription is created and its events delivered and stored (subscription.created, "
         "subscription.activated, subscription.updated, subscription.past_due); then two later events of it in "
         "different statuses and seconds (subscription.updated, active, and subscription.canceled) are released "
         "together (byte-synchronised), the newer first, over 8 subscriptions. Both find the stored row, so no "
         "unique insert serialises them: a subscription read, compared (occurred_at) and written without a row "
         "lock (select_for_update) or a conditional update lets the older write land last, and the "
         "subscription stays in a status it has left."),
        ("github", "Two updates of a stored issue arrive together",
         "An issue or pull request is opened and its events delivered and stored (issues.opened, issues.labeled, "
         "pull_request.opened, pull_request.edited); then two later "
         "events of it in different states and seconds (an issue's issues.reopened, open, and issues.closed; a pull "
         "request's pull_request.synchronize, open, and pull_request.closed, merged) are released together (byte-synchronised), the newer first, over 8 issues and pull "
         "requests. Both find the stored row, so no unique insert serialises them: a row read, compared "
         "(updated_at) and written without a row lock (select_for_update) or a conditional update lets the "
         "older write land last, and the issue shows a state it has left."),
        ("mercadopago", "Two notifications of a stored payment arrive together",
         "A Pix payment is created and approved, each notification delivered and stored (payment.created, "
         "pending, then payment.updated, approved); then two later payment.updated notifications of it in "
         "different statuses and seconds (its partial refund's, still approved, and its full refund's, "
         "refunded) are released "
         "together (byte-synchronised), the newer first, over 8 payments. Both find the stored row, so no "
         "unique insert serialises them: each refund must still be applied once and the payment end refunded. "
         "Mercado Pago's notifications carry no status and its API serves both fetches the refunded payment, so "
         "a status written whatever was fetched, without a row lock, is not caught here: a fetch answered after "
         "a newer one's write is fetch-overtaken's story."),
        ("catalog", "Two updates of a stored object arrive together",
         "An object is created and its events delivered and stored; then two later events of it in different "
         "states and seconds are "
         "released together (byte-synchronised), the newer first, over 8 objects. Both find the stored row, so "
         "no unique insert serialises them: a state read, compared and written without a row lock "
         "(select_for_update) or a conditional update lets the older write land last, and the object stays in "
         "a state it has left."),
    ),
    "related-burst": (
        ("shopify", "The first events of a new order arrive together",
         "The first topics of a new order (customers/create, orders/create and orders/paid of one checkout) "
         "are released together (byte-synchronised), twice. A get-or-create of the shared row (the customer, "
         "the order) that is not atomic fails or duplicates it (dj-stripe #409, pay-rails #371: the same race "
         "in billing packages); an effect granted from two topics must still happen once."),
        ("paddle", "The first events of a new subscription arrive together",
         "A checkout's first events (transaction.created, customer.created, address.created, "
         "transaction.updated, transaction.ready, transaction.paid, transaction.completed, subscription.created "
         "and subscription.activated) are released together (byte-synchronised), twice. A get-or-create of the "
         "shared row (the customer, the subscription) that is not atomic fails or duplicates it (dj-stripe "
         "#409, pay-rails #371: the same race in billing packages); an effect granted from two event types "
         "must still happen once, and a transaction's status read, compared and written without a lock "
         "loses the newer one."),
        ("mercadopago", "The first notifications of a new payment arrive together",
         "A payment's payment.created (status pending) and payment.updated (approved) notifications are "
         "released together (byte-synchronised), twice. A get-or-create of the payment's row that is not "
         "atomic fails or duplicates it; a status read, compared and written without a lock loses the "
         "newer one (approved)."),
    ),
    "fetch-overtaken": (
        ("mercadopago", "A slow fetch overtaken by a newer notification",
         "A Pix payment is approved; the receiver fetches it while handling that notification, and the provider "
         "API is slow to answer (read when asked, answered up to a second later). Meanwhile the payment is "
         "refunded and its notification is delivered and handled, fetching the refunded payment. A receiver "
         "writing what it fetched without comparing date_last_updated lets the older fetch's write land last: "
         "the payment stays approved. Applies only to receivers that fetch."),
        ("paddle", "A slow fetch overtaken by a newer event",
         "A subscription is updated; the receiver fetches it while handling that event, and the provider API is "
         "slow to answer (read when asked, answered up to a second later). Meanwhile the subscription is "
         "canceled and that event is delivered and handled, fetching the canceled subscription. A receiver "
         "writing what it fetched without comparing updated_at lets the older fetch's write land last. Applies "
         "only to receivers that fetch."),
        ("shopify", "A slow fetch overtaken by a newer event",
         "An order is paid; the receiver fetches it while handling that event, and the Admin API is slow to "
         "answer (read when asked, answered up to a second later). Meanwhile the order is refunded and "
         "cancelled and that event is delivered and handled, fetching the newer order. A receiver writing what "
         "it fetched without comparing updated_at lets the older fetch's write land last. Applies only to "
         "receivers that fetch."),
        ("github", "A slow fetch overtaken by a newer event",
         "A triage bot labels an issue and closes it in one second; the receiver fetches the issue while "
         "handling the label's event, and the REST API is slow to answer (read when asked, answered up to a "
         "second later). Meanwhile the close is delivered and handled, fetching the closed issue. Both answers "
         "carry one updated_at (GitHub's counts whole seconds), so a receiver writing what it fetched without "
         "one fetch-and-write at a time per object (a row lock), whether or not it compares updated_at, lets the "
         "older fetch's write land last: the issue stays open (to an App reading only pull requests' states, a "
         "workflow closes and reopens a pull request in one second, the close's fetch held: it stays closed). "
         "Applies only to receivers that fetch."),
    ),
    # Shopify has no manual replay: the same event comes again as a new delivery through a second
    # subscription to its topic (`ShopifyProfile.replayed`; shopify.dev "Ignore duplicate webhooks").
    "mass-redelivery": (
        ("shopify", "Every event again through a second subscription",
         "The endpoint has a second subscription to the same topics (webhooks declared both in "
         "shopify.app.toml and through the Admin API), so every event of a window comes again, shuffled, "
         "once per subscription: the same body, X-Shopify-Event-Id and X-Shopify-Triggered-At, a new "
         "X-Shopify-Webhook-Id (shopify.dev, \"Ignore duplicate webhooks\": one webhook per subscription). "
         "Deduplication must use X-Shopify-Topic with X-Shopify-Event-Id (one merchant action's topics share "
         "the Event-Id): every effect must stay single and every state current."),
    ),
    "mass-redelivery-window": (
        ("shopify", "A large window again through a second subscription",
         "Every event of a window (200 by default) is delivered, then delivered again through a second "
         "subscription to its topic: the same X-Shopify-Event-Id, a new X-Shopify-Webhook-Id. A dedupe keyed "
         "by X-Shopify-Webhook-Id, or one that remembers only the latest ids (an in-memory LRU), applies "
         "them again."),
    ),
    # Providers that sign no timestamp send a retry as the same request, byte for byte.
    "transport-fields-change": (
        ("github", "A retry of the same delivery",
         "GitHub signs no timestamp, so a redelivery is the same request byte for byte, with the same "
         "X-GitHub-Delivery. The business effect must happen once."),
        ("shopify", "A retry of the same delivery",
         "Shopify signs no timestamp, so a retry is the same request byte for byte, with the same "
         "X-Shopify-Webhook-Id and X-Shopify-Event-Id. The business effect must happen once."),
    ),
}


#: Each catalog scenario's `Overlap` (scheduling metadata; unlisted: ``ALONE``).
OVERLAP: Mapping[str, Overlap] = {
    **dict.fromkeys(("duplicate-sequential", "dropped-response", "reserialized-retry", "transport-fields-change",
                     "mass-redelivery", "older-after-newer-redelivery"), Overlap.REPEATS),
    **dict.fromkeys(("reorder", "stale-after-newer", "distinct-events-same-object", "distinct-updates-same-object",
                     "reserialized-body", "forged-signature", "missing-signature", "wrong-secret", "stale-timestamp",
                     "future-timestamp", "secret-rotation", "test-mode-to-live", "foreign-account", "unknown-event-type",
                     "stale-failure-after-success"),
                    Overlap.FRESH),
    "mass-redelivery-window": Overlap.FLOODS,
}


SCENARIOS: tuple[Scenario, ...] = (
    _scenario("duplicate-sequential", "Duplicate deliveries, one after another",
              "The provider delivers the same event three times, a moment apart, as it does after a "
              "timeout or an incident. The business effect must happen once, and every copy must be "
              "acknowledged with a 2xx: after a 409 or 5xx, <after refusal>.",
              (*EFFECTS, "duplicate_acked"), ("duplicates-tested", "retries-bounded"),
              _effects_plan(FaultPlan(copies=3, spacing_s=0.02))),
    _scenario("duplicate-concurrent", "Concurrent duplicate burst",
              "Copies of the same event arrive at the same instant (released byte-synchronised so they "
              "truly overlap). A check-then-act dedupe lets several through; only a unique constraint "
              "or an atomic claim keeps the effect single.",
              EFFECTS, ("unique-under-concurrency", "duplicates-tested"), _duplicate_concurrent),
    _scenario("sender-timeout", "The provider gives up before the answer",
              "The provider stops waiting before the receiver answers and retries, while the first "
              "request may still be applying. The effect must still happen exactly once.",
              ("duplicated", "lost", "unexpected", "valid_not_rejected"), ("timeouts-tested", "persists-before-ack"),
              _sender_timeout),
    _scenario("dropped-response", "The answer is lost",
              "The receiver answers 200 but the answer never reaches the provider, which retries. "
              "The retry must not apply the effect again.",
              ("duplicated", "lost", "unexpected", "valid_not_rejected"), ("timeouts-tested", "duplicates-tested"),
              _effects_plan(FaultPlan(drop_responses=1))),
    _scenario("reorder", "Events of one object arrive in reverse",
              "The events of one object (a subscription, an order, an issue) arrive newest first. The "
              "receiver must end in the provider's current state and never show an older state after a "
              "newer one.",
              ("regressed", "stale", "no_server_error", "valid_not_rejected"), ("reordering-tested",), _reorder),
    _scenario("stale-after-newer", "An old update after the cancellation",
              "A subscription's delayed earlier update (status past_due) arrives after its later ones (the "
              "cancellation). Applying it would bring back a status the subscription has left. A second "
              "subscription fails a renewal, recovers, and its cancellation follows in the same second (Stripe's "
              "created counts whole seconds); its recovery arrives after the cancellation: ordering by created, "
              "with > or >=, gets one of them wrong. Where the observer reads payment intents' states, a payment "
              "intent's declined first confirmation (payment_intent.payment_failed) arrives after its payment.",
              ("regressed", "stale", "no_server_error", "valid_not_rejected"), ("reordering-tested",),
              _stale_after_newer),
    _scenario("distinct-events-same-object", "Several events of one object are all effects",
              "One object gets several events that are each an effect of their own (two payment attempts, "
              "two partial refunds). Each must be applied: dedupe by event, not by object.",
              (*EFFECTS, "counter"), ("duplicates-tested",), _distinct_events),
    _scenario("distinct-updates-same-object", "Successive updates of one object, in order",
              "One object changes several times (a subscription renewed, then past due; an order paid, "
              "noted, then partly refunded; an issue closed, reopened, closed again), each change its own "
              "event, some of one type, delivered in order and each acknowledged. The receiver must end "
              "in the provider's state and apply every effect: a dedupe keyed by the object (or by its "
              "type and object) drops the later update as a duplicate.",
              ("stale", "regressed", "lost", "duplicated", "unexpected", "no_server_error", "valid_not_rejected"),
              ("duplicates-tested",), _updates_same_object),
    _scenario("reserialized-retry", "A retry with other body bytes",
              "The same event comes back with its JSON re-serialised (key order, spacing, escapes), "
              "correctly signed. Deduplication must use <event identity>, not a hash of the body, and the "
              "signature be checked over the raw body: after a refused copy, <after refusal>.",
              (*EFFECTS, "duplicate_acked"), ("duplicates-tested",), _reserialized_retry),
    _scenario("reserialized-body", "A delivery in other JSON bytes",
              "An event whose body is its JSON in other bytes than the provider's usual ones (sorted keys, "
              "indentation, \\u escapes), correctly signed over them. A provider's bytes are not any "
              "library's re-dump of the parsed JSON (Stripe pretty-prints; other bodies carry escapes a "
              "re-dump writes otherwise), so the signature must be checked over the raw body: a receiver "
              "verifying a re-serialisation refuses it: after that refusal, <after refusal>.",
              EFFECTS, ("raw-body-signature",), _reserialized_body),
    _scenario("transport-fields-change", "A retry with a new timestamp and signature",
              "Each retry carries a fresh timestamp and signature; <event identity> stays. Deduplication "
              "must not depend on transport fields.",
              (*EFFECTS, "duplicate_acked"), ("duplicates-tested",),
              _mutation_plan(Mutation.TRANSPORT_FIELDS, copies=2, mutate="retries", max_attempts=None)),
    _scenario("forged-signature", "A forged signature",
              "A request signed with a key that is not the endpoint's secret. It must be refused (4xx) "
              "and have no effect.",
              ("unexpected", "no_server_error"), ("raw-body-signature",), _mutation_plan(Mutation.FORGED)),
    _scenario("missing-signature", "No signature at all",
              "A request without the signature header. It must be refused (4xx) and have no effect.",
              ("unexpected", "no_server_error"), ("raw-body-signature",), _mutation_plan(Mutation.MISSING_SIGNATURE)),
    _scenario("wrong-secret", "Signed with another endpoint's secret",
              "A well-formed signature made with another endpoint's secret. It must be refused and have "
              "no effect.",
              ("unexpected", "no_server_error"), ("raw-body-signature",), _mutation_plan(Mutation.WRONG_SECRET)),
    _scenario("stale-timestamp", "A valid signature over an old timestamp",
              "A replayed request: correctly signed, but its timestamp is past the tolerance of the "
              "provider's official verifier. It must be refused.",
              ("unexpected", "no_server_error"), ("raw-body-signature",), _mutation_plan(Mutation.STALE_TIMESTAMP)),
    _scenario("future-timestamp", "A valid signature over a future timestamp",
              "A correctly signed request whose timestamp lies past the tolerance, in the future (a sender "
              "whose clock runs ahead, or a request forged for later replay). Where the provider's official "
              "verifiers reject it (Standard Webhooks') it must be refused with no effect; where one accepts "
              "it (Stripe's SDK, Paddle's Node SDK: they check only the past) refusing it is an advisory.",
              ("unexpected", "valid_not_rejected", "no_server_error"), ("raw-body-signature",),
              _mutation_plan(Mutation.FUTURE_TIMESTAMP)),
    _scenario("secret-rotation", "Two signatures during a secret roll",
              "During a secret rotation the provider signs with the old and the new secret. A request "
              "carrying both must be accepted once. Where an official verifier reads only the last "
              "signature and the provider gives no order (Paddle's Node SDK), one more event comes with "
              "the receiver's own signature first, and refusing it is an advisory.",
              EFFECTS, ("raw-body-signature",), _secret_rotation),
    _scenario("test-mode-to-live", "A test-mode event to a live endpoint (or the reverse)",
              "An event whose test/live flag does not match the receiver's environment. It must have no "
              "effect; acknowledging it (2xx) or refusing it (4xx) are both correct.",
              ("unexpected", "no_server_error"), ("refuses-foreign",), _mutation_plan(Mutation.LIVEMODE_MISMATCH)),
    _scenario("foreign-account", "An event of another account",
              "An event for another provider account than the receiver's. It must have no effect; "
              "acknowledging it (2xx) or refusing it (4xx) are both correct.",
              ("unexpected", "no_server_error"), ("refuses-foreign",), _mutation_plan(Mutation.FOREIGN_ACCOUNT)),
    _scenario("unknown-event-type", "An event type the receiver does not handle",
              "Providers add event types. An unhandled type must be acknowledged (2xx) with no effect, "
              "and the next event still applied: after a 4xx, <after refusal>.",
              ("no_server_error", "valid_not_rejected", "lost", "duplicated", "unexpected"), ("refuses-foreign", "retries-bounded"),
              _unknown_type),
    _scenario("oversized-payload", "A body of several megabytes",
              "A delivery of over 3 MiB the provider really sends, grown through its own fields (GitHub: a "
              "push of many commits), then the next valid deliveries, which must be applied. Where the "
              "provider documents a larger cap and does not retry (GitHub's 25 MB), refusing it loses the "
              "event for good: a finding; where it would retry the same bytes, an advisory. Not applicable "
              "where the provider sends no body that large.",
              ("lost", "duplicated", "valid_not_rejected"), ("transient-vs-permanent",), _oversized),
    _scenario("mass-redelivery", "The provider replays a whole window",
              "After an incident the provider redelivers every event of a window, shuffled (a replay: "
              "Paddle sends each as a new notification, a new notification_id with the same event_id). "
              "Every effect must stay single and every state current.",
              (*EFFECTS, "counter", "stale", "regressed"), ("duplicates-tested", "reordering-tested"),
              _mass_redelivery),
    _scenario("thin-event", "Thin events: the receiver fetches the truth",
              "Events carry only the object's id, newest first. The receiver must fetch the current "
              "object from the provider API and end in the provider's truth.",
              (*EFFECTS, "stale"), ("reordering-tested",), _thin_event),
    _scenario("downstream-lost-response", "The downstream call's answer is lost",
              "The effect service applies the effect and then the connection drops. The receiver must "
              "retry with the same Idempotency-Key, so the effect happens once.",
              ("duplicated", "lost", "downstream_idempotency"), ("transient-vs-permanent",), _downstream_lost),
    _scenario("related-burst", "The first events of a new object arrive together",
              "The first events of a new object (billing: a subscription's created, updated and "
              "invoice.paid, with checkout.session.completed for a plan bought through a subscription-mode "
              "Checkout; a payment's payment_intent.succeeded and charge.succeeded) are released "
              "together (byte-synchronised). "
              "A get-or-create of the shared row that is not atomic fails or duplicates it (dj-stripe #409, "
              "pay-rails #371); an effect granted from two event types must still happen once. Each "
              "subscription's events carry two statuses (incomplete then active; active then past due): "
              "a state read, compared and written without a lock loses the newer one.",
              (*EFFECTS, "stale", "regressed"), ("unique-under-concurrency", "retries-bounded"), _related_burst),
    _scenario("concurrent-updates-stored-object", "Two updates of a stored object arrive together",
              "An object is created and its events delivered one by one, so its row is stored (a subscription "
              "created and renewed); then two later updates of it, in different states and seconds (past due, then "
              "canceled), are released together "
              "(byte-synchronised), the newer first, over 8 objects. Both find the stored row, so no unique insert "
              "serialises them: a state read, compared (created, the version) and written without a row lock "
              "(select_for_update) or a conditional update lets the older write land last, and the object stays in "
              "a state it has left.",
              ("stale", "regressed", "lost", "duplicated", "unexpected", "no_server_error", "valid_not_rejected"),
              ("reordering-tested", "unique-under-concurrency"), _stored_update_bursts),
    _scenario("older-after-newer-redelivery", "An older refund redelivered after a newer one",
              "Two partial refunds of one charge (or order), R1 then R2, and then R1 again. A receiver that remembers "
              "only the last refund it processed takes R1 for a new one and refunds it twice "
              "(WooCommerce Stripe gateway #5697).",
              (*EFFECTS, "counter"), ("duplicates-tested", "reordering-tested"), _older_after_newer),
    _scenario("stale-failure-after-success", "A payment failure delivered after the payment",
              "A renewal's first attempt fails and its second is paid; the failure event arrives last. "
              "Applying it would mark a paid subscription past due (Polar #14274). Where the observer reads "
              "payment intents' states, a payment intent's declined first confirmation "
              "(payment_intent.payment_failed) also arrives after its paid retry (payment_intent.succeeded).",
              ("stale", "regressed", "lost", "duplicated", "unexpected", "no_server_error", "valid_not_rejected"),
              ("reordering-tested",), _stale_failure),
    _scenario("mass-redelivery-window", "A large window replayed after it was delivered",
              "Every event of a window (200 by default) is delivered, then the provider replays the whole "
              "window. A dedupe that remembers only the latest ids (an in-memory LRU) applies the "
              "replayed ones again, without any restart.",
              (*EFFECTS, "counter"), ("duplicates-tested",), _redelivery_window),
    _scenario("provider-api-transient", "The provider API fails the first fetch",
              "The provider API fails the first fetch of each object, then recovers: Stripe's with a 5xx, "
              "the others' with a 404 (not visible yet) or a 500. The receiver must answer so that the provider retries, and apply the effect "
              "on the retry: one that marks the event processed before handling it loses the effect "
              "(dj-stripe #832), or the state update it fetched for. Applies only to receivers that fetch.",
              ("duplicated", "lost", "unexpected", "counter", "stale", "valid_not_rejected"),
              ("transient-vs-permanent", "persists-before-ack"), _provider_api_transient),
    _scenario("fetch-overtaken", "A slow fetch overtaken by a newer event",
              "A subscription goes past due; the receiver fetches it while handling that event, and the "
              "provider API is slow to answer (read when asked, answered up to a second later). Meanwhile "
              "the subscription recovers and its event is delivered and handled, fetching the active state. "
              "A read, fetch and write without a row lock (select_for_update) lets the older fetch's write "
              "land last: the subscription stays past due. Applies only to receivers that fetch.",
              ("stale", "regressed", "no_server_error", "valid_not_rejected"), ("reordering-tested",),
              _fetch_overtaken),
)

#: Scenario id -> scenario.
CATALOG: Mapping[str, Scenario] = {s.id: s for s in SCENARIOS}
