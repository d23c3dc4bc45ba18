"""Scenarios: the catalog, the runner, the pure checks, and the observers."""

from hookproof.scenarios.catalog import CATALOG, CHECKLIST, SCENARIOS, Context, NotApplicable, Phase, Plan, Scenario
from hookproof.scenarios.checks import ALL_CHECKS, CheckResult, Finding, Verdict, compose, run_checks
from hookproof.scenarios.errors import ObserverError, ScenarioError
from hookproof.scenarios.observations import Effect, Expectations, ObjectState, Observation, expectations_from
from hookproof.scenarios.runner import Runner

__all__ = [
    "ALL_CHECKS",
    "CATALOG",
    "CHECKLIST",
    "CheckResult",
    "Context",
    "Effect",
    "Expectations",
    "Finding",
    "NotApplicable",
    "ObjectState",
    "Observation",
    "ObserverError",
    "Phase",
    "Plan",
    "Runner",
    "SCENARIOS",
    "Scenario",
    "ScenarioError",
    "Verdict",
    "compose",
    "expectations_from",
    "run_checks",
]
