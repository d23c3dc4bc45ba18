"""Locust storms of signed webhook events, ending in certify's exactly-once checks.

Run by ``hookproof storm`` and ``hookproof storm-worker`` (never imported by hookproof or
pytest: Locust monkey-patches the standard library with gevent). By hand::

    HOOKPROOF_STORM_SPEC=spec.json HOOKPROOF_STORM_SECRETS='["whsec_..."]' \\
        python -m locust -f loadtests/locustfile.py --headless -u 10 -r 10 --host URL
    # distributed: the same with --master --expect-workers K, and K times
    python -m locust -f loadtests/locustfile.py --worker --master-host H

The master (or single local process) reads the spec (`loadtests.spec.StormSpec`) from
the file named by ``HOOKPROOF_STORM_SPEC`` and the signing secrets from
``HOOKPROOF_STORM_SECRETS``, and forwards both to the workers with the run (custom
arguments: the spec without the observer, `StormSpec.for_workers`, and its hookproof
version). Each worker first reports its version and whether it reaches the target;
the master refuses the storm otherwise (`storm_master.await_ready`). Each `StormUser`
runs `max_in_flight` senders that pace
themselves on the spec's load shape (an open model: intended send times, never waiting
for answers while a sender is free), draws groups from a `StormPlan` (duplicates,
concurrent bursts, reordering, redelivery waves) over the process's `StoryBook` (world
stories rendered once, replayed with fresh ids: each user its own copy numbers), signs every attempt
with the profile at its send time, retries failed attempts on the profile's schedule
(scaled), and records each attempt like the dispatcher does; every second a worker
streams what it recorded to the master (`storm_worker.stream`), which appends it to the
history file (`loadtests.spool.Spool`): memory stays flat on both ends.

When the storm's duration is over the master stops the workers; each drains (its
senders send every retry they owe, on its schedule, until each delivery is acknowledged
or has used its attempts, bounded by `StormSpec.drain_s`), sends its last chunk, its
totals and the deliveries its drain's end cut (`loadtests.cut`), and the master settles the receiver, runs the checks over the history read
from disk, writes the reports (`loadtests.verdict.finish_spooled`) and exits 0 (every
check valid), 1 (findings, unknowns, or missing records) or 2 (a worker refused).

The pieces live in modules of their own: `storm_state` (what the process knows),
`storm_user` (the user), `storm_worker` (a worker's flush) and `storm_master` (the
master's control and progress file); this file is the entry Locust loads: the custom
argument, the event listeners, and the user class Locust picks up from it.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import gevent
import gevent.event
import gevent.pool
from locust import events
from locust.env import Environment
from locust.rpc import Message
from locust.runners import MasterRunner, WorkerRunner

from hookproof.loadtests.collect import DONE_MESSAGE, GO_MESSAGE, READY_MESSAGE, RECORDS_MESSAGE, REFUSED_MESSAGE
from hookproof.loadtests.spec import REFUSAL_ENV, SECRETS_ENV, SPEC_ENV, SpecError, StormSpec, storm_protocol
from hookproof.loadtests.spool import Spool
from hookproof.loadtests.storm_master import control, progress_loop
from hookproof.loadtests.storm_state import STATE, log
from hookproof.loadtests.storm_user import StormUser
from hookproof.loadtests.storm_worker import (
    flush,
    flush_on_quit,
    probe_lag,
    protocol_problem,
    refuse_ready,
    report_ready,
    stream,
)
from hookproof.scenarios.report_views import VERSION

# httpcore (under httpx: the master's http and sink observers, imported when the storm ends)
# imports trio when it is installed and catches only ImportError; under gevent's patched
# select, which has no epoll, importing trio raises AttributeError, and the master could not
# read the receiver. Nothing in a Locust process runs trio: it is made unimportable here.
sys.modules.setdefault("trio", None)  # type: ignore[arg-type]

__all__ = ["StormUser"]


# ---- events ------------------------------------------------------------------------------

@events.init_command_line_parser.add_listener
def _add_arguments(parser: Any) -> None:
    parser.add_argument("--hookproof-spec", type=str, default="", include_in_web_ui=False,
                        help="the storm spec as JSON, as workers get it (set by the master from $HOOKPROOF_STORM_SPEC)")
    parser.add_argument("--hookproof-secrets", type=str, default="", include_in_web_ui=False,
                        help="the signing secrets (set by the master from $HOOKPROOF_STORM_SECRETS; never logged)")
    parser.add_argument("--hookproof-version", type=str, default="", include_in_web_ui=False,
                        help="the master's hookproof version (set by the master)")
    parser.add_argument("--hookproof-protocol", type=str, default="", include_in_web_ui=False,
                        help="the master's storm protocol (`spec.storm_protocol`; set by the master)")


@events.init.add_listener
def _on_init(environment: Environment, **_: Any) -> None:
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        # after the runner's own listener, so first when quitting fires (in reverse): the last
        # records and the closing message go before Locust tells the master this worker quits
        environment.events.quitting.add_listener(lambda environment, **_: flush_on_quit(environment))
        runner.register_message(GO_MESSAGE, _on_go)
        runner.register_message(REFUSED_MESSAGE, _on_refused)
        return
    path = os.environ.get(SPEC_ENV)
    if not path:
        raise SystemExit(f"hookproof storm: {SPEC_ENV} is not set (the path of the storm spec JSON)")
    spec = StormSpec.from_json(Path(path).read_text(encoding="utf-8"))  # fail early on a bad spec
    MASTER_SPEC.append(spec)
    if environment.parsed_options is not None:
        # what the workers get with the run: no observer, and the signing secrets only
        environment.parsed_options.hookproof_spec = spec.for_workers().to_json()
        environment.parsed_options.hookproof_secrets = os.environ.get(SECRETS_ENV, "")
        environment.parsed_options.hookproof_version = VERSION
        environment.parsed_options.hookproof_protocol = storm_protocol()
    if runner is not None:
        runner.register_message(RECORDS_MESSAGE, _on_records)
        runner.register_message(DONE_MESSAGE, _on_done)
        runner.register_message(READY_MESSAGE, _on_ready)
    # `hookproof storm` sends SIGUSR1 when it is interrupted: stop sending, gather, check
    # and write a report marked partial (SIGTERM would end Locust without one).
    gevent.signal_handler(signal.SIGUSR1, STATE.stop_early.set)


#: The master's (or single local process's) full spec, read from its file at init.
MASTER_SPEC: list[StormSpec] = []


def _on_records(environment: Environment, msg: Any, **_: Any) -> None:
    STATE.collector.add(str(msg.node_id), msg.data or {})


def _on_done(environment: Environment, msg: Any, **_: Any) -> None:
    STATE.collector.done(str(msg.node_id), msg.data or {})


def _on_ready(environment: Environment, msg: Any, **_: Any) -> None:
    STATE.collector.ready(str(msg.node_id), msg.data or {})


def _on_go(environment: Environment, msg: Any, **_: Any) -> None:
    """A worker: the master heard every worker ready; the storm's clock starts, its users send."""
    if STATE.error is None:
        STATE.t0, STATE.started_at = time.monotonic(), time.time()
        STATE.go.set()


def _on_refused(environment: Environment, msg: Any, **_: Any) -> None:
    """A worker the master refused (it joined after the storm began): say why in one line and
    quit, as Locust does on its master's quit; the worker exits 2 (`_on_quitting`)."""
    if STATE.refused:
        return
    STATE.refused = str((msg.data or {}).get("reason") or "the master refused this worker")
    log.error("%s", STATE.refused)
    runner = environment.runner
    assert runner is not None
    runner.stop()
    runner.greenlet.kill(block=True)


def _refuse_late_workers(runner: MasterRunner, members: frozenset[str]) -> None:
    """From now on, a worker that was not in `members` when the storm began is refused: told why
    (``hookproof_refused``, again on each of its heartbeats until it is gone: the first may come
    before it listens) and never added to the master's workers (Locust would otherwise hand it
    users taken from the running workers)."""
    handle = runner.handle_message
    told: set[str] = set()

    def handle_message(client_id: str, msg: Any) -> None:
        if client_id in members:
            handle(client_id, msg)
            return
        if msg.type in ("client_ready", "heartbeat"):
            if msg.type == "client_ready":  # acknowledged, or its Locust never listens to anything
                runner.send_message("ack", client_id=client_id, data={"index": runner.get_worker_index(client_id)})
            if client_id not in told:
                told.add(client_id)
                log.warning("refused worker %s: it joined after the storm began", client_id)
            reason = (f"the storm already started with {len(members)} worker(s): a worker joins a storm before "
                      "it begins (start the storm-workers first, or restart the storm)")
            runner.server.send_to_client(Message(REFUSED_MESSAGE, {"reason": reason}, client_id))
            return
        if msg.type in ("client_stopped", "quit", "stats", "exception", "logs", "spawning", "spawning_complete"):
            return  # a refused worker's last words
        handle(client_id, msg)
    runner.handle_message = handle_message  # type: ignore[method-assign]


@events.test_start.add_listener
def _on_test_start(environment: Environment, **_: Any) -> None:
    options = environment.parsed_options
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        master_version = getattr(options, "hookproof_version", "") if options is not None else ""
        problem = protocol_problem(master_version, getattr(options, "hookproof_protocol", "") if options else "")
        if problem is None:
            try:
                spec = StormSpec.from_json(getattr(options, "hookproof_spec", "") if options is not None else "")
            except SpecError as exc:
                problem = (f"this worker cannot read the master's storm ({exc}): its hookproof build differs; "
                           "install the same build on both")
        if problem is not None:  # one line, and the master hears it at once: it refuses before anyone sends
            refuse_ready(environment, problem)
            return
        STATE.setup(spec, sender=True, secrets=getattr(options, "hookproof_secrets", "") or None)
        STATE.story_book(STATE.process_seed(runner.worker_index))  # before the clock starts (it takes seconds)
        report_ready(environment, master_version, VERSION)
        gevent.spawn(stream, environment)
        gevent.spawn(probe_lag)
        return
    if not MASTER_SPEC:  # a worker's own test_start, fired where the runner is not a worker's
        return
    spec = MASTER_SPEC[-1]
    if isinstance(runner, MasterRunner):
        _refuse_late_workers(runner, frozenset(c.id for c in runner.clients.all))
    STATE.setup(spec, sender=not isinstance(runner, MasterRunner))
    if not isinstance(runner, MasterRunner):  # a single local process: its stories first, then its clock
        STATE.story_book(STATE.process_seed(0))
        STATE.t0, STATE.started_at = time.monotonic(), time.time()
        STATE.go.set()  # no worker to wait for
    STATE.collector.spool = Spool(Path(spec.out_dir) / "history.sqlite")
    gevent.spawn(control, environment)
    if spec.progress_path:
        gevent.spawn(progress_loop, environment)
    if not isinstance(runner, MasterRunner):
        gevent.spawn(stream, environment)
        gevent.spawn(probe_lag)


@events.test_stop.add_listener
def _on_test_stop(environment: Environment, **_: Any) -> None:
    if isinstance(environment.runner, MasterRunner) or STATE.flushed or STATE.spec is None:
        return
    STATE.flushed = True
    # In a greenlet of its own: a worker fires this from its loop reading the master's
    # messages, and a drain may outlast Locust's 60 s without reading a heartbeat there
    # (the worker would quit, its records never closed). The master waits for its closing
    # message (`storm_master.control`), not for this handler.
    gevent.spawn(flush, environment)


@events.quitting.add_listener
def _on_quitting(environment: Environment, **_: Any) -> None:
    if isinstance(environment.runner, WorkerRunner):
        refused = STATE.refused or (STATE.error if STATE.build_error else "")
        environment.process_exit_code = 2 if refused else 0 if STATE.closed and STATE.error is None else 1
        where = os.environ.get(REFUSAL_ENV)
        if refused and where:  # for `hookproof storm-worker`, which says it in one line
            try:
                Path(where).write_text(refused, encoding="utf-8")
            except OSError:
                pass
    else:
        environment.process_exit_code = STATE.exit_code if STATE.exit_code is not None else 1
