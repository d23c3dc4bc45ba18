"""A storm worker's end: wait for its in-flight requests, hand its records to the master.

Imported only in Locust's processes.
"""

from __future__ import annotations

import time

from locust.env import Environment

from hookproof.loadtests.collect import DONE_MESSAGE, RECORDS_MESSAGE
from hookproof.loadtests.records import attempt_to_wire, chunked, event_from_wire
from hookproof.loadtests.storm_state import STATE

#: Attempts per custom message.
CHUNK = 2000
#: Seconds added to the sender timeout when a worker waits for its in-flight requests.
DRAIN_GRACE_S = 2.0


def flush(environment: Environment) -> None:
    """Wait for in-flight deliveries (bounded), then send attempts and events to the master."""
    spec = STATE.spec
    assert spec is not None
    STATE.stopped.set()
    deadline = time.monotonic() + spec.sender_timeout_s + DRAIN_GRACE_S
    for pool in STATE.pools:
        pool.join(timeout=max(0.0, deadline - time.monotonic()))
    for pool in STATE.pools:
        pool.kill(block=True, timeout=DRAIN_GRACE_S)
    slim = {world_id: event_from_wire(wire) for world_id, wire in STATE.events.items()}
    attempts = [STATE.record(sent, slim) for sent in STATE.sent] + STATE.unfinished()
    STATE.sent = []
    STATE.attempts = attempts
    runner = environment.runner
    assert runner is not None
    wire_events = list(STATE.events.values())
    first = True
    for part in chunked([attempt_to_wire(a) for a in attempts], CHUNK):
        runner.send_message(RECORDS_MESSAGE, {"attempts": list(part), "events": wire_events if first else []})
        first = False
    runner.send_message(DONE_MESSAGE, {"attempts": len(attempts), "events": len(wire_events), "error": STATE.error})
