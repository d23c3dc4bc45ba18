"""`hookproof replay`: a malformed schedule file is refused before anything runs, in one line
naming the file (and the step), exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hookproof.commands.replay import read_schedule
from hookproof.errors import UsageError
from hookproof.scenarios.statemachine import SCHEDULE_FORMAT
from tests.hostile.harness import run_hookproof
from tests.support import free_port

# seed 5: "pay" emits 3 events (customer.created, payment_intent.succeeded, charge.succeeded)
GOOD: dict[str, Any] = {"format": SCHEDULE_FORMAT, "seed": 5, "events": [], "findings": [],
                        "steps": [{"op": "emit", "action": "pay"}, {"op": "deliver", "event": 2},
                                  {"op": "burst", "event": 1, "copies": 3}, {"op": "advance_clock", "seconds": 60}]}


def _with(**changes: Any) -> dict[str, Any]:
    return {**GOOD, **changes}


def _step(index: int, **changes: Any) -> dict[str, Any]:
    steps = [dict(s) for s in GOOD["steps"]]
    steps[index] = {**steps[index], **changes}
    return _with(steps=steps)


CASES: list[tuple[str, Any, str]] = [
    ("not-json", "{not json", "not JSON (Expecting property name"),
    ("not-an-object", [1, 2], "not a hookproof schedule"),
    ("wrong-format", _with(format="other/1"), "not a hookproof schedule"),
    ("missing-seed", {k: v for k, v in GOOD.items() if k != "seed"}, "seed: must be a whole number, got None"),
    ("seed-text", _with(seed="five"), "seed: must be a whole number, got 'five'"),
    ("seed-float", _with(seed=1.5), "seed: must be a whole number, got 1.5"),
    ("missing-steps", {k: v for k, v in GOOD.items() if k != "steps"}, "steps: must be a list of steps"),
    ("steps-not-a-list", _with(steps={"op": "emit"}), "steps: must be a list of steps"),
    ("events-not-a-list", _with(events=5), "events: must be a list of event types"),
    ("findings-without-check-id", _with(findings=[{"key": "x"}]), "findings: must be a list of objects"),
    ("step-not-an-object", _with(steps=["emit"]), "step 1: must be an object with an \"op\""),
    ("step-without-op", _with(steps=[{"action": "pay"}]), "step 1: must be an object with an \"op\""),
    ("step-unknown-op", _step(1, op="explode"), "step 2 (explode): unknown op"),
    ("step-unknown-key", _step(1, evnt=2), "step 2 (deliver): unknown key 'evnt'"),
    ("step-no-such-event", _step(1, event=99), "step 2 (deliver): no event #99 (the world of seed 5 has emitted 3"),
    ("step-no-event-given", _step(1, event=None), "step 2 (deliver): no event #None"),
    ("step-event-text", _step(1, event="2"), "step 2 (deliver): event must be a whole number"),
    ("step-event-negative", _step(1, event=-1), "step 2 (deliver): event must be a whole number, not negative"),
    ("step-unknown-action", _step(0, action="steal"), "step 1 (emit): action must be one of"),
    ("step-illegal-action", _step(0, action="refund", object=0), "step 1 (emit): the world of seed 5 cannot do it"),
    ("step-unknown-mutation", _step(1, mutation="shuffle"), "step 2 (deliver): unknown mutation 'shuffle'"),
    ("step-copies-text", _step(2, copies="many"), "step 3 (burst): copies must be a whole number"),
    ("step-too-many-copies", _step(2, copies=1000), "step 3 (burst): copies must be from 1 to 100"),
    ("step-seconds-float", _step(3, seconds=0.5), "step 4 (advance_clock): seconds must be a whole number"),
]


@pytest.mark.parametrize("case_id, doc, message", CASES, ids=[c[0] for c in CASES])
def test_a_bad_schedule_names_the_file_and_the_step(tmp_path: Path, case_id: str, doc: Any, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    with pytest.raises(UsageError) as info:
        read_schedule(path)
    assert str(info.value).startswith(f"{path}: "), str(info.value)
    assert message in str(info.value), str(info.value)
    assert "\n" not in str(info.value)


def test_a_good_schedule_reads(tmp_path: Path) -> None:
    path = tmp_path / "good.json"
    path.write_text(json.dumps(GOOD), encoding="utf-8")
    seed, steps, _ = read_schedule(path)
    assert (seed, [s.op for s in steps]) == (5, ["emit", "deliver", "burst", "advance_clock"])
    assert read_schedule(path, seed=6)[0] == 6


def test_a_missing_schedule_is_named(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read schedule .*missing.json: no such file"):
        read_schedule(tmp_path / "missing.json")


@pytest.mark.slow
def test_replay_of_a_step_with_no_such_event_is_one_line_exit_2(tmp_path: Path) -> None:
    """Checked before the target is started (the config is read first: a user catalog's
    schedule is checked against the config's own world): no traceback, nothing run."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_step(1, event=99)), encoding="utf-8")
    port = free_port()  # nothing listens there: a started or probed target would fail another way
    (tmp_path / "hookproof.toml").write_text(
        f'[target]\nurl = "http://127.0.0.1:{port}/webhooks"\nprofile = "stripe"\nsecret = "whsec_replay_test"\n'
        '\n[observer]\nkind = "sql"\nurl = "sqlite:///effects.db"\neffects = "SELECT business_key FROM effects"\n',
        encoding="utf-8")
    run = run_hookproof("replay", str(path), "--config", str(tmp_path / "hookproof.toml"), timeout_s=60, cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run
    lines = run.stderr.strip().splitlines()
    assert lines == [f"hookproof: {path}: step 2 (deliver): no event #99 (the world of seed 5 has emitted 3 by then)"], run
