"""Deliveries whose retry schedule the end of a storm's drain cut (`loadtests.cut`): what
the checks may say of them, the drain's bound, and their way from the workers (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.loadtests.collect import Collector
from hookproof.loadtests.cut import Cut, CutDelivery, cut_of, judge_cut
from hookproof.loadtests.records import make_attempt
from hookproof.loadtests.spec import StormSpec
from hookproof.loadtests.spool import Spool
from hookproof.loadtests.verdict import storm_scenario
from hookproof.scenarios.findings import Finding, MadeFindings, Verdict, result_of
from hookproof.scenarios.observations import Effect, ObjectState, Observation
from hookproof.simulator.delivery.history import Attempt
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import get_profile
from tests.scenarios.test_made_findings import made_findings

STRIPE = get_profile("stripe")
NOTE = ("the storm's end cut the retry schedule of 2 delivery(ies) (1 with a retry owed, 1 with an attempt still "
        "unanswered) when its drain ended after 62 s: the provider would still retry them, so whether the receiver "
        "applies their events is unknown")


def _paid(i: int) -> Event:
    return Event(id=f"evt_{i}", type="invoice.paid", created=i, created_us=i, object_type="invoice",
                 object_id=f"in_{i}", version=1, object={}, business_key=f"renewal:in_{i}", amount=1500)


def _attempt(e: Event, attempt: int, status: int | None, at: float) -> Attempt:
    return make_attempt(event=e, event_id=e.id, delivery_id=f"dlv_{e.id}_1", attempt=attempt, tags=(),
                        profile=STRIPE, sent_at=at, latency_ms=5.0, status=status,
                        error_kind=None if status is not None else "unfinished")


def _spec(tmp_path: Path) -> StormSpec:
    return StormSpec(target_url="http://127.0.0.1:9/webhooks", duration_s=2.0, out_dir=str(tmp_path / "out"))


def _storm(tmp_path: Path, cut: list[CutDelivery], *, settled: bool = True,
           ) -> dict[str, tuple[str, list[tuple[str, str]], str]]:
    """A storm of 5 invoices and a subscription: in_0 applied; in_1 refused once, its retry owed;
    in_2 refused on each of its 3 attempts; in_3 acknowledged, never applied; the subscription's
    newest state's attempt unanswered; in_4 applied. (check -> verdict, findings, detail) of the
    checks that are not valid, with `cut`."""
    events = [_paid(i) for i in range(5)]
    sub = Event(id="evt_s", type="customer.subscription.updated", created=9, created_us=9, object_type="subscription",
                object_id="sub_1", version=2, object={}, status="past_due")
    attempts = [_attempt(events[0], 1, 200, 1000.0), _attempt(events[1], 1, 503, 1000.1),
                *(_attempt(events[2], n, 503, 1000.2 + n) for n in (1, 2, 3)), _attempt(events[3], 1, 200, 1000.3),
                _attempt(sub, 1, None, 1001.0), _attempt(events[4], 1, 200, 1001.1)]
    before = Observation(1997.5, (Effect("renewal:in_0"),), (ObjectState("sub_1", "active", 1),))
    obs = Observation(2000.0, (Effect("renewal:in_0"), Effect("renewal:in_4")), (ObjectState("sub_1", "active", 1),))
    report = storm_scenario(_spec(tmp_path), [*events, sub], attempts, [before, obs], settled=settled,
                            started_at=1000.0,
                            duration_s=2.0, cut=cut, drain_s=62.0)
    return {c.check_id: (c.verdict, sorted((f.key, f.message) for f in c.findings if f.severity == "finding"), c.detail)
            for c in report.checks if c.verdict != "valid"}


CUT = [CutDelivery("evt_1", "evt_1", "dlv_evt_1_1", 1), CutDelivery("evt_s", "evt_s", "dlv_evt_s_1", 1, True)]


def test_without_a_cut_every_key_not_applied_is_lost(tmp_path: Path) -> None:
    found = _storm(tmp_path, [])
    never = ("never applied and never acknowledged: every valid delivery went unanswered or was refused (503); "
             "Stripe would keep retrying it for up to 3 days (live mode)")
    assert found["lost"] == ("invalid", [("renewal:in_1", never), ("renewal:in_2", never),
                                         ("renewal:in_3", "acknowledged 1 time(s) but not applied by the end of "
                                                          "settling")], "3 finding(s), 0 advisory(ies)")
    assert found["stale"] == ("invalid", [("sub_1", "final state is active (hookproof_version 1; no delivered event "
                                                    "carried it), the provider's is past_due (event evt_s, "
                                                    "customer.subscription.updated, created 0); its event evt_s "
                                                    "was never acknowledged (timeout): the receiver may never have "
                                                    "applied it; Stripe would keep retrying it for up to 3 days "
                                                    "(live mode)")],
                              "1 finding(s), 0 advisory(ies)")
    assert set(found) == {"lost", "stale", "no_server_error", "counter"}


def test_a_cut_delivery_never_acknowledged_is_unknown_the_others_stay_lost(tmp_path: Path) -> None:
    found = _storm(tmp_path, CUT)
    verdict, lost, detail = found["lost"]
    # in_2 refused on every attempt of its full schedule, in_3 acknowledged and not applied: still lost
    assert verdict == "invalid" and [k for k, _ in lost] == ["renewal:in_2", "renewal:in_3"]
    assert detail == f"1 key(s) not applied unknown: {NOTE}; 2 finding(s), 0 advisory(ies)"
    # the subscription's newest state went out in an attempt the drain's end left unanswered
    assert found["stale"] == ("unknown", [], f"1 object(s) not current unknown: {NOTE}; 0 finding(s), 0 advisory(ies)")
    # the other checks are as without a cut
    assert set(found) == {"lost", "stale", "no_server_error", "counter"}
    assert [k for k, _ in found["counter"][1]] == ["renewal:in_3"]


def test_a_cut_delivery_of_an_event_acknowledged_by_another_excuses_nothing(tmp_path: Path) -> None:
    """in_3 was acknowledged (then never applied): a cut copy of its event leaves it lost."""
    found = _storm(tmp_path, [CutDelivery("evt_3", "evt_3", "dlv_evt_3_2", 1)])
    assert [k for k, _ in found["lost"][1]] == ["renewal:in_1", "renewal:in_2", "renewal:in_3"]
    assert "unknown" not in found["lost"][2]


def test_judge_cut_leaves_a_check_with_no_finding_excused_as_it_was() -> None:
    valid = result_of("lost", [])
    cut = Cut((CutDelivery("e", "e", "d", 1),), frozenset({"k"}), frozenset({"o"}), 10.0)
    assert judge_cut([valid], cut) == [valid]
    only = result_of("lost", [Finding("lost", "k", "never applied and never acknowledged: x")])
    (judged,) = judge_cut([only], cut)
    assert judged.verdict is Verdict.UNKNOWN and judged.findings == () and judged.stats["cut_short"] == 1
    assert judge_cut([only], Cut((), frozenset(), frozenset(), 10.0)) == [only]


def test_cut_of_names_the_keys_and_objects_of_events_never_acknowledged() -> None:
    events = [_paid(0), _paid(1)]
    cut = cut_of([CutDelivery("evt_0", "evt_0", "d0", 2), CutDelivery("evt_1", "evt_1", "d1", 1, True)], events,
                 {"evt_1"}, 5.0)
    assert (cut.keys, cut.objects) == (frozenset({"renewal:in_0"}), frozenset({"in_0"}))


def test_the_cut_note_says_a_stopped_worker_cut_its_schedules_when_it_stopped() -> None:
    deliveries = [CutDelivery("evt_0", "evt_0", "d0", 2)]
    assert cut_of(deliveries, [_paid(0)], set(), 30.0).note() == (
        "the storm's end cut the retry schedule of 1 delivery(ies) (1 with a retry owed) when its drain ended after "
        "30 s: the provider would still retry them, so whether the receiver applies their events is unknown")
    assert cut_of(deliveries, [_paid(0)], set(), 30.0, ["worker 2"]).note() == (
        "the storm's end cut the retry schedule of 1 delivery(ies) (1 with a retry owed) when its drain ended after "
        "30 s or, on worker 2 (stopped before the storm's end), when it stopped: the provider would still retry "
        "them, so whether the receiver applies their events is unknown")


@pytest.mark.parametrize("row", [["e", "s", "d", 0, False], ["e", "s", "d", 1], "x", ["e", "s", "d", True, False],
                                 ["e", "s", None, 1, False], ["e", "s", "d", 1, "no"]])
def test_a_malformed_cut_delivery_is_refused(row: object) -> None:
    with pytest.raises(ValueError, match="cut delivery"):
        CutDelivery.from_wire(row)


def test_the_collector_gathers_the_workers_cut_deliveries(tmp_path: Path) -> None:
    collector = Collector(Spool(tmp_path / "history.sqlite"))
    good = CutDelivery("e", "s", "d", 2, True)
    collector.done("a", {"attempts": 0, "cut": [good.to_wire(), ["bad"]]})
    collector.done("b", {"attempts": 0})
    assert collector.cut() == [good]
    assert collector.errors == ["worker a: a cut delivery must be a list of 5 fields, got ['bad']"]



def test_the_collector_names_the_workers_whose_records_may_be_missing(tmp_path: Path) -> None:
    collector = Collector(Spool(tmp_path / "history.sqlite"))
    collector.ready("vm_a", {"version": "0.1.0", "reachable": True, "detail": "", "index": 0, "host": "vm-a",
                             "address": "10.0.0.3"})
    collector.ready("vm_b", {"version": "0.1.0", "reachable": True, "detail": "", "index": 1, "host": "vm-b",
                             "address": "10.0.0.4"})
    collector.ready("vm_c", {"version": "0.1.0", "reachable": True, "detail": "", "index": 2})
    collector.ready("vm_late", {"version": "0.1.0", "reachable": True, "detail": ""})
    collector.add("vm_b", {"rows": []})
    collector.done("vm_a", {"attempts": 0, "index": 0, "stopped": "stopped 3 s into the storm, before its end"})
    collector.done("vm_c", {"attempts": 2, "index": 2})  # 2 reported, none arrived
    nodes = ["vm_a", "vm_b", "vm_c"]
    assert collector.started() == ["vm_a", "vm_b", "vm_c"]  # the late one sent nothing
    assert collector.unrecorded(nodes) == ["worker vm_b (vm-b, 10.0.0.4)", "worker vm_c"]
    assert collector.problems(nodes) == ["worker vm_b (vm-b, 10.0.0.4) sent no closing message (its records may "
                                         "be missing)", "worker vm_c reported 2 attempts, 0 arrived"]
    # an event's record comes with each chunk holding attempts of it: records, not distinct events
    records = "event record(s) (an event's once per chunk holding its attempts)"
    assert [t.line() for t in collector.totals()] == [
        f"worker 0 vm_a (vm-a, 10.0.0.3): 0 attempt(s), 0 {records} in 0 chunk(s); stopped 3 s into the storm, "
        "before its end",
        f"worker 1 vm_b (vm-b, 10.0.0.4): 0 attempt(s), 0 {records} in 1 chunk(s); no closing message (its records "
        "may be missing)",
        f"worker 2 vm_c: 0 attempt(s), 0 {records} in 0 chunk(s)"]
    from hookproof.loadtests.verdict import workers_note

    (note,) = workers_note(collector.totals())
    assert note == "workers: " + "; ".join(t.line() for t in collector.totals())
    local = Collector(Spool(tmp_path / "local.sqlite"))
    local.done("local", {"attempts": 0, "index": -1})
    assert [t.line() for t in local.totals()] == [f"the local process: 0 attempt(s), 0 {records} in 0 chunk(s)"]
    assert workers_note(local.totals()) == ()


SENDER_BOUND = {"lag_max_ms": 438.0, "wait_max_ms": 12.0}


def _overloaded(tmp_path: Path, sender: dict[str, float] | None) -> dict[str, tuple[str, list[str], str]]:
    """in_0 applied; in_1 unanswered on each of its 3 attempts (timeout) and never applied;
    in_2 refused (503) on each of its 3; the subscription's newest state unanswered (timeout)."""
    events = [_paid(i) for i in range(3)]
    sub = Event(id="evt_s", type="customer.subscription.updated", created=9, created_us=9, object_type="subscription",
                object_id="sub_1", version=2, object={}, status="past_due")

    def timed_out(e: Event, n: int, at: float) -> Attempt:
        return make_attempt(event=e, event_id=e.id, delivery_id=f"dlv_{e.id}_1", attempt=n, tags=(), profile=STRIPE,
                            sent_at=at, latency_ms=22000.0, error_kind="timeout")

    attempts = [_attempt(events[0], 1, 200, 1000.0), *(timed_out(events[1], n, 1000.1 + n) for n in (1, 2, 3)),
                *(_attempt(events[2], n, 503, 1000.2 + n) for n in (1, 2, 3)), timed_out(sub, 1, 1001.0)]
    obs = Observation(2000.0, (Effect("renewal:in_0"),), (ObjectState("sub_1", "active", 1),))
    report = storm_scenario(_spec(tmp_path), [*events, sub], attempts, [obs], settled=True, started_at=1000.0,
                            duration_s=2.0, sender=sender)
    return {c.check_id: (c.verdict, sorted(f.key for f in c.findings if f.severity == "finding"), c.detail)
            for c in report.checks if c.check_id in ("lost", "stale")}


def test_a_sender_bound_storm_does_not_call_lost_what_only_timed_out(tmp_path: Path) -> None:
    """A new user's correct Mercado Pago receiver, stormed at 50 events/s on a loaded 2-core
    machine (the storm sender-bound), was told it lost payments whose three compressed attempts
    all timed out in its server's queue; the provider would have gone on retrying them for days.
    Under a sender-bound storm those keys and the objects of their events are unknown (ack_latency
    judges the timeouts); a key refused on every attempt stays lost; a storm that kept up still
    says lost."""
    kept_up = _overloaded(tmp_path / "kept-up", None)
    assert kept_up["lost"][:2] == ("invalid", ["renewal:in_1", "renewal:in_2"])
    assert kept_up["stale"][:2] == ("invalid", ["sub_1"])
    bound = _overloaded(tmp_path / "bound", SENDER_BOUND)
    verdict, lost, detail = bound["lost"]
    assert (verdict, lost) == ("invalid", ["renewal:in_2"])
    assert detail.startswith("1 key(s) not applied unknown: every attempt of their deliveries went unanswered within "
                             "the sender timeout while the storm was sender-bound (its senders' loop lagged up to "
                             "438 ms, an attempt waited up to 12 ms for its connection): the storm's compressed retry "
                             "schedule ended where the provider would go on retrying"), detail
    assert bound["stale"][:2] == ("unknown", [])


def test_the_storm_s_cut_judges_made_findings_as_the_same_findings_held() -> None:
    made, _ = made_findings(6)
    cut = Cut((CutDelivery("e", "e", "d", 1),), frozenset({"k1", "k3", "k4"}), frozenset(), 10.0)
    (judged,) = judge_cut([result_of("lost", made)], cut)
    (same,) = judge_cut([result_of("lost", list(made))], cut)
    assert isinstance(judged.findings, MadeFindings)
    assert [f.key for f in judged.findings] == ["k0", "k2", "k4", "k5"]  # k4 was acknowledged: not excused
    assert judged == same and judged.stats["cut_short"] == 2


def test_a_receiver_still_applying_at_the_settle_deadline_is_not_called_lost(tmp_path: Path) -> None:
    """A receiver that stores each delivery, answers, and applies from a queue slower than the
    storm offered was still working through its backlog when the reads' deadline came: its keys
    not applied yet were `lost`, its objects short of their last state `stale` and its counters
    short of the truth `counter`; all are now unknown, the note saying how fast it was still applying and what to raise."""
    found = _storm(tmp_path, [], settled=False)
    note = ("the receiver was still changing what it shows when the settle deadline came after 30 s: 1 effect(s) "
            "appeared in the last 2.5 s of reads (about 0.4/s), so what it had not applied yet is not known lost (a "
            "backlog it applies more slowly than the storm offered); raise [settle] deadline_s to wait for it")
    assert found["lost"] == ("unknown", [], f"3 key(s) not applied unknown: {note}; 0 finding(s), 0 advisory(ies)")
    assert found["stale"] == ("unknown", [], f"1 object(s) not current unknown: {note}; 0 finding(s), 0 advisory(ies)")
    # renewal:in_3's counter short of its 1500 (in_1's and in_2's, never acknowledged, advisories as before)
    assert found["counter"] == ("unknown", [], f"1 counter(s) short unknown: {note}; 0 finding(s), 2 advisory(ies)")
    assert set(found) == {"lost", "stale", "no_server_error", "counter"}


def test_a_sender_bound_storm_does_not_call_short_a_counter_its_unanswered_events_explain(tmp_path: Path) -> None:
    """A new user's correct Paddle receiver, stormed sender-bound, had its lost and stale keys
    called unknown but its revenue counter, short by the very payments that were never
    answered, a finding. A counter short by what the unanswered events would have added is
    unknown in a sender-bound storm; short by more (an answered payment not counted) it stays a
    finding; a storm that kept up says so either way. Each finding names the deliveries of the
    events that move its counter, as certify's do (a storm's named none)."""
    keys = {"builtin": True, "templates": {}, "conditions": {}, "more": {},
            "counters": {"invoice.paid": {"key": "{data.object.customer}", "amount": "data.object.amount_paid"}}}
    spec = StormSpec(target_url="http://127.0.0.1:9/webhooks", duration_s=2.0, out_dir=str(tmp_path / "out"),
                     keys=keys)
    events = [Event(id=f"evt_{i}", type="invoice.paid", created=i, created_us=i, object_type="invoice",
                    object_id=f"in_{i}", version=1, business_key=f"renewal:in_{i}", amount=1500,
                    object={"id": f"in_{i}", "object": "invoice", "customer": f"cus_{i // 3}", "amount_paid": 1500})
              for i in range(6)]

    def timed_out(e: Event, n: int, at: float) -> Attempt:
        return make_attempt(event=e, event_id=e.id, delivery_id=f"dlv_{e.id}_1", attempt=n, tags=(), profile=STRIPE,
                            sent_at=at, latency_ms=22000.0, error_kind="timeout")

    # cus_0: in_0 applied, in_1 and in_2 never answered, counter 1500 (truth 4500);
    # cus_1: in_3 and in_4 applied, in_5 never answered, counter 1500 (an answered payment not counted)
    attempts = [_attempt(events[0], 1, 200, 1000.0), *(timed_out(events[i], n, 1000.1 + n) for i in (1, 2)
                                                       for n in (1, 2, 3)),
                _attempt(events[3], 1, 200, 1000.5), _attempt(events[4], 1, 200, 1000.6),
                *(timed_out(events[5], n, 1000.7 + n) for n in (1, 2, 3))]
    obs = Observation(2000.0, (Effect("renewal:in_0"), Effect("renewal:in_3"), Effect("renewal:in_4")), (),
                      counters={"cus_0": 1500, "cus_1": 1500})

    def counter(sender: dict[str, float] | None) -> tuple[str, list[str]]:
        report = storm_scenario(spec, events, attempts, [obs], settled=True, started_at=1000.0, duration_s=2.0,
                                sender=sender)
        (check,) = [c for c in report.checks if c.check_id == "counter"]
        return check.verdict, sorted(f.key for f in check.findings if f.severity == "finding")

    assert counter(None) == ("invalid", ["cus_0", "cus_1"])
    assert counter(SENDER_BOUND) == ("invalid", ["cus_1"])
    # each finding names the deliveries of the events moving its counter and adds them up
    report = storm_scenario(spec, events, attempts, [obs], settled=True, started_at=1000.0, duration_s=2.0)
    (check,) = [c for c in report.checks if c.check_id == "counter"]
    found = {f.key: f for f in check.findings}
    assert (found["cus_1"].message, found["cus_1"].attempts) == (
        "counter is 1500; the provider's truth implies 4500 "
        "(+1500 invoice.paid evt_3, +1500 invoice.paid evt_4, +1500 invoice.paid evt_5)", (7, 8, 9, 10, 11))
    assert found["cus_0"].attempts == (0, 1, 2, 3, 4, 5, 6)


def _unrecorded_storm(tmp_path: Path, unrecorded: tuple[str, ...]) -> dict[str, tuple[str, list[str], str]]:
    """`_storm`'s deliveries, and a receiver that also shows an effect of a key no recorded
    event carries (renewal:in_9: a delivery the lost worker sent, never recorded) and renewal:in_4
    twice. (check -> verdict, finding keys, detail) of the checks that are not valid."""
    events = [_paid(i) for i in range(5)]
    sub = Event(id="evt_s", type="customer.subscription.updated", created=9, created_us=9, object_type="subscription",
                object_id="sub_1", version=2, object={}, status="past_due")
    attempts = [_attempt(events[0], 1, 200, 1000.0), _attempt(events[1], 1, 503, 1000.1),
                *(_attempt(events[2], n, 503, 1000.2 + n) for n in (1, 2, 3)), _attempt(events[3], 1, 200, 1000.3),
                _attempt(sub, 1, None, 1001.0), _attempt(events[4], 1, 200, 1001.1)]
    effects = (Effect("renewal:in_0"), Effect("renewal:in_4"), Effect("renewal:in_4"), Effect("renewal:in_9"))
    obs = Observation(2000.0, effects, (ObjectState("sub_1", "active", 1),))
    report = storm_scenario(_spec(tmp_path), [*events, sub], attempts, [obs], settled=True, started_at=1000.0,
                            duration_s=2.0, unrecorded=unrecorded)
    return {c.check_id: (c.verdict, sorted(f.key for f in c.findings if f.severity == "finding"), c.detail)
            for c in report.checks if c.verdict != "valid"}


def test_a_lost_worker_s_records_leave_unknown_only_what_they_could_explain(tmp_path: Path) -> None:
    whole = _unrecorded_storm(tmp_path, ())
    assert {c: keys for c, (_, keys, _) in whole.items()} == {
        "duplicated": ["renewal:in_4"], "lost": ["renewal:in_1", "renewal:in_2", "renewal:in_3"],
        "unexpected": ["renewal:in_9"], "stale": ["sub_1"], "counter": ["renewal:in_3", "renewal:in_4"],
        "no_server_error": ["renewal:in_1", "renewal:in_2"]}
    lost = "worker vm_1 (vm-b, 10.0.0.4)"
    found = _unrecorded_storm(tmp_path, (lost,))
    note = (f"the records of {lost} may be missing (no closing message came): deliveries it sent that never "
            "reached the history could explain these, so they are unknown")
    # a key applied twice, one acknowledged and never applied (and their built-in money keys' amounts,
    # each its one event's), and the 5xx answers recorded: no missing record explains them
    assert found["duplicated"][:2] == ("invalid", ["renewal:in_4"])
    assert found["counter"] == whole["counter"] and found["no_server_error"] == whole["no_server_error"]
    assert found["lost"] == ("invalid", ["renewal:in_3"], f"2 key(s) not applied unknown: {note}; 1 finding(s), "
                                                          "0 advisory(ies)")
    assert found["unexpected"] == ("unknown", [], f"1 unexpected effect(s) unknown: {note}; 0 finding(s), "
                                                  "0 advisory(ies)")
    assert found["stale"] == ("unknown", [], f"1 object(s) not current unknown: {note}; 0 finding(s), 0 advisory(ies)")
    assert set(found) == set(whole)


def test_a_storm_whose_records_may_be_missing_is_never_a_pass(tmp_path: Path) -> None:
    events = [_paid(0)]
    attempts = [_attempt(events[0], 1, 200, 1000.0)]
    obs = Observation(2000.0, (Effect("renewal:in_0"),), ())
    whole = storm_scenario(_spec(tmp_path), events, attempts, [obs], settled=True, started_at=1000.0, duration_s=2.0)
    assert (whole.verdict, whole.reason) == ("pass", None)
    lost = storm_scenario(_spec(tmp_path), events, attempts, [obs], settled=True, started_at=1000.0, duration_s=2.0,
                          reason="worker vm_1 sent no closing message (its records may be missing)",
                          unrecorded=("worker vm_1",))
    assert (lost.verdict, lost.reason) == ("unknown", "worker vm_1 sent no closing message (its records may be "
                                                      "missing)")
    assert all(c.verdict == "valid" for c in lost.checks)


def test_a_lost_worker_s_records_leave_a_team_counter_off_either_way_unknown() -> None:
    from hookproof.loadtests.cut import Unrecorded

    over = Finding("counter", "cus_1", "counter is 59700; the provider's truth implies 39800", expected=39800,
                   actual=59700)
    under = Finding("counter", "cus_2", "counter is 100; the provider's truth implies 300", expected=300, actual=100)
    result = result_of("counter", (over, under), {})
    (judged,) = judge_cut([result], Unrecorded(("worker vm_1",), aggregated=True))
    assert (judged.verdict, judged.findings, judged.stats["cut_short"]) == (Verdict.UNKNOWN, (), 2)
    assert judged.detail.startswith("2 counter(s) off unknown: the records of worker vm_1 may be missing")
    # nothing missing, or built-in keys' counters (each one event's amount): nothing judged
    assert judge_cut([result], Unrecorded((), aggregated=True)) == [result]
    assert judge_cut([result], Unrecorded(("worker vm_1",))) == [result]
