"""`hookproof explore` and `hookproof replay` through the CLI, and the pytest plugin."""

from __future__ import annotations

import json
import os
import re
import shutil
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hookproof.cli import app
from hookproof.commands.explore import (
    BURSTS_ID,
    HISTORY_FILES,
    MACHINE_ID,
    NOTHING_DELIVERED,
    burst_report,
    machine_report,
    run_explore,
    run_report,
    write_interrupted_report,
)
from hookproof.scenarios.statemachine import NOTHING_ACKNOWLEDGED, ExploreResult, Failure, HitRate
from tests.hookproof.zoo_apps import config_text
from tests.hostile.harness import CliRun, run_hookproof
from tests.hostile.servers import hostile_server
from tests.support import free_port

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]


def write_config(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text(config_text(name), encoding="utf-8")
    return path


def test_explore_notes_a_stripe_version_it_serves_in_an_older_shape(tmp_path: Path) -> None:
    """fetch_state pinning its requests to stripe-node 23.2.0's ``2026-11-18.endive``, a version
    hookproof does not model, passes; the report and the printed lines say so once."""
    from hookproof.receivers.web import receiver_of
    from hookproof.simulator.events import LATEST_API_VERSION
    from tests.examples.pinned_fetch import PINNED
    from tests.hookproof.zoo_apps import app_for

    receiver_of(app_for("fetch_state")).api.headers["Stripe-Version"] = PINNED  # type: ignore[attr-defined]
    from hookproof.config import load_config

    run = run_explore(load_config(write_config(tmp_path, "fetch_state")), out_dir=tmp_path / "out", max_examples=5,
                      seed=3)
    assert run.report.verdict == "pass", run.lines
    (note,) = [n for n in run.report.notes if PINNED in n]
    assert f"requests pinned to {PINNED}" in note and f"in the shape of {LATEST_API_VERSION}" in note
    # printed once, with the report's notes under its table (the lines above it printed it too)
    assert not any(note in line for line in run.lines), run.lines
    assert json.loads((tmp_path / "out" / "report.json").read_text())["notes"].count(note) == 1


def test_explore_notes_nothing_for_a_modelled_version(tmp_path: Path) -> None:
    from hookproof.config import load_config

    run = run_explore(load_config(write_config(tmp_path, "fetch_state")), out_dir=tmp_path / "out", max_examples=5,
                      seed=3)
    assert run.report.verdict == "pass", run.lines
    assert not [n for n in run.report.notes if "Stripe-Version" in n or "pinned to" in n], run.report.notes


def test_explore_passes_a_correct_receiver(tmp_path: Path) -> None:
    config = write_config(tmp_path, "inbox_sync")
    result = CliRunner().invoke(app, ["explore", "-c", str(config), "--max-examples", "15", "--seed", "1",
                                      "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "r" / "failing-schedule.json").exists()


@pytest.mark.slow
@pytest.mark.parametrize(("receiver", "found"), [
    ("fetch_state", set()),  # fetches every object from the provider API, under its faults too
    ("get_or_create_atomic", set()),
    ("cross_type_keyed", set()),
    ("foreign_acked", set()),
    ("downstream_keyed", set()),  # its effects are calls to the effect sink, read there
    ("inbox_queue", set()),
    ("inbox_sync", set()),
    ("cross_type_race", {"duplicated"}),  # the same search catches the broken twin
])
def test_explore_at_a_started_receiver_s_url_passes_the_correct_receivers(tmp_path: Path, receiver: str,
                                                                          found: set[str]) -> None:
    """explore against a receiver it starts, over HTTP, with the provider API it serves: the
    correct reference receivers (one that fetches every object's state among them) end with
    no finding; the cross-type race's related burst is found by the same search."""
    from examples.receivers import config as receiver_config

    cfg = receiver_config(receiver, tmp_path, "whsec_explore_at_a_url_0123456789", seed=7, settle_window_s=0.15)
    run = run_explore(cfg, out_dir=tmp_path / "out", max_examples=60, seed=7)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    findings = {c["check_id"] for s in report["scenarios"] for c in s["checks"]
                for f in c["findings"] if f["severity"] == "finding"}
    assert findings == found, [(s["id"], s["verdict"], s.get("reason")) for s in report["scenarios"]]
    assert report["verdict"] == ("fail" if found else "pass") and run.exit_code == (1 if found else 0)


def test_an_in_process_explore_leaves_the_environment_as_it_found_it(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process app sees the routed provider API through HOOKPROOF_API_BASE while the
    search runs; left behind, it became every later receiver's provider API (the user's
    value wins over hookproof's), and storms and seeds in the same process fetched from a
    host that does not exist."""
    monkeypatch.delenv("HOOKPROOF_API_BASE", raising=False)
    monkeypatch.delenv("HOOKPROOF_API_KEY", raising=False)
    config = write_config(tmp_path, "inbox_sync")
    result = CliRunner().invoke(app, ["explore", "-c", str(config), "--max-examples", "3", "--seed", "1",
                                      "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert "HOOKPROOF_API_BASE" not in os.environ and "HOOKPROOF_API_KEY" not in os.environ


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["explore", "--config", str(tmp_path / "missing.toml")]).exit_code == 2
    config = write_config(tmp_path, "inbox_sync")
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    assert runner.invoke(app, ["replay", str(bad), "--config", str(config)]).exit_code == 2


def _url_config(tmp_path: Path, url: str, *, enabled: str = "") -> Path:
    """A URL target's config; `enabled`: an ``enabled_events`` line for its [target]."""
    path = tmp_path / "url.toml"
    path.write_text(f'[target]\nurl = "{url}"\nprofile = "stripe"\nsecret = "whsec_explore_test"\n{enabled}\n'
                    f'[observer]\nkind = "python"\ncallable = "{__name__}:no_effects"\n\n'
                    '[settle]\nwindow_s = 0.1\ndeadline_s = 2\n', encoding="utf-8")
    return path


def no_effects() -> dict[str, list[object]]:
    """The observer of a receiver that applies nothing (the hostile servers)."""
    return {"effects": [], "states": []}


def _one_line(run: CliRun) -> str:
    assert run.returncode == 2, run
    assert "Traceback" not in run.stdout + run.stderr, run
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run
    return lines[0]


def test_explore_refuses_a_receiver_that_is_not_running(tmp_path: Path) -> None:
    port = free_port()
    config = _url_config(tmp_path, f"http://127.0.0.1:{port}/webhooks")
    run = run_hookproof("explore", "-c", str(config), "--max-examples", "1", "--repeats", "1",
                        "--out", str(tmp_path / "out"), timeout_s=60, cwd=tmp_path)
    line = _one_line(run)
    assert run.stderr == line + "\n", run  # nothing else, not even a blank line from the progress display
    assert re.fullmatch(rf"hookproof: .*url\.toml:2: target\.url: cannot reach 127\.0\.0\.1:{port} "
                        r"\(nothing listens there\); start the receiver or fix the URL", line), line
    assert not (tmp_path / "out" / "report.json").exists()


def test_explore_refuses_a_remote_target_without_allow_remote(tmp_path: Path) -> None:
    config = _url_config(tmp_path, "http://hooks.example.com/webhooks")
    run = run_hookproof("explore", "-c", str(config), "--max-examples", "1", "--repeats", "1",
                        "--out", str(tmp_path / "out"), timeout_s=60, cwd=tmp_path)
    assert _one_line(run) == ("hookproof: target.url: http://hooks.example.com/webhooks is not a loopback address; "
                              "explore sends concurrent duplicate bursts, so a remote receiver needs --allow-remote")
    assert not (tmp_path / "out" / "report.json").exists()


def test_explore_allow_remote_lets_a_remote_target_past_the_loopback_check(tmp_path: Path) -> None:
    from hookproof.config import load_config

    cfg = load_config(_url_config(tmp_path, "http://hooks.example.com/webhooks"))
    reached: list[str] = []

    def stop_at_start(phase: str, done: int, total: int | None) -> None:
        reached.append(phase)
        raise RuntimeError("stop before sending")

    with pytest.raises(RuntimeError, match="stop before sending"):
        run_explore(cfg, out_dir=tmp_path / "out", max_examples=1, repeats=1, allow_remote=True,
                    progress=stop_at_start)
    assert reached == ["starting"]


@pytest.mark.parametrize(("hit", "verdict", "check"), [
    (HitRate(0, 3, 8), "unknown", "unknown"),  # nothing sent at all
    (HitRate(0, 3, 8, attempts=24, acked=0), "unknown", "unknown"),  # sent, none acknowledged
    (HitRate(0, 3, 8, attempts=24, acked=24), "pass", "valid"),
    (HitRate(1, 3, 8, seeds=[4], keys=["pi_1"], attempts=24, acked=0), "fail", "invalid"),  # applied twice anyway
    (HitRate(1, 3, 8, seeds=[4], keys=["pi_1"], attempts=24, acked=9), "fail", "invalid"),
    (HitRate(1, 3, 8, seeds=[4], keys=["cus_1"], kinds=["counter"], attempts=24, acked=9), "fail", "invalid"),
], ids=["no-attempts", "none-acked", "acked-once", "hit-unacked", "hit", "counter-hit"])
def test_burst_report_silence_is_not_a_pass(hit: HitRate, verdict: str, check: str) -> None:
    scenario = burst_report(hit)
    assert (scenario.verdict, scenario.checks[0].verdict) == (verdict, check)
    assert [c.check_id for c in scenario.checks] == [hit.kinds[0] if hit.kinds else "duplicated"]
    if verdict == "unknown":
        assert scenario.reason == NOTHING_DELIVERED.format(attempts=hit.attempts)
        assert scenario.checks[0].detail == scenario.reason


@pytest.mark.parametrize(("verdicts", "run"), [
    (("pass", "pass"), "pass"), (("pass", "unknown"), "unknown"), (("unknown", "fail"), "fail"),
    (("error", "pass"), "fail"),
])
def test_an_unknown_scenario_makes_the_run_unknown(tmp_path: Path, verdicts: tuple[str, ...], run: str) -> None:
    from hookproof.config import load_config
    from hookproof.reports.model import ScenarioReport

    cfg = load_config(_url_config(tmp_path, "http://127.0.0.1:9/webhooks"))
    scenarios = [ScenarioReport(f"s{i}", "t", "d", v, ()) for i, v in enumerate(verdicts)]
    assert run_report(cfg, "t", 1, 0.0, scenarios).verdict == run


def test_bursts_no_copy_of_which_was_acknowledged_are_unknown_not_a_pass(tmp_path: Path) -> None:
    """A receiver that listens but acknowledges nothing (a redirect loop) certifies nothing.

    It is sent only ``customer.created`` (no effect): a redirected effectful event would be
    a real finding (`lost`), which beats silence."""
    from hookproof.config import load_config

    with hostile_server("redirect-loop") as server:
        cfg = load_config(_url_config(tmp_path, server.url, enabled='enabled_events = ["customer.created"]'))
        run = run_explore(cfg, out_dir=tmp_path / "out", max_examples=1, seed=3, repeats=2)
    assert run.hit_rate is not None and run.hit_rate.attempts > 0 and run.hit_rate.acked == 0
    bursts = run.report.scenario(BURSTS_ID)
    assert bursts is not None and bursts.verdict == "unknown"
    assert run.report.verdict == "unknown" and run.exit_code == 1
    assert f"burst race: {NOTHING_DELIVERED.format(attempts=run.hit_rate.attempts)}" in run.lines
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"] == "unknown"
    _machine_unknown(run, run.result.attempts)  # nor did the state machine's search certify anything


@pytest.mark.parametrize(("failed", "attempts", "acked", "verdict"), [
    (False, 0, 0, "unknown"),  # nothing sent at all
    (False, 12, 0, "unknown"),  # sent, none acknowledged
    (False, 12, 1, "pass"),
    (True, 12, 0, "fail"),  # a finding anyway
], ids=["no-attempts", "none-acked", "acked", "finding-unacked"])
def test_machine_report_silence_is_not_a_pass(failed: bool, attempts: int, acked: int, verdict: str) -> None:
    failure = Failure(1, [], [], [], [], "teardown") if failed else None
    result = ExploreResult(failure, 3, 9, 0.5, 1, attempts=attempts, acked=acked)
    scenario = machine_report(result, "t")
    assert scenario.verdict == verdict
    if verdict == "unknown":
        assert scenario.reason == NOTHING_ACKNOWLEDGED.format(attempts=attempts)


async def always_500(scope: dict, receive: object, send: object) -> None:
    """An ASGI receiver that answers every request with a 500 (it acknowledges nothing)."""
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 500, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"boom"})


def _machine_unknown(run: object, attempts: int) -> None:
    machine = run.report.scenario(MACHINE_ID)
    assert machine is not None and machine.verdict == "unknown", machine
    assert machine.reason == NOTHING_ACKNOWLEDGED.format(attempts=attempts)
    assert f"state machine: {machine.reason}" in run.lines
    assert run.report.verdict == "unknown" and run.exit_code == 1


def _always_500_config(tmp_path: Path) -> Path:
    path = tmp_path / "h.toml"
    path.write_text(f'[target]\napp = "{__name__}:always_500"\nprofile = "stripe"\nsecret = "whsec_explore_test"\n\n'
                    f'[observer]\nkind = "python"\ncallable = "{__name__}:no_effects"\n', encoding="utf-8")
    return path


async def always_400(scope: dict, receive: object, send: object) -> None:
    """An ASGI receiver that refuses every request with a 400 (it acknowledges nothing)."""
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 400, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"no"})


def test_a_search_no_delivery_of_which_was_acknowledged_is_unknown(tmp_path: Path) -> None:
    """A receiver that refuses everything with a 400, sent only ``customer.created`` (no
    effect, so nothing can be lost; a 500 would be a finding): a search that found nothing
    and acknowledged nothing is no pass."""
    from hookproof.config import load_config

    path = tmp_path / "h400.toml"
    path.write_text(f'[target]\napp = "{__name__}:always_400"\nprofile = "stripe"\nsecret = "whsec_explore_test"\n'
                    'enabled_events = ["customer.created"]\n\n'
                    f'[observer]\nkind = "python"\ncallable = "{__name__}:no_effects"\n', encoding="utf-8")
    run = run_explore(load_config(path), out_dir=tmp_path / "out", max_examples=1, seed=3)
    assert run.result.failure is None and run.result.acked == 0
    _machine_unknown(run, run.result.attempts)


def test_a_finding_beats_silence(tmp_path: Path) -> None:
    """The same receiver, searched longer: its refusals lose an effect, a real finding."""
    from hookproof.config import load_config

    run = run_explore(load_config(_always_500_config(tmp_path)), out_dir=tmp_path / "out", max_examples=2, seed=3)
    assert run.result.failure is not None and run.result.attempts > 0 and run.result.acked == 0
    assert run.report.scenario(MACHINE_ID).verdict == "fail" and run.report.verdict == "fail"


def test_a_correct_receiver_has_acknowledged_deliveries(tmp_path: Path) -> None:
    from hookproof.config import load_config

    run = run_explore(load_config(write_config(tmp_path, "inbox_sync")), out_dir=tmp_path / "out", max_examples=3,
                      seed=1)
    assert run.result.acked > 0 and run.result.acked <= run.result.attempts
    assert run.report.scenario(MACHINE_ID).verdict == "pass"


def _stale_history(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in HISTORY_FILES:
        (out / name).write_bytes(b"an earlier certify run")


def test_explore_removes_a_stale_history(tmp_path: Path) -> None:
    """`hookproof report --history` must not render an earlier certify run as this one."""
    from hookproof.config import load_config

    out = tmp_path / "out"
    _stale_history(out)
    run = run_explore(load_config(write_config(tmp_path, "inbox_sync")), out_dir=out, max_examples=2, seed=1)
    assert (out / "report.json").is_file()
    assert not [name for name in HISTORY_FILES if (out / name).exists()]
    assert "history" not in run.paths


def test_an_interrupted_report_names_the_run(tmp_path: Path) -> None:
    from hookproof.config import load_config

    cfg = load_config(_url_config(tmp_path, "http://127.0.0.1:9/webhooks"))
    out = tmp_path / "out"
    _stale_history(out)
    write_interrupted_report(out, 0.0, cfg, 42, None)
    report = json.loads((out / "report.json").read_text())
    assert (report["target"], report["profile"], report["seed"]) == ("http://127.0.0.1:9/webhooks", "stripe", 42)
    assert report["partial"] is True and report["verdict"] == "unknown"
    assert not [name for name in HISTORY_FILES if (out / name).exists()]
    write_interrupted_report(out, 0.0, cfg, 42, "in-process ASGI app app")
    assert json.loads((out / "report.json").read_text())["target"] == "in-process ASGI app app"


def _plugin_autoloads() -> bool:
    return any(ep.name == "hookproof" for ep in entry_points(group="pytest11"))


def test_example_project_runs_with_the_plugin(pytester: pytest.Pytester) -> None:
    project = ROOT / "examples" / "pytest_project"
    for name in ("hookproof.toml", "pytest.ini", "receiver_app.py", "test_webhooks.py"):
        shutil.copy(project / name, pytester.path / name)
    args = ["-p", "no:locust", "-p", "no:cacheprovider", "-q"]
    if not _plugin_autoloads():
        args += ["-p", "hookproof.pytest_plugin"]
    result = pytester.runpytest_subprocess(*args, timeout=240)
    result.assert_outcomes(passed=2)
    helped = pytester.runpytest_subprocess(*args, "--help", timeout=60)
    helped.stdout.fnmatch_lines(["*hookproof*", "*--hookproof-config*"])


def test_the_plugin_fails_a_search_nothing_was_acknowledged_in(pytester: pytest.Pytester) -> None:
    """An app refusing everything (sent only ``customer.created``, so nothing is lost and no
    500 is a finding): the plugin's explore must not pass silently."""
    (pytester.path / "hookproof.toml").write_text(
        '[target]\napp = "down_app:app"\nprofile = "stripe"\nsecret = "whsec_plugin_test_only"\n'
        'enabled_events = ["customer.created"]\n\n'
        '[observer]\nkind = "python"\ncallable = "down_app:observe"\n\n[run]\nseed = 3\n', encoding="utf-8")
    (pytester.path / "down_app.py").write_text(
        "async def app(scope, receive, send):\n"
        "    if scope['type'] != 'http':\n        return\n"
        "    while (await receive()).get('more_body'):\n        pass\n"
        "    await send({'type': 'http.response.start', 'status': 400, 'headers': []})\n"
        "    await send({'type': 'http.response.body', 'body': b'down'})\n\n\n"
        "def observe():\n    return {'effects': [], 'states': []}\n", encoding="utf-8")
    (pytester.path / "test_down.py").write_text(
        "def test_explore(hookproof_checks):\n    hookproof_checks.explore(max_examples=1)\n", encoding="utf-8")
    args = ["-p", "no:locust", "-p", "no:cacheprovider", "-q"]
    if not _plugin_autoloads():
        args += ["-p", "hookproof.pytest_plugin"]
    result = pytester.runpytest_subprocess(*args, timeout=240)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*hookproof explore: no valid delivery was acknowledged*"])


def test_off_a_terminal_explore_prints_a_heartbeat_with_the_examples(tmp_path: Path) -> None:
    config = write_config(tmp_path, "inbox_sync")
    run = run_hookproof("explore", "-c", str(config), "--max-examples", "40", "--seed", "1", "--out",
                        str(tmp_path / "r"), timeout_s=240, env={"HOOKPROOF_HEARTBEAT_S": "0.2"})
    assert run.returncode == 0, run
    beats = [line for line in run.stderr.splitlines() if line.startswith("explore: ")]
    assert beats, run
    assert all(re.fullmatch(r"explore: (starting|state machine( \d+/40 examples)?), \d+ s", b) for b in beats), beats
    assert any(re.fullmatch(r"explore: state machine \d+/40 examples, \d+ s", b) for b in beats), beats


def test_on_a_terminal_explore_shows_the_examples_so_far(tmp_path: Path) -> None:
    """Live progress under a pseudo-terminal: the phase and the examples run of how many."""
    from tests.hostile.harness import on_a_terminal

    config = write_config(tmp_path, "inbox_sync")
    code, text = on_a_terminal(["explore", "-c", str(config), "--max-examples", "40", "--seed", "1", "--out",
                                str(tmp_path / "r")], tmp_path, timeout_s=240)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "\n")  # the redrawn line, without colours
    assert code == 0, shown[-3000:]
    assert re.search(r"^explore: state machine\b[^\n]*?\b\d+/40\b", shown, flags=re.M), shown[-3000:]


def test_off_a_terminal_the_heartbeat_says_when_explore_shrinks_a_finding(tmp_path: Path) -> None:
    """Hypothesis tries many smaller schedules once it has a finding: never 'state machine 401/40'."""
    config = write_config(tmp_path, "no_dedupe")
    run = run_hookproof("explore", "-c", str(config), "--max-examples", "40", "--seed", "1", "--out",
                        str(tmp_path / "r"), timeout_s=240, env={"HOOKPROOF_HEARTBEAT_S": "0.05"})
    assert run.returncode == 1, run
    beats = [line for line in run.stderr.splitlines() if line.startswith("explore: ")]
    counted = [tuple(map(int, m.groups())) for b in beats if (m := re.search(r"(\d+)/(\d+) examples", b))]
    assert all(done <= total for done, total in counted), beats
    assert all(re.fullmatch(r"explore: (starting|state machine( \d+/40 examples)?|shrinking the finding, \d+ smaller "
                            r"schedules tried|burst race( \d+/\d+ burst runs)?), \d+ s", b) for b in beats), beats
    assert any(b.startswith("explore: shrinking the finding, ") for b in beats), beats


def test_a_run_stopped_while_shrinking_reports_its_finding_as_partial(tmp_path: Path) -> None:
    """A new user's explore found a duplicate, then its --max-duration fired while shrinking and
    the report said nothing: the finding so far must be reported (fail, partial, schedule kept)."""
    from hookproof.config import load_config

    def progress(phase: str, done: int, total: int | None) -> None:
        if phase == "shrinking the finding" and done >= 1:
            raise KeyboardInterrupt  # what the run's deadline raises in the main thread

    run = run_explore(load_config(write_config(tmp_path, "no_dedupe")), out_dir=tmp_path / "out", max_examples=200,
                      seed=20240601, progress=progress)
    scenario = run.report.scenario(MACHINE_ID)
    assert scenario.verdict == "fail" and "duplicated" in {f.check_id for f in scenario.findings}
    assert run.report.partial and run.result.interrupted
    assert any(note.startswith("shrinking was stopped after 1 smaller schedule(s) tried") for note in run.report.notes)
    assert run.schedule_path is not None and run.schedule_path.is_file()
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] is True and report["verdict"] == "fail"


@pytest.mark.parametrize("hit", [HitRate(hits=0, repeats=20, copies=8, attempts=160, acked=20),
                                 HitRate(hits=0, repeats=20, copies=8, attempts=160, acked=0),
                                 HitRate(hits=2, repeats=20, copies=8, seeds=[3, 9], attempts=160, acked=40)])
def test_the_burst_race_reports_how_long_it_ran(hit: HitRate) -> None:
    """summary.md gave the burst race 0 ms though it ran for seconds."""
    assert burst_report(hit, duration_s=14.8).duration_s == 14.8


def test_explore_notes_the_unmodelled_types_the_endpoint_enables(tmp_path: Path) -> None:
    """A Stripe endpoint's enabled_events copied as it is (a real type hookproof does not model
    among them): explore runs, and its report names that type once, as not certified."""
    from hookproof.config import load_config
    from hookproof.simulator.profiles import get_profile

    cfg = load_config(write_config(tmp_path, "inbox_sync"))
    enabled = [*get_profile("stripe").event_types().values(), "invoice.finalized"]
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": enabled})})
    run = run_explore(cfg, out_dir=tmp_path / "out", max_examples=3, seed=3)
    assert run.report.verdict == "pass", run.lines
    note = "enabled but not modelled: invoice.finalized; their handling is not certified"
    assert run.report.notes.count(note) == 1, run.report.notes


def test_a_run_its_deadline_stopped_says_so_not_sigint() -> None:
    """The run's deadline interrupts it as SIGINT does: a search stopped while shrinking said
    "stopped by SIGINT" in report.json although nobody pressed Ctrl-C."""
    from hookproof.commands.explore import stop_words

    fired = ["stopped: the run reached its maximum duration (300 s, --max-duration or run.max_duration_s); "
             "the search stopped there"]
    assert stop_words(fired, "SIGINT") == fired[0]
    assert stop_words([], "SIGTERM") == "stopped by SIGTERM"
    assert stop_words([], None) is None


def test_explore_keeps_hypothesis_s_own_files_beside_its_results(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis caches the constants it reads from local source under its home directory, by
    default ``.hypothesis`` in the directory a run started from: a user's project folder. explore
    points it at its results' ``.hypothesis`` while it runs, then puts the previous one back, and
    leaves a ``HYPOTHESIS_STORAGE_DIRECTORY`` the user set alone."""
    from hypothesis.configuration import storage_directory

    from hookproof.commands.explore import _hypothesis_home

    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    before = storage_directory("constants", intent_to_write=False).path
    with _hypothesis_home(tmp_path / "out" / ".hypothesis"):
        assert storage_directory("constants", intent_to_write=False).path == tmp_path / "out" / ".hypothesis" / "constants"
    assert storage_directory("constants", intent_to_write=False).path == before
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "mine"))
    with _hypothesis_home(tmp_path / "out" / ".hypothesis"):
        assert storage_directory("constants", intent_to_write=False).path == before  # the user's choice stands
