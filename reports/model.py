"""The neutral run model every renderer reads (JSON, JUnit XML, Markdown, HTML).

Plain frozen dataclasses, built by the runner (`scenarios.runner`) from a run's
history, observations and check results, and rebuilt from `report.json`. Renderers
are pure functions of a `RunReport`. No secret is ever part of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any, Iterator, Mapping, Sequence

from pydantic import AfterValidator

#: Version of the report.json schema (bump on incompatible change).
SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class AttemptView:
    """One attempt as reports show it (a subset of the history's `Attempt`)."""

    index: int
    event_id: str
    event_type: str
    delivery_id: str
    attempt: int
    business_key: str | None
    object_id: str | None
    faults: tuple[str, ...]
    valid: bool
    sent_at: float  # unix seconds
    answered_at: float  # unix seconds
    status: int | None
    outcome: str  # acked, rejected, server_error, timeout, dropped, connection_error
    completion: str  # ok, fail, unknown
    latency_ms: float
    error: str | None = None


@dataclass(frozen=True, slots=True)
class LogExcerpt:
    """Where the receiver's own log is kept and what it said around a finding.

    `path` is the kept log relative to the report folder (``receiver.log``); `tail` its
    last lines written during the finding's scenario (at most `chaos.process.TAIL_LINES`),
    every secret hookproof knows masked as ``***``.
    """

    path: str
    tail: str


@dataclass(frozen=True, slots=True)
class FindingView:
    """One finding or advisory of a check. `log`: the receiver's log around a 5xx
    (``no_server_error``) finding, when hookproof started the receiver and kept its log."""

    check_id: str
    key: str
    message: str
    severity: str  # "finding" or "advisory"
    attempts: tuple[int, ...] = ()  # AttemptView.index values
    expected: Any = None
    actual: Any = None
    count: int = 1  # identical findings (other events, same words) merged into this one
    log: LogExcerpt | None = None


@dataclass(frozen=True)
class CheckView:
    """One check's result within a scenario."""

    check_id: str
    verdict: str  # valid, invalid, unknown
    # a tuple (read from report.json, a tuple), or a sequence read one at a time: a storm's end
    # holds its hundreds of thousands as rows of its history (`scenarios.saved_report.StoredFindings`)
    findings: Annotated[Sequence[FindingView], AfterValidator(tuple)] = ()
    stats: Mapping[str, Any] = field(default_factory=dict)
    detail: str = ""


@dataclass(frozen=True)
class EffectPoint:
    """When the observer first saw `count` effects for a business key (for timelines)."""

    business_key: str
    at: float  # unix seconds
    count: int


@dataclass(frozen=True)
class ScenarioReport:
    """One scenario's outcome.

    `verdict` is ``pass``, ``fail``, ``unknown``, ``not_applicable`` or ``error``;
    `reason` explains not_applicable/error. `attempts` are this scenario's attempts in
    history order; `effects` the effect timeline of the keys involved in findings.
    """

    id: str
    title: str
    description: str
    verdict: str
    checklist: tuple[str, ...]
    checks: tuple[CheckView, ...] = ()
    attempts: tuple[AttemptView, ...] = ()
    effects: tuple[EffectPoint, ...] = ()
    reason: str | None = None
    duration_s: float = 0.0
    settled: bool = True

    @cached_property
    def findings(self) -> tuple[FindingView, ...]:
        """The checks' findings (not advisories), in check order, held together once asked
        for: the renderers read them one at a time instead (`iter_findings`, `finding_count`)."""
        return tuple(self.iter_findings())

    @cached_property
    def advisories(self) -> tuple[FindingView, ...]:
        """The checks' advisories (stricter than the official verifier; never failing)."""
        return tuple(self.iter_findings("advisory"))

    def iter_findings(self, severity: str = "finding") -> Iterator[FindingView]:
        """The checks' findings of `severity` (``finding`` or ``advisory``), in check order,
        one at a time, none kept: what `findings` holds, for a storm's hundreds of thousands."""
        for c in self.checks:
            for f in c.findings:
                if f.severity == severity:
                    yield f

    @cached_property
    def _tally(self) -> tuple[int, int, tuple[str, ...], LogExcerpt | None]:
        """(findings, advisories, the findings' check ids in first-seen order, the first
        finding's log excerpt): one pass."""
        findings = advisories = 0
        checks: dict[str, None] = {}
        log: LogExcerpt | None = None
        for c in self.checks:
            for f in c.findings:
                if f.severity == "finding":
                    findings += 1
                    checks.setdefault(f.check_id)
                    if log is None:
                        log = f.log
                elif f.severity == "advisory":
                    advisories += 1
        return findings, advisories, tuple(checks), log

    @property
    def finding_count(self) -> int:
        """``len(findings)``, counted without holding them."""
        return self._tally[0]

    @property
    def advisory_count(self) -> int:
        """``len(advisories)``, counted without holding them."""
        return self._tally[1]

    @property
    def finding_check_ids(self) -> tuple[str, ...]:
        """The checks whose findings (not advisories) the scenario has, in first-seen order."""
        return self._tally[2]

    @property
    def finding_log(self) -> LogExcerpt | None:
        """The receiver's log around the first finding that quotes it (`FindingView.log`), or None."""
        return self._tally[3]

    @cached_property
    def finding_keys(self) -> tuple[str, ...]:
        """Business keys named by findings, in first-seen order, without duplicates."""
        return tuple(dict.fromkeys(f.key for f in self.iter_findings()))

    @cached_property
    def _by_key(self) -> tuple[dict[str, list[int]], dict[int, int], dict[str, list[EffectPoint]]]:
        """Attempt positions and effects per business key; attempt index -> position.

        Built once, so every per-key lookup below costs only its own key's size.
        """
        positions: dict[str, list[int]] = {}
        by_index: dict[int, int] = {}
        for pos, a in enumerate(self.attempts):
            by_index[a.index] = pos
            if a.business_key is not None:
                positions.setdefault(a.business_key, []).append(pos)
        effects: dict[str, list[EffectPoint]] = {}
        for e in self.effects:
            effects.setdefault(e.business_key, []).append(e)
        return positions, by_index, effects

    def findings_for(self, key: str) -> tuple[FindingView, ...]:
        """The findings on business key `key`, in check order (one pass over the findings)."""
        return tuple(f for f in self.iter_findings() if f.key == key)

    def attempts_for(self, key: str, findings: Sequence[FindingView] | None = None) -> tuple[AttemptView, ...]:
        """The attempts of business key `key`, plus any a finding on `key` names, in history order
        (`findings`: the findings on `key`, when the caller has them; else `findings_for`).

        A key no attempt carries as its business key is an object's id (a ``stale`` or
        ``regressed`` finding's): every attempt about that object, so a stale state's
        timeline shows the event that overwrote the final one beside it, not only the final."""
        positions, by_index, _ = self._by_key
        chosen = set(positions.get(key, ()))
        named = self.findings_for(key) if findings is None else findings
        chosen.update(by_index[i] for f in named for i in f.attempts if i in by_index)
        if key not in positions:
            chosen.update(pos for pos, a in enumerate(self.attempts) if a.object_id == key)
        return tuple(self.attempts[pos] for pos in sorted(chosen))

    def effects_for(self, key: str) -> tuple[EffectPoint, ...]:
        """The effect points of business key `key`, oldest first."""
        return tuple(sorted(self._by_key[2].get(key, ()), key=lambda e: (e.at, e.count)))


@dataclass(frozen=True)
class Evidence:
    """One scenario's verdict for one checklist item: judged only by the checks that speak
    to the item (a scenario failing on another check still passes here)."""

    scenario: str
    verdict: str  # pass, fail, unknown


@dataclass(frozen=True)
class ChecklistItem:
    """A go-live checklist item: verdict and the scenarios that evidence it.

    `evidence` holds each scenario's verdict for this item; the item's verdict is theirs
    composed (fail over unknown over pass), so the two always agree. Reports written
    before it existed have none: renderers then show the scenarios' own verdicts.
    """

    id: str
    title: str
    verdict: str  # pass, fail, unknown, untested
    scenarios: tuple[str, ...]
    evidence: tuple[Evidence, ...] = ()

    def evidence_verdict(self, scenario_id: str) -> str | None:
        """This item's verdict in scenario `scenario_id`, or None when not recorded."""
        return next((e.verdict for e in self.evidence if e.scenario == scenario_id), None)


@dataclass(frozen=True)
class RunReport:
    """A whole run: what was tested, how, and the verdicts.

    `verdict` is ``pass`` (every applicable scenario passed), ``fail`` (a finding) or
    ``unknown``. `partial` is True when the run was interrupted or stopped at its
    maximum duration; `notes` say why, in plain words.
    """

    tool_version: str
    target: str  # the target's URL or in-process app description
    profile: str
    environment: str  # test or live
    seed: int
    started_at: float
    finished_at: float
    verdict: str
    scenarios: tuple[ScenarioReport, ...]
    checklist: tuple[ChecklistItem, ...]
    partial: bool = False
    history_file: str | None = None
    notes: tuple[str, ...] = ()  # why the run went as it did: stopped early, receiver down, schedule scaled
    receiver_log: str | None = None  # the receiver's own log kept in the report folder (relative path), if any
    config: str | None = None  # the hookproof.toml the run read, as it was given (None: none, as `send`'s)
    schema_version: int = SCHEMA_VERSION

    @property
    def duration_s(self) -> float:
        """Wall-clock length of the run in seconds."""
        return max(0.0, self.finished_at - self.started_at)

    def scenario(self, scenario_id: str) -> ScenarioReport | None:
        """The scenario with id `scenario_id`, or None when the run has none."""
        return next((s for s in self.scenarios if s.id == scenario_id), None)

    def failed_elsewhere(self, item: ChecklistItem, scenario_id: str) -> FailedElsewhere | None:
        """Where scenario `scenario_id` failed when `item` does not fail it, or None.

        An item judges a scenario by the checks that speak to it only, so a scenario that
        failed on another check is no evidence against the item; the renderers then say
        where it failed instead of showing it passing beside its own FAIL.
        """
        scenario = self.scenario(scenario_id)
        if scenario is None or scenario.verdict != "fail" or item.evidence_verdict(scenario_id) in (None, "fail"):
            return None
        checks = scenario.finding_check_ids
        items = tuple(i.title for i in self.checklist
                      if i.id != item.id and i.evidence_verdict(scenario_id) == "fail")
        return FailedElsewhere(checks, items)


@dataclass(frozen=True)
class FailedElsewhere:
    """Where a scenario failed that a checklist item does not fail: the checks whose findings
    failed it, and the titles of the other checklist items it fails."""

    checks: tuple[str, ...]
    items: tuple[str, ...]
