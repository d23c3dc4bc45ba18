"""State checks when no state query is configured: not applicable, not unknown.

A team that observes only its effects (an sql observer with an `effects` query and no
state query) gets `stale` and `regressed` as not applicable ("no state query
configured"), and its verdict comes from the effect checks. A configured state query
that returns nothing is still every object missing: a `stale` finding.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from examples.receivers import config as receiver_config
from hookproof.certify import certify
from hookproof.scenarios.checks import Verdict, check_regressed, check_stale
from hookproof.scenarios.effect_checks import NO_STATE_QUERY
from hookproof.scenarios.observations import Observation, expectations_from
from hookproof.scenarios.observers import SqlObserver
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from hookproof.simulator.world import World

SECRET = "whsec_state_na_" + "0" * 24


def _story() -> tuple[list, list[Attempt]]:
    events = [e for e in World(3).lifecycle() if e.stateful]
    attempts = [Attempt(scenario="s", event_id=e.id, delivery_id=f"dlv_{e.id}_1", attempt=1,
                        business_key=e.business_key, object_id=e.object_id, object_version=e.version,
                        event_type=e.type, faults=(), valid=True, sent_at=1000.0 + i, answered_at=1000.01 + i,
                        status=200, outcome=Outcome.ACKED, completion=Completion.OK, latency_ms=5.0, index=i)
                for i, e in enumerate(events)]
    return events, attempts


@pytest.mark.parametrize("check", [check_stale, check_regressed])
def test_no_state_query_makes_the_state_checks_not_applicable(check) -> None:  # type: ignore[no-untyped-def]
    events, attempts = _story()
    assert events, "the story must send a subscription"
    expectations = expectations_from(events, attempts, sender_timeout_s=10.0, max_attempts_per_event=None)
    result = check(attempts, expectations, [Observation(2000.0, state_kinds=frozenset())])
    assert (result.verdict, result.findings, result.detail) == (Verdict.VALID, (), NO_STATE_QUERY)
    assert result.stats["applicability"] == "not applicable"
    # undeclared (an http observer that shows no states): still unknown, as before
    undeclared = check(attempts, expectations, [Observation(2000.0)])
    assert undeclared.verdict is Verdict.UNKNOWN


def test_a_configured_state_query_that_returns_nothing_is_stale() -> None:
    events, attempts = _story()
    expectations = expectations_from(events, attempts, sender_timeout_s=10.0, max_attempts_per_event=None)
    result = check_stale(attempts, expectations, [Observation(2000.0, state_kinds=frozenset({"subscription"}))])
    assert result.verdict is Verdict.INVALID
    assert {f.message for f in result.findings} == {"object missing after settling"}


def test_the_sql_observer_without_a_state_query_declares_no_state(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE effects (business_key TEXT)")
        conn.execute("INSERT INTO effects VALUES ('license:pi_1')")
    effects_only = SqlObserver(f"sqlite:///{db}", "SELECT business_key FROM effects").observe()
    assert effects_only.state_kinds == frozenset() and effects_only.states == ()
    with_state = SqlObserver(f"sqlite:///{db}", "SELECT business_key FROM effects",
                             "SELECT business_key AS object_id, 'x' AS status FROM effects WHERE 0").observe()
    assert with_state.state_kinds == frozenset({"subscription"})


def _certify(tmp_path: Path, state: str | None) -> object:
    config = receiver_config("inbox_sync", tmp_path, SECRET)
    observer = config.observer.model_copy(update={"state": state, "states": {}})
    config = config.model_copy(update={"observer": observer})
    (scenario,) = certify(config, scenarios=["mass-redelivery"], out_dir=tmp_path / "out").report.scenarios
    return scenario


@pytest.mark.slow
def test_certify_with_effects_only_passes_on_the_effect_checks(tmp_path: Path) -> None:
    scenario = _certify(tmp_path, None)
    checks = {c.check_id: c for c in scenario.checks}  # type: ignore[attr-defined]
    assert scenario.verdict == "pass", scenario.reason  # type: ignore[attr-defined]
    for check_id in ("stale", "regressed"):
        assert (checks[check_id].verdict, checks[check_id].detail) == ("valid", NO_STATE_QUERY)
    assert checks["duplicated"].verdict == "valid" and checks["lost"].verdict == "valid"


@pytest.mark.slow
def test_certify_with_a_state_query_that_shows_nothing_fails_stale(tmp_path: Path) -> None:
    scenario = _certify(tmp_path, "SELECT object_id, status, version FROM subscription_states WHERE 0")
    checks = {c.check_id: c for c in scenario.checks}  # type: ignore[attr-defined]
    assert scenario.verdict == "fail"  # type: ignore[attr-defined]
    assert checks["stale"].verdict == "invalid"
    assert {f.message.split("; its attempts: 200")[0] for f in checks["stale"].findings} == {
        "object missing after settling"}
