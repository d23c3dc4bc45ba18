"""The `hookproof` command line (Typer). Each command is a thin wrapper over a module.

Exit codes: 0 success; 1 a finding or a failed delivery; 2 a usage or config error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hookproof.errors import HookproofError, UsageError
from hookproof.interrupts import Interrupts

if TYPE_CHECKING:
    from hookproof.config import Config
    from hookproof.reports.model import RunReport

app = typer.Typer(
    name="hookproof",
    help="Certify webhook receivers: sign like the real providers, deliver at least once with faults, check the effects.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def _print_version(value: bool) -> None:
    if value:
        import hookproof

        console.print(f"hookproof {hookproof.__version__}", markup=False)
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="Print hookproof's version and exit.")] = False,
) -> None:
    """hookproof: certify webhook receivers before go-live."""


def _os_error(exc: OSError) -> str:
    """An OS error in plain words: what failed, on which file."""
    what = exc.strerror or type(exc).__name__
    return f"{exc.filename}: {what.lower()}" if exc.filename else what


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print one line to stderr and return the Exit to raise."""
    err_console.print(f"hookproof: {message}", markup=False, soft_wrap=True)
    return typer.Exit(code)


def read_secret(value: str, flag: str = "--secret") -> str:
    """A secret given literally, as ``env:NAME`` or as ``file:PATH`` (never echoed).

    Raises UsageError naming the flag and the source (not the secret).
    """
    from hookproof.secret_ref import SecretRef, SecretRefError

    try:
        return SecretRef.parse(value).resolve()
    except SecretRefError as exc:
        raise UsageError(f"{flag}: {exc}") from None


@app.command()
def send(
    url: Annotated[str, typer.Option("--url", help="The receiver's webhook URL.")],
    secret: Annotated[list[str], typer.Option("--secret", help="Signing secret: literal, env:NAME or file:PATH. Repeat for rotation.", show_default=False)],
    profile: Annotated[str, typer.Option("--profile", help="Provider profile.")] = "stripe",
    event: Annotated[Optional[str], typer.Option("--event", help="Event type: the provider's own name (see 'hookproof events --profile P') or the world type it is made from. Default: the profile's default event.")] = None,
    copies: Annotated[int, typer.Option("--copies", min=1, max=1000, help="Deliveries of each event.")] = 1,
    concurrent: Annotated[bool, typer.Option("--concurrent", help="Release the copies together.")] = False,
    reverse: Annotated[bool, typer.Option("--reverse", help="Deliver the events in reverse order.")] = False,
    objects: Annotated[int, typer.Option("--objects", min=1, max=1000, help="How many objects emit the event.")] = 1,
    drop_response: Annotated[bool, typer.Option("--drop-response", help="Discard the first answer of each delivery and retry.")] = False,
    sender_timeout: Annotated[Optional[float], typer.Option("--sender-timeout", min=0.001, max=600, help="Seconds to wait for an answer, at most 600 (default: the profile's).")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="World seed (ids, amounts).")] = None,
    live: Annotated[bool, typer.Option("--live", help="Send live-mode events (only to a live receiver).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the attempts as JSON.")] = False,
) -> None:
    """Deliver signed events to a receiver, with faults, and print every attempt."""
    from hookproof.heartbeat import TERMINAL_INTERVAL_S, Heartbeat, log_interval_s
    from hookproof.send import SendInterrupted, SendOptions, attempt_line, first_line
    from hookproof.send import send as do_send
    from hookproof.simulator.delivery import History
    from hookproof.simulator.errors import SimulatorError
    from hookproof.simulator.profiles import get_profile

    try:
        prof = get_profile(profile)
        secret_values = [read_secret(s) for s in secret]
        options = SendOptions(
            profile=prof, url=url, event=event, copies=copies, concurrent=concurrent, reverse=reverse, objects=objects,
            drop_response=drop_response, sender_timeout_s=sender_timeout, seed=seed, live=live,
        )
        history = History()
        shown = [0]

        def news() -> str:
            """On a terminal: each attempt ended since the last call, one line each."""
            done = history.attempts()
            lines = [attempt_line(a) for a in done[shown[0]:]]
            shown[0] = len(done)
            return "\n".join(lines)

        def tally() -> str:
            done = history.attempts()
            acked_so_far = sum(a.completion.value == "ok" for a in done)
            return f"send: {len(done)} attempt(s) so far, {acked_so_far} acknowledged, {beat.elapsed_s:.0f} s"

        live = err_console.is_interactive
        try:
            with Heartbeat(news if live else tally,
                           lambda text: err_console.print(text, markup=False, soft_wrap=True) if text else None,
                           TERMINAL_INTERVAL_S if live else log_interval_s()) as beat:
                attempts = do_send(options, secret_values, history)
        finally:  # the heartbeat has stopped: the attempts that ended since its last line
            rest = news() if live else ""
            if rest:
                err_console.print(rest, markup=False, soft_wrap=True)
    except (HookproofError, SimulatorError) as exc:
        flag = {"profile": "--profile: ", "secret": "--secret: "}.get(getattr(exc, "field", None) or "", "")
        raise fail(f"{flag}{exc}" if flag and not str(exc).startswith("--") else str(exc)) from None
    except SendInterrupted as exc:
        raise fail(f"send interrupted; {len(exc.attempts)} attempt(s) made", 130) from None
    if as_json:
        sys.stdout.write(json.dumps([a.to_dict() for a in attempts], indent=2) + "\n")
    else:
        table = Table(title=f"{prof.title} deliveries to {url}", title_justify="left")
        for col in ("#", "event", "try", "status", "outcome", "ms", "note"):
            table.add_column(col, overflow="fold")
        for a in attempts:
            answer = first_line(a.response_excerpt) if a.outcome.value != "acked" else ""
            note = ", ".join(filter(None, [",".join(a.faults), a.error, answer]))
            table.add_row(str(a.index + 1), escape(f"{a.event_type}\n{a.event_id}"), str(a.attempt),
                          str(a.status or "-"), f"{a.outcome.value} ({a.completion.value})", f"{a.latency_ms:.0f}",
                          escape(note))
        console.print(table)
    acked = sum(a.completion.value == "ok" for a in attempts)
    if not as_json:
        console.print(f"{len(attempts)} attempt(s), {acked} acknowledged" +
                      ("" if acked else "; exit 1: the receiver acknowledged none of them"), markup=False)
    if not acked:
        raise typer.Exit(1)


def _duration(flag: str, text: str | None) -> float | None:
    """Seconds of a duration flag (90, 90s, 15m, 1h30m); None when not given. Raises UsageError."""
    if text is None:
        return None
    from hookproof.commands.storm import parse_duration

    return parse_duration(text, flag)


def _load(config: Path) -> "Config":
    """The config file, with a free port for a ``{port}`` in target.url (`certify.with_port`)."""
    from hookproof.certify import with_port
    from hookproof.config import load_config

    return with_port(load_config(config))


def _located(exc: Exception, cfg: "Config | None") -> Exception:
    """A ConfigError raised while running, with the config file and its field's line."""
    from hookproof.config import locate
    from hookproof.errors import ConfigError

    return locate(exc, cfg) if isinstance(exc, ConfigError) and cfg is not None else exc


def print_report(report: "RunReport", paths: dict[str, Path], title: str) -> None:
    """The verdict table of a run and where its files are."""
    table = Table(title=title, title_justify="left")
    for col in ("scenario", "verdict", "finding or reason"):
        table.add_column(col, overflow="fold")
    styles = {"pass": "green", "fail": "bold red", "unknown": "yellow", "error": "bold red", "not_applicable": "dim"}
    for s in report.scenarios:
        if s.findings:
            first = f"{s.findings[0].check_id}: {s.findings[0].key} {s.findings[0].message}"
        else:
            undecided = [f"{c.check_id}: {c.detail}" for c in s.checks if c.verdict == "unknown" and c.detail]
            first = s.reason or (undecided[0] if undecided else "")
        more = f" (+{len(s.findings) - 1} more finding(s) in this scenario)" if len(s.findings) > 1 else ""
        verdict = "n/a" if s.verdict == "not_applicable" else s.verdict.upper()
        table.add_row(escape(s.id), f"[{styles.get(s.verdict, '')}]{verdict}[/]", escape(first + more))
    console.print(table)
    word = {"pass": "[green]PASS[/]", "fail": "[bold red]FAIL[/]"}.get(report.verdict, f"[yellow]{report.verdict.upper()}[/]")
    console.print(f"verdict: {word}{' (partial run)' if report.partial else ''}")
    for note in report.notes:
        console.print(f"note: {note}", markup=False, soft_wrap=True)
    for name, path in paths.items():
        console.print(f"  {name}: {path}", markup=False)


@app.command()
def certify(
    scenario_ids: Annotated[Optional[list[str]], typer.Argument(metavar="SCENARIO", help="Scenario ids to run, as with -s.", show_default=False)] = None,
    config: Annotated[Path, typer.Option("--config", "-c", help="The config file.")] = Path("hookproof.toml"),
    scenario: Annotated[Optional[list[str]], typer.Option("--scenario", "-s", help="Scenario id (repeatable). Default: the catalog.")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Report directory (default: a new folder hookproof-reports/certify-<UTC time>/, linked as hookproof-reports/latest).", show_default=False)] = None,
    max_duration: Annotated[Optional[str], typer.Option("--max-duration", help="Stop the whole run after this long (90s, 15m, 1h; default: run.max_duration_s, 15m), heal and write a partial report.", show_default=False)] = None,
    keep_going: Annotated[bool, typer.Option("--keep-going", help="Run every scenario even after the receiver stopped answering.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Let --out overwrite another command's results.")] = False,
    allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a target that is not on this machine (loopback).")] = False,
    chaos: Annotated[bool, typer.Option("--chaos", help="Also run the chaos scenarios (kill, pause, restart, network cuts, replicas); needs a target.process or target.docker section.")] = False,
) -> None:
    """Run the scenario catalog against the receiver; exit 0 pass, 1 findings, 2 usage/config error.

    SIGTERM is handled like Ctrl-C: the run stops, everything started is stopped, and a
    partial report is written (exit 128 + the signal's number).
    """

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from hookproof.certify import certify as run_certify
    from hookproof.chaos.errors import ChaosError
    from hookproof.heartbeat import TERMINAL_INTERVAL_S, Heartbeat, log_interval_s
    from hookproof.reports.errors import ReportError
    from hookproof.rundirs import run_out
    from hookproof.scenarios.catalog import CATALOG
    from hookproof.scenarios.chaos import CHAOS_CATALOG
    from hookproof.scenarios.errors import ScenarioError
    from hookproof.simulator.errors import SimulatorError

    caught = Interrupts.install()
    cfg: "Config | None" = None
    scenario = [*(scenario_ids or []), *(scenario or [])] or None
    try:
        limit_s = _duration("--max-duration", max_duration)
        cfg = _load(config)
        for s in scenario or []:
            if s not in CATALOG and s not in CHAOS_CATALOG:
                raise UsageError(f"--scenario: unknown scenario id {s!r} (see 'hookproof scenarios')")
        total = len(scenario or cfg.run.scenarios or CATALOG) + (0 if scenario or not chaos else len(CHAOS_CATALOG))
        at: dict[str, Any] = {"scenario": "starting", "index": 0, "total": total}
        runners: list[Any] = []
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TimeElapsedColumn(), console=err_console, transient=True,
                      disable=not err_console.is_interactive) as bar:  # off a terminal it only adds a blank line
            task = bar.add_task("certifying", total=total)

            def progress(sid: str, i: int, n: int) -> None:
                at.update(scenario=sid, index=i, total=n)
                bar.update(task, description=line(), completed=i, total=n)

            def line() -> str:
                attempts = len(runners[0].history) if runners else 0
                return (f"certify: scenario {int(at['index']) + 1}/{at['total']} {at['scenario']}, "
                        f"{attempts} attempt(s) so far, {beat.elapsed_s:.0f} s")

            live = err_console.is_interactive
            with Heartbeat(line, (lambda text: bar.update(task, description=text)) if live else
                           (lambda text: err_console.print(text, markup=False, soft_wrap=True)),
                           TERMINAL_INTERVAL_S if live else log_interval_s()) as beat:
                result = run_certify(cfg, scenarios=scenario, out_dir=lambda: run_out(out, "certify", force=force),
                                     progress=progress, allow_remote=allow_remote, chaos=chaos,
                                     on_start=runners.append, max_duration_s=limit_s, keep_going=keep_going)
    except (HookproofError, SimulatorError, ChaosError, ScenarioError, ReportError) as exc:
        raise fail(str(_located(exc, cfg))) from None
    except OSError as exc:
        raise fail(_os_error(exc)) from None
    except KeyboardInterrupt:
        raise fail("interrupted before a report could be written (the history, if any, is in the report directory)",
                   caught.exit_code) from None
    assert cfg is not None
    print_report(result.report, result.paths, f"hookproof certify: {cfg.target.profile} receiver at {result.report.target}")
    signalled = caught.signalled and result.report.partial and not result.timed_out
    raise typer.Exit(caught.exit_code if signalled else result.exit_code)


@app.command()
def init(
    path: Annotated[Path, typer.Argument(help="Where to write the template.")] = Path("hookproof.toml"),
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a commented hookproof.toml template."""
    if path.exists() and not force:
        raise fail(f"{path} exists (use --force to overwrite)")
    template = (Path(__file__).parent / "init_template.toml").read_text(encoding="utf-8")
    try:
        path.write_text(template, encoding="utf-8")
    except OSError as exc:
        raise fail(_os_error(exc)) from None
    console.print(f"wrote {path}", markup=False)


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
        raise fail(_os_error(exc)) from None
    for name, result in results:
        print_report(result.report, result.paths, f"receiver {name}")
        console.print("")
    ok = results[0][1].report.verdict == "pass" and results[1][1].report.verdict == "fail"
    console.print("demo: the correct receiver passed and the broken one failed." if ok else
                  "demo: unexpected verdicts (see above).")
    raise typer.Exit(0 if ok else 1)


@app.command()
def serve(
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free port).")] = 12111,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    seed: Annotated[int, typer.Option("--seed", help="World seed.")] = 0,
) -> None:
    """Serve the provider API (Stripe and Mercado Pago shapes) and the effect sink."""
    from hookproof.simulator.errors import SimulatorError
    from hookproof.simulator.server.runner import serve as run_serve

    try:
        run_serve(port, host, seed)
    except SimulatorError as exc:
        raise fail(str(exc)) from None


from hookproof.commands import register_all  # noqa: E402

register_all(app)


def _history_default(argv: list[str]) -> list[str]:
    """`hookproof report --history` with no value means the newest run: click options take
    no optional values, so the default folder is put in (`hookproof.rundirs.DEFAULT_ROOT`)."""
    if "report" not in argv or "--history" not in argv:
        return argv
    at = argv.index("--history")
    if at + 1 < len(argv) and not argv[at + 1].startswith("-"):
        return argv
    from hookproof.rundirs import DEFAULT_ROOT

    return [*argv[:at + 1], str(DEFAULT_ROOT), *argv[at + 1:]]


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point.

    Usage errors (unknown flags, bad values) print one line naming the flag and exit 2,
    instead of click's multi-line box.
    """
    try:
        from typer._click import exceptions as click_exceptions  # typer >= 0.20 vendors click
    except ImportError:  # pragma: no cover - older typer on click
        from click import exceptions as click_exceptions  # type: ignore[no-redef]

    abort = getattr(click_exceptions, "Abort", KeyboardInterrupt)
    try:
        code = app(args=_history_default(sys.argv[1:] if argv is None else argv), standalone_mode=False)
    except click_exceptions.UsageError as exc:
        message = exc.format_message()
        if message:
            where = f"{exc.ctx.command_path}: " if exc.ctx is not None else ""
            err_console.print(f"hookproof: {where}{message}", markup=False, soft_wrap=True)
        sys.exit(2)
    except click_exceptions.ClickException as exc:
        err_console.print(f"hookproof: {exc.format_message()}", markup=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except (abort, KeyboardInterrupt):
        err_console.print("hookproof: interrupted", markup=False)
        sys.exit(130)
    except BrokenPipeError:  # e.g. `hookproof --help | head`
        sys.stderr.close()
        sys.exit(0)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
