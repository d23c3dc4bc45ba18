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
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, cast, overload

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


class EqualAsSequence:
    """Equality of a lazily read sequence (`MadeFindings`, `saved_report.StoredFindings`): equal
    to any sequence (not a string) of the same items in the same order; unhashable."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        mine = cast("Sequence[Any]", self)
        return len(mine) == len(other) and all(a == b for a, b in zip(mine, other))

    __hash__ = None  # type: ignore[assignment]


class MadeFindings(EqualAsSequence, Sequence[Finding]):
    """Findings made when read, one per code: finding `i` is ``make(codes[i])``.

    What a per-key check over a `key_table.KeyTable` returns for its failing keys (one finding
    per key, `codes` the keys' codes in the check's order): a storm whose every key fails
    holds its codes (an int per finding) rather than ~850,000 `Finding` objects, each finding
    made when a reader reaches it (the report's views, written out as they are made) and
    dropped after. `make` reads what it needs when called (the check's index), which must
    stay as it was until the findings are read. Every finding has its own key, so there is
    nothing for `merge_findings` to merge; equal to any sequence of the same findings.
    """

    __slots__ = ("_codes", "_make")
    #: Codes read from the array at a time when iterating (no list of every code).
    STEP = 4096

    def __init__(self, codes: Any, make: Callable[[int], Finding]) -> None:
        self._codes = codes  # a one-dimensional numpy array of int codes
        self._make = make

    def __len__(self) -> int:
        return len(self._codes)

    @overload
    def __getitem__(self, i: int) -> Finding: ...

    @overload
    def __getitem__(self, i: slice) -> "MadeFindings": ...

    def __getitem__(self, i: int | slice) -> "Finding | MadeFindings":
        if isinstance(i, slice):
            return MadeFindings(self._codes[i], self._make)
        return self._make(int(self._codes[i]))

    def __iter__(self) -> Iterator[Finding]:
        make, codes = self._make, self._codes
        for start in range(0, len(codes), self.STEP):
            for code in codes[start:start + self.STEP].tolist():
                yield make(code)

    def where(self, keep: Callable[[Finding], bool]) -> "MadeFindings":
        """The findings for which `keep` holds, in order, still made when read (one pass
        over them now, to choose; nothing kept of them but their codes)."""
        import numpy as np

        mask = np.fromiter((keep(f) for f in self), dtype=bool, count=len(self))
        return MadeFindings(self._codes[mask], self._make)

    def __repr__(self) -> str:
        return f"MadeFindings({len(self)} findings)"


def kept_findings(findings: Sequence[Finding], keep: Callable[[Finding], bool]) -> Sequence[Finding]:
    """The findings of `findings` for which `keep` holds, in order: a tuple, or for
    `MadeFindings` findings still made when read (`MadeFindings.where`)."""
    if isinstance(findings, MadeFindings):
        return findings.where(keep)
    return tuple(f for f in findings if keep(f))


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check: verdict, findings (advisories included) and stats."""

    check_id: str
    verdict: Verdict
    findings: Sequence[Finding] = ()  # a tuple, or `MadeFindings` (a per-key check's, made when read)
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
    check_id: str, findings: Sequence[Finding], stats: Mapping[str, object] | None = None,
    *, unknown: str | None = None,
) -> CheckResult:
    """The result of check `check_id`: invalid when any finding is not an advisory, else
    unknown when `unknown` gives a reason, else valid; the detail counts both kinds (the
    reason first). Identical findings are merged (`merge_findings`; `MadeFindings`, one
    per key, have none to merge and stay made when read)."""
    if not isinstance(findings, MadeFindings):
        findings = tuple(merge_findings(findings))
    problems = total = 0
    for f in findings:  # one pass: a MadeFindings' findings are made on each
        total += f.count
        if not f.advisory:
            problems += f.count
    if problems:
        verdict = Verdict.INVALID
    elif unknown is not None:
        verdict = Verdict.UNKNOWN
    else:
        verdict = Verdict.VALID
    detail = f"{problems} finding(s), {total - problems} advisory(ies)"
    if unknown is not None:
        detail = f"{unknown}; {detail}"
    return CheckResult(check_id, verdict, findings, dict(stats or {}), detail)


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
    "MadeFindings",
    "Verdict",
    "compose",
    "kept_findings",
    "merge_findings",
    "nothing_observed",
    "result_of",
    "run_verdict",
]
