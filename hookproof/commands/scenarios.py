"""``hookproof scenarios [--profile P]``: list the scenario catalog, titled in the words
a run with that profile's reports use (`Scenario.for_world`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from hookproof.terminal import (
    console,
)

if TYPE_CHECKING:
    from hookproof.scenarios.catalog import Scenario


def register(app: typer.Typer) -> None:
    """Add ``hookproof scenarios`` to `app`."""

    @app.command("scenarios")
    def list_scenarios(
        profile: Annotated[Optional[str], typer.Option(
            "--profile", help="Title the scenarios in this provider's words, as its runs' reports do "
                              "(default: the catalog's own).", show_default=False)] = None,
    ) -> None:
        """List the scenario catalog."""
        from hookproof.scenarios.catalog import SCENARIOS
        from hookproof.scenarios.chaos import CHAOS_CATALOG
        from hookproof.simulator.errors import ProfileError
        from hookproof.simulator.profiles import get_profile
        from hookproof.terminal import fail

        chosen = [*SCENARIOS, *CHAOS_CATALOG.values()]
        if profile is not None:
            try:
                run_profile = get_profile(profile)
            except ProfileError as exc:
                raise fail(f"--profile: {exc}") from None
            chosen = [s.for_world(run_profile.world, run_profile.after_refusal(), run_profile.no_event_id) for s in chosen]
        title = "hookproof scenarios (chaos ones run with certify --chaos)"
        table = Table(title=title + (f", in {profile}'s words" if profile else ""), title_justify="left")
        for col in ("id", "tier", "title", "checks"):
            table.add_column(col, overflow="fold")
        for s in chosen:
            table.add_row(s.id, s.tier, escape(s.title), checks_shown(s))
        console.print(table)
        console.print(escape(f"{COUNTER_NOTE}: runs when the config declares [counters] (a balance the "
                             "receiver keeps), wherever an effect can be applied twice or lost"))


#: How the listing marks ``counter`` run only when the config declares ``[counters]``.
COUNTER_NOTE = "counter ([counters])"


def checks_shown(scenario: Scenario) -> str:
    """`scenario`'s checks as listed: its own, then ``counter ([counters])`` where it runs
    only with a config's counters (`Scenario.checks_for`)."""
    own = scenario.checks_for(counters=False)
    extra = scenario.checks_for(counters=True)[len(own):]
    return ", ".join([*own, *(escape(COUNTER_NOTE) for _ in extra)])
