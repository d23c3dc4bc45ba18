"""`fetch-overtaken` in the repository world: the held answer and the newer one share a second.

GitHub's ``updated_at`` counts whole seconds. A GitHub App that fetches the issue from the REST
API on each event and writes the answer when its ``updated_at`` is not older than the stored one,
but without one fetch-and-write at a time per object, lets a slow fetch's older answer land last
whenever the two changes fell in one second (a triage bot labeling and closing an issue). The
scenario tells that story: the label's fetch held while the close is delivered, both answers of
one ``updated_at``. `github_app.js` (fetch under a per-object lock) passes;
`github_app_fetch_unlocked.js` (the same fetch, no lock, ``>=``) fails ``stale``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import GitHubWorld
from tests.examples.test_github_app import node  # noqa: F401  (the fixture the slow test uses)
from tests.examples.test_github_same_second import _config

SCENARIO = "fetch-overtaken"
PULL_TYPES = frozenset({"pull_request.opened", "pull_request.closed", "pull_request.reopened"})


def _plan(enabled: frozenset[str] | None = None, kinds: frozenset[str] | None = None) -> Plan:
    plan = CATALOG[SCENARIO].plan(Context(profile=get_profile("github"), enabled=enabled, state_kinds=kinds),
                                  GitHubWorld(5))
    assert isinstance(plan, Plan), plan
    return plan


def _stamp(event_payload: dict[str, object], kind: str) -> object:
    obj = event_payload[kind]
    assert isinstance(obj, dict)
    return obj["updated_at"]


@pytest.mark.parametrize("seed", range(4))
def test_the_held_fetch_and_the_newer_change_share_one_updated_at(seed: int) -> None:
    """Opened; then labeled (its fetch held) and closed in one second: the held answer (open)
    and the newer one (closed) carry one ``updated_at``, so no comparison of it orders them."""
    plan = CATALOG[SCENARIO].plan(Context(profile=get_profile("github")), GitHubWorld(seed))
    assert isinstance(plan, Plan)
    first, held, newer = plan.phases
    assert [(p.held, [(e.type, e.status) for e in p.events]) for p in plan.phases] == [
        (False, [("issues.opened", "open")]), (True, [("issues.labeled", "open")]),
        (False, [("issues.closed", "closed")])]
    (opened,), (labeled,), (closed,) = first.events, held.events, newer.events
    assert plan.held_fetch == labeled.object_id == closed.object_id == opened.object_id
    assert _stamp(opened.extra["payload"], "issue") < _stamp(labeled.extra["payload"], "issue") \
        == _stamp(closed.extra["payload"], "issue")
    assert plan.owes_effects is False


def test_an_app_reading_only_pull_requests_gets_a_closed_and_reopened_pull_request() -> None:
    """Observer reading pull requests only: a workflow closes (held: closed) and reopens (open) a
    pull request in one second."""
    plan = _plan(kinds=frozenset({"pull_request"}))
    assert [(p.held, [(e.type, e.status) for e in p.events]) for p in plan.phases] == [
        (False, [("pull_request.opened", "open")]), (True, [("pull_request.closed", "closed")]),
        (False, [("pull_request.reopened", "open")])]
    _, (closed,), (reopened,) = (p.events for p in plan.phases)
    assert plan.held_fetch == closed.object_id == reopened.object_id
    assert _stamp(closed.extra["payload"], "pull_request") == _stamp(reopened.extra["payload"], "pull_request")
    sent = _plan(enabled=PULL_TYPES)  # sent no issue events: the same story
    assert [[e.type for e in p.events] for p in sent.phases] == [
        ["pull_request.opened"], ["pull_request.closed"], ["pull_request.reopened"]]


@pytest.mark.slow
@pytest.mark.usefixtures("node")
@pytest.mark.parametrize(("script", "failed"), [
    ("github_app.js", {}),
    ("github_app_fetch_unlocked.js", {SCENARIO: ["stale"]}),
])
def test_only_one_fetch_and_write_at_a_time_keeps_a_same_second_close(tmp_path: Path, script: str,
                                                                      failed: dict[str, list[str]]) -> None:
    report = certify(_config(script, tmp_path), scenarios=[SCENARIO, "stale-after-newer"],
                     out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    ran = {s.id: s.verdict for s in report.scenarios}
    assert ran[SCENARIO] == ("fail" if failed else "pass")
    if failed:
        (stale,) = [f for s in report.scenarios for f in s.findings]
        assert "final state is open" in stale.message and "closed" in stale.message, stale.message
