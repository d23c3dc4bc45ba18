"""Front-door usability: where relative SQLite paths point, what Ctrl-C during `send`
says, that a failed run prints its one error line and nothing else, and that the
pytest plugin reports an unreachable receiver as one line, not a traceback."""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import socket
import sqlite3
import sys
import threading
import time
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.hostile.harness import ROOT, child_env, on_a_terminal, run_hookproof
from tests.support import free_port, run_interrupted

pytest_plugins = ["pytester"]

TARGET = """[target]
url = "http://127.0.0.1:{port}/webhooks"
profile = "stripe"
secret = "whsec_usability_test"
"""
OBSERVER = """[observer]
kind = "sql"
url = "{url}"
effects = "SELECT business_key FROM effects"
"""




def _write(directory: Path, *, port: int = 9, url: str = "sqlite:///receiver.db") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "hookproof.toml"
    path.write_text(TARGET.format(port=port) + "\n" + OBSERVER.format(url=url), encoding="utf-8")
    return path


# ---- 1. observer.url: a relative SQLite file is relative to the config file -------------

def test_a_relative_sqlite_url_is_relative_to_the_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hookproof.certify import make_observer
    from hookproof.config import load_config

    path = _write(tmp_path / "project")
    with sqlite3.connect(tmp_path / "project" / "receiver.db") as db:
        db.execute("CREATE TABLE effects (business_key TEXT)")
        db.execute("INSERT INTO effects VALUES ('license:pi_1')")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load_config(Path("..") / "project" / "hookproof.toml")
    assert config.observer.url == f"sqlite:///{tmp_path / 'project' / 'receiver.db'}"
    observation = make_observer(config, None)()
    assert [e.business_key for e in observation.effects] == ["license:pi_1"]
    assert not (elsewhere / "receiver.db").exists() and path.exists()


@pytest.mark.parametrize("url", [
    "sqlite://",
    "sqlite:///:memory:",
    "sqlite:////var/data/receiver.db",
    "postgresql+psycopg://hookproof:s3cret@127.0.0.1:5432/receiver",
], ids=["memory", "memory-named", "absolute", "postgres"])
def test_other_observer_urls_are_kept(tmp_path: Path, url: str) -> None:
    if url.startswith("postgresql"):
        pytest.importorskip("psycopg")
    from hookproof.config import load_config

    assert load_config(_write(tmp_path, url=url)).observer.url == url


def test_a_missing_database_is_named_by_its_resolved_path(tmp_path: Path) -> None:
    """One line, naming the file the observer tried (the config's directory), not the URL as written."""
    with socket.socket() as listener:  # something listens at target.url: the observer is what fails
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        path = _write(tmp_path / "project", port=listener.getsockname()[1])
        run = run_hookproof("certify", "--config", str(path), "--out", str(tmp_path / "out"), timeout_s=60,
                            cwd=tmp_path)
    assert run.returncode == 2, run
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run
    assert lines[0].startswith("hookproof: ") and "observer" in lines[0], run
    assert str(tmp_path / "project" / "receiver.db") in lines[0], run


# ---- 2. Ctrl-C during send ----------------------------------------------------------------

def test_send_interrupted_says_so_in_one_line(tmp_path: Path) -> None:
    """A receiver that never answers; Ctrl-C once the first delivery arrived: exit 130, one line."""
    arrived = threading.Event()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        port = listener.getsockname()[1]
        held: list[socket.socket] = []

        def accept() -> None:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)
            arrived.set()

        threading.Thread(target=accept, daemon=True).start()

        def under_way(proc: object) -> None:
            assert arrived.wait(30), "the delivery never arrived"
            time.sleep(0.3)

        run = run_interrupted([sys.executable, "-m", "hookproof.cli", "send", "--url",
                               f"http://127.0.0.1:{port}/webhooks", "--secret", "whsec_x", "--copies", "2"],
                              signal.SIGINT, cwd=ROOT, env=child_env(), under_way=under_way, timeout_s=30)
        for conn in held:
            conn.close()
    assert run.returncode == 130, run
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run
    assert lines[0].startswith("hookproof: send interrupted; ") and lines[0].endswith(" attempt(s) made"), run
    assert "Traceback" not in run.stdout + run.stderr, run


# ---- 3. a failed run prints its error line and nothing else --------------------------------

def test_certify_against_an_unreachable_receiver_prints_exactly_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path, port=free_port())
    run = run_hookproof("certify", "--config", str(path), "--out", str(tmp_path / "out"), timeout_s=60, cwd=tmp_path,)
    assert run.returncode == 2, run
    assert run.stderr.splitlines() == [run.stderr.strip()], run  # no blank line left by the progress display
    assert run.stderr.startswith("hookproof: ") and "target.url: cannot reach" in run.stderr, run


# ---- 4. the pytest plugin and an unreachable receiver ---------------------------------------

def test_the_plugin_reports_an_unreachable_receiver_in_one_line(pytester: pytest.Pytester) -> None:
    project = ROOT / "examples" / "pytest_project"
    for name in ("pytest.ini", "receiver_app.py", "test_webhooks.py"):
        shutil.copy(project / name, pytester.path / name)
    port = free_port()
    (pytester.path / "hookproof.toml").write_text(
        f'[target]\nurl = "http://127.0.0.1:{port}/webhooks"\nprofile = "stripe"\nsecret = "whsec_x"\n\n'
        '[observer]\nkind = "python"\ncallable = "receiver_app:observe"\n', encoding="utf-8")
    args = ["-p", "no:locust", "-p", "no:cacheprovider", "-q"]
    if not any(ep.name == "hookproof" for ep in entry_points(group="pytest11")):
        args += ["-p", "hookproof.pytest_plugin"]
    result = pytester.runpytest_subprocess(*args, timeout=120)
    result.assert_outcomes(errors=2)
    output = result.stdout.str()
    assert f"hookproof.toml:2: target.url: cannot reach 127.0.0.1:{port}" in output, output
    assert "Traceback" not in output and "ConfigError" not in output, output
    assert "During handling" not in output, output
    assert "hookproof/commands/explore.py" not in output, output


# ---- send: an HTML error page in one line; progress while it runs ---------------------

ERROR_PAGE = ("<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head>\n"
              "<body><h1>Internal Server Error</h1><pre>Traceback (most recent call last): ...</pre></body></html>\n")


def test_send_shows_a_500_page_s_status_and_first_line_and_json_has_it_all(tmp_path: Path) -> None:
    import json

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    from hookproof.simulator.serving import serve_app

    async def hook(request: Request) -> HTMLResponse:
        await request.body()
        return HTMLResponse(ERROR_PAGE, status_code=500)

    with serve_app(Starlette(routes=[Route("/webhooks", hook, methods=["POST"])])) as served:
        args = ("send", "--url", served.url + "/webhooks", "--secret", "whsec_usability_test", "--profile", "github")
        table = run_hookproof(*args, timeout_s=60)
        as_json = run_hookproof(*args, "--json", timeout_s=60)
    assert table.returncode == 1 and as_json.returncode == 1, table
    assert "500" in table.stdout and "<!DOCTYPE html>" in table.stdout, table
    assert "Internal Server Error</h1>" not in table.stdout and "Traceback" not in table.stdout, table
    (attempt,) = json.loads(as_json.stdout)  # github: one attempt, no retries
    assert attempt["status"] == 500 and attempt["response_excerpt"] == ERROR_PAGE


def test_send_off_a_terminal_prints_a_heartbeat_line(tmp_path: Path) -> None:
    from tests.hostile.servers import hostile_server

    with hostile_server("silent") as server:
        run = run_hookproof("send", "--url", server.url, "--secret", "whsec_usability_test", "--profile", "shopify",
                            "--sender-timeout", "0.4", timeout_s=120, env={"HOOKPROOF_HEARTBEAT_S": "0.5"})
    assert run.returncode == 1, run
    beats = [line for line in run.stderr.splitlines() if line.startswith("send: ")]
    assert beats and all(re_beat(line) for line in beats), run


def re_beat(line: str) -> bool:
    import re

    return re.fullmatch(r"send: \d+ attempt\(s\) so far, 0 acknowledged, \d+ s", line) is not None


# ---- starting a receiver: {port}, TCP readiness, env from hookproof's values ------------

def _process_config(directory: Path) -> Path:
    db = directory / "receiver.sqlite"
    path = directory / "hookproof.toml"
    path.write_text(f"""[target]
url = "http://127.0.0.1:{{port}}/webhooks"
profile = "stripe"
secret = "whsec_process_usability"

[target.process]
command = "{sys.executable} -m hookproof.receivers.inbox_sync --port {{port}} --db sqlite:///{db}"
env = {{ WEBHOOK_SECRET = "{{secret}}", RECEIVER_API = "{{api_base}}/v1" }}

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key, amount FROM effects"

[run]
seed = 3
""", encoding="utf-8")
    return path


def test_certify_and_explore_start_a_process_receiver_on_a_free_port(tmp_path: Path) -> None:
    """One config for both: {port} picked per run, ready when the port accepts (no health
    path), the secret handed over under the receiver's own variable name."""
    import json

    config = _process_config(tmp_path)
    certify = run_hookproof("certify", "-c", str(config), "duplicate-sequential", "--out", str(tmp_path / "c"),
                            timeout_s=180, cwd=tmp_path)
    assert certify.returncode == 0, certify
    report = json.loads((tmp_path / "c" / "report.json").read_text(encoding="utf-8"))
    assert report["target"].startswith("http://127.0.0.1:") and "{port}" not in report["target"]
    assert report["config"] == str(config)  # which of a team's configs made the run
    assert f"config `{config}`" in (tmp_path / "c" / "summary.md").read_text(encoding="utf-8")
    explore = run_hookproof("explore", "-c", str(config), "--max-examples", "3", "--repeats", "2", "--out",
                            str(tmp_path / "e"), timeout_s=240, cwd=tmp_path)
    assert explore.returncode == 0, explore
    assert "Traceback" not in explore.stdout + explore.stderr
    assert json.loads((tmp_path / "e" / "report.json").read_text(encoding="utf-8"))["config"] == str(config)


def test_env_values_name_hookproof_s_values_and_port_is_free_per_run(tmp_path: Path) -> None:
    from hookproof.certify import expand_env, with_port
    from hookproof.config import load_config

    values = {"secret": "whsec_s", "api_base": "http://127.0.0.1:5", "sink_url": "http://127.0.0.1:5/sink",
              "api_key": "sk_test_k", "port": "8123"}
    env = {"STRIPE_WEBHOOK_SECRET": "{secret}", "STRIPE_API_BASE": "{api_base}", "JSON": '{"a": {port}}',
           "OTHER": "{unknown}"}
    assert expand_env(env, values) == {"STRIPE_WEBHOOK_SECRET": "whsec_s", "STRIPE_API_BASE": "http://127.0.0.1:5",
                                       "JSON": '{"a": 8123}', "OTHER": "{unknown}"}
    cfg = load_config(_process_config(tmp_path))
    assert cfg.target.url == "http://127.0.0.1:{port}/webhooks" and cfg.target.process is not None
    assert cfg.target.process.health_path is None  # TCP readiness unless a path is given
    first, second = with_port(cfg).target.url, with_port(cfg).target.url
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/webhooks", first or "") and first != second


def test_serve_shows_the_api_base_with_v1_and_stripe_python_takes_it_without(tmp_path: Path) -> None:
    """One form of the API base: `{api_base}` (and HOOKPROOF_API_BASE) is scheme, host and port;
    `hookproof serve` shows it followed by /v1, and stripe-python given the base without /v1 reaches it."""
    import select
    import subprocess

    import stripe

    from hookproof.simulator.server.runner import StartingServer
    from hookproof.simulator.server.state import ServerState

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "hookproof", "serve", "--port", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=child_env(), cwd=tmp_path)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, "hookproof serve printed nothing within 60 s"
        line = proc.stdout.readline()
        found = re.match(r"hookproof provider API at (http://127\.0\.0\.1:(\d+))/v1 \(key (\S+)\), ", line)
        assert found and int(found.group(2)) == port, line
        base, key = found.group(1), found.group(3)
        client = stripe.StripeClient(key, base_addresses={"api": base}, max_network_retries=0)
        deadline = time.monotonic() + 30
        while True:  # the socket is bound before the line; the app may still be starting
            try:
                customers = client.customers.list()
                break
            except stripe.APIConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        assert customers.object == "list"
    finally:
        proc.terminate()
        proc.wait(10)
    with StartingServer(ServerState()) as starting:  # what a started receiver's {api_base} is
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", starting.api_base), starting.api_base


def test_port_placeholder_needs_a_receiver_hookproof_starts(tmp_path: Path) -> None:
    path = tmp_path / "hookproof.toml"
    path.write_text(TARGET.replace("{port}", "{{port}}").format(port=0) + "\n" + OBSERVER.format(url="sqlite:///r.db"),
                    encoding="utf-8")
    run = run_hookproof("certify", "-c", str(path), timeout_s=60, cwd=tmp_path)
    assert run.returncode == 2 and "{port} (a free port per run) needs a receiver hookproof starts" in run.stderr, run


def test_send_on_a_terminal_shows_each_attempt_as_it_ends(tmp_path: Path) -> None:
    """Under a pseudo-terminal, one line per attempt while the retries go on (shopify: 9 attempts)."""
    from tests.hostile.servers import hostile_server

    with hostile_server("silent") as server:
        code, text = on_a_terminal(["send", "--url", server.url, "--secret", "whsec_usability_test", "--profile",
                                     "shopify", "--sender-timeout", "0.3"], tmp_path)
    text = text.replace("\r", "")
    tries = re.findall(r"^send: orders/paid \S+ try (\d+): - timeout \(unknown\) in \d+ ms: ", text,
                       flags=re.M)
    assert code == 1, text[-3000:]
    assert [int(t) for t in tries] == list(range(1, 10)), text[-3000:]


def test_certify_on_a_terminal_shows_the_scenario_and_the_attempts_so_far(tmp_path: Path) -> None:
    """Live progress under a pseudo-terminal: which scenario of how many, and the attempts made so far."""
    import sqlite3

    from tests.hostile.servers import hostile_server

    with contextlib.closing(sqlite3.connect(tmp_path / "r.db")) as db:  # the receiver's (empty) effects table
        db.execute("CREATE TABLE effects (business_key TEXT)")
    with hostile_server("silent") as server:
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        path = tmp_path / "hookproof.toml"
        path.write_text(TARGET.format(port=port) + "\n" + OBSERVER.format(url=f"sqlite:///{tmp_path / 'r.db'}")
                        + "\n[run]\nsender_timeout_s = 0.3\n", encoding="utf-8")
        # The silent receiver never answers, so the run ends at its deadline; the live line
        # redraws every 0.5 s from the first attempt on, so 8 s show it many times over.
        code, text = on_a_terminal(["certify", "-c", str(path), "duplicate-sequential", "reorder",
                                     "--max-duration", "8s"], tmp_path)
    text = text.replace("\r", "\n")
    assert code == 1, text[-3000:]
    assert re.search(r"certify: 0/2 scenario\(s\) done, running duplicate-sequential, \d+ attempt\(s\) so far", text), text[-3000:]

