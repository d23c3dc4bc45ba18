"""The end of a storm: certify's checks over the merged history, and the storm's report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hookproof.commands.report import read_saved
from hookproof.loadtests.records import make_attempt
from hookproof.loadtests.spec import SECRETS_ENV, SpecError, StormSpec, secrets_from_env, secrets_to_env
from hookproof.loadtests.verdict import (
    STORM_CHECKS,
    finish_storm,
    only_storm,
    reads_states,
    storm_scenario,
    throughput,
)
from hookproof.reports import load_json
from hookproof.scenarios.observations import Effect, ObjectState, Observation
from hookproof.scenarios.report_views import REPORT_META_KEY
from hookproof.simulator.delivery.history import Attempt
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import get_profile

STRIPE = get_profile("stripe")


def _event(i: int) -> Event:
    return Event(id=f"evt_{i}", type="invoice.paid", created=i, created_us=i, object_type="invoice",
                 object_id=f"in_{i}", version=1, object={}, business_key=f"renewal:in_{i}", amount=1500)


def _attempts(events: list[Event], copies: int = 2, t0: float = 1000.0) -> list[Attempt]:
    out = []
    for i, e in enumerate(events):
        for c in range(1, copies + 1):
            out.append(make_attempt(event=e, event_id=e.id, delivery_id=f"dlv_{e.id}_{c}", attempt=1,
                                    tags=(f"burst={copies}",), profile=STRIPE, sent_at=t0 + i * 0.1,
                                    latency_ms=5.0 + i, status=200))
    return out


def _spec(tmp_path: Path) -> StormSpec:
    return StormSpec(target_url="http://127.0.0.1:9/webhooks", duration_s=2.0, out_dir=str(tmp_path / "out"),
                     settle_window_s=0.05, settle_deadline_s=1.0, settle_interval_s=0.01)


def test_a_clean_storm_passes_every_check(tmp_path: Path) -> None:
    events = [_event(i) for i in range(10)]
    obs = Observation(2000.0, tuple(Effect(e.business_key or "") for e in events))
    report = storm_scenario(_spec(tmp_path), events, _attempts(events), [obs], settled=True, started_at=1000.0,
                            duration_s=2.0)
    assert report.id == "storm" and report.verdict == "pass"
    # no subscription was sent: the state checks have nothing to compare and are left out
    assert [c.check_id for c in report.checks] == [c for c in STORM_CHECKS if c not in ("stale", "regressed")]
    assert all(c.verdict == "valid" for c in report.checks)
    latency = next(c for c in report.checks if c.check_id == "ack_latency")
    assert latency.stats["sent"] == 20 and latency.stats["events"] == 10 and latency.stats["sent_per_s"] == 10.0
    assert latency.stats["p50_ms"] > 0 and latency.stats["throughput"]["series"][0][:2] == [0.0, 20.0]


def test_a_storm_that_sent_nothing_is_unknown_not_a_pass(tmp_path: Path) -> None:
    """Workers taken for missing before they sent: no attempt, every check vacuous."""
    report = storm_scenario(_spec(tmp_path), [], [], [Observation(2000.0, ())], settled=True, started_at=1000.0,
                            duration_s=2.0)
    assert report.verdict == "unknown" and report.reason is not None
    assert report.reason.startswith("the storm sent no attempt (no worker sent before the storm stopped)")


def test_a_double_effect_is_a_duplicated_finding(tmp_path: Path) -> None:
    events = [_event(i) for i in range(3)]
    effects = [Effect(e.business_key or "") for e in events] + [Effect("renewal:in_1")]
    report = storm_scenario(_spec(tmp_path), events, _attempts(events), [Observation(2000.0, tuple(effects))],
                            settled=True, started_at=1000.0, duration_s=2.0)
    assert report.verdict == "fail"
    assert {(f.check_id, f.key) for f in report.findings} == {("duplicated", "renewal:in_1"), ("counter", "renewal:in_1")}
    assert {a.business_key for a in report.attempts} == {"renewal:in_1"}


def test_only_storm_keeps_the_storms_objects() -> None:
    obs = Observation(1.0, (Effect("renewal:in_1"), Effect("renewal:in_old")),
                      (ObjectState("sub_1", "active", 2), ObjectState("sub_old", "canceled", 9)))
    kept = only_storm(obs, {"in_1", "sub_1"})
    assert kept.effects == (Effect("renewal:in_1"),) and kept.states == (ObjectState("sub_1", "active", 2),)


def test_throughput_buckets() -> None:
    events = [_event(i) for i in range(30)]
    series = throughput(_attempts(events, copies=1), 1000.0, 3.0)
    assert series["bucket_s"] == 1.0
    assert [p[1] for p in series["series"]] == [10.0, 10.0, 10.0]
    long = throughput(_attempts(events, copies=1), 1000.0, 3600.0)
    assert long["bucket_s"] == 30.0 and len(long["series"]) == 120


def test_finish_storm_writes_certify_reports(tmp_path: Path) -> None:
    events = [_event(i) for i in range(5)]
    attempts = _attempts(events)
    obs = Observation(2000.0, tuple(Effect(e.business_key or "") for e in events))
    outcome = finish_storm(_spec(tmp_path), events, list(reversed(attempts)), started_at=1000.0, stopped_at=1002.0,
                           observe=lambda: obs)
    assert outcome.exit_code == 0 and outcome.report.verdict == "pass"
    assert set(outcome.paths) == {"json", "junit", "markdown", "html", "history"}
    loaded = load_json(outcome.paths["json"].read_bytes())
    assert loaded.scenarios[0].id == "storm" and loaded.history_file == str(outcome.paths["history"])
    assert [a.index for a in loaded.scenarios[0].attempts] == list(range(10))
    # the history keeps the report, so `hookproof report --history` re-renders it
    meta, count = read_saved(outcome.paths["history"], REPORT_META_KEY)
    assert count == 10 and load_json(json.dumps(meta[REPORT_META_KEY])) == loaded


@pytest.mark.parametrize("small", [256, 0], ids=["key-loops", "key-table"])
def test_a_failing_storm_s_findings_are_kept_a_row_each_and_re_rendered_as_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small: int) -> None:
    """Nothing applied: every key a lost and a counter finding (made when read over the key
    table, `MadeFindings`, as a storm's thousands of keys are). The history keeps each finding
    as a row, the report without them in its meta, and `hookproof report` renders from them
    the four files the storm wrote, byte for byte."""
    import sqlite3

    from typer.testing import CliRunner

    from hookproof.cli import app
    from hookproof.reports import REPORT_FILES
    from hookproof.scenarios import key_table
    from hookproof.scenarios.saved_report import StoredFindings

    monkeypatch.setattr(key_table, "SMALL", small)

    events = [_event(i) for i in range(40)]
    outcome = finish_storm(_spec(tmp_path), events, _attempts(events), started_at=1000.0, stopped_at=1002.0,
                           observe=lambda: Observation(2000.0, ()))
    report = outcome.report
    checks = report.scenarios[0].checks
    assert report.verdict == "fail"
    assert [(c.check_id, len(c.findings)) for c in checks if c.findings] == [("lost", 40), ("counter", 40)]
    # the master holds them as the history's rows, read back when reached: no view of each
    assert all(isinstance(c.findings, StoredFindings) for c in checks if c.findings)
    assert report.scenarios[0].findings == storm_scenario(
        _spec(tmp_path), events, _attempts(events), [Observation(2000.0, ())], settled=True, started_at=1000.0,
        duration_s=2.0).findings  # the views the checks make, held
    with sqlite3.connect(outcome.paths["history"]) as db:
        rows = db.execute("SELECT check_id, json_extract(finding, '$.key') FROM findings ORDER BY idx").fetchall()
        document = json.loads(db.execute("SELECT value FROM meta WHERE key = ?", (REPORT_META_KEY,)).fetchone()[0])
    assert rows == [(c.check_id, f.key) for c in checks for f in c.findings]
    assert all(not c["findings"] for c in document["scenarios"][0]["checks"])
    again = tmp_path / "again"
    done = CliRunner().invoke(app, ["report", "--history", str(outcome.paths["history"]), "--out", str(again)])
    assert done.exit_code == 0, done.output
    for name in REPORT_FILES.values():
        assert (again / name).read_bytes() == (outcome.paths["history"].parent / name).read_bytes(), name


@pytest.mark.parametrize("writer_open", [False, True], ids=["at-rest", "wal-beside"])
def test_hookproof_report_renders_a_storm_s_findings_from_their_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer_open: bool) -> None:
    """`hookproof report` over a failing storm's history reads its findings from their rows a
    view at a time (`stored_report`), never as the whole document with every finding
    (`saved_document`, which would hold a million-attempt storm's ~850,000 at once): the same
    four files, byte for byte. A history at rest is read as immutable (no -wal or -shm left
    beside it); one with a -wal beside it (a writer may hold it) is read as before."""
    import sqlite3

    from typer.testing import CliRunner

    from hookproof.cli import app
    from hookproof.reports import REPORT_FILES
    from hookproof.scenarios import saved_report

    events = [_event(i) for i in range(30)]
    outcome = finish_storm(_spec(tmp_path), events, _attempts(events), started_at=1000.0, stopped_at=1002.0,
                           observe=lambda: Observation(2000.0, ()))
    assert outcome.report.verdict == "fail"
    history = outcome.paths["history"]
    beside = [history.with_name(history.name + suffix) for suffix in ("-wal", "-shm")]
    for path in beside:
        path.unlink(missing_ok=True)
    writer = sqlite3.connect(history) if writer_open else None
    if writer is not None:
        writer.execute("SELECT count(*) FROM meta").fetchone()  # a reader in WAL mode: -wal and -shm beside it
        assert beside[0].exists()

    def whole(db: sqlite3.Connection) -> None:
        raise AssertionError("the report's findings were read as one document")

    monkeypatch.setattr(saved_report, "saved_document", whole)
    again = tmp_path / "again"
    done = CliRunner().invoke(app, ["report", "--history", str(history), "--out", str(again)])
    assert done.exit_code == 0, done.output
    for name in REPORT_FILES.values():
        assert (again / name).read_bytes() == (history.parent / name).read_bytes(), name
    if writer is not None:
        writer.close()
    else:
        assert [path.name for path in beside if path.exists()] == []


def test_missing_records_make_a_partial_failing_report(tmp_path: Path) -> None:
    events = [_event(0)]
    obs = Observation(2000.0, (Effect("renewal:in_0"),))
    outcome = finish_storm(_spec(tmp_path), events, _attempts(events), started_at=1000.0, stopped_at=1002.0,
                           observe=lambda: obs, partial_reason="worker w2 sent no closing message")
    assert outcome.report.partial and outcome.report.verdict == "unknown" and outcome.exit_code == 1


def test_an_observer_that_fails_is_an_error_verdict(tmp_path: Path) -> None:
    def broken() -> Observation:
        raise ValueError("no database")

    outcome = finish_storm(_spec(tmp_path), [], [], started_at=1.0, stopped_at=2.0, observe=broken)
    assert outcome.report.scenarios[0].verdict == "error" and outcome.exit_code == 1
    assert "no database" in (outcome.report.scenarios[0].reason or "")


@pytest.mark.parametrize("name", ["rate_per_s", "duration_s", "sender_timeout_s", "time_scale", "settle_deadline_s"])
def test_a_spec_refuses_numbers_that_are_not_finite(tmp_path: Path, name: str) -> None:
    with pytest.raises(SpecError, match=f"{name}: must be a finite number, got inf"):
        StormSpec(**{**_spec(tmp_path).__dict__, name: float("inf")})


def test_spec_round_trip_and_refusals(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    assert StormSpec.from_json(spec.to_json()) == spec
    assert "secret" not in spec.to_json().lower()
    with pytest.raises(SpecError, match="unknown storm spec field"):
        StormSpec.from_json('{"target_url": "http://127.0.0.1", "secret": "x"}')
    with pytest.raises(SpecError, match="duplicates"):
        StormSpec(target_url="http://127.0.0.1", duplicates=2.0)
    with pytest.raises(SpecError, match="shape"):
        StormSpec(target_url="http://127.0.0.1", shape="square")


def test_secrets_come_from_the_environment_only() -> None:
    assert secrets_from_env({SECRETS_ENV: secrets_to_env(["whsec_a", "whsec_b"])}) == ["whsec_a", "whsec_b"]
    for bad in ({}, {SECRETS_ENV: "whsec_plain"}, {SECRETS_ENV: "[]"}, {SECRETS_ENV: '[""]'}):
        with pytest.raises(SpecError) as info:
            secrets_from_env(bad)
        assert "whsec" not in str(info.value)


def test_a_storm_with_subscriptions_checks_their_states(tmp_path: Path) -> None:
    sub = Event(id="evt_s1", type="customer.subscription.updated", created=1, created_us=1, object_type="subscription",
                object_id="sub_1", version=2, object={}, status="past_due")
    events = [_event(0), sub]
    obs = Observation(2000.0, (Effect("renewal:in_0"),), (ObjectState("sub_1", "active", 1),))
    report = storm_scenario(_spec(tmp_path), events, _attempts(events), [obs], settled=True, started_at=1000.0,
                            duration_s=2.0)
    assert [c.check_id for c in report.checks] == list(STORM_CHECKS)
    assert report.verdict == "fail" and {f.check_id for f in report.findings} == {"stale"}



def test_a_storm_whose_observer_reads_no_state_makes_no_truth(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """An observer that says it reads the states of no kind (``state_kinds`` empty): the state
    checks are left out whatever the storm sent, so the objects' truth is never made
    (`reads_states`); one that does not say, or names a kind, gets it."""
    from hookproof.scenarios.history_expectations import ExpectationScan

    assert not reads_states([Observation(1.0, (), state_kinds=frozenset())])
    assert not reads_states([Observation(1.0, ()), Observation(2.0, (), state_kinds=frozenset())])
    assert reads_states([Observation(1.0, ())]) and reads_states([])
    assert reads_states([Observation(1.0, (), state_kinds=frozenset({"subscription"}))])
    sub = Event(id="evt_s1", type="customer.subscription.updated", created=1, created_us=1, object_type="subscription",
                object_id="sub_1", version=2, object={}, status="past_due")
    events = [_event(0), _event(1), sub]
    effects = (Effect("renewal:in_0"), Effect("renewal:in_0"))
    made: list[int] = []
    truth = ExpectationScan._truth

    def counted(self: ExpectationScan, *args: object, **kwargs: object) -> object:
        made.append(1)
        return truth(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ExpectationScan, "_truth", counted)
    blind = Observation(2000.0, effects, state_kinds=frozenset())
    report = storm_scenario(_spec(tmp_path), events, _attempts(events), [blind], settled=True, started_at=1000.0,
                            duration_s=2.0)
    assert made == []
    assert [c.check_id for c in report.checks] == [c for c in STORM_CHECKS if c not in ("stale", "regressed")]
    assert report.verdict == "fail" and sorted(f.check_id for f in report.findings) == ["counter", "counter", "duplicated", "lost"]
    reading = Observation(2000.0, effects, (ObjectState("sub_1", "active", 1),))
    report = storm_scenario(_spec(tmp_path), events, _attempts(events), [reading], settled=True, started_at=1000.0,
                            duration_s=2.0)
    assert made == [1] and [c.check_id for c in report.checks] == list(STORM_CHECKS)
    assert sorted(f.check_id for f in report.findings) == ["counter", "counter", "duplicated", "lost", "stale"]

def test_a_storm_uses_the_team_s_business_keys_and_counters(tmp_path: Path) -> None:
    """The storm's master re-keys what the workers sent with the team's mapping, as certify does."""
    from hookproof.scenarios.business_keys import CounterRule, KeyMapping, to_plain

    events = [Event(id=f"evt_{i}", type="invoice.paid", created=i, created_us=i, object_type="invoice",
                    object_id=f"in_{i}", version=1, object={"id": f"in_{i}", "object": "invoice", "customer": "cus_1",
                                                            "amount_paid": 1500}, business_key=f"renewal:in_{i}",
                    amount=1500) for i in range(2)]
    mapping = KeyMapping({"invoice.paid": "paid:{data.object.id}"}, STRIPE,
                         {"invoice.paid": CounterRule("{data.object.customer}", "data.object.amount_paid")})
    spec = _spec(tmp_path).model_copy(update={"keys": to_plain(mapping)})
    good = Observation(2000.0, (Effect("paid:in_0"), Effect("paid:in_1")), counters={"cus_1": 3000})
    report = storm_scenario(spec, events, _attempts(events), [good], settled=True, started_at=1000.0, duration_s=2.0)
    assert report.verdict == "pass", [(c.check_id, c.detail) for c in report.checks]
    doubled = Observation(2000.0, good.effects, counters={"cus_1": 4500})
    report = storm_scenario(spec, events, _attempts(events), [doubled], settled=True, started_at=1000.0,
                            duration_s=2.0)
    assert [(f.check_id, f.key, f.message) for f in report.findings] == [
        ("counter", "cus_1", "counter is 4500; the provider's truth implies 3000 "
                             "(+1500 invoice.paid evt_0, +1500 invoice.paid evt_1)")]


def test_the_storm_s_checks_over_its_history_streamed_from_disk_are_those_over_the_list(tmp_path: Path) -> None:
    """After a storm the master streams history.sqlite once (`HistoryFile`); what it finds
    is what the checks find over the same attempts in memory: findings, stats, kept attempts."""
    from dataclasses import replace

    from hookproof.simulator.delivery.history import History, HistoryFile, Outcome

    sub = Event(id="evt_s1", type="customer.subscription.updated", created=1, created_us=1, object_type="subscription",
                object_id="sub_1", version=2, object={}, status="past_due")
    events = [_event(i) for i in range(30)] + [sub]
    attempts = _attempts(events, copies=3)
    attempts[4] = replace(attempts[4], status=500, outcome=Outcome.SERVER_ERROR)  # a 5xx, a notable attempt
    attempts[7] = replace(attempts[7], status=409, outcome=Outcome.REJECTED)
    effects = [Effect(e.business_key or "") for e in events[1:]] + [Effect("renewal:in_3"), Effect("renewal:ghost")]
    obs = Observation(2000.0, tuple(effects), (ObjectState("sub_1", "active", 1),))
    path = tmp_path / "history.sqlite"
    with History(path) as history:
        in_memory = [history.record(a) for a in attempts]
    listed = storm_scenario(_spec(tmp_path), events, in_memory, [obs], settled=True, started_at=1000.0, duration_s=2.0)
    assert {f.check_id for f in listed.findings} >= {"duplicated", "lost", "unexpected", "no_server_error", "stale"}
    with HistoryFile(path) as streamed:
        from_disk = storm_scenario(_spec(tmp_path), events, streamed, [obs], settled=True, started_at=1000.0,
                                   duration_s=2.0)
    assert from_disk == listed


def test_rekeyed_reads_the_attempts_as_business_keys_rekeyed_makes_them() -> None:
    from dataclasses import replace

    from hookproof.loadtests.verdict import Rekeyed
    from hookproof.scenarios.business_keys import rekeyed

    events = [_event(i) for i in range(4)]
    attempts = _attempts(events)
    attempts[1] = replace(attempts[1], event_id="msg_renamed")  # joined through its delivery id
    attempts[2] = replace(attempts[2], delivery_id="other_shape")
    renamed = [replace(e, business_key=f"paid:{e.object_id}") if i % 2 else e for i, e in enumerate(events)]
    view = Rekeyed(attempts, renamed)
    assert list(view) == rekeyed(attempts, renamed) == [view[i] for i in range(len(view))]
    assert view[2:5] == rekeyed(attempts, renamed)[2:5] and len(view) == len(attempts)


def test_throughput_counts_each_attempt_in_its_bucket_in_one_pass() -> None:
    from dataclasses import replace

    from hookproof.simulator.delivery.history import Outcome

    events = [_event(i) for i in range(5)]
    # sent 37.3 s apart from half a second before the start; every third one timed out
    spread = [replace(a, sent_at=999.5 + 37.3 * i, outcome=Outcome.TIMEOUT if i % 3 == 0 else a.outcome)
              for i, a in enumerate(_attempts(events))]
    out = throughput(spread, 1000.0, 10.0, max_points=4)
    assert out["bucket_s"] == 84.0  # ceil(335.2 s / 4)
    assert out["series"] == [[0.0, round(3 / 84, 2), round(2 / 84, 2)], [84.0, round(2 / 84, 2), round(1 / 84, 2)],
                             [168.0, round(2 / 84, 2), round(1 / 84, 2)], [252.0, round(3 / 84, 2), round(2 / 84, 2)]]


def test_the_end_of_a_storm_hands_freed_columns_back_on_glibc() -> None:
    """`hand_back_freed_memory` sets glibc's mmap threshold (True) and changes nothing elsewhere."""
    import platform

    from hookproof.loadtests.verdict import hand_back_freed_memory

    assert hand_back_freed_memory() is (platform.libc_ver()[0] == "glibc")
