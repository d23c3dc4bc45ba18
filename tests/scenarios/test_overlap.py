"""Scenarios side by side (`scenarios.overlap`): which may overlap which, in what order they
start, whose provider-API refusals are whose; and a runner that overlaps them gives the same
verdicts and findings, in catalog order, as one that runs them one after another (real
receivers over HTTP on 127.0.0.1)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from examples.receivers import load
from hookproof.receivers import ReceiverConfig, receiver_of
from hookproof.reports import render_json
from hookproof.reports.model import RunReport
from hookproof.scenarios.catalog import CATALOG, Overlap
from hookproof.scenarios.observations import Observation
from hookproof.scenarios.observers import observation_from_data
from hookproof.scenarios.overlap import compatible, next_start, own_refusals, run_overlapped
from hookproof.scenarios.report_views import REPORT_META_KEY
from hookproof.scenarios.runner import Runner, answered_valid, only_refused, receiver_down, refused_valid
from hookproof.simulator.delivery import Attempt, History, Outcome, Target
from hookproof.simulator.delivery.history import Completion
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server.refusals import Refusal
from tests.examples.serving import serve_app

A, F, R, W = Overlap.ALONE, Overlap.FRESH, Overlap.REPEATS, Overlap.FLOODS


@pytest.mark.parametrize(("kind", "running", "ok"), [
    (A, [], True), (W, [], True), (A, [F], False), (F, [A], False), (R, [A], False),
    (F, [F, R], True), (R, [F, R], True), (R, [W], False), (F, [W], False), (W, [F], False), (W, [A], False),
])
def test_what_may_overlap_what(kind: Overlap, running: list[Overlap], ok: bool) -> None:
    assert compatible(kind, running) is ok


def test_the_first_runs_alone_then_fresh_and_repeats_together_then_each_alone_one_and_the_flood_last() -> None:
    kinds = [R, A, F, R, W, F, A]
    pending, running, order = list(range(len(kinds))), [], []
    while pending:  # start what may start; when nothing may, the oldest running one ends
        i = next_start(pending, kinds, running, 3)
        if i is None:
            running.pop(0)
            continue
        pending.remove(i)
        running.append(i)
        order.append((i, tuple(running)))
    assert order == [(0, (0,)), (2, (2,)), (3, (2, 3)), (5, (2, 3, 5)), (1, (1,)), (6, (6,)), (4, (4,))]


def test_a_bound_of_one_never_overlaps() -> None:
    assert next_start([1, 2], [R, F, F], [1], 1) is None


def test_refusals_go_to_the_scenario_whose_ids_they_name() -> None:
    mine, theirs = frozenset({"pi_mine", "evt_mine"}), {"pi_theirs"}
    refusals = [Refusal(1, "GET", "/v1/payment_intents/pi_mine", 404, "resource_missing"),
                Refusal(2, "GET", "/v1/payment_intents/pi_theirs", 404, "resource_missing"),
                Refusal(3, "GET", "/v1/events", 401, "api_key_invalid"), Refusal(4, "GET", "/v1/events/evt_mine", 500, "")]
    served = (mine | theirs).__contains__
    assert [r.seq for r in own_refusals(refusals, mine, served)] == [1, 3, 4]


def test_a_down_scenario_stops_the_start_of_others() -> None:
    scenarios = [CATALOG[s] for s in ("duplicate-sequential", "reorder", "forged-signature")]
    started: list[int] = []
    results, never, down = run_overlapped(scenarios, 4, start=started.append, run=lambda i: i,
                                          finish=lambda i, _: "down" if i == 0 else None, stop=lambda: None)
    assert (started, results, never, down) == ([0], {0: 0}, [1, 2], 0)


def test_the_first_runs_alone_only_until_its_receiver_answered() -> None:
    assert next_start([1, 2], [R, F, A], [0], 4) is None
    assert next_start([1, 2], [R, F, A], [0], 4, first_alone=False) == 1
    assert next_start([2], [R, F, A], [0, 1], 4, first_alone=False) is None  # an alone one still waits
    assert next_start([1], [A, F], [0], 4, first_alone=False) is None  # and nothing joins an alone first


def test_others_start_beside_the_first_once_it_is_proven_and_never_before() -> None:
    scenarios = [CATALOG[s] for s in ("duplicate-sequential", "reorder", "forged-signature")]
    answered, joined, polled = threading.Event(), threading.Event(), threading.Event()
    asked: list[bool] = []
    events: list[str] = []

    def proven(i: int) -> bool:
        assert i == 0
        asked.append(answered.is_set())
        polled.set()
        return answered.is_set()

    def run(i: int) -> int:
        if i == 0:
            # asked, not answered yet: nothing joins (waits for the poll, not a fixed time:
            # on a loaded machine the poller's first ask can come after any sleep)
            assert polled.wait(5), "the first was never asked whether it is proven"
            events.append("0 answered")
            answered.set()
            assert joined.wait(5), "nothing started beside the first once it answered"
            events.append("0 ends")
        return i

    def start(i: int) -> None:
        events.append(f"start {i}")
        if i == 1:
            joined.set()

    results, never, down = run_overlapped(scenarios, 4, start=start, run=run, finish=lambda i, _: None,
                                          stop=lambda: None, proven=proven)
    assert (results, never, down) == ({0: 0, 1: 1, 2: 2}, [], None)
    assert events[:3] == ["start 0", "0 answered", "start 1"] and sorted(events[3:]) == ["0 ends", "start 2"]
    assert asked[0] is False and asked[-1] is True


def test_a_first_never_proven_down_still_stops_the_others() -> None:
    scenarios = [CATALOG[s] for s in ("duplicate-sequential", "reorder", "forged-signature")]
    started: list[int] = []
    results, never, down = run_overlapped(scenarios, 4, start=started.append, run=lambda i: time.sleep(0.05) or i,
                                          finish=lambda i, _: "down" if i == 0 else None, stop=lambda: None,
                                          proven=lambda i: False)
    assert (started, results, never, down) == ([0], {0: 0}, [1, 2], 0)


def test_answered_valid_is_what_keeps_a_receiver_from_being_called_down() -> None:
    def attempt(outcome: Outcome, valid: bool = True) -> Attempt:
        return Attempt(event_id="evt_1", delivery_id="d", attempt=1, business_key="k", object_id=None,
                       object_version=None, event_type="invoice.paid", faults=(), valid=valid, sent_at=0.0,
                       answered_at=0.0, status=None, outcome=outcome, completion=Completion.UNKNOWN, latency_ms=0.0)

    down = [attempt(Outcome.TIMEOUT), attempt(Outcome.CONNECTION_ERROR), attempt(Outcome.ACKED, valid=False)]
    assert not answered_valid(down) and receiver_down(down) is not None
    for outcome in (Outcome.ACKED, Outcome.REJECTED, Outcome.SERVER_ERROR, Outcome.DROPPED):
        up = [*down, attempt(outcome)]
        assert answered_valid(up) and receiver_down(up) is None


def _answered(status: int | None, *, valid: bool = True, faults: tuple[str, ...] = (),
              event_type: str = "invoice.paid") -> Attempt:
    outcome = (Outcome.TIMEOUT if status is None else Outcome.ACKED if status < 300
               else Outcome.REJECTED if status < 500 else Outcome.SERVER_ERROR)
    return Attempt(event_id="evt_1", delivery_id="d", attempt=1, business_key="k", object_id=None,
                   object_version=None, event_type=event_type, faults=faults, valid=valid, sent_at=0.0,
                   answered_at=0.0, status=status, outcome=outcome, completion=Completion.UNKNOWN, latency_ms=0.0)


MUST_ACCEPT = CATALOG["duplicate-sequential"].checks


@pytest.mark.parametrize(("statuses", "others", "checks", "stops"), [
    ((401, 401, 401), (), MUST_ACCEPT, ("401", 3)),
    ((401, 403, 401, 403), (), MUST_ACCEPT, ("401 or 403", 4)),
    # forged ones refused, a future-dated one and an oversized one acknowledged or refused: not counted
    ((401, 401, 401), (_answered(200, valid=False), _answered(413, faults=("oversize",)),
                       _answered(401, faults=("future-timestamp",))), MUST_ACCEPT, ("401", 3)),
    ((401, 401), (), MUST_ACCEPT, None),  # too few to say
    ((401, 401, 401, 200), (), MUST_ACCEPT, None),  # one acknowledged
    # a 400 names a second cause (requests it cannot parse): it stops only over two event types, never one
    # type a receiver does not handle
    ((401, 401, 401, 400), (), MUST_ACCEPT, None),
    ((400, 400, 400, 400), (), MUST_ACCEPT, None),
    ((400, 400, 400), (_answered(400, event_type="customer.created"),), MUST_ACCEPT, ("400", 4)),
    ((401, 401, 400), (_answered(401, event_type="customer.created"),), MUST_ACCEPT, ("400 or 401", 4)),
    ((400, 400, 400, 500), (_answered(400, event_type="customer.created"),), MUST_ACCEPT, None),
    ((401, 401, 401, None), (), MUST_ACCEPT, None),  # one never answered
    ((401, 401, 401), (), CATALOG["forged-signature"].checks, None),  # not held to a 2xx
    ((), tuple(_answered(401, faults=("future-timestamp",)) for _ in range(4)), CATALOG["future-timestamp"].checks,
     None),  # stricter than Stripe's SDK: an advisory, never a wrong secret
])
def test_a_scenario_refused_as_with_a_wrong_secret(statuses: tuple[int | None, ...], others: tuple[Attempt, ...],
                                                   checks: tuple[str, ...], stops: tuple[str, int] | None) -> None:
    attempts = [*others, *(_answered(s) for s in statuses)]
    assert refused_valid(attempts, checks) == stops
    assert only_refused([_answered(401), _answered(403), _answered(400)]) and not only_refused([])
    assert not only_refused([_answered(401), _answered(500)]) and not only_refused([_answered(400), _answered(404)])


def test_a_run_that_acknowledged_a_valid_delivery_is_never_stopped_for_a_refusal() -> None:
    """A receiver that acknowledged valid deliveries, then refused every one of a scenario with 403
    (a firewall throttling a burst, say): no secret is wrong, so nothing stops."""
    runner = Runner(target=Target(url="http://127.0.0.1:9/"), profile=get_profile("stripe"), secrets=["s"],
                    observe=lambda: Observation(0.0, (), ()), history=History())
    scenario = CATALOG["reorder"]
    refused = [replace(_answered(403), scenario="reorder") for _ in range(3)]
    assert runner._stop_after(scenario, refused) is not None  # nothing acknowledged yet: as a wrong secret
    runner.history.record(replace(_answered(200), scenario="duplicate-sequential"))
    assert runner._stop_after(scenario, refused) is None
    assert runner._acked_valid


#: Scenarios of every overlap class, and one the correct receiver passes and the broken one fails.
CHOSEN = ["duplicate-sequential", "reorder", "stale-after-newer", "forged-signature", "mass-redelivery",
          "older-after-newer-redelivery", "stale-failure-after-success"]


def certify_in_process(name: str, tmp_path: Path, overlap: int, chosen: list[str] = CHOSEN,
                       options: dict[str, float] | None = None, history: History | None = None) -> RunReport:
    config = ReceiverConfig(db_url=f"sqlite:///{tmp_path / f'{name}-{overlap}.db'}", secrets=("whsec_overlap_0123",),
                            account="acct_overlap000001", options=options or {})
    app = load(name).create_app(config)
    receiver = receiver_of(app)
    try:
        with serve_app(app) as url:
            def observe() -> Observation:
                return observation_from_data(receiver.observe(), time.time(), observer="python")

            runner = Runner(target=Target(url=url + "/webhooks"), profile=get_profile("stripe"),
                            secrets=("whsec_overlap_0123",), observe=observe, history=history if history is not None else History(),
                            account="acct_overlap000001", seed=77, settle_window_s=0.1, settle_interval_s=0.02,
                            overlap=overlap)
            assert runner.may_overlap()
            return runner.run(chosen)
    finally:
        receiver.close()


@pytest.mark.parametrize("name", ["inbox_sync", "dedupe_by_object_id"])
def test_overlapped_scenarios_get_the_verdicts_and_findings_of_a_sequential_run(name: str, tmp_path: Path) -> None:
    def verdicts(report: RunReport) -> list[tuple[str, str, list[tuple[str, str | None]], int]]:
        return [(s.id, s.verdict, sorted((f.check_id, f.key) for f in s.findings), len(s.attempts))
                for s in report.scenarios]

    one_by_one = certify_in_process(name, tmp_path, 1)
    overlapped = certify_in_process(name, tmp_path, 4)
    assert [s.id for s in overlapped.scenarios] == CHOSEN
    assert verdicts(overlapped) == verdicts(one_by_one)
    assert overlapped.notes == one_by_one.notes == () and not overlapped.partial
    if name == "inbox_sync":
        assert overlapped.verdict == "pass"
    else:
        assert {s.id for s in overlapped.scenarios if s.verdict == "fail"} == {
            "stale-after-newer", "mass-redelivery", "older-after-newer-redelivery", "stale-failure-after-success"}


def test_the_history_keeps_the_report_as_report_json_reads_it(tmp_path: Path) -> None:
    history = History()
    report = certify_in_process("inbox_sync", tmp_path, 4, CHOSEN[:4], history=history)
    assert history.meta()[REPORT_META_KEY] == json.loads(render_json(report))


@pytest.mark.parametrize(("name", "options"), [("inbox_queue", {}), ("ack_before_persist", {"apply_delay_s": 0.005})])
def test_a_receiver_that_applies_after_answering_is_waited_for_beside_other_scenarios(
        name: str, options: dict[str, float], tmp_path: Path) -> None:
    """Beside other scenarios, a receiver that applies after it answers (a queue; a worker
    taking 5 ms an event) has a scenario's effects queued behind the others': a read short of
    them settles only once nothing the receiver shows changed, so nothing is called lost (as
    one after another: no finding)."""
    overlapped = certify_in_process(name, tmp_path, 4, CHOSEN, options)
    assert [(s.id, s.verdict, s.findings) for s in overlapped.scenarios] == [(s, "pass", ()) for s in CHOSEN]
