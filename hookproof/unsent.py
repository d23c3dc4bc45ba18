"""The event types a config enables that a run never sent: the note certify, explore and storm add.

A run that never sends a type the receiver is configured for (``target.enabled_events``, a
``[business_keys]`` or ``[counters]`` entry) judges nothing of how the receiver handles it,
so its verdict is silent there; the note names those types (the profile's own names).
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

if TYPE_CHECKING:
    from hookproof.config_model import Config



def configured_types(cfg: "Config") -> list[str]:
    """The types the config names for the receiver, in its order, once each (profile names):
    ``target.enabled_events`` (left out, or the wildcard ``"*"``: every type the profile
    sends, as the endpoint is then sent every one), then ``[business_keys]`` entries that owe
    an effect (not ``false``), then ``[counters]``."""
    enabled = cfg.target.enabled_events
    if not enabled or "*" in enabled:
        enabled = list(cfg.profile().event_types().values())
    unmodelled = set(cfg.target.unmodelled_types()) | set(cfg.unsubscribed_named())  # `unmodelled_note` names them
    named = [*(e for e in enabled if e not in unmodelled),
             *(name for name, rule in cfg.business_keys.items() if rule is not False and name not in unmodelled),
             *(name for name in cfg.counters if name not in unmodelled)]
    return list(dict.fromkeys(named))


def unmodelled_note(cfg: "Config") -> str | None:
    """The note naming the real provider types ``target.enabled_events`` lists that hookproof does
    not model (`TargetConfig.unmodelled_types`: a Stripe endpoint's ``invoice.finalized``), and the
    optional types ``[business_keys]`` or ``[counters]`` names that the endpoint is not subscribed
    to (`Config.unsubscribed_named`: Stripe's ``invoice.payment_succeeded`` where
    ``target.enabled_events`` does not list it), saying how to be sent them; no run sends either;
    and a GitHub App's actions listed apart (`github_actions_note`). None when there are none.
    Certify, explore and storm add it to their notes."""
    parts = []
    if (actions := github_actions_note(cfg)) is not None:
        parts.append(actions)
    if unmodelled := cfg.target.unmodelled_types():
        parts.append(f"enabled but not modelled: {', '.join(unmodelled)}; their handling is not certified")
    if unlisted := cfg.unsubscribed_named():
        one, its = ("it", "its") if len(unlisted) == 1 else ("them", "their")
        parts.append(f"named but not sent: {', '.join(unlisted)}; hookproof sends {one} only to an endpoint whose "
                     f"target.enabled_events lists {one} (list {one} there to certify {its} handling)")
    return ". ".join(parts) or None


def github_actions_note(cfg: "Config") -> str | None:
    """Under the github profile, the note naming the events ``target.enabled_events`` lists some
    actions of but not all (``check_suite.requested`` without ``.rerequested`` and ``.completed``):
    a GitHub App subscribes to whole events and GitHub sends it every action of them
    (docs.github.com "Webhook events and payloads"; "Using webhooks with GitHub Apps"), while
    hookproof sends only the listed actions, so the others' handling is not certified; it says
    to list the event's name instead. None otherwise (a bare name, ``"check_suite"``, is every
    action: `config_model.github_event_actions`)."""
    from hookproof.simulator.world.github_lifecycle import GITHUB_CHECK_TYPES, GITHUB_EVENT_TYPES

    listed = cfg.target.enabled_events
    if cfg.target.profile != "github" or not listed:
        return None
    every = GITHUB_EVENT_TYPES + GITHUB_CHECK_TYPES
    partial = [event for event in dict.fromkeys(t.split(".")[0] for t in listed if "." in t)
               if not {t for t in every if t.startswith(f"{event}.")} <= set(listed)]
    if not partial:
        return None
    names = ", ".join(f'"{e}"' for e in partial)
    left = ", ".join(t for t in every if t.split(".")[0] in partial and t not in listed)
    return (f"target.enabled_events lists some actions of {', '.join(partial)}, but a GitHub App subscribes to "
            f"whole events and GitHub sends it every action of them: hookproof sends only the listed ones, so the "
            f"handling of {left} is not certified (list {names} in target.enabled_events to be sent every action)")


def unmodelled_version_note(cfg: "Config") -> str | None:
    """The note of a Stripe endpoint pinned (``target.api_version``) to a version later than the
    latest hookproof models (`later_version_note`); None otherwise. Certify, explore and storm add it."""
    version = cfg.target.api_version
    if cfg.target.profile != "stripe" or version is None:
        return None
    return later_version_note(version, "target.api_version")


def later_version_note(version: str, setting: str) -> str | None:
    """The note of events pinned to Stripe API `version` (given as `setting`: ``target.api_version``,
    send's ``--api-version``) when it is later than the latest hookproof models
    (`stripe_versions.unmodelled`): the events are labeled with it, as Stripe labels them, but carry
    the latest modelled version's shapes, without what it added or changed; None otherwise."""
    from hookproof.simulator.events import LATEST_API_VERSION
    from hookproof.simulator.profiles.stripe_versions import unmodelled

    if not unmodelled(version):
        return None
    return (f"{setting} {version} is later than {LATEST_API_VERSION}, the latest Stripe API version "
            f"hookproof models: the events say \"api_version\": \"{version}\" but carry {LATEST_API_VERSION}'s "
            f"shapes, without the fields {version} added or changed, so a receiver's handling of those is not "
            f"certified (the same config with api_version = \"{LATEST_API_VERSION}\" and the receiver's SDK "
            "pinned to it certifies what hookproof models)")


def every_type_of(cfg: "Config") -> str | None:
    """The profile's title when the config leaves ``target.enabled_events`` out (or lists the
    wildcard): the endpoint is sent every type the profile sends, none of which the team named,
    so `unsent_note` words them as the profile's types, not as enabled ones; else None."""
    enabled = cfg.target.enabled_events
    return str(cfg.profile().title) if not enabled or "*" in enabled else None


def unsent_note(configured: Iterable[str], sent: Iterable[str], run: str, *,
                emittable: Iterable[str] | None = None, every: str | None = None) -> str | None:
    """The note naming the `configured` types not in `sent` (``run``: ``certify``, ``storm``,
    ``explore``), or None when every one was sent. With `emittable` (explore: the types its
    operations can emit), those it could have sent are named apart: a longer search may. With
    `every` (a profile's title, `every_type_of`: the config lists no enabled_events), they are
    named as the types that profile sends that the run never sent."""
    seen = set(sent)
    left = [t for t in configured if t not in seen]
    if not left:
        return None
    lead = (f"types the {every} profile sends that this {run} never sent (enabled_events is left out: the endpoint "
            "is sent every one)" if every is not None else f"enabled types never sent by this {run}")
    note = f"{lead}: {', '.join(left)}: its verdict says nothing of how the receiver handles them"
    if emittable is not None:
        can = set(emittable)
        drawn = [t for t in left if t in can]
        cannot = [t for t in left if t not in can]
        if not drawn:  # none a longer search would send
            return note + " (its operations never emit them)"
        note += (f" ({', '.join(cannot)}: its operations never emit them; " if cannot else " (") + \
            f"{', '.join(drawn)}: its operations can, and this search drew none: more --max-examples or another " \
            "--seed may)"
    return note


def restated_keys_note(cfg: "Config") -> str | None:
    """The note naming the ``[business_keys]`` entries that restate hookproof's built-in money
    key of their type (Shopify's ``"refunds/create" = "refund:{id}"``, as `hookproof init`'s
    example writes it): the key is the same on the type's sample event, but a key of the team's
    own is never taken for money, so its effects' amounts are no longer compared
    (`business_keys.money_prefixes`); a receiver recording a wrong amount passes. None when
    none does, or with ``builtin_keys = false`` (nothing is compared then) or a ``[catalog]``."""
    from hookproof.scenarios.business_keys import TemplateError
    from hookproof.simulator.errors import SimulatorError
    from hookproof.simulator.world import MONEY_PREFIXES, emit_events, new_world

    if not cfg.builtin_keys or cfg.catalog is not None or not cfg.business_keys:
        return None
    mapping = cfg.key_mapping()
    if mapping is None:
        return None
    profile = mapping.profile
    back = {v: k for k, v in profile.event_types().items()}
    restated = []
    for name, template in cfg.business_keys.items():
        if not isinstance(template, str):
            continue
        world_type = back.get(name, name)
        try:
            sample = emit_events(new_world(profile.world, 1, account=cfg.target.account), world_type)[0]
            builtin = sample.business_key
            same = builtin is not None and mapping.key_of(sample) == builtin
        except (SimulatorError, TemplateError):
            continue
        if same and builtin is not None and builtin.startswith(MONEY_PREFIXES):
            restated.append(f'"{name}" = "{template}"')
    if not restated:
        return None
    them = "it" if len(restated) == 1 else "them"
    return (f"business_keys {', '.join(restated)} restate{'s' if len(restated) == 1 else ''} hookproof's built-in "
            f"key: as keys of your own, their effects' amounts are not compared (a receiver recording a wrong amount "
            f"passes); leave {them} out to keep the amounts compared, or declare a [counters] entry")


def world_types(kind: str, *, priced: bool = False, seed: int = 0,
                sends: Callable[[str], bool] | None = None) -> set[str] | None:
    """The world's names of the event types explore's operations of world `kind` emit
    (`scenarios.world_ops`): every legal operation, `world_ops.WALK_ROUNDS` times (some rounds in
    reverse, so of two operations excluding each other, a settled or a failed payment, each
    plays), on a fresh world of `seed` told what the endpoint is sent (`sends`, world type
    names, as explore's worlds are: `sent_only`; None: the world's default); None for a world explore has no fixed operations for (a user's catalog)."""
    from hookproof.scenarios.world_ops import WORLD_OPS, new_world_of, ops_for, walk

    if kind not in WORLD_OPS:
        return None
    world = new_world_of(kind, seed)
    if sends is not None:
        world.sent_only(sends)  # its stories are the endpoint's (Stripe's invoice.payment_succeeded)
    walk(ops_for(kind, priced=priced), world)
    return {e.type for e in world.events}


def history_types(path: Path) -> set[str]:
    """The event types a run's history file (``history.sqlite``) holds attempts of (profile names)."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return {row[0] for row in db.execute("SELECT DISTINCT event_type FROM attempts")}
