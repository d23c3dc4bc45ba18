"""Observers against real stores: a SQLite file, a PostgreSQL server, an HTTP endpoint
served by uvicorn on 127.0.0.1, the effect sink; and `settle` on stable and moving data."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
import sqlalchemy
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hookproof.scenarios.errors import ObserverError, ScenarioError
from hookproof.scenarios.observations import Effect, ObjectState, Observation
from hookproof.scenarios.observers import (
    HttpObserver,
    Observer,
    PythonObserver,
    SettleResult,
    SinkObserver,
    SqlObserver,
    observation_from_data,
    settle,
)
from hookproof.simulator.server import ServerHandle, ServerState, run_server, serve_app
from tests.support import LATE_S

EFFECTS_SQL = "SELECT business_key, amount, idempotency_key FROM effects ORDER BY id"
STATE_SQL = "SELECT object_id, status, version FROM subscriptions"
SCHEMA = [
    "CREATE TABLE effects (id INTEGER PRIMARY KEY, business_key TEXT NOT NULL, amount INTEGER, idempotency_key TEXT)",
    "CREATE TABLE subscriptions (object_id TEXT PRIMARY KEY, status TEXT NOT NULL, version INTEGER)",
    "INSERT INTO effects (id, business_key, amount, idempotency_key) VALUES "
    "(1, 'renewal:in_1', 900, NULL), (2, 'refund:ch_1:300', 300, 'idem-1'), (3, 'renewal:in_1', 900, NULL)",
    "INSERT INTO subscriptions VALUES ('sub_1', 'active', 3), ('sub_2', 'canceled', NULL)",
]
EXPECTED_EFFECTS = (
    Effect("renewal:in_1", 900), Effect("refund:ch_1:300", 300, "idem-1"), Effect("renewal:in_1", 900),
)
EXPECTED_STATES = {ObjectState("sub_1", "active", 3), ObjectState("sub_2", "canceled", None)}


# ---- SQL: SQLite file -------------------------------------------------------------------

@pytest.fixture
def sqlite_file(tmp_path: Path) -> Path:
    path = tmp_path / "receiver.db"
    with sqlite3.connect(path) as conn:
        for statement in SCHEMA:
            conn.execute(statement)
    return path


def test_sql_observer_reads_a_sqlite_file(sqlite_file: Path) -> None:
    with SqlObserver(f"sqlite:///{sqlite_file}", EFFECTS_SQL, STATE_SQL) as observer:
        assert isinstance(observer, Observer)
        before = time.time()
        obs = observer.observe()
    assert obs.effects == EXPECTED_EFFECTS
    assert set(obs.states) == EXPECTED_STATES
    assert obs.counts() == {"renewal:in_1": 2, "refund:ch_1:300": 1}
    assert before <= obs.at <= time.time()


def test_sql_observer_only_needs_business_key(sqlite_file: Path) -> None:
    obs = SqlObserver(f"sqlite:///{sqlite_file}", "SELECT business_key FROM effects").observe()
    assert obs.effects == tuple(Effect(e.business_key) for e in EXPECTED_EFFECTS) and obs.states == ()


def test_sql_observer_is_read_only_on_sqlite(sqlite_file: Path) -> None:
    observer = SqlObserver(f"sqlite:///{sqlite_file}", "INSERT INTO effects (business_key) VALUES ('x') RETURNING business_key")
    with pytest.raises(ObserverError, match="readonly") as info:
        observer.observe()
    assert info.value.query == "effects"
    with sqlite3.connect(sqlite_file) as conn:
        assert conn.execute("SELECT count(*) FROM effects").fetchone() == (3,)


@pytest.mark.parametrize(
    ("url", "effects", "state", "match", "query"),
    [
        ("not a url", EFFECTS_SQL, None, "not a SQLAlchemy URL", None),
        ("nosuchdialect://x/y", EFFECTS_SQL, None, "cannot use", None),
        ("sqlite:///{missing}", EFFECTS_SQL, None, "cannot connect", None),
        ("sqlite:///{db}", "SELECT nope FROM effects", None, "effects query failed", "effects"),
        ("sqlite:///{db}", "SELECT amount FROM effects", None, "missing business_key", "effects"),
        ("sqlite:///{db}", EFFECTS_SQL, "SELECT object_id FROM subscriptions", "missing status", "state"),
        ("sqlite:///{db}", EFFECTS_SQL, "SELECT * FROM nowhere", "state query failed", "state"),
        ("sqlite:///{db}", "PRAGMA foreign_keys = ON", None,
         r"^sql observer: the effects query returns no rows \(not a SELECT\?\)$", "effects"),
        ("sqlite:///{db}", EFFECTS_SQL, "PRAGMA foreign_keys = ON",
         r"^sql observer: the state query returns no rows \(not a SELECT\?\)$", "state"),
    ],
)
def test_sql_observer_errors_name_the_problem(sqlite_file: Path, tmp_path: Path, url: str, effects: str,
                                              state: str | None, match: str, query: str | None) -> None:
    url = url.format(db=sqlite_file, missing=tmp_path / "missing.db")
    with pytest.raises(ObserverError, match=match) as info:
        SqlObserver(url, effects, state).observe()
    assert isinstance(info.value, ScenarioError)
    assert info.value.observer == "sql" and info.value.query == query


def test_sql_observer_masks_the_password() -> None:
    observer = SqlObserver("postgresql+psycopg://user:s3cret@127.0.0.1:1/db", EFFECTS_SQL, timeout_s=2)
    with pytest.raises(ObserverError) as info:
        observer.observe()
    assert "s3cret" not in str(info.value) and "s3cret" not in (info.value.target or "")
    assert "cannot connect" in str(info.value)


# ---- SQL: PostgreSQL ----------------------------------------------------------------------

@pytest.fixture
def pg_tables(postgres_url: str) -> Iterator[str]:
    engine = sqlalchemy.create_engine(postgres_url)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE IF EXISTS effects, subscriptions")
        for statement in SCHEMA:
            conn.exec_driver_sql(statement.replace("INTEGER PRIMARY KEY", "INTEGER PRIMARY KEY"))
    try:
        yield postgres_url
    finally:
        with engine.begin() as conn:
            conn.exec_driver_sql("DROP TABLE IF EXISTS effects, subscriptions")
        engine.dispose()


def test_sql_observer_reads_postgresql(pg_tables: str) -> None:
    with SqlObserver(pg_tables, EFFECTS_SQL, STATE_SQL) as observer:
        obs = observer.observe()
        assert obs.effects == EXPECTED_EFFECTS
        assert set(obs.states) == EXPECTED_STATES
        engine = sqlalchemy.create_engine(pg_tables)
        with engine.begin() as conn:
            conn.exec_driver_sql("INSERT INTO effects VALUES (4, 'license:pi_1', NULL, NULL)")
        engine.dispose()
        assert observer.observe().counts() == {"renewal:in_1": 2, "refund:ch_1:300": 1, "license:pi_1": 1}


def test_sql_observer_is_read_only_on_postgresql(pg_tables: str) -> None:
    observer = SqlObserver(pg_tables, "INSERT INTO effects VALUES (9, 'x', NULL, NULL) RETURNING business_key")
    with pytest.raises(ObserverError, match="read-only transaction") as info:
        observer.observe()
    observer.close()
    assert info.value.query == "effects"
    assert SqlObserver(pg_tables, EFFECTS_SQL).observe().counts() == {"renewal:in_1": 2, "refund:ch_1:300": 1}


def test_a_decimal_amount_is_refused_never_truncated(pg_tables: str) -> None:
    """A NUMERIC 60.42 was read as 60 (int() truncates), a counter off by its cents with no word
    of why; a whole NUMERIC (SUM of integers, amount * 100) still reads as its integer."""
    engine = sqlalchemy.create_engine(pg_tables)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE IF EXISTS balances")
        conn.exec_driver_sql("CREATE TABLE balances (key TEXT, total NUMERIC(12, 2))")
        conn.exec_driver_sql("INSERT INTO balances VALUES ('cus_1', 60.42), ('cus_1', 10.00), ('cus_2', 5)")
    try:
        whole = SqlObserver(pg_tables, EFFECTS_SQL, counter_query="SELECT key, total * 100 AS amount FROM balances")
        assert whole.observe().counters == {"cus_1": 7042, "cus_2": 500}
        for query in ("SELECT key, total AS amount FROM balances",
                      "SELECT key, CAST(total AS DOUBLE PRECISION) AS amount FROM balances"):
            with pytest.raises(ObserverError, match=r"the amount column holds (Decimal\('60.42'\)|60.42), not a whole "
                                                    r"number \(amounts are integer minor units: 60.42 .* is 6042"):
                SqlObserver(pg_tables, EFFECTS_SQL, counter_query=query).observe()
        with pytest.raises(ObserverError, match=r"the amount column holds Decimal\('60.42'\), not a whole number"):
            SqlObserver(pg_tables, "SELECT 'refund:ch_1' AS business_key, total AS amount FROM balances").observe()
    finally:
        with engine.begin() as conn:
            conn.exec_driver_sql("DROP TABLE IF EXISTS balances")
        engine.dispose()


def test_sql_observer_bad_query_on_postgresql(pg_tables: str) -> None:
    with pytest.raises(ObserverError, match="effects query failed") as info:
        SqlObserver(pg_tables, "SELECT business_key FROM no_such_table").observe()
    assert "no_such_table" in str(info.value)


# ---- HTTP ------------------------------------------------------------------------------------

class _Receiver:
    """A tiny receiver whose test-only endpoints the HTTP observer reads."""

    def __init__(self) -> None:
        self.effects: list[dict[str, object] | str] = []
        self.reads = 0
        self.grow = False
        self.lock = threading.Lock()

    async def observe(self, request: Request) -> JSONResponse:
        with self.lock:
            self.reads += 1
            if self.grow:
                self.effects.append(f"renewal:in_{self.reads}")
            return JSONResponse({"effects": list(self.effects),
                                 "states": [{"object_id": "sub_1", "status": "active", "version": 2}]})

    def app(self) -> Starlette:
        async def not_json(request: Request) -> Response:
            return Response(b"<html>oops</html>", media_type="text/html")

        async def big(request: Request) -> Response:
            return Response(b"[" + b"1," * 600_000 + b"1]", media_type="application/json")

        async def slow(request: Request) -> JSONResponse:
            import asyncio

            await asyncio.sleep(2.0)
            return JSONResponse({"effects": []})

        async def fails(request: Request) -> JSONResponse:
            return JSONResponse({"detail": "boom"}, status_code=500)

        async def bad_shape(request: Request) -> JSONResponse:
            return JSONResponse({"effects": [{"amount": 3}]})

        return Starlette(routes=[
            Route("/hookproof/observe", self.observe), Route("/not-json", not_json), Route("/big", big),
            Route("/slow", slow), Route("/fails", fails), Route("/bad-shape", bad_shape),
        ])


@pytest.fixture
def receiver() -> Iterator[tuple[_Receiver, ServerHandle]]:
    rec = _Receiver()
    with serve_app(rec.app()) as handle:
        yield rec, handle


def test_http_observer_reads_objects_and_strings(receiver: tuple[_Receiver, ServerHandle]) -> None:
    rec, server = receiver
    rec.effects = ["license:pi_1", {"business_key": "refund:ch_1:300", "amount": 300, "idempotency_key": "k"}]
    with HttpObserver(f"{server.url}/hookproof/observe", timeout_s=5) as observer:
        obs = observer.observe()
    assert obs.effects == (Effect("license:pi_1"), Effect("refund:ch_1:300", 300, "k"))
    assert obs.states == (ObjectState("sub_1", "active", 2),)


@pytest.mark.parametrize(
    ("path", "match"),
    [
        ("/not-json", "did not answer JSON"),
        ("/big", "exceeds 1000000 bytes"),
        ("/slow", "timed out"),
        ("/fails", "answered 500"),
        ("/bad-shape", r"effects\[0\] must be"),
        ("/missing", "answered 404"),
    ],
)
def test_http_observer_errors(receiver: tuple[_Receiver, ServerHandle], path: str, match: str) -> None:
    _, server = receiver
    # Only /slow is meant to outlast the timeout: the others get room for a loaded machine (a
    # 404 taking over 0.5 s once read as "timed out").
    timeout_s = 0.5 if path == "/slow" else 10
    with HttpObserver(f"{server.url}{path}", timeout_s=timeout_s, max_bytes=1_000_000) as observer:
        with pytest.raises(ObserverError, match=match) as info:
            observer.observe()
    assert info.value.observer == "http"


def test_http_observer_unreachable() -> None:
    with pytest.raises(ObserverError, match="cannot GET"):
        HttpObserver("http://127.0.0.1:1/observe", timeout_s=1).observe()


@pytest.mark.parametrize(
    "data",
    [[], {"effects": "x"}, {"effects": [{"business_key": "k", "amount": "9"}]},
     {"effects": [], "states": [{"object_id": "s"}]}, {"states": [{"object_id": "s", "status": "a", "version": True}]}],
)
def test_observation_shape_is_validated(data: object) -> None:
    with pytest.raises(ObserverError):
        observation_from_data(data, 0.0, observer="http")


def test_an_answer_without_effects_is_not_an_observation() -> None:
    """A health endpoint configured by mistake says so, instead of every effect being lost."""
    with pytest.raises(ObserverError, match=r"the answer has no 'effects' list \(keys: 'status', 'db'\)"):
        observation_from_data({"status": "ok", "db": "up"}, 0.0, observer="http")
    assert observation_from_data({"effects": ["k"]}, 0.0, observer="http").effects[0].business_key == "k"


# ---- sink and python ---------------------------------------------------------------------------

def test_sink_observer_in_process_and_by_url() -> None:
    state = ServerState()
    with run_server(state) as server:
        with httpx.Client(timeout=5) as client:
            for _ in range(2):
                client.post(f"{server.sink_url}/sink/effects", json={"business_key": "license:pi_1", "amount": 4900},
                            headers={"Idempotency-Key": "idem-a"})
            client.post(server.effects_url, json={"business_key": "renewal:in_1"})
        expected = (Effect("license:pi_1", 4900, "idem-a"), Effect("renewal:in_1"))
        assert SinkObserver(state.sink).observe().effects == expected
        for url in (server.sink_url, server.effects_url):
            remote = SinkObserver(url, timeout_s=5)
            assert remote.observe().effects == expected
            remote.close()


def test_python_observer() -> None:
    fixed = Observation(12.5, (Effect("a"),))
    assert PythonObserver(lambda: fixed).observe() is fixed
    obs = PythonObserver(lambda: {"effects": ["a", "a"], "states": []}).observe()
    assert obs.counts() == {"a": 2}

    def broken() -> Observation:
        raise KeyError("db down")

    with pytest.raises(ObserverError, match="broken raised KeyError") as info:
        PythonObserver(broken).observe()
    assert isinstance(info.value.__cause__, KeyError)


# ---- settle ----------------------------------------------------------------------------------------

class _FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_settle_on_stable_data_with_a_fake_clock() -> None:
    clock = _FakeClock()
    calls: list[float] = []

    def read() -> Observation:
        calls.append(clock.now)
        return Observation(clock.now, (Effect("a"), Effect("b")), (ObjectState("s", "active"),))

    result = settle(PythonObserver(read), window_s=0.3, deadline_s=5.0, interval_s=0.1, clock=clock, sleep=clock.sleep)
    assert result.settled is True
    assert len(result.observations) == 4  # at 0.0, 0.1, 0.2, 0.3
    assert clock.now == pytest.approx(0.3)


def test_settle_gives_up_at_the_deadline_with_a_fake_clock() -> None:
    clock = _FakeClock()
    effects: list[Effect] = []

    def read() -> Observation:
        effects.append(Effect(f"renewal:in_{len(effects)}"))
        return Observation(clock.now, tuple(effects))

    result = settle(read, window_s=0.3, deadline_s=1.0, interval_s=0.1, clock=clock, sleep=clock.sleep)
    assert result.settled is False
    assert len(result.observations) == 11  # one at the start, then one every 0.1 s up to 1.0 s
    assert len(result.final.effects) == 11
    assert [len(o.effects) for o in result.observations] == list(range(1, 12))


def test_settle_treats_row_order_as_no_change() -> None:
    clock = _FakeClock()
    flip = [False]

    def read() -> Observation:
        flip[0] = not flip[0]
        rows = (Effect("a"), Effect("b"))
        return Observation(clock.now, rows if flip[0] else rows[::-1])

    assert settle(read, window_s=0.2, deadline_s=1.0, interval_s=0.1, clock=clock, sleep=clock.sleep).settled


def test_settle_sees_counts_moved_between_rows_of_the_same_length() -> None:
    clock = _FakeClock()
    reads = iter([("a", "a", "b"), ("a", "b", "b"), ("b", "a", "b"), ("b", "b", "a"), ("a", "b", "b")])

    def read() -> Observation:
        return Observation(clock.now, tuple(Effect(k) for k in next(reads)))

    # a duplicate moving from a to b is a change; the same multiset in another order is not
    result = settle(read, window_s=0.25, deadline_s=1.0, interval_s=0.1, clock=clock, sleep=clock.sleep)
    assert result.settled is True and len(result.observations) == 5
    assert [o.counts() for o in result.observations][:2] == [{"a": 2, "b": 1}, {"a": 1, "b": 2}]


def test_settle_sees_a_changed_state_or_counter_of_the_same_rows() -> None:
    clock = _FakeClock()
    reads = iter([((ObjectState("s", "active"),), {"c": 1}), ((ObjectState("s", "past_due"),), {"c": 1}),
                  ((ObjectState("s", "past_due"),), {"c": 2}), ((ObjectState("s", "past_due"),), {"c": 2}),
                  ((ObjectState("s", "past_due"),), {"c": 2})])

    def read() -> Observation:
        states, counters = next(reads)
        return Observation(clock.now, (Effect("a"),), states, counters=counters)

    result = settle(read, window_s=0.2, deadline_s=1.0, interval_s=0.1, clock=clock, sleep=clock.sleep)
    assert result.settled is True and len(result.observations) == 5  # stable from the third read on


def test_settle_keeps_each_read_and_shares_the_rows_of_a_read_equal_to_the_last() -> None:
    clock = _FakeClock()

    def read() -> Observation:  # new rows on each read, equal in value
        return Observation(clock.now, (Effect("a", 1), Effect("b")), (ObjectState("s", "active", 2),))

    result = settle(read, window_s=0.3, deadline_s=5.0, interval_s=0.1, clock=clock, sleep=clock.sleep)
    first, *rest = result.observations
    assert len(rest) == 3 and [o.at for o in result.observations] == pytest.approx([0.0, 0.1, 0.2, 0.3])
    assert all(o.effects is first.effects and o.states is first.states for o in rest)
    assert all(o == replace(first, at=o.at) for o in rest)


def test_settle_over_http_stable_and_moving(receiver: tuple[_Receiver, ServerHandle]) -> None:
    rec, server = receiver
    rec.effects = ["license:pi_1"]
    with HttpObserver(f"{server.url}/hookproof/observe", timeout_s=2) as observer:
        stable = settle(observer, window_s=0.2, deadline_s=3.0, interval_s=0.05)
        assert isinstance(stable, SettleResult)
        assert stable.settled is True and stable.final.counts() == {"license:pi_1": 1}
        assert stable.observations[-1].at - stable.observations[0].at >= 0.2

        rec.grow = True
        reads_before = rec.reads
        t0 = time.monotonic()
        moving = settle(observer, window_s=0.3, deadline_s=1.0, interval_s=0.05)
        assert time.monotonic() - t0 < 1.0 + LATE_S  # its deadline: the receiver keeps moving for ever
        rec.grow = False
    assert moving.settled is False
    assert len(moving.observations) == rec.reads - reads_before
    # every read added exactly one effect to the receiver: the final one holds them all
    assert len(moving.final.effects) == 1 + len(moving.observations)
    times = [o.at for o in moving.observations]
    assert times == sorted(times)


def test_settle_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        settle(lambda: Observation(0.0), window_s=0.1, deadline_s=1.0, interval_s=0)


# ---- one observer factory (certify and the storm) ----------------------------------------------

def _with_kinds(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (object_id TEXT PRIMARY KEY, status TEXT NOT NULL)")
        conn.execute("INSERT INTO invoices VALUES ('in_1', 'paid')")
        conn.execute("CREATE TABLE balances (key TEXT, amount INTEGER)")
        conn.execute("INSERT INTO balances VALUES ('cus_1', 900), ('cus_1', 100), ('cus_2', 0)")


def test_sql_observer_reads_several_state_queries_and_a_counter(sqlite_file: Path) -> None:
    _with_kinds(sqlite_file)
    with SqlObserver(f"sqlite:///{sqlite_file}", EFFECTS_SQL, STATE_SQL,
                     state_queries={"invoice": "SELECT object_id, status FROM invoices"},
                     counter_query="SELECT key, amount FROM balances") as observer:
        got = observer.observe()
    assert set(got.states) == EXPECTED_STATES | {ObjectState("in_1", "paid")}
    assert got.state_kinds == {"subscription", "invoice"}
    assert got.counters == {"cus_1": 1000, "cus_2": 0}


def test_a_counter_query_without_its_columns_is_named(sqlite_file: Path) -> None:
    with pytest.raises(ObserverError, match=r"the counter query must return column\(s\) key, amount; missing key"):
        SqlObserver(f"sqlite:///{sqlite_file}", EFFECTS_SQL, counter_query="SELECT 1 AS amount").observe()


def test_certify_and_the_storm_build_one_observer_from_one_table(sqlite_file: Path) -> None:
    """The storm used to drop a sink observer's SQL states; both now read them."""
    from hookproof.certify import make_observer as certify_observer
    from hookproof.config import parse_config
    from hookproof.loadtests.verdict import make_observer as storm_observer

    _with_kinds(sqlite_file)
    text = ('[target]\nurl = "http://127.0.0.1:9/webhooks"\nsecret = "whsec_x"\n'
            f'[observer]\nkind = "sink"\nurl = "sqlite:///{sqlite_file}"\nstate = "{STATE_SQL}"\n'
            '[observer.states]\ninvoice = "SELECT object_id, status FROM invoices"\n')
    config = parse_config(text, str(sqlite_file.parent / "hookproof.toml"))
    state = ServerState()
    state.sink.apply("renewal:in_1", amount=900, idempotency_key="k1")
    with run_server(state) as handle:
        by_certify = certify_observer(config, state)()
        by_storm = storm_observer({**config.observer.model_dump(), "base_dir": str(config.base_dir)},
                                  handle.sink_url)()
    for got in (by_certify, by_storm):
        assert got.effects == (Effect("renewal:in_1", 900, "k1"),)
        assert set(got.states) == EXPECTED_STATES | {ObjectState("in_1", "paid")}
        assert got.state_kinds == {"subscription", "invoice"}


def test_the_storm_s_python_observer_imports_from_the_config_folder(tmp_path: Path) -> None:
    from hookproof.loadtests.verdict import make_observer as storm_observer

    (tmp_path / "team_observer_mod.py").write_text(
        "def observe():\n    return {'effects': ['renewal:in_9'], 'states': []}\n", encoding="utf-8")
    observe = storm_observer({"kind": "python", "callable": "team_observer_mod:observe", "base_dir": str(tmp_path)},
                             None)
    assert observe().effects == (Effect("renewal:in_9"),)


def test_an_unimportable_python_observer_is_one_error() -> None:
    from hookproof.scenarios.observer_factory import ObserverSpec, build_observer

    with pytest.raises(ObserverError, match=r"^python observer: cannot import 'no_such_mod_h4:fn': "
                                            r"ModuleNotFoundError: No module named 'no_such_mod_h4'$"):
        build_observer(ObserverSpec.from_mapping({"kind": "python", "callable": "no_such_mod_h4:fn"}))


def test_an_http_answer_may_declare_the_kinds_its_states_cover() -> None:
    data = {"effects": [], "states": [], "state_kinds": ["subscription", "invoice"]}
    assert observation_from_data(data, 1.0, observer="http").state_kinds == {"subscription", "invoice"}
    assert observation_from_data({"effects": []}, 1.0, observer="http").state_kinds is None
    with pytest.raises(ObserverError, match=r"^http observer: 'state_kinds' must be a list of object kinds"):
        observation_from_data({"effects": [], "state_kinds": "invoice"}, 1.0, observer="http")
