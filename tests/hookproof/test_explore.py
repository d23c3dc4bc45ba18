"""`hookproof explore` and `hookproof replay` through the CLI, and the pytest plugin."""

from __future__ import annotations

import json
import shutil
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hookproof.cli import app
from tests.hookproof.zoo_apps import config_text

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]


def write_config(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text(config_text(name), encoding="utf-8")
    return path


def test_explore_finds_writes_reports_and_replay_reproduces(tmp_path: Path) -> None:
    config = write_config(tmp_path, "no_dedupe")
    out = tmp_path / "reports"
    runner = CliRunner()
    result = runner.invoke(app, ["explore", "--config", str(config), "--max-examples", "200", "--seed", "5",
                                 "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert "finding: duplicated" in result.output
    for name in ("report.json", "junit.xml", "summary.md", "report.html", "failing-schedule.json"):
        assert (out / name).is_file(), name
    report = json.loads((out / "report.json").read_text())
    assert report["verdict"] == "fail"
    schedule = json.loads((out / "failing-schedule.json").read_text())
    assert schedule["seed"] == 5 and sum(s["op"] != "emit" for s in schedule["steps"]) <= 4
    replayed = runner.invoke(app, ["replay", str(out / "failing-schedule.json"), "--config", str(config)])
    assert replayed.exit_code == 1, replayed.output
    assert "finding: duplicated" in replayed.output


def test_explore_passes_a_correct_receiver(tmp_path: Path) -> None:
    config = write_config(tmp_path, "inbox_sync")
    result = CliRunner().invoke(app, ["explore", "-c", str(config), "--max-examples", "15", "--seed", "1",
                                      "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "r" / "failing-schedule.json").exists()


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["explore", "--config", str(tmp_path / "missing.toml")]).exit_code == 2
    config = write_config(tmp_path, "inbox_sync")
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    assert runner.invoke(app, ["replay", str(bad), "--config", str(config)]).exit_code == 2


def _plugin_autoloads() -> bool:
    return any(ep.name == "hookproof" for ep in entry_points(group="pytest11"))


def test_example_project_runs_with_the_plugin(pytester: pytest.Pytester) -> None:
    project = ROOT / "examples" / "pytest_project"
    for name in ("hookproof.toml", "pytest.ini", "receiver_app.py", "test_webhooks.py"):
        shutil.copy(project / name, pytester.path / name)
    args = ["-p", "no:locust", "-p", "no:cacheprovider", "-q"]
    if not _plugin_autoloads():
        args += ["-p", "scenarios.pytest_plugin"]
    result = pytester.runpytest_subprocess(*args, timeout=240)
    result.assert_outcomes(passed=2)
    helped = pytester.runpytest_subprocess(*args, "--help", timeout=60)
    helped.stdout.fnmatch_lines(["*hookproof*", "*--hookproof-config*"])
