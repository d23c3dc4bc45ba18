"""Every command hookproof prints to reproduce a finding carries what it needs (the config
it ran with), and a schedule reads in the profile's own event names, in the order its
deliveries went out."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from hookproof.commands.replay import replay_command
from hookproof.scenarios.schedules import Failure, Step, schedule_lines
from hookproof.simulator.delivery import Attempt, Completion, Outcome
from tests.hookproof.zoo_apps import config_text
from tests.hostile.harness import run_hookproof

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
#: A replay line as explore and the pytest plugin print it.
REPLAY = re.compile(r"^replay: (hookproof replay .*)$", re.MULTILINE)


def _replay_argv(output: str) -> list[str]:
    found = REPLAY.search(output)
    assert found, output
    return shlex.split(found.group(1))[1:]  # without the program's name


def test_the_replay_command_names_the_schedule_and_the_config() -> None:
    assert replay_command(Path("out/failing-schedule.json"), "twin.toml") == \
        "hookproof replay out/failing-schedule.json --config twin.toml"
    assert replay_command(Path("my runs/failing-schedule.json"), "conf dir/twin's.toml") == \
        "hookproof replay 'my runs/failing-schedule.json' --config 'conf dir/twin'\"'\"'s.toml'"
    assert replay_command("s.json", None) == "hookproof replay s.json"


def test_explore_under_another_config_prints_a_replay_that_reproduces(tmp_path: Path) -> None:
    """hookproof.toml describes a correct receiver; the broken one is in twin.toml. explore finds
    it, writes every report and the shrunk schedule; the printed replay must run against
    twin.toml, where the finding reproduces."""
    (tmp_path / "hookproof.toml").write_text(config_text("inbox_sync"), encoding="utf-8")
    (tmp_path / "twin.toml").write_text(config_text("no_dedupe"), encoding="utf-8")
    run = run_hookproof("explore", "-c", "twin.toml", "--max-examples", "200", "--seed", "5", "--out", "out",
                        cwd=tmp_path, timeout_s=300)
    assert run.returncode == 1, run
    assert "finding: duplicated" in run.stdout, run
    out = tmp_path / "out"
    for name in ("report.json", "junit.xml", "summary.md", "report.html", "failing-schedule.json"):
        assert (out / name).is_file(), name
    assert json.loads((out / "report.json").read_text())["verdict"] == "fail"
    schedule = json.loads((out / "failing-schedule.json").read_text())
    assert schedule["seed"] == 5 and sum(s["op"] != "emit" for s in schedule["steps"]) <= 4, schedule
    assert "replay: hookproof replay out/failing-schedule.json --config twin.toml\n" in run.stdout
    replayed = run_hookproof(*_replay_argv(run.stdout), cwd=tmp_path, timeout_s=120)
    assert replayed.returncode == 1, replayed
    assert "finding: duplicated: " in replayed.stdout and "note: explore found it" not in replayed.stdout
    # without the config, the correct receiver: no finding, and a note naming the config explore read
    elsewhere = run_hookproof("replay", "out/failing-schedule.json", cwd=tmp_path, timeout_s=120)
    assert elsewhere.returncode == 0, elsewhere
    lines = elsewhere.stdout.splitlines()
    assert "no finding: the schedule did not reproduce" in lines, lines
    assert lines[-1] == (f"note: explore found it with the config {(tmp_path / 'twin.toml').resolve()}; "
                         "this replay read hookproof.toml"), lines


def test_replay_under_another_profile_than_explore_is_one_line(tmp_path: Path) -> None:
    schedule = tmp_path / "s.json"
    schedule.write_text(json.dumps({"format": "hookproof-schedule/1", "seed": 5, "profile": "standard-webhooks",
                                    "steps": [{"op": "emit", "action": "pay"}]}), encoding="utf-8")
    (tmp_path / "hookproof.toml").write_text(config_text("no_dedupe"), encoding="utf-8")
    run = run_hookproof("replay", "s.json", cwd=tmp_path, timeout_s=60)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.splitlines() == [
        "hookproof: s.json: explore found it under the standard-webhooks profile, but hookproof.toml sends as "
        "stripe: replay it with the config explore ran with (--config)"]


def _schedule(tmp_path: Path, *steps: dict[str, object]) -> Path:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"format": "hookproof-schedule/1", "seed": 5, "profile": "standard-webhooks",
                                "events": [], "steps": list(steps)}), encoding="utf-8")
    (tmp_path / "sw.toml").write_text(config_text("sw_no_dedupe"), encoding="utf-8")
    return path


def test_replay_speaks_the_profile_and_shows_the_teardown_in_the_order_it_delivered(tmp_path: Path) -> None:
    """Under standard-webhooks: payment.succeeded, not payment_intent.succeeded; the dropped
    answer makes the teardown deliver #1 again, after #0 and before #2."""
    _schedule(tmp_path, {"op": "emit", "action": "pay"}, {"op": "drop_response", "event": 1})
    run = run_hookproof("replay", "s.json", "-c", "sw.toml", cwd=tmp_path, timeout_s=120)
    assert run.returncode == 1, run
    lines = run.stdout.splitlines()
    assert lines[:4] == [
        "replaying 2 step(s) of s.json (seed 5, standard-webhooks event names)",
        " 1. emit pay -> #0 customer.created, #1 payment.succeeded, #2 charge.succeeded",
        " 2. drop_response #1 payment.succeeded -> dropped 200",
        " 3. teardown: delivered #0 customer.created acked 200, #1 payment.succeeded acked 200, "
        "#2 charge.succeeded acked 200; settle, check",
    ]
    assert re.fullmatch(r"finding: duplicated: license:pi_\w+ applied 2 times instead of once; "
                        r"2 delivery attempt\(s\) carried it", lines[4]), lines


def test_replay_of_a_burst_names_the_event_and_each_copy(tmp_path: Path) -> None:
    _schedule(tmp_path, {"op": "emit", "action": "subscribe"}, {"op": "burst", "event": 3, "copies": 2})
    run = run_hookproof("replay", "s.json", "-c", "sw.toml", cwd=tmp_path, timeout_s=120)
    assert run.returncode == 1, run
    assert run.stdout.splitlines()[1:4] == [
        # the first invoice's payment's own events beside its invoice.paid, in the profile's names
        " 1. emit subscribe -> #0 customer.created, #1 subscription.created, #2 invoice.created, #3 invoice.paid, "
        "#4 charge.succeeded, #5 payment.succeeded, #6 subscription.updated",
        " 2. burst #3 invoice.paid x2 -> acked 200, acked 200",
        "    (found after the last step)",
    ]


def test_explore_prints_the_shrunk_schedule_in_the_profile_names(tmp_path: Path) -> None:
    (tmp_path / "sw.toml").write_text(config_text("sw_no_dedupe"), encoding="utf-8")
    run = run_hookproof("explore", "-c", "sw.toml", "--max-examples", "200", "--seed", "5", "--out", "out",
                        cwd=tmp_path, timeout_s=300)
    assert run.returncode == 1, run
    block = run.stdout.split("shrunk schedule (", 1)[1].split("\nreplay: ", 1)[0]
    assert "standard-webhooks event names" in block.splitlines()[0]
    for stripe_only in ("payment_intent.", "customer.subscription.", "checkout.session."):
        assert stripe_only not in block, block
    emits = [line for line in block.splitlines() if ". emit " in line]
    assert emits and all(" -> #" in line for line in emits), block  # each emit says what it made
    assert "replay: hookproof replay out/failing-schedule.json --config sw.toml" in run.stdout


def _attempt(event_id: str, index: int, sent_at: float, outcome: Outcome, status: int | None) -> Attempt:
    return Attempt(event_id, f"d{index}", 1, None, None, None, "t", (), True, sent_at, sent_at, status, outcome,
                   Completion.OK if outcome is Outcome.ACKED else Completion.UNKNOWN, 1.0, index=index)


def test_schedule_lines_place_every_attempt_in_the_order_it_went_out() -> None:
    steps = [Step("emit", action="pay"), Step("redeliver_window", count=2)]
    attempts = [_attempt("m1", 0, 1.0, Outcome.ACKED, 200), _attempt("m0", 1, 1.5, Outcome.ACKED, 200),
                _attempt("m1", 2, 2.0, Outcome.ACKED, 200),  # the window, in order
                _attempt("m2", 3, 3.2, Outcome.SERVER_ERROR, 500), _attempt("m0", 4, 3.0, Outcome.ACKED, 200),
                _attempt("m2", 5, 4.0, Outcome.ACKED, 200)]  # the teardown: #0 went out first
    failure = Failure(5, steps, ["customer.created", "payment_intent.succeeded", "charge.succeeded"], [], attempts,
                      "teardown", event_names=["customer.created", "payment.succeeded", "charge.succeeded"],
                      event_ids=["m0", "m1", "m2"], marks=[(3, 0), (3, 3)])
    assert schedule_lines(failure) == [
        " 1. emit pay -> #0 customer.created, #1 payment.succeeded, #2 charge.succeeded",
        " 2. redeliver_window last 2 -> #1 payment.succeeded acked 200, #0 customer.created acked 200, "
        "#1 payment.succeeded acked 200",
        " 3. teardown: delivered #0 customer.created acked 200, #2 charge.succeeded server_error 500, "
        "#2 charge.succeeded acked 200; settle, check",
    ]


def test_the_plugin_prints_a_replay_line_with_its_config(pytester: pytest.Pytester,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    (pytester.path / "sw.toml").write_text(config_text("sw_no_dedupe", seed=5), encoding="utf-8")
    (pytester.path / "test_hooks.py").write_text(
        "def test_explore(hookproof_checks):\n    hookproof_checks.explore(max_examples=200)\n", encoding="utf-8")
    result = pytester.runpytest_subprocess("-p", "no:locust", "-p", "no:cacheprovider", "-q",
                                           "--hookproof-config", "sw.toml", "--hookproof-out", "out", timeout=240)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*shrunk schedule:", "*replay: hookproof replay out/test_explore/failing-schedule.json "
                                 "--config sw.toml"])
    assert "payment_intent." not in result.stdout.str() and "customer.subscription." not in result.stdout.str()


@pytest.mark.parametrize(("given", "hint"), [("hookproof.toml", "hookproof init"),
                                             ("twin.toml", "hookproof init twin.toml"),
                                             ("my dir/a.toml", "hookproof init 'my dir/a.toml'")])
def test_a_missing_config_names_the_init_that_writes_it(tmp_path: Path, given: str, hint: str) -> None:
    run = run_hookproof("certify", "-c", given, cwd=tmp_path, timeout_s=60)
    assert (run.returncode, run.stdout) == (2, ""), run
    assert run.stderr.splitlines() == [f"hookproof: no config file {given} (write one with '{hint}')"]


def test_a_schedule_marks_the_events_the_endpoint_is_not_sent(tmp_path: Path) -> None:
    """A step may make events of types the config's `enabled_events` leaves out: the world
    moves its objects, but nothing of them is delivered. The replay's line, and the shrunk
    schedule's from the same session, mark them, so no one looks for their attempts."""
    schedule = tmp_path / "s.json"
    schedule.write_text(json.dumps({"format": "hookproof-schedule/1", "seed": 5, "profile": "stripe", "events": [],
                                    "steps": [{"op": "emit", "action": "pay"}, {"op": "deliver", "event": 1}]}),
                        encoding="utf-8")
    text = config_text("inbox_sync").replace(
        'profile = "stripe"\n', 'profile = "stripe"\nenabled_events = ["payment_intent.succeeded", "charge.succeeded"]\n')
    (tmp_path / "hookproof.toml").write_text(text, encoding="utf-8")
    run = run_hookproof("replay", "s.json", cwd=tmp_path, timeout_s=120)
    assert run.returncode == 0, run
    assert run.stdout.splitlines()[1:3] == [
        " 1. emit pay -> #0 customer.created (not sent: not in enabled_events), #1 payment_intent.succeeded, "
        "#2 charge.succeeded",
        " 2. deliver #1 payment_intent.succeeded -> acked 200"]
    failure = Failure(5, [Step("emit", action="pay")], ["customer.created", "payment_intent.succeeded"], [], [],
                      "step", event_ids=["m0", "m1"], marks=[(2, 0)], unsent=frozenset({0}))
    assert schedule_lines(failure) == [
        " 1. emit pay -> #0 customer.created (not sent: not in enabled_events), #1 payment_intent.succeeded"]
