"""`hookproof events [--profile P] [--json]`: the event types a profile sends.

Every name printed is accepted by `hookproof send --event` and `target.enabled_events`.
For the billing-world profiles each line also gives the Stripe type the event is made
from; for GitHub the provider's names are the world's own (``issues.opened``, ``push``…).
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the `events` command to `app`."""
    app.command("events")(events)


def event_rows(profile_name: str) -> list[tuple[str, str]]:
    """``(provider's name, world type)`` of every event the profile sends, in catalog order.

    Raises ProfileError (a ValueError) naming the known profiles.
    """
    from hookproof.simulator.profiles import get_profile

    profile = get_profile(profile_name)
    return [(provider, world_type) for world_type, provider in profile.event_types().items()]


def events(
    profile: Annotated[str, typer.Option("--profile", help="Provider profile.")] = "stripe",
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of {event, world_type}.")] = False,
) -> None:
    """List the event types a profile sends (the names `send --event` accepts)."""
    from hookproof.simulator.errors import ProfileError
    from hookproof.terminal import fail

    try:
        rows = event_rows(profile)
    except ProfileError as exc:
        raise fail(f"--profile: {exc}") from None
    if as_json:
        sys.stdout.write(json.dumps([{"event": p, "world_type": w} for p, w in rows], indent=2) + "\n")
        return
    width = max(len(p) for p, _ in rows)
    for provider, world_type in rows:
        line = provider if provider == world_type else f"{provider.ljust(width)}  (from {world_type})"
        sys.stdout.write(line + "\n")
