"""`hookproof storm-worker`: a Locust worker of a `hookproof storm` running on another machine.

Runs ``python -m locust -f <the installed locustfile> --worker --master-host H
--master-port P`` in its own process (Locust is never imported here) and waits for it.
The master (``hookproof storm --workers-expected N``) sends the worker everything it
needs with the run: the storm spec without the observer, the signing secrets, and its
hookproof version; the worker refuses (one line) another version or a target it cannot
reach, streams its records to the master while it sends, and exits when the master
ends the storm. Needs no config file and no secret on this machine.

Exit codes: 0 the worker ran and handed its records over; 1 it did not (the master
went away, it refused the storm, or it never connected); 2 a usage error.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from hookproof.interrupts import Interrupts

#: Locust's default master port (the default of ``hookproof storm --master-bind-port``).
MASTER_PORT = 5557


def storm_worker_command(master_host: str, master_port: int) -> list[str]:
    """The Locust worker's argv for a master at `master_host`:`master_port`."""
    from hookproof.commands.storm import worker_command

    return worker_command(master_host, master_port)


def register(app: typer.Typer) -> None:
    """Add ``hookproof storm-worker`` to `app`."""

    @app.command("storm-worker")
    def storm_worker(
        master_host: Annotated[str, typer.Option("--master-host", help="The machine running 'hookproof storm --workers-expected N'.")],
        master_port: Annotated[int, typer.Option("--master-port", min=1, max=65535, help="The master's port (its --master-bind-port).")] = MASTER_PORT,
    ) -> None:
        """Run one storm worker for a master on another machine (same hookproof version);
        exit 0 records handed over, 1 not, 2 usage error.

        The master sends the storm, the signing secrets and its version: nothing to
        configure here. Start one per core you want to load from:

        \b
            hookproof storm-worker --master-host 10.0.0.1
        """
        import os

        from hookproof.terminal import fail

        if not master_host.strip() or any(c.isspace() for c in master_host):
            raise fail(f"--master-host: not a host name or address: {master_host!r}")
        from hookproof.commands.storm import _pythonpath

        env = {**os.environ, "PYTHONPATH": _pythonpath(), "PYTHONUNBUFFERED": "1"}
        env.pop("HOOKPROOF_STORM_SECRETS", None)  # the master's secrets come with the run
        from hookproof.chaos.process import Supervised

        caught = Interrupts.install()
        proc = Supervised(storm_worker_command(master_host, master_port), env=env)
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            proc.stop(10.0, group=False)
            raise typer.Exit(caught.exit_code) from None
        if code != 0:
            print(f"hookproof: the storm worker ended with exit code {code} (see its log above)", file=sys.stderr)
        raise typer.Exit(0 if code == 0 else 1)
