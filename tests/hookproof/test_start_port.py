"""`{port}` in `[target.start]`: in its command, `health_url` and `env` values, as README says;
the port is `target.url`'s (a free one per run for ``{port}``, else the one it names)."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlsplit

from hookproof.certify import with_port
from hookproof.config import load_config
from tests.hookproof.test_bad_input import run_in_process
from tests.hostile.harness import run_hookproof

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_start_port_tests_only"
OBSERVER = '[observer]\nkind = "sql"\nurl = "sqlite:///r.sqlite"\neffects = "SELECT business_key, amount FROM effects"\n'


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "start.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _target(url: str, start: str) -> str:
    return f'[target]\nurl = "{url}"\nprofile = "stripe"\nsecret = "{SECRET}"\n\n[target.start]\n{start}\n' + OBSERVER


def test_a_port_placeholder_in_health_url_and_env_gets_the_runs_port(tmp_path: Path) -> None:
    cfg = with_port(load_config(_write(tmp_path, _target(
        "http://127.0.0.1:{port}/webhooks",
        'command = "serve --port {port}"\nhealth_url = "http://127.0.0.1:{port}/healthz"\n'
        'env = { PORT = "{port}" }'))))
    port = urlsplit(cfg.target.url).port
    assert cfg.target.start is not None and cfg.target.start.port == port
    assert cfg.target.start.health_url_at() == f"http://127.0.0.1:{port}/healthz"


def test_a_url_naming_its_port_gives_it_to_the_start_placeholders(tmp_path: Path) -> None:
    cfg = with_port(load_config(_write(tmp_path, _target(
        "http://127.0.0.1:8123/webhooks", 'command = "serve --port {port}"\nhealth_url = "http://127.0.0.1:{port}/ok"'))))
    assert cfg.target.start is not None and cfg.target.start.health_url_at() == "http://127.0.0.1:8123/ok"


def test_a_port_placeholder_with_no_port_to_fill_in_is_one_line(tmp_path: Path) -> None:
    _write(tmp_path, _target("http://localhost/webhooks", 'command = "serve --port {port}"'))
    run = run_in_process("certify", "-c", "start.toml", cwd=tmp_path)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.splitlines() == [
        "hookproof: start.toml:6: target.start: it says {port}, but no port is known: write {port} in target.url "
        "(a free port per run), name the port in target.url, or give target.start.port"]


def test_health_path_under_target_start_names_what_it_is_called_there(tmp_path: Path) -> None:
    _write(tmp_path, _target("http://127.0.0.1:{port}/webhooks", 'command = "serve {port}"\nhealth_path = "/healthz"'))
    run = run_in_process("certify", "-c", "start.toml", cwd=tmp_path)
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.splitlines() == [
        'hookproof: start.toml:8: target.start.health_path: unknown key ([target.start] waits on a whole URL: '
        'health_url = "http://127.0.0.1:{port}/healthz")']


def test_certify_starts_a_receiver_waiting_on_a_health_url_with_the_port(tmp_path: Path) -> None:
    db = tmp_path / "r.sqlite"
    command = (f"{sys.executable} -m examples.receivers.inbox_sync --port {{port}} --db sqlite:///{db} "
               f"--secret {SECRET}")
    _write(tmp_path, _target("http://127.0.0.1:{port}/webhooks",
                             f'command = "{command}"\nhealth_url = "http://127.0.0.1:{{port}}/healthz"\n'
                             f'cwd = "{ROOT}"\nstartup_timeout_s = 60'))
    run = run_hookproof("certify", "-c", "start.toml", "--scenario", "duplicate-sequential", "--out", "out",
                        cwd=tmp_path, timeout_s=180)
    assert run.returncode == 0, run
    assert "verdict: PASS" in run.stdout
