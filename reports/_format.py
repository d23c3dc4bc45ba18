"""Wording and formatting shared by the renderers (pure; no I/O)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime, timezone

from hookproof.reports.model import AttemptView, FindingView, ScenarioReport

#: How verdicts read in every human-facing report.
VERDICT_LABELS = {
    "pass": "PASS",
    "fail": "FAIL",
    "not_applicable": "N/A",
    "unknown": "UNKNOWN",
    "error": "ERROR",
    "untested": "UNTESTED",
    "valid": "PASS",
    "invalid": "FAIL",
}

#: Outcomes of an attempt, in legend order, with what each means.
OUTCOMES = {
    "acked": "2xx: acknowledged",
    "rejected": "4xx: rejected",
    "server_error": "5xx: server error",
    "timeout": "sender timed out",
    "dropped": "answer lost on the way back",
    "connection_error": "connection failed",
}


def verdict_label(verdict: str) -> str:
    """PASS / FAIL / N/A / UNKNOWN / ... for a scenario, check or checklist verdict."""
    return VERDICT_LABELS.get(verdict, verdict.upper())


def utc(ts: float) -> str:
    """Unix seconds as ``2024-06-01 12:00:00Z`` (UTC, whole seconds)."""
    if not math.isfinite(ts):
        return "?"
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def utc_iso(ts: float) -> str:
    """Unix seconds as ``2024-06-01T12:00:00`` (UTC, JUnit's timestamp format)."""
    if not math.isfinite(ts):
        ts = 0.0
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def seconds(value_s: float) -> str:
    """A duration for people: ``850 ms``, ``1.25 s``, ``2 min 5 s``."""
    if not math.isfinite(value_s):
        return "?"
    if value_s < 1:
        return f"{value_s * 1000:.0f} ms"
    if value_s < 120:
        return f"{value_s:.2f} s"
    minutes, rest = divmod(round(value_s), 60)
    return f"{minutes} min {rest} s"


def attempt_refs(indexes: tuple[int, ...]) -> str:
    """``#4, #5`` for attempt indexes (empty when none)."""
    return ", ".join(f"#{i}" for i in indexes)


def finding_line(finding: FindingView) -> str:
    """One line for a finding: ``[key] message (attempts #4, #5)``."""
    line = f"[{finding.key}] {one_line(finding.message)}"
    if finding.attempts:
        line += f" (attempts {attempt_refs(finding.attempts)})"
    return line


#: The check whose finding is the root cause of the others in its scenario: a receiver that
#: answered 5xx applied nothing for those deliveries, so stale, lost and counter follow from it.
ROOT_CAUSE_CHECK = "no_server_error"


#: Checks whose findings lead even the root cause's: an effect applied more than once never
#: follows from a 5xx (which applied nothing), and is the costliest (a double grant, a double
#: refund), so a scenario where the receiver both raced and answered 500 leads with the race.
LEADING_CHECKS = ("duplicated",)


def _rank(finding: FindingView) -> int:
    return 0 if finding.check_id in LEADING_CHECKS else 1 if finding.check_id == ROOT_CAUSE_CHECK else 2


def root_cause_first(findings: Sequence[FindingView]) -> list[FindingView]:
    """`findings` (one scenario's) with its `LEADING_CHECKS` findings first (an effect applied
    twice), then its `ROOT_CAUSE_CHECK` ones, the others in their order after them: the
    console's one line and summary.md lead with a double application, else with the 5xx the
    rest follow from, not with a stale object it left behind."""
    return sorted(findings, key=_rank)


def root_cause_first_of(scenario: ScenarioReport) -> Iterator[FindingView]:
    """``root_cause_first(scenario.findings)`` one at a time, none held: the scenario's findings
    read once per rank (`ScenarioReport.iter_findings`): `LEADING_CHECKS`, `ROOT_CAUSE_CHECK`,
    then the others."""
    for rank in range(3):
        yield from (f for f in scenario.iter_findings() if _rank(f) == rank)


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines included) turned into one space."""
    return " ".join(text.split())


def plural(n: int, word: str) -> str:
    """``1 finding``, ``2 findings``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def object_noun(event_type: str) -> str:
    """The provider's word for the object an event type is about, lower case: Shopify topics
    name it before the slash (``orders/paid`` -> ``order``), dotted types before the last part
    (``customer.subscription.updated`` -> ``subscription``, ``issues.opened`` -> ``issue``,
    ``payment_intent.succeeded`` -> ``payment intent``, ``checkout.session.completed`` ->
    ``checkout session``); a type with neither is ``object``."""
    if "/" in event_type:
        parts = [event_type.split("/", 1)[0]]
    elif "." in event_type:
        parts = event_type.split(".")[:-1]
        if len(parts) > 1 and parts[0] == "customer":  # Stripe's customer.subscription.*, customer.discount.*
            parts = parts[1:]
    else:
        return "object"
    noun = " ".join(parts).replace("_", " ")
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun


def key_labels(attempts: Iterable[AttemptView]) -> Callable[[str], str]:
    """What a finding's key is, in the provider's words, given a scenario's attempts:
    ``Business key`` for an effect's key (or a key no attempt names); for a state finding's
    key (an object's id), the object's noun from the first event about it (``Order``,
    ``Subscription``, ``Issue``: `object_noun`)."""
    business: set[str] = set()
    types: dict[str, str] = {}
    for a in attempts:
        if a.business_key is not None:
            business.add(a.business_key)
        if a.object_id is not None:
            types.setdefault(a.object_id, a.event_type)
    def label(key: str) -> str:
        if key in business or key not in types:
            return "Business key"
        noun = object_noun(types[key])
        return noun[:1].upper() + noun[1:]
    return label
