"""`hookproof demo`: certify the correct `inbox_sync` receiver and the broken
`check_then_insert` receiver side by side, on 127.0.0.1, and stop everything after.

Never silent (about 10 seconds per receiver): on a terminal a live line shows the scenario
count, off one (CI) a heartbeat line every few seconds does (`hookproof.heartbeat`), as
`certify` does. Never unbounded: both receivers share one whole-run deadline
(``--max-duration``, default certify's 15 minutes); the one running when it passes stops
with a partial report that says so, and a receiver whose turn had not come is not run."""

from __future__ import annotations

import contextlib
import secrets as secrets_module
import sys
import time
from pathlib import Path
from typing import Callable, Iterator, Sequence

from rich.console import Console

from hookproof.certify import CertifyResult, certify
from hookproof.config import Config, ObserverConfig, RunConfig, SettleConfig, StartConfig, TargetConfig
from hookproof.run_progress import ScenarioProgress
from hookproof.simulator.serving import free_port

#: (receiver module, what it demonstrates)
DEMO_RECEIVERS: Sequence[tuple[str, str]] = (
    ("inbox_sync", "correct: a UNIQUE event id, effect in the same transaction"),
    ("check_then_insert", "broken: SELECT, do the work, then INSERT"),
)


#: The provider account the demo receivers belong to.
DEMO_ACCOUNT = "acct_1HookproofDemo0"


def receiver_config(name: str, db_dir: Path, secret: str, *, seed: int | None = None,
                    scenarios: list[str] | None = None, profile: str = "stripe",
                    options: dict[str, float] | None = None, settle_window_s: float = 0.3,
                    module: str | None = None, through_sink: bool = False, cwd: Path | None = None) -> Config:
    """A config that starts a reference receiver (`module`, by default `hookproof.receivers.<name>`)
    on a free port with a SQLite file, run with `python -m` from `cwd`.

    A receiver whose effect is a downstream call (`through_sink`) is observed through the
    effect sink, the others through their SQL tables. A Stripe receiver serves `DEMO_ACCOUNT`
    on a Connect endpoint (`target.connect`): it is sent the other mode's events.
    """
    port = free_port()
    db = db_dir / f"{name}.sqlite"
    for stale in db_dir.glob(f"{name}.sqlite*"):
        stale.unlink()
    url = f"sqlite:///{db}"
    module = module or f"hookproof.receivers.{name}"
    command = (f"{sys.executable} -m {module} --port {port} --db {url} --profile {profile}"
               f" --account {DEMO_ACCOUNT} --api-base {{api_base}} --sink {{sink_url}}")
    command += "".join(f" --option {key}={value}" for key, value in (options or {}).items())
    return Config(
        target=TargetConfig(url=f"http://127.0.0.1:{port}/webhooks", profile=profile, secret=secret,
                            account=DEMO_ACCOUNT, connect=profile == "stripe",
                            start=StartConfig(command=command, health_url=f"http://127.0.0.1:{port}/healthz",
                                              startup_timeout_s=30, cwd=str(cwd) if cwd else None)),
        observer=(ObserverConfig(kind="sink", url=url, state="SELECT object_id, status, version FROM subscription_states")
                  if through_sink else
                  ObserverConfig(kind="sql", url=url, effects="SELECT business_key, amount FROM effects",
                                 state="SELECT object_id, status, version FROM subscription_states")),
        run=RunConfig(seed=seed, scenarios=scenarios),
        settle=SettleConfig(window_s=settle_window_s),
    )


@contextlib.contextmanager
def scenario_progress(console: Console, label: str, total: int) -> Iterator[ScenarioProgress]:
    """Where a `certify` run is (`run_progress.ScenarioProgress`: pass its ``start`` as certify's
    `progress`, its ``finish`` as `on_finish`): a live line on `console` when it is a terminal,
    else a heartbeat line on it every `heartbeat.log_interval_s()` seconds
    (``<label>: 4/27 scenario(s) done, running reorder, 12 s``)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from hookproof.heartbeat import TERMINAL_INTERVAL_S, Heartbeat, log_interval_s

    live = console.is_interactive
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, transient=True, disable=not live) as bar:
        task = bar.add_task(label, total=total)
        beats: list[Heartbeat] = []  # the running heartbeat, for its elapsed time

        def line() -> str:
            return where.line(label, f"{beats[0].elapsed_s if beats else 0.0:.0f} s")

        where = ScenarioProgress(total, lambda: bar.update(task, description=line(), completed=where.done,
                                                           total=where.total))
        emit: Callable[[str], None] = ((lambda text: bar.update(task, description=text)) if live else
                                       (lambda text: console.print(text, markup=False, soft_wrap=True)))
        with Heartbeat(line, emit, TERMINAL_INTERVAL_S if live else log_interval_s()) as beat:
            beats.append(beat)
            yield where


def run_demo(out: Path, *, progress_console: Console | None = None,
             max_duration_s: float | None = None) -> list[tuple[str, CertifyResult]]:
    """Certify each demo receiver into `out/<name>`; returns (name, result) pairs.

    The whole demo is bounded by `max_duration_s` seconds (default: ``run.max_duration_s``'s
    default, 900): each receiver's certify gets what is left of it, so the one running when
    it passes stops with a partial report (`CertifyResult.timed_out`), and the receivers
    after it are not run (fewer pairs)."""
    limit_s = max_duration_s if max_duration_s is not None else float(RunConfig.model_fields["max_duration_s"].default)
    started = time.monotonic()
    out = out.resolve()  # the receivers run from the project folder; their database paths must not be relative
    out.mkdir(parents=True, exist_ok=True)
    db_dir = out / "databases"
    db_dir.mkdir(exist_ok=True)
    secret = "whsec_demo_" + secrets_module.token_hex(16)
    results: list[tuple[str, CertifyResult]] = []
    for name, what in DEMO_RECEIVERS:
        left_s = round(limit_s - (time.monotonic() - started), 1)
        if left_s <= 0 or (results and results[-1][1].timed_out):
            break
        if progress_console is not None:
            progress_console.print(f"certifying {name} ({what})...", markup=False)
        config = receiver_config(name, db_dir, secret)
        source = "what was left of --max-duration" if results else "--max-duration"
        if progress_console is None:
            results.append((name, certify(config, out_dir=out / name, max_duration_s=left_s,
                                          deadline_source=source)))
            continue
        from hookproof.scenarios.catalog import CATALOG

        with scenario_progress(progress_console, f"demo {name}", len(CATALOG)) as progress:
            results.append((name, certify(config, out_dir=out / name, progress=progress.start,
                                          on_finish=progress.finish, max_duration_s=left_s,
                                          deadline_source=source)))
    return results
