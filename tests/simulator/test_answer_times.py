"""How long the provider server took to answer: its own handling per request, a probe's round
trip, and the storm's note built from both (a fetching receiver's slow answers were blamed on
the receiver while the provider API was the one waiting)."""

from __future__ import annotations

import threading
import time

import httpx

from hookproof.simulator.server import ServerState, run_server
from hookproof.simulator.server.answer_times import (
    BUCKETS,
    AnswerTimes,
    RoundTripProbe,
    answer_times_note,
    surface_of,
)
from hookproof.simulator.server.state import DEFAULT_API_KEY
from hookproof.simulator.world import World

AUTH = {"Authorization": f"Bearer {DEFAULT_API_KEY}"}


def test_percentiles_are_within_five_percent_and_memory_is_bounded() -> None:
    times = AnswerTimes()
    for ms in range(1, 1001):  # 1 ms .. 1 s, one each
        times.record("api", ms / 1000)
    spread = times.spread("api")
    assert spread is not None and spread.count == 1000
    assert 0.500 <= spread.p50_s <= 0.500 * 1.05 and 0.950 <= spread.p95_s <= 0.950 * 1.05
    assert spread.max_s == 1.0
    times.record("api", 1e6)  # beyond the range: the last bucket, the maximum kept exactly
    times.record("api", -1.0)
    assert times.spread("api").count == 1002 and times.spread("api").max_s == 1e6  # type: ignore[union-attr]
    assert len(times._buckets["api"]) == BUCKETS
    assert times.spread("sink") is None


def test_surfaces() -> None:
    assert surface_of("GET", "/v1/subscriptions/sub_1") == "api"
    assert surface_of("GET", "/transactions/txn_1") == "api"
    assert surface_of("POST", "/sink/effects") == "sink"
    assert surface_of("GET", "/sink/effects") is None  # the observer's read, not the receiver's call
    assert surface_of("GET", "/_hookproof/probe") is None


def test_the_server_times_the_api_and_the_receiver_s_sink_writes_only() -> None:
    state = ServerState([World(3)])
    with run_server(state) as api:
        with httpx.Client(base_url=api.url, timeout=10.0) as client:
            for _ in range(3):
                assert client.get("/v1/customers/cus_missing", headers=AUTH).status_code == 404
            assert client.post("/sink/effects", json={"business_key": "license:pi_1"}).status_code == 200
            assert client.get("/sink/effects").status_code == 200
            assert client.get("/_hookproof/probe").status_code == 204
    api_spread, sink_spread = state.answer_times.spread("api"), state.answer_times.spread("sink")
    assert api_spread is not None and api_spread.count == 3
    assert sink_spread is not None and sink_spread.count == 1
    assert state.answer_times.spread("probe") is None
    note = answer_times_note(state.answer_times)
    assert note is not None and note.startswith("provider API: 3 requests answered, handled in p50 ")
    assert "; effect sink: 1 request answered, " in note and "probe" not in note and "slow" not in note


def test_a_probe_sees_the_wait_the_handling_time_does_not_and_the_note_says_slow() -> None:
    """A handler blocking the server's event loop (here: waiting for the worlds' lock, which
    the test holds) makes every other request wait; the probe's round trips show it."""
    state = ServerState([World(3)])
    with run_server(state) as api:
        with RoundTripProbe(api.url, state.answer_times, interval_s=0.05):
            time.sleep(0.3)  # quick round trips first
            state.lock.acquire()
            blocked = threading.Thread(target=lambda: httpx.get(f"{api.url}/v1/customers/cus_x", headers=AUTH,
                                                                 timeout=10.0))
            blocked.start()
            time.sleep(1.5)
            state.lock.release()
            blocked.join(10)
            time.sleep(0.3)
    probe = state.answer_times.spread("probe")
    assert probe is not None and probe.count >= 5
    assert probe.max_s >= 1.0  # one round trip waited for the blocked loop
    assert answer_times_note(state.answer_times) is not None


def test_the_note_says_slow_when_the_probe_s_p95_is_slow() -> None:
    times = AnswerTimes()
    times.record("api", 0.002)
    for _ in range(10):
        times.record("probe", 2.0)
    note = answer_times_note(times)
    assert note == ("provider API: 1 request answered, handled in p50 2.0 ms, p95 2.0 ms, max 2.0 ms; a probe's "
                    "round trip to it: p50 2.0 s, p95 2.0 s, max 2.0 s (slow: requests waited "
                    "for hookproof's provider server, which shares this machine's CPUs; a receiver calling it while "
                    "it handles a delivery waits too, and its ack latencies and timeouts include that wait)")
    quiet = AnswerTimes()
    quiet.record("probe", 0.001)
    assert answer_times_note(quiet) is None  # the receiver never called it: nothing to say
