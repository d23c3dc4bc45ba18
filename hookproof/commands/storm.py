"""`hookproof storm`: a Locust storm against the configured receiver, ending in certify's checks.

Reads the same `hookproof.toml` as certify, starts what it asks for (provider API and
effect sink, the receiver's start command), then runs Locust headless in its own
processes (``python -m locust -f loadtests/locustfile.py``: Locust is never imported
here, it monkey-patches the standard library): a master and K local workers
(``--workers K``), or a master waiting for N workers on other machines
(``--workers-expected N``, each started with ``hookproof storm-worker --master-host H``).
The storm's spec goes to the master in a temporary JSON file, the secrets in an
environment variable only; the master sends its workers the spec without the observer,
the signing secrets and its version. The master settles the receiver, runs the checks
and writes the same reports as certify into ``--out``; this command shows progress,
then the verdict.
As certify, it refuses to start when nothing listens at ``target.url`` (once the
receiver it starts, if any, is up).

Exit codes: 0 every check valid; 1 findings (or an unknown verdict, or a storm that
did not finish); 2 a usage or config error, workers that did not connect in time, or
a worker that refused (another hookproof version, or a target it cannot reach).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, Iterator, Mapping, Optional

import typer

from hookproof.interrupts import Interrupts

if TYPE_CHECKING:
    from hookproof.chaos.process import Supervised
    from hookproof.config import Config
    from hookproof.loadtests.spec import StormSpec
    from hookproof.reports.model import RunReport

#: Seconds to wait for the Locust master to start and its workers to connect (default of --workers-timeout).
STARTUP_S = 60.0
#: Where a master waiting for workers on other machines listens by default (Locust's port).
MASTER_PORT = 5557
#: Seconds the master gets, beyond every other bound, before it is stopped.
MARGIN_S = 60.0

_DURATION = re.compile(r"^\s*(?:(\d+(?:\.\d+)?)h)?\s*(?:(\d+(?:\.\d+)?)m)?\s*(?:(\d+(?:\.\d+)?)s?)?\s*$")


def parse_duration(text: str, flag: str = "--duration") -> float:
    """Seconds of ``"60s"``, ``"2m"``, ``"1h30m"``, ``"90"``. Raises UsageError naming `flag`."""
    from hookproof.errors import UsageError

    match = _DURATION.match(text)
    if not text.strip() or not match or not any(match.groups()):
        raise UsageError(f"{flag}: cannot read {text!r} (use e.g. 60s, 2m, 1h30m)")
    hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise UsageError(f"{flag}: must be more than 0 seconds")
    return total


def locustfile() -> Path:
    """The storm's locustfile (inside the installed `hookproof.loadtests` package)."""
    from hookproof import loadtests

    return Path(loadtests.__file__).resolve().parent / "locustfile.py"


def progress_detail(data: Mapping[str, object]) -> str:
    """The storm's progress line from the master's progress file: attempts sent, the current
    rate (Locust's, over its last seconds: the end's line gives the average), the
    answered non-2xx and the unanswered attempts (timeouts, cut connections) apart."""
    return (f"{data.get('requests', 0)} sent, {data.get('rps', 0)}/s now, {data.get('failures', 0)} non-2xx, "
            f"{data.get('unanswered', 0)} unanswered, {data.get('workers', 0)} worker(s)")


#: What a storm needs installed, and how to get it.
LOCUST_MISSING = "storms need Locust, which hookproof installs with its load extra: pip install 'hookproof[load]'"


def require_locust() -> None:
    """Raise UsageError (`LOCUST_MISSING`, with why the import failed) unless the Locust
    processes can import locust: checked in a child process with their interpreter and
    PYTHONPATH (importing it here would monkey-patch this process with gevent)."""
    from hookproof.errors import UsageError

    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    try:
        done = subprocess.run([sys.executable, "-c", "import locust"], env=env, capture_output=True, text=True,
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"{LOCUST_MISSING} (importing it failed: {type(exc).__name__})") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        why = lines[-1] if lines else f"exit code {done.returncode}"
        raise UsageError(f"{LOCUST_MISSING} ({why})")


def _pythonpath() -> str:
    """PYTHONPATH for the Locust processes: the directory holding the `hookproof` package first."""
    import hookproof

    root = str(Path(hookproof.__file__).resolve().parent.parent)
    rest = os.environ.get("PYTHONPATH")
    return root + (os.pathsep + rest if rest else "")


def build_spec(config: "Config", *, users: int, rate: float, duration_s: float, shape: str, duplicates: float,
               burst: int, reorder_window: int, waves: int, out: Path, sink_url: str | None,
               progress_path: Path | None, max_in_flight: int = 64, collect_timeout_s: float = 60.0,
               patterns: dict[str, Any] | None = None, seed: int | None = None) -> "StormSpec":
    """The storm spec from the config and the flags (no secret); `patterns` sets the real-bug
    patterns' shares (``related``, ``older_redelivery``, ``late``, ``api_transient``,
    ``wave_events``: `loadtests.plan`), else their defaults; `seed` (``--seed``) the
    senders' worlds and plans, else ``run.seed``, else a random one (certify's and explore's
    precedence). Raises UsageError for bad values."""
    from hookproof.errors import UsageError
    from hookproof.loadtests.spec import SpecError, StormSpec, signing_of
    from hookproof.scenarios.business_keys import to_plain

    # with [catalog], the user's own events (the spec carries the catalog, as data, to Locust's
    # processes, maybe on other machines); else the names the config lists (event_names)
    profile = config.profile()
    catalog = None
    if config.catalog is not None:
        from hookproof.simulator.world.user_catalog import catalog_to_plain

        catalog = catalog_to_plain(profile.catalog)
    if seed is None:
        seed = config.run.seed if config.run.seed is not None else random.SystemRandom().randrange(1, 2**31)
    types = config.enabled_types()
    try:
        return StormSpec(
            target_url=str(config.target.url), profile=profile.name, event_names=config.event_names(),
            live=config.target.live,
            account=config.target.account, enabled_types=tuple(sorted(types)) if types is not None else None,
            subscribed=tuple(config.subscribed_types()),
            checkout_modes=tuple(sorted(modes)) if (modes := config.target.shop_checkout_modes()) is not None else None,
            users=users, rate_per_s=rate, duration_s=duration_s, shape=shape, duplicates=duplicates, burst=burst,
            reorder_window=reorder_window, waves=waves, max_in_flight=max_in_flight, seed=seed,
            world_start_us=int(time.time()) * 1_000_000,
            sender_timeout_s=config.run.sender_timeout_s or profile.sender_timeout_s,
            time_scale=config.run.time_scale, sink_url=sink_url,
            observer={**config.observed.model_dump(), "base_dir": str(config.base_dir)},
            keys=to_plain(mapping) if (mapping := config.key_mapping()) is not None else None, catalog=catalog,
            signing=signing_of(profile) if config.target.signing is not None else None,
            settle_window_s=config.settle.window_s, settle_deadline_s=config.settle.deadline_s,
            settle_interval_s=config.settle.interval_s, collect_timeout_s=collect_timeout_s,
            out_dir=str(out.resolve()), config_file=config.source,
            progress_path=str(progress_path) if progress_path else None,
            **(patterns or {}),
        )
    except SpecError as exc:
        raise UsageError(str(exc)) from None


def dated(spec: "StormSpec", processes: int) -> "StormSpec":
    """`spec` with its worlds' clock started so far back that none of the stories its
    `processes` sending processes replay is dated after the storm starts
    (`loadtests.storm_truth.storm_start_us`)."""
    from hookproof.loadtests.storm_truth import storm_start_us

    return spec.model_copy(update={"world_start_us": storm_start_us(spec, processes)})


def check_team_keys(config: "Config", spec: "StormSpec") -> None:
    """Evaluate the team's `[business_keys]` and `[counters]` over every event the storm's
    stories send, as certify reads them (`loadtests.team_keys.check_templates`).
    Raises ConfigError naming the table, the event type and the missing field."""
    from hookproof.errors import ConfigError
    from hookproof.loadtests.team_keys import KeyCheckError, check_templates

    try:
        check_templates(spec)
    except KeyCheckError as exc:
        name = spec.sending_profile().event_types().get(exc.event_type, exc.event_type)
        raise ConfigError(str(exc), path=config.source, field=f'{exc.section}."{name}"') from None


def serve_storm_truth(state: Any, spec: "StormSpec", workers: int) -> None:
    """Let the provider API (`state`, a `ServerState`) serve every object the storm's
    `workers` sending processes (0: one local process) will replay, before the first
    delivery (`loadtests.storm_truth`: their template worlds, renamed on the fly)."""
    from hookproof.loadtests.storm_truth import serve_truth

    serve_truth(state, spec, max(1, workers))


def master_command(spec: "StormSpec", *, workers: int, spawn_rate: float, bind_host: str, port: int,
                   workers_timeout_s: float = STARTUP_S) -> list[str]:
    """The Locust master's (or, with 0 workers, the single local process's) argv; the
    master waits `workers_timeout_s` seconds for its `workers` to connect."""
    cmd = [sys.executable, "-m", "locust", "-f", str(locustfile()), "--headless", "-u", str(spec.users),
           "-r", f"{spawn_rate:g}", "--host", spec.target_url, "--only-summary", "--loglevel", "INFO"]
    if workers > 0:
        cmd += ["--master", "--master-bind-host", bind_host, "--master-bind-port", str(port),
                "--expect-workers", str(workers), "--expect-workers-max-wait", f"{workers_timeout_s:g}"]
    return cmd


def worker_command(master_host: str, port: int) -> list[str]:
    """A Locust worker's argv (the master sends it the spec and the signing secrets)."""
    return [sys.executable, "-m", "locust", "-f", str(locustfile()), "--worker", "--master-host", master_host,
            "--master-port", str(port), "--loglevel", "INFO"]


def storm_worker_line(bind_host: str, port: int) -> str:
    """The ``hookproof storm-worker`` command line to run on another machine for a master
    bound to `bind_host` (a wildcard: this machine's host name) and `port`."""
    import socket

    host = socket.gethostname() if bind_host in ("*", "0.0.0.0", "::", "") else bind_host
    return " ".join(shlex.quote(a) for a in ("hookproof", "storm-worker", "--master-host", host,
                                             "--master-port", str(port)))


def _loopback(host: str) -> bool:
    """True when `host` is a loopback address or ``localhost`` (reachable from this machine only)."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


#: Runnable tasks per CPU (the 1-minute load average over the CPU count) from which a storm's
#: machine counts as overloaded: the receiver, the senders and the provider API wait for a CPU.
OVERLOADED_PER_CPU = 2.0


def storm_unsent_note(cfg: "Config", history: Path) -> str | None:
    """The note naming the types the config enables (`unsent.configured_types`) that the storm's
    history (``history.sqlite``) holds no attempt of, or None (every one was sent, or there is
    no history)."""
    from hookproof.unsent import configured_types, every_type_of, history_types, unsent_note

    configured = configured_types(cfg)
    if not configured or not history.is_file():
        return None
    return unsent_note(configured, history_types(history), "storm", every=every_type_of(cfg))


def host_load_note(load: tuple[float, float, float] | None, cpus: int | None) -> str | None:
    """The note of a storm whose machine was overloaded at its end (`load`: ``os.getloadavg()``,
    1, 5 and 15 minutes; `cpus`: ``os.cpu_count()``), else None (not overloaded, or either
    unknown). Factual: ack_latency is judged on the latencies as measured; the note says
    they include waiting for a CPU, which the senders' own lag (sender-bound) does not show
    when the senders kept up and the receiver or the provider API did not."""
    if load is None or not cpus:
        return None
    one, five, _ = load
    if one < OVERLOADED_PER_CPU * cpus:
        return None
    return (f"the machine was overloaded: load average {one:.1f} (1 min; {five:.1f} over 5 min) on {cpus} CPU(s) at "
            "the storm's end; the receiver, the senders and the provider API shared it, so ack latencies include "
            "waiting for a CPU (ack_latency judges them as measured; a storm on a quieter machine, or with the "
            "receiver on another, measures the receiver alone)")


def _loadavg() -> tuple[float, float, float] | None:
    """``os.getloadavg()``, or None where the system has none."""
    try:
        return os.getloadavg()
    except (AttributeError, OSError):
        return None


def storm_headline(report: "RunReport", cfg: "Config") -> str | None:
    """certify's headline (`hookproof.headline`) for a storm's report: only when the storm's
    checks counted its acknowledged attempts, none of them (the report keeps a share of the
    attempts; the counts are over all)."""
    from hookproof.headline import refused_headline, run_acked, secret_sources

    acked = run_acked(report)
    if acked is None:
        return None
    return refused_headline(report, secret_sources(cfg.target.secret), acked=acked)


#: Silent seconds at a storm's start (the senders sent nothing) from which its rate and latencies
#: describe a burst, not the load it meant: this many seconds, or this share of the storm's length.
LATE_START_S = 5.0
LATE_START_SHARE = 0.25


def late_start_note(report: "RunReport") -> str | None:
    """The note of a storm whose senders sent nothing for its first seconds (at least
    `LATE_START_S` and `LATE_START_SHARE` of its length), from the ``ack_latency`` check's
    throughput series (``[[t_s, sent_per_s, acked_per_s], ...]`` per ``bucket_s``), else None:
    its average rate and its latencies describe the burst after, not a steady load."""
    for scenario in report.scenarios:
        for check in scenario.checks:
            if check.check_id != "ack_latency":
                continue
            throughput = check.stats.get("throughput")
            if not isinstance(throughput, Mapping):
                return None
            series, bucket_s = throughput.get("series") or [], float(throughput.get("bucket_s") or 1.0)
            busy = [i for i, point in enumerate(series) if point[1] > 0]
            if not busy:
                return None
            silent_s, span_s = busy[0] * bucket_s, (busy[-1] + 1) * bucket_s
            length_s = max(scenario.duration_s, span_s)
            if silent_s < LATE_START_S or silent_s < LATE_START_SHARE * length_s:
                return None
            sent = round(sum(point[1] for point in series) * bucket_s)
            sending_s = span_s - silent_s
            return (f"the senders sent nothing for the first {silent_s:g} s of the storm, then {sent} attempt(s) in "
                    f"{sending_s:g} s ({sent / sending_s:.1f}/s): its average rate and ack latencies describe that "
                    "burst, not a steady load; the senders' first requests waited (for a connection to the receiver, "
                    "the provider API or a CPU: see the sender-bound note and the machine's load)")
    return None


def _free_port() -> int:
    from hookproof.simulator.serving import free_port

    return int(free_port())


@contextlib.contextmanager
def _processes(commands: list[tuple[str, list[str]]], env: dict[str, str], log_dir: Path,
               worker_env: dict[str, str] | None = None) -> Iterator[list["Supervised"]]:
    """Start `commands` (name, argv) with output in ``log_dir/<name>.log``; stop them all after
    (SIGTERM, on which Locust shuts down cleanly, then SIGKILL after 10 s).
    The first gets `env`, the others `worker_env` (default `env`)."""
    from hookproof.chaos.process import Supervised

    log_dir.mkdir(parents=True, exist_ok=True)
    procs: list[Supervised] = []
    logs: list[IO[bytes]] = []
    try:
        for name, argv in commands:
            log: IO[bytes] = open(log_dir / f"{name}.log", "wb")
            logs.append(log)
            procs.append(Supervised(argv, env=env if not procs or worker_env is None else worker_env, output=log))
        yield procs
    finally:
        for proc in procs:
            proc.stop(10.0, group=False)
        for log in logs:
            log.close()


def _gave_up(master_log: Path) -> int | None:
    """When the master's log says it stopped waiting for its workers, how many had connected by
    then (Locust's last "… reported as ready. N workers connected." line; 0 without one); else None."""
    try:
        text = master_log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if "Gave up waiting for workers to connect" not in text:
        return None
    counts = re.findall(r"reported as ready(?: \(duplicate message\))?\. (\d+) workers connected", text)
    return int(counts[-1]) if counts else 0


def workers_lost_note(master_log: Path) -> str | None:
    """The note for a storm whose Locust master lost workers mid-storm (Locust's ``Worker <id>
    failed to send heartbeat, setting state to missing``: a worker too busy to answer its
    heartbeat in time, or gone; with the last one missing Locust stops the test), quoting the
    master's last such line; None when its log (`master_log`) says none went missing."""
    try:
        text = master_log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    missing = set(re.findall(r"Worker (\S+) failed to send heartbeat", text))
    lines = [line for line in text.splitlines() if "failed to send heartbeat" in line or "went missing" in line]
    if not missing and not lines:
        return None
    last = lines[-1].split(": ", 1)[-1].strip() if lines else ""
    return (f"Locust's master lost {len(missing) or 'its'} worker(s) mid-storm: their heartbeats stopped (a worker "
            f"too busy to answer in time, on a loaded machine, or gone), and Locust stops the test when the last "
            f"one goes missing (\"{last}\", locust/locust-master.log): the storm sent less than it was asked to")


def _read_progress(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def run_storm(spec: "StormSpec", secrets: list[str], *, workers: int, spawn_rate: float, remote_workers: bool,
              bind_host: str, log_dir: Path, console: object, port: int | None = None,
              workers_timeout_s: float = STARTUP_S, limit_at: float | None = None,
              limited: list[bool] | None = None) -> int:
    """Run the Locust processes until the master exits; returns its exit code (or 1 on timeout).

    At `limit_at` (a `time.monotonic()` instant: the run's ``--max-duration``) the master is
    asked to end the storm early, then gather, check and write its (partial) report, as on
    an interruption; True is appended to `limited` then.

    With `remote_workers`, starts no local worker and prints the ``hookproof storm-worker``
    line for the `workers` expected (the master listens on `bind_host`:`port`). Shows a
    Rich progress bar on `console` from the master's progress file. Raises UsageError
    (one line) when a worker refused the storm, HookproofError when workers did not
    connect within `workers_timeout_s` seconds.
    """
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from hookproof.errors import HookproofError, UsageError
    from hookproof.loadtests.spec import SECRETS_ENV, SPEC_ENV, secrets_to_env

    port = (port or _free_port()) if workers > 0 else 0
    with tempfile.TemporaryDirectory(prefix="hookproof-storm-") as tmp:
        spec_path = Path(tmp) / "spec.json"
        spec_path.write_text(spec.to_json(), encoding="utf-8")
        spec_path.chmod(0o600)
        base_env = {k: v for k, v in os.environ.items() if k != SECRETS_ENV}
        worker_env = {**base_env, "PYTHONPATH": _pythonpath(), "PYTHONUNBUFFERED": "1"}
        env = {**worker_env, SPEC_ENV: str(spec_path), SECRETS_ENV: secrets_to_env(secrets)}  # the master's only
        commands = [("locust-master", master_command(spec, workers=workers, spawn_rate=spawn_rate,
                                                     bind_host=bind_host, port=port,
                                                     workers_timeout_s=workers_timeout_s))]
        if remote_workers:
            where = ("on each machine run" if not _loopback(bind_host) else
                     f"the master listens on {bind_host} only, so run them on this machine (for workers on other "
                     "machines, give --master-bind-host this machine's address); run")
            where = f"workers started already (docker compose's) connect on their own; otherwise {where}"
            console.print(f"waiting {workers_timeout_s:g} s for {workers} worker(s); {where}:\n  "  # type: ignore[attr-defined]
                          f"{storm_worker_line(bind_host, port)}", markup=False, soft_wrap=True)
        else:
            commands += [(f"locust-worker-{i + 1}", worker_command("127.0.0.1", port)) for i in range(workers)]
        bound_s = (workers_timeout_s + spec.duration_s + spec.drain_s() + spec.collect_timeout_s
                   + spec.settle_deadline_s + MARGIN_S)
        progress_path = Path(spec.progress_path) if spec.progress_path else None
        with _processes(commands, env, log_dir, worker_env) as procs, Progress(
                TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[detail]}"),
                TimeElapsedColumn(), console=console, transient=True,  # type: ignore[arg-type]
                disable=not getattr(console, "is_interactive", True)) as bar:  # off a terminal: only a blank line
            task = bar.add_task("storm: starting", total=spec.duration_s, detail="")
            deadline = time.monotonic() + bound_s
            master = procs[0]
            try:
                code, hit = _watch(master, deadline, bound_s, bar, task, spec, progress_path, log_dir, console,
                                   limit_at=limit_at)
                if hit and limited is not None:
                    limited.append(True)
                refusal = _read_progress(progress_path).get("refusal") if progress_path else None
                if code == 2 and refusal:
                    raise UsageError(f"storm refused: {refusal}")
                failure = _read_progress(progress_path).get("failure") if progress_path else None
                if code != 0 and failure:  # the master's checks raised: one line, the traceback in its log
                    raise HookproofError(f"the storm's checks failed: {failure}; the traceback is in "
                                         f"{log_dir / 'locust-master.log'}")
                connected = _gave_up(log_dir / "locust-master.log") if code != 0 and workers > 0 else None
                if connected is not None:
                    raise HookproofError(f"only {connected} of {workers} worker(s) connected within "
                                         f"{workers_timeout_s:g} s (--workers-timeout); Locust logs in {log_dir}")
                return code
            except KeyboardInterrupt:
                # Ask the master to stop early and still check and report (a partial report),
                # bounded by the time it needs to gather and settle; then let the interruption on.
                with contextlib.suppress(ProcessLookupError):
                    master.send_signal(signal.SIGUSR1)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    master.wait(spec.drain_s() + spec.collect_timeout_s + spec.settle_deadline_s + MARGIN_S)
                raise


def _watch(master: "Supervised", deadline: float, bound_s: float, bar: Any, task: Any,
           spec: "StormSpec", progress_path: Path | None, log_dir: Path, console: object, *,
           limit_at: float | None = None) -> tuple[int, bool]:
    """Show the master's progress until it exits; (its exit code, 1 past the deadline; whether
    `limit_at` stopped it).

    On a terminal, the progress bar; off one (CI logs), a heartbeat line on stderr every
    `heartbeat.log_interval_s()` seconds: the phase, the seconds since the start, what was sent.
    At `limit_at` (``--max-duration``) the master gets SIGUSR1 (end the storm now, gather, check
    and report) and is watched as long as gathering and settling may take."""
    from hookproof.heartbeat import log_interval_s
    from hookproof.terminal import err_console

    beat_s = log_interval_s()
    started = time.monotonic()
    next_beat = started + beat_s
    phase, detail = "starting", "nothing sent yet"
    hit = False
    while master.poll() is None:
        now = time.monotonic()
        if limit_at is not None and now > limit_at and not hit:  # end it now; it still gathers, checks, reports
            hit = True
            with contextlib.suppress(ProcessLookupError):
                master.send_signal(signal.SIGUSR1)
            bound_s = now - started + spec.drain_s() + spec.collect_timeout_s + spec.settle_deadline_s + MARGIN_S
            deadline = min(deadline, started + bound_s)
        if now > deadline:
            console.print(f"hookproof: the storm did not finish within {bound_s:.0f} s; stopped it "  # type: ignore[attr-defined]
                          f"(logs in {log_dir})", markup=False)
            return 1, hit
        data = _read_progress(progress_path) if progress_path else {}
        if data:
            elapsed = float(data.get("elapsed_s", 0.0))  # type: ignore[arg-type]
            phase = str(data.get("phase", "") or phase)
            detail = progress_detail(data)
            if phase == "draining":
                detail += f", {data.get('owed', 0)} retry(ies) or attempt(s) owed"
            bar.update(task, completed=min(elapsed, spec.duration_s), description=f"storm: {phase}", detail=detail)
        if not getattr(console, "is_interactive", True) and now >= next_beat:
            err_console.print(f"storm: {phase}, {now - started:.0f} s: {detail}", markup=False, soft_wrap=True)
            next_beat = now + beat_s
        time.sleep(0.25)
    return master.poll() or 0, hit


def register(app: typer.Typer) -> None:
    """Add ``hookproof storm`` to `app`."""

    @app.command()
    def storm(
        config: Annotated[Path, typer.Option("--config", "-c", help="The config file.")] = Path("hookproof.toml"),
        users: Annotated[int, typer.Option("--users", "-u", min=1, max=100_000, help="Locust users over all workers.")] = 10,
        spawn_rate: Annotated[float, typer.Option("--spawn-rate", "-r", min=0.001, max=100_000.0, help="Users started per second.")] = 10.0,
        duration: Annotated[str, typer.Option("--duration", "-t", help="Storm length: 60s, 2m, 1h30m.")] = "60s",
        rate: Annotated[Optional[float], typer.Option("--rate", min=0.001, max=10_000_000.0, help="Events per second over all users (default: 5 per user), each sent a first time: a related burst's events count one each; copies, redeliveries, wave replays and retries come on top.")] = None,
        shape: Annotated[str, typer.Option("--shape", help="Load shape: steady, ramp, spike or soak.")] = "steady",
        workers: Annotated[int, typer.Option("--workers", min=0, max=256, help="Locust worker processes (0: one local process).")] = 0,
        duplicates: Annotated[float, typer.Option("--duplicates", min=0.0, max=1.0, help="Share of events delivered more than once.")] = 0.2,
        burst: Annotated[int, typer.Option("--burst", min=1, max=100, help="Concurrent copies of a duplicated event (1: one later copy).")] = 4,
        reorder_window: Annotated[int, typer.Option("--reorder-window", min=1, max=10_000, help="Events the next one is drawn from (1: in order).")] = 8,
        waves: Annotated[int, typer.Option("--waves", min=0, max=100, help="Mass-redelivery waves during the storm.")] = 1,
        wave_events: Annotated[int, typer.Option("--wave-events", min=0, max=1_000_000, help="Each wave replays at least this many last events of each user, after they were delivered.")] = 200,
        related: Annotated[float, typer.Option("--related", min=0.0, max=1.0, help="Share of groups that release the next events of different types together (a new object's first events), with their object's state change.")] = 0.2,
        older_redelivery: Annotated[float, typer.Option("--older-redelivery", min=0.0, max=1.0, help="Share of objects whose first effect is redelivered after their second.")] = 0.05,
        late: Annotated[float, typer.Option("--late", min=0.0, max=1.0, help="Share of events with a status delivered after their object's next event.")] = 0.05,
        api_transient: Annotated[float, typer.Option("--api-transient", min=0.0, max=1.0, help="Share of objects whose first fetch the provider API fails, then recovers: half 404 (not visible yet), half 500; a 5xx to a delivery about one is an advisory.")] = 0.0,
        max_in_flight: Annotated[int, typer.Option("--max-in-flight", min=1, max=10_000, help="Groups (an event and its burst copies) in flight per user at most; past it a user falls behind its rate instead of opening more connections.")] = 64,
        out: Annotated[Optional[Path], typer.Option("--out", help="Report directory (default: a new folder hookproof-reports/storm-<UTC time>/, linked as hookproof-reports/latest).", show_default=False)] = None,
        force: Annotated[bool, typer.Option("--force", help="Let --out overwrite another command's results.")] = False,
        allow_remote: Annotated[bool, typer.Option("--allow-remote", help="Allow a target that is not on loopback.")] = False,
        workers_expected: Annotated[int, typer.Option("--workers-expected", min=0, max=256, help="Distributed mode: start no local worker, wait for N 'hookproof storm-worker' processes on other machines (prints the line to run there). None sends before all N are ready and of this build; one joining later is refused; one lost mid-storm makes the run partial, its missing records never a finding.")] = 0,
        master_bind_host: Annotated[Optional[str], typer.Option("--master-bind-host", help="The address the Locust master listens on (default: 127.0.0.1, so only workers on this machine can connect). For workers on other machines give this machine's address on a private network (or 0.0.0.0 for every interface): the port carries the signing secret.", show_default=False)] = None,
        master_bind_port: Annotated[Optional[int], typer.Option("--master-bind-port", min=1, max=65535, help=f"The master's port (default: {MASTER_PORT} with --workers-expected, else a free one).")] = None,
        workers_timeout: Annotated[str, typer.Option("--workers-timeout", help="How long the master waits for its workers to connect: 60s, 5m.")] = "60s",
        collect_timeout: Annotated[str, typer.Option("--collect-timeout", help="How long the master waits, after the storm and its drain, for every worker's last records (a worker whose closing message never comes makes the run partial).")] = "60s",
        max_duration: Annotated[Optional[str], typer.Option("--max-duration", help="Stop the whole run after this long (90s, 15m, 1h; default: run.max_duration_s when the config sets it, else the storm's --duration plus its timeouts): the storm ends early, is checked, and its partial report says why (exit 1).", show_default=False)] = None,
        seed: Annotated[Optional[int], typer.Option("--seed", help="Seed of the senders' worlds and plans (default: run.seed, else a random one); the report names it, and the same seed sends the same stories and plans again (timing aside).", show_default=False)] = None,
    ) -> None:
        """Storm the receiver with Locust (signed, duplicated, reordered events), then run certify's checks;
        exit 0 all checks valid, 1 findings, 2 usage/config error or a refused storm.

        A refused or unanswered delivery is retried on the profile's schedule (compressed by
        run.time_scale, 3 attempts at most), also after --duration: the storm then drains,
        sending every retry owed until each delivery is acknowledged or its attempts are
        used up, for at most the sender timeout times the attempts plus the compressed
        delays. A delivery the drain's end still cut is unknown in the checks, never lost.

        Distributed mode: --workers-expected N starts no local worker; the master listens on
        --master-bind-host/--master-bind-port (127.0.0.1 unless --master-bind-host says
        otherwise: give the address other machines reach it at) and sends each worker the
        storm (without the observer) and the signing secrets. With target.url on 10.0.0.1
        and the same hookproof version on every machine:

        \b
            hookproof storm --workers-expected 2 --master-bind-host 10.0.0.1 --allow-remote  # on 10.0.0.1
            hookproof storm-worker --master-host 10.0.0.1                      # on 10.0.0.2 and 10.0.0.3

        A worker checks that it runs the master's version and reaches the target (a
        loopback target only works for workers on the receiver's machine); if one does
        not, the storm is refused in one line. The master port carries the signing
        secret: bind it on a private network only."""
        from hookproof.certify import check_loopback, check_reachable, provider_server, receiver_log, started_receiver
        from hookproof.chaos.errors import ChaosError
        from hookproof.deadline import deadline_note
        from hookproof.errors import HookproofError, UsageError
        from hookproof.receiver_log import RECEIVER_LOG_FILE, keep_receiver_log, link_receiver_log, store_linked_report
        from hookproof.reports import REPORT_FILES, write_reports
        from hookproof.rundirs import run_out, withdraw
        from hookproof.simulator.errors import SimulatorError
        from hookproof.simulator.server.answer_times import RoundTripProbe, answer_times_note
        from hookproof.terminal import console, err_console, fail, load, print_report, seed_line
        from hookproof.terminal import duration_s as flag_duration_s

        tails: dict[str, str] | None = None  # the receiver's log, by scenario, once kept
        made: Path | None = None  # the run folder, once made: handed back if the storm is refused
        caught = Interrupts.install()
        started = time.monotonic()
        limited: list[bool] = []  # True once --max-duration ended the storm
        limit: tuple[float, str] | None = None  # (seconds, where they came from)
        unread: str | None = None  # the note on declared state fields a storm does not compare
        served: Any = None  # the provider API's state (`ServerState`), once started
        try:
            given = flag_duration_s("--max-duration", max_duration)
            cfg = load(config)
            if given is not None:
                limit = (given, "--max-duration")
            elif "max_duration_s" in cfg.run.model_fields_set:  # a storm's own length is its --duration
                limit = (cfg.run.max_duration_s, "run.max_duration_s")
            if cfg.target.url is None:
                raise UsageError("storms need a URL target (target.url); an in-process app cannot be stormed")
            unread = unread_state_fields(cfg.observed.state_fields)
            if unread is not None:  # its truth is statuses: a combined state read would never match it
                cfg = cfg.model_copy(update={"observer": cfg.observed.model_copy(update={"state_fields": {}})})
            check_loopback(cfg, allow_remote, command="storm", sends="a load of duplicates, bursts and redelivery waves")
            if shape not in ("steady", "ramp", "spike", "soak"):
                raise UsageError(f"--shape: unknown shape {shape!r} (steady, ramp, spike, soak)")
            if workers_expected and workers:
                raise UsageError("--workers-expected (workers on other machines) and --workers (local ones) "
                                 "cannot be combined")
            duration_s = parse_duration(duration)
            workers_timeout_s = parse_duration(workers_timeout, "--workers-timeout")
            collect_timeout_s = parse_duration(collect_timeout, "--collect-timeout")
            require_locust()  # before anything starts: without it the storm could only fail later
            secrets = cfg.target.secrets(cfg.base_dir)
            out = made = run_out(out, "storm", force=force)
            for name in (*REPORT_FILES.values(), "history.sqlite", RECEIVER_LOG_FILE):
                with contextlib.suppress(FileNotFoundError):
                    (out / name).unlink()
            progress_path = out / ".storm-progress.json"
            remote = workers_expected > 0
            bind_host = master_bind_host or "127.0.0.1"  # exposed only when asked: the port carries the secret
            port = master_bind_port or (MASTER_PORT if remote else None)
            with provider_server(cfg) as provider:
                served = provider.state
                api_base, sink_url = provider.api_base, provider.sink_url
                spec = build_spec(cfg, users=users, rate=rate or 5.0 * users, duration_s=duration_s, shape=shape,
                                  duplicates=duplicates, burst=burst, reorder_window=reorder_window, waves=waves,
                                  out=out, sink_url=sink_url, progress_path=progress_path,
                                  max_in_flight=max_in_flight, collect_timeout_s=collect_timeout_s,
                                  patterns={"wave_events": wave_events, "related": related,
                                            "older_redelivery": older_redelivery, "late": late,
                                            "api_transient": api_transient}, seed=seed)
                spec = dated(spec, workers_expected or workers)
                check_team_keys(cfg, spec)  # a template the storm's events cannot fill: before any sending
                serve_storm_truth(served, spec, workers_expected or workers)
                log, marks = receiver_log(cfg, secrets)
                if marks is not None:
                    marks.mark("storm")
                try:
                    with started_receiver(cfg, secrets, api_base, sink_url, log):
                        provider.ready()
                        check_reachable(cfg)  # once a started receiver is up; nothing listening is not a finding
                        with RoundTripProbe(api_base, served.answer_times):  # the waits a fetch has
                            code = run_storm(spec, secrets, workers=workers_expected or workers, spawn_rate=spawn_rate,
                                             remote_workers=remote, bind_host=bind_host, port=port,
                                             workers_timeout_s=workers_timeout_s, log_dir=out / "locust",
                                             console=err_console, limited=limited,
                                             limit_at=started + limit[0] if limit is not None else None)
                finally:  # the receiver has stopped: its last words are in
                    tails = keep_receiver_log(log, marks, out)
        except (HookproofError, SimulatorError, ChaosError) as exc:
            withdraw(made)  # refused: the results stay as they were
            raise fail(str(exc)) from None
        except KeyboardInterrupt:
            code = -caught.exit_code  # marks the interruption
        if out is None:  # interrupted before its run folder was made: nothing was sent
            raise typer.Exit(-code if code < 0 else 1)
        with contextlib.suppress(FileNotFoundError):
            (out / ".storm-progress.json").unlink()
        report_path = out / REPORT_FILES["json"]
        if code < 0:
            # The Locust processes were stopped (SIGTERM: Locust shuts down and its master
            # writes what it gathered); say where that is, and exit 128 + the signal.
            if report_path.is_file():
                # the note names the signal, as certify's and explore's do (a KeyboardInterrupt no
                # handler recorded is Python's own for SIGINT)
                note = f"stopped by {caught.stopped_by or 'SIGINT'}; the storm ended early: the report holds what was sent"
                report = written_report(out)
                if tails is not None:
                    report = link_receiver_log(report, tails)
                report = dataclasses.replace(report, notes=(*report.notes, note))
                write_reports(report, out)
                if (out / "history.sqlite").is_file():
                    store_linked_report(out / "history.sqlite", report)
                console.print(f"storm interrupted; the report of what was sent so far: {report_path}", markup=False)
            else:
                err_console.print("hookproof: storm interrupted before a report was written; Locust logs in "
                                  f"{out / 'locust'}", markup=False)
            raise typer.Exit(-code)
        stopped = (deadline_note(limit[0], limit[1], "the storm ended early: the report holds what was sent")
                   if limited and limit is not None else None)
        if not report_path.is_file():
            if stopped:
                raise fail(f"storm {stopped}, but the storm wrote no report; see the logs in {out / 'locust'}", 1)
            raise fail(f"the storm ended (Locust exit code {code}) without a report; see the logs in {out / 'locust'}", 1)
        report = written = written_report(out)
        overloaded = host_load_note(_loadavg(), os.cpu_count())
        if overloaded is not None:  # in the files; on the console beside the ack latencies
            report = dataclasses.replace(report, notes=(*report.notes, overloaded))
        if stopped:  # the master ended the storm early at --max-duration: its report says why
            report = dataclasses.replace(report, notes=(*report.notes, stopped))
        if unread is not None:
            report = dataclasses.replace(report, notes=(*report.notes, unread))
        lost_workers = workers_lost_note(out / "locust" / "locust-master.log")
        if lost_workers is not None:  # why a storm sent little or nothing: only the master's log said
            report = dataclasses.replace(report, notes=(*report.notes, lost_workers))
        version_note = served.api_version_note() if served is not None else None
        if version_note is not None:  # the receiver's SDK pins a Stripe-Version hookproof does not model
            report = dataclasses.replace(report, notes=(*report.notes, version_note))
        answered = answer_times_note(served.answer_times) if served is not None else None
        if answered is not None:  # the receiver called the API or the sink: how long they took
            report = dataclasses.replace(report, notes=(*report.notes, answered))
        # a storm stopped early never meant to send every type: no note of those it did not
        unsent = None if stopped or report.partial else storm_unsent_note(cfg, out / "history.sqlite")
        if unsent is not None:  # enabled types the storm never sent: its verdict is silent on them
            report = dataclasses.replace(report, notes=(*report.notes, unsent))
        from hookproof.unsent import restated_keys_note, unmodelled_note, unmodelled_version_note

        unmodelled = unmodelled_note(cfg)
        if unmodelled is not None:  # real types the endpoint enables, which no storm sends
            report = dataclasses.replace(report, notes=(*report.notes, unmodelled))
        later = unmodelled_version_note(cfg)
        if later is not None:  # events labeled with a Stripe API version hookproof does not model
            report = dataclasses.replace(report, notes=(*report.notes, later))
        restated = restated_keys_note(cfg)
        if restated is not None:  # the built-in money key as the team's own: amounts not compared
            report = dataclasses.replace(report, notes=(*report.notes, restated))
        slow_start = late_start_note(report)
        if slow_start is not None:  # the numbers describe a burst: said first (after the headline)
            report = dataclasses.replace(report, notes=(slow_start, *report.notes))
        headline = storm_headline(report, cfg)
        if headline is not None:  # first among the notes; printed above the table, as certify's
            report = dataclasses.replace(report, notes=(headline, *report.notes))
        # the master wrote the reports: written again with every note added here, naming the
        # receiver's log and quoting it as certify's do
        if tails is not None or report.notes != written.notes:
            if tails is not None:
                report = link_receiver_log(report, tails)
            write_reports(report, out)
            if (out / "history.sqlite").is_file():  # `hookproof report` re-renders it as written here
                store_linked_report(out / "history.sqlite", report)
        paths = {name: out / file for name, file in REPORT_FILES.items()}
        paths["history"] = out / "history.sqlite"
        shown = dataclasses.replace(report, notes=tuple(n for n in report.notes if n != overloaded))
        print_report(shown, paths, f"hookproof storm: {cfg.target.profile} receiver at {report.target}",
                     seed=seed_line(report.seed, seed is None and cfg.run.seed is None, "--seed {seed}"),
                     headline=headline)
        _print_numbers(report, console, overloaded)
        if stopped:
            console.print(f"storm {stopped}; exit 1", markup=False, soft_wrap=True)
            raise typer.Exit(1)
        raise typer.Exit(0 if code == 0 and report.verdict == "pass" and not report.partial else 1)


def written_report(out: Path) -> "RunReport":
    """The report the storm's master wrote into `out`: from the history it stored it in, its
    findings left as the history's rows (`saved_report.stored_report`: a failing storm of a
    million attempts has ~850,000, ~365 MB as objects), else report.json's. Raises the
    `reports` errors of a report that does not read."""
    from hookproof.reports import REPORT_FILES, load_json
    from hookproof.scenarios.saved_report import stored_report

    history = out / "history.sqlite"
    if history.is_file():
        with contextlib.suppress(sqlite3.Error, ValueError):
            stored = stored_report(history)
            if stored is not None:
                return stored
    return load_json((out / REPORT_FILES["json"]).read_bytes())


def unread_state_fields(fields: Mapping[str, Any] | None) -> str | None:
    """None, or for a config declaring ``[observer.state_fields]`` the note a storm adds:
    it compares each object's status only (its truth is statuses), so the same config serves
    certify, explore and storm; e.g. ``[observer.state_fields] not compared (subscription:
    price): …``."""
    declared = {str(kind): sorted(map(str, v)) for kind, v in (fields or {}).items() if v}
    if not declared:
        return None
    named = "; ".join(f"{kind}: {', '.join(cols)}" for kind, cols in sorted(declared.items()))
    return (f"[observer.state_fields] not compared ({named}): a storm compares each object's status only; "
            "certify and explore compare the declared fields too")


def numbers_line(stats: Mapping[str, Any]) -> str:
    """The storm's numbers in one line, each count naming what it counts, from the
    ``ack_latency`` check's stats: attempts (every request sent: first deliveries, copies,
    redeliveries and retries) of the distinct events they carried, attempts per second over
    the storm, and the ack latency percentiles (ms) of the acknowledged attempts alone,
    e.g. ``661 attempts (deliveries, copies and retries) of 327 events at 33.05 attempts/s
    on average; ack latency of the 640 acknowledged attempts: p50 29.6 ms, ...``."""
    head = (f"{stats.get('sent', 0)} attempts (deliveries, copies and retries) of {stats.get('events', 0)} events "
            f"at {stats.get('sent_per_s', 0)} attempts/s on average")
    acked = stats.get("acked")
    if acked == 0:
        return f"{head}; no attempt was acknowledged, so no ack latency"
    whose = "acknowledged attempts" if acked is None else f"{acked} acknowledged attempt(s)"
    return (f"{head}; ack latency of the {whose}: p50 {stats.get('p50_ms', 0):.1f} ms, "
            f"p95 {stats.get('p95_ms', 0):.1f} ms, p99 {stats.get('p99_ms', 0):.1f} ms")


def _print_numbers(report: object, console: object, overloaded: str | None = None) -> None:
    """One line: attempts sent, sustained rate, ack latency percentiles; then, beside them,
    why they may be slow: a sender-bound storm, an overloaded machine (`host_load_note`)."""
    scenario = report.scenario("storm")  # type: ignore[attr-defined]
    if scenario is None:
        return
    for check in scenario.checks:
        if check.check_id == "ack_latency":
            s = check.stats
            console.print(f"storm: {numbers_line(s)}", markup=False, soft_wrap=True)  # type: ignore[attr-defined]
            if s.get("sender_bound"):
                console.print(  # type: ignore[attr-defined]
                    f"storm: sender-bound: the senders' loop lagged up to {s.get('sender_lag_max_ms', 0):.0f} ms and "
                    f"an attempt waited up to {s.get('sender_wait_max_ms', 0):.0f} ms for its connection; latencies "
                    "count from the wire (use more --workers, or fewer --users per worker)", markup=False,
                    soft_wrap=True)
            if overloaded is not None:
                console.print(f"storm: {overloaded}", markup=False, soft_wrap=True)  # type: ignore[attr-defined]
