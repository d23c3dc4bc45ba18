"""A CI GitHub App's checks (``check_suite``, ``check_run``), over real HTTP.

An App whose ``target.enabled_events`` lists ``check_suite`` and ``check_run`` is sent, after each
push to the default branch, the App's check suite requested, its check runs created (``lint``
queued, ``test`` in progress) and completed, the suite completed; in the effect story the suite
re-run twice, ``test`` re-run twice and an action asked of a run (`GitHubWorld.rerun_checks`). It
owes no ``ci:`` job per push or pull request (its CI runs per suite). It owes one CI job
per requested suite and per re-run (``suite:``, ``rerun:``, ``rerun-run:``, ``action:``) and each
check run's last status. `github_app.js` starts each job in the delivery's transaction and keeps
a run's status only over an older one (its ``completed_at`` or ``started_at``, then the status's
rank); `github_app_check_suite_every_delivery.js` starts a requested suite's job before the claim
(a redelivery starts a second: ``duplicated``), `github_app_check_run_overwrite.js` writes each
run's status as it arrives (a late ``check_run.created`` moves a completed run back: ``stale``),
`github_app_rerun_once.js` keys re-runs by the suite's id and the check's name (the second re-run
of each starts no job: ``lost``), `github_app_suite_by_branch.js` keys a suite's job by its branch
(a pull request's synchronized head starts none: ``lost``), `github_app_action_once.js` acts once
per run and button (a second click does nothing: ``lost``). explore finds the last and the re-run
twin through its re-run and click operations.
Needs node and ``npm ci`` in examples/receivers/node, as `tests/examples/test_github_app.py`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config import Config
from hookproof.reports.model import RunReport
from hookproof.simulator.world import GITHUB_EVENT_TYPES
from tests.examples.test_github_app import config, node  # noqa: F401  (node: the fixture the tests use)

KINDS = ("issue", "pull_request", "installation", "check_run")
#: Every type GitHub sends the App, and the checks' events (their bare names: every action).
LISTED = [*GITHUB_EVENT_TYPES, "check_suite", "check_run"]


def checks_config(script: str, out: Path, enabled: list[str] | None = LISTED) -> Config:
    """`config` for `script`, its App enabled for `enabled` (None: left out; listing ``check_suite``,
    the App runs its CI per requested suite, ``CI_ON=check_suite``), its observer reading issues',
    pull requests', installations' and check runs' states."""
    cfg = config("github_app", out)
    assert cfg.target.start is not None and cfg.observer is not None
    checks = enabled is not None and "check_suite" in enabled  # CI per requested suite, none per push
    env = {**cfg.target.start.env, **({"CI_ON": "check_suite"} if checks else {})}
    start = cfg.target.start.model_copy(update={"command": f"node {script}", "env": env})
    states = {kind: f"SELECT object_id, status FROM states WHERE kind = '{kind}'" for kind in KINDS}
    target = cfg.target.model_validate({**cfg.target.model_dump(exclude_unset=True), "start": start.model_dump(),
                                        "enabled_events": enabled})
    return cfg.model_copy(update={"target": target,
                                  "observer": cfg.observer.model_copy(update={"states": states})})


SCENARIOS = ["duplicate-sequential", "duplicate-concurrent", "sender-timeout", "dropped-response", "reorder",
             "stale-after-newer", "mass-redelivery", "mass-redelivery-window", "distinct-events-same-object"]
DOUBLE_JOB = {s: ["duplicated"] for s in ("duplicate-sequential", "duplicate-concurrent", "sender-timeout",
                                          "dropped-response", "mass-redelivery", "mass-redelivery-window")}
MOVED_BACK = {"reorder": ["stale"], "stale-after-newer": ["regressed", "stale"]}
SECOND_RERUN_LOST = {s: ["lost"] for s in SCENARIOS if s not in ("reorder", "stale-after-newer")}
#: The scenarios sending a story's every effectful event (the others its first three and the first
#: of each checks' type after them: a branch's first suite, a button's first click).
WHOLE_STORY = ("duplicate-sequential", "mass-redelivery", "mass-redelivery-window")
#: (distinct-events-same-object sends one suite, the pushed head's, requested and re-run.)
SECOND_HEAD_LOST = {s: ["lost"] for s in WHOLE_STORY}
SECOND_CLICK_LOST = {s: ["lost"] for s in WHOLE_STORY}


@pytest.mark.slow
@pytest.mark.usefixtures("node")
@pytest.mark.parametrize(("script", "enabled", "failed"), [
    ("github_app.js", LISTED, {}),
    ("github_app_check_suite_every_delivery.js", LISTED, DOUBLE_JOB),
    ("github_app_check_run_overwrite.js", LISTED, MOVED_BACK),
    ("github_app_rerun_once.js", LISTED, SECOND_RERUN_LOST),
    ("github_app_suite_by_branch.js", LISTED, SECOND_HEAD_LOST),
    ("github_app_action_once.js", LISTED, SECOND_CLICK_LOST),
    ("github_app_check_suite_every_delivery.js", None, {}),
])
def test_one_ci_job_per_suite_and_no_check_run_moved_back(tmp_path: Path, script: str, enabled: list[str] | None,
                                                          failed: dict[str, list[str]]) -> None:
    report = certify(checks_config(script, tmp_path, enabled), scenarios=SCENARIOS,
                     out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    sent = {a.event_type for s in report.scenarios for a in s.attempts}
    assert (sent >= {"check_suite.requested", "check_run.created", "check_run.completed"}) == (enabled is not None)
    findings = [(s.id, f) for s in report.scenarios for f in s.findings]
    if failed is DOUBLE_JOB:  # each a requested suite's job started twice or more, nothing else
        assert {str(f.key).split(":")[0] for _, f in findings} == {"suite"}
        assert all(re.search(r"applied \d+ times instead of once", f.message) for _, f in findings)
    if failed is MOVED_BACK:  # each a check run, completed at GitHub, moved back by a late check_run.created
        assert {str(f.key) for _, f in findings} <= {e for e in _check_runs(report)}
        assert all(re.search(r"(final state is|to) (queued|in_progress) \(event [0-9a-f-]+, check_run\.created\)",
                             f.message) and "completed (event" in f.message for _, f in findings), findings
    if failed is SECOND_RERUN_LOST:  # each the second re-run of the suite or of the check `test`
        assert {str(f.key).split(":")[0] for _, f in findings} == {"rerun", "rerun-run"}, findings
    if failed is SECOND_HEAD_LOST:  # each a suite of a branch's later head: a pull request's, the default branch's
        assert {str(f.key).split(":")[0] for _, f in findings} == {"suite"}, findings
        lost = {str(f.key) for sid, f in findings if sid == "duplicate-sequential"}
        assert len(lost) == 2, lost  # the merge commit's suite on main, the synchronized head's of the pull request
    if failed is SECOND_CLICK_LOST:  # each a second click of a run's button: its own request
        assert {str(f.key).split(":")[0] for _, f in findings} == {"action"}, findings
        assert all(re.search(r":autofix:[0-9a-f-]{36}$", str(f.key)) for _, f in findings), findings
    walked = {s.id: c.stats["objects"] for s in report.scenarios for c in s.checks if c.check_id == "stale"}
    if enabled is not None:  # the issues, pull requests and installation, and the push's two check runs
        assert walked["reorder"] == 5 and walked["stale-after-newer"] == 8, walked


def _check_runs(report: RunReport) -> set[str]:
    """The ids of the check runs `report`'s deliveries carried."""
    return {a.object_id for s in report.scenarios for a in s.attempts if a.event_type.startswith("check_run.")}


@pytest.mark.slow
@pytest.mark.usefixtures("node")
def test_explore_s_schedule_of_a_checks_app_replays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """explore's world was told the App is sent the checks (a check suite per push); the schedule
    it saves is checked, and replayed, on a world told the same: the same finding, not a usage
    error naming a check event the untold world never emitted."""
    from hookproof.commands import replay as replay_cmd
    from hookproof.commands.explore import run_explore

    cfg = checks_config("github_app_check_run_overwrite.js", tmp_path)
    run = run_explore(cfg, out_dir=tmp_path / "report", max_examples=60, seed=20240601, repeats=1)
    failure = run.result.failure
    assert failure is not None and run.schedule_path is not None, run.lines
    assert any(t.startswith("check_run.") for t in failure.event_types), failure.event_types
    monkeypatch.setattr("hookproof.terminal.load", lambda _path: cfg)  # the config explore ran with
    lines, reproduced = replay_cmd.replay_lines(tmp_path / "hookproof.toml", run.schedule_path)
    assert reproduced, lines
    found = {line.split(":")[1].strip() for line in lines if line.startswith("finding: ")}
    assert found & {f.check_id for f in failure.findings}, (lines, failure.summary())


@pytest.mark.slow
@pytest.mark.usefixtures("node")
@pytest.mark.parametrize(("script", "prefixes"), [
    ("github_app_rerun_once.js", {"rerun", "rerun-run"}),
    ("github_app_action_once.js", {"action"}),
])
def test_explore_re_runs_suites_and_clicks_buttons(tmp_path: Path, script: str, prefixes: set[str]) -> None:
    """explore draws a completed suite's re-runs and a run's button clicked (`world_ops`:
    ``rerun_suite``, ``rerun_check``, ``request_action``), so a twin keying a re-run by what stays
    the same across re-runs, or an action by its run and button, is found: ``lost`` on a second
    re-run's or a second click's key."""
    from hookproof.commands.explore import run_explore

    run = run_explore(checks_config(script, tmp_path), out_dir=tmp_path / "report", max_examples=60,
                      seed=20240605, repeats=1)
    failure = run.result.failure
    assert failure is not None, run.lines
    assert {f.check_id for f in failure.findings} == {"lost"}, failure.summary()
    assert {str(f.key).split(":")[0] for f in failure.findings} <= prefixes, failure.summary()
    assert any(step.op == "emit" and step.action in ("rerun_suite", "rerun_check", "request_action")
               for step in failure.steps), failure.steps
