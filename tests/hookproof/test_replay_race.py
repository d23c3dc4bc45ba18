"""`hookproof replay` of a race: a schedule with a burst that did not reproduce says it is a
race worth replaying again, and ``--repeats N`` replays it up to N times, saying how many runs
it took. A trial's 2-copy burst reproduced 10 of 11 times; the eleventh printed only
"no finding: the schedule did not reproduce"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from hookproof.commands.replay import race_note
from hookproof.scenarios.statemachine import SCHEDULE_FORMAT

ROOT = Path(__file__).resolve().parents[2]
# seed 5: "pay" emits customer.created (#0, no effect), payment_intent.succeeded, charge.succeeded
RACE: dict[str, Any] = {"format": SCHEDULE_FORMAT, "seed": 5, "events": [], "findings": [],
                        "steps": [{"op": "emit", "action": "pay"}, {"op": "deliver", "event": 0},
                                  {"op": "burst", "event": 0, "copies": 2}]}


async def ack_all(scope: dict, receive: object, send: object) -> None:
    """An ASGI receiver that acknowledges every request (and applies nothing)."""
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


def no_effects() -> dict[str, Any]:
    return {"effects": [], "states": []}


def _replay(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    schedule = tmp_path / "race.json"
    schedule.write_text(json.dumps(RACE), encoding="utf-8")
    config = tmp_path / "hookproof.toml"
    config.write_text(f'[target]\napp = "{__name__}:ack_all"\nprofile = "stripe"\nsecret = "whsec_replay_test"\n'
                      'enabled_events = ["customer.created"]\n\n'
                      f'[observer]\nkind = "python"\ncallable = "{__name__}:no_effects"\n', encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "hookproof", "replay", str(schedule), "--config", str(config), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ, "COLUMNS": "300"})


def test_a_race_that_did_not_reproduce_says_to_replay_it_again(tmp_path: Path) -> None:
    done = _replay(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "no finding: the schedule did not reproduce" in lines
    assert ("note: step(s) 3 (burst) send concurrently: a race, whose interleaving differs from run to run; this "
            "run may have missed it, so replay again (--repeats N replays until it reproduces)") in lines, done.stdout


def test_repeats_replays_up_to_n_times_and_says_so(tmp_path: Path) -> None:
    done = _replay(tmp_path, "--repeats", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line for line in lines if line.startswith("-- run ")] == ["-- run 1 of 2", "-- run 2 of 2"]
    assert lines[-1] == "did not reproduce in 2 run(s)", done.stdout


def test_a_schedule_without_concurrent_steps_has_no_race_note(tmp_path: Path) -> None:
    from hookproof.commands.replay import read_schedule

    path = tmp_path / "plain.json"
    path.write_text(json.dumps({**RACE, "steps": RACE["steps"][:2]}), encoding="utf-8")
    assert race_note(read_schedule(path)[1]) is None
    path.write_text(json.dumps({**RACE, "steps": [*RACE["steps"], {"op": "burst_related", "events": [1, 2]}]}),
                    encoding="utf-8")
    assert race_note(read_schedule(path)[1]).startswith("note: step(s) 3 (burst), 4 (burst_related) send")  # type: ignore[union-attr]
