"""The config that `hookproof replay` (and explore) tests start a reference subscription receiver
with: a process on `{port}` fetching from the provider API at `{api_base}`, its SQLite file read
by an ``sql`` observer whose state query has no version column."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def subscription_config(tmp_path: Path, receiver: str, secret: str) -> Path:
    """`tmp_path/<receiver>.toml`, starting `examples.receivers.<receiver>` over `<receiver>.sqlite`."""
    db = tmp_path / f"{receiver}.sqlite"
    path = tmp_path / f"{receiver}.toml"
    path.write_text(f"""\
[target]
url = "http://127.0.0.1:{{port}}/webhooks"
profile = "stripe"
secret = "{secret}"

[target.process]
command = "{sys.executable} -m examples.receivers.{receiver} --port {{port}} --db sqlite:///{db} --api-base {{api_base}}"
env = {{ WEBHOOK_SECRET = "{{secret}}", PROVIDER_API_KEY = "{{api_key}}" }}
health_path = "/healthz"
cwd = "{ROOT}"

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key FROM effects"

[observer.states]
subscription = "SELECT object_id, status FROM subscription_states"
""", encoding="utf-8")
    return path
