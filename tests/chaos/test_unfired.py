"""A chaos fault that never fired makes its scenario unknown, with a real receiver process.

`crash-after-ack` arms a kill after the burst's 2xx answers. A receiver that applies
every event but answers 500 to its ``invoice.paid`` deliveries, retries included
(`tests.chaos.applies_then_500`), never gives the burst all its 2xx: the kill never fires,
the history holds only ``arm`` and ``heal``, and the scenario's checks (duplicated, lost,
unexpected) have nothing to object to. It must not pass: it is ``unknown``, its reason
naming the fault that never fired. inbox_sync, answering 2xx, fires the kill (the
history holds a ``kill``) and passes.

The receiver that never gets its 2xx is retried through Stripe's whole schedule: at the chaos
default scale (1e-4, slow enough for retries to outlast a restart) that is ~29 s of waiting
for a run in which nothing is ever killed or restarted. Its run uses the catalog's faster
scale; the run whose kill fires keeps the default, since it restarts the receiver.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.simulator.delivery import History
from tests.chaos.rig import chaos_config

#: Retry-schedule scale of the run whose kill never fires (nothing restarts, so nothing
#: needs retries slow enough to outlast a restart): Stripe's 3.3-day schedule in ~2.9 s.
NO_RESTART_TIME_SCALE = 1e-5


def _certify(tmp_path: Path, module: str, *, time_scale: float | None = None) -> tuple[object, list[str]]:
    db_dir = tmp_path / "db"
    db_dir.mkdir(parents=True, exist_ok=True)
    config = chaos_config("inbox_sync", db_dir)
    process = config.target.process
    assert process is not None
    command = process.command.replace("-m examples.receivers.inbox_sync ", f"-m {module} ")
    target = config.target.model_copy(update={"process": process.model_copy(update={"command": command})})
    config = config.model_copy(update={"target": target})
    if time_scale is not None:
        config = config.model_copy(update={"chaos": config.chaos.model_copy(update={"time_scale": time_scale})})
    result = certify(config, scenarios=["crash-after-ack"], out_dir=tmp_path / "out", chaos=True)
    history = History(tmp_path / "out" / "history.sqlite")
    try:
        ops = [op.op for op in history.ops("crash-after-ack")]
    finally:
        history.close()
    (scenario,) = [s for s in result.report.scenarios if s.id == "crash-after-ack"]
    return scenario, ops


@pytest.mark.slow
def test_a_kill_that_never_fired_leaves_the_scenario_unknown_naming_the_fault(tmp_path: Path) -> None:
    scenario, ops = _certify(tmp_path, "tests.chaos.applies_then_500",
                             time_scale=NO_RESTART_TIME_SCALE)
    assert "kill" not in ops and ops.count("arm") == 1 and "heal" in ops
    assert scenario.verdict == "unknown"  # type: ignore[attr-defined]
    assert all(c.verdict == "valid" for c in scenario.checks)  # type: ignore[attr-defined]
    reason = scenario.reason  # type: ignore[attr-defined]
    assert reason is not None and reason.startswith("the armed fault never fired (kill after the next ")
    assert reason.endswith("2xx answer(s)): the receiver did not answer enough 2xx")
    answers = {(a.event_type, a.status) for a in scenario.attempts}  # type: ignore[attr-defined]
    assert ("invoice.paid", 500) in answers and ("invoice.paid", 200) not in answers


@pytest.mark.slow
def test_the_same_kill_fires_against_the_receiver_with_the_right_secret(tmp_path: Path) -> None:
    scenario, ops = _certify(tmp_path, "examples.receivers.inbox_sync")
    assert "kill" in ops
    assert scenario.verdict == "pass", scenario.reason  # type: ignore[attr-defined]
