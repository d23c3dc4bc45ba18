"""``hookproof demo``: certify a correct and a broken reference receiver side by side."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hookproof.errors import HookproofError
from hookproof.terminal import (
    console,
    err_console,
    fail,
    os_error,
    print_report,
)

if TYPE_CHECKING:
    pass


def register(app: typer.Typer) -> None:
    """Add ``hookproof demo`` to `app`."""

    @app.command()
    def demo(
        out: Annotated[Path, typer.Option("--out", help="Report directory.")] = Path("hookproof-demo"),
    ) -> None:
        """Certify a correct and a broken reference receiver, side by side, on 127.0.0.1."""
        from hookproof.chaos.errors import ChaosError
        from hookproof.demo import run_demo
        from hookproof.reports.errors import ReportError
        from hookproof.scenarios.errors import ScenarioError
        from hookproof.simulator.errors import SimulatorError

        try:
            results = run_demo(out, progress_console=err_console)
        except (HookproofError, SimulatorError, ChaosError, ScenarioError, ReportError) as exc:
            raise fail(str(exc)) from None
        except OSError as exc:
            raise fail(os_error(exc)) from None
        for name, result in results:
            print_report(result.report, result.paths, f"receiver {name}")
            console.print("")
        ok = results[0][1].report.verdict == "pass" and results[1][1].report.verdict == "fail"
        console.print("demo: the correct receiver passed and the broken one failed." if ok else
                      "demo: unexpected verdicts (see above).")
        raise typer.Exit(0 if ok else 1)
