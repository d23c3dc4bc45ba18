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


def update_numbers(seed: int, actions: list[tuple[str, int | None]]) -> list[int]:
    """The numbers of the ``customer.subscription.updated`` events `actions` emit, oldest first, in
    the world of `seed` told every Stripe type, as a replay of a config without ``enabled_events``
    tells it (an invoice's payment's own events beside its invoice's among them): a schedule's
    steps find their events by type rather than by a number that moves with the world."""
    from hookproof.scenarios.world_ops import apply_action
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.world import World

    world = World(seed)
    stripe = get_profile("stripe")
    world.sent_only(lambda t: stripe.provider_type(t) is not None)
    for action, index in actions:
        apply_action(world, action, index)
    return [i for i, e in enumerate(world.events) if e.type == "customer.subscription.updated"]
