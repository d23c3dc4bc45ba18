"""The loopback guard (`hookproof.loopback`) on every command that sends traffic.

A new user ran ``hookproof send --url http://8.8.8.8/w`` by mistake and it sent nine
attempts: certify, explore and storm refused a target off this machine without
``--allow-remote``, send (and replay) did not. Each now refuses in certify's one line,
exit 2, before anything is sent. 192.0.2.1 is TEST-NET-1 (RFC 5737), never routed: a
send that got past the guard would only time out there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from hookproof.cli import app
from tests.hookproof.test_send_one_event import receiver  # noqa: F401 (the recording receiver fixture)
from tests.hostile.harness import run_hookproof

pytest_plugins = ["pytester"]

REMOTE = "http://192.0.2.1/w"


def _refusal(field: str, url: str, command: str, sends: str) -> str:
    return (f"hookproof: {field}: {url} is not a loopback address; {command} sends {sends}, "
            "so a remote receiver needs --allow-remote")


SEND_REFUSAL = _refusal("--url", REMOTE, "send", "signed events with their copies and retries")


def _config(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text(f'[target]\nurl = "{url}"\nprofile = "stripe"\nsecret = "whsec_loopback_test"\n\n'
                    '[observer]\nkind = "python"\ncallable = "tests.hookproof.test_explore:no_effects"\n',
                    encoding="utf-8")
    return path


@pytest.fixture()
def sends(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every call of `hookproof.send.send` (none made: it returns no attempt)."""
    import hookproof.send

    calls: list[Any] = []
    monkeypatch.setattr(hookproof.send, "send", lambda options, *args, **kwargs: calls.append(options) or [])
    return calls


def test_send_refuses_a_remote_url_in_one_line_before_sending() -> None:
    run = run_hookproof("send", "--url", REMOTE, "--secret", "whsec_loopback_test", "--sender-timeout", "0.5",
                        "--max-duration", "20s", timeout_s=60)
    assert (run.returncode, run.stderr, run.stdout) == (2, SEND_REFUSAL + "\n", ""), run


def test_send_refusal_comes_before_any_send(sends: list[Any], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["send", "--url", REMOTE, "--secret", "whsec_loopback_test"])
    assert result.exit_code == 2, result.output
    assert sends == []
    # the url taken from --config's target is named as the config's field
    result = CliRunner().invoke(app, ["send", "--config", str(_config(tmp_path, "http://hooks.example.com/w"))])
    assert result.exit_code == 2, result.output
    assert "target.url: http://hooks.example.com/w is not a loopback address; send sends" in result.output
    assert sends == []


def test_send_allow_remote_lets_a_remote_url_past_the_guard(sends: list[Any]) -> None:
    result = CliRunner().invoke(app, ["send", "--url", REMOTE, "--secret", "whsec_loopback_test", "--allow-remote"])
    assert [o.url for o in sends] == [REMOTE]
    assert result.exit_code == 1, result.output  # the stub sent nothing, so nothing was acknowledged




@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_send_to_loopback_needs_no_flag(receiver: tuple[str, list[dict[str, Any]]],  # noqa: F811 (the fixture)
                                        host: str) -> None:
    url = receiver[0].replace("127.0.0.1", host)
    result = CliRunner().invoke(app, ["send", "--url", url, "--secret", "whsec_loopback_test", "--json"])
    assert result.exit_code == 0, result.output
    assert '"status": 200' in result.output and len(receiver[1]) == 1


def test_replay_refuses_a_remote_target_before_starting_anything(tmp_path: Path) -> None:
    config = _config(tmp_path, REMOTE)
    run = run_hookproof("replay", str(tmp_path / "failing-schedule.json"), "--config", str(config),
                        timeout_s=60, cwd=tmp_path)
    refusal = _refusal("target.url", REMOTE, "replay",
                       "the schedule's deliveries, concurrent duplicate bursts among them")
    assert (run.returncode, run.stderr.strip().splitlines()[-1:]) == (2, [refusal]), run
    assert len(run.stderr.strip().splitlines()) == 1, run


def test_replay_allow_remote_passes_the_guard(tmp_path: Path) -> None:
    """Past the guard, the missing schedule is what is refused."""
    config = _config(tmp_path, REMOTE)
    result = CliRunner().invoke(app, ["replay", str(tmp_path / "failing-schedule.json"), "--config", str(config),
                                      "--allow-remote"])
    assert result.exit_code == 2, result.output
    assert "loopback" not in result.output and "failing-schedule.json" in result.output, result.output


def test_explore_prints_a_replay_line_that_passes_the_guard() -> None:
    from hookproof.commands.replay import replay_command

    assert replay_command("s.json", "h.toml") == "hookproof replay s.json --config h.toml"
    assert replay_command("s.json", "h.toml", allow_remote=True) == "hookproof replay s.json --config h.toml --allow-remote"


@pytest.mark.parametrize("allowed", [False, True], ids=["refused", "allowed"])
def test_the_pytest_plugin_refuses_a_remote_target_before_starting_anything(pytester: pytest.Pytester,
                                                                            allowed: bool) -> None:
    """The plugin's session drives the state machine (bursts) and certify's catalog; a remote
    target is refused as the commands refuse it, unless --hookproof-allow-remote (then the
    unroutable address is what fails: nothing answers there)."""
    import shutil
    from importlib.metadata import entry_points

    project = Path(__file__).resolve().parents[2] / "examples" / "pytest_project"
    for name in ("pytest.ini", "receiver_app.py", "test_webhooks.py"):
        shutil.copy(project / name, pytester.path / name)
    (pytester.path / "hookproof.toml").write_text(
        '[target]\nurl = "http://192.0.2.1/webhooks"\nprofile = "stripe"\nsecret = "whsec_x"\n\n'
        '[observer]\nkind = "python"\ncallable = "receiver_app:observe"\n', encoding="utf-8")
    args = ["-p", "no:locust", "-p", "no:cacheprovider", "-q", *(["--hookproof-allow-remote"] if allowed else [])]
    if not any(ep.name == "hookproof" for ep in entry_points(group="pytest11")):
        args += ["-p", "hookproof.pytest_plugin"]
    result = pytester.runpytest_subprocess(*args, timeout=120)
    result.assert_outcomes(errors=2)
    output = result.stdout.str()
    refusal = ("target.url: http://192.0.2.1/webhooks is not a loopback address; the hookproof plugin sends "
               "concurrent duplicate bursts and certify's catalog, so a remote receiver needs --hookproof-allow-remote")
    assert (refusal in output) is not allowed, output
    if allowed:
        assert "target.url: cannot reach 192.0.2.1:80" in output, output
    assert "Traceback" not in output, output
