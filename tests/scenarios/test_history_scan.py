"""The checks over one history read two ways: as certify's list in memory, and streamed
from disk in one pass (a storm's `HistoryFile`): every expectation and every check
result must be the same."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from hookproof.scenarios.check_index import build_index, expectations_and_index
from hookproof.scenarios.checks import ALL_CHECKS, CheckResult, check_safe, run_checks
from hookproof.scenarios.history_scan import scan_history
from hookproof.scenarios.observations import Effect, Expectations, ObjectState, Observation, expectations_from
from hookproof.simulator.delivery.history import Attempt, Completion, History, HistoryFile, Outcome
from hookproof.simulator.events import Event

T0 = 1_700_000_000.0
#: Answers drawn for an attempt: mostly 2xx, and every kind of failure.
RESULTS = ("200",) * 6 + ("409", "500", "400", "429", "timeout", "dropped", "refused", "503")
STATUSES = ("active", "past_due", "canceled")


def _answer(result: str, rnd: random.Random) -> tuple[int | None, Outcome, Completion]:
    if result == "timeout":
        return None, Outcome.TIMEOUT, Completion.UNKNOWN
    if result == "dropped":
        return 200, Outcome.DROPPED, Completion.UNKNOWN
    if result == "refused":
        return None, Outcome.CONNECTION_ERROR, rnd.choice([Completion.FAIL, Completion.UNKNOWN])
    status = int(result)
    if status < 300:
        return status, Outcome.ACKED, Completion.OK
    if status < 500:
        return status, Outcome.REJECTED, Completion.FAIL
    return status, Outcome.SERVER_ERROR, Completion.UNKNOWN


def run_of(seed: int, n_events: int = 250) -> tuple[list[Event], list[Attempt], list[Observation]]:
    """A run where every check has something to say: keyed and unkeyed attempts, invalid
    ones, ids the envelope renamed (``msg_…``), money, object states, slow acks, duplicates,
    lost and unexpected effects, shared Idempotency-Keys; attempts out of send order."""
    rnd = random.Random(seed)
    events: list[Event] = []
    attempts: list[Attempt] = []
    keys: list[str] = []
    objects = [f"sub_{seed}_{i}" for i in range(15)]
    for i in range(n_events):
        eid = f"evt_{seed}_{i}"
        if rnd.random() < 0.3:
            obj, version = rnd.choice(objects), rnd.randint(1, 5)
            event = Event(eid, "customer.subscription.updated", 0, 0, "subscription", obj, version, {},
                          status=rnd.choice(STATUSES),
                          business_key=f"renewal:{obj}:{version}" if rnd.random() < 0.3 else None)
        else:
            money = rnd.random() < 0.3
            obj = f"re_{seed}_{i}" if money else f"pi_{seed}_{rnd.randint(0, n_events // 2)}"
            event = Event(eid, "charge.refunded", 0, 0, "refund" if money else "payment_intent", obj, 1, {},
                          business_key=f"refund:{obj}" if money else f"license:{obj}",
                          amount=rnd.randint(1, 500) if money and rnd.random() < 0.9 else None)
        events.append(event)
        if rnd.random() < 0.05:
            continue  # never sent
        recorded = eid if rnd.random() < 0.7 else f"msg_{seed}_{i}"
        for copy in range(rnd.choice([1, 1, 2, 3, 5])):
            status, outcome, completion = _answer(rnd.choice(RESULTS), rnd)
            valid = rnd.random() > 0.1
            key = event.business_key if rnd.random() < 0.8 else None
            if not valid and rnd.random() < 0.3:
                key = f"license:forged_{seed}_{i}"
            latency = rnd.choice([5.0, 50.0, 200.0, 9000.0, 16000.0, 31000.0, rnd.uniform(1, 300)])
            sent = T0 + rnd.uniform(0, 1000)
            attempts.append(Attempt(
                recorded, f"dlv_{eid}_{copy}" if rnd.random() < 0.9 else f"other_{i}_{copy}", 1, key,
                event.object_id if rnd.random() < 0.9 else None, event.version, rnd.choice(["a.b", "c.d"]),
                tuple(rnd.sample(["copies=3", "forged", "stale", "livemode-mismatch", "future-timestamp", "kill",
                                  "burst=4"], rnd.randint(0, 2))),
                valid, sent, sent + latency / 1000, status, outcome, completion, latency,
                amount=event.amount if rnd.random() < 0.8 else 7))
        if event.business_key is not None and rnd.random() < 0.9:
            keys.append(event.business_key)
    rnd.shuffle(attempts)
    effects = [Effect(k, amount=rnd.choice([None, 100, 5]), idempotency_key=rnd.choice([None, f"i_{k}", "shared"]))
               for k in keys for _ in range(rnd.choice([0, 1, 1, 1, 2]))] + [Effect("license:ghost")]
    states = tuple(ObjectState(o, rnd.choice([*STATUSES, "unknown-status"]), rnd.choice([None, 1, 3, 5]))
                   for o in objects if rnd.random() < 0.8)
    kinds = frozenset({"subscription"}) if seed % 2 else None
    observations = [Observation(T0 + 2000, tuple(effects[: len(effects) // 2]), states[:5], kinds),
                    Observation(T0 + 1500, tuple(effects), states, kinds)]
    return events, attempts, observations


def recorded(path: Path, attempts: list[Attempt]) -> list[Attempt]:
    """Record `attempts` in a history file at `path`; the attempts as recorded (indexed)."""
    with History(path) as history:
        for a in attempts:
            history.record(a)
        return history.attempts()


def expectations(events: list[Event], history: object) -> Expectations:
    return expectations_from(events, history, sender_timeout_s=10.0, max_attempts_per_event=3)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(6))
def test_every_check_gives_the_same_result_over_the_list_and_over_the_file_streamed(tmp_path: Path,
                                                                                   seed: int) -> None:
    events, attempts, observations = run_of(seed)
    in_memory = recorded(tmp_path / "history.sqlite", attempts)
    ids = list(ALL_CHECKS)
    listed_expectations = expectations(events, in_memory)
    listed = run_checks(ids, in_memory, listed_expectations, observations)
    assert {r.check_id for r in listed if r.findings} >= {
        "duplicated", "lost", "unexpected", "recovered", "stale", "counter", "duplicate_acked", "retry_storm",
        "valid_not_rejected", "no_server_error", "ack_latency", "downstream_idempotency"}

    with HistoryFile(tmp_path / "history.sqlite") as streamed:
        one_pass_expectations, index = expectations_and_index(
            events, streamed, observations, sender_timeout_s=10.0, max_attempts_per_event=3)
        assert one_pass_expectations == listed_expectations
        assert expectations(events, streamed) == listed_expectations
        one_pass: list[CheckResult] = [check_safe(i, ALL_CHECKS[i], streamed, one_pass_expectations, observations,
                                                  index=index) for i in ids]
        assert one_pass == listed
        assert run_checks(ids, streamed, listed_expectations, observations) == listed


def test_a_list_whose_indexes_are_not_positions_names_the_recorded_indexes() -> None:
    events, attempts, observations = run_of(7, n_events=60)
    renumbered = [replace(a, index=1000 + 2 * i) for i, a in enumerate(attempts)]
    exp = expectations(events, renumbered)
    named = {i for r in run_checks(list(ALL_CHECKS), renumbered, exp, observations) for f in r.findings
             for i in f.attempts}
    assert named and named <= {a.index for a in renumbered}


def test_the_completions_are_read_from_the_codes_as_a_list_would_be() -> None:
    """`Completions`: the scan's completion codes read as the list of completions (None
    for an invalid attempt), equal to that list and to no other; read without a list of
    them held (a storm's million would be 8 MB of references)."""
    import gc

    import numpy as np

    from hookproof.scenarios.history_scan import Completions

    listed = [Completion.OK, Completion.FAIL, Completion.UNKNOWN, None, Completion.OK]
    column = Completions(np.array([0, 1, 2, 3, 0], np.int8))
    assert len(column) == 5 and column[3] is None and column[-1] is Completion.OK and column[1:3] == listed[1:3]
    assert list(column) == listed and column == listed and column == tuple(listed)
    assert column != listed[:-1] and column != [*listed[:-1], Completion.FAIL] and column != "ok"
    assert [column[i] for i in range(5)] == listed and column[::2] == listed[::2]
    assert not any(isinstance(held, list) for held in gc.get_referents(column))
    with pytest.raises(IndexError):
        column[5]


def test_the_scan_keeps_no_attempt_and_counts_them_once() -> None:
    events, attempts, observations = run_of(8, n_events=80)
    scan = scan_history(iter(attempts), sender_timeout_s=10.0, events=iter(events))
    assert scan.size == len(attempts) == len(scan.completions)
    assert sum(len(p) for p in scan.by_event.values()) == len(attempts)
    assert not any(isinstance(v, Attempt) for v in [*vars(scan).values(), *vars(scan.expect).values()])
    index = build_index(attempts, expectations(events, attempts), observations)
    assert sorted(p for positions in index.by_event.values() for p in positions) == list(range(len(attempts)))


def test_a_history_file_s_acked_latencies_are_read_again_when_asked_for(tmp_path: Path) -> None:
    """A pass over a history file keeps no acked latency, only their count
    (`AckedLatencies`): read from disk when asked for, they are the list pass's, in order;
    a history holding fewer acked attempts than the pass counted says so."""
    from hookproof.scenarios.history_scan import AckedLatencies

    events, attempts, observations = run_of(12, n_events=400)
    in_memory = recorded(tmp_path / "history.sqlite", attempts)
    listed = scan_history(in_memory, sender_timeout_s=10.0).acked_latencies
    with HistoryFile(tmp_path / "history.sqlite") as streamed:
        lazy = scan_history(streamed, sender_timeout_s=10.0).acked_latencies
        assert isinstance(lazy, AckedLatencies) and len(lazy) == len(listed) > 100
        assert lazy.values() == listed and list(lazy) == list(listed) and lazy[3] == listed[3]
        assert lazy.values() is not lazy.values()  # not kept: a new read each time
        with pytest.raises(ValueError, match="counted"):
            AckedLatencies(len(listed) + 1, streamed.acked_latencies).values()


def test_a_storm_sized_history_gives_the_same_findings_in_memory_and_streamed(tmp_path: Path) -> None:
    """Thousands of events with every kind of attempt, as a storm's history holds them:
    the checks over the list certify keeps and over the file a storm streams agree on
    every result, findings' text and attempts included; the scan keeps its columns."""
    events, attempts, observations = run_of(11, n_events=6000)
    in_memory = recorded(tmp_path / "history.sqlite", attempts)
    ids = list(ALL_CHECKS)
    listed = run_checks(ids, in_memory, expectations(events, in_memory), observations)
    assert sum(len(r.findings) for r in listed) > 1000
    with HistoryFile(tmp_path / "history.sqlite") as streamed:
        one_pass_expectations, index = expectations_and_index(
            iter(events), streamed, observations, sender_timeout_s=10.0, max_attempts_per_event=3)
        assert one_pass_expectations == expectations(events, in_memory)
        assert [check_safe(i, ALL_CHECKS[i], streamed, one_pass_expectations, observations, index=index)
                for i in ids] == listed
    assert sum(n for _, n in index.by_event.sizes()) == len(in_memory)


@pytest.mark.parametrize(("chunk", "small", "grouped", "runs", "by_id"), [
    (7, None, False, False, False), (1000, None, False, False, False), (None, None, False, False, False),
    (1000, 0, False, False, False), (None, 500, False, False, False), (7, None, True, True, False),
    (1000, 0, True, True, False), (None, None, True, True, False), (7, None, False, True, False),
    (7, 0, False, True, False), (40, 300, False, True, False), (1000, 0, False, False, True),
    (7, 0, True, True, True)])
def test_the_columnar_pass_finds_what_the_dict_pass_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         chunk: int | None, small: int | None, grouped: bool,
                                                         runs: bool, by_id: bool) -> None:
    """A storm-sized history with every kind of fault (duplicates, losses, regressions,
    stale states, counters, invalid and renamed ids, slow acks), read in chunks of every
    size: the columnar pass gives the expectations the dict pass before it gave
    (`oracle_scan`), and every check over either index gives the same result, findings'
    text, order and attempts included, over the list and over the file streamed. The
    event ids coded as a dict, as bytes from the first (`small` 0, a storm's million) or
    from the 500th on (`IdCodes.SMALL`); the attempts shuffled, or each event's together
    (`grouped`: runs of one id and of one key, coded once a run, across chunk ends too).
    With `runs`, chunks of any size are coded by runs (the keys, and the ids when the
    world's are bytes, over the world's codes, a renamed id or a forged key in the
    mapping's own table): shuffled, chunks of world ids only and chunks with a renamed
    id or a forged key take turns. With `by_id`, the events come in order of their ids,
    as a storm's spool hands them out: the world's ids, held as bytes, are then found by
    bisection, without a table."""
    from hookproof.scenarios import history_scan
    from hookproof.scenarios.id_codes import IdCodes
    from tests.scenarios.oracle_scan import old_expectations_and_index

    if chunk is not None:
        monkeypatch.setattr(history_scan, "CHUNK", chunk)
    if small is not None:
        monkeypatch.setattr(IdCodes, "SMALL", small)
    events, attempts, observations = run_of(13, n_events=6000 if chunk != 7 else 1500)
    given = sorted(events, key=lambda e: e.id.encode()) if by_id else events  # sorted() is stable: first Event first
    if grouped:
        attempts.sort(key=lambda a: a.event_id)
    if runs:
        monkeypatch.setattr(history_scan, "_RUNS_FROM", 2)  # runs coded once in chunks of every size
    first_read = observations[1]  # an earlier read showing every object at v5: the later ones regress
    observations = [Observation(T0 + 1200, (), tuple(ObjectState(s.object_id, s.status, 5) for s in first_read.states),
                                first_read.state_kinds), *observations]
    in_memory = recorded(tmp_path / "history.sqlite", attempts)
    ids = list(ALL_CHECKS)
    old_expectations, old_index = old_expectations_and_index(
        events, in_memory, observations, sender_timeout_s=10.0, max_attempts_per_event=3)
    old = [check_safe(i, ALL_CHECKS[i], in_memory, old_expectations, observations, index=old_index) for i in ids]
    assert {r.check_id for r in old if r.findings} >= {
        "duplicated", "lost", "unexpected", "recovered", "regressed", "stale", "counter", "duplicate_acked",
        "retry_storm", "valid_not_rejected", "no_server_error", "ack_latency", "downstream_idempotency"}
    with HistoryFile(tmp_path / "history.sqlite") as streamed:
        for history in (in_memory, streamed):
            new_expectations, new_index = expectations_and_index(
                iter(given), history, observations, sender_timeout_s=10.0, max_attempts_per_event=3)
            if by_id:  # the world's ids, as bytes and in order, hold no table: bisected
                assert not len(new_index.scan.event_codes.base._slots)  # type: ignore[union-attr]
            assert new_expectations == old_expectations
            assert list(new_expectations.expected) == list(old_expectations.expected)
            assert list(new_expectations.truth) == list(old_expectations.truth)
            assert {k: list(v) for k, v in new_index.by_key.items()} == {k: list(v) for k, v in old_index.by_key.items()}
            assert list(new_index.by_key) == list(old_index.by_key)
            assert new_index.completions == old_index.completions and new_index.notable == old_index.notable
            assert set(new_index.acked_events) == old_index.acked_events
            new = [check_safe(i, ALL_CHECKS[i], history, new_expectations, observations, index=new_index)
                   for i in ids]
            assert new == old
            assert [r.stats for r in new] == [r.stats for r in old]
            assert [f.to_dict() for r in new for f in r.findings] == [f.to_dict() for r in old for f in r.findings]


@pytest.mark.parametrize("small", [None, 50])
@pytest.mark.parametrize("hint", ["exact", "none", "short", "long"])
def test_columns_sized_from_a_length_hint_hold_what_grown_ones_hold(hint: str, small: int | None,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass and the world's columns are sized from the inputs' length hints (a storm's
    history and spooled events say how long they are): an exact hint, none (a generator:
    the columns grow), one too short (they grow past it) and one too long (the spare room
    is cut) give the same expectations, index and check results as lists of known length,
    across chunks (`CHUNK` 64). With `small` 50 (`IdCodes.SMALL`), a hint past it codes
    the world's ids, keys and objects as columns from the first (room for the hint), one
    below it as a dict first: the same codes either way."""
    from hookproof.scenarios import history_scan, world_columns
    from hookproof.scenarios.id_codes import IdCodes

    monkeypatch.setattr(history_scan, "CHUNK", 64)
    monkeypatch.setattr(world_columns, "CHUNK", 64)
    if small is not None:
        monkeypatch.setattr(IdCodes, "SMALL", small)
    events, attempts, observations = run_of(21, n_events=300)
    sizes = {"exact": (len(events), len(attempts)), "short": (7, 100), "long": (3 * len(events), 5 * len(attempts))}

    class Hinted:
        def __init__(self, items: list, n: int | None) -> None:
            self.items, self.n = items, n

        def __iter__(self):  # type: ignore[no-untyped-def]
            return iter(self.items)

        def __length_hint__(self) -> int:
            return self.n if self.n is not None else NotImplemented

    n_events, n_attempts = sizes.get(hint, (None, None))
    want_exp, want_index = expectations_and_index(events, attempts, observations, sender_timeout_s=10.0,
                                                  max_attempts_per_event=3)
    got_exp, got_index = expectations_and_index(Hinted(events, n_events), Hinted(attempts, n_attempts),  # type: ignore[arg-type]
                                                observations, sender_timeout_s=10.0, max_attempts_per_event=3)
    assert got_exp == want_exp and list(got_exp.truth) == list(want_exp.truth)
    assert {k: list(v) for k, v in got_index.by_key.items()} == {k: list(v) for k, v in want_index.by_key.items()}
    assert got_index.completions == want_index.completions and got_index.notable == want_index.notable
    assert len(got_index.scan.event_of) == len(attempts) == len(got_index.completions)  # type: ignore[union-attr]
    got_index.history = attempts  # read back by position by the checks (the hinted iterable is not)
    ids = list(ALL_CHECKS)
    assert [check_safe(i, ALL_CHECKS[i], attempts, got_exp, observations, index=got_index) for i in ids] == \
        [check_safe(i, ALL_CHECKS[i], attempts, want_exp, observations, index=want_index) for i in ids]


@pytest.mark.parametrize("small", [None, 0])
@pytest.mark.parametrize(("seed", "source"), [(31, "same"), (32, "reversed"), (33, "half"), (34, "shuffled")])
def test_an_index_over_expectations_from_another_pass_files_what_the_dict_path_files(
        seed: int, source: str, small: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """`build_index` over expectations made by a pass of their own (`expectations_from`:
    their event and key codes are not the index's scan's) files the attempts without a key
    under their event's key by name, in numpy (`EventKeys` over the expectations' event
    codes); the same keys, in the same order, with the same positions, and the same check
    results, as the dict path (`_keys_one_by_one`, the expectations as plain dicts). The
    expectations come from the same history, from it reversed, from its first half, or
    shuffled (their codes differ from the index's; keys only events give, keys the index's
    history lacks); ids coded as a dict or as bytes (`IdCodes.SMALL` 0)."""
    from hookproof.scenarios.expectation_views import EventKeys
    from hookproof.scenarios.id_codes import IdCodes

    if small is not None:
        monkeypatch.setattr(IdCodes, "SMALL", small)
    events, attempts, observations = run_of(seed, n_events=400)
    source_history = {"same": attempts, "reversed": attempts[::-1], "half": attempts[: len(attempts) // 2],
                      "shuffled": random.Random(seed).sample(attempts, len(attempts))}[source]
    columns = expectations(events, source_history)
    plain = replace(columns, expected=dict(columns.expected))
    fast, slow = build_index(attempts, columns, observations), build_index(attempts, plain, observations)
    assert isinstance(fast.expected_keys, EventKeys) and not isinstance(slow.expected_keys, EventKeys)
    assert list(fast.by_key) == list(slow.by_key)
    assert {k: list(v) for k, v in fast.by_key.items()} == {k: list(v) for k, v in slow.by_key.items()}
    assert any(fast.scan.key_of == -1)  # type: ignore[union-attr]  # attempts without a key were filed
    assert len(fast.by_key) > len(fast.scan.key_codes)  # type: ignore[union-attr]  # keys only events give
    ids = list(ALL_CHECKS)
    assert [check_safe(i, ALL_CHECKS[i], attempts, columns, observations, index=fast) for i in ids] == \
        [check_safe(i, ALL_CHECKS[i], attempts, columns, observations, index=slow) for i in ids]


@pytest.mark.parametrize("seed", [41, 42])
def test_expectations_released_as_read_equal_those_of_a_scan_kept_whole(seed: int) -> None:
    """`HistoryScan.expectations(release=True)` (a storm's pass: the scan's part freed as
    it is read) gives the expectations a scan kept whole gives, truth included, and hands
    the part over: the scan has none left (ValueError), its columns and the world's key
    codes, keys and amounts are emptied."""
    events, attempts, _ = run_of(seed, n_events=300)
    kept = scan_history(attempts, sender_timeout_s=10.0, events=events)
    released = scan_history(attempts, sender_timeout_s=10.0, events=events)
    part = released.expect
    assert part is not None
    want = kept.expectations(max_attempts_per_event=3)
    got = released.expectations(max_attempts_per_event=3, release=True)
    assert got == want and list(got.truth.items()) == list(want.truth.items())
    assert list(got.expected.items()) == list(want.expected.items())
    assert kept.expect is not None and kept.expectations(max_attempts_per_event=3) == want  # kept whole: again
    assert released.expect is None
    with pytest.raises(ValueError, match="no expectations"):
        released.expectations(max_attempts_per_event=3)
    for column in (part.first_valid, part.key_first, part.key_amount, part.key_valid, part.unkeyed_first,
                   part.unkeyed_amount, part.unkeyed_valid, part.event_world, part.world.key, part.world.amount):
        assert len(column) == 0
    assert len(part.world.keys.names) == 0



@pytest.mark.parametrize("hinted", [True, False])
@pytest.mark.parametrize("release", [False, True])
def test_expectations_without_the_truth_leave_it_empty_and_the_rest_as_is(release: bool, hinted: bool) -> None:
    """A pass made without the truth (`scan_history(truth=False)`: a storm whose observer reads
    no state) gives the expectations the whole pass gives but for the truth, which names no
    object; the events' status, version, type and time are never kept (the object column
    stays for the expectations, freed with `release`), with or without a length hint."""
    events, attempts, _ = run_of(42, n_events=300)
    want = scan_history(attempts, sender_timeout_s=10.0, events=events).expectations(max_attempts_per_event=3)
    assert len(want.truth) > 0
    # without a length hint (an iterator), the kept columns grow as the events come
    scan = scan_history(attempts, sender_timeout_s=10.0, events=events if hinted else iter(events), truth=False)
    part = scan.expect
    assert part is not None
    world = part.world
    n_world = len({e.id for e in events})
    assert [len(c) for c in (world.obj, world.status, world.version, world.kind, world.at_us)] == [n_world, 0, 0, 0, 0]
    got = scan.expectations(max_attempts_per_event=3, release=release)
    assert replace(got, truth={}) == replace(want, truth={})
    assert list(got.expected.items()) == list(want.expected.items())
    assert list(got.money.items()) == list(want.money.items())
    assert len(got.truth) == 0 and list(got.truth.items()) == []
    obj = next(iter(want.truth))
    assert obj not in got.truth and got.truth.get(obj) is None
    assert len(got.truth_of_kinds(None)) == 0 and len(got.truth_of_kinds(frozenset({want.truth[obj].kind}))) == 0
    assert len(world.obj) == (0 if release else n_world)


def test_a_pass_past_its_int32_positions_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass's positions per event and per key are int32 columns: a history of more
    than `MAX_ATTEMPTS` attempts (here as many as the run's events, over chunks of 64)
    raises a ValueError naming the bound rather than wrapping a position around; one of
    exactly that many passes; a world of more events than that is refused too."""
    from hookproof.scenarios import history_scan

    events, attempts, _ = run_of(43, n_events=300)
    bound = len(events)
    assert len(attempts) > bound
    monkeypatch.setattr(history_scan, "CHUNK", 64)
    monkeypatch.setattr(history_scan, "MAX_ATTEMPTS", bound)
    with pytest.raises(ValueError, match=f"more than {bound} attempts"):
        scan_history(attempts, sender_timeout_s=10.0, events=events)
    assert scan_history(attempts[:bound], sender_timeout_s=10.0, events=events).size == bound
    monkeypatch.setattr(history_scan, "MAX_ATTEMPTS", bound - 1)
    with pytest.raises(ValueError, match=f"{bound} events: a pass codes at most {bound - 1}"):
        scan_history(attempts[:10], sender_timeout_s=10.0, events=events)
