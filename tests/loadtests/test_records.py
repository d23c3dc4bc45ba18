"""Storm attempt records: completion semantics, wire format, and the master's collector and spool."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from hookproof.loadtests.collect import Collector, WorkerTotals
from hookproof.loadtests.plan import Send
from hookproof.loadtests.records import (
    COLUMNS,
    attempt_from_wire,
    attempt_row,
    attempt_to_wire,
    chunked,
    event_from_wire,
    event_to_wire,
    make_attempt,
    outcome_of,
    row_of,
)
from hookproof.loadtests.spool import Spool
from hookproof.simulator.delivery.attempt_core import Broke, Observed
from hookproof.simulator.delivery.history import Completion, Outcome, load_history
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import get_profile

STRIPE = get_profile("stripe")
EVENT = Event(id="evt_1", type="invoice.paid", created=1, created_us=10**6, object_type="invoice", object_id="in_1",
              version=2, object={"id": "in_1"}, business_key="renewal:in_1", amount=1500, currency="usd", status="paid")


@pytest.mark.parametrize(("status", "kind", "outcome", "completion"), [
    (200, None, Outcome.ACKED, Completion.OK),
    (204, None, Outcome.ACKED, Completion.OK),
    (301, None, Outcome.REJECTED, Completion.FAIL),
    (400, None, Outcome.REJECTED, Completion.FAIL),
    (409, None, Outcome.REJECTED, Completion.FAIL),
    (500, None, Outcome.SERVER_ERROR, Completion.UNKNOWN),
    (503, None, Outcome.SERVER_ERROR, Completion.UNKNOWN),
    (None, "timeout", Outcome.TIMEOUT, Completion.UNKNOWN),
    (None, "unfinished", Outcome.TIMEOUT, Completion.UNKNOWN),
    (None, "broken", Outcome.CONNECTION_ERROR, Completion.UNKNOWN),
    (None, "refused", Outcome.CONNECTION_ERROR, Completion.FAIL),
    (None, "connect", Outcome.CONNECTION_ERROR, Completion.FAIL),
    (0, "timeout", Outcome.TIMEOUT, Completion.UNKNOWN),
])
def test_attempt_completion(status: int | None, kind: str | None, outcome: Outcome, completion: Completion) -> None:
    a = make_attempt(event=EVENT, event_id="evt_1", delivery_id="dlv_evt_1_1", attempt=1, tags=("burst=4",),
                     profile=STRIPE, sent_at=100.0, latency_ms=12.5, status=status, error_kind=kind)  # type: ignore[arg-type]
    assert (a.outcome, a.completion) == (outcome, completion)
    assert a.business_key == "renewal:in_1" and a.amount == 1500 and a.object_version == 2
    assert a.answered_at == pytest.approx(100.0125)
    assert a.scenario == "storm" and a.valid and a.faults == ("burst=4",)
    assert (a.error is None) == (status is not None and 200 <= status < 300 or status in (400, 409, 500, 503))


def test_an_attempt_needs_a_status_or_an_error() -> None:
    with pytest.raises(ValueError):
        outcome_of(None, None, STRIPE)


def test_wire_round_trip() -> None:
    a = make_attempt(event=EVENT, event_id="evt_1", delivery_id="dlv_evt_1_2", attempt=2, tags=("copies=wave-1",),
                     profile=STRIPE, sent_at=1.0, latency_ms=3.0, status=500, body=b"boom")
    assert attempt_from_wire(attempt_to_wire(a)) == a
    slim = event_from_wire(event_to_wire(EVENT))
    assert slim.object == {} and slim.business_key == EVENT.business_key and slim.status == "paid"
    assert slim.version == 2 and slim.amount == 1500 and not slim.stateful


def test_chunked() -> None:
    assert [list(c) for c in chunked([1, 2, 3, 4, 5], 2)] == [[1, 2], [3, 4], [5]]
    assert [list(c) for c in chunked([], 3)] == [[]]


def test_collector_spools_every_worker_and_names_what_is_missing(tmp_path: Path) -> None:
    a = make_attempt(event=EVENT, event_id="evt_1", delivery_id="dlv_evt_1_1", attempt=1, tags=(), profile=STRIPE,
                     sent_at=2.0, latency_ms=3.0, status=200)
    b = make_attempt(event=EVENT, event_id="evt_1", delivery_id="dlv_evt_1_1", attempt=2, tags=("dup",),
                     profile=STRIPE, sent_at=1.0, latency_ms=3.0, status=500)
    spool = Spool(tmp_path / "history.sqlite")
    c = Collector(spool)
    c.add("w1", {"attempts": [attempt_to_wire(a)], "events": [event_to_wire(EVENT)]})
    c.add("w1", {"attempts": [attempt_to_wire(b)], "events": [event_to_wire(EVENT)]})
    assert not c.finished(["w1", "w2"])
    c.done("w1", {"attempts": 2, "error": None, "index": 0})
    assert c.finished(["w1"]) and not c.finished(["w1", "w2"])
    assert c.problems(["w1", "w2"]) == ["worker w2 sent no closing message (its records may be missing)"]
    c.done("w2", {"attempts": 5, "error": "HOOKPROOF_STORM_SECRETS is not set", "index": 1})
    assert c.problems(["w1", "w2"]) == ["worker w2: HOOKPROOF_STORM_SECRETS is not set",
                                        "worker w2 reported 5 attempts, 0 arrived"]
    assert c.totals() == [WorkerTotals(0, 2, 2, 2, node="w1"), WorkerTotals(1, 0, 0, 0, node="w2")]
    c.add("w3", {"attempts": [{"event_id": "x"}]})
    assert any("bad attempt record" in p for p in c.problems([]))
    assert c.totals()[0] == WorkerTotals(-1, 0, 0, 1, node="w3", closed=False)
    spool.finalize()
    assert [e.id for e in spool.events()] == ["evt_1"]  # once, however often it was sent
    spool.close()
    history = load_history(tmp_path / "history.sqlite")
    # in send order, indexed as a local storm records them; read back whole
    assert [(x.index, x.attempt, x.faults, x.status) for x in history.attempts()] == [(0, 2, ("dup",), 500),
                                                                                       (1, 1, (), 200)]
    assert history.attempts()[1] == replace(a, index=1)
    history.close()


def test_send_is_a_plain_value() -> None:
    assert Send(EVENT, "dlv_evt_1_1", 1) == Send(EVENT, "dlv_evt_1_1", 1, ())


def test_the_master_refuses_a_worker_on_another_version_or_one_that_cannot_reach_the_target() -> None:
    url = "http://127.0.0.1:8000/webhooks"
    c = Collector()
    assert c.refusal(["w1"], "1.2.0", url, 15.0) == ("worker w1 did not report ready within 15 s "
                                                      "(is it this hookproof version and build?)")
    c.ready("w1", {"version": "1.2.0", "reachable": True, "detail": ""})
    assert c.refusal(["w1"], "1.2.0", url, 15.0) is None
    c.ready("w2", {"version": "1.1.0", "reachable": False, "detail": "versions differ"})
    assert c.refusal(["w1", "w2"], "1.2.0", url, 15.0) == ("worker w2 runs hookproof 1.1.0, the master 1.2.0: "
                                                            "install the same version on every machine")
    c.ready("w2", {"version": "1.2.0", "reachable": False, "detail": "127.0.0.1:8000: Connection refused"})
    assert c.refusal(["w1", "w2"], "1.2.0", url, 15.0) == (
        "worker w2 cannot reach the target http://127.0.0.1:8000/webhooks (127.0.0.1:8000: Connection refused); "
        "a loopback target needs workers on the receiver's machine")
    # another build of the same version: its storm protocol differs, or an older one says none
    c.ready("w2", {"version": "1.2.0", "protocol": "1-abc", "reachable": True, "detail": "", "host": "vm-b",
                   "address": "10.0.0.4"})
    assert c.refusal(["w1", "w2"], "1.2.0", url, 15.0) is None  # no protocol asked: not compared
    assert c.refusal(["w2"], "1.2.0", url, 15.0, protocol="2-abc") == (
        "worker w2 (vm-b, 10.0.0.4) runs another build of hookproof 1.2.0 (storm protocol 1-abc, the master's 2-abc): "
        "install the same build on every machine")
    assert c.refusal(["w1"], "1.2.0", url, 15.0, protocol="2-abc") == (
        "worker w1 runs another build of hookproof 1.2.0 (storm protocol (none: an older build), the master's 2-abc): "
        "install the same build on every machine")
    # a worker that could not read the storm says why itself
    c.ready("w3", {"version": "1.2.0", "protocol": "2-abc", "reachable": False, "detail": "x", "refused": "no spec"})
    assert c.refusal(["w3"], "1.2.0", url, 15.0, protocol="2-abc") == "worker w3 refused the storm: no spec"


@pytest.mark.parametrize("seen", [
    Observed(True, 200, b"ok", answer_start=b"HTTP/1.1 200 OK\r\n", timeout_s=20.0, read_cap_bytes=65536),
    Observed(True, 500, b"boom \xff", answer_start=b"HTTP/1.1 500 Internal", timeout_s=20.0, read_cap_bytes=65536),
    Observed(True, 200, b"x" * 64, over_cap=True, answer_start=b"HTTP/1.1 200 OK\r\n", timeout_s=20.0,
             read_cap_bytes=64),
    Observed(True, broke=Broke.TIMEOUT, timeout_s=20.0, read_cap_bytes=65536),
    Observed(True, answer_start=b"HTTP/1.1 20", broke=Broke.RESET, timeout_s=20.0, read_cap_bytes=65536),
    Observed(False, broke=Broke.REFUSED, timeout_s=20.0, read_cap_bytes=65536),
    Observed(False, broke=Broke.CONNECT_FAILED, detail="No route to host", timeout_s=20.0, read_cap_bytes=65536),
])
def test_a_row_is_the_attempt_a_sender_records(seen: Observed) -> None:
    a = make_attempt(event=EVENT, event_id="evt_1", delivery_id="dlv_evt_1_2", attempt=2, tags=("burst=4",),
                     profile=STRIPE, sent_at=1000.5, latency_ms=12.3456, observed=seen)
    row = attempt_row(event=event_to_wire(EVENT), event_type="invoice.paid", event_id="evt_1",
                      delivery_id="dlv_evt_1_2", attempt=2, tags=("burst=4",), rule=STRIPE, sent_at=1000.5,
                      latency_ms=12.3456, observed=seen)
    assert row == row_of(a) == [attempt_to_wire(a)[name] for name in COLUMNS]


def test_rows_are_spooled_as_the_attempts_they_carry(tmp_path: Path) -> None:
    a = make_attempt(event=EVENT, event_id="evt_1", delivery_id="dlv_evt_1_1", attempt=1, tags=("copies=wave-1",),
                     profile=STRIPE, sent_at=2.0, latency_ms=3.0, status=500, body=b"boom")
    b = make_attempt(event=EVENT, event_id="evt_1", delivery_id="dlv_evt_1_1", attempt=2, tags=(), profile=STRIPE,
                     sent_at=3.0, latency_ms=3.0, status=200)
    spool = Spool(tmp_path / "history.sqlite")
    c = Collector(spool)
    c.add("w1", {"rows": [row_of(a), row_of(b)], "events": [event_to_wire(EVENT)]})
    bad = row_of(b)
    c.add("w1", {"rows": [bad[:-1], [*bad[:8], "burst=4", *bad[9:]], "not a row"]})
    c.done("w1", {"attempts": 2, "error": None, "index": 0})
    problems = c.problems(["w1"])
    assert len(problems) == 3 and all(p.startswith("worker w1: bad attempt record") for p in problems)
    assert c.totals() == [WorkerTotals(0, 2, 1, 2, node="w1")]
    spool.finalize()
    spool.close()
    history = load_history(tmp_path / "history.sqlite")
    assert history.attempts() == [replace(a, index=0), replace(b, index=1)]
    history.close()


@pytest.mark.parametrize("atoms", [
    (True, 200, b"ok", False, b"HTTP/1.1 200 OK\r\n", None, None, 20.0, 65536),
    (True, 500, b"boom \xff", False, b"HTTP/1.1 500 Internal", None, None, 20.0, 65536),
    (True, 200, b"x" * 64, True, b"HTTP/1.1 200 OK\r\n", None, None, 20.0, 64),
    (True, None, b"", False, b"", "timeout", None, 20.0, 65536),
    (True, None, b"", False, b"HTTP/1.1 20", "reset", None, 20.0, 65536),
    (False, None, b"", False, b"", "refused", None, 20.0, 65536),
    (False, None, b"", False, b"", "connect_failed", "No route to host", 20.0, 65536),
])
def test_a_storm_process_row_is_the_attempt_row_of_what_it_observed(atoms: tuple[object, ...]) -> None:
    """`StormProcess.row` (graded once per distinct observation, asked twice here) is
    `attempt_row`'s row of the same attempt."""
    from hookproof.loadtests.exchange import observed
    from hookproof.loadtests.spec import StormSpec
    from hookproof.loadtests.storm_state import StormProcess

    state = StormProcess()
    state.setup(StormSpec(target_url="http://127.0.0.1:9/webhooks", users=1, rate_per_s=1.0, duration_s=1.0,
                          out_dir="unused"), sender=False)
    sent = ("evt_1", "dlv_evt_1_2", ("burst=4",), 2, "evt_1", 1000.5, 12.3456, atoms)
    want = attempt_row(event=event_to_wire(EVENT), event_type="invoice.paid", event_id="evt_1",
                       delivery_id="dlv_evt_1_2", attempt=2, tags=("burst=4",), rule=STRIPE, sent_at=1000.5,
                       latency_ms=12.3456, observed=observed(atoms))  # type: ignore[arg-type]
    events = {"evt_1": event_to_wire(EVENT)}
    assert state.row(sent, events) == want  # type: ignore[arg-type]
    assert state.row(sent, events) == want  # type: ignore[arg-type]


def test_a_storm_sender_masks_its_secrets_in_the_answers_it_records() -> None:
    """A receiver's 500 quoting the secret and its decoded key bytes (a debug page): the row a
    storm sender records holds ``***`` for each (`simulator.secret_forms`)."""
    import base64
    import json as json_module

    from hookproof.loadtests.spec import StormSpec
    from hookproof.loadtests.storm_state import StormProcess

    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    raw = base64.b64decode(secret.removeprefix("whsec_"))
    body = f"debug {secret} {raw.hex()} {raw!r}".encode()
    state = StormProcess()
    state.setup(StormSpec(target_url="http://127.0.0.1:9/webhooks", users=1, rate_per_s=1.0, duration_s=1.0,
                          out_dir="unused"), sender=True, secrets=json_module.dumps([secret]))
    assert state.error is None, state.error
    atoms = (True, 500, body, False, b"HTTP/1.1 500 Internal", None, None, 20.0, 65536)
    row = state.row(("evt_1", "dlv_evt_1_1", (), 1, "evt_1", 1000.5, 12.3, atoms),  # type: ignore[arg-type]
                    {"evt_1": event_to_wire(EVENT)})
    assert row[COLUMNS.index("response_excerpt")] == "debug *** *** b'***'"


def test_locust_statistics_logged_directly_are_those_the_request_event_logs() -> None:
    """A storm user logs its attempts to the runner's statistics itself only when the
    runner's own listener is the request event's only one; what it logs then is exactly
    what firing the event logs (counts, failures, response times, errors)."""
    import json
    import subprocess
    import sys

    from tests.hostile.harness import ROOT, child_env

    run = subprocess.run([sys.executable, "-m", "tests.loadtests.storm_stats"], capture_output=True, text=True,
                         timeout=120, cwd=ROOT, env=child_env())
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["alone"] is True and out["alone_with_another_listener"] is False
    assert out["direct"] == out["fired"]
    assert out["direct"]["total"][:2] == [4, 2]
