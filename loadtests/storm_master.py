"""A storm's master: check its workers, stop the storm after its duration, gather, settle,
check and report.

Before the storm, every worker reports its hookproof version and storm protocol and whether
it reaches the target; the master refuses the storm (exit code 2, the reason in the progress
file) if one runs another version or build, cannot reach the target or does not report, and
otherwise tells them to send (``hookproof_go``): no worker sends before every one is known
good. A worker that joins once the storm began is refused (`locustfile`).

Also writes the progress file `hookproof storm` reads. Imported only in Locust's processes.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from pathlib import Path
from typing import Any

import gevent
import gevent.event
import gevent.pool
from locust.env import Environment
from locust.runners import MasterRunner

from hookproof.loadtests.collect import GO_MESSAGE, SILENT_AFTER_S, silent_workers
from hookproof.loadtests.spec import storm_protocol
from hookproof.loadtests.storm_state import STATE, log
from hookproof.scenarios.report_views import VERSION

#: Seconds between two progress file writes on the master.
PROGRESS_INTERVAL_S = 0.5
#: Seconds the master waits for every worker's version and reachability report.
READY_TIMEOUT_S = 15.0
#: Seconds between two looks, during the storm, at which workers Locust still hears.
SILENCE_POLL_S = 0.5


def _heard(runner: Any) -> set[str]:
    """The worker nodes Locust hears from: its clients not marked missing."""
    from locust.runners import STATE_MISSING

    return {str(c.id) for c in runner.clients.all if c.state != STATE_MISSING}


def control(environment: Environment) -> None:
    """Stop the storm after its duration, let the workers drain (`storm_worker.flush`: the
    retries they owe), gather the records, settle, check and report."""
    from hookproof.loadtests.verdict import finish_spooled

    spec = STATE.spec
    assert spec is not None
    runner = environment.runner
    assert runner is not None
    try:
        if isinstance(runner, MasterRunner):
            STATE.phase = "checking workers"
            refusal = await_ready(runner, [c.id for c in runner.clients.all], READY_TIMEOUT_S)
            if refusal is not None:
                log.error("%s", refusal)
                STATE.refusal = refusal
                STATE.exit_code = 2
                STATE.phase = "refused"
                runner.stop()
                return
            started = [c.id for c in runner.clients.all]
            # every worker is ready: they send from now on (`locustfile._on_go`), and the storm's clock starts
            runner.send_message(GO_MESSAGE, {})
            STATE.t0, STATE.started_at = time.monotonic(), time.time()
        else:
            started = ["local"]
        STATE.phase = "storm"
        # a worker's silence counts from when Locust stopped hearing it, during the storm too: one
        # killed mid-storm is given up on `SILENT_AFTER_S` after it went quiet, not after the storm's end
        since: dict[str, float] = {}
        early = False
        while not early and STATE.elapsed() < spec.duration_s:
            left_s = max(0.0, spec.duration_s - STATE.elapsed())
            early = bool(STATE.stop_early.wait(timeout=min(SILENCE_POLL_S, left_s)))
            if isinstance(runner, MasterRunner):
                silent_workers(started, _heard(runner), time.monotonic(), since)
        stopped_at = time.time()
        # the load ends: the workers drain (every retry owed, `storm_worker.flush`), then close
        STATE.phase = "draining"
        deadline = time.monotonic() + spec.drain_s() + spec.collect_timeout_s
        # every worker that ran: those that started the storm and any that sent records, whether
        # Locust still counts it or not (a worker that quit mid-storm is a worker of this storm still)
        nodes = (list(dict.fromkeys([*started, *STATE.collector.started()]))
                 if isinstance(runner, MasterRunner) else ["local"])
        runner.stop()
        while not STATE.collector.finished(nodes) and time.monotonic() < deadline:
            if isinstance(runner, MasterRunner):
                pending = [n for n in nodes if not STATE.collector.finished([n])]
                silent = silent_workers(pending, _heard(runner), time.monotonic(), since)
                if silent and len(silent) == len(pending):  # the rest will not come: stop waiting now
                    log.warning("stopped waiting for %s: no heartbeat for %.0f s (a worker killed or cut off)",
                                ", ".join(f"worker {n}" for n in silent), SILENT_AFTER_S)
                    break
            gevent.sleep(0.1)
        STATE.phase = "collecting"
        cut = STATE.collector.cut()
        problems = STATE.collector.problems(nodes)
        unrecorded = STATE.collector.unrecorded(nodes) if isinstance(runner, MasterRunner) else []
        for totals in STATE.collector.totals():
            log.info("%s", totals.line())
        if early:
            problems.insert(0, f"interrupted after {STATE.elapsed():.0f} s of {spec.duration_s:.0f} s")
        reason = "; ".join(problems) if problems else None
        if reason:
            log.error("incomplete records: %s", reason)

        def phase(name: str) -> None:
            STATE.phase = name
            write_progress(environment)  # now: what follows holds the loop (SQLite, the checks)

        spool = STATE.collector.spool
        assert spool is not None
        outcome = finish_spooled(spec, spool, started_at=STATE.started_at, stopped_at=stopped_at,
                                 partial_reason=reason, on_phase=phase, workers=STATE.collector.totals(),
                                 sender=STATE.collector.sender(), cut=cut, drain_s=spec.drain_s(),
                                 unrecorded=unrecorded)
        STATE.exit_code = outcome.exit_code
        STATE.phase = "done"
    except Exception as exc:  # the master must still exit, with a readable reason
        log.error("the storm's end failed:\n%s", traceback.format_exc())
        STATE.failure = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
        STATE.exit_code = 1
        STATE.phase = "failed"
    finally:
        write_progress(environment)
        runner.quit()


def await_ready(runner: MasterRunner, nodes: list[str], timeout_s: float) -> str | None:
    """Wait (at most `timeout_s` seconds) for every worker's ``hookproof_ready`` report;
    the one-line reason to refuse the storm (a worker on another hookproof version, one
    that cannot reach the target, one that never reported), or None."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        reports = STATE.collector.readiness(nodes)
        if all(r is not None for r in reports.values()):
            break
        gevent.sleep(0.1)
    return STATE.collector.refusal(nodes, VERSION, STATE.spec.target_url if STATE.spec else "", timeout_s,
                                   protocol=storm_protocol())


def progress_loop(environment: Environment) -> None:
    while STATE.phase not in ("done", "failed", "refused"):
        write_progress(environment)
        gevent.sleep(PROGRESS_INTERVAL_S)


def rate_now(total: Any, elapsed_s: float) -> float:
    """The attempts per second the progress line shows: Locust's current rate (its last
    seconds), or, before Locust has one (its window is still empty in a storm's first
    seconds: a new user read "194 sent, 0.0/s"), the mean since the start."""
    if total is None:
        return 0.0
    current = float(total.current_rps)
    if current == 0.0 and total.num_requests and elapsed_s > 0:
        current = total.num_requests / elapsed_s
    return round(current, 1)


def unanswered(stats: Any) -> int:
    """How many of the attempts Locust's `stats` count as failures got no answer at all (a
    timeout, a cut connection: `storm_user.NO_ANSWER`), which the progress line names apart from
    the answered non-2xx ones (a storm of late 200s read "385 non-2xx")."""
    if stats is None:
        return 0
    from locust.stats import StatsError

    from hookproof.loadtests.storm_user import NO_ANSWER

    return sum(e.occurrences for e in stats.errors.values() if StatsError.parse_error(e.error).find(NO_ANSWER) >= 0)


def write_progress(environment: Environment) -> None:
    """Rewrite the progress file atomically (phase, elapsed seconds, requests, rate, the
    answered non-2xx (``failures``) and the unanswered attempts apart, and ``owed``: the retries
    and attempts the draining workers still owe)."""
    spec = STATE.spec
    if spec is None or not spec.progress_path:
        return
    runner = environment.runner
    total = runner.stats.total if runner is not None else None
    workers = len(runner.clients.all) if isinstance(runner, MasterRunner) else 1
    missed = unanswered(runner.stats if runner is not None else None)
    data = {
        "phase": STATE.phase, "elapsed_s": round(STATE.elapsed(), 2), "duration_s": spec.duration_s,
        "requests": total.num_requests if total else 0,
        "failures": max(0, total.num_failures - missed) if total else 0, "unanswered": missed,
        "rps": rate_now(total, STATE.elapsed()), "workers": workers, "exit_code": STATE.exit_code,
        "owed": STATE.collector.owed(),
        "refusal": STATE.refusal, "failure": STATE.failure,
    }
    path = Path(spec.progress_path)
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("cannot write the progress file %s: %s", path, exc)
