"""Locust storms of signed webhook events, ending in certify's exactly-once checks.

Run by ``hookproof storm`` (never imported by hookproof or pytest: Locust monkey-patches
the standard library with gevent). By hand, from the repository root::

    HOOKPROOF_STORM_SPEC=spec.json HOOKPROOF_STORM_SECRETS='["whsec_..."]' \\
        python -m locust -f loadtests/locustfile.py --headless -u 10 -r 10 --host URL
    # distributed: the same with --master --expect-workers K, and K times
    HOOKPROOF_STORM_SECRETS='[...]' python -m locust -f loadtests/locustfile.py --worker --master-host H

The master reads the spec (`loadtests.spec.StormSpec`) from the file named by
``HOOKPROOF_STORM_SPEC`` and forwards it to the workers with the run (the custom
argument ``--hookproof-spec``); workers read the signing secrets from
``HOOKPROOF_STORM_SECRETS``. Each `StormUser` runs `max_in_flight` senders that pace
themselves on the spec's load shape (an open model: intended send times, never waiting
for answers while a sender is free), draws groups from a `StormPlan` (duplicates,
concurrent bursts, reordering, redelivery waves) over the process's `StoryBook` (world
stories rendered once, replayed with fresh ids: each user its own copy numbers), signs every attempt
with the profile at its send time, retries failed attempts on the profile's schedule
(scaled), and records each attempt like the dispatcher does (the records are built
into history attempts when the storm ends, off the sending path).

When the storm's duration is over the master stops the workers; each waits for its
in-flight requests (bounded by the sender timeout), sends its attempts and events to
the master (custom messages), and the master settles the receiver, runs the checks,
writes the reports (`loadtests.verdict.finish_storm`) and exits 0 (every check valid)
or 1 (findings, unknowns, or missing records).

The pieces live in modules of their own: `storm_state` (what the process knows),
`storm_user` (the user), `storm_worker` (a worker's flush) and `storm_master` (the
master's control and progress file); this file is the entry Locust loads: the custom
argument, the event listeners, and the user class Locust picks up from it.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import gevent
import gevent.event
import gevent.pool
from locust import events
from locust.env import Environment
from locust.runners import MasterRunner, WorkerRunner

from hookproof.loadtests.collect import DONE_MESSAGE, RECORDS_MESSAGE
from hookproof.loadtests.spec import SPEC_ENV, StormSpec
from hookproof.loadtests.storm_master import control, progress_loop
from hookproof.loadtests.storm_state import STATE
from hookproof.loadtests.storm_user import StormUser
from hookproof.loadtests.storm_worker import flush

__all__ = ["StormUser"]


# ---- events ------------------------------------------------------------------------------

@events.init_command_line_parser.add_listener
def _add_arguments(parser: Any) -> None:
    parser.add_argument("--hookproof-spec", type=str, default="", include_in_web_ui=False,
                        help="the storm spec as JSON (set by the master from $HOOKPROOF_STORM_SPEC)")


@events.init.add_listener
def _on_init(environment: Environment, **_: Any) -> None:
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        return
    path = os.environ.get(SPEC_ENV)
    if not path:
        raise SystemExit(f"hookproof storm: {SPEC_ENV} is not set (the path of the storm spec JSON)")
    text = Path(path).read_text(encoding="utf-8")
    StormSpec.from_json(text)  # fail early on a bad spec
    if environment.parsed_options is not None:
        environment.parsed_options.hookproof_spec = text
    if runner is not None:
        runner.register_message(RECORDS_MESSAGE, _on_records)
        runner.register_message(DONE_MESSAGE, _on_done)
    # `hookproof storm` sends SIGUSR1 when it is interrupted: stop sending, gather, check
    # and write a report marked partial (SIGTERM would end Locust without one).
    gevent.signal_handler(signal.SIGUSR1, STATE.stop_early.set)


def _on_records(environment: Environment, msg: Any, **_: Any) -> None:
    STATE.collector.add(str(msg.node_id), msg.data or {})


def _on_done(environment: Environment, msg: Any, **_: Any) -> None:
    STATE.collector.done(str(msg.node_id), msg.data or {})


@events.test_start.add_listener
def _on_test_start(environment: Environment, **_: Any) -> None:
    options = environment.parsed_options
    text = getattr(options, "hookproof_spec", "") if options is not None else ""
    spec = StormSpec.from_json(text)
    runner = environment.runner
    STATE.setup(spec, sender=not isinstance(runner, MasterRunner))
    if not isinstance(runner, WorkerRunner):
        gevent.spawn(control, environment)
        if spec.progress_path:
            gevent.spawn(progress_loop, environment)


@events.test_stop.add_listener
def _on_test_stop(environment: Environment, **_: Any) -> None:
    if isinstance(environment.runner, MasterRunner) or STATE.flushed or STATE.spec is None:
        return
    STATE.flushed = True
    flush(environment)


@events.quitting.add_listener
def _on_quitting(environment: Environment, **_: Any) -> None:
    if isinstance(environment.runner, WorkerRunner):
        environment.process_exit_code = 0 if STATE.flushed and STATE.error is None else 1
    else:
        environment.process_exit_code = STATE.exit_code if STATE.exit_code is not None else 1
