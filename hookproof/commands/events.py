"""`hookproof events [--profile P] [--config FILE] [--keys] [--json]`: the event types a profile sends.

Every name printed is accepted by `hookproof send --event` and `target.enabled_events`.
For the billing-world profiles each line also gives the Stripe type the event is made
from; for GitHub the provider's names are the world's own (``issues.opened``, ``push``…).
With ``--config`` naming a hookproof.toml with a ``[catalog]``, generic-hmac,
standard-webhooks and svix list the user's own event types; without one, standard-webhooks
and svix list each type the config names in its spelling (`Config.profile`): the names as
they will be sent. With ``--keys``, each type's
built-in business keys, one example per kind of effect (from a sample world's whole story).
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Optional

import typer


def register(app: typer.Typer) -> None:
    """Add the `events` command to `app`."""
    app.command("events")(events)


def event_rows(profile_name: str | None, config: str | None = None) -> list[tuple[str, str]]:
    """``(provider's name, world type)`` of every event the profile sends, in catalog order
    (with `config`, a hookproof.toml: its ``[catalog]``'s event types, or the names it lists).

    Raises ProfileError (a ValueError) naming the known profiles, ConfigError for the config.
    """
    from hookproof.catalog_file import profile_for

    profile = profile_for(profile_name, config)
    return [(provider, world_type) for world_type, provider in profile.event_types().items()]


def example_keys(profile_name: str | None, config: str | None = None) -> dict[str, list[str]]:
    """World type → hookproof's built-in business keys its events carry, one example per
    kind (the part before the first ``:``), from a sample world's whole story; a type that
    is never effectful has none. Raises as `event_rows`."""
    from hookproof.catalog_file import profile_for
    from hookproof.simulator.world import emit_events, new_world

    profile = profile_for(profile_name, config)
    story = list(new_world(profile.world, 1).lifecycle())
    for world_type in profile.event_types():
        story += emit_events(new_world(profile.world, 1), world_type)  # the smallest story of each type
    keys: dict[str, dict[str, str]] = {}
    for event in story:
        if event.business_key:
            keys.setdefault(event.type, {}).setdefault(event.business_key.split(":")[0], event.business_key)
    return {t: list(kinds.values()) for t, kinds in keys.items()}


def events(
    profile: Annotated[Optional[str], typer.Option(
        "--profile", help="Provider profile (default: the --config's target.profile, else stripe).",
        show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of {event, world_type}.")] = False,
    config: Annotated[Optional[str], typer.Option(
        "--config", help="A hookproof.toml: its catalog table's event types, or (standard-webhooks, svix) the names it lists, as they will be sent.")] = None,
    keys: Annotated[bool, typer.Option(
        "--keys", help="Also show hookproof's built-in business keys of each type (examples).")] = False,
) -> None:
    """List the event types a profile sends (the names `send --event` accepts)."""
    from hookproof.errors import ConfigError
    from hookproof.simulator.errors import ProfileError
    from hookproof.terminal import fail

    try:
        rows = event_rows(profile, config)
        examples = example_keys(profile, config) if keys else {}
    except ProfileError as exc:
        raise fail(f"--profile: {exc}") from None
    except ConfigError as exc:
        raise fail(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps([{"event": p, "world_type": w, **({"keys": examples.get(w, [])} if keys else {})}
                                    for p, w in rows], indent=2) + "\n")
        return
    width = max(len(p) for p, _ in rows)
    lines = [provider if provider == world_type else f"{provider.ljust(width)}  (from {world_type})"
             for provider, world_type in rows]
    if keys:
        column = max(len(line) for line in lines)
        lines = [f"{line.ljust(column)}  " + ("e.g. " + ", ".join(examples[w]) if examples.get(w) else "(no effect)")
                 for line, (_, w) in zip(lines, rows)]
    for line in lines:
        sys.stdout.write(line + "\n")
