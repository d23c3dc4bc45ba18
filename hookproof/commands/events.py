"""`hookproof events [--profile P] [--config FILE] [--keys] [--json]`: the event types a profile sends.

Every name printed is accepted by `hookproof send --event` and `target.enabled_events`.
For the billing-world profiles each line also gives the Stripe type the event is made
from; for GitHub the provider's names are the world's own (``issues.opened``, ``push``…).
Like certify, explore, storm and replay, it reads ``hookproof.toml`` in the current
folder when there is one and no ``--config`` names another (`config_path`): its
``target.profile`` is the default profile. With a config holding a ``[catalog]``,
generic-hmac, standard-webhooks and svix list the user's own event types; without one,
standard-webhooks and svix list each type the config names in its spelling
(`Config.profile`): the names as they will be sent. With ``--keys``, each type's business
keys, one example per kind of effect (from a sample world's whole story): for the config's
own profile the keys certify judges by (its ``[business_keys]``, ``builtin_keys`` honoured:
`Config.key_mapping`), else hookproof's built-in ones. A config's ``target.enabled_events`` (for its own profile):
the other types are still listed (``send --event`` sends them) but marked ``not sent``
(``"sent": false`` in ``--json``), since certify, explore and storm do not send them. The
stripe profile's Connect types (``account.updated``) are marked as sent to a Connect endpoint
alone, unless the config's ``target.connect`` is on.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Optional

import typer


def register(app: typer.Typer) -> None:
    """Add the `events` command to `app`."""
    app.command("events")(events)


def config_path(config: str | None) -> str | None:
    """`config`, else ``hookproof.toml`` when the current folder holds one (the default
    of certify, explore, storm and replay), else None."""
    from pathlib import Path

    from hookproof.config import DEFAULT_PATH

    if config is not None:
        return config
    return DEFAULT_PATH if Path(DEFAULT_PATH).is_file() else None


def event_rows(profile_name: str | None, config: str | None = None) -> list[tuple[str, str]]:
    """``(provider's name, world type)`` of every event the profile sends, in catalog order
    (with `config`, a hookproof.toml: its ``[catalog]``'s event types, or the names it lists).

    Raises ProfileError (a ValueError) naming the known profiles, ConfigError for the config.
    """
    from hookproof.catalog_file import profile_for

    profile = profile_for(profile_name, config, secrets=False)
    types = profile.event_types()
    return ([(provider, world_type) for world_type, provider in types.items()]
            + [(t, t) for t in profile.optional_types if t not in types]
            + [(t, t) for t in _connect_types(profile.name)])


def _connect_types(profile_name: str) -> tuple[str, ...]:
    """The types Stripe sends a Connect endpoint alone (`stripe.CONNECT_EVENT_TYPES`), for the
    stripe profile; none for another."""
    if profile_name != "stripe":
        return ()
    from hookproof.simulator.profiles.stripe import CONNECT_EVENT_TYPES

    return CONNECT_EVENT_TYPES


def connect_only(profile_name: str | None, config: str | None = None) -> set[str]:
    """The Connect endpoint's types (`_connect_types`) no run sends here: all of them unless
    `config` is one whose ``target.connect`` is on for the profile asked for. Raises as
    `event_rows`."""
    from hookproof.catalog_file import profile_for

    types = set(_connect_types(profile_for(profile_name, config, secrets=False).name))
    if types and config is not None:
        from hookproof.config import load_config

        loaded = load_config(config, secrets=False)
        if profile_name in (None, loaded.target.profile) and loaded.target.connect:
            return set()
    return types


def unsubscribed(profile_name: str | None, config: str | None = None) -> set[str]:
    """The profile's optional types (`Profile.optional_types`: Shopify's compliance topics) the
    config does not name (all of them without a config): sent only to a config naming them.
    Raises as `event_rows`."""
    from hookproof.catalog_file import profile_for

    profile = profile_for(profile_name, config, secrets=False)
    return {t for t in profile.optional_types if t not in profile.event_types()}


def optional_listed_only(profile_name: str | None, config: str | None = None) -> bool:
    """Whether only ``target.enabled_events`` subscribes the profile's endpoint to its optional
    types (`Profile.optional_listed_only`: Stripe's), for the words marking them. Raises as
    `event_rows`."""
    from hookproof.catalog_file import profile_for

    return bool(profile_for(profile_name, config, secrets=False).optional_listed_only)


def example_keys(profile_name: str | None, config: str | None = None) -> dict[str, list[str]]:
    """World type → the business keys its events carry, one example per kind (the part
    before the first ``:``), from a sample world's whole story; a type that is never
    effectful has none. The keys are the config's (`Config.key_mapping`: its
    ``[business_keys]``, the built-in keys only while ``builtin_keys`` is on) when
    `config` is given and `profile_name` is None or its ``target.profile`` (the sample world
    then the config's account and mode, so a key naming ``{account}`` is made), else
    hookproof's built-in ones. Raises as `event_rows`."""
    from hookproof.catalog_file import profile_for
    from hookproof.scenarios.business_keys import TemplateError
    from hookproof.simulator.world import emit_events, new_world

    profile = profile_for(profile_name, config, secrets=False)
    mapping = None
    options: dict[str, object] = {}
    if config is not None:
        from hookproof.config import load_config

        loaded = load_config(config, secrets=False)
        if profile_name in (None, loaded.target.profile):
            mapping = loaded.key_mapping()
            # the config's account and mode, as certify's worlds: a key naming {account} is made
            options = {"livemode": loaded.target.live, "account": loaded.target.account or None}
    story = list(new_world(profile.world, 1, **options).lifecycle())
    for world_type in [*profile.event_types(), *profile.optional_types]:
        story += emit_events(new_world(profile.world, 1, **options), world_type)  # the smallest story of each type
    keys: dict[str, dict[str, str]] = {}
    for event in story:
        try:
            key = event.business_key if mapping is None else mapping.key_of(event)
        except TemplateError:  # a field this event lacks (the config's sample event had it)
            continue
        if key:
            keys.setdefault(event.type, {}).setdefault(key.split(":")[0], key)
    return {t: list(kinds.values()) for t, kinds in keys.items()}


def unmatched_rules(profile_name: str | None, config: str | None, examples: dict[str, list[str]]) -> dict[str, str]:
    """World type → its config rules, worded (``fulfillment:{data.object.id} when
    data.object.mode = subscription``), for the types whose rules hold a `when` that no sample
    event met (`example_keys` found no key): the rule is loaded, the sample did not match it."""
    if config is None:
        return {}
    from hookproof.config import load_config

    loaded = load_config(config, secrets=False)
    if profile_name not in (None, loaded.target.profile):
        return {}
    mapping = loaded.key_mapping()
    if mapping is None:  # no [business_keys] nor [counters]: the built-in keys, no rule of the team's
        return {}
    worded: dict[str, str] = {}
    for world_type in mapping.templates:
        if examples.get(world_type) or not mapping.conditional(world_type):
            continue
        worded[world_type] = "; ".join(
            rule.key + ("" if not rule.when else " when " + " and ".join(
                f"{path} = {' or '.join(str(v) for v in values)}" for path, values in rule.when.items()))
            + ("" if not rule.unless else " unless " + " or ".join(
                f"{path} = {' or '.join(str(v) for v in values)}" for path, values in rule.unless.items()))
            for rule in mapping.rules(world_type))
    return worded


def unsent(profile_name: str | None, config: str | None) -> set[str] | None:
    """The world types the config's ``target.enabled_events`` leaves out (certify sends
    none of them), or None when no config restricts `profile_name`'s events (no config, no
    ``enabled_events``, or another profile asked for)."""
    if config is None:
        return None
    from hookproof.config import load_config

    loaded = load_config(config, secrets=False)
    if profile_name not in (None, loaded.target.profile):
        return None
    enabled = loaded.enabled_types()
    if enabled is None:
        return None
    return {w for _, w in event_rows(profile_name, config) if w not in enabled}


def events(
    profile: Annotated[Optional[str], typer.Option(
        "--profile", help="Provider profile (default: the config's target.profile, else stripe).",
        show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of {event, world_type}.")] = False,
    config: Annotated[Optional[str], typer.Option(
        "--config", "-c", help="A hookproof.toml (default: hookproof.toml when the folder holds one): its profile, its catalog table's event types, or (standard-webhooks, svix) the names it lists, as they will be sent.", show_default=False)] = None,
    keys: Annotated[bool, typer.Option(
        "--keys", help="Also show each type's business keys (examples): the config's, built-in ones only while builtin_keys is on.")] = False,
) -> None:
    """List the event types a profile sends (the names `send --event` accepts)."""
    from hookproof.errors import ConfigError
    from hookproof.simulator.errors import ProfileError
    from hookproof.terminal import fail

    config = config_path(config)
    try:
        rows = event_rows(profile, config)
        examples = example_keys(profile, config) if keys else {}
        unmatched = unmatched_rules(profile, config, examples) if keys else {}
        left_out = unsent(profile, config)
        optional = unsubscribed(profile, config)
        listed_only = optional_listed_only(profile, config)
        not_connect = connect_only(profile, config)
    except ProfileError as exc:
        raise fail(f"--profile: {exc}") from None
    except ConfigError as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps([{"event": p, "world_type": w, **({"keys": examples.get(w, [])} if keys else {}),
                                      **({"sent": w not in (left_out or ()) and w not in not_connect}
                                         if left_out is not None or w in not_connect else {})}
                                     for p, w in rows], indent=2) + "\n")
        return
    width = max(len(p) for p, _ in rows)
    lines = [provider if provider == world_type else f"{provider.ljust(width)}  (from {world_type})"
             for provider, world_type in rows]
    if keys:
        column = max(len(line) for line in lines)
        lines = [f"{line.ljust(column)}  " + ("e.g. " + ", ".join(examples[w]) if examples.get(w) else
                                              f"(no sample event met its rule: {unmatched[w]})" if w in unmatched
                                              else "(no effect)")
                 for line, (_, w) in zip(lines, rows)]
    if left_out or optional or not_connect:
        column = max(len(line) for line in lines)
        lines = [f"{line.ljust(column)}  sent only to a Connect endpoint (target.connect, target.account)"
                 if w in not_connect else
                 f"{line.ljust(column)}  not sent (not in target.enabled_events)" if w in (left_out or ()) else
                 f"{line.ljust(column)}  sent only to an endpoint listing it (target.enabled_events)"
                 if w in optional and listed_only else
                 f"{line.ljust(column)}  sent only to a config naming it (enabled_events, business_keys)"
                 if w in optional else line
                 for line, (_, w) in zip(lines, rows)]
    for line in lines:
        sys.stdout.write(line + "\n")
