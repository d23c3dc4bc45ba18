"""A storm's master: stop the storm after its duration, gather, settle, check and report.

Also writes the progress file `hookproof storm` reads. Imported only in Locust's processes.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from pathlib import Path

import gevent
import gevent.event
import gevent.pool
from locust.env import Environment
from locust.runners import MasterRunner

from hookproof.loadtests.storm_state import STATE, log

#: Seconds between two progress file writes on the master.
PROGRESS_INTERVAL_S = 0.5


def control(environment: Environment) -> None:
    """Stop the storm after its duration, gather the records, settle, check and report."""
    from hookproof.loadtests.verdict import finish_storm

    spec = STATE.spec
    assert spec is not None
    runner = environment.runner
    assert runner is not None
    try:
        STATE.phase = "storm"
        early = STATE.stop_early.wait(timeout=max(0.0, spec.duration_s - STATE.elapsed()))
        stopped_at = time.time()
        STATE.phase = "stopping"
        nodes = ([c.id for c in runner.clients.all] if isinstance(runner, MasterRunner) else ["local"])
        runner.stop()
        STATE.phase = "collecting"
        deadline = time.monotonic() + spec.collect_timeout_s
        while not STATE.collector.finished(nodes) and time.monotonic() < deadline:
            gevent.sleep(0.1)
        problems = STATE.collector.problems(nodes)
        if early:
            problems.insert(0, f"interrupted after {STATE.elapsed():.0f} s of {spec.duration_s:.0f} s")
        reason = "; ".join(problems) if problems else None
        if reason:
            log.error("incomplete records: %s", reason)

        def phase(name: str) -> None:
            STATE.phase = name

        outcome = finish_storm(spec, STATE.collector.events(), STATE.collector.attempts(),
                               started_at=STATE.started_at, stopped_at=stopped_at, partial_reason=reason,
                               on_phase=phase)
        STATE.exit_code = outcome.exit_code
        STATE.phase = "done"
    except Exception:  # the master must still exit, with a readable reason
        log.error("the storm's end failed:\n%s", traceback.format_exc())
        STATE.exit_code = 1
        STATE.phase = "failed"
    finally:
        write_progress(environment)
        runner.quit()


def progress_loop(environment: Environment) -> None:
    while STATE.phase not in ("done", "failed"):
        write_progress(environment)
        gevent.sleep(PROGRESS_INTERVAL_S)


def write_progress(environment: Environment) -> None:
    """Rewrite the progress file atomically (phase, elapsed seconds, requests, rate)."""
    spec = STATE.spec
    if spec is None or not spec.progress_path:
        return
    runner = environment.runner
    total = runner.stats.total if runner is not None else None
    workers = len(runner.clients.all) if isinstance(runner, MasterRunner) else 1
    data = {
        "phase": STATE.phase, "elapsed_s": round(STATE.elapsed(), 2), "duration_s": spec.duration_s,
        "requests": total.num_requests if total else 0, "failures": total.num_failures if total else 0,
        "rps": round(total.current_rps, 1) if total else 0.0, "workers": workers, "exit_code": STATE.exit_code,
    }
    path = Path(spec.progress_path)
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("cannot write the progress file %s: %s", path, exc)
