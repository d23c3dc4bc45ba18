"""The master's side of gathering expectations: every worker's attempts and events.

Workers stream their records in chunks while the storm runs (message
``hookproof_records``), then send a closing message (``hookproof_done``) with their
totals, the deliveries whose retry schedule the end of their drain cut (`loadtests.cut`)
and, if they could not run, an error. Before sending, each worker reports its
hookproof version and whether it reaches the target (``hookproof_ready``).
`Collector` appends every chunk to the master's `Spool` (on disk) as it arrives, keeps
per-worker counts only, and says when every expected worker has finished and whether
the totals match. Pure; no Locust import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from hookproof.loadtests.cut import CutDelivery
from hookproof.loadtests.spool import Spool

#: Custom message types (worker -> master).
RECORDS_MESSAGE = "hookproof_records"
DONE_MESSAGE = "hookproof_done"
READY_MESSAGE = "hookproof_ready"
#: Custom message types (master -> worker): every worker is ready, send; a late worker is refused.
GO_MESSAGE = "hookproof_go"
REFUSED_MESSAGE = "hookproof_refused"


@dataclass
class _Node:
    attempts: int = 0
    events: int = 0
    chunks: int = 0
    done: Mapping[str, Any] | None = None
    ready: Mapping[str, Any] | None = None
    owed: int = 0  # retries owed and attempts in flight, as its last draining chunk said

    def at(self) -> str:
        """Where the worker said it runs (`` (host, address)``), or ""."""
        ready = self.ready or {}
        where = [str(ready[k]) for k in ("host", "address") if isinstance(ready.get(k), str) and ready[k]]
        return f" ({', '.join(where)})" if where else ""


#: Seconds a worker that owes its closing message may stay without heartbeats (Locust calls it
#: missing after about 3 s) before the master stops waiting for it: a loaded worker's heartbeats
#: lag seconds and it comes back; a killed one never does, and waiting the drain's bound and
#: ``--collect-timeout`` for it changes nothing but the wait.
SILENT_AFTER_S = 15.0


def silent_workers(pending: list[str], heard: set[str], now: float, since: dict[str, float],
                   after_s: float = SILENT_AFTER_S) -> list[str]:
    """The nodes of `pending` (closing message owed) not `heard` (present in Locust's clients and
    not missing) for `after_s` seconds in a row, by `now` (monotonic seconds); `since` keeps when
    each went silent between calls (updated in place). Pure."""
    for node in list(since):
        if node in heard or node not in pending:
            del since[node]
    for node in pending:
        if node not in heard:
            since.setdefault(node, now)
    return [n for n in pending if n in since and now - since[n] >= after_s]


@dataclass(frozen=True)
class WorkerTotals:
    """What one worker sent: its Locust worker index (-1 for a single local process),
    attempts and event records received from it (an event's record comes with each chunk
    holding attempts of it: not a count of distinct events), and the chunks they came in; its Locust
    node id (`node`), where it runs as it said (`host`, `address`: "" when it did not),
    whether its closing message came (`closed`), and why it ended before the storm did
    (`stopped`: "" when it did not)."""

    index: int
    attempts: int
    events: int
    chunks: int
    node: str = ""
    host: str = ""
    address: str = ""
    closed: bool = True
    stopped: str = ""

    def line(self) -> str:
        """One line for the console and the reports: who, where, what it handed over."""
        where = ", ".join(w for w in (self.host, self.address) if w)
        name = (f"worker {self.index}" if self.index >= 0
                 else "the local process" if self.node in ("", "local") else "a worker")
        tail = "" if self.closed else "; no closing message (its records may be missing)"
        if self.stopped:
            tail += f"; {self.stopped}"
        node = f" {self.node}" if self.node not in ("", "local") else ""
        return (f"{name}{node}{f' ({where})' if where else ''}: {self.attempts} attempt(s), {self.events} event "
                f"record(s) (an event's once per chunk holding its attempts) in {self.chunks} chunk(s){tail}")


class Collector:
    """Counts of the records received from worker nodes, keyed by node id; the records
    themselves go to `spool` as they arrive."""

    def __init__(self, spool: Spool | None = None) -> None:
        self.spool = spool
        self._nodes: dict[str, _Node] = {}
        self.errors: list[str] = []

    def add(self, node: str, data: Mapping[str, Any]) -> None:
        """Take one ``hookproof_records`` payload: ``{"rows": [...], "attempts": [...],
        "events": [...], "owed": n}`` (`records.attempt_row` lists, `records.attempt_to_wire`
        dicts, `event_to_wire` dicts, while the worker drains its retries and attempts still
        owed; each key optional) and append it to the spool.

        A malformed record is noted in `errors` and skipped, never raised.
        """
        entry = self._nodes.setdefault(node, _Node())
        owed = data.get("owed")
        if isinstance(owed, int) and not isinstance(owed, bool):
            entry.owed = owed
        attempts = list(data.get("attempts") or ())
        rows = list(data.get("rows") or ())
        events = list(data.get("events") or ())
        entry.chunks += 1
        if self.spool is None:
            self.errors.append(f"worker {node}: records arrived before the storm started")
            return
        problems = self.spool.add(attempts, events, rows=rows)
        self.errors.extend(f"worker {node}: {p}" for p in problems)
        bad_attempts = sum(1 for p in problems if p.startswith("bad attempt"))
        entry.attempts += len(attempts) + len(rows) - bad_attempts
        entry.events += len(events)

    def done(self, node: str, data: Mapping[str, Any]) -> None:
        """Take a ``hookproof_done`` payload: ``{"attempts": n, "events": m, "error": str | None,
        "index": worker index, "sender": storm_state.SenderLoad.report(), "cut": [...],
        "stopped": str}`` (`cut.CutDelivery.to_wire` lists; ``stopped``, when the worker was
        stopped before the storm ended: how, in words)."""
        entry = self._nodes.setdefault(node, _Node())
        entry.done = dict(data)
        entry.owed = 0
        if data.get("error"):
            self.errors.append(f"worker {node}: {data['error']}")

    def ready(self, node: str, data: Mapping[str, Any]) -> None:
        """Take a ``hookproof_ready`` payload: ``{"version": str, "reachable": bool, "detail": str,
        "protocol": int, "index": int, "host": str, "address": str}`` (the last four optional: where
        the worker runs, as it says)."""
        self._nodes.setdefault(node, _Node()).ready = dict(data)

    def readiness(self, nodes: Iterable[str]) -> dict[str, Mapping[str, Any] | None]:
        """Each node's ``hookproof_ready`` payload (None: not received yet)."""
        return {n: (self._nodes[n].ready if n in self._nodes else None) for n in nodes}

    def refusal(self, nodes: Iterable[str], version: str, target_url: str, waited_s: float,
                protocol: str | None = None) -> str | None:
        """Why the storm cannot run with `nodes` (one line), or None: a worker that has not
        reported within `waited_s` seconds, one that refused the storm itself (``refused``: it
        cannot read it), one on another hookproof version than the master's `version` or (with
        `protocol`) another build of it, or one that cannot reach `target_url`."""
        for node, report in self.readiness(nodes).items():
            at = self._nodes[node].at() if node in self._nodes else ""
            if report is None:
                return (f"worker {node} did not report ready within {waited_s:.0f} s (is it this hookproof version "
                        "and build?)")
            if report.get("refused"):
                return f"worker {node}{at} refused the storm: {report['refused']}"
            if report.get("version") != version:
                return (f"worker {node}{at} runs hookproof {report.get('version')}, the master {version}: "
                        "install the same version on every machine")
            if protocol is not None and report.get("protocol") != protocol:
                return (f"worker {node}{at} runs another build of hookproof {version} (storm protocol "
                        f"{report.get('protocol') or '(none: an older build)'}, the master's {protocol}): install "
                        "the same build on every machine")
            if not report.get("reachable"):
                return (f"worker {node} cannot reach the target {target_url} ({report.get('detail') or 'no detail'});"
                        " a loopback target needs workers on the receiver's machine")
        return None

    def finished(self, nodes: Iterable[str]) -> bool:
        """True when every node in `nodes` has sent its closing message."""
        return all(n in self._nodes and self._nodes[n].done is not None for n in nodes)

    def problems(self, nodes: Iterable[str]) -> list[str]:
        """Why the records of `nodes` are incomplete (empty when they are whole)."""
        out = list(self.errors)
        for n in nodes:
            entry = self._nodes.get(n)
            if entry is None or entry.done is None:
                out.append(f"worker {n}{entry.at() if entry else ''} sent no closing message (its records may "
                           "be missing)")
                continue
            want = entry.done.get("attempts")
            if want != entry.attempts:
                out.append(f"worker {n}{entry.at()} reported {want} attempts, {entry.attempts} arrived")
        return out

    def unrecorded(self, nodes: Iterable[str]) -> list[str]:
        """Each of `nodes` whose records may be missing, in words (``worker <node> (host,
        address)``): no closing message came from it, or fewer attempts than it reported."""
        out = []
        for n in nodes:
            entry = self._nodes.get(n)
            if entry is None or entry.done is None or not isinstance(entry.done.get("attempts"), int) \
                    or entry.done["attempts"] > entry.attempts:
                out.append(f"worker {n}{entry.at() if entry else ''}")
        return out

    def started(self) -> list[str]:
        """The nodes that sent records or their closing message (a worker that quit mid-storm is
        gone from Locust's clients, never from here)."""
        return [n for n, e in self._nodes.items() if e.chunks or e.done is not None]

    def sender(self) -> dict[str, Any] | None:
        """How well the workers' senders kept up, over all of them (``hookproof_done``'s
        ``sender``: attempts and timed-out ones summed, the longest wait and loop lag);
        None when no worker told."""
        reports = [e.done["sender"] for e in self._nodes.values()
                   if e.done is not None and isinstance(e.done.get("sender"), Mapping)]
        if not reports:
            return None
        try:
            return {"attempts": sum(int(r.get("attempts", 0)) for r in reports),
                    "timed_out": sum(int(r.get("timed_out", 0)) for r in reports),
                    "timed_out_lagged": sum(int(r.get("timed_out_lagged", 0)) for r in reports),
                    "wait_max_ms": max(float(r.get("wait_max_ms", 0.0)) for r in reports),
                    "lag_max_ms": max(float(r.get("lag_max_ms", 0.0)) for r in reports)}
        except (TypeError, ValueError):
            self.errors.append("a worker's sender report was malformed")
            return None

    def owed(self) -> int:
        """Retries owed and attempts in flight over the workers still draining (their last
        chunk's count; 0 for a worker that closed)."""
        return sum(e.owed for e in self._nodes.values())

    def cut(self) -> list[CutDelivery]:
        """The deliveries whose schedule the end of a worker's drain cut, over every closed
        worker (``hookproof_done``'s ``cut``); a malformed one is noted in `errors`, skipped."""
        out: list[CutDelivery] = []
        for node, entry in self._nodes.items():
            for row in (entry.done or {}).get("cut") or ():
                try:
                    out.append(CutDelivery.from_wire(row))
                except ValueError as exc:
                    self.errors.append(f"worker {node}: {exc}")
        return out

    def totals(self) -> list[WorkerTotals]:
        """Per-worker totals, by worker index: each worker that sent records or its closing
        message (`started`; one that only reported ready sent nothing)."""
        out = []
        for node in self.started():
            e = self._nodes[node]
            ready, done = e.ready or {}, e.done or {}
            index = done.get("index", ready.get("index", -1))
            out.append(WorkerTotals(index if isinstance(index, int) and not isinstance(index, bool) else -1,
                                    e.attempts, e.events, e.chunks, node=node, host=_text(ready.get("host")),
                                    address=_text(ready.get("address")), closed=e.done is not None,
                                    stopped=_text(done.get("stopped"))))
        return sorted(out, key=lambda t: t.index)

    @property
    def nodes(self) -> list[str]:
        return list(self._nodes)


def _text(value: Any) -> str:
    """`value` when it is a string, else ""."""
    return value if isinstance(value, str) else ""


__all__ = ["Collector", "DONE_MESSAGE", "GO_MESSAGE", "READY_MESSAGE", "RECORDS_MESSAGE", "REFUSED_MESSAGE",
           "WorkerTotals"]
