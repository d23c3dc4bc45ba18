"""One observer factory: the observer a config's ``[observer]`` table describes.

certify (through the front door) and the storm's master (`loadtests.verdict`) both build
their observer here, from plain values (`ObserverSpec`: the table as a mapping, plus the
config file's folder), so the same table is read the same way by both:

- ``sql``: `SqlObserver` over ``url`` with ``effects``, the subscription ``state`` query,
  one ``states.<kind>`` query per other object kind, and an optional ``counter`` query.
- ``http``: `HttpObserver` of ``url`` within ``timeout_s``.
- ``sink``: the effect sink's records (`SinkObserver`, in process or by URL); with ``url``
  and any state or counter query, those are read from that SQL database and merged in.
- ``python``: the ``callable`` (``module:attr``), importable from the config's folder too.

Errors: `ObserverSpec.from_mapping` raises ValueError for an unknown kind or a missing
field; `build_observer` raises ObserverError (`scenarios.errors`) for an observer that
cannot be built, including a callable that cannot be imported.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hookproof.scenarios.errors import ObserverError
from hookproof.scenarios.observations import Observation
from hookproof.scenarios.observers import (
    HttpObserver,
    PythonObserver,
    SinkObserver,
    SqlObserver,
)
from hookproof.simulator.server.sink import EffectSink

#: The observer kinds a config may name.
KINDS: tuple[str, ...] = ("sql", "http", "sink", "python")


@dataclass(frozen=True)
class ObserverSpec:
    """An ``[observer]`` table as plain values.

    Attributes:
        kind: ``sql``, ``http``, ``sink`` or ``python``.
        url: SQLAlchemy URL (sql; sink with states), or the http endpoint.
        effects: the effects query (sql).
        state: the subscriptions' state query (``object_id, status[, version]``).
        states: object kind → its state query (invoices, orders, payments…).
        state_fields: object kind → the extra columns of its state query that are part of
            its state (``[observer.state_fields]``: ``subscription`` → ``("price",)``).
        state_absent: object kind → status → the declared columns its events in that status
            do not carry, left out of a row in it (`scenarios.state_fields.StateFields.absent`).
        counter: the counter query (``key, amount``).
        callable: ``module:attr`` (python).
        timeout_s: bound on each read, seconds.
        base_dir: the config file's folder (python callables import from it), or None.
    """

    kind: str
    url: str | None = None
    effects: str | None = None
    state: str | None = None
    states: Mapping[str, str] = field(default_factory=dict)
    state_fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    state_absent: Mapping[str, Mapping[str, frozenset[str]]] = field(default_factory=dict)
    counter: str | None = None
    callable: str | None = None
    timeout_s: float = 5.0
    base_dir: str | None = None

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any], base_dir: str | Path | None = None) -> ObserverSpec:
        """The spec of an observer table (``ObserverConfig.model_dump()``, or a storm spec's
        copy of it). Keys it does not know are ignored; ``base_dir`` in the table is used
        when `base_dir` is not given. Raises ValueError for an unknown kind or a missing field."""
        kind = table.get("kind")
        if kind not in KINDS:
            raise ValueError(f"unknown observer kind {kind!r} (known: {', '.join(KINDS)})")
        folder = base_dir if base_dir is not None else table.get("base_dir")
        spec = cls(kind=str(kind), url=_opt(table, "url"), effects=_opt(table, "effects"), state=_opt(table, "state"),
                   states={str(k): str(v) for k, v in (table.get("states") or {}).items()},
                   state_fields={str(k): tuple(map(str, v)) for k, v in (table.get("state_fields") or {}).items()},
                   counter=_opt(table, "counter"), callable=_opt(table, "callable"),
                   timeout_s=float(table.get("timeout_s") or 5.0), base_dir=str(folder) if folder else None)
        if spec.kind in ("sql", "http") and not spec.url:
            raise ValueError(f"the {spec.kind} observer needs 'url'")
        if spec.kind == "sql" and not spec.effects:
            raise ValueError("the sql observer needs 'effects'")
        if spec.kind == "python" and not spec.callable:
            raise ValueError("the python observer needs 'callable'")
        return spec

    @property
    def reads_sql_states(self) -> bool:
        """True when a state or counter query is configured."""
        return bool(self.state or self.states or self.counter)


def _opt(table: Mapping[str, Any], name: str) -> str | None:
    value = table.get(name)
    return None if value is None else str(value)


def build_observer(spec: ObserverSpec, *, sink: EffectSink | str | None = None) -> Callable[[], Observation]:
    """The observer `spec` describes, as a function returning one Observation.

    `sink` is the effect sink (in process) or its URL, for the ``sink`` kind. Raises
    ObserverError when the observer cannot be built (no sink, a bad URL, an import error).
    """
    if spec.kind == "sql":
        assert spec.url is not None
        return SqlObserver(spec.url, spec.effects, spec.state, timeout_s=max(spec.timeout_s, 10.0),
                           state_queries=spec.states, counter_query=spec.counter,
                           state_fields=spec.state_fields, state_absent=spec.state_absent).observe
    if spec.kind == "http":
        assert spec.url is not None
        return HttpObserver(spec.url, timeout_s=spec.timeout_s).observe
    if spec.kind == "sink":
        if sink is None:
            raise ObserverError("sink observer: the effect sink is not running (no URL)", observer="sink")
        effects = SinkObserver(sink, timeout_s=spec.timeout_s)
        if spec.url and spec.reads_sql_states:
            states = SqlObserver(spec.url, None, spec.state, timeout_s=max(spec.timeout_s, 10.0),
                                 state_queries=spec.states, counter_query=spec.counter,
                                 state_fields=spec.state_fields, state_absent=spec.state_absent)
            return lambda: merge(effects.observe(), states.observe())
        return effects.observe
    return PythonObserver(import_callable(spec.callable or "", spec.base_dir)).observe


def merge(effects: Observation, states: Observation) -> Observation:
    """The effects of one observation with the states and counters of another."""
    return replace(states, at=max(effects.at, states.at), effects=effects.effects)


def import_callable(target: str, base_dir: str | None) -> Any:
    """The attribute named by ``module:attr`` (dots allowed on both sides), importable from
    `base_dir` too (put first on ``sys.path``). Raises ObserverError naming it."""
    module_name, _, attr = target.partition(":")
    if base_dir is not None:
        folder = str(Path(base_dir).resolve())
        if folder not in sys.path:
            sys.path.insert(0, folder)
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:  # noqa: BLE001 - importing user code may raise anything
        raise ObserverError(f"python observer: cannot import {target!r}: {type(exc).__name__}: {exc}",
                            observer="python", target=target) from None
    return obj


__all__ = ["KINDS", "ObserverSpec", "build_observer", "import_callable", "merge"]
