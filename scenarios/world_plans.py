"""Catalog scenarios over a world other than the billing one (the GitHub repository world).

The catalog's builders are written over the billing world. Those that only use its
stories (`catalog.effect_events`, `catalog.state_events`: one event of each effectful
type, one stateful object's whole life) run unchanged on any world that tells those
stories (`effect_story`, `state_story`); they are listed in `STORY_SCENARIOS`. A few
have their own version here (`OWN_PLANS`: several effects of one object, an event type
the receiver does not handle, an oversized delivery, the provider API failing the first
fetch of each object it serves, and, for a provider that never
retries on its own (GitHub), a timed-out or unanswered delivery followed by its manual
redelivery, the same event again). A world may tell more stories (Shopify's: the first
events of new orders released together, `related_groups`; two refunds of one order and the
older one redelivered, `refund_pair`; Paddle's too, and a declined renewal recovered with its
failure delivered last, `failure_recovery`; Mercado Pago's related groups, a payment's
created and updated notifications together); a world that does not tell a scenario's story gets
it `NotApplicable`. Every other scenario is `NotApplicable`, with the reason, never run
over the wrong world.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping

from hookproof.simulator.faults import FaultPlan

#: Scenarios whose builders use only the world's stories (catalog and chaos tiers).
STORY_SCENARIOS: frozenset[str] = frozenset({
    "duplicate-sequential", "duplicate-concurrent", "reorder", "distinct-updates-same-object",
    "stale-after-newer", "reserialized-retry", "reserialized-body", "transport-fields-change", "forged-signature",
    "missing-signature", "wrong-secret", "stale-timestamp", "future-timestamp", "secret-rotation",
    "test-mode-to-live", "foreign-account", "mass-redelivery", "mass-redelivery-window", "thin-event",
    "downstream-lost-response", "concurrent-updates-stored-object", "crash-after-ack", "restart-between-duplicates", "pause-past-timeout",
    "network-drop-response", "kill-during-processing", "replicas-duplicates", "fetch-overtaken",
})


def _distinct(ctx: Any, w: Any) -> Any:
    """Several effects of one object (the world's `distinct_story`). A user's catalog tries
    every type under the keys in force (the team's too), and an object through the types moving
    a team's counter (`counted_story`), whatever the endpoint is sent: an
    empty story is the catalog's own reason (each type's key is one per object), and one the
    endpoint is sent none of names the types and enabled_events. A provider's world tells one
    such story (Paddle's: a subscription past due in two periods): sent none of it, the reason
    names its types and that enabled_events leaves them out, not the other effectful types
    the receiver is sent, which owe one effect per object there; sent them, made effectless by
    the team's keys, the keys alone are named."""
    from hookproof.scenarios.catalog import NotApplicable, Phase, Plan, _counted_types, _need, owes
    from hookproof.simulator.world.user_catalog import UserCatalogWorld

    catalog = isinstance(w, UserCatalogWorld)
    story = w.distinct_story(ctx.key_of if ctx.keys is not None else None) if catalog else w.distinct_story()
    if catalog:  # and an object moving a team's counter twice (a membership created, then deleted)
        story += w.counted_story(_counted_types(ctx))
    events = [e for e in story if ctx.sends(e.type) and owes(ctx, e)]
    if not story:  # the world has no such story, whatever the endpoint is sent
        return NotApplicable(f"no object in {ctx.world_name} gets two effects of its own: each "
                             "effectful type's business key is the same for every event of one object (one effect "
                             "per object), so deduplicating by object loses nothing")
    if not events and catalog:  # every event of the story owes an effect: none is sent
        named = ", ".join(dict.fromkeys(e.type for e in story))
        return NotApplicable(f"the receiver is sent none of the types that give one object two effects in "
                             f"{ctx.world_name} ({named}) (enabled_events)")
    types = list(dict.fromkeys(e.type for e in story))
    unsent = [t for t in types if not ctx.sends(t)]
    if not events and unsent:  # the world's one such story left out: say which of its types
        head = f"in {ctx.world_name} only {', '.join(types)} events give one object two effects of its own"
        if len(unsent) == len(types):
            return NotApplicable(f"{head}, and the receiver is sent none (enabled_events)")
        keyless = ", ".join(t for t in types if t not in unsent)
        return NotApplicable(f"{head}: the receiver is sent no {', '.join(unsent)} (enabled_events), and the "
                             f"team's business keys make its {keyless} effectless (business_keys, builtin_keys)")
    if (na := _need(events, "effectful", replace(ctx, enabled=None))) is not None:  # sent, made effectless
        return na
    return Plan(w, (Phase(tuple(events)),))


#: provider -> why a receiver whose subscription is listed (``target.enabled_events``) is sent no
#: type outside it, so an unhandled type is no test of it: the provider delivers each
#: destination only the event types it subscribed to.
SUBSCRIBED_ONLY: Mapping[str, str] = {
    "paddle": ("Paddle sends a notification destination only the event types it is subscribed to (its "
               "subscribed_events, developer.paddle.com/api-reference/notification-settings: which event types "
               "you want to get notifications for)"),
    "mercadopago": ("Mercado Pago sends an application's Webhooks only for the events registered in Your "
                    "integrations (mercadopago.com/developers/en/docs/your-integrations/notifications/webhooks: "
                    "the Webhook will be sent whenever one or more registered events occur)"),
    "shopify": ("Shopify sends an app only the topics it has a webhook subscription for, one subscription per "
                "topic (shopify.dev/docs/apps/build/webhooks/subscribe: a webhook subscription tells Shopify which "
                "events your app is interested in)"),
}


def _unknown(ctx: Any, w: Any) -> Any:
    """A type outside the receiver's handling (the world's `unknown_event`), then an effectful
    event. Not applicable where the receiver's subscription is listed (`Context.enabled`) and
    the provider sends a destination only its subscribed types (`SUBSCRIBED_ONLY`), as
    `catalog._unknown_type` is for Stripe: a 4xx to a type the provider never sends it is no
    finding."""
    from hookproof.scenarios.catalog import NotApplicable, Phase, Plan, effect_events

    why = SUBSCRIBED_ONLY.get(getattr(w, "provider", ""))
    if ctx.enabled is not None and why is not None:
        return NotApplicable(f"{why}; target.enabled_events lists the receiver's, so it is sent no other type: "
                             "leave enabled_events out to test an unhandled type")
    unknown = w.unknown_event()
    events = effect_events(ctx, w)[:1]
    return Plan(w, (Phase((unknown,), max_attempts=2), Phase(tuple(events))))


def _oversized(ctx: Any, w: Any) -> Any:
    """The world's own delivery of several megabytes, where it has one (`catalog._oversized`)."""
    from hookproof.scenarios.catalog import _oversized as oversized

    return oversized(ctx, w)


def _redelivered(plan: FaultPlan) -> Callable[[Any, Any], Any]:
    """`plan`'s first attempts, then, when the provider does not retry by itself, a manual
    redelivery of the same events (GitHub: "Redeliver" keeps the X-GitHub-Delivery). Over the
    first three effectful events and the first of each optional type owing an effect
    (`catalog.with_optional`: Shopify's compliance topics the endpoint is subscribed to)."""
    def build(ctx: Any, w: Any) -> Any:
        from hookproof.scenarios.catalog import Phase, Plan, _need, effect_events, with_optional

        events = effect_events(ctx, w)
        if (na := _need(events, "effectful", ctx)) is not None:
            return na
        chosen = tuple(with_optional(ctx, events, 3))  # Shopify's compliance topics the endpoint is sent too
        if ctx.profile.retry_schedule_s:
            return Plan(w, (Phase(chosen, plan),))
        return Plan(w, (Phase(chosen, plan, max_attempts=1), Phase(chosen)))
    return build


def _untold(ctx: Any) -> Any:
    from hookproof.scenarios.catalog import NotApplicable

    return NotApplicable(f"written over the billing world's objects; {ctx.world_name} has no equivalent story")


def _related_burst(ctx: Any, w: Any) -> Any:
    """Each new object's first events released together (Shopify: a checkout's customer and order;
    Mercado Pago: a payment's ``payment.created`` and ``payment.updated``)."""
    from hookproof.scenarios.catalog import NotApplicable, Phase, Plan

    if not hasattr(w, "related_groups"):
        return _untold(ctx)
    groups = [g for g in (tuple(e for e in group if ctx.sends(e.type)) for group in w.related_groups())
              if len(g) >= 2]
    if not groups:
        return NotApplicable("the receiver is sent fewer than two of the first events of a new object (enabled_events)")
    return Plan(w, tuple(Phase(g, race=True, together=True) for g in groups))


def _older_after_newer(ctx: Any, w: Any) -> Any:
    """Two refunds R1, R2 of one object, then R1 redelivered (Shopify: two refunds of one order)."""
    from hookproof.scenarios.catalog import NotApplicable, Phase, Plan

    if not hasattr(w, "refund_pair"):
        return _untold(ctx)
    r1, r2 = w.refund_pair()
    if not ctx.sends(r1.type):
        return NotApplicable(f"the receiver is sent no {r1.type} events (enabled_events)")
    return Plan(w, (Phase((r1, r2)), Phase((r1,))))


def _stale_failure(ctx: Any, w: Any) -> Any:
    """A renewal declined, then paid; its failure event delivered last (Paddle: the
    ``subscription.past_due`` after the recovered renewal's events and ``subscription.updated``)."""
    from hookproof.scenarios.catalog import NotApplicable, Phase, Plan

    if not hasattr(w, "failure_recovery"):
        return _untold(ctx)
    story, failed = w.failure_recovery()
    if not ctx.sends(failed.type):
        return NotApplicable(f"the receiver is sent no {failed.type} events (enabled_events)")
    rest = tuple(e for e in story if e is not failed and ctx.sends(e.type))
    if not rest:
        return NotApplicable(f"the receiver is sent nothing of the recovery but {failed.type} (enabled_events)")
    return Plan(w, (Phase(rest), Phase((failed,))))


def _served_types(w: Any) -> frozenset[str]:
    """The object types the provider API serves for world `w` (empty: it serves none of them)."""
    from hookproof.simulator.server import github, mercadopago, paddle, shopify

    served = {"github": github.SERVED_TYPES, "mercadopago": mercadopago.SERVED_TYPES, "paddle": paddle.SERVED_TYPES,
              "shopify": shopify.SERVED_TYPES}
    return served.get(str(getattr(w, "provider", "")), frozenset())


def _api_transient(ctx: Any, w: Any) -> Any:
    """The first fetch of each object the provider API serves is a 404 or a 500; the next one
    works (the catalog's rules for Stripe, over the first effectful event of each object
    the API serves: a later event of the object would fetch it again and hide an
    acknowledged failure). A provider that never retries on its own (GitHub) gets a manual
    redelivery of those of the same events the receiver did not answer 2xx (an App answering first
    and fetching afterwards loses what a failed fetch kept it from applying)."""
    from hookproof.scenarios.catalog import ApiFault, NotApplicable, Phase, Plan, _need, effect_events, owes

    if not ctx.fetches_state:
        return NotApplicable("the receiver has no provider API to fetch from")
    served = _served_types(w)
    if not served:
        return _untold(ctx)
    firsts: dict[str, Any] = {}
    effectful = effect_events(ctx, w)
    for e in effectful:
        if e.object_type in served:
            firsts.setdefault(e.object_id, e)
    events = _unchanged_when_served(w, list(firsts.values()) + _last_states(ctx, w, _state_types(w)))
    if not events and effectful:  # effects owed, none on an object the API serves (a CI App's check suites)
        types = ", ".join(dict.fromkeys(e.type for e in effectful if owes(ctx, e)))
        return NotApplicable(f"the receiver's effectful events ({types}) are about objects the provider API does "
                             f"not serve: it serves {', '.join(sorted(served))}, and the receiver is sent no "
                             f"effectful event about one (enabled_events), so no fetch of it can fail")
    if (na := _need(events, "effectful", ctx)) is not None:
        return na
    faults = {e.object_id: ApiFault(not_found=True) if i % 2 == 0 else ApiFault(status=500)
              for i, e in enumerate(events)}
    chosen = tuple(events)
    if ctx.profile.retry_schedule_s:
        return Plan(w, (Phase(chosen),), api_faults=faults)
    # the failed deliveries alone, as a team redelivers them by hand (docs.github.com "Handling failed
    # webhook deliveries"): one the receiver answered 2xx before its fetch failed is never sent again
    return Plan(w, (Phase(chosen, max_attempts=1), Phase(chosen, failed_only=True)), api_faults=faults)


def _state_types(w: Any) -> frozenset[str]:
    """The object types whose state a receiver of world `w` keeps by fetching the object on any
    event about it (each event a whole snapshot, no effect read from the fetch): Paddle's
    subscriptions (`simulator.server.paddle.STATE_TYPES`); none elsewhere (a Mercado Pago
    receiver reads a payment's effect from the fetch too: its last event alone would be an
    effect the provider never sent it the start of)."""
    from hookproof.simulator.server import paddle

    return paddle.STATE_TYPES if str(getattr(w, "provider", "")) == "paddle" else frozenset()


def _last_states(ctx: Any, w: Any, kinds: frozenset[str]) -> list[Any]:
    """The last event the receiver is sent about each of two objects of `kinds` (two tellings of
    the world's state story: a Paddle subscription's life), as `catalog.fetched_states` picks
    Stripe's two subscriptions: a receiver keeping state fetches the object on it. Only the
    last: a later event of the object would fetch it again and hide a state update lost to a
    failed fetch."""
    from hookproof.scenarios.catalog import state_events

    if not kinds:
        return []
    last: dict[str, Any] = {}
    for _ in range(2):
        story = [e for e in state_events(ctx, w) if e.object_type in kinds and e.status is not None]
        if story:
            last[story[-1].object_id] = story[-1]
    return list(last.values())


def _unchanged_when_served(w: Any, events: list[Any]) -> list[Any]:
    """`events` without those whose object's status changed between the event and the last of
    `events`: the provider API serves an object as of the deliveries made so far, so such an
    object (a GitHub pull request merged before the next object's first event, its
    ``pull_request.closed`` owing no effect and not sent) would be served in a state no
    delivered event carried, and a receiver storing what it fetched, as it should, would
    end in a state the delivered events do not explain."""
    if not events:
        return events
    order = {id(e): i for i, e in enumerate(w.events)}
    last = max(order.get(id(e), -1) for e in events)
    status_then: dict[str, Any] = {}
    for e in w.events[:last + 1]:
        if e.object_id is not None and e.status is not None:
            status_then[e.object_id] = e.status
    return [e for e in events if e.status is None or status_then.get(e.object_id, e.status) == e.status]


def _timeout(ctx: Any, w: Any) -> Any:
    return _redelivered(FaultPlan(sender_timeout_s=ctx.sender_timeout_s, timeouts=1))(ctx, w)


#: Scenario id -> its builder over a story-telling world.
OWN_PLANS: Mapping[str, Callable[[Any, Any], Any]] = {
    "distinct-events-same-object": _distinct,
    "unknown-event-type": _unknown,
    "oversized-payload": _oversized,
    "sender-timeout": _timeout,
    "dropped-response": _redelivered(FaultPlan(drop_responses=1)),
    "related-burst": _related_burst,
    "older-after-newer-redelivery": _older_after_newer,
    "stale-failure-after-success": _stale_failure,
    "provider-api-transient": _api_transient,
}


def plan_for(scenario: Any, ctx: Any, world: Any) -> Any:
    """The `Plan` (or `NotApplicable`) of catalog `scenario` over `world`, a non-billing world."""
    from hookproof.scenarios.catalog import NotApplicable

    own = OWN_PLANS.get(scenario.id)
    if own is not None:
        return own(ctx, world)
    if scenario.id in STORY_SCENARIOS:
        return scenario.build(ctx, world)
    return NotApplicable(f"written over the billing world's objects; {ctx.world_name} has no equivalent story")
