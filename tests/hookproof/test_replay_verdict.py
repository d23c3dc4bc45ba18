"""`hookproof replay` of a schedule whose verdict is the receiver's timing says why its checks differ
from the saved run's.

A receiver writing each event's status as it arrives (`blind_overwrite`), sent a subscription's
``past_due`` update with a sender timeout (the provider gives up after 1 ms, the receiver goes on
and writes it), then its older ``active`` update at teardown: explore's run read ``past_due``
after the step and found ``regressed`` and ``stale``; a replay whose read came before the write
never saw ``past_due`` and finds ``stale`` alone. Both are right for their histories; the replay
says so instead of a bare ``finding: stale``.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import pytest
from typer.testing import CliRunner

from hookproof.cli import app
from hookproof.commands.replay import read_schedule, replay_lines, verdict_note
from hookproof.scenarios.findings import CheckResult, Finding, Verdict
from hookproof.scenarios.schedules import Failure, Step
from hookproof.scenarios.statemachine import SCHEDULE_FORMAT
from tests.hookproof.subscription_receivers import subscription_config, update_numbers

SECRET = "whsec_replay_verdict_secret"
#: Seed 2's world: ``subscribe`` emits a customer.subscription.updated (active), ``fail_renewal`` another
#: (past_due); their numbers found by type (`update_numbers`).
SEED = 2
_ACTIVE, _PAST_DUE = update_numbers(SEED, [("subscribe", None), ("fail_renewal", 0)])
TIMED_OUT = [{"op": "emit", "action": "subscribe"}, {"op": "emit", "action": "fail_renewal", "object": 0},
             {"op": "timeout", "event": _PAST_DUE}]
SAVED = [{"check_id": "regressed", "key": "sub_x", "message": "went back from past_due to active"},
         {"check_id": "stale", "key": "sub_x", "message": "final state is active, the provider's is past_due"}]
#: What the replay says when it finds stale alone where explore found regressed and stale.
NOTE = ("note: the saved run found regressed, stale; this run found stale, not regressed: step 3 (timeout) gives "
        "its delivery up after 1 ms while the receiver goes on handling it, so whether a read after the step saw "
        "what the receiver wrote is its timing; so each run is its own history, and each verdict is right for its "
        "own (regressed needs a read that saw the newer state before the older one was written over it, stale only "
        "the final state: a run whose reads missed the newer state finds stale alone)")


def _schedule(tmp_path: Path, steps: list[dict[str, Any]] = TIMED_OUT,
              findings: list[dict[str, str]] = SAVED) -> Path:
    path = tmp_path / "failing-schedule.json"
    path.write_text(json.dumps({"format": SCHEDULE_FORMAT, "seed": SEED, "profile": "stripe", "events": [],
                                "findings": findings, "steps": steps}), encoding="utf-8")
    return path


def test_the_note_names_both_verdicts_and_the_timing_step(tmp_path: Path) -> None:
    from hookproof.scenarios.explore_targets import sends_of, tell_world
    from hookproof.simulator.profiles import get_profile

    # read as the replay of a config without enabled_events reads it: its world told every type
    sends = sends_of(get_profile("stripe"), None)
    steps = read_schedule(_schedule(tmp_path), tell=lambda w: tell_world(w, sends, None))[1]
    assert verdict_note(steps, {"regressed", "stale"}, {"stale"}) == NOTE
    assert verdict_note(steps, {"regressed", "stale"}, {"regressed", "stale"}) is None
    assert verdict_note(steps, set(), {"stale"}) is None  # nothing saved: nothing to compare
    assert verdict_note(steps, {"stale"}, {"regressed", "stale"}) == NOTE.replace(
        "the saved run found regressed, stale; this run found stale, not regressed",
        "the saved run found stale; this run found regressed, stale")
    plain = [Step("emit", action="subscribe"), Step("deliver", event=4)]
    assert verdict_note(plain, {"regressed", "stale"}, {"stale"}) == (
        "note: the saved run found regressed, stale; this run found stale, not regressed")
    raced = [*plain, Step("burst_related", events=(7, 4))]
    assert verdict_note(raced, {"regressed"}, {"duplicated"}) == (
        "note: the saved run found regressed; this run found duplicated, not regressed: step 3 (burst_related) "
        "sends its events concurrently, so which of them the receiver wrote last is its timing; so each run is "
        "its own history, and each verdict is right for its own")


def test_replay_prints_the_note_after_its_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay's own lines, its run stood in for: a timed-out write its reads missed."""
    import hookproof.commands.explore as explore_module
    import hookproof.scenarios.statemachine as statemachine

    config = tmp_path / "hookproof.toml"
    config.write_text(f'[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "stripe"\nsecret = "{SECRET}"\n\n'
                      '[observer]\nkind = "sql"\nurl = "sqlite:///x.sqlite"\n'
                      'effects = "SELECT business_key FROM effects"\n', encoding="utf-8")

    @contextlib.contextmanager
    def no_target(cfg: Any) -> Iterator[tuple[None, None]]:
        yield None, None

    def stale_alone(target: Any, steps: Sequence[Step], seed: int, *, provider_state: Any = None,
                    on_step: Callable[[Step, str], None] | None = None, **_: Any) -> Failure:
        for step in steps:
            if on_step is not None:
                on_step(step, "timeout" if step.op == "timeout" else "no events")
        stale = Finding("stale", "sub_x", "final state is active, the provider's is past_due")
        return Failure(seed, list(steps), [], [CheckResult("stale", Verdict.INVALID, (stale,))], [], "step")

    monkeypatch.setattr(explore_module, "explore_target", no_target)
    monkeypatch.setattr(statemachine, "replay", stale_alone)
    lines, found = replay_lines(config, _schedule(tmp_path))
    assert found
    assert lines[-2:] == ["finding: stale: sub_x final state is active, the provider's is past_due", NOTE], lines


@pytest.mark.slow
def test_a_timed_out_write_the_reads_missed_is_said_to_be_another_history(tmp_path: Path) -> None:
    """Against the receiver itself: whichever history the run makes, the replay finds the stale
    state, and where it finds it alone it says why explore's run also found it regressed."""
    config = subscription_config(tmp_path, "blind_overwrite", SECRET)
    result = CliRunner().invoke(app, ["replay", str(_schedule(tmp_path)), "--config", str(config)])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    found = {line.split(":")[1].strip() for line in lines if line.startswith("finding: ")}
    assert "stale" in found, result.output
    assert (NOTE in lines) == (found == {"stale"}), result.output
