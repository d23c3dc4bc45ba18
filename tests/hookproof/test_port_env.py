"""A receiver that listens on ``PORT`` from its environment (Node, Go, Ruby apps) needs no
``{port}`` in its command: every receiver hookproof starts gets its port as ``PORT``."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import httpx
import pytest

from hookproof.certify import started_receiver, with_port
from hookproof.chaos.nemesis import process_factory
from hookproof.config import load_config

#: A receiver reading only PORT: answers every GET with the port it listens on.
SERVER = ("import http.server, os\n"
          "class H(http.server.BaseHTTPRequestHandler):\n"
          "    def do_GET(self):\n"
          "        body = os.environ['PORT'].encode()\n"
          "        self.send_response(200); self.send_header('Content-Length', str(len(body))); self.end_headers()\n"
          "        self.wfile.write(body)\n"
          "    def log_message(self, *a): pass\n"
          "http.server.HTTPServer(('127.0.0.1', int(os.environ['PORT'])), H).serve_forever()\n")


def _command(tmp_path: Path) -> str:
    (tmp_path / "server.py").write_text(SERVER, encoding="utf-8")
    return f"{shlex.quote(sys.executable)} server.py"


@pytest.mark.parametrize("table", ["process", "start"])
def test_a_receiver_reading_port_starts_without_port_in_its_command(tmp_path: Path, table: str) -> None:
    path = tmp_path / "hookproof.toml"
    path.write_text(f'[target]\nurl = "http://127.0.0.1:{{port}}/webhooks"\nprofile = "stripe"\n'
                    f'secret = "whsec_port_env_test"\n[target.{table}]\ncommand = "{_command(tmp_path)}"\n'
                    '[observer]\nkind = "sql"\nurl = "sqlite:///observed.sqlite"\n'
                    'effects = "SELECT business_key FROM effects"\n', encoding="utf-8")
    config = with_port(load_config(path))
    assert config.target.url is not None
    port = httpx.URL(config.target.url).port
    with started_receiver(config, ["whsec_port_env_test"], "http://127.0.0.1:1", "http://127.0.0.1:1"):
        assert httpx.get(f"http://127.0.0.1:{port}/").text == str(port)


def test_each_copy_gets_its_own_port_over_the_config_s_env(tmp_path: Path) -> None:
    """Replicas (certify --chaos) listen on other ports: PORT is each copy's, not an env value's."""
    from hookproof.simulator.serving import free_port

    make = process_factory(_command(tmp_path), health_path=None, env={"PORT": "1"}, cwd=tmp_path)
    ports = [free_port(), free_port()]
    copies = [make(p) for p in ports]
    try:
        for copy in copies:
            copy.start()
        assert [httpx.get(f"http://127.0.0.1:{p}/").text for p in ports] == [str(p) for p in ports]
    finally:
        for copy in copies:
            copy.stop()
