"""``hookproof scenarios``: list the scenario catalog."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    def list_scenarios() -> None:
        """List the scenario catalog."""
        from hookproof.scenarios.catalog import SCENARIOS
        from hookproof.scenarios.chaos import CHAOS_CATALOG

        table = Table(title="hookproof scenarios (chaos ones run with certify --chaos)", title_justify="left")
        for col in ("id", "tier", "title", "checks"):
            table.add_column(col, overflow="fold")
        for s in (*SCENARIOS, *CHAOS_CATALOG.values()):
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
