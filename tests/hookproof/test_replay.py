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
    # an oversized delivery is a world's own big event (oversized-payload), never a schedule event's mutation
    ("step-oversize-mutation", _step(1, mutation="oversize"), "step 2 (deliver): unknown mutation 'oversize'"),
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


# ---- never silent, never unbounded: progress, heartbeat and the whole-run deadline ----------

#: Far more steps than any receiver that never answers lets finish before the deadlines below.
LONG: dict[str, Any] = {**GOOD, "steps": [{"op": "emit", "action": "pay"},
                                          *({"op": "deliver", "event": i % 3} for i in range(30))]}
#: The subprocess bound: start-up, the deadline, stopping the receiver, on a loaded machine.
BOUND_S = 120.0
#: A receiver that accepts every connection and never answers (it writes its pid to argv[2];
#: it exits by itself after 120 s without a connection, should nothing stop it).
SILENT_RECEIVER = """import os, pathlib, socket, sys
pathlib.Path(sys.argv[2]).write_text(str(os.getpid()))
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", int(sys.argv[1])))
server.listen(64)
server.settimeout(120)
held = []
while True:
    try:
        held.append(server.accept()[0])
    except TimeoutError:
        break
"""


def _long_schedule(directory: Path) -> Path:
    path = directory / "long.json"
    path.write_text(json.dumps(LONG), encoding="utf-8")
    return path


def _config(directory: Path, target: str, run: str = "") -> Path:
    from tests.hostile.harness import empty_effects_db

    db = empty_effects_db(directory / "observed.sqlite")
    path = directory / "hookproof.toml"
    path.write_text(f'{target}\n[observer]\nkind = "sql"\nurl = "{db}"\neffects = "SELECT business_key FROM effects"\n'
                    f"\n[run]\n{run}\n", encoding="utf-8")
    return path


def _stopped_line(limit: str, steps: int) -> str:
    return (f"hookproof: replay stopped: the run reached its maximum duration ({limit} s, --max-duration or "
            f"run.max_duration_s); the replay stopped there ({steps} of 31 step(s) done); no verdict")


def _steps_shown(stdout: str) -> int:
    import re

    return len(re.findall(r"^ *\d+\. ", stdout, flags=re.M))


BEAT = r"replay: (starting|\d+/31 step\(s\) done, running (step \d+|teardown \(deliveries, settle, check\))), \d+ s"


@pytest.mark.slow
def test_replay_stops_the_receiver_it_started_at_its_deadline_and_beats_meanwhile(tmp_path: Path) -> None:
    """A [target.process] receiver on a {port} that never answers: the replay starts it, prints a
    heartbeat off a terminal, stops at --max-duration, stops the receiver and says why in one line."""
    import os
    import re
    import sys
    import time

    (tmp_path / "silent.py").write_text(SILENT_RECEIVER, encoding="utf-8")
    pid_file = tmp_path / "receiver.pid"
    config = _config(tmp_path, '[target]\nurl = "http://127.0.0.1:{port}/webhooks"\nprofile = "stripe"\n'
                               'secret = "whsec_replay_test"\n\n[target.process]\n'
                               f'command = "{sys.executable} silent.py {{port}} {pid_file}"\n')
    run = run_hookproof("replay", str(_long_schedule(tmp_path)), "--config", str(config), "--max-duration", "4s",
                        timeout_s=BOUND_S, cwd=tmp_path, env={"HOOKPROOF_HEARTBEAT_S": "0.5"})
    assert not run.killed and run.returncode == 1, run
    assert run.stdout.splitlines()[0] == "replaying 31 step(s) of long.json (seed 5, stripe event names)", run
    done = _steps_shown(run.stdout)
    assert run.stderr.strip().splitlines()[-1] == _stopped_line("4", done), run
    beats = [line for line in run.stderr.splitlines() if line.startswith("replay: ")]
    assert beats and all(re.fullmatch(BEAT, b) for b in beats), run
    pid = int(pid_file.read_text(encoding="utf-8"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # hookproof stopped it before exiting; the reaping is the system's
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        raise AssertionError(f"the receiver hookproof started (pid {pid}) still runs after the replay ended")


@pytest.mark.slow
def test_replay_takes_its_deadline_from_the_config(tmp_path: Path) -> None:
    from tests.hostile.servers import hostile_server

    with hostile_server("silent") as server:
        config = _config(tmp_path, f'[target]\nurl = "{server.url}"\nprofile = "stripe"\nsecret = "whsec_replay_test"\n',
                         run="max_duration_s = 3")
        run = run_hookproof("replay", str(_long_schedule(tmp_path)), "--config", str(config), timeout_s=BOUND_S,
                            cwd=tmp_path)
    assert not run.killed and run.returncode == 1, run
    assert run.stderr.strip().splitlines()[-1] == _stopped_line("3", _steps_shown(run.stdout)), run


@pytest.mark.slow
def test_replay_on_a_terminal_shows_the_step_it_runs(tmp_path: Path) -> None:
    import re

    from tests.hostile.harness import on_a_terminal
    from tests.hostile.servers import hostile_server

    with hostile_server("silent") as server:
        config = _config(tmp_path, f'[target]\nurl = "{server.url}"\nprofile = "stripe"\nsecret = "whsec_replay_test"\n')
        code, text = on_a_terminal(["replay", str(_long_schedule(tmp_path)), "--config", str(config),
                                    "--max-duration", "5s"], tmp_path)
    text = text.replace("\r", "\n")
    assert code == 1, text[-3000:]
    assert re.search(r"replay: \d+/31 step\(s\) done, running step \d+, \d+ s", text), text[-3000:]


def test_a_bad_replay_max_duration_is_one_line(tmp_path: Path) -> None:
    run = run_hookproof("replay", str(_long_schedule(tmp_path)), "--max-duration", "soon", timeout_s=60, cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.strip() == (
        "hookproof: --max-duration: cannot read 'soon' (use e.g. 60s, 2m, 1h30m)"), run


@pytest.mark.slow
@pytest.mark.parametrize("signum", [2, 15])  # SIGINT, SIGTERM
def test_an_interrupted_replay_stops_the_receiver_and_says_so_in_one_line(tmp_path: Path, signum: int) -> None:
    import os
    import signal
    import sys
    import time

    from tests.hostile.harness import child_env
    from tests.support import run_interrupted

    (tmp_path / "silent.py").write_text(SILENT_RECEIVER, encoding="utf-8")
    pid_file = tmp_path / "receiver.pid"
    config = _config(tmp_path, '[target]\nurl = "http://127.0.0.1:{port}/webhooks"\nprofile = "stripe"\n'
                               'secret = "whsec_replay_test"\n\n[target.process]\n'
                               f'command = "{sys.executable} silent.py {{port}} {pid_file}"\n')

    def stepping(proc: object) -> None:  # the receiver is up and the first delivery waits for its answer
        deadline = time.monotonic() + 60
        while not pid_file.is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(2)

    run = run_interrupted([sys.executable, "-m", "hookproof", "replay", str(_long_schedule(tmp_path)), "--config",
                           str(config)], signum, cwd=tmp_path, env=child_env(),
                          under_way=stepping, timeout_s=60)
    assert run.returncode == 128 + signum, run
    assert "Traceback" not in run.stderr, run.stderr
    done = _steps_shown(run.stdout)
    assert run.stderr.strip().splitlines()[-1] == f"hookproof: replay interrupted after {done} of 31 step(s)", run
    pid = int(pid_file.read_text(encoding="utf-8"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"the receiver hookproof started (pid {pid}) still runs after the replay ended")
