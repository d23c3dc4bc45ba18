"""What the provider API refused during a scenario, in its report: why a fetching receiver failed.

A receiver that fetches with a wrong API key, or asks for an object the provider does not
have, answers 5xx and loses effects; the checks see the 5xx and the lost effects, the
provider API's refusal log (`simulator.server.refusals`) sees why. `with_refusals` puts
that line (``the provider API refused 3 requests: 401 invalid API key (api_key_invalid)
on GET /v1/payment_intents/pi_…``) in the reason of a scenario that did not pass and as a
note on its ``no_server_error`` and ``lost`` findings, so report.json, summary.md and
report.html all say it. Pure.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from hookproof.reports.model import ScenarioReport
from hookproof.simulator.server.refusals import Refusal, summary

#: The checks whose findings a refusal may explain.
NOTED_CHECKS: frozenset[str] = frozenset({"no_server_error", "lost"})


def with_refusals(report: ScenarioReport, refusals: Sequence[Refusal]) -> ScenarioReport:
    """`report` saying what the provider API refused during it (unchanged when nothing was)."""
    line = summary(refusals)
    if line is None:
        return report
    checks = tuple(
        replace(c, findings=tuple(replace(f, message=f"{f.message} ({line})") for f in c.findings))
        if c.check_id in NOTED_CHECKS else c
        for c in report.checks)
    if report.verdict in ("pass", "not_applicable"):  # nothing to explain: a reason stays what it was
        return replace(report, checks=checks)
    reason = f"{report.reason}; {line}" if report.reason else line
    return replace(report, checks=checks, reason=reason)  # a new report: its cached views are rebuilt


__all__ = ["NOTED_CHECKS", "with_refusals"]
