"""A storm worker's side: stream its records to the master while it sends, and close.

Every `STREAM_INTERVAL_S` (or as soon as `CHUNK` attempts are waiting) a worker builds
the history rows of what it sent since the last chunk (`records.attempt_row`: graded by
the attempt core, with no `Attempt` or dict per attempt) and sends them to the master
with the events they name (custom message ``hookproof_records``); then it forgets
them, keeping only the events of attempts still in flight: a worker's memory stays
flat however long the storm runs. When the storm stops it drains: its senders draw no
new group but send every retry owed, on its schedule, until each delivery is acknowledged
or its attempts are used up, bounded by `spec.StormSpec.drain_s` (a chunk every
`STREAM_INTERVAL_S` meanwhile, with how many retries and attempts are still owed); then it
sends the last chunk and its totals (``hookproof_done``, with the deliveries the drain's end
cut, `loadtests.cut`). Before sending anything it reports its hookproof version and
whether it reaches the target (``hookproof_ready``, `ready_report`), with its storm protocol
(`spec.storm_protocol`), its worker index, its host name and the address it reaches the
master from; a worker of another version or build says so in one line without reading the
storm (`protocol_problem`, `refuse_ready`). Its users send only once the master, having heard
every worker ready, says go (``hookproof_go``).

A worker stopped before the storm ends (SIGTERM or Ctrl-C on its machine, or its
``hookproof storm-worker`` gone: `flush_on_quit`) does not drain: its senders are ended at
once, their attempts in flight recorded as unfinished and the deliveries they owed as cut,
and its last chunk and closing message go to the master before it exits, so the run's
records stay whole.

Imported only in Locust's processes.
"""

from __future__ import annotations

import math
import os
import socket
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import gevent
from locust.env import Environment

from hookproof.loadtests.collect import DONE_MESSAGE, READY_MESSAGE, RECORDS_MESSAGE
from hookproof.loadtests.records import event_to_wire, row_of
from hookproof.loadtests.spec import HANDOVER_ENV, storm_protocol
from hookproof.loadtests.storm_state import STATE, log

#: Attempts per custom message at most.
CHUNK = 2000
#: Seconds between two chunks while the storm runs.
STREAM_INTERVAL_S = 1.0
#: Seconds of the sleep whose overshoot measures the worker's loop lag.
LAG_PROBE_S = 0.05
#: Seconds a worker gives its senders to end once killed at the drain's end.
KILL_GRACE_S = 2.0
#: Seconds a worker gives a TCP connection to the target when it checks it reaches it.
REACH_TIMEOUT_S = 3.0
#: Seconds a worker stopped by a signal waits for its last chunk and closing message to be sent.
QUIT_FLUSH_S = KILL_GRACE_S + 5.0


def local_address(host: str, port: int) -> str:
    """The address this machine reaches `host`:`port` from (the source address the kernel picks;
    no packet is sent), or "" when it cannot tell. Never raises."""
    try:
        family, kind, proto, _, where = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.connect(where)
            return str(probe.getsockname()[0])
    except (OSError, IndexError):
        return ""


def reachable(url: str, timeout_s: float = REACH_TIMEOUT_S) -> tuple[bool, str]:
    """(True, "") when a TCP connection to `url`'s host and port opens within
    `timeout_s` seconds, else (False, why). Never raises."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return False, f"the target URL has a bad port: {url}"
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True, ""
    except OSError as exc:
        return False, f"{host}:{port}: {exc.strerror or type(exc).__name__}"


def protocol_problem(master_version: str, master_protocol: str) -> str | None:
    """Why this worker cannot take part in the master's storm, in one line (another hookproof
    version, or another build of it: another storm protocol, `spec.storm_protocol`), or None."""
    from hookproof.scenarios.report_views import VERSION

    if master_version != VERSION:
        return (f"this worker runs hookproof {VERSION}, the master {master_version or '(unknown)'}: "
                "install the same version on both")
    if master_protocol != storm_protocol():
        return (f"this worker is another build of hookproof {VERSION} than the master's (storm protocol "
                f"{storm_protocol()}, the master's {master_protocol or '(none: an older build)'}): install the same "
                "build on both")
    return None


def refuse_ready(environment: Environment, problem: str) -> None:
    """Refuse the storm before sending anything: log `problem` (one line), note it (the worker
    exits 2, ``STATE.build_error``) and send it to the master as this worker's ``hookproof_ready``
    (``refused``), so the master refuses the storm at once, before any worker sends."""
    from hookproof.scenarios.report_views import VERSION

    runner = environment.runner
    assert runner is not None
    STATE.error, STATE.build_error = problem, True
    log.error("%s", problem)
    runner.send_message(READY_MESSAGE, {"version": VERSION, "protocol": storm_protocol(), "reachable": False,
                                        "detail": problem, "refused": problem,
                                        "index": int(getattr(runner, "worker_index", -1))})


def ready_report(master_version: str, own_version: str) -> dict[str, Any]:
    """The ``hookproof_ready`` payload: this worker's version and storm protocol, and whether
    it reaches the target (checked only when the versions match). Sets ``STATE.error`` (the
    worker sends nothing) when either fails: one line, naming both versions or the target."""
    spec = STATE.spec
    assert spec is not None
    if master_version != own_version:
        STATE.error = (f"this worker runs hookproof {own_version}, the master {master_version or '(unknown)'}: "
                       "install the same version on both")
        return {"version": own_version, "protocol": storm_protocol(), "reachable": False, "detail": STATE.error}
    ok, why = reachable(spec.target_url)
    if not ok:
        STATE.error = f"this worker cannot reach the target ({why})"
    return {"version": own_version, "protocol": storm_protocol(), "reachable": ok, "detail": why}


def report_ready(environment: Environment, master_version: str, own_version: str) -> None:
    """Send `ready_report` to the master, with this worker's index (``index``), host name
    (``host``) and the address it reaches the master from (``address``)."""
    runner = environment.runner
    assert runner is not None
    data = ready_report(master_version, own_version)
    options = environment.parsed_options
    master_host = str(getattr(options, "master_host", "") or "")
    master_port = int(getattr(options, "master_port", 0) or 0)
    data.update(index=int(getattr(runner, "worker_index", -1)), host=socket.gethostname(),
                address=local_address(master_host, master_port) if master_host else "")
    if STATE.error:
        log.error("%s", STATE.error)
    # the storm's clock starts now (again when the master's go comes, `locustfile._on_go`: its
    # users send only then), before the master hears of it: the master starts its own on the
    # last worker's report
    STATE.t0, STATE.started_at = time.monotonic(), time.time()
    runner.send_message(READY_MESSAGE, data)


def stream(environment: Environment) -> None:
    """Send a chunk every `STREAM_INTERVAL_S` seconds (or every `CHUNK` attempts) until the storm stops."""
    last = time.monotonic()
    while not STATE.stopped.is_set() and not STATE.flushed:
        if len(STATE.sent) >= CHUNK or (STATE.sent and time.monotonic() - last >= STREAM_INTERVAL_S):
            ship(environment)
            last = time.monotonic()
        gevent.sleep(0.1)


def probe_lag() -> None:
    """Note how late the loop wakes a greenlet sleeping `LAG_PROBE_S` (`SenderLoad.lagged`)
    until the storm stops: every sender's reads waited as long."""
    try:
        while not STATE.stopped.is_set() and not STATE.flushed:
            due = time.perf_counter() + LAG_PROBE_S
            STATE.sender.probing(due)
            gevent.sleep(LAG_PROBE_S)
            STATE.sender.lagged(due, time.perf_counter())
    finally:
        STATE.sender.probing(math.inf)  # no probe: no lag is noted any more


def ship(environment: Environment, *, unfinished: bool = False, owed: int | None = None) -> int:
    """Send what was sent since the last chunk (and, with `unfinished`, the attempts
    still in flight, as unknown) to the master; returns the attempts sent. `owed`: while
    draining, the retries owed and attempts in flight (the chunk's ``owed``, sent even
    with no record)."""
    runner = environment.runner
    assert runner is not None
    sent, STATE.sent = STATE.sent, []
    events = STATE.events
    # keep only the events of attempts in flight (a later attempt re-adds its own)
    STATE.events = {send.event.id: events.get(send.event.id) or event_to_wire(send.event)
                    for send, *_ in STATE.pending.values()}
    rows = [STATE.row(s, events) for s in sent]
    names = {s[0] for s in sent}
    if unfinished:
        for a in STATE.unfinished():
            rows.append(row_of(a))
        names |= set(STATE.events)
        events = {**events, **STATE.events}
    wire_events = [events[n] for n in names if n in events]
    for i in range(0, max(1, len(rows)), CHUNK):
        part = rows[i:i + CHUNK]
        if part or i == 0 and (wire_events or owed is not None):
            data: dict[str, Any] = {"rows": part, "events": wire_events if i == 0 else []}
            if owed is not None:
                data["owed"] = owed
            runner.send_message(RECORDS_MESSAGE, data)
            STATE.chunks += 1
    STATE.shipped += len(rows)
    return len(rows)


def flush(environment: Environment) -> None:
    """Drain, send the last chunk, then the totals (with ``stopped``: `STATE.quit_note`).

    The senders draw no new group; the retries they owe go out on their schedule until
    every delivery is acknowledged or has used its attempts, at most `StormSpec.drain_s`
    seconds (a chunk every `STREAM_INTERVAL_S` meanwhile, with what is still owed). Then
    the senders left are killed: their attempts in flight are recorded as unfinished, and
    those deliveries and the ones with a retry still owed are sent as cut
    (``hookproof_done``'s ``cut``: `loadtests.cut.CutDelivery.to_wire` lists).
    With ``STATE.hurry`` set (the worker was stopped: `flush_on_quit`), the drain ends at once,
    or where it is."""
    spec = STATE.spec
    assert spec is not None
    STATE.stopped.set()
    STATE.drain_until = deadline = time.monotonic() + (0.0 if STATE.hurry.is_set() else spec.drain_s())
    for pool in STATE.pools:
        while not pool.join(timeout=max(0.0, min(STREAM_INTERVAL_S, deadline - time.monotonic()))):
            if time.monotonic() >= deadline or STATE.hurry.is_set():
                break
            ship(environment, owed=STATE.still_owed())
    for pool in STATE.pools:
        pool.kill(block=True, timeout=KILL_GRACE_S)
    ship(environment, unfinished=True)
    runner = environment.runner
    assert runner is not None
    index = int(getattr(runner, "worker_index", -1))
    runner.send_message(DONE_MESSAGE, {"attempts": STATE.shipped, "error": STATE.error,
                                       "index": index if index >= 0 else -1, "sender": STATE.sender.report(),
                                       "cut": [d.to_wire() for d in STATE.cut()], "stopped": STATE.quit_note})
    STATE.closed = True
    handed = (f"handed over to the master: {STATE.shipped} attempt(s) in {STATE.chunks} chunk(s), "
              f"{len(STATE.cut())} delivery(ies) cut" + (f" ({STATE.quit_note})" if STATE.quit_note else ""))
    log.info("%s", handed)
    where = os.environ.get(HANDOVER_ENV)
    if where:  # for `hookproof storm-worker`, which prints it last
        try:
            Path(where).write_text(handed, encoding="utf-8")
        except OSError:
            pass


def flush_on_quit(environment: Environment) -> None:
    """A worker's Locust is quitting (a signal, or its master's end): unless it already
    closed, end its storm now (`flush` with ``STATE.hurry``: no drain, every owed retry cut),
    then wait (at most `QUIT_FLUSH_S`) until its closing message is sent. Registered to run
    before Locust tells the master the worker quits. Never raises."""
    if STATE.spec is None or STATE.closed:
        return
    if not STATE.stopped.is_set():
        STATE.quit_note = f"stopped {STATE.elapsed():.0f} s into the storm, before its end (no drain)"
    STATE.hurry.set()
    if not STATE.flushed:
        STATE.flushed = True
        gevent.spawn(flush, environment)
    deadline = time.monotonic() + QUIT_FLUSH_S
    while not STATE.closed and time.monotonic() < deadline:
        gevent.sleep(0.05)
    if not STATE.closed:
        log.error("could not hand the last records over to the master within %.0f s", QUIT_FLUSH_S)
