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
    pass


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
            table.add_row(s.id, s.tier, escape(s.title), ", ".join(s.checks))
        console.print(table)
