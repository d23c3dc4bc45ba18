"""What every command shares at the terminal: the consoles, one-line failures, reading a
config or a secret given on the command line, and printing a run's verdict table.

Commands import these from here (the ``hookproof`` app itself lives in `hookproof.cli`).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, TYPE_CHECKING

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from rich.table import Table

from hookproof.errors import UsageError

if TYPE_CHECKING:
    from hookproof.config import Config
    from hookproof.reports.model import RunReport

#: The width of the consoles off a terminal (CI logs, a file, a pipe) unless COLUMNS says
#: otherwise: Rich's 80 columns split a line of figures in two, and a table's title wraps
#: at the table's own width.
OFF_TERMINAL_WIDTH = 160


class HookproofConsole(Console):
    """A Rich console that is `OFF_TERMINAL_WIDTH` wide off a terminal when COLUMNS is not
    set (on a terminal, the terminal's width, as Rich's)."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is None and not self.is_terminal and not (self._environ.get("COLUMNS") or "").isdigit():
            return ConsoleDimensions(max(size.width, OFF_TERMINAL_WIDTH), size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


def make_console(*, stderr: bool = False, file: IO[str] | None = None) -> Console:
    """A console as every command's (`console`, `err_console`)."""
    return HookproofConsole(stderr=stderr, file=file, highlight=False)


console = make_console()
err_console = make_console(stderr=True)


def os_error(exc: OSError) -> str:
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


def duration_s(flag: str, text: str | None) -> float | None:
    """Seconds of a duration flag (90, 90s, 15m, 1h30m); None when not given. Raises UsageError."""
    if text is None:
        return None
    from hookproof.commands.storm import parse_duration

    return parse_duration(text, flag)


def load(config: Path) -> "Config":
    """The config file of a command that judges the receiver (certify, explore, replay, storm),
    with a free port for a ``{port}`` in target.url (`certify.with_port`). Raises ConfigError,
    also for a config without ``[observer]`` (`Config.observed`)."""
    from hookproof.certify import with_port
    from hookproof.config import load_config

    loaded = load_config(config)
    loaded.observed  # noqa: B018 (raises for a config without one, before anything starts)
    return with_port(loaded)


def located(exc: Exception, cfg: "Config | None") -> Exception:
    """A ConfigError raised while running, with the config file and its field's line."""
    from hookproof.config import locate
    from hookproof.errors import ConfigError

    return locate(exc, cfg) if isinstance(exc, ConfigError) and cfg is not None else exc


def seed_line(seed: int, chosen: bool, repeat: str) -> str:
    """The line naming a run's seed; when it was `chosen` at random, how to run it again
    (`repeat`, e.g. ``--seed {seed}``)."""
    return f"seed {seed}" + (f" (chosen at random; {repeat.format(seed=seed)} repeats this run)" if chosen else "")


def print_report(report: "RunReport", paths: dict[str, Path], title: str, *, seed: str | None = None,
                 headline: str | None = None) -> None:
    """The verdict table of a run (its title a line of its own, never wrapped at the
    table's width, then `seed`, the run's `seed_line`, if given, then `headline`, what is
    likely wrong with the whole run, `hookproof.headline`) and where its files are."""
    from hookproof.reports._format import root_cause_first

    console.print(title, markup=False, soft_wrap=True)
    if seed is not None:
        console.print(seed, markup=False, soft_wrap=True)
    if headline is not None:
        console.print(headline, markup=False, soft_wrap=True)
    table = Table()
    for col in ("scenario", "verdict", "finding or reason"):
        table.add_column(col, overflow="fold")
    styles = {"pass": "green", "fail": "bold red", "unknown": "yellow", "error": "bold red", "not_applicable": "dim"}
    for s in report.scenarios:
        if s.findings:
            lead = root_cause_first(s.findings)[0]  # a 5xx before the stale object it left behind
            first = f"{lead.check_id}: {lead.key} {lead.message}"
        else:
            undecided = [f"{c.check_id}: {c.detail}" for c in s.checks if c.verdict == "unknown" and c.detail]
            advised = [f"advisory: {a.check_id}: {a.key} {a.message}" for a in s.advisories]
            first = s.reason or (undecided[0] if undecided else advised[0] if advised else "")
        more = f" (+{len(s.findings) - 1} more finding(s) in this scenario)" if len(s.findings) > 1 else ""
        if not s.findings and first.startswith("advisory: ") and len(s.advisories) > 1:
            more = f" (+{len(s.advisories) - 1} more advisory(ies) in this scenario)"
        verdict = "n/a" if s.verdict == "not_applicable" else s.verdict.upper()
        table.add_row(escape(s.id), f"[{styles.get(s.verdict, '')}]{verdict}[/]", escape(first + more))
    console.print(table)
    word = {"pass": "[green]PASS[/]", "fail": "[bold red]FAIL[/]"}.get(report.verdict, f"[yellow]{report.verdict.upper()}[/]")
    console.print(f"verdict: {word}{' (partial run)' if report.partial else ''}")
    for note in report.notes:
        if note == headline:  # printed above the table
            continue
        console.print(f"note: {note}", markup=False, soft_wrap=True)
    for name, path in paths.items():
        console.print(f"  {name}: {path}", markup=False)
