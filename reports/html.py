"""report.html: one self-contained page (inline CSS and SVG; opens offline).

The header (target, profile, environment, seed, time, overall verdict), the verdict of
every scenario (``<table id="verdicts">``), the go-live checklist with its evidence, and
for each key a finding names (a business key, or the id of an object whose state it is
about, headed by the provider's noun: ``Order``, ``Subscription``), a timeline
(``<svg class="timeline">``) of its deliveries, attempts and effects, with the attempts
listed below it. The page is a pure function of the `RunReport`, rendered by Jinja2 with
autoescaping on.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jinja2

from hookproof.reports._format import OUTCOMES, attempt_refs, key_labels, one_line, plural, seconds, utc, verdict_label
from hookproof.reports.model import AttemptView, CheckView, FindingView, RunReport, ScenarioReport
from hookproof.reports.timeline import Timeline, layout_timeline

__all__ = ["render_html"]


@dataclass(frozen=True)
class KeyView:
    """One key of a failing scenario (a business key, or the id of an object whose state a
    finding is about): its findings, timeline and attempts; `label` says which, in the
    provider's words (``Business key``, ``Order``, ``Subscription``: `_format.key_label`)."""

    key: str
    label: str
    findings: tuple[FindingView, ...]
    timeline: Timeline | None
    attempts: tuple[tuple[AttemptView, str], ...]  # with the send time relative to the first


#: Business keys per scenario drawn with findings and timeline (a storm can have thousands;
#: report.json and the Markdown summary carry every finding).
MAX_DETAILED_KEYS = 50


@dataclass(frozen=True)
class ProblemView:
    """A scenario with findings or undecided checks."""

    scenario: ScenarioReport
    keys: tuple[KeyView, ...]
    unknown: tuple[CheckView, ...]
    more_keys: int = 0  # business keys with findings beyond `MAX_DETAILED_KEYS`, not drawn


def render_html(report: RunReport) -> str:
    """The report as one HTML document (ends with a newline)."""
    html = _template().render(
        report=report,
        counts=_counts(report),
        problems=[p for p in (_problem(s) for s in report.scenarios) if p is not None],
        advisories=[(s, f) for s in report.scenarios if s.advisory_count for f in s.iter_findings("advisory")],
        outcomes=OUTCOMES,
    )
    return html.rstrip("\n") + "\n"


@functools.cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("hookproof.reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(verdict=verdict_label, utc=utc, seconds=seconds, refs=attempt_refs,
                       one_line=one_line, plural=plural, stats=_stats, notes=_finding_notes)
    env.globals.update(check_summary=_check_summary)
    return env.get_template("report.html.j2")


def _counts(report: RunReport) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for s in report.scenarios:
        counts[s.verdict] = counts.get(s.verdict, 0) + 1
    order = ("fail", "error", "unknown", "pass", "not_applicable")
    return sorted(counts.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))


def _check_summary(scenario: ScenarioReport) -> str:
    if not scenario.checks:
        return "-"
    counts: dict[str, int] = {}
    for c in scenario.checks:
        label = verdict_label(c.verdict).lower()
        counts[label] = counts.get(label, 0) + 1
    return " · ".join(f"{n} {label}" for label, n in counts.items())


def _problem(scenario: ScenarioReport) -> ProblemView | None:
    """The scenario's findings and undecided checks, or None: a scenario that does not apply
    has none (its undecided checks are why it does not apply, told under its reason)."""
    if scenario.verdict == "not_applicable":
        return None
    unknown = tuple(c for c in scenario.checks if c.verdict == "unknown")
    if not scenario.finding_count and not unknown:
        return None
    # one pass over the findings (a storm's are read one at a time): the first keys, each with its
    # findings, and how many distinct keys there are
    drawn: dict[str, list[FindingView]] = {}
    named: set[str] = set()
    for f in scenario.iter_findings():
        if f.key in drawn:
            drawn[f.key].append(f)
        elif len(drawn) < MAX_DETAILED_KEYS:
            drawn[f.key] = [f]
        named.add(f.key)
    more_keys = max(0, len(named) - MAX_DETAILED_KEYS)
    del named
    keys = []
    label = key_labels(scenario.attempts)
    for key, findings in drawn.items():
        attempts = scenario.attempts_for(key, findings)
        effects = scenario.effects_for(key)
        starts = [a.sent_at for a in attempts if math.isfinite(a.sent_at)] + [e.at for e in effects]
        t0 = min(starts, default=0.0)
        keys.append(KeyView(
            key=key,
            label=label(key),
            findings=tuple(findings),
            timeline=layout_timeline(attempts, effects),
            attempts=tuple((a, f"+{(a.sent_at - t0) * 1000:.0f} ms") for a in attempts),
        ))
    return ProblemView(scenario, tuple(keys), unknown, more_keys)


def _finding_notes(finding: FindingView) -> str:
    """``attempts #3, #4; expected 1, actual 2`` (empty when a finding has neither)."""
    notes = []
    if finding.attempts:
        notes.append(f"attempts {attempt_refs(finding.attempts)}")
    if finding.expected is not None or finding.actual is not None:
        notes.append(f"expected {_value(finding.expected)}, actual {_value(finding.actual)}")
    return "; ".join(notes)


def _stats(stats: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_value(v)}" for k, v in sorted(stats.items()))


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
