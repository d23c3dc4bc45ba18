"""`hookproof storm-worker`: a Locust worker of a `hookproof storm` running on another machine.

Runs ``python -m locust -f <the installed locustfile> --worker --master-host H
--master-port P`` in its own process (Locust is never imported here) and waits for it.
The master (``hookproof storm --workers-expected N``) sends the worker everything it
needs with the run: the storm spec without the observer, the signing secrets, and its
hookproof version; the worker refuses (one line) another version or a target it cannot
reach, streams its records to the master while it sends, and exits when the master
ends the storm. Needs no config file and no secret on this machine.

Before starting Locust it waits for the master's port to accept a connection, saying
where it waits and, every few seconds, for how long; past ``--master-timeout`` (5
minutes) it gives up in one line. While the worker runs, a heartbeat line every few
seconds says for how long; the run ends with the master's storm (whose own deadline
bounds it), or when Locust has heard nothing from the master for 60 s. Whatever the
master does, the whole command is bounded by its own ``--max-duration`` (1 hour from
its start, waiting included: the storm's length reaches only the Locust child, so the
default is generous; give a longer one for a longer storm): then it stops the Locust
worker, says why in one line and exits 1.

Stopped before the storm ends (SIGTERM, Ctrl-C), the worker hands its last records and its
closing message to the master before it exits (the run stays complete). The Locust worker
dies with this command however it ends (``PR_SET_PDEATHSIG``: a SIGKILL of this command
included, on which the Locust worker hands over the same way); its last line says what it
handed over (attempts, chunks, deliveries cut), from the Locust worker through a file named
in its environment (`loadtests.spec.HANDOVER_ENV`; a refusal's reason so too: `REFUSAL_ENV`).

Exit codes: 0 the worker ran and handed its records over; 1 it did not (the master
went away, the storm was refused, it never connected, or it ran into --max-duration);
2 a usage error, or this worker refused in one line: another build of hookproof than the
master's (another storm protocol: `loadtests.spec.storm_protocol`), or a worker that joined
after the storm began; it sent nothing.
"""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Callable

import typer

from hookproof.interrupts import Interrupts

if TYPE_CHECKING:
    from hookproof.chaos.process import Supervised

#: Locust's default master port (the default of ``hookproof storm --master-bind-port``).
MASTER_PORT = 5557


def storm_worker_command(master_host: str, master_port: int) -> list[str]:
    """The Locust worker's argv for a master at `master_host`:`master_port`."""
    from hookproof.commands.storm import worker_command

    return worker_command(master_host, master_port)


#: How long a worker waits for its master to listen by default (--master-timeout).
MASTER_TIMEOUT = "5m"
#: The worker's whole-run bound by default (--max-duration), from the command's start.
MAX_DURATION = "1h"
#: Seconds between two connection tries while the master is not up.
RETRY_S = 0.5


def wait_for_master(host: str, port: int, timeout_s: float, beat: Callable[[float], None], *,
                    interval_s: float) -> bool:
    """Try to connect to `host`:`port` until it accepts (True) or `timeout_s` seconds passed
    (False); `beat(elapsed_s)` every `interval_s` seconds meanwhile. Raises OSError
    (`socket.gaierror`) when `host` does not resolve."""
    started = time.monotonic()
    next_beat = started + interval_s
    while True:
        now = time.monotonic()
        left = started + timeout_s - now
        if left <= 0:
            return False
        try:
            with socket.create_connection((host, port), timeout=min(2.0, left)):
                return True
        except socket.gaierror:
            raise
        except OSError:  # refused, unreachable, timed out: not up yet
            pass
        now = time.monotonic()
        if now >= next_beat:
            beat(now - started)
            next_beat = now + interval_s
        time.sleep(min(RETRY_S, max(0.0, started + timeout_s - time.monotonic())))


def run_worker(proc: "Supervised", interval_s: float, beat: Callable[[float], None], *,
               until: float | None = None) -> int | None:
    """Wait for the Locust worker `proc` to exit; its exit code, or None once
    `time.monotonic()` reached `until` first (`proc` still runs: the caller stops it).
    `beat(elapsed_s)` every `interval_s` seconds meanwhile, so a worker's log is never
    silent for long."""
    started = time.monotonic()
    next_beat = started + interval_s
    while True:
        code = proc.poll()
        if code is not None:
            return code
        now = time.monotonic()
        if until is not None and now >= until:
            return None
        if now >= next_beat:
            beat(now - started)
            next_beat = now + interval_s
        time.sleep(min(0.25, interval_s))


def register(app: typer.Typer) -> None:
    """Add ``hookproof storm-worker`` to `app`."""

    @app.command("storm-worker")
    def storm_worker(
        master_host: Annotated[str, typer.Option("--master-host", help="The machine running 'hookproof storm --workers-expected N'.")],
        master_port: Annotated[int, typer.Option("--master-port", min=1, max=65535, help="The master's port (its --master-bind-port).")] = MASTER_PORT,
        master_timeout: Annotated[str, typer.Option("--master-timeout", help="How long to wait for the master to listen before giving up: 30s, 5m, 1h.")] = MASTER_TIMEOUT,
        max_duration: Annotated[str, typer.Option("--max-duration", help="Stop the whole worker after this long, waiting included (90s, 15m, 2h), whatever the master does; exit 1. Longer than the master's storm.")] = MAX_DURATION,
    ) -> None:
        """Run one storm worker for a master on another machine (same hookproof build);
        exit 0 records handed over, 1 not, 2 usage error or refused (another build, or
        joined after the storm began; nothing sent).

        The master sends the storm, the signing secrets and its version: nothing to
        configure here. Until the master listens, the worker says where it waits, every
        few seconds, and gives up after --master-timeout; the whole worker stops after
        --max-duration (1h) whatever the master does. Stopped early (Ctrl-C, SIGTERM),
        it hands its last records and closing message over first, so the storm's records
        stay whole. Start one per core you want to load from:

        \b
            hookproof storm-worker --master-host 10.0.0.1
        """
        import os

        from hookproof.errors import HookproofError
        from hookproof.heartbeat import log_interval_s
        from hookproof.terminal import err_console, fail

        if not master_host.strip() or any(c.isspace() for c in master_host):
            raise fail(f"--master-host: not a host name or address: {master_host!r}")
        from hookproof.commands.storm import _pythonpath, parse_duration, require_locust

        started = time.monotonic()
        caught = Interrupts.install()
        try:
            timeout_s = parse_duration(master_timeout, "--master-timeout")
            limit_s = parse_duration(max_duration, "--max-duration")
            if limit_s <= 0:
                raise HookproofError(f"--max-duration: must be more than 0 s, not {max_duration!r}")
            require_locust()
        except HookproofError as exc:
            raise fail(str(exc)) from None
        where = f"{master_host}:{master_port}"

        def say(text: str) -> None:
            err_console.print(text, markup=False, soft_wrap=True)

        say(f"storm-worker: waiting for the master at {where} (up to {timeout_s:g} s, --master-timeout)")
        try:
            up = wait_for_master(master_host, master_port, min(timeout_s, limit_s), interval_s=log_interval_s(),
                                 beat=lambda s: say(f"storm-worker: waiting for the master at {where}, {s:.0f} s"))
        except OSError:
            raise fail(f"--master-host: cannot resolve {master_host!r}") from None
        except KeyboardInterrupt:
            raise typer.Exit(caught.exit_code) from None
        if not up and time.monotonic() - started >= limit_s and limit_s < timeout_s:
            raise fail(f"the storm worker stopped at its --max-duration ({limit_s:g} s): no master listened at "
                       f"{where} by then", 1)
        if not up:
            raise fail(f"no master listened at {where} within {timeout_s:g} s (--master-timeout): start 'hookproof "
                       "storm --workers-expected N --master-bind-host ADDRESS' there first, ADDRESS being one this "
                       "machine reaches it at", 1)
        say(f"storm-worker: the master at {where} is up; starting the worker")
        import tempfile

        from hookproof.loadtests.spec import HANDOVER_ENV, REFUSAL_ENV

        refusal_dir = tempfile.TemporaryDirectory(prefix="hookproof-worker-")
        refusal = Path(refusal_dir.name) / "refusal.txt"
        handover = Path(refusal_dir.name) / "handover.txt"
        env = {**os.environ, "PYTHONPATH": _pythonpath(), "PYTHONUNBUFFERED": "1", REFUSAL_ENV: str(refusal),
               HANDOVER_ENV: str(handover)}
        env.pop("HOOKPROOF_STORM_SECRETS", None)  # the master's secrets come with the run
        import signal

        from hookproof.chaos.process import Supervised

        # the Locust worker dies with this command, however it ends (a SIGKILL included): SIGTERM,
        # on which it sends its last records and its closing message before it exits
        proc = Supervised(storm_worker_command(master_host, master_port), env=env,
                          parent_death_signal=signal.SIGTERM)
        try:
            code = run_worker(proc, log_interval_s(),
                              lambda s: say(f"storm-worker: the worker runs for the master at {where}, {s:.0f} s"),
                              until=started + limit_s)
        except KeyboardInterrupt:
            proc.stop(10.0, group=False)  # it hands its last records over first (SIGTERM)
            if handover.is_file():
                say(f"storm-worker: {handover.read_text(encoding='utf-8').strip()}")
            refusal_dir.cleanup()
            raise typer.Exit(caught.exit_code) from None
        if code is None:
            proc.stop(10.0, group=False)
            raise fail(f"the storm worker stopped at its --max-duration ({limit_s:g} s): the master at {where} had "
                       "not ended its storm by then (a longer storm needs a longer --max-duration; a silent master "
                       "is ended here)", 1)
        try:
            why = refusal.read_text(encoding="utf-8").strip() if refusal.is_file() else ""
            handed = handover.read_text(encoding="utf-8").strip() if handover.is_file() else ""
        finally:
            refusal_dir.cleanup()
        if handed:
            say(f"storm-worker: {handed.splitlines()[0]}")
        if code == 2 and why:  # refused (another build, or too late): one line, nothing sent
            raise fail(f"storm-worker refused: {why.splitlines()[0]}", 2)
        if code != 0:
            print(f"hookproof: the storm worker ended with exit code {code} (see its log above)", file=sys.stderr)
        raise typer.Exit(0 if code == 0 else 1)
