"""Scenarios: the catalog, the runner, the pure checks, and the observers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hookproof.simulator.lazy import lazy_exports

#: public name -> the submodule that defines it (imported on first access, PEP 562)
_EXPORTS: dict[str, str] = {
    "ALL_CHECKS": "hookproof.scenarios.checks",
    "CATALOG": "hookproof.scenarios.catalog",
    "CHECKLIST": "hookproof.scenarios.catalog",
    "CheckResult": "hookproof.scenarios.checks",
    "Context": "hookproof.scenarios.catalog",
    "Effect": "hookproof.scenarios.observations",
    "Expectations": "hookproof.scenarios.observations",
    "Finding": "hookproof.scenarios.checks",
    "NotApplicable": "hookproof.scenarios.catalog",
    "ObjectState": "hookproof.scenarios.observations",
    "Observation": "hookproof.scenarios.observations",
    "ObserverError": "hookproof.scenarios.errors",
    "Phase": "hookproof.scenarios.catalog",
    "Plan": "hookproof.scenarios.catalog",
    "Runner": "hookproof.scenarios.runner",
    "SCENARIOS": "hookproof.scenarios.catalog",
    "Scenario": "hookproof.scenarios.catalog",
    "ScenarioError": "hookproof.scenarios.errors",
    "Verdict": "hookproof.scenarios.checks",
    "compose": "hookproof.scenarios.checks",
    "expectations_from": "hookproof.scenarios.observations",
    "run_checks": "hookproof.scenarios.checks",
}


if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
