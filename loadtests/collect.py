"""The master's side of gathering expectations: every worker's attempts and events.

Workers send their records in chunks (message ``hookproof_records``), then a closing
message (``hookproof_done``) with their totals and, if they could not run, an error.
`Collector` accumulates them per worker node and says when every expected worker has
finished and whether the totals match. Pure; no Locust import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from hookproof.simulator.delivery.history import Attempt
from hookproof.simulator.events import Event

from hookproof.loadtests.records import attempt_from_wire, event_from_wire

#: Custom message types (worker -> master).
RECORDS_MESSAGE = "hookproof_records"
DONE_MESSAGE = "hookproof_done"


@dataclass
class _Node:
    attempts: list[Attempt] = field(default_factory=list)
    events: dict[str, Event] = field(default_factory=dict)
    done: Mapping[str, Any] | None = None


class Collector:
    """Attempts and events received from worker nodes, keyed by node id."""

    def __init__(self) -> None:
        self._nodes: dict[str, _Node] = {}
        self.errors: list[str] = []

    def add(self, node: str, data: Mapping[str, Any]) -> None:
        """Take one ``hookproof_records`` payload: ``{"attempts": [...], "events": [...]}``.

        A malformed record is noted in `errors` and skipped, never raised.
        """
        entry = self._nodes.setdefault(node, _Node())
        for raw in data.get("events", ()):
            try:
                event = event_from_wire(raw)
            except (KeyError, TypeError, ValueError) as exc:
                self.errors.append(f"worker {node}: bad event record ({type(exc).__name__}: {exc})")
                continue
            entry.events.setdefault(event.id, event)
        for raw in data.get("attempts", ()):
            try:
                entry.attempts.append(attempt_from_wire(raw))
            except (KeyError, TypeError, ValueError) as exc:
                self.errors.append(f"worker {node}: bad attempt record ({type(exc).__name__}: {exc})")

    def done(self, node: str, data: Mapping[str, Any]) -> None:
        """Take a ``hookproof_done`` payload: ``{"attempts": n, "events": m, "error": str | None}``."""
        entry = self._nodes.setdefault(node, _Node())
        entry.done = dict(data)
        if data.get("error"):
            self.errors.append(f"worker {node}: {data['error']}")

    def finished(self, nodes: Iterable[str]) -> bool:
        """True when every node in `nodes` has sent its closing message."""
        return all(n in self._nodes and self._nodes[n].done is not None for n in nodes)

    def problems(self, nodes: Iterable[str]) -> list[str]:
        """Why the records of `nodes` are incomplete (empty when they are whole)."""
        out = list(self.errors)
        for n in nodes:
            entry = self._nodes.get(n)
            if entry is None or entry.done is None:
                out.append(f"worker {n} sent no closing message (its records may be missing)")
                continue
            want = entry.done.get("attempts")
            if want != len(entry.attempts):
                out.append(f"worker {n} reported {want} attempts, {len(entry.attempts)} arrived")
        return out

    def attempts(self) -> list[Attempt]:
        return [a for entry in self._nodes.values() for a in entry.attempts]

    def events(self) -> list[Event]:
        merged: dict[str, Event] = {}
        for entry in self._nodes.values():
            for event_id, event in entry.events.items():
                merged.setdefault(event_id, event)
        return list(merged.values())

    @property
    def nodes(self) -> list[str]:
        return list(self._nodes)


__all__ = ["Collector", "DONE_MESSAGE", "RECORDS_MESSAGE"]
