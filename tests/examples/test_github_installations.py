"""A GitHub App keeping each installation's state (``[observer.states] installation``), over real HTTP.

`github_app.js` keeps an installation active, suspended or deleted, written only over an older
state (the installation's ``updated_at``) and never over a deleted one, and answers a ``ping``
without acting on it: GitHub's ping carries ``zen``, ``hook_id`` and ``hook``, no
``installation`` (docs.github.com "Webhook events and payloads", ``ping``), so it owes no state.
Before, `mass-redelivery` owed the App's own installation ``active`` from its ping (``stale``:
object missing after settling); and with issues and pull requests read too, `reorder` and
`stale-after-newer` walked no installation, so its twin writing each installation event as it
arrives (`github_app_installation_overwrite.js`, a late ``installation.created`` making a deleted
installation active) passed them.
Needs node and ``npm ci`` in examples/receivers/node, as `tests/examples/test_github_app.py`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config import Config
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import GitHubWorld, emit_events
from tests.examples.test_github_app import config, node  # noqa: F401  (node: the fixture the tests use)

KINDS = ("issue", "pull_request", "installation")


def test_a_ping_is_about_the_webhook_and_owes_nothing() -> None:
    """Wherever a ping is sent (certify's stories, a storm's lifecycle, `hookproof send --event
    ping`), its event is about the App's webhook (the hook id, no record), with no status and no
    business key; its body is GitHub's three fields. No event with a status is about the App's
    own installation: no story changes it."""
    world = GitHubWorld(7)
    pings = [e for e in [*world.lifecycle(), *world.effect_story(), *world.storm_story(0),
                         *emit_events(GitHubWorld(7), "ping")] if e.type == "ping"]
    assert len(pings) == 4
    for ping in pings:
        assert (ping.object_type, ping.object_id, ping.status, ping.business_key, ping.version) == (
            "hook", str(world.hook_id), None, None, 1)
        assert sorted(ping.extra["payload"]) == ["hook", "hook_id", "zen"]
        assert ping.object == ping.extra["payload"]["hook"]
    assert not [e.type for e in world.events if e.object_id == world.account and e.status is not None]
    star = world.unknown_event()
    assert (star.object_type, star.object_id, star.status) == ("repository", world.repository()["full_name"], None)


def _plan(scenario: str, kinds: frozenset[str] | None) -> list[list[tuple[str, str | None]]]:
    """Scenario `scenario`'s phases over seed 5's world: each its installation events' (type, status)."""
    plan = CATALOG[scenario].plan(Context(profile=get_profile("github"), state_kinds=kinds), GitHubWorld(5))
    assert isinstance(plan, Plan), plan
    return [[(e.type, e.status) for e in phase.events if e.object_type == "installation"] for phase in plan.phases]


LIFE = [("installation.created", "active"), ("installation.suspend", "suspended"),
        ("installation.unsuspend", "active"), ("installation.deleted", "deleted")]


def test_the_ordering_scenarios_walk_an_installation_beside_issues_and_pull_requests() -> None:
    """An observer reading installations beside issues and pull requests: `reorder` sends an
    installation's life too (reversed as it is delivered), `stale-after-newer` its suspension,
    resumption and deletion, then its creation last; read alone, as before. An observer naming
    no kinds (an ``http`` one) is walked through issues and pull requests only."""
    every = frozenset(KINDS)
    assert _plan("reorder", every) == [LIFE]
    assert _plan("stale-after-newer", every) == [LIFE[1:], LIFE[:1]]
    assert _plan("reorder", frozenset({"installation"})) == [LIFE]
    assert _plan("stale-after-newer", frozenset({"installation"})) == [LIFE[1:], LIFE[:1]]
    assert _plan("reorder", None) == [[]]
    assert _plan("reorder", frozenset({"issue", "pull_request"})) == [[]]


def test_mass_redelivery_owes_no_state_of_the_app_s_own_installation() -> None:
    """Its window holds the App's ping (the webhook's) and the installations' lives, none of
    them about the App's own installation."""
    world = GitHubWorld(5)
    plan = CATALOG["mass-redelivery"].plan(Context(profile=get_profile("github"), state_kinds=frozenset(KINDS)),
                                           world)
    assert isinstance(plan, Plan)
    window = plan.phases[0].events
    assert [(e.object_type, e.status) for e in window if e.type == "ping"] == [("hook", None)]
    stated = {e.object_id for e in window if e.status is not None and e.object_type == "installation"}
    assert len(stated) == 2 and world.account not in stated


def _config(script: str, out: Path) -> Config:
    """`config` for `script`, its observer reading issues', pull requests' and installations' states."""
    cfg = config("github_app", out)
    assert cfg.target.start is not None and cfg.observer is not None
    start = cfg.target.start.model_copy(update={"command": f"node {script}"})
    states = {kind: f"SELECT object_id, status FROM states WHERE kind = '{kind}'" for kind in KINDS}
    return cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": start}),
                                  "observer": cfg.observer.model_copy(update={"states": states})})


@pytest.mark.slow
@pytest.mark.usefixtures("node")
@pytest.mark.parametrize(("script", "failed"), [
    ("github_app.js", {}),
    ("github_app_installation_overwrite.js", {"reorder": ["stale"], "stale-after-newer": ["regressed", "stale"]}),
])
def test_installation_states_are_walked_and_a_ping_owes_none(tmp_path: Path, script: str,
                                                             failed: dict[str, list[str]]) -> None:
    scenarios = ["mass-redelivery", "unknown-event-type", "reorder", "stale-after-newer"]
    report = certify(_config(script, tmp_path), scenarios=scenarios, out_dir=tmp_path / "report").report
    verdicts = {s.id: s.verdict for s in report.scenarios}
    assert verdicts == {s: "fail" if s in failed else "pass" for s in scenarios}, \
        [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in report.scenarios]
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.findings}
    assert got == failed
    sent = {s.id: {a.event_type for a in s.attempts} for s in report.scenarios}
    assert "ping" in sent["mass-redelivery"] and "star.created" in sent["unknown-event-type"]
    walked = {s.id: c.stats["objects"] for s in report.scenarios for c in s.checks if c.check_id == "stale"}
    # the issues, pull requests and installations sent (not the App's own installation: a ping names none)
    assert walked == {"mass-redelivery": 7, "reorder": 3, "stale-after-newer": 6}
    findings = [f for s in report.scenarios for f in s.findings]
    for f in findings:  # each names the installation, deleted by the provider, active at the receiver
        assert re.fullmatch(r"\d{8}", str(f.key)), f.key
        assert "deleted (event" in f.message and "active (event" in f.message, f.message
