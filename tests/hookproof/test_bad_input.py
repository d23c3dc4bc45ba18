"""Bad input to the front door: malformed hookproof.toml files and bad flags.

Each case runs the CLI's entry point (`hookproof.cli.main`) in this process, one after
another (a subprocess per case cost ~65 interpreter start-ups), and asserts exactly one
line on stderr, starting with ``hookproof:``, naming the field and (for config files) the
``FILE:LINE:``, exit code 2, and no traceback. A few cases also run as real subprocesses,
to show the installed command behaves the same. In the config cases the expected line is
the one marked ``# <-``.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

import pytest

from tests.hostile.harness import CliRun, run_hookproof

#: Environment every case runs with.
CASE_ENV = {"HOOKPROOF_TEST_SURELY_UNSET": "", "HOOKPROOF_TEST_BLANK": "  "}


@contextlib.contextmanager
def _environment(env: Mapping[str, str], cwd: Path) -> Iterator[None]:
    """`env` (an empty value unsets the variable) and `cwd` for the block; everything restored after,
    signal handlers too (certify installs its own)."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for key, value in env.items():
        if value:
            os.environ[key] = value
        else:
            os.environ.pop(key, None)
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def run_in_process(*args: str, cwd: Path, env: Mapping[str, str] = CASE_ENV) -> CliRun:
    """`hookproof ARGS` through `hookproof.cli.main` in this process: what it printed and its exit code."""
    from hookproof.cli import main

    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    code: int | str | None = 0
    with _environment({**env, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}, cwd), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code
        except BaseException as exc:  # noqa: BLE001 - shown as the traceback a user would see
            import traceback

            err.write("Traceback (most recent call last):\n" + "".join(traceback.format_exception(exc)))
            code = 1
    returncode = code if isinstance(code, int) else (0 if code is None else 1)
    return CliRun(tuple(args), returncode, out.getvalue(), err.getvalue(), time.monotonic() - started, 0)

GOOD_TARGET = """[target]
url = "http://127.0.0.1:9/webhooks"
profile = "stripe"
secret = "whsec_config_test"
"""
GOOD_OBSERVER = """[observer]
kind = "sql"
url = "sqlite:///observed.sqlite"
effects = "SELECT business_key FROM effects"
"""


@dataclass(frozen=True)
class Bad:
    """A malformed config: its text (or bytes) and the field the message must name."""

    id: str
    text: str | bytes
    field: str

    @property
    def line(self) -> int:
        text = self.text.decode("utf-8", "replace") if isinstance(self.text, bytes) else self.text
        marked = [i for i, line in enumerate(text.splitlines(), start=1) if "# <-" in line]
        assert len(marked) == 1, f"case {self.id} must mark exactly one line"
        return marked[0]


def _t(target_lines: str) -> str:
    """A config whose [target] table is `target_lines` (with a good observer)."""
    return f"[target]  # <-\n{target_lines}\n{GOOD_OBSERVER}"


def _o(observer_lines: str) -> str:
    return f"{GOOD_TARGET}\n[observer]\n{observer_lines}\n"


CASES: list[Bad] = [
    Bad("bad-toml", GOOD_TARGET + 'profile = "stripe  # <-\n' + GOOD_OBSERVER, "target.profile"),
    Bad("duplicate-table", GOOD_TARGET + GOOD_OBSERVER + "[target]  # <-\n", "target"),
    Bad("not-utf8", GOOD_TARGET.encode() + b'account = "acct_\xff\xfe"  # <-\n' + GOOD_OBSERVER.encode(),
        "target.account"),
    Bad("empty-file", "# <- nothing here\n", "target"),
    Bad("missing-target", "# <-\n" + GOOD_OBSERVER, "target"),
    Bad("missing-observer", "# <-\n" + GOOD_TARGET, "observer"),
    Bad("missing-secret", _t('url = "http://127.0.0.1:9/webhooks"'), "target.secret"),
    Bad("missing-url-and-app", _t('secret = "whsec_x"'), "target"),
    Bad("both-url-and-app", _t('url = "http://127.0.0.1:9/w"\napp = "pkg.mod:app"\nsecret = "whsec_x"'), "target"),
    Bad("url-wrong-type", GOOD_OBSERVER + '\n[target]\nurl = 5  # <-\nsecret = "whsec_x"\n', "target.url"),
    Bad("url-not-http", GOOD_OBSERVER + '\n[target]\nurl = "ftp://host/x"  # <-\nsecret = "whsec_x"\n', "target.url"),
    Bad("url-port-not-a-number", GOOD_OBSERVER + '\n[target]\nurl = "http://127.0.0.1:abc/w"  # <-\nsecret = "s"\n',
        "target.url"),
    Bad("url-port-zero", GOOD_OBSERVER + '\n[target]\nurl = "http://127.0.0.1:0/w"  # <-\nsecret = "s"\n', "target.url"),
    Bad("url-blank-in-host", GOOD_OBSERVER + '\n[target]\nurl = "http://exa mple.com/w"  # <-\nsecret = "s"\n',
        "target.url"),
    Bad("start-health-url-bad-port", GOOD_TARGET + '[target.start]\ncommand = "x"\n'
        'health_url = "http://127.0.0.1:99999/healthz"  # <-\n' + GOOD_OBSERVER, "target.start.health_url"),
    Bad("observer-http-bad-port", _o('kind = "http"\nurl = "http://127.0.0.1:abc/effects"  # <-'), "observer.url"),
    Bad("app-not-a-spec", GOOD_OBSERVER + '\n[target]\napp = "not a spec"  # <-\nsecret = "whsec_x"\n', "target.app"),
    Bad("unknown-key", GOOD_TARGET + "retries = 3  # <-\n" + GOOD_OBSERVER, "target.retries"),
    Bad("unknown-section", GOOD_TARGET + GOOD_OBSERVER + "[bogus]  # <-\nx = 1\n", "bogus"),
    Bad("unknown-profile", GOOD_OBSERVER + '[target]\nurl = "http://127.0.0.1:9/w"\nprofile = "paypal"  # <-\n'
        'secret = "whsec_x"\n', "target.profile"),
    Bad("bad-environment", GOOD_TARGET + 'environment = "prod"  # <-\n' + GOOD_OBSERVER, "target.environment"),
    Bad("secret-wrong-type", GOOD_OBSERVER + '[target]\nurl = "http://127.0.0.1:9/w"\nsecret = 42  # <-\n',
        "target.secret"),
    Bad("secret-empty", GOOD_OBSERVER + '[target]\nurl = "http://127.0.0.1:9/w"\nsecret = ""  # <-\n',
        "target.secret"),
    Bad("secret-blank", GOOD_OBSERVER + '[target]\nurl = "http://127.0.0.1:9/w"\nsecret = "   "  # <-\n',
        "target.secret"),
    Bad("secret-blank-in-list", GOOD_OBSERVER + '[target]\nurl = "http://127.0.0.1:9/w"\nsecret = ["s", " "]  # <-\n',
        "target.secret"),
    Bad("secret-env-without-name", GOOD_OBSERVER + '[target]\nurl = "http://127.0.0.1:9/w"\nsecret = "env:"  # <-\n',
        "target.secret"),
    Bad("secret-file-without-path", GOOD_OBSERVER + '[target]\nurl = "http://127.0.0.1:9/w"\n'
        'secret = "file:"  # <-\n', "target.secret"),
    Bad("secret-env-blank", GOOD_OBSERVER + '[target]\nurl = "http://127.0.0.1:9/w"\n'
        'secret = "env:HOOKPROOF_TEST_BLANK"  # <-\n', "target.secret"),
    Bad("secret-file-unreadable", GOOD_OBSERVER + '[target]\nurl = "http://127.0.0.1:9/w"\n'
        'secret = "file:no/such/secret.txt"  # <-\n', "target.secret"),
    Bad("secret-env-unset", GOOD_OBSERVER + '[target]\nurl = "http://127.0.0.1:9/w"\n'
        'secret = "env:HOOKPROOF_TEST_SURELY_UNSET"  # <-\n', "target.secret"),
    Bad("unknown-enabled-event", GOOD_TARGET + 'enabled_events = ["nope.happened"]  # <-\n' + GOOD_OBSERVER,
        "target.enabled_events"),
    Bad("start-without-command", GOOD_TARGET + "[target.start]  # <-\nport = 8000\n" + GOOD_OBSERVER,
        "target.start.command"),
    Bad("start-negative-timeout", GOOD_TARGET + '[target.start]\ncommand = "x"\nstartup_timeout_s = -1  # <-\n'
        + GOOD_OBSERVER, "target.start.startup_timeout_s"),
    Bad("start-unclosed-quote", GOOD_TARGET + '[target.start]\ncommand = "python -m \'unterminated"  # <-\n'
        + GOOD_OBSERVER, "target.start.command"),
    Bad("start-unknown-placeholder", GOOD_TARGET + '[target.start]\ncommand = "run --url {url}"  # <-\n'
        + GOOD_OBSERVER, "target.start.command"),
    Bad("start-unpaired-brace", GOOD_TARGET + '[target.start]\ncommand = "run --port {port"  # <-\n'
        + GOOD_OBSERVER, "target.start.command"),
    Bad("start-blank-command", GOOD_TARGET + '[target.start]\ncommand = "   "  # <-\n' + GOOD_OBSERVER,
        "target.start.command"),
    Bad("start-cwd-missing", GOOD_TARGET + '[target.start]\ncommand = "x"\ncwd = "no/such/dir"  # <-\n'
        + GOOD_OBSERVER, "target.start.cwd"),
    Bad("process-unclosed-quote", GOOD_TARGET + '[target.process]\ncommand = "run --port {port} \'x"  # <-\n'
        + GOOD_OBSERVER, "target.process.command"),
    Bad("process-positional-placeholder", GOOD_TARGET + '[target.process]\ncommand = "run {port} {}"  # <-\n'
        + GOOD_OBSERVER, "target.process.command"),
    Bad("docker-unknown-placeholder", GOOD_TARGET + '[target.docker]\ncommand = "run {port} {secret}"  # <-\n'
        + GOOD_OBSERVER, "target.docker.command"),
    Bad("observer-python-bad-callable", _o('kind = "python"\ncallable = "my module:observe"  # <-'),
        "observer.callable"),
    Bad("observer-unknown-kind", _o('kind = "ftp"  # <-'), "observer.kind"),
    Bad("observer-sql-no-url", f"{GOOD_TARGET}\n[observer]  # <-\nkind = \"sql\"\neffects = \"SELECT 1\"\n", "observer"),
    Bad("observer-sql-bad-url", _o('kind = "sql"\nurl = "sqlite:/nope"  # <-\neffects = "SELECT 1"'), "observer.url"),
    Bad("observer-sql-unknown-dialect", _o('kind = "sql"\nurl = "nosuchdb://u@h/db"  # <-\neffects = "SELECT 1"'),
        "observer.url"),
    Bad("observer-http-no-url", f"{GOOD_TARGET}\n[observer]  # <-\nkind = \"http\"\n", "observer"),
    Bad("observer-python-no-callable", f"{GOOD_TARGET}\n[observer]  # <-\nkind = \"python\"\n", "observer"),
    Bad("observer-negative-timeout", GOOD_TARGET + GOOD_OBSERVER + "timeout_s = -5  # <-\n", "observer.timeout_s"),
    Bad("settle-negative-window", GOOD_TARGET + GOOD_OBSERVER + "[settle]\nwindow_s = -0.5  # <-\n",
        "settle.window_s"),
    Bad("settle-wrong-type", 'settle = "soon"  # <-\n' + GOOD_TARGET + GOOD_OBSERVER, "settle"),
    Bad("run-negative-sender-timeout", GOOD_TARGET + GOOD_OBSERVER + "[run]\nsender_timeout_s = -1  # <-\n",
        "run.sender_timeout_s"),
    Bad("run-infinite-sender-timeout", GOOD_TARGET + GOOD_OBSERVER + "[run]\nsender_timeout_s = inf  # <-\n",
        "run.sender_timeout_s"),
    Bad("run-huge-sender-timeout", GOOD_TARGET + GOOD_OBSERVER + "[run]\nsender_timeout_s = 1e300  # <-\n",
        "run.sender_timeout_s"),
    Bad("run-nan-time-scale", GOOD_TARGET + GOOD_OBSERVER + "[run]\ntime_scale = nan  # <-\n", "run.time_scale"),
    Bad("settle-infinite-deadline", GOOD_TARGET + GOOD_OBSERVER + "[settle]\ndeadline_s = inf  # <-\n",
        "settle.deadline_s"),
    Bad("settle-infinite-interval", GOOD_TARGET + GOOD_OBSERVER + "[settle]\ninterval_s = +inf  # <-\n",
        "settle.interval_s"),
    Bad("start-infinite-timeout", GOOD_TARGET + '[target.start]\ncommand = "x"\nstartup_timeout_s = inf  # <-\n'
        + GOOD_OBSERVER, "target.start.startup_timeout_s"),
    Bad("observer-infinite-timeout", GOOD_TARGET + GOOD_OBSERVER + "timeout_s = inf  # <-\n", "observer.timeout_s"),
    Bad("chaos-infinite-pause", GOOD_TARGET + GOOD_OBSERVER + "[chaos]\npause_s = inf  # <-\n", "chaos.pause_s"),
    Bad("run-unknown-scenario", GOOD_TARGET + GOOD_OBSERVER + '[run]\nscenarios = ["reorder", "nope"]  # <-\n',
        "run.scenarios"),
    Bad("run-burst-wrong-type", GOOD_TARGET + GOOD_OBSERVER + '[run]\nburst = "eight"  # <-\n', "run.burst"),
    Bad("run-time-scale-too-big", GOOD_TARGET + GOOD_OBSERVER + "[run]\ntime_scale = 2  # <-\n", "run.time_scale"),
    Bad("run-seed-float", GOOD_TARGET + GOOD_OBSERVER + "[run]\nseed = 1.5  # <-\n", "run.seed"),
    Bad("provider-port-out-of-range", GOOD_TARGET + GOOD_OBSERVER + "[provider]\nport = 70000  # <-\n",
        "provider.port"),
]


def _no_traceback(run: CliRun) -> str:
    assert run.returncode == 2, run
    assert not run.killed, run
    assert "Traceback" not in run.stdout + run.stderr, run
    return run.stderr


def _one_line_error(run: CliRun) -> str:
    lines = _no_traceback(run).strip().splitlines()
    assert len(lines) == 1, run
    assert lines[0].startswith("hookproof: "), run
    return lines[0]


@pytest.fixture(scope="module")
def config_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CliRun]:
    root = tmp_path_factory.mktemp("bad-configs")

    def one(case: Bad) -> CliRun:
        directory = root / case.id
        directory.mkdir()
        path = directory / "hookproof.toml"
        path.write_bytes(case.text if isinstance(case.text, bytes) else case.text.encode("utf-8"))
        return run_in_process("certify", "--config", str(path), "--out", str(directory / "out"), cwd=directory)

    return {c.id: one(c) for c in CASES}


def test_the_table_is_big_enough() -> None:
    assert len(CASES) >= 25 and len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_load_config_names_field_and_line(tmp_path, monkeypatch, case: Bad) -> None:
    """The same table in-process (fast), read as certify reads it (`terminal.load`, which also
    asks for the [observer] `send` does without): one ConfigError, with the field and the line."""
    from hookproof.errors import ConfigError
    from hookproof.terminal import load

    monkeypatch.delenv("HOOKPROOF_TEST_SURELY_UNSET", raising=False)
    monkeypatch.setenv("HOOKPROOF_TEST_BLANK", "  ")
    path = tmp_path / "hookproof.toml"
    path.write_bytes(case.text if isinstance(case.text, bytes) else case.text.encode("utf-8"))
    with pytest.raises(ConfigError) as info:
        load(path)
    assert (info.value.field, info.value.line) == (case.field, case.line), str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_bad_config_gets_one_line_naming_field_and_line(config_runs, case: Bad) -> None:
    line = _one_line_error(config_runs[case.id])
    assert f"hookproof.toml:{case.line}: " in line, line
    assert f" {case.field}: " in line, line
    assert not (Path(config_runs[case.id].args[4]) / "report.json").exists()


@dataclass(frozen=True)
class BadFlags:
    id: str
    args: tuple[str, ...]
    names: str  # what the one line must mention


FLAG_CASES: list[BadFlags] = [
    BadFlags("send-unknown-flag", ("send", "--url", "http://127.0.0.1:9/w", "--secret", "s", "--bogus"), "--bogus"),
    BadFlags("send-missing-url", ("send", "--secret", "s"), "--url"),
    BadFlags("send-bad-url", ("send", "--url", "not a url", "--secret", "s"), "--url"),
    BadFlags("send-url-port-not-a-number", ("send", "--url", "http://127.0.0.1:abc/w", "--secret", "s"), "--url"),
    BadFlags("send-url-port-zero", ("send", "--url", "http://127.0.0.1:0/w", "--secret", "s"), "--url"),
    BadFlags("send-url-port-too-big", ("send", "--url", "http://127.0.0.1:99999/w", "--secret", "s"), "--url"),
    BadFlags("send-bad-copies", ("send", "--url", "http://127.0.0.1:9/w", "--secret", "s", "--copies", "many"),
             "--copies"),
    BadFlags("send-zero-copies", ("send", "--url", "http://127.0.0.1:9/w", "--secret", "s", "--copies", "0"),
             "--copies"),
    BadFlags("send-negative-timeout", ("send", "--url", "http://127.0.0.1:9/w", "--secret", "s",
                                       "--sender-timeout", "-1"), "--sender-timeout"),
    BadFlags("send-infinite-timeout", ("send", "--url", "http://127.0.0.1:9/w", "--secret", "s",
                                       "--sender-timeout", "inf"), "--sender-timeout"),
    BadFlags("send-nan-timeout", ("send", "--url", "http://127.0.0.1:9/w", "--secret", "s",
                                  "--sender-timeout", "nan"), "--sender-timeout"),
    BadFlags("send-unknown-profile", ("send", "--url", "http://127.0.0.1:9/w", "--secret", "s", "--profile", "paypal"),
             "--profile"),
    BadFlags("send-unknown-event", ("send", "--url", "http://127.0.0.1:9/w", "--secret", "s", "--event", "no.such"),
             "--event"),
    BadFlags("send-unset-env-secret", ("send", "--url", "http://127.0.0.1:9/w", "--secret",
                                       "env:HOOKPROOF_TEST_SURELY_UNSET"), "--secret"),
    BadFlags("send-blank-secret", ("send", "--url", "http://127.0.0.1:9/w", "--secret", "   "),
             "--secret: the secret is empty or blank"),
    BadFlags("send-env-secret-without-name", ("send", "--url", "http://127.0.0.1:9/w", "--secret", "env:"),
             "--secret: the environment variable's name is missing"),
    BadFlags("send-file-secret-without-path", ("send", "--url", "http://127.0.0.1:9/w", "--secret", "file:"),
             "--secret: the secret file's path is missing"),
    BadFlags("send-blank-env-secret", ("send", "--url", "http://127.0.0.1:9/w", "--secret", "env:HOOKPROOF_TEST_BLANK"),
             "--secret: environment variable HOOKPROOF_TEST_BLANK is not set or empty"),
    BadFlags("send-unreadable-secret-file", ("send", "--url", "http://127.0.0.1:9/w", "--secret",
                                             "file:/no/such/secret"), "--secret"),
    BadFlags("certify-unknown-flag", ("certify", "--frobnicate"), "--frobnicate"),
    BadFlags("certify-missing-config", ("certify", "--config", "no/such/hookproof.toml"), "no config file"),
    BadFlags("certify-unknown-scenario", ("certify", "--config", "GOOD", "--scenario", "nope"), "--scenario"),
    BadFlags("certify-misspelt-scenario", ("certify", "--config", "GOOD", "dupicate-sequential"),
             "--scenario: unknown scenario id 'dupicate-sequential' (did you mean duplicate-sequential or "
             "duplicate-concurrent? see 'hookproof scenarios')"),
    BadFlags("certify-remote-target", ("certify", "--config", "REMOTE"), "--allow-remote"),
    BadFlags("init-unknown-flag", ("init", "--bogus"), "--bogus"),
    BadFlags("init-existing-file", ("init", "GOOD"), "--force"),
    BadFlags("serve-bad-port", ("serve", "--port", "99999"), "--port"),
    BadFlags("serve-port-not-a-number", ("serve", "--port", "http"), "--port"),
    BadFlags("serve-host-not-here", ("serve", "--host", "8.8.8.8", "--port", "0"), "cannot listen on 8.8.8.8:0: "),
    BadFlags("serve-host-unknown", ("serve", "--host", "no-such-host.invalid"), "cannot listen on no-such-host.invalid"),
    BadFlags("serve-unknown-flag", ("serve", "--bogus"), "--bogus"),
    BadFlags("report-missing-history", ("report", "--history", "no/such/history.sqlite"), "--history"),
    BadFlags("report-not-a-history", ("report", "--history", "GOOD"), "--history"),
    BadFlags("unknown-command", ("frobnicate",), "frobnicate"),
]


@pytest.fixture(scope="module")
def flag_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CliRun]:
    root = tmp_path_factory.mktemp("bad-flags")
    good = root / "hookproof.toml"
    good.write_text(GOOD_TARGET + GOOD_OBSERVER, encoding="utf-8")
    remote = root / "remote.toml"
    remote.write_text(GOOD_TARGET.replace("127.0.0.1:9", "hooks.example.com") + GOOD_OBSERVER, encoding="utf-8")

    def one(case: BadFlags) -> CliRun:
        args = tuple(str(good) if a == "GOOD" else str(remote) if a == "REMOTE" else a for a in case.args)
        return run_in_process(*args, cwd=root)

    return {c.id: one(c) for c in FLAG_CASES}


@pytest.mark.parametrize("case", FLAG_CASES, ids=lambda c: c.id)
def test_a_bad_flag_gets_exit_2_no_traceback_and_names_it(flag_runs, case: BadFlags) -> None:
    line = _one_line_error(flag_runs[case.id])
    assert case.names in line, line


@pytest.mark.parametrize("case_id", ["send-unknown-flag", "certify-unknown-scenario", "unknown-command"])
def test_the_installed_command_says_the_same_in_a_subprocess(flag_runs, tmp_path: Path, case_id: str) -> None:
    """The in-process runs above stand for the real command: a few of them, as subprocesses."""
    (case,) = [c for c in FLAG_CASES if c.id == case_id]
    good = tmp_path / "hookproof.toml"
    good.write_text(GOOD_TARGET + GOOD_OBSERVER, encoding="utf-8")
    args = tuple(str(good) if a == "GOOD" else a for a in case.args)
    line = _one_line_error(run_hookproof(*args, timeout_s=60, env=CASE_ENV, cwd=tmp_path))
    assert case.names in line and case.names in _one_line_error(flag_runs[case_id]), line


@pytest.mark.slow
def test_an_import_failing_at_run_time_names_the_file_and_line(tmp_path: Path) -> None:
    """target.app is imported when certify runs, not at load: its error still says where."""
    path = tmp_path / "hookproof.toml"
    path.write_text(GOOD_OBSERVER + '[target]\nsecret = "whsec_x"\napp = "no_such_module_here:app"\n', encoding="utf-8")
    line = _one_line_error(run_hookproof("certify", "--config", str(path), "--out", str(tmp_path / "out"),
                                         timeout_s=60, cwd=tmp_path))
    assert "hookproof.toml:7: target.app: cannot import 'no_such_module_here:app'" in line, line
    assert not (tmp_path / "out").exists()  # nothing half-written


@pytest.mark.slow
def test_serve_on_a_busy_port_is_one_line_and_no_success_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        run = run_hookproof("serve", "--port", str(port), timeout_s=60, cwd=tmp_path)
    line = _one_line_error(run)
    assert line.startswith(f"hookproof: cannot listen on 127.0.0.1:{port}: "), line
    assert "provider API at" not in run.stdout, run


@pytest.mark.parametrize(("observer", "line", "said"), [
    ('effect = "SELECT business_key FROM effects"', 8, "observer.effect: unknown key (did you mean effects?)"),
    ('effects = "SELECT business_key FROM effects"\nstate_feilds = {}', 9,
     "observer.state_feilds: unknown key (did you mean state_fields?)"),
    ('effects = "SELECT business_key FROM effects"\nzzz = 1', 9, "observer.zzz: unknown key"),
])
def test_an_unknown_key_close_to_one_its_table_has_says_which(tmp_path: Path, observer: str, line: int,
                                                              said: str) -> None:
    """A new user wrote ``effect =``: the error names the key it likely meant."""
    from hookproof.config import load_config
    from hookproof.errors import ConfigError

    path = tmp_path / "hookproof.toml"
    path.write_text('[target]\nurl = "http://127.0.0.1:9/webhooks"\nsecret = "whsec_x"\n\n'
                    f'[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\n{observer}\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}:{line}: {said}"


def test_a_docker_target_without_the_docker_sdk_is_one_line_naming_the_chaos_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The container image installed the load and postgres extras only: `[target.docker]` died
    with a 44-line ModuleNotFoundError traceback, exit 1. Now one line naming the chaos extra, exit 2."""
    import sys

    monkeypatch.setitem(sys.modules, "docker", None)  # `import docker` raises ImportError, as where it is absent
    path = tmp_path / "hookproof.toml"
    path.write_text(GOOD_TARGET + '[target.docker]\nimage = "receiver:latest"\ncommand = "serve --port {port}"\n'
                    + GOOD_OBSERVER, encoding="utf-8")
    run = run_in_process("certify", "--config", str(path), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert run.returncode == 2, run
    assert _one_line_error(run) == (f"hookproof: {path}:5: target.docker: a receiver in a container is started "
                                    "through the docker SDK, which hookproof installs with its chaos extra: "
                                    "pip install 'hookproof[chaos]'")
    assert not (tmp_path / "out").exists()  # nothing half-written
