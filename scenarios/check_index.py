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
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from hookproof.scenarios import key_table as key_tables
from hookproof.scenarios.answer_quote import answer_quote
from hookproof.scenarios.expectation_views import EventKeys
from hookproof.scenarios.findings import Finding
from hookproof.scenarios.groups import NO_GROUP, Groups, group_positions
from hookproof.scenarios.history_scan import ANSWERED_NON_SUCCESS, HistoryScan, scan_history
from hookproof.scenarios.id_codes import IdCodes, MappedCodes, codes_in
from hookproof.scenarios.key_table import KeyTable, PeakView, SettledView, completion_codes, key_table
from hookproof.scenarios.observations import MONEY_PREFIXES, Expectations, Observation
from hookproof.scenarios.world_columns import ExtendedCodes
from hookproof.simulator.delivery.history import Attempt, Completion
from hookproof.simulator.events import Event
from hookproof.simulator.profiles.provider_words import ProviderWords

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


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
        observations: the observations `peak` and `settled_counts` were counted from,
            when the index keeps them (`keys` then reads them as columns).
        shared_codes: how many leading codes of `by_key` are the expectations' columns'
            (`scenarios.expectation_views.KeyColumns`), read as columns by `keys`; 0: none.
    """

    history: Sequence[Attempt]
    expectations: Expectations
    by_key: Groups
    by_event: Groups
    completions: Sequence[Completion | None]
    acked_events: Set[str]
    notable: list[int]
    settled: Observation | None
    settled_counts: Mapping[str, int]
    peak: Mapping[str, tuple[int, int]]
    has_states: bool
    state_kinds: frozenset[str] | None = None
    scan: HistoryScan | None = field(default=None, repr=False)
    _ack_windows: dict[str, tuple[float, float]] = field(default_factory=dict, repr=False)  # ack_window's memo
    observations: Sequence[Observation] | None = field(default=None, repr=False)
    shared_codes: int = 0

    @property
    def columnar(self) -> bool:
        """Whether the per-key checks read `keys` (every key at once, in numpy) rather than
        walk the keys (`scenarios.key_loops`): the index counts at least
        `scenarios.key_table.SMALL` keys and effect rows, or its counts are the table's."""
        return isinstance(self.peak, PeakView) or len(self.peak) + len(self.by_key) >= key_tables.SMALL

    @cached_property
    def keys(self) -> KeyTable:
        """The index by key code (`scenarios.key_table.KeyTable`), built on first use."""
        scan = self.scan
        codes = getattr(scan, "completion_codes", None)  # a scan made elsewhere may not keep them
        return key_table(self.by_key, self.expectations, self.observations, self.peak, self.settled_counts,
                         codes if codes is not None else completion_codes(self.completions),
                         shared=self.shared_codes)

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
        or as its `event_id` when those are empty). Built on first use: from the
        expectations' columns when they are columns (`EventKeys`: over this index's scan's
        event codes when the expectations are its scan's, else over those of the pass
        they came from, `build_index`'s case), else a dict."""
        from hookproof.scenarios.expectation_views import EventKeys, ExpectedView, event_codes_of

        expected = self.expectations.expected
        scan = self.scan
        if isinstance(expected, ExpectedView) and scan is not None:
            if expected.columns.codes is scan.key_codes:
                return EventKeys(scan.event_codes, expected.columns)
            return EventKeys(event_codes_of(expected.columns), expected.columns)
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
    provider: ProviderWords | None = None, truth: bool = True,
) -> tuple[Expectations, CheckIndex]:
    """The run's expectations (as `expectations_from`, `provider` included) and the checks'
    index (as `build_index`), from one pass over `history`: a `HistoryFile` is read from disk once.
    `truth` False: the expectations' truth is left empty, for a caller that reads no object's
    truth (`scan_history`)."""
    scan = scan_history(history, sender_timeout_s=sender_timeout_s, events=events, truth=truth)
    # what only the expectations read (the events' columns, per event and per key slots: a
    # storm's are some 90 MB at a million attempts) is freed as they read it, not kept through the checks
    expectations = scan.expectations(max_attempts_per_event=max_attempts_per_event, money_prefixes=money_prefixes,
                                     release=True)
    if provider is not None:
        expectations = replace(expectations, provider=provider)
    return expectations, index_of(scan, history, expectations, observations)


def index_of(
    scan: HistoryScan, history: Sequence[Attempt], expectations: Expectations, observations: Sequence[Observation],
) -> CheckIndex:
    """The `CheckIndex` of a `scan_history` pass over `history` and of `observations`
    (takes over the scan's lists: scan a history once per index). The observations'
    counts are read on first use, as columns (`CheckIndex.keys`)."""
    from hookproof.scenarios.expectation_views import ExpectedView

    has_states = False
    state_kinds: frozenset[str] | None = None
    for obs in observations:
        has_states = has_states or bool(obs.states)
        if obs.state_kinds is not None:
            state_kinds = obs.state_kinds if state_kinds is None else state_kinds | obs.state_kinds
    settled = observations[-1] if observations else None
    settled_counts: Mapping[str, int]
    peak: Mapping[str, tuple[int, int]]
    index: CheckIndex
    if sum(len(obs.effects) for obs in observations) + len(scan.key_codes) < key_tables.SMALL:
        settled_counts, peak = _counted(observations)  # a few keys: dicts, walked key by key
    else:
        peak = PeakView(lambda: index.keys)
        settled_counts = SettledView(peak)
    expected = expectations.expected
    shared = len(expected.columns.names) if isinstance(expected, ExpectedView) and \
        expected.columns.codes is scan.key_codes else 0
    index = CheckIndex(history, expectations, scan.by_event, scan.by_event, scan.completions, scan.acked_events,
                       scan.notable, settled, settled_counts, peak, has_states, state_kinds, scan,
                       observations=observations, shared_codes=shared)
    index.by_key = _filed_by_key(index, scan)  # its codes extend the scan's (`shared_codes`)
    return index


def _counted(observations: Sequence[Observation]) -> tuple[dict[str, int], dict[str, tuple[int, int]]]:
    """(effect rows per key in the last observation, key → (highest count in any
    observation, that observation's index)), as dicts in order of first sight."""
    peak: dict[str, tuple[int, int]] = {}
    counts: dict[str, int] = {}
    for oi, obs in enumerate(observations):
        counts = obs.counts()
        for key, n in counts.items():
            best = peak.get(key)
            if best is None or n > best[0]:
                peak[key] = (n, oi)
    return counts, peak


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
    expected_keys = index.expected_keys  # built first: its transients are gone before this pass's are made
    unkeyed_events = scan.event_of[unkeyed]
    # the events met without a key (each once, in code order), and each such attempt's among them
    codes_met, first, met_of = np.unique(unkeyed_events, return_index=True, return_inverse=True)
    del unkeyed_events
    by_first = np.argsort(first, kind="stable")
    del first
    in_order = codes_met[by_first]  # in order of first attempt without a key
    n_events = len(scan.event_codes)
    if isinstance(expected_keys, EventKeys):
        keyed = np.zeros(n_events, np.bool_)  # per event: some attempt of it carries a key
        keyed[scan.event_of[~unkeyed]] = True
        codes, in_order_code = _keys_of_events(expected_keys, scan, in_order, keyed[in_order])
        del keyed
        met_code = np.empty(len(codes_met), np.int64)  # the key code of each event met, in code order
        met_code[by_first] = in_order_code
        del in_order_code
    else:
        unkeyed_events = scan.event_of[unkeyed]
        without_key = np.bincount(unkeyed_events, minlength=n_events)
        attempts = np.bincount(scan.event_of, minlength=n_events)
        filed_code = np.full(n_events, NO_GROUP, dtype=np.int64)
        codes = _keys_one_by_one(index, scan, in_order, without_key, attempts, filed_code)
        met_code = filed_code[codes_met]
        del unkeyed_events, without_key, attempts, filed_code
    del codes_met, by_first, in_order
    if not (met_code >= 0).any():
        return group_positions(codes, key_of)
    filed = key_of.copy()
    filed[unkeyed] = met_code[met_of]
    del met_code, met_of, unkeyed
    return group_positions(codes, filed)


def _keys_of_events(
    expected_keys: "EventKeys", scan: HistoryScan, events: "npt.NDArray[np.int64]", keyed: "npt.NDArray[np.bool_]",
) -> tuple[Mapping[str, int], "npt.NDArray[np.integer[Any]]"]:
    """(the codes of `by_key`, the key code of each of `events`) as `key_of_event` gives
    them, in numpy: each event's expected key (`expected_keys`), else for an event some
    attempt of which carries a key (`keyed`), that of its first such attempt. A key only an
    event gives gets the next code, in the order of `events`.

    Expectations from another pass (`build_index`: their event and key codes are not the
    scan's) are joined by name: the events' ids looked up in their event codes, their
    keys in the scan's key codes (a key the scan lacks is n_scan + its code in theirs
    until renumbered), each distinct id or key once, together (`codes_in`)."""
    import numpy as np

    columns = expected_keys.columns
    n_scan = len(scan.key_names)
    if expected_keys.event_codes is scan.event_codes:
        key = expected_keys.codes_of_events[events]
    else:
        at = codes_in(expected_keys.event_codes, _event_names(scan.event_codes, events))
        key = np.full(len(events), -1, np.int64)
        hit = at >= 0
        key[hit] = expected_keys.codes_of_events[at[hit]]
    theirs = columns.codes is not scan.key_codes  # else codes of the expectations' columns: the scan's, then added
    if theirs:
        has = np.flatnonzero(key >= 0)
        if has.size:
            distinct, inverse = np.unique(key[has], return_inverse=True)
            found = codes_in(scan.key_codes, [columns.name(c) for c in distinct.tolist()])
            lacking = found < 0
            found[lacking] = n_scan + distinct[lacking]
            key[has] = found[inverse]
    need = (key < 0) & keyed
    if need.any():
        carried = np.flatnonzero(scan.key_of != NO_GROUP)
        seen, first = np.unique(scan.event_of[carried], return_index=True)
        first_carried = np.full(len(scan.event_codes), -1, np.int64)
        first_carried[seen] = carried[first]
        key[need] = scan.key_of[first_carried[events[need]]]
    added = key >= n_scan
    if not added.any():
        return scan.key_codes, key
    seen, first = np.unique(key[added], return_index=True)
    seen = seen[np.argsort(first, kind="stable")]  # in order of the events
    codes = ExtendedCodes(scan.key_codes)  # the scan's codes and the added ones, without a copy of the scan's
    for code in seen.tolist():
        codes.add(columns.name(code - n_scan if theirs else code))
    renumber = np.full(int(seen.max()) + 1, -1, np.int64)
    renumber[seen] = np.arange(n_scan, n_scan + len(seen))
    key[added] = renumber[key[added]]
    return codes, key


def _event_names(event_codes: Mapping[str, int], events: "npt.NDArray[np.int64]") -> list[str]:
    """The ids of the event codes `events` in `event_codes` (an `IdCodes` or `MappedCodes`,
    or a dict in code order)."""
    if isinstance(event_codes, (IdCodes, MappedCodes)):
        return event_codes.names_at(events)
    names = list(event_codes)
    return list(map(names.__getitem__, events.tolist()))


def _keys_one_by_one(
    index: CheckIndex, scan: HistoryScan, in_order: "npt.NDArray[np.int64]", without_key: "npt.NDArray[np.int64]",
    attempts: "npt.NDArray[np.int64]", filed_code: "npt.NDArray[np.int64]",
) -> dict[str, int]:
    """`_keys_of_events` for expectations that are not the pass's columns: an event at a
    time, into `filed_code`; returns the codes of `by_key`."""
    names = list(scan.event_codes)  # event code → id
    codes, key_names = dict(scan.key_codes), list(scan.key_names)  # the scan's own keys stay its own
    expected_keys = index.expected_keys
    for code in in_order.tolist():
        key: str | None
        if without_key[code] == attempts[code]:  # no attempt of it carries a key
            key = expected_keys.get(names[code])
        else:
            key = index.key_of_event(names[code])
        if key is not None:
            key_code = codes.get(key)
            if key_code is None:
                key_code = codes[key] = len(key_names)
                key_names.append(key)
            filed_code[code] = key_code
    return codes


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
    """One finding per (key, category, answers, event types); `messages[category]` =
    (severity, expected, text).

    `groups` maps (event id, category) to the positions of that event's attempts. Events
    filed under one key whose attempts got the same answers and carry the same types make
    one finding, whose `Finding.count` is how many events it stands for (what
    `findings.merge_findings` would give for one finding per event, in the same order).
    The text may use ``{events}`` (how many events), ``{n}`` (how many attempts, all
    those events'), ``{statuses}`` (the answers the attempts got), ``{types}`` (their
    event types) and ``{answer}`` (``; the receiver answered "…"``: the start of the
    first attempt's answer body, `answer_quote`, or nothing when it had none); the
    finding lists the attempts.
    """
    merged: dict[tuple[str, str, str, str], list[list[int]]] = {}
    for (_, category), positions in groups.items():
        statuses = answer_summary(history, positions)
        types = ", ".join(dict.fromkeys(history[p].event_type for p in positions))
        label = idx.label(history[positions[0]])
        merged.setdefault((label, category, statuses, types), []).append(positions)
    out = []
    for (label, category, statuses, types), events in merged.items():
        severity, expected, text = messages[category]
        first = history[events[0][0]]
        quote = answer_quote(first.response_excerpt) if "{answer}" in text else ""
        ids = sorted({i for positions in events for i in idx.attempt_ids(positions)})
        out.append(Finding(
            check_id, label,
            text.format(statuses=statuses, n=len(ids), events=len(events), types=types,
                        answer=f'; the receiver answered "{quote}"' if quote else ""),
            expected=expected, actual=statuses,
            attempts=tuple(ids), severity=severity, count=len(events),
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
