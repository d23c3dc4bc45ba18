"""GitHub's ``updated_at`` counts whole seconds, and GitHub sends no event time.

A bot labels, comments on and closes an issue within one second: the three events carry one
``updated_at``, and nothing in the deliveries (no timestamp header; ``X-GitHub-Delivery`` is a
random GUID) orders them. `stale-after-newer` under the github profile tells that story and
delivers the comment's ``issue_comment.created`` after the close: `github_app.js`, which stores
the issue the REST API serves (fetched under a per-object lock), passes; its twin ordering the
payloads by ``updated_at`` with ``>=`` lets the late comment reopen the issue (``regressed``,
``stale``), with a finding that names the tie and what alone breaks it; one ordering with ``>``
drops the close (``stale``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config import Config
from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import GitHubWorld
from tests.examples.test_github_app import config, node  # noqa: F401  (node: the fixture the slow test uses)

SCENARIO = "stale-after-newer"


@pytest.mark.parametrize("seed", range(6))
def test_the_same_second_story_ties_on_updated_at(seed: int) -> None:
    """Opened, then labeled, commented on and closed in one new second: one ``updated_at`` (and
    ``closed_at``) for the three, their events' own times a tenth of a second apart within it."""
    world = GitHubWorld(seed)
    world.lifecycle()
    events = world.same_second_story()
    assert [(e.type, e.status) for e in events] == [
        ("issues.opened", "open"), ("issues.labeled", "open"), ("issue_comment.created", "open"),
        ("issues.closed", "closed")]
    stamps = [e.extra["payload"]["issue"]["updated_at"] for e in events]
    assert stamps[0] < stamps[1] == stamps[2] == stamps[3]
    assert events[3].extra["payload"]["issue"]["closed_at"] == stamps[3]
    second = events[1].created_us // 1_000_000
    assert [e.created_us - second * 1_000_000 for e in events[1:]] == [0, 100_000, 200_000]
    assert get_profile("github").body_time.render(events[1].created_us) == f"updated_at {stamps[1]}"
    assert [e.version for e in events] == [1, 2, 3, 4]


def test_outside_the_story_no_two_changes_share_a_second() -> None:
    """Every other story keeps a second between an object's changes: ``updated_at`` orders them."""
    world = GitHubWorld(3)
    world.lifecycle()
    world.repeat_story()
    for kind in ("issue", "pull_request"):
        for oid in world.objects(kind):
            stamps = [e.extra["payload"][kind]["updated_at"] for e in world.events if e.object_id == oid]
            assert len(set(stamps)) == len(stamps)


def _config(script: str, out: Path) -> Config:
    """`config` for the Node App `script` (a path from examples/receivers/node)."""
    cfg = config("github_app", out)
    assert cfg.target.start is not None
    start = cfg.target.start.model_copy(update={"command": f"node {script}"})
    return cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": start})})


@pytest.mark.slow
@pytest.mark.usefixtures("node")
@pytest.mark.parametrize(("script", "failed"), [
    ("github_app.js", {}),
    ("github_app_updated_at.js", {SCENARIO: ["regressed", "stale"]}),
    ("github_app_keep_first.js", {SCENARIO: ["stale"]}),
])
def test_a_same_second_tie_is_broken_only_by_the_rest_api(tmp_path: Path, script: str,
                                                         failed: dict[str, list[str]]) -> None:
    report = certify(_config(script, tmp_path), scenarios=[SCENARIO, "reorder"], out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed
    tied = [f.message for s in report.scenarios for f in s.findings if f.check_id in ("stale", "regressed")]
    assert bool(tied) == bool(failed)
    for message in tied:
        assert re.search(r"both carry updated_at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ, so a receiver cannot order them by "
                         r"updated_at alone: it counts whole seconds and GitHub sends no event time .*fetch the issue "
                         r"or pull request from the REST API", message), message


@pytest.mark.parametrize("seed", range(4))
def test_the_pull_request_same_second_story_ties_on_updated_at(seed: int) -> None:
    """A pull request closed and reopened in one second (CI re-run), another pushed to and merged in
    one second (a merge bot): each pair one ``updated_at``, a state of its own each."""
    world = GitHubWorld(seed)
    world.lifecycle()
    events = world.pull_request_same_second_story()
    assert [(e.type, e.status) for e in events] == [
        ("pull_request.opened", "open"), ("pull_request.closed", "closed"), ("pull_request.reopened", "open"),
        ("pull_request.opened", "open"), ("pull_request.synchronize", "open"), ("pull_request.closed", "merged"),
        ("push", None)]
    stamps = [e.extra["payload"]["pull_request"]["updated_at"] for e in events[:6]]
    assert stamps[0] < stamps[1] == stamps[2] and stamps[3] < stamps[4] == stamps[5]
    assert events[5].extra["payload"]["pull_request"]["merged_at"] == stamps[5]
    assert events[2].extra["payload"]["pull_request"]["closed_at"] is None


def _stale_plan(enabled: frozenset[str] | None, kinds: frozenset[str] | None = None) -> Plan | NotApplicable:
    return CATALOG[SCENARIO].plan(Context(profile=get_profile("github"), enabled=enabled, state_kinds=kinds),
                                  GitHubWorld(5))


PULL_TYPES = frozenset({"pull_request.opened", "pull_request.synchronize", "pull_request.closed",
                        "pull_request.reopened"})


def test_stale_after_newer_ties_pull_requests_when_only_they_are_sent() -> None:
    """With only pull_request events enabled (no issue told), the same-second half is told over
    pull requests: the close and reopen of one second in order, the synchronize of a merge's
    second after the merge."""
    plan = _stale_plan(PULL_TYPES)
    assert isinstance(plan, Plan) and plan.note is None
    newer, older = plan.phases
    assert {e.object_type for p in plan.phases for e in p.events} == {"pull_request"}
    story = older.events[0].object_id  # the state story's pull request, its opened delivered last
    tied = [(e.type, e.status) for e in newer.events if e.object_id != story]
    assert tied == [("pull_request.opened", "open"), ("pull_request.closed", "closed"), ("pull_request.reopened", "open"),
                    ("pull_request.opened", "open"), ("pull_request.closed", "merged")]
    assert [(e.type, e.status) for e in older.events] == [("pull_request.opened", "open"),
                                                          ("pull_request.synchronize", "open")]
    assert older.events[1].object_id == newer.events[-1].object_id


def test_stale_after_newer_ties_each_kind_the_observer_reads() -> None:
    every = _stale_plan(None)
    assert isinstance(every, Plan) and every.note is None
    assert [e.type for e in every.phases[1].events] == ["issues.opened", "issue_comment.created",
                                                        "pull_request.synchronize"]
    pulls = _stale_plan(None, frozenset({"pull_request"}))
    assert isinstance(pulls, Plan)
    assert [e.type for e in pulls.phases[1].events][1:] == ["pull_request.synchronize"]


@pytest.mark.parametrize(("enabled", "kinds", "why"), [
    (frozenset({"issues.opened", "issues.closed", "issues.reopened", "issues.labeled", "pull_request.opened",
                "pull_request.synchronize"}), None,
     "the receiver is sent neither an issue's issues.labeled, issue_comment.created and issues.closed nor a pull "
     "request's pull_request.closed with .reopened or .synchronize (enabled_events)"),
    (None, frozenset({"installation"}), "the observer reads no issue or pull request states ([observer.states])"),
])
def test_stale_after_newer_says_when_its_same_second_half_does_not_apply(
        enabled: frozenset[str] | None, kinds: frozenset[str] | None, why: str) -> None:
    plan = _stale_plan(enabled, kinds)
    assert isinstance(plan, Plan)
    assert plan.note == (f"its same-second half did not apply: {why}, so no two events of one object sharing an "
                         "updated_at second (GitHub's counts whole seconds) were sent")


@pytest.mark.slow
@pytest.mark.usefixtures("node")
@pytest.mark.parametrize(("script", "failed"), [
    ("github_app.js", {}),
    ("github_app_keep_first.js", {SCENARIO: ["stale"]}),
    ("github_app_updated_at.js", {SCENARIO: ["regressed", "stale"]}),
])
def test_a_pull_request_tie_is_told_when_only_pull_requests_are_sent(tmp_path: Path, script: str,
                                                                     failed: dict[str, list[str]]) -> None:
    """A GitHub App subscribed to pull_request events alone: keeping the first arrival of an
    ``updated_at`` tie leaves a pull request closed and reopened in one second closed; keeping the
    last lets a merge's synchronize reopen it. The App fetching the pull request passes."""
    cfg = _config(script, tmp_path)
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": sorted(PULL_TYPES)})})
    report = certify(cfg, scenarios=[SCENARIO], out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed


def _types(plan: Plan | NotApplicable) -> list[str]:
    assert isinstance(plan, Plan), plan
    return [e.type for phase in plan.phases for e in phase.events]


def test_certify_sends_the_lifecycles_a_github_app_meets() -> None:
    """The duplicate scenarios send the App's ping and a new installation's life after its
    ``installation.created`` (a repository added and removed, suspended, unsuspended, deleted);
    the ordering scenarios a pull request closed, reopened and merged, and, where the observer
    reads installations, an installation suspended, unsuspended and deleted."""
    ctx = Context(profile=get_profile("github"))
    duplicated = _types(CATALOG["duplicate-sequential"].plan(ctx, GitHubWorld(5)))
    installation = [t for t in duplicated if t.startswith("installation")]
    assert installation == ["installation.created", "installation_repositories.added",
                            "installation_repositories.removed", "installation.suspend", "installation.unsuspend",
                            "installation.deleted"]
    assert duplicated.count("ping") == 1
    comments = [t for t in duplicated if t.startswith("issue_comment")]
    assert comments == ["issue_comment.created", "issue_comment.edited", "issue_comment.deleted"]
    reordered = _types(CATALOG["reorder"].plan(ctx, GitHubWorld(5)))
    assert [t for t in reordered if t.startswith("pull_request")] == [
        "pull_request.opened", "pull_request.edited", "pull_request.closed", "pull_request.reopened",
        "pull_request.synchronize", "pull_request.closed"]  # delivered newest first (the phase's order="reversed")
    installs = Context(profile=get_profile("github"), state_kinds=frozenset({"installation"}))
    assert _types(CATALOG["reorder"].plan(installs, GitHubWorld(5))) == [
        "installation.created", "installation.suspend", "installation.unsuspend", "installation.deleted"]
    sent = set(duplicated) | set(reordered) | set(_types(CATALOG["reorder"].plan(installs, GitHubWorld(5))))
    assert sent >= {"pull_request.reopened", "installation.deleted", "installation.suspend", "installation.unsuspend",
                    "installation_repositories.added", "installation_repositories.removed", "ping"}
