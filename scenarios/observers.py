"""Observers: how the harness sees a receiver's effects and state, with no change to
its business code (DESIGN.md, "Observers"). A read of many effect rows holds them as
columns (`scenarios.observations.effect_rows`, equal to the tuple of the same rows).

Every observer has one synchronous method, ``observe() -> Observation``; the I/O stays
here, at the edge. Four kinds:

- `SqlObserver`: SQLAlchemy 2 URL plus an ``effects`` query (a ``business_key`` column,
  one row per applied effect; optional ``amount`` and ``idempotency_key`` columns) and an
  optional ``state`` query (``object_id, status[, version]``). Read-only: SQLite files
  are opened through a ``mode=ro`` URI, PostgreSQL transactions start with
  ``SET TRANSACTION READ ONLY`` and a ``statement_timeout``; every transaction is rolled
  back.
- `HttpObserver`: GET a test-only endpoint answering
  ``{"effects": [{"business_key", "amount"?, "idempotency_key"?} | "key", ...],
  "states": [{"object_id", "status", "version"?}, ...]}`` (both lists optional), with a
  bounded time and a cap on the answer's size.
- `SinkObserver`: the simulator's effect sink, in process (`EffectSink`) or by URL
  (``GET /sink/effects``); effects carry the receiver's idempotency keys.
- `PythonObserver`: a callable for in-process targets, returning an `Observation` or
  the HTTP observer's dict shape.

`settle` polls an observer until the effects and states stay unchanged for a window,
bounded by a deadline, keeping every observation (each stamped with its time; a read
whose rows equal the last read's, in order, holds that read's tuples rather than its
own); it ends on evidence: once a read shows everything expected (`done`), a short quiet
period of unchanged reads settles it instead of the whole window, and while the reads do
not, they go on up to the deadline rather than end after the window.

Every failure to observe is an `ObserverError` naming the observer, its target (with
any password masked) and the failing query; foreign exceptions (SQLAlchemy, httpx,
JSON) are translated here, chained with ``from``.
"""

from __future__ import annotations

import json
import math
import time
import urllib.parse
from collections import Counter
from dataclasses import dataclass, replace
from decimal import Decimal
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence, TypeVar, runtime_checkable

from hookproof.scenarios.errors import ObserverError
from hookproof.scenarios.observations import ObjectState, Observation, effect_rows
from hookproof.scenarios.state_fields import combined
from hookproof.simulator.server.sink import EffectSink

if TYPE_CHECKING:  # imported where an observer uses them: a storm's master reading a Python observer loads neither
    import httpx
    import sqlalchemy
    from sqlalchemy.engine import URL, Engine

#: Largest answer an HTTP observer reads (bytes).
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
#: Slack on settle's window and deadline comparisons (seconds), so float residue in
#: sums of intervals (10 x 0.1 < 1.0) does not cost an extra read.
_EPSILON_S = 1e-9
#: Poll intervals of unchanged reads that settle an observation already showing everything
#: expected (`settle`'s `done`): two more reads after the first that shows it.
QUIET_INTERVALS = 2
#: Rows the SQL observer fetches per step of its effects query.
_PARTITION = 8192
#: What the SQL observer's reader of one query's result returns (`SqlObserver._query`).
_T = TypeVar("_T")


@runtime_checkable
class Observer(Protocol):
    """Anything that reads the receiver's effects and states once."""

    def observe(self) -> Observation:
        """One read; raises ObserverError when the receiver cannot be read."""
        ...


# ---- the common dict shape --------------------------------------------------------

def observation_from_data(data: Any, at: float, *, observer: str, target: str | None = None) -> Observation:
    """An Observation from ``{"effects": [...], "states": [...]}`` (``states`` may be left
    out; ``effects`` may not: an answer without it is not an observation). Raises
    ObserverError.

    Effects are business-key strings or objects with ``business_key`` (and optional
    integer ``amount``, string ``idempotency_key``); states are objects with
    ``object_id``, ``status`` and an optional integer ``version``. An optional
    ``state_kinds`` list names the object kinds the states cover (`Observation.state_kinds`:
    an object of those kinds absent from ``states`` is missing).
    """

    def bad(message: str) -> ObserverError:
        return ObserverError(f"{observer} observer: {message}", observer=observer, target=target)

    if not isinstance(data, Mapping):
        raise bad(f"expected a JSON object with 'effects' and 'states', got {type(data).__name__}")
    if "effects" not in data:  # an endpoint that is not the observation one (e.g. a health check)
        names = ", ".join(repr(k) for k in list(data)[:5]) or "none"
        raise bad(f"the answer has no 'effects' list (keys: {names}); expected {{\"effects\": [...], "
                  f"\"states\": [...]}}")
    raw_effects = data["effects"]
    raw_states = data.get("states", [])
    if not isinstance(raw_effects, list) or not isinstance(raw_states, list):
        raise bad("'effects' and 'states' must be lists")
    keys: list[str] = []
    amounts: list[int | None] = []
    idems: list[str | None] = []
    for i, item in enumerate(raw_effects):
        if isinstance(item, str):
            keys.append(item)
            amounts.append(None)
            idems.append(None)
            continue
        if not isinstance(item, Mapping) or not isinstance(item.get("business_key"), str):
            raise bad(f"effects[{i}] must be a string or an object with a string 'business_key', got {item!r:.200}")
        amount = item.get("amount")
        key = item.get("idempotency_key")
        if amount is not None and (isinstance(amount, bool) or not isinstance(amount, int)):
            raise bad(f"effects[{i}].amount must be an integer (minor units) or null, got {amount!r}")
        if key is not None and not isinstance(key, str):
            raise bad(f"effects[{i}].idempotency_key must be a string or null, got {key!r}")
        keys.append(item["business_key"])
        amounts.append(amount)
        idems.append(key)
    states: list[ObjectState] = []
    for i, item in enumerate(raw_states):
        if not isinstance(item, Mapping) or not isinstance(item.get("object_id"), str) \
                or not isinstance(item.get("status"), str):
            raise bad(f"states[{i}] must be an object with string 'object_id' and 'status', got {item!r:.200}")
        version = item.get("version")
        if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
            raise bad(f"states[{i}].version must be an integer or null, got {version!r}")
        states.append(ObjectState(item["object_id"], item["status"], version))
    raw_kinds = data.get("state_kinds")
    if raw_kinds is not None and (not isinstance(raw_kinds, list) or not all(isinstance(k, str) for k in raw_kinds)):
        raise bad(f"'state_kinds' must be a list of object kinds (strings), got {raw_kinds!r:.200}")
    kinds = frozenset(raw_kinds) if raw_kinds is not None else None
    return Observation(at, effect_rows(keys, amounts, idems), tuple(states), kinds)


# ---- SQL ------------------------------------------------------------------------------

class SqlObserver:
    """Reads effects (and states) with SQL through SQLAlchemy 2, read-only.

    Args:
        url: a SQLAlchemy URL (``sqlite:///path.db``, ``postgresql+psycopg://…``).
        effects_query: returns a ``business_key`` column, one row per applied effect;
            optional ``amount`` (integer minor units) and ``idempotency_key`` columns.
            None: no effects read here (the effect sink reads them).
        state_query: returns ``object_id, status`` and optionally ``version`` of the
            subscriptions; None: none.
        timeout_s: bound on connecting and on each query (seconds).
        state_queries: object kind (the world's object type: ``invoice``,
            ``payment_intent``, ``checkout.session``…) → a query returning ``object_id,
            status[, version]`` for that kind; one query per kind.
        counter_query: returns ``key, amount`` (integer minor units; several rows of
            one key are summed), e.g. ``SELECT key, amount FROM balances``; None: none.
        state_fields: object kind → extra columns its state query must return, part of
            the object's state (``[observer.state_fields]``): each row's status is then the
            combined state, ``active, price=price_1Ab`` (`scenarios.state_fields.combined`).
        state_absent: object kind → status → the declared columns left out of a row in that
            status (the provider's events in it do not carry them: `StateFields.absent`).

    Every configured state query declares its kind (`Observation.state_kinds`): an
    object of that kind missing from the rows is missing, not unobserved.
    Raises ObserverError for a bad URL, a missing driver, a database it cannot reach,
    a failing query, or a query without the required columns.
    """

    kind = "sql"

    def __init__(self, url: str, effects_query: str | None, state_query: str | None = None, *,
                 timeout_s: float = 10.0, state_queries: Mapping[str, str] | None = None,
                 counter_query: str | None = None,
                 state_fields: Mapping[str, tuple[str, ...]] | None = None,
                 state_absent: Mapping[str, Mapping[str, frozenset[str]]] | None = None) -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, not {timeout_s}")
        self.effects_query = effects_query
        self.state_query = state_query
        self.state_queries: dict[str, str] = dict(state_queries or {})
        if state_query is not None:
            self.state_queries.setdefault("subscription", state_query)
        self.counter_query = counter_query
        self.state_fields: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in (state_fields or {}).items() if v}
        self.state_absent: Mapping[str, Mapping[str, frozenset[str]]] = state_absent or {}
        self.timeout_s = timeout_s
        from sqlalchemy import exc as sa_exc
        from sqlalchemy.engine import make_url

        try:
            self._url = make_url(url)
        except sa_exc.ArgumentError as exc:
            raise ObserverError(f"sql observer: not a SQLAlchemy URL: {exc}", observer=self.kind) from exc
        self.target = self._url.render_as_string(hide_password=True)
        self._engine: Engine | None = None

    # -- engine ---------------------------------------------------------------------
    def _read_only_url(self) -> tuple[URL, dict[str, Any]]:
        url = self._url
        backend = url.get_backend_name()
        if backend == "sqlite":
            database = url.database or ""
            connect_args: dict[str, Any] = {"timeout": self.timeout_s}
            if database and database != ":memory:" and not database.startswith("file:") and "mode" not in url.query:
                url = url.set(database="file:" + urllib.parse.quote(database), query={**url.query, "mode": "ro", "uri": "true"})
            return url, connect_args
        if backend == "postgresql":
            return url, {"connect_timeout": max(1, round(self.timeout_s))}
        return url, {}

    def _get_engine(self) -> Engine:
        if self._engine is None:
            import sqlalchemy
            from sqlalchemy import exc as sa_exc

            url, connect_args = self._read_only_url()
            try:
                self._engine = sqlalchemy.create_engine(url, connect_args=connect_args, pool_pre_ping=False,
                                                        **({"pool_timeout": self.timeout_s} if url.get_backend_name() != "sqlite" else {}))
            except sa_exc.ArgumentError as exc:  # NoSuchModuleError: unknown dialect
                raise ObserverError(f"sql observer: cannot use {self.target}: {exc}", observer=self.kind,
                                    target=self.target) from exc
            except ImportError as exc:
                raise ObserverError(f"sql observer: the driver for {self.target} is not installed: {exc}",
                                    observer=self.kind, target=self.target) from exc
        return self._engine

    def close(self) -> None:
        """Dispose of the engine's pooled connections."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def __enter__(self) -> SqlObserver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ----------------------------------------------------------------------
    def observe(self) -> Observation:
        """Run the queries in one read-only transaction (rolled back) and build an Observation."""
        from sqlalchemy import exc as sa_exc

        engine = self._get_engine()
        try:
            conn = engine.connect()
        except (sa_exc.SQLAlchemyError, OSError) as exc:
            raise ObserverError(f"sql observer: cannot connect to {self.target}: {_reason(exc)}",
                                observer=self.kind, target=self.target) from exc
        with conn:
            try:
                if engine.dialect.name == "postgresql":
                    conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                    conn.exec_driver_sql(f"SET LOCAL statement_timeout = {int(self.timeout_s * 1000)}")
                read_effects = (self._effect_columns(conn, self.effects_query)
                                if self.effects_query is not None else ([], None, None))
                state_rows = [(row, kind, self.state_fields.get(kind, ())) for kind, query in self.state_queries.items()
                              for row in self._rows(conn, _state_name(kind), query,
                                                    ("object_id", "status", *self.state_fields.get(kind, ())))]
                counter_rows = (self._rows(conn, "counter", self.counter_query, ("key", "amount"))
                                if self.counter_query is not None else None)
            finally:
                try:
                    conn.rollback()
                except sa_exc.SQLAlchemyError:
                    pass
        at = time.time()
        try:
            keys, amounts, idems = read_effects
            effects = effect_rows(list(map(str, keys)), None if amounts is None else [_int_or_none(a, "amount") for a in amounts],
                                  None if idems is None else [None if k is None else str(k) for k in idems])
            absent = self.state_absent
            states = tuple(
                ObjectState(str(r["object_id"]), combined(str(r["status"]), [
                    (c, r[c]) for c in extra if c not in absent.get(kind, {}).get(str(r["status"]), ())]),
                    _int_or_none(r.get("version"))) for r, kind, extra in state_rows
            )
            counters: dict[str, int] | None = None
            if counter_rows is not None:
                counters = {}
                for r in counter_rows:
                    key = str(r["key"])
                    counters[key] = counters.get(key, 0) + (_int_or_none(r["amount"], "amount") or 0)
        except (TypeError, ValueError) as exc:
            raise ObserverError(f"sql observer: a column holds a value of the wrong type: {exc}",
                                observer=self.kind, target=self.target) from exc
        # no state query: it reads no state by design (the state checks do not apply), not "unknown"
        kinds = frozenset(self.state_queries)
        return Observation(at, effects, states, kinds, counters)

    def _effect_columns(self, conn: sqlalchemy.Connection, query: str) -> tuple[list[Any], list[Any] | None,
                                                                              list[Any] | None]:
        """The effects query's ``business_key``, ``amount`` and ``idempotency_key`` values,
        a list per column in row order (None: a column the query does not return; a name
        returned twice, its last), read `_PARTITION` rows at a time: a storm's million rows
        leave no object per row behind but their values. Errors as `_query`."""
        def read(result: sqlalchemy.CursorResult[Any], columns: list[str]) -> list[list[Any] | None]:
            at = {c: i for i, c in enumerate(columns)}
            wanted = [at.get(c) for c in ("business_key", "amount", "idempotency_key")]
            values: list[list[Any] | None] = [None if i is None else [] for i in wanted]
            for part in result.partitions(_PARTITION):
                for i, out in zip(wanted, values):
                    if i is not None and out is not None:
                        out.extend(map(itemgetter(i), part))
            return values

        values, columns = self._query(conn, "effects", query, read)
        self._require("effects", ("business_key",), columns)
        keys, amounts, idems = values
        assert keys is not None  # `_require` saw the column
        return keys, amounts, idems

    def _rows(self, conn: sqlalchemy.Connection, name: str, query: str, required: tuple[str, ...]) -> list[Mapping[str, Any]]:
        def read(result: sqlalchemy.CursorResult[Any], columns: list[str]) -> list[Mapping[str, Any]]:
            return [dict(m) for m in result.mappings().all()]

        rows, columns = self._query(conn, name, query, read)
        self._require(name, required, columns)
        return rows

    def _query(self, conn: sqlalchemy.Connection, name: str, query: str,
               read: Callable[[sqlalchemy.CursorResult[Any], list[str]], _T]) -> tuple[_T, list[str]]:
        """Run `query` (the `name` query in messages) and `read` its result (given its column
        names): what `read` returns, and the column names. Raises ObserverError naming the
        query when it returns no rows (not a SELECT) or fails, running or being read (the
        driver's first line of reason, `_reason`)."""
        import sqlalchemy
        from sqlalchemy import exc as sa_exc

        try:
            result = conn.execute(sqlalchemy.text(query))
            if not result.returns_rows:
                raise ObserverError(f"sql observer: the {name} query returns no rows (not a SELECT?)",
                                    observer=self.kind, target=self.target, query=name)
            columns = [str(c) for c in result.keys()]
            return read(result, columns), columns
        except sa_exc.SQLAlchemyError as exc:
            raise ObserverError(f"sql observer: the {name} query failed on {self.target}: {_reason(exc)}",
                                observer=self.kind, target=self.target, query=name) from exc

    def _require(self, name: str, required: tuple[str, ...], columns: list[str]) -> None:
        """Raise ObserverError when the `name` query's `columns` lack one of `required`."""
        missing = [c for c in required if c not in columns]
        if missing:
            raise ObserverError(
                f"sql observer: the {name} query must return column(s) {', '.join(required)}; "
                f"missing {', '.join(missing)} (got {', '.join(columns) or 'no columns'})",
                observer=self.kind, target=self.target, query=name,
            )


def _state_name(kind: str) -> str:
    """How a state query is named in messages: ``state`` for subscriptions, else ``states.<kind>``."""
    return "state" if kind == "subscription" else f"states.{kind}"


def _reason(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _int_or_none(value: Any, column: str = "version") -> int | None:
    """`value` as an int (None kept). Raises TypeError for a bool, ValueError for a value that
    is not a whole number (a NUMERIC ``60.42`` or a float is never truncated: ``amount``
    columns are compared in integer minor units, and the message says how to return them)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"the {column} column holds {value!r}; expected an integer")
    if isinstance(value, (Decimal, float)):
        if not math.isfinite(value) or value != int(value):
            hint = (" (amounts are integer minor units: 60.42 in a two-decimal currency is 6042; return "
                    "the column as one, e.g. CAST(ROUND(amount * 100) AS INTEGER))") if column == "amount" else ""
            raise ValueError(f"the {column} column holds {value!r}, not a whole number{hint}")
        return int(value)
    return int(value)


# ---- HTTP -----------------------------------------------------------------------------

class HttpObserver:
    """GETs a test-only endpoint answering the dict shape (see `observation_from_data`).

    Args:
        url: the endpoint.
        timeout_s: bound on the whole read (connect, headers and body), seconds.
        max_bytes: larger answers are an error.
        headers: extra request headers (e.g. a token for the test endpoint).
        client: an httpx.Client to use (e.g. with an ASGI/WSGI transport); default: a
            client owned by the observer.
    """

    kind = "http"

    def __init__(self, url: str, timeout_s: float = 5.0, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 headers: Mapping[str, str] | None = None, client: httpx.Client | None = None) -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, not {timeout_s}")
        self.url = url
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.headers = dict(headers or {})
        self._client = client
        self._own_client = client is None

    def _get_client(self) -> httpx.Client:
        if self._client is None:
            import httpx

            self._client = httpx.Client(timeout=httpx.Timeout(self.timeout_s), follow_redirects=False)
        return self._client

    def close(self) -> None:
        """Close the client the observer owns."""
        if self._client is not None and self._own_client:
            self._client.close()
            self._client = None

    def __enter__(self) -> HttpObserver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def fetch(self) -> Any:
        """GET the endpoint and return the decoded JSON. Raises ObserverError."""
        import httpx

        client = self._get_client()
        deadline = time.monotonic() + self.timeout_s
        try:
            with client.stream("GET", self.url, headers=self.headers, timeout=self.timeout_s) as response:
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise ObserverError(f"{self.kind} observer: the answer of {self.url} exceeds {self.max_bytes} bytes",
                                            observer=self.kind, target=self.url)
                    if time.monotonic() > deadline:
                        raise ObserverError(f"{self.kind} observer: {self.url} took longer than {self.timeout_s} s",
                                            observer=self.kind, target=self.url)
                    chunks.append(chunk)
                status = response.status_code
        except httpx.TimeoutException as exc:
            raise ObserverError(f"{self.kind} observer: {self.url} timed out after {self.timeout_s} s ({type(exc).__name__})",
                                observer=self.kind, target=self.url) from exc
        except httpx.HTTPError as exc:
            raise ObserverError(f"{self.kind} observer: cannot GET {self.url}: {type(exc).__name__}: {exc}",
                                observer=self.kind, target=self.url) from exc
        body = b"".join(chunks)
        if not 200 <= status < 300:
            raise ObserverError(f"{self.kind} observer: {self.url} answered {status}: {body[:200]!r}",
                                observer=self.kind, target=self.url)
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ObserverError(f"{self.kind} observer: {self.url} did not answer JSON: {exc}",
                                observer=self.kind, target=self.url) from exc

    def observe(self) -> Observation:
        """One GET, parsed into an Observation stamped when the answer was read."""
        data = self.fetch()
        return observation_from_data(data, time.time(), observer=self.kind, target=self.url)


# ---- the effect sink ------------------------------------------------------------------

class SinkObserver:
    """The effect sink's records: in process (`EffectSink`) or by URL (``GET /sink/effects``).

    A URL may be the sink's base URL (``/sink/effects`` is appended) or the effect
    endpoint itself. Effects carry amount and idempotency key; the sink has no states.
    """

    kind = "sink"

    def __init__(self, source: EffectSink | str, timeout_s: float = 5.0, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._store = source if isinstance(source, EffectSink) else None
        self._http: HttpObserver | None = None
        if self._store is None:
            if not isinstance(source, str):
                raise TypeError(f"SinkObserver needs an EffectSink or a URL, not {type(source).__name__}")
            url = source.rstrip("/")
            if not url.endswith("/sink/effects"):
                url += "/sink/effects"
            self._http = HttpObserver(url, timeout_s, max_bytes=max_bytes)
            self._http.kind = self.kind

    def observe(self) -> Observation:
        """The sink's applied effects, in application order."""
        if self._store is not None:
            records = self._store.records()
            return Observation(time.time(), effect_rows([r.business_key for r in records], [r.amount for r in records],
                                                        [r.idempotency_key for r in records]))
        assert self._http is not None
        data = self._http.fetch()
        target = self._http.url
        if isinstance(data, Mapping):
            data = {"effects": data.get("effects", [])}
        return observation_from_data(data, time.time(), observer=self.kind, target=target)

    def close(self) -> None:
        """Close the HTTP client, if any."""
        if self._http is not None:
            self._http.close()


# ---- Python ---------------------------------------------------------------------------

class PythonObserver:
    """Calls `fn()` for in-process targets; it returns an Observation or the dict shape."""

    kind = "python"

    def __init__(self, fn: Callable[[], Observation | Mapping[str, Any]]) -> None:
        self.fn = fn
        self.target = getattr(fn, "__qualname__", None) or repr(fn)

    def observe(self) -> Observation:
        """Call the function; its exceptions become ObserverError (chained)."""
        try:
            result = self.fn()
        except ObserverError:
            raise
        except Exception as exc:
            raise ObserverError(f"python observer: {self.target} raised {type(exc).__name__}: {exc}",
                                observer=self.kind, target=self.target) from exc
        if isinstance(result, Observation):
            return result
        return observation_from_data(result, time.time(), observer=self.kind, target=self.target)


# ---- settling ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SettleResult:
    """What `settle` saw.

    Attributes:
        observations: every observation, in order (each carries its time `at`).
        settled: True when effects and states stayed unchanged for the window (or,
            showing everything expected, for the quiet period) before the deadline; or,
            waited for (`short`), unchanged for the window when the deadline came.
        early: True when it settled on evidence: everything expected was shown and
            stayed unchanged for the quiet period.
        short: True when it waited for what the reads did not show yet, up to the
            deadline or until they stayed unchanged for `stall_s`, and they still fell short
            (unchanged for the window): what is missing is missing after that wait, not after
            a short window.
    """

    observations: list[Observation]
    settled: bool
    early: bool = False
    short: bool = False

    @property
    def final(self) -> Observation:
        """The last observation."""
        return self.observations[-1]


def _same(a: Observation, b: Observation) -> bool:
    """Whether `a` and `b` show the same effects and states (as multisets: row order is
    ignored) and the same counters. Equal rows in the same order are seen by one tuple
    comparison (identical rows by identity); only rows that moved are counted, and those
    counts are dropped at once (a storm's read holds a million rows: nothing is kept per
    row between reads)."""
    if (a.counters is None) != (b.counters is None) or (a.counters is not None and b.counters is not None
                                                          and dict(a.counters) != dict(b.counters)):
        return False
    if len(a.effects) != len(b.effects) or len(a.states) != len(b.states):
        return False
    return ((a.effects == b.effects or Counter(a.effects) == Counter(b.effects))
            and (a.states == b.states or Counter(a.states) == Counter(b.states)))


def unchanged_since(observations: Sequence[Observation]) -> float:
    """When (`Observation.at`, unix seconds) the reads stopped changing: the time of the first
    of the trailing reads equal to the last (`settle`'s comparison). Raises IndexError when empty."""
    last = observations[-1]
    since = last.at
    for obs in reversed(observations):
        if not _same(obs, last):
            break
        since = obs.at
    return since


def _sharing(obs: Observation, seen: Observation) -> Observation:
    """`obs`, its effect and state rows taken from `seen` when they are equal in the same
    order (the same values: a read repeating the last one holds no rows of its own)."""
    effects = seen.effects if obs.effects is not seen.effects and obs.effects == seen.effects else obs.effects
    states = seen.states if obs.states is not seen.states and obs.states == seen.states else obs.states
    if effects is obs.effects and states is obs.states:
        return obs
    return replace(obs, effects=effects, states=states)


def settle(
    observer: Observer | Callable[[], Observation],
    *,
    window_s: float,
    deadline_s: float,
    interval_s: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    done: Callable[[Observation], bool] | None = None,
    quiet_s: float | None = None,
    patient: Callable[[], bool] | None = None,
    owed: Callable[[Observation], bool] | None = None,
    stall_s: float | None = None,
    on_shown: Callable[[], None] | None = None,
) -> SettleResult:
    """Poll `observer` every `interval_s` until effects, states (as multisets: row
    order is ignored) and counters are unchanged for `window_s`, or `deadline_s` has passed since
    the start. At least one observation is always taken. ObserverError propagates.

    Settling on evidence: `done(observation)` says whether a read shows every effect and
    state the provider's history implies (the caller's expectations). While the latest
    read does, it settles after `quiet_s` unchanged (default `QUIET_INTERVALS` poll
    intervals, never more than `window_s`) instead of `window_s`: a receiver that has
    done its work is not waited for, and any change (a late duplicate, a late state)
    restarts the count, so it is still seen. While it does not, the reads go on until one
    does or the deadline comes, however long they stay unchanged: a receiver that answers
    first and applies later (a worker, a queue, an SDK retrying the provider API) is given
    the deadline, not the window, to show what it owes. At the deadline, reads unchanged
    for the window settle it `short` (what is missing is then judged missing); reads still
    changing do not settle. `patient()` False (checked before every read) gives a read
    that falls short the window only, as without `done`. `owed` (default: `done`) is what
    is waited for, when it differs: given with no `done` (nothing can prove the receiver
    done, so a read showing what it owes still gets the window), what is owed is waited
    for all the same. `stall_s` bounds that wait by the reads' progress: reads that miss
    something owed and stay unchanged for `stall_s` (and the window) settle `short` then,
    before the deadline (a receiver still changing what it shows is waited for up to the
    deadline; one that stopped short of what it owes is not waited for any longer).
    `on_shown()` is called once, as soon as a read shows everything (`done`): the settle
    then ends after the quiet period unless a read changes (the runner pre-sends its next
    race burst then).

    `clock` (monotonic seconds) and `sleep` are injectable for tests.
    """
    if (window_s < 0 or deadline_s < 0 or interval_s <= 0 or (quiet_s is not None and quiet_s < 0)
            or (stall_s is not None and stall_s < 0)):
        raise ValueError("window_s, deadline_s, quiet_s and stall_s must be >= 0 and interval_s > 0")
    read: Callable[[], Observation] = observer.observe if isinstance(observer, Observer) else observer
    quiet = min(window_s, quiet_s if quiet_s is not None else QUIET_INTERVALS * interval_s)
    stall = max(window_s, stall_s) if stall_s is not None else None
    start = clock()
    first = read()
    observations = [first]
    last = first  # the read the current stable stretch started with
    owes = owed if owed is not None else done
    shown = done is not None and done(first)
    paid = shown or owes is None or owes(first)
    if shown and on_shown is not None:
        on_shown()
        on_shown = None
    stable_since = clock()
    while True:
        now = clock()
        waiting = not paid and (patient is None or patient())
        needed = quiet if shown else window_s
        stable = now - stable_since >= needed - _EPSILON_S
        if stable and not waiting:
            return SettleResult(observations, True, early=shown and quiet < window_s)
        if waiting and stall is not None and now - stable_since >= stall - _EPSILON_S:
            return SettleResult(observations, True, short=True)
        if now - start >= deadline_s - _EPSILON_S:
            return SettleResult(observations, stable and waiting, short=stable and waiting)
        pause = min(interval_s, start + deadline_s - now)
        if not waiting:
            pause = min(pause, stable_since + needed - now)
        elif stall is not None:
            pause = min(pause, stable_since + stall - now)
        sleep(max(0.0, pause))
        obs = _sharing(read(), observations[-1])
        observations.append(obs)
        if not _same(obs, last):
            last = obs
            shown = done is not None and done(obs)
            paid = shown or owes is None or owes(obs)
            if shown and on_shown is not None:
                on_shown()
                on_shown = None
            stable_since = clock()


__all__ = [
    "DEFAULT_MAX_BYTES",
    "HttpObserver",
    "Observer",
    "QUIET_INTERVALS",
    "PythonObserver",
    "SettleResult",
    "SinkObserver",
    "SqlObserver",
    "observation_from_data",
    "settle",
    "unchanged_since",
]
