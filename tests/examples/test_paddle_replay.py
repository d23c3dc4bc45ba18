"""Paddle's manual replay: a new notification (new ``notification_id``) of the same event.

`mass-redelivery` and `mass-redelivery-window` under the paddle profile replay their window
as Paddle's ``POST /notifications/{id}/replay`` does: every body as before except
``notification_id``.
`paddle_billing` (claims ``event_id``) passes; its twin claiming ``notification_id`` applies
each replayed effect again (``duplicated``, and the refunds' ``counter``), and each ``duplicated``
finding says which attempt was the replay, in Paddle's words ("a manual replay: a new
notification_id, the same event_id"); every replayed attempt is tagged ``replay`` in the history.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from tests.examples.test_provider_receivers import config

SCENARIO = "mass-redelivery"
WINDOW = "mass-redelivery-window"


@pytest.mark.parametrize("scenario_id", [SCENARIO, WINDOW])
@pytest.mark.parametrize("profile_name", ["paddle", "stripe"])
def test_only_paddles_replay_is_a_new_notification(profile_name: str, scenario_id: str) -> None:
    profile = get_profile(profile_name)
    plan = CATALOG[scenario_id].plan(Context(profile=profile, redelivery_window=12), new_world(profile.world, 5))
    assert isinstance(plan, Plan)
    first, replay = plan.phases
    bodies = {e.id: json.loads(profile.envelope(e).body) for e in first.events}
    for event in replay.events:
        again = json.loads(profile.envelope(event).body)
        changed = {k for k in again if again[k] != bodies[event.id][k]}
        assert changed == ({"notification_id"} if profile_name == "paddle" else set())
    if profile_name == "paddle":
        replayed = {json.loads(profile.envelope(e).body)["notification_id"] for e in replay.events}
        assert len(replayed) == len(replay.events) and not replayed & {b["notification_id"] for b in bodies.values()}
        twice = profile.replayed(first.events[0], 2)
        assert json.loads(profile.envelope(twice).body)["notification_id"] not in replayed


@pytest.mark.parametrize(("module", "failed"), [
    ("examples.receivers.paddle_billing", {}),
    ("tests.examples.paddle_notification_dedupe", {SCENARIO: ["counter", "duplicated"],
                                                   WINDOW: ["counter", "duplicated"]}),
])
def test_a_replay_is_deduplicated_by_event_id(tmp_path: Path, module: str, failed: dict[str, list[str]]) -> None:
    cfg = config("paddle_billing", tmp_path)
    assert cfg.target.start is not None
    start = cfg.target.start.model_copy(update={"command": cfg.target.start.command.replace(
        "examples.receivers.paddle_billing", module)})
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": start})})
    cfg = cfg.model_copy(update={"run": cfg.run.model_copy(update={"redelivery_window": 20})})
    report = certify(cfg, scenarios=[SCENARIO, WINDOW, "duplicate-sequential"], out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed
    for scenario in report.scenarios:
        replays = {a.index for a in scenario.attempts if "replay" in a.faults}
        if scenario.id == "duplicate-sequential":  # automatic redeliveries: the same notification
            assert not replays
        else:  # every attempt of the replay phase is tagged, none of the first deliveries
            assert replays and replays == {a.index for a in scenario.attempts if a.index >= min(replays)}
        for finding in (f for f in scenario.findings if f.check_id == "duplicated"):
            # the second delivery named as what it was: a new notification of the same event
            named = re.search(r"; attempts? ([0-9, ]+) (?:was|were) a manual replay: a new notification_id, the "
                              r"same event_id(?:;|$)", finding.message)
            assert named is not None, finding.message
            assert {int(i) for i in named.group(1).split(", ")} == replays & set(finding.attempts), finding.message
