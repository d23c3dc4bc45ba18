"""`EffectRows`: effect rows held as columns are the tuple of the same rows to every reader
(equality, hash, indexing, counts, the scope, settle's comparisons) and give the checks
the same verdicts, stats and findings."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from hookproof.scenarios import key_table, observations, observers
from hookproof.scenarios.check_index import expectations_and_index
from hookproof.scenarios.checks import ALL_CHECKS
from hookproof.scenarios.errors import ObserverError
from hookproof.scenarios.id_codes import IdCodes
from hookproof.scenarios.observations import Effect, EffectRows, Observation, effect_rows
from hookproof.scenarios.observers import SqlObserver, _same, _sharing, observation_from_data
from hookproof.scenarios.scope import Scope
from tests.scenarios.test_history_scan import run_of

ROWS = (Effect("refund:ch_1", 100, "idem-1"), Effect("pay/pi_1"), Effect(""), Effect("pay/pi_1", None, "idem-2"),
        Effect("\ud800:in_1", 7), Effect("é:sub_1"), Effect(""))


@pytest.fixture
def as_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every read of one row or more held as columns."""
    monkeypatch.setattr(observations, "EFFECT_ROWS_FROM", 1)


def _columns(rows: tuple[Effect, ...]) -> EffectRows:
    made = effect_rows([e.business_key for e in rows], [e.amount for e in rows], [e.idempotency_key for e in rows])
    assert isinstance(made, EffectRows)
    return made


def test_a_small_read_stays_a_tuple_and_a_key_with_nul_too(as_columns: None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(effect_rows(["a\x00b", "c"]), tuple)
    monkeypatch.setattr(observations, "EFFECT_ROWS_FROM", 3)
    assert effect_rows(["a", "b"]) == (Effect("a"), Effect("b")) and isinstance(effect_rows(["a", "b"]), tuple)
    with pytest.raises(ValueError):
        effect_rows(["a"], [1, 2])


def test_rows_as_columns_are_the_tuple(as_columns: None) -> None:
    rows = _columns(ROWS)
    assert rows == ROWS and ROWS == rows and not rows != ROWS
    assert hash(rows) == hash(ROWS)
    assert list(rows) == list(ROWS) and len(rows) == len(ROWS)
    assert [rows[i] for i in range(-len(ROWS), len(ROWS))] == [*ROWS, *ROWS]
    for s in (slice(None), slice(2, 5), slice(5, 2), slice(0, 7, 2), slice(-3, None), slice(6, 7)):
        assert rows[s] == ROWS[s], s
    with pytest.raises(IndexError):
        rows[len(ROWS)]
    assert rows != ROWS[:-1] and rows != (*ROWS[:-1], Effect("x")) and rows != list(ROWS)
    assert rows != _columns((*ROWS[:-1], Effect("", 1))) and rows == _columns(ROWS)
    assert [k for chunk in rows.key_chunks() for k in chunk] == [e.business_key for e in ROWS]
    assert rows.keys(1, 4) == ["pay/pi_1", "", "pay/pi_1"] and rows.keys(3, 3) == []
    assert [None if a != a else int(a) for a in rows.amounts().tolist()] == [e.amount for e in ROWS]
    kept = [True, False, True, True, False, True, False]
    assert rows.compress(kept) == tuple(e for e, k in zip(ROWS, kept) if k)
    assert Counter(rows) == Counter(ROWS)
    only_keys = _columns(tuple(Effect(e.business_key) for e in ROWS))
    assert only_keys._amounts is None and only_keys._idems is None  # no column of Nones kept
    assert rows._starts.dtype.itemsize == 4  # offsets of keys shorter than 2**31 characters: int32
    assert effect_rows([]) == ()


def test_an_observation_reads_the_same(as_columns: None) -> None:
    mine, theirs = Observation(1.0, _columns(ROWS)), Observation(1.0, ROWS)
    assert mine == theirs and hash(mine) == hash(theirs)
    assert list(mine.counts().items()) == list(theirs.counts().items())
    assert mine.counts({"pay/pi_1", ""}) == theirs.counts({"pay/pi_1", ""}) == {"pay/pi_1": 2, "": 2}
    assert _same(mine, theirs) and _same(theirs, mine)
    moved = Observation(2.0, _columns(ROWS[::-1]))
    assert moved.effects != mine.effects and _same(mine, moved)  # a multiset: the order of rows is not compared
    assert not _same(mine, Observation(2.0, _columns(ROWS[:-1])))
    again = Observation(3.0, _columns(ROWS))
    assert _sharing(again, mine).effects is mine.effects
    data = {"effects": [{"business_key": e.business_key, "amount": e.amount, "idempotency_key": e.idempotency_key}
                        for e in ROWS]}
    read = observation_from_data(data, 1.0, observer="http")
    assert isinstance(read.effects, EffectRows) and read.effects == ROWS


@pytest.mark.parametrize("small", [None, 0], ids=["dict", "columns"])
def test_a_scope_keeps_the_same_rows(as_columns: None, small: int | None) -> None:
    scope = Scope(IdCodes(small), IdCodes(small))
    scope.objects.code_all(["in_1", "sub_1"])
    scope.keys.code_all(["pay/pi_1"])
    for rows in (ROWS, ROWS[1:2], (Effect("other"),)):
        mine, theirs = scope.observation(Observation(1.0, _columns(rows))), scope.observation(Observation(1.0, rows))
        assert mine.effects == theirs.effects
        assert isinstance(mine.effects, EffectRows)
    whole = Observation(1.0, _columns(ROWS[1:2]))
    assert scope.observation(whole) is whole  # every row kept: the read itself


@pytest.mark.parametrize("first_by", ["code", "sort"])
@pytest.mark.parametrize("amounts", ["read", "none"])
@pytest.mark.parametrize("small", ["numpy", "walked"])
@pytest.mark.parametrize("seed", range(4))
def test_the_checks_find_the_same(as_columns: None, monkeypatch: pytest.MonkeyPatch, seed: int, small: str,
                                  amounts: str, first_by: str) -> None:
    """Every check over reads held as columns gives the verdict, stats and findings it gives
    over the same reads as tuples (duplicates, lost and unexpected keys, money, shared
    Idempotency-Keys, reads that grow), with the rows' amounts read or none read (the
    expected amounts then stand for every row's), the counter's first row per key found by
    code or by a sort."""
    from hookproof.scenarios import effect_checks

    monkeypatch.setattr(key_table, "SMALL", 0 if small == "numpy" else 10 ** 9)
    monkeypatch.setattr(effect_checks, "_FIRST_BY_CODE", 10 ** 9 if first_by == "code" else 0)
    events, attempts, reads = run_of(seed, n_events=600)
    if amounts == "none":
        reads = [Observation(o.at, tuple(Effect(e.business_key, None, e.idempotency_key) for e in o.effects),
                             o.states, o.state_kinds, o.counters) for o in reads]
    grown = Observation(reads[-1].at + 1, (*reads[-1].effects, *reads[-1].effects[:5]), reads[-1].states)
    reads = [*reads, grown, grown]
    columns = [Observation(o.at, _columns(tuple(o.effects)) if o.effects else (), o.states, o.state_kinds,
                           o.counters) for o in reads]
    assert any(isinstance(o.effects, EffectRows) for o in columns)
    found = []
    for obs in (reads, columns):
        expectations, index = expectations_and_index(events, attempts, obs, sender_timeout_s=10.0,
                                                     max_attempts_per_event=3)
        found.append([(r.check_id, r.verdict, repr(r.stats), [f.to_dict() for f in r.findings])
                      for r in (check(attempts, expectations, obs, index=index) for check in ALL_CHECKS.values())])
    assert found[0] == found[1]
    assert any(findings for _, _, _, findings in found[0])


@pytest.mark.parametrize("threshold", [1, 10 ** 9], ids=["columns", "tuple"])
def test_the_sql_observer_reads_the_rows_as_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    threshold: int) -> None:
    """The effects query read a partition at a time: the same rows, amounts and
    Idempotency-Keys (converted as before), a column it does not return None, and the
    same errors."""
    monkeypatch.setattr(observations, "EFFECT_ROWS_FROM", threshold)
    monkeypatch.setattr(observers, "_PARTITION", 2)
    path = tmp_path / "receiver.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE effects (business_key TEXT, amount INTEGER, idem TEXT)")
        db.executemany("INSERT INTO effects VALUES (?, ?, ?)", [
            ("refund:ch_1", 100, "idem-1"), ("pay/pi_1", None, None), ("", 7, None), (42, None, 5), ("pay/pi_1", 3, "i")])
    url = f"sqlite:///{path}"
    read = SqlObserver(url, "SELECT business_key, amount, idem AS idempotency_key FROM effects").observe()
    assert read.effects == (Effect("refund:ch_1", 100, "idem-1"), Effect("pay/pi_1"), Effect("", 7),
                            Effect("42", None, "5"), Effect("pay/pi_1", 3, "i"))
    assert isinstance(read.effects, EffectRows if threshold == 1 else tuple)
    keys_only = SqlObserver(url, "SELECT business_key, 'x' AS other FROM effects").observe()
    assert keys_only.effects == tuple(Effect(k) for k in ("refund:ch_1", "pay/pi_1", "", "42", "pay/pi_1"))
    last = SqlObserver(url, "SELECT amount AS business_key, business_key FROM effects").observe()
    assert [e.business_key for e in last.effects] == ["refund:ch_1", "pay/pi_1", "", "42", "pay/pi_1"]
    assert SqlObserver(url, "SELECT business_key FROM effects WHERE 0").observe().effects == ()
    with pytest.raises(ObserverError, match=r"must return column\(s\) business_key; missing business_key \(got key\)"):
        SqlObserver(url, "SELECT business_key AS key FROM effects").observe()
    with pytest.raises(ObserverError, match="the effects query failed"):
        SqlObserver(url, "SELECT nothing FROM effects").observe()
    with pytest.raises(ObserverError, match="wrong type"):
        SqlObserver(url, "SELECT business_key, 'lots' AS amount FROM effects").observe()


def test_rows_as_columns_begin_with_their_first_rows(as_columns: None) -> None:
    rows = _columns(ROWS)
    assert all(rows.begins_with(_columns(ROWS[:n])) for n in range(1, len(ROWS) + 1))
    assert not rows.begins_with(_columns((*ROWS, Effect("x"))))
    assert not rows.begins_with(_columns((Effect("refund:ch"),)))  # the start of a key only
    assert not rows.begins_with(_columns((Effect("refund:ch_1", 100, "idem-9"),)))
    assert not rows.begins_with(_columns((Effect("refund:ch_1", 99, "idem-1"),)))
    assert _columns(ROWS[1:]).begins_with(_columns((Effect("pay/pi_1"),)))  # no column of Nones on one side


def _pairs_consistent(reads: list[Observation]) -> tuple[int, int] | None:
    """`idempotency_consistent` over every row of every read, plainly."""
    idems_of: dict[str, set[str | None]] = {}
    keys_of: dict[str, set[str]] = {}
    for obs in reads:
        for e in obs.effects:
            idems_of.setdefault(e.business_key, set()).add(e.idempotency_key)
            if e.idempotency_key is not None:
                keys_of.setdefault(e.idempotency_key, set()).add(e.business_key)
    if any(len(v) > 1 for v in idems_of.values()) or any(len(v) > 1 for v in keys_of.values()):
        return None
    return len(idems_of), len(keys_of)


@pytest.mark.parametrize("rows", ["tuple", "columns"])
@pytest.mark.parametrize("with_index", [False, True])
def test_reads_left_out_of_the_idempotency_pass_change_nothing(as_columns: None, monkeypatch: pytest.MonkeyPatch,
                                                              rows: str, with_index: bool) -> None:
    """Reads that grow, reads sharing rows, equal reads in a row and a read repeating the
    first: the pass over the reads it keeps says what a pass over every row says, and keeps
    the rows of at least one read of each."""
    from hookproof.scenarios.effect_columns import _reads_not_repeated, idempotency_consistent

    monkeypatch.setattr(key_table, "SMALL", 0)
    events, attempts, reads = run_of(3, n_events=300)
    base = tuple(e for e in reads[-1].effects if e.idempotency_key is not None) or reads[-1].effects
    clean = tuple({e.business_key: e for e in base}.values())  # one Idempotency-Key per key
    half = clean[:len(clean) // 2]

    def made(effects: tuple[Effect, ...]) -> tuple[Effect, ...] | EffectRows:
        return _columns(effects) if rows == "columns" and effects else effects

    first, grown = made(half), made(clean)
    cases = [
        [first, grown, grown],  # grows, then the same rows again
        [first, made(half), first],  # equal rows in a row, then the first's very rows: one kept
        [grown, first],  # shrinks: both kept
        [made((*half, Effect(half[0].business_key, None, "other"))), first],  # a second key for one key
        [made((Effect("k1", None, "shared"),)), made((Effect("k1", None, "shared"), Effect("k2", None, "shared")))],
    ]
    for effects in cases:
        obs = [Observation(float(i), e, ()) for i, e in enumerate(effects)]
        kept = _reads_not_repeated(obs)
        assert kept and {id(obs[i].effects) for i in kept} <= {id(e) for e in effects}
        index = expectations_and_index(events, attempts, obs, sender_timeout_s=10.0, max_attempts_per_event=3)[1] \
            if with_index else None
        assert idempotency_consistent(obs, index) == _pairs_consistent(obs)
    assert _reads_not_repeated([Observation(float(i), e, ()) for i, e in enumerate(cases[0])]) == [2]
    assert _reads_not_repeated([Observation(float(i), e, ()) for i, e in enumerate(cases[1])]) == [2]
    assert _reads_not_repeated([Observation(float(i), e, ()) for i, e in enumerate(cases[2])]) == [0, 1]


@pytest.mark.parametrize("rows", ["tuple", "columns"])
def test_the_idempotency_pass_compares_only_repeated_keys_and_says_what_every_row_says(
        as_columns: None, rows: str) -> None:
    """Rows whose key shows once, keys repeated (an effect applied twice) with the same or
    another Idempotency-Key, keys without one, a key with one and then none, and one
    Idempotency-Key on two keys: the pass (which compares only the rows after their key's
    first, and counts the keys without one on their first rows) says what every row says."""
    from hookproof.scenarios.effect_columns import idempotency_consistent

    def made(effects: tuple[Effect, ...]) -> tuple[Effect, ...] | EffectRows:
        return _columns(effects) if rows == "columns" and effects else effects

    once = tuple(Effect(f"k{i}", None, f"idem-{i}" if i % 3 else None) for i in range(40))
    cases = [
        once,  # every key once: nothing compared
        (*once, once[4], once[3], once[0]),  # duplicates, with and without an Idempotency-Key
        (*once, Effect("k4", None, "idem-other")),  # a duplicate with another Idempotency-Key
        (*once, Effect("k1", None, None)),  # a duplicate without the key's Idempotency-Key
        (*once, Effect("k3", None, "idem-3")),  # a key without one, then with one
        (*once, Effect("k40", None, "idem-1")),  # one Idempotency-Key on two keys
        (Effect("a"), Effect("a"), Effect("b")),  # none has one
    ]
    for effects in cases:
        obs = [Observation(0.0, made(effects), ())]
        assert idempotency_consistent(obs, None) == _pairs_consistent(obs), effects
    assert idempotency_consistent([Observation(0.0, made(cases[1]), ())], None) == (40, 26)
    assert idempotency_consistent([Observation(0.0, made(cases[2]), ())], None) is None
    assert idempotency_consistent([Observation(0.0, made(cases[5]), ())], None) is None
