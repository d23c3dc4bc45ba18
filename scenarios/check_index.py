"""The index the checks share: one pass over a run's history and observations.

`build_index` files every attempt's position under its business key and its event,
records each valid attempt's completion, the events acked and the *notable* attempts
(invalid, or answered 4xx/5xx), and counts the effects of every observation. A check
then looks a key or an event up instead of scanning the history, and the checks about
answers scan only the notable attempts. `run_checks` builds it once per run; a check
called without one builds its own (`index_for`).

The history is read once, in order, by `scenarios.history_scan.scan_history`, from any
sequence: certify's list, or a storm's `HistoryFile` streamed from disk (then the index
keeps no attempt: an attempt a finding names is read back by position).
`expectations_and_index` builds the expectations and the index from that one pass.

At a million attempts the time goes to memory traffic, not to the algorithm: every pass
touches every attempt object and every large dict misses the CPU caches. So the index
is built in one pass that allocates per key and per event, never per attempt, and what
only a finding needs (ack windows, an event's key) is computed on demand.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Mapping, Sequence

from hookproof.scenarios.expectation_views import EventKeys
from hookproof.scenarios.findings import Finding
from hookproof.scenarios.groups import NO_GROUP, Groups, group_positions
from hookproof.scenarios.history_scan import ANSWERED_NON_SUCCESS, HistoryScan, scan_history
from hookproof.scenarios.observations import MONEY_PREFIXES, Expectations, Observation
from hookproof.scenarios.world_columns import ExtendedCodes
from hookproof.simulator.delivery.history import Attempt, Completion
from hookproof.simulator.events import Event


@dataclass
class CheckIndex:
    """Indexes over one run, built in one pass over the history and shared by the checks.

    Positions are indexes into `history`; every list of positions is in history order.

    Attributes:
        history: the attempts the positions point into.
        expectations: the run's expectations (for `key_of_event`).
        by_key: business key → positions of the attempts filed under it: those carrying
            it, and those carrying no key whose event has it (`key_of_event`); a
            `scenarios.groups.Groups`, as is `by_event`.
        by_event: event id → positions.
        completions: position → the completion of a valid attempt, None for an invalid one.
        acked_events: the events with at least one valid attempt that completed ok
            (`ack_window` gives their timing).
        notable: positions of the attempts that are invalid, or got a 4xx/5xx status or a
            rejected or server-error outcome; the per-attempt checks scan these only.
        settled: the last observation, or None when nothing was observed.
        settled_counts: effect rows per key in `settled`.
        peak: key → (highest count in any observation, position of that observation).
        has_states: True when any observation reported any state.
        state_kinds: the object kinds any observation declared it reads states of
            (`Observation.state_kinds`), or None when none declared any.
        scan: what the pass over the history kept besides (the acked latencies:
            `HistoryScan`).
    """

    history: Sequence[Attempt]
    expectations: Expectations
    by_key: Groups
    by_event: Groups
    completions: list[Completion | None]
    acked_events: Set[str]
    notable: list[int]
    settled: Observation | None
    settled_counts: dict[str, int]
    peak: dict[str, tuple[int, int]]
    has_states: bool
    state_kinds: frozenset[str] | None = None
    scan: HistoryScan | None = field(default=None, repr=False)
    _ack_windows: dict[str, tuple[float, float]] = field(default_factory=dict, repr=False)  # ack_window's memo

    def attempt_ids(self, positions: Iterable[int]) -> tuple[int, ...]:
        """History indexes of the attempts at `positions` (see `history_id`); a history
        whose indexes are its positions (``indexes_are_positions``, `HistoryFile`) is not
        read back."""
        history = self.history
        if getattr(history, "indexes_are_positions", False):
            return tuple(positions)
        return tuple(history_id(history[p], p) for p in positions)

    def answer_summary(self, positions: Sequence[int]) -> str:
        """The distinct answers the attempts at `positions` got (`answer_summary`)."""
        return answer_summary(self.history, positions)

    def acked(self, positions: Iterable[int]) -> list[int]:
        """Positions among `positions` of valid attempts that completed ok."""
        completions, ok = self.completions, Completion.OK
        return [p for p in positions if completions[p] is ok]

    @cached_property
    def expected_keys(self) -> Mapping[str, str]:
        """Event id → the first expected key listing it (in `ExpectedEffect.event_ids`,
        or as its `event_id` when those are empty). Built on first use: from the pass's
        columns when the expectations are this index's scan's (`EventKeys`), else a dict."""
        from hookproof.scenarios.expectation_views import EventKeys, ExpectedView

        expected = self.expectations.expected
        scan = self.scan
        if isinstance(expected, ExpectedView) and scan is not None and expected.columns.codes is scan.key_codes:
            return EventKeys(scan.event_codes, expected.columns)
        out: dict[str, str] = {}
        for key, exp in self.expectations.expected.items():
            for event_id in exp.event_ids or (exp.event_id,):
                if event_id not in out:
                    out[event_id] = key
        return out

    def ack_window(self, event_id: str) -> tuple[float, float] | None:
        """(earliest send, earliest answer) among the event's valid acked attempts, unix
        seconds, or None when none was acked. Computed on first use and remembered."""
        if event_id not in self.acked_events:
            return None
        window = self._ack_windows.get(event_id)
        if window is None:
            history, completions, ok = self.history, self.completions, Completion.OK
            acked = [history[p] for p in self.by_event[event_id] if completions[p] is ok]
            window = (min(a.sent_at for a in acked), min(a.answered_at for a in acked))
            self._ack_windows[event_id] = window
        return window

    def key_of_event(self, event_id: str) -> str | None:
        """The business key of an event: the expected key listing it (`expected_keys`),
        else the key of its first attempt that carries one, else None."""
        key = self.expected_keys.get(event_id)
        if key is None and self.scan is not None:  # the scan's column of own keys: no attempt read back
            key_of = self.scan.key_of
            for p in self.by_event.get(event_id, ()):
                code = int(key_of[p])
                if code != NO_GROUP:
                    return self.scan.key_names[code]
        return key

    def label(self, a: Attempt) -> str:
        """The key a per-attempt finding is filed under: business key, object or event."""
        if a.business_key is not None:
            return a.business_key
        return self.key_of_event(a.event_id) or a.object_id or a.event_id


def history_id(a: Attempt, pos: int) -> int:
    """The history index of `a` at position `pos` (its recorded index, else `pos`)."""
    return a.index if a.index >= 0 else pos


def build_index(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation]
) -> CheckIndex:
    """Build the shared `CheckIndex`: one pass over the history (`scan_history`), one
    over the observations.

    The pass does a few dictionary operations per attempt and creates one list per key
    and per event, nothing per attempt. Attempts without a business key are filed
    under their event's key afterwards (the key may come from a later attempt).
    """
    scan = scan_history(history, sender_timeout_s=expectations.sender_timeout_s)
    return index_of(scan, history, expectations, observations)


def expectations_and_index(
    events: Iterable[Event], history: Sequence[Attempt], observations: Sequence[Observation], *,
    sender_timeout_s: float, max_attempts_per_event: int | None, money_prefixes: Sequence[str] = MONEY_PREFIXES,
) -> tuple[Expectations, CheckIndex]:
    """The run's expectations (as `expectations_from`) and the checks' index (as
    `build_index`), from one pass over `history`: a `HistoryFile` is read from disk once."""
    scan = scan_history(history, sender_timeout_s=sender_timeout_s, events=events)
    expectations = scan.expectations(max_attempts_per_event=max_attempts_per_event, money_prefixes=money_prefixes)
    return expectations, index_of(scan, history, expectations, observations)


def index_of(
    scan: HistoryScan, history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
) -> CheckIndex:
    """The `CheckIndex` of a `scan_history` pass over `history` and of `observations`
    (takes over the scan's lists: scan a history once per index)."""
    peak: dict[str, tuple[int, int]] = {}
    shared: dict[tuple[int, int], tuple[int, int]] = {}  # one (count, observation) tuple per value, not per key
    counts: dict[str, int] = {}
    has_states = False
    state_kinds: frozenset[str] | None = None
    for oi, obs in enumerate(observations):
        counts = obs.counts()
        has_states = has_states or bool(obs.states)
        if obs.state_kinds is not None:
            state_kinds = obs.state_kinds if state_kinds is None else state_kinds | obs.state_kinds
        for key, n in counts.items():
            best = peak.get(key)
            if best is None or n > best[0]:
                pair = (n, oi)
                peak[key] = shared.setdefault(pair, pair)
    settled = observations[-1] if observations else None
    index = CheckIndex(history, expectations, scan.by_event, scan.by_event, scan.completions, scan.acked_events,
                       scan.notable, settled, counts if settled is not None else {}, peak, has_states, state_kinds,
                       scan)
    index.by_key = _filed_by_key(index, scan)
    return index


def _filed_by_key(index: CheckIndex, scan: HistoryScan) -> Groups:
    """`index.by_key`: the attempts under their own business key, and those without one
    under their event's key (`key_of_event`), each key's positions in history order.

    An event none of whose attempts carries a key is looked up in the expectations only.
    A key only an event gives gets the next code (in the order of those events' first
    attempt without a key). One sort of the positions by key, in numpy.
    """
    import numpy as np

    key_of = scan.key_of
    unkeyed = key_of == NO_GROUP
    if not unkeyed.any():
        return group_positions(scan.key_codes, key_of)
    unkeyed_events = scan.event_of[unkeyed]
    codes_met, first = np.unique(unkeyed_events, return_index=True)
    in_order = codes_met[np.argsort(first, kind="stable")]  # in order of first attempt without a key
    n_events = len(scan.event_codes)
    without_key = np.bincount(unkeyed_events, minlength=n_events)
    attempts = np.bincount(scan.event_of, minlength=n_events)
    ids = scan.event_codes  # event code → id, read only for an event whose key is looked up by id
    names = getattr(ids, "names", None) or list(ids)
    codes = ExtendedCodes(scan.key_codes)  # the scan's own keys stay its own (not copied)
    filed_code = np.full(n_events, NO_GROUP, dtype=np.int64)
    expected_keys = index.expected_keys
    by_code = expected_keys if isinstance(expected_keys, EventKeys) else None
    any_filed = False
    for code in in_order.tolist():
        key: str | None
        if by_code is not None and (k := by_code.key_code(code)) >= 0:  # `expected_keys.get`, by code
            key = by_code.key_name(k)
        elif by_code is not None and without_key[code] == attempts[code]:
            key = None
        elif without_key[code] == attempts[code]:  # no attempt of it carries a key
            key = expected_keys.get(names[code])
        else:
            key = index.key_of_event(names[code])
        if key is not None:
            filed_code[code] = codes.add(key)
            any_filed = True
    if not any_filed:
        return group_positions(codes, key_of)
    filed = key_of.copy()
    filed[unkeyed] = filed_code[unkeyed_events]
    return group_positions(codes, filed)


def index_for(
    history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
    index: CheckIndex | None,
) -> CheckIndex:
    """`index` when given (the one `run_checks` shares), else one built for this call."""
    return index if index is not None else build_index(history, expectations, observations)


def answer_summary(history: Sequence[Attempt], positions: Sequence[int]) -> str:
    """The distinct answers the attempts got: status codes, or the outcome when none came."""
    seen = dict.fromkeys(str(history[p].status) if history[p].status is not None
                         else history[p].outcome.value.replace("_", " ") for p in positions)
    return ", ".join(seen)


def grouped_findings(
    check_id: str, groups: Mapping[tuple[str, str], list[int]], history: Sequence[Attempt],
    idx: CheckIndex, messages: Mapping[str, tuple[str, str, str]],
) -> list[Finding]:
    """One finding per (event id, category); `messages[category]` = (severity, expected, text).

    The text may use ``{statuses}`` (the statuses the attempts got), ``{n}`` (how many
    attempts) and ``{types}`` (their event types); the finding lists the attempts.
    Identical findings of several events are merged by `findings.result_of`.
    """
    out = []
    for (_, category), positions in groups.items():
        severity, expected, text = messages[category]
        statuses = answer_summary(history, positions)
        types = ", ".join(dict.fromkeys(history[p].event_type for p in positions))
        out.append(Finding(
            check_id, idx.label(history[positions[0]]),
            text.format(statuses=statuses, n=len(positions), types=types),
            expected=expected, actual=statuses,
            attempts=idx.attempt_ids(positions), severity=severity,
        ))
    return out


__all__: Sequence[str] = [
    "ANSWERED_NON_SUCCESS",
    "CheckIndex",
    "answer_summary",
    "build_index",
    "expectations_and_index",
    "grouped_findings",
    "history_id",
    "index_for",
    "index_of",
]
