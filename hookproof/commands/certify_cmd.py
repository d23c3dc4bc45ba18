"""``hookproof certify``: run the catalog against the receiver a config describes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from hookproof.errors import HookproofError, UsageError
from hookproof.interrupts import Interrupts
from hookproof.terminal import (
    duration_s,
    err_console,
    fail,
    load,
    located,
    os_error,
    print_report,
    seed_line,
)

if TYPE_CHECKING:
    from hookproof.config import Config


def register(app: typer.Typer) -> None:
    """Add ``hookproof certify`` to `app`."""

    @app.command()
    def certify(
        scenario_ids: Annotated[Optional[list[str]], typer.Argument(metavar="SCENARIO", help="Scenario ids to run, as with -s.", show_default=False)] = None,
        config: Annotated[Path, typer.Option("--config", "-c", help="The config file.")] = Path("hookproof.toml"),
        scenario: Annotated[Optional[list[str]], typer.Option("--scenario", "-s", help="Scenario id (repeatable). Default: the catalog.")] = None,
        out: Annotated[Optional[Path], typer.Option("--out", help="Report directory (default: a new folder hookproof-reports/certify-<UTC time>/, linked as hookproof-reports/latest).", show_default=False)] = None,
        max_duration: Annotated[Optional[str], typer.Option("--max-duration", help="Stop the whole run after this long (90s, 15m, 1h; default: run.max_duration_s, 15m), heal and write a partial report.", show_default=False)] = None,
        keep_going: Annotated[bool, typer.Option("--keep-going", help="Run every scenario even after the receiver stopped answering, or refused every valid delivery with 401/403.")] = False,
        force: Annotated[bool, typer.Option("--force", help="Let --out overwrite another command's results.")] = False,
        allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a target that is not on this machine (loopback).")] = False,
        seed: Annotated[Optional[int], typer.Option("--seed", help="Seed of the scenarios' worlds and fault plans (default: run.seed, else a random one); the report names it, and the same seed makes the same worlds again, for a scenario run alone too (its world comes from the seed and its id).", show_default=False)] = None,
        chaos: Annotated[bool, typer.Option("--chaos", help="Also run the chaos scenarios (kill, pause, restart, network cuts, replicas); needs a target.process or target.docker section.")] = False,
    ) -> None:
        """Run the scenario catalog against the receiver; exit 0 pass, 1 findings, 2 usage/config error.

        SIGTERM is handled like Ctrl-C: the run stops, everything started is stopped, and a
        partial report is written (exit 128 + the signal's number).
        """

        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        from hookproof.certify import certify as run_certify
        from hookproof.chaos.errors import ChaosError
        from hookproof.config_model import unknown_scenario
        from hookproof.heartbeat import TERMINAL_INTERVAL_S, Heartbeat, log_interval_s
        from hookproof.reports.errors import ReportError
        from hookproof.run_progress import ScenarioProgress
        from hookproof.rundirs import run_out, withdraw
        from hookproof.scenarios.catalog import CATALOG
        from hookproof.scenarios.chaos import CHAOS_CATALOG
        from hookproof.scenarios.errors import ScenarioError
        from hookproof.simulator.errors import SimulatorError

        caught = Interrupts.install(sigint=True)  # a partial report must say it was interrupted
        cfg: "Config | None" = None
        scenario = [*(scenario_ids or []), *(scenario or [])] or None
        made: list[Path] = []  # the run folder, once made: handed back if the run is refused

        def run_dir() -> Path:
            made.append(run_out(out, "certify", force=force))
            return made[-1]

        try:
            limit_s = duration_s("--max-duration", max_duration)
            cfg = load(config)
            for s in scenario or []:
                if s not in CATALOG and s not in CHAOS_CATALOG:
                    raise UsageError(f"--scenario: {unknown_scenario(s, [*CATALOG, *CHAOS_CATALOG])}")
            total = len(scenario or cfg.run.scenarios or CATALOG) + (0 if scenario or not chaos else len(CHAOS_CATALOG))
            runners: list[Any] = []
            where = ScenarioProgress(total)
            with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                          TimeElapsedColumn(), console=err_console, transient=True,
                          disable=not err_console.is_interactive) as bar:  # off a terminal it only adds a blank line
                task = bar.add_task("certifying", total=total)

                def line() -> str:
                    attempts = len(runners[0].history) if runners else 0
                    return where.line("certify", f"{attempts} attempt(s) so far", f"{beat.elapsed_s:.0f} s")

                where.on_change = lambda: bar.update(task, description=line(), completed=where.done, total=where.total)

                live = err_console.is_interactive
                with Heartbeat(line, (lambda text: bar.update(task, description=text)) if live else
                               (lambda text: err_console.print(text, markup=False, soft_wrap=True)),
                               TERMINAL_INTERVAL_S if live else log_interval_s()) as beat:
                    result = run_certify(cfg, scenarios=scenario, out_dir=run_dir,
                                         progress=where.start, allow_remote=allow_remote, chaos=chaos,
                                         on_start=runners.append, max_duration_s=limit_s, keep_going=keep_going,
                                         seed=seed, stopped_by=lambda: caught.stopped_by,
                                         on_finish=where.finish)
        except (HookproofError, SimulatorError, ChaosError, ScenarioError, ReportError) as exc:
            withdraw(made[-1] if made else None)  # refused: the results stay as they were
            raise fail(str(located(exc, cfg))) from None
        except OSError as exc:
            withdraw(made[-1] if made else None)
            raise fail(os_error(exc)) from None
        except KeyboardInterrupt:
            raise fail("interrupted before a report could be written (the history, if any, is in the report directory)",
                       caught.exit_code) from None
        assert cfg is not None
        chosen = seed is None and cfg.run.seed is None  # certify drew it: the console must name it to repeat the run
        from dataclasses import replace

        from hookproof.certify import console_notes
        from hookproof.headline import split_headline

        shown = replace(result.report, notes=console_notes(result.report))  # the files keep every note
        print_report(shown, result.paths, f"hookproof certify: {cfg.target.profile} receiver at {result.report.target}",
                     seed=seed_line(result.report.seed, chosen, "--seed {seed}"),
                     headline=split_headline(result.report.notes)[0])
        signalled = caught.signalled and result.report.partial and not result.timed_out
        raise typer.Exit(caught.exit_code if signalled else result.exit_code)
