"""The run report's views of what the scenarios recorded and found, and the go-live checklist.

Pure functions from the scenarios' records (`Attempt`, `CheckResult`, `Observation`,
`ScenarioReport`) to the report model's plain views (`hookproof.reports.model`), shared by
certify's runner, explore and a storm's end (which need not load the runner); with the version
reports carry (`VERSION`) and the history meta key of the report (`REPORT_META_KEY`); and the
run report of some scenarios (`run_report`) they all build.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable, Iterator, Sequence, cast

import hookproof
from hookproof.reports.model import (
    AttemptView,
    ChecklistItem,
    CheckView,
    EffectPoint,
    Evidence,
    FindingView,
    RunReport,
    ScenarioReport,
)
from hookproof.scenarios.catalog import CHECKLIST, CHECKLIST_CHECKS, CHECKLIST_DECIDED_BY, SCENARIO_CHECKLIST_CHECKS
from hookproof.scenarios.checks import CheckResult
from hookproof.scenarios.findings import Finding, run_verdict
from hookproof.scenarios.observations import Observation
from hookproof.simulator.delivery import Attempt

#: The installed hookproof version, as reports carry it (from the package metadata).
VERSION: str = hookproof.__version__
#: History meta key holding the run's report (report.json's document) as it stands.
REPORT_META_KEY = "report"


def run_report(scenarios: Sequence[ScenarioReport], *, target: str, profile: str, live: bool, seed: int,
               started_at: float, partial: bool = False, history_file: str | None = None,
               notes: Sequence[str] = (), config: str | None = None) -> RunReport:
    """The report of a run of `scenarios` against `target` (its URL or in-process app) with
    `profile` in live or test mode, read from the `config` file (None: none), finished now
    (unix seconds): its verdict (`run_verdict`,
    ``unknown`` when `partial` and nothing failed), the go-live checklist (`checklist`) and
    this version (`VERSION`). Certify's runner, explore and a storm's end make theirs here."""
    scenarios = tuple(scenarios)
    return RunReport(
        tool_version=VERSION, target=target, profile=profile, environment="live" if live else "test", seed=seed,
        started_at=started_at, finished_at=time.time(), verdict=run_verdict((s.verdict for s in scenarios),
                                                                            partial=partial),
        scenarios=scenarios, checklist=checklist(scenarios), partial=partial, history_file=history_file,
        notes=tuple(notes), config=config,
    )


def attempt_view(a: Attempt) -> AttemptView:
    """The report's view of one recorded attempt."""
    return AttemptView(
        index=a.index, event_id=a.event_id, event_type=a.event_type, delivery_id=a.delivery_id, attempt=a.attempt,
        business_key=a.business_key, object_id=a.object_id, faults=a.faults, valid=a.valid, sent_at=a.sent_at,
        answered_at=a.answered_at, status=a.status, outcome=a.outcome.value, completion=a.completion.value,
        latency_ms=a.latency_ms, error=a.error,
    )


def check_view(c: CheckResult) -> CheckView:
    """The report's view of one check result (values made JSON-plain)."""
    return CheckView(check_id=c.check_id, verdict=c.verdict.value, detail=c.detail, stats=dict(c.stats),
                     findings=tuple(map(finding_view, c.findings)))


def take_check_view(results: list[CheckResult], shared: dict[object, object] | None = None,
                    keep: Callable[[Iterator[FindingView]], Sequence[FindingView]] | None = None) -> CheckView:
    """`check_view` of the first of `results`, which is taken out of the list: its findings
    become views one at a time, each Finding dropped once its view is made (when nothing
    else holds the result), so a storm's million findings are not held twice.

    `shared`: keys and attempt tuples already in views (each its own value), kept across
    calls: a view whose key (or attempts) equals one there holds that one, so a key every
    check fails on (a storm's lost and counter findings of each key) is one text, not one
    per check. Equal values only: the views are the same as without it.

    `keep`: given the views as they are made (an iterator), returns what the check view holds
    of them (a storm's end writes each to its history and holds the rows,
    `scenarios.saved_report.FindingsKeeper`); by default a tuple of them."""
    c = results.pop(0)
    findings = c.findings
    c = replace(c, findings=())
    if keep is not None:  # one at a time, as `keep` reads them (a per-key check's made when read)
        return replace(check_view(c), findings=keep(finding_view(f, shared) for f in findings))
    pending = list(findings)
    del findings
    pending.reverse()
    made = []
    while pending:
        made.append(finding_view(pending.pop(), shared))
    return replace(check_view(c), findings=tuple(made))


def finding_view(f: Finding, shared: dict[object, object] | None = None) -> FindingView:
    """The report's view of one finding (values made JSON-plain); with `shared`, its key and
    attempts those equal to them there, when there are (`take_check_view`)."""
    key, attempts = f.key, tuple(f.attempts)
    if shared is not None:
        key = cast(str, shared.setdefault(key, key))  # a str is never equal to a tuple: one dict
        attempts = cast("tuple[int, ...]", shared.setdefault(attempts, attempts))
    return FindingView(f.check_id, key, f.message, f.severity, attempts, _plain(f.expected), _plain(f.actual), f.count)


def _plain(value: object) -> object:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def effect_points(observations: Sequence[Observation], keys: set[str]) -> tuple[EffectPoint, ...]:
    """When the observer first saw each new count of effects for `keys` (for timelines)."""
    points: list[EffectPoint] = []
    seen: dict[str, int] = {}
    for obs in observations:
        for key, count in obs.counts(keys).items():  # `keys`' counts only: no entry per row's key
            if count > seen.get(key, 0):
                seen[key] = count
                points.append(EffectPoint(key, obs.at, count))
    return tuple(points)


def checklist(results: Sequence[ScenarioReport]) -> tuple[ChecklistItem, ...]:
    """Each go-live checklist item's verdict from the scenarios that evidence it.

    An item fails only on findings of the checks that speak to it (`CHECKLIST_CHECKS`):
    a race that duplicates an effect in the sender-timeout scenario fails "unique under
    concurrency", not "persists before acknowledging". A scenario may add checks for an item
    (`SCENARIO_CHECKLIST_CHECKS`: in distinct-updates-same-object a stale state fails "survives
    duplicate deliveries").
    Each scenario's own verdict for the item (`Evidence`) is judged the same way, and the
    item's verdict is theirs composed, so an item and its evidence always agree; except that an
    item only some scenarios can pass (`CHECKLIST_DECIDED_BY`: "persists before acknowledging",
    by certify --chaos's crashes) is ``untested`` without one of them, which are listed (not run).
    """
    items = []
    for item_id, title in CHECKLIST.items():
        evidence = [r for r in results if item_id in r.checklist and r.verdict not in ("not_applicable",)]
        relevant = CHECKLIST_CHECKS[item_id]
        judged = tuple(Evidence(r.id, _item_verdict(r, relevant | SCENARIO_CHECKLIST_CHECKS.get(r.id, {}).get(
            item_id, frozenset()))) for r in evidence)
        verdicts = {e.verdict for e in judged}
        verdict = ("untested" if not judged else "fail" if "fail" in verdicts else
                   "unknown" if "unknown" in verdicts else "pass")
        scenarios = tuple(r.id for r in evidence)
        deciding = CHECKLIST_DECIDED_BY.get(item_id, ())
        if deciding and not any(e.scenario in deciding for e in judged):
            # what ran can fail it, never pass it: the deciding scenarios shown as not run
            verdict = "untested" if verdict == "pass" else verdict
            scenarios += tuple(sid for sid in deciding if sid not in scenarios)
        items.append(ChecklistItem(item_id, title, verdict, scenarios, judged))
    return tuple(items)


def _item_verdict(r: ScenarioReport, relevant: frozenset[str]) -> str:
    """Scenario `r`'s verdict for a checklist item whose checks are `relevant`."""
    if r.verdict == "error" or any(c in relevant for c in r.finding_check_ids):
        return "fail"
    if r.verdict == "unknown" or any(c.check_id in relevant and c.verdict == "unknown" for c in r.checks):
        return "unknown"
    return "pass"
