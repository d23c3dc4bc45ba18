"""``hookproof demo``: certify a correct and a broken reference receiver side by side."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

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
        out: Annotated[Optional[Path], typer.Option("--out", help="Report directory (default: a new folder hookproof-reports/demo-<UTC time>/, linked as hookproof-reports/latest).", show_default=False)] = None,
        force: Annotated[bool, typer.Option("--force", help="Let --out overwrite another command's results.")] = False,
        max_duration: Annotated[Optional[str], typer.Option("--max-duration", help="Stop the whole demo after this long (90s, 15m, 1h; default 15m, certify's default); the receiver running then gets a partial report saying why (exit 1).", show_default=False)] = None,
    ) -> None:
        """Certify a correct and a broken reference receiver, side by side, on 127.0.0.1.

        Each run writes into a folder of its own (hookproof-reports/demo-<UTC time>/, one
        subfolder per receiver), never over another run's results. The whole demo is bounded
        by --max-duration (default 15 minutes)."""
        from hookproof.chaos.errors import ChaosError
        from hookproof.demo import DEMO_RECEIVERS, run_demo
        from hookproof.reports.errors import ReportError
        from hookproof.rundirs import run_out, withdraw
        from hookproof.scenarios.errors import ScenarioError
        from hookproof.simulator.errors import SimulatorError
        from hookproof.terminal import duration_s

        made: Path | None = None  # the run folder, once made: handed back if the demo is refused
        try:
            limit_s = duration_s("--max-duration", max_duration)
            made = run_out(out, "demo", force=force)
            results = run_demo(made, progress_console=err_console, max_duration_s=limit_s)
        except (HookproofError, SimulatorError, ChaosError, ScenarioError, ReportError) as exc:
            withdraw(made)  # refused: the results stay as they were (a receiver already certified is kept)
            raise fail(str(exc)) from None
        except OSError as exc:
            withdraw(made)
            raise fail(os_error(exc)) from None
        for name, result in results:
            print_report(result.report, result.paths, f"receiver {name}")
            console.print("")
        stopped = [result for _, result in results if result.timed_out]
        if stopped or len(results) < len(DEMO_RECEIVERS):
            from hookproof.certify import DEADLINE_NOTE

            note = next((n for n in stopped[0].report.notes if n.startswith(DEADLINE_NOTE)), DEADLINE_NOTE) \
                if stopped else DEADLINE_NOTE
            skipped = [name for name, _ in DEMO_RECEIVERS[len(results):]]
            console.print(f"demo {note}" + (f"; not run: {', '.join(skipped)}" if skipped else "") + "; exit 1",
                          markup=False, soft_wrap=True)
            raise typer.Exit(1)
        ok = results[0][1].report.verdict == "pass" and results[1][1].report.verdict == "fail"
        console.print("demo: the correct receiver passed and the broken one failed." if ok else
                      "demo: unexpected verdicts (see above).")
        raise typer.Exit(0 if ok else 1)
