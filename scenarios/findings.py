"""Findings and verdicts: what a check returns, and how results compose.

Modelled on Jepsen's checkers (``checker.clj``): a check returns a `CheckResult` with a
three-valued `Verdict` and its `Finding`s; `compose` merges verdicts by priority
(invalid beats unknown beats valid). Advisories are findings with
``severity="advisory"``: reported, never making a verdict invalid.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Iterable, Mapping, Sequence

#: Severity of a finding that makes a verdict invalid.
FINDING = "finding"
#: Severity of a finding that is only reported.
ADVISORY = "advisory"
#: `Finding.key` of findings about the run as a whole (latency).
ALL_KEYS = "*"
#: Most attempt indexes listed in one whole-run finding.
MAX_LISTED_ATTEMPTS = 20


class Verdict(StrEnum):
    """Jepsen's three-valued ``:valid?``."""

    VALID = "valid"
    INVALID = "invalid"
    UNKNOWN = "unknown"


_PRIORITY = {Verdict.VALID: 0, Verdict.UNKNOWN: 1, Verdict.INVALID: 2}


@dataclass(frozen=True, slots=True)
class Finding:
    """One violation (or, with ``severity="advisory"``, one remark).

    Slotted, and its message shared with every equal message made before it that is still
    held (`sys.intern`): a storm whose every key fails holds a million findings, most of
    whose messages are the same few texts.

    Attributes:
        check_id: the check that found it.
        key: the business key, object id or event id concerned (``"*"``: the run).
        message: one line a person understands.
        expected / actual: what should have been seen, and what was.
        attempts: history indexes of the attempts involved, in history order.
        severity: ``"finding"`` or ``"advisory"``.
        count: how many identical findings this one stands for (`merge_findings`:
            same check, key, message, expectation and severity; their attempts joined).
    """

    check_id: str
    key: str
    message: str
    expected: object = None
    actual: object = None
    attempts: tuple[int, ...] = ()
    severity: str = FINDING
    count: int = 1

    @property
    def advisory(self) -> bool:
        return self.severity == ADVISORY

    def __post_init__(self) -> None:
        if type(self.message) is str:
            object.__setattr__(self, "message", sys.intern(self.message))

    def to_dict(self) -> dict[str, object]:
        return {
            "check_id": self.check_id, "key": self.key, "message": self.message,
            "expected": self.expected, "actual": self.actual,
            "attempts": list(self.attempts), "severity": self.severity, "count": self.count,
        }


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check: verdict, findings (advisories included) and stats."""

    check_id: str
    verdict: Verdict
    findings: tuple[Finding, ...] = ()
    stats: Mapping[str, object] = field(default_factory=dict)
    detail: str = ""

    @property
    def problems(self) -> tuple[Finding, ...]:
        """The findings that are not advisories."""
        return tuple(f for f in self.findings if not f.advisory)

    @property
    def advisories(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.advisory)

    def to_dict(self) -> dict[str, object]:
        return {
            "check_id": self.check_id, "verdict": self.verdict.value, "detail": self.detail,
            "stats": dict(self.stats), "findings": [f.to_dict() for f in self.findings],
        }


def merge_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Identical findings merged into one with a `Finding.count`, in first-seen order.

    Identical: same check, key, message, expected, actual and severity (their attempts
    differ: the merged finding lists all of them, in history order). O(n): the findings
    are looked up by key (a storm's million findings of distinct keys hold one dict entry
    each, no tuple of their words), and compared in full with those of the same key only.
    """
    merged: list[Finding] = []
    by_key: dict[str, int | list[int]] = {}  # key -> position(s) in `merged` of its findings
    for f in findings:
        at = by_key.get(f.key)
        same = None
        if at is not None:
            same = next((i for i in (at if isinstance(at, list) else (at,)) if _identical(merged[i], f)), None)
        if same is None:
            if at is None:
                by_key[f.key] = len(merged)
            elif isinstance(at, list):
                at.append(len(merged))
            else:
                by_key[f.key] = [at, len(merged)]
            merged.append(f)
            continue
        seen = merged[same]
        attempts = tuple(sorted(set(seen.attempts) | set(f.attempts)))
        merged[same] = Finding(seen.check_id, seen.key, seen.message, seen.expected, seen.actual, attempts,
                               seen.severity, seen.count + f.count)
    return merged


def _identical(a: Finding, b: Finding) -> bool:
    """Whether `a` and `b` (of one key) are the same finding but for their attempts and count."""
    return (a.check_id == b.check_id and a.message == b.message and a.severity == b.severity
            and repr(a.expected) == repr(b.expected) and repr(a.actual) == repr(b.actual))


def run_verdict(verdicts: Iterable[str], *, partial: bool = False) -> str:
    """The one rule for a run's verdict from its scenarios' verdicts (certify, explore, storm).

    ``"fail"`` when any scenario is ``fail`` or ``error``; else ``"unknown"`` when any is
    ``unknown``, the run is `partial` (interrupted, or records are missing), or no
    scenario was tested at all (none, or every one ``not_applicable``: nothing is
    certified); else ``"pass"``.
    """
    seen = set(verdicts)
    if seen & {"fail", "error"}:
        return "fail"
    if "unknown" in seen or partial or not seen - {"not_applicable"}:
        return "unknown"
    return "pass"


def compose(results: Iterable[CheckResult]) -> Verdict:
    """Merge verdicts by priority: invalid > unknown > valid (valid when empty)."""
    verdict = Verdict.VALID
    for result in results:
        if _PRIORITY[result.verdict] > _PRIORITY[verdict]:
            verdict = result.verdict
    return verdict


def result_of(
    check_id: str, findings: list[Finding], stats: Mapping[str, object] | None = None,
    *, unknown: str | None = None,
) -> CheckResult:
    """The result of check `check_id`: invalid when any finding is not an advisory, else
    unknown when `unknown` gives a reason, else valid; the detail counts both kinds (the
    reason first). Identical findings are merged (`merge_findings`)."""
    findings = merge_findings(findings)
    problems = sum(f.count for f in findings if not f.advisory)
    if problems:
        verdict = Verdict.INVALID
    elif unknown is not None:
        verdict = Verdict.UNKNOWN
    else:
        verdict = Verdict.VALID
    detail = f"{problems} finding(s), {sum(f.count for f in findings) - problems} advisory(ies)"
    if unknown is not None:
        detail = f"{unknown}; {detail}"
    return CheckResult(check_id, verdict, tuple(findings), dict(stats or {}), detail)


def nothing_observed(check_id: str) -> CheckResult:
    """The ``unknown`` result of a check that needs an observation and has none."""
    return result_of(check_id, [], {"observations": 0}, unknown="nothing was observed")


__all__: Sequence[str] = [
    "ADVISORY",
    "ALL_KEYS",
    "CheckResult",
    "FINDING",
    "Finding",
    "MAX_LISTED_ATTEMPTS",
    "Verdict",
    "compose",
    "merge_findings",
    "nothing_observed",
    "result_of",
    "run_verdict",
]
