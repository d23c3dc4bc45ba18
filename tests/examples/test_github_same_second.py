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
    ("../../../tests/examples/github_app_updated_at_strict.js", {SCENARIO: ["stale"]}),
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
