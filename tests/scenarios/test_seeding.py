"""`[target.seed]`: each scenario's world objects reach the team's code before the first delivery.

A receiver that refuses events about customers it has no row for (`known_customers`) fails
certification without the seed and passes with it; a failing seed makes the scenario
unknown with one line naming what failed (the secret masked); the document carries the
world's objects in Stripe's shape at the receiver's API version, as the provider API
serves them before the first delivery.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from hookproof.certify import certify, seed_hook
from hookproof.config import load_config, parse_config
from hookproof.errors import ConfigError
from hookproof.scenarios.seeding import REASON_CHARS, SeedHook, run_seed, seed_document
from hookproof.simulator.server import clock
from hookproof.simulator.world import WORLDS, World, emit_events, new_world, world_event_types

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_seeding_test_0123456789"
SCENARIOS = ["duplicate-sequential", "reorder"]


def _config(tmp_path: Path, seed: str = "", extra_target: str = "") -> Path:
    db = tmp_path / "shop.sqlite"
    path = tmp_path / "hookproof.toml"
    path.write_text(f"""
[target]
app = "tests.scenarios.known_customers:app"
profile = "stripe"
secret = "{SECRET}"
{extra_target}
{seed}

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key FROM effects"
state = "SELECT object_id, status, version FROM subscription_states"

[run]
seed = 7
""", encoding="utf-8")
    return path


@pytest.fixture()
def shop_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    db = tmp_path / "shop.sqlite"
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db}")
    monkeypatch.setenv("WEBHOOK_SECRET", SECRET)
    monkeypatch.syspath_prepend(str(ROOT))
    from hookproof.receivers import Store

    Store(f"sqlite:///{db}").dispose()  # the receiver's tables exist before the observer's first read
    return tmp_path


SEED_COMMAND = f'[target.seed]\ncommand = "{sys.executable} -m tests.scenarios.known_customers"\ncwd = "{ROOT}"\n'


def _verdicts(config: Path, out: Path) -> dict[str, tuple[str, str | None]]:
    result = certify(load_config(config), scenarios=SCENARIOS, out_dir=out)
    return {s.id: (s.verdict, s.reason) for s in result.report.scenarios}


def test_a_receiver_that_needs_its_customers_fails_without_the_seed(shop_env: Path) -> None:
    result = certify(load_config(_config(shop_env)), scenarios=SCENARIOS, out_dir=shop_env / "out")
    by_id = {s.id: s for s in result.report.scenarios}
    # every valid delivery of the first scenario refused with 400 over several types, nothing acknowledged:
    # the run stops there, as with a wrong secret (the headline quotes the receiver's answer)
    assert {i: s.verdict for i, s in by_id.items()} == {"duplicate-sequential": "fail", "reorder": "unknown"}
    assert by_id["reorder"].reason == "not run: every valid delivery of duplicate-sequential was refused with 400"
    refused = [a for s in by_id.values() for a in s.attempts if a.valid]
    assert refused and {a.status for a in refused} == {400}
    assert {f.check_id for f in by_id["duplicate-sequential"].findings} >= {"lost", "valid_not_rejected"}


def test_the_same_receiver_passes_with_its_customers_seeded(shop_env: Path) -> None:
    verdicts = _verdicts(_config(shop_env, SEED_COMMAND), shop_env / "out")
    assert verdicts == {"duplicate-sequential": ("pass", None), "reorder": ("pass", None)}


def test_a_failing_seed_makes_the_scenario_unknown_with_the_reason_and_no_secret(
        shop_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEED_FAIL", "1")
    verdicts = _verdicts(_config(shop_env, SEED_COMMAND), shop_env / "out")
    reason = ("the seed hook failed before the first delivery: seed command "
              f"{Path(sys.executable).name} exited with 3: cannot seed: refused by the shop with key *** | see above")
    assert verdicts == {"duplicate-sequential": ("unknown", reason), "reorder": ("unknown", reason)}
    assert SECRET not in (shop_env / "out" / "report.json").read_text(encoding="utf-8")


def test_the_document_holds_the_world_before_its_first_delivery_at_the_receivers_api_version() -> None:
    world = World(11)
    customer = world.event(world.create_customer()).object_id
    sub = world.subscribe(customer)
    world.cancel(sub)
    document = seed_document(world, scenario="reorder", profile="stripe", api_version="2020-08-27")
    assert document["scenario"] == "reorder" and document["api_version"] == "2020-08-27"
    assert document["livemode"] is False
    objects = document["objects"]
    assert [c["id"] for c in objects["customer"]] == [customer]
    [subscription] = objects["subscription"]
    assert subscription["status"] == "active"  # as served before customer.subscription.created went out
    assert "current_period_end" in subscription  # the subscription's own period before basil
    assert "current_period_start" not in subscription["items"]["data"][0]
    assert {p["id"] for p in objects["price"]} == {i["price"]["id"] for i in subscription["items"]["data"]}
    assert clock.horizon(world) == -1  # the provider API serves the same versions while the seed runs
    assert "create" not in document and "create_as" not in document


def test_the_document_says_what_kind_of_checkout_session_the_story_binds() -> None:
    document = seed_document(World(11), scenario="reorder", profile="stripe",
                             create={"checkout.session": 2, "customer": 1})
    assert document["create"] == {"checkout.session": 2, "customer": 1}
    assert document["create_as"] == {"checkout.session": {"mode": "payment", "payment_method_types": ["card"]}}
    assert "create_each" not in document


def test_the_document_lists_each_session_the_story_opens_by_mode() -> None:
    """The story's sessions in the order it opens them: one kind also as ``create_as``; two
    kinds only in ``create_each``."""
    scratch = World(11)
    customer = scratch.event(scratch.create_customer()).object_id
    scratch.subscribe_through_checkout(customer)
    scratch.complete_checkout(scratch.open_checkout(customer, scratch.create_price(interval=None)))
    assert scratch.story_session_kinds == [("subscription", "card"), ("payment", "card")]
    both = seed_document(World(11), scenario="s", profile="stripe", create={"checkout.session": 2},
                         session_kinds=scratch.story_session_kinds)
    assert both["create_each"] == {"checkout.session": [
        {"mode": "subscription", "payment_method_types": ["card"]}, {"mode": "payment", "payment_method_types": ["card"]}]}
    assert "create_as" not in both
    plans = seed_document(World(11), scenario="s", profile="stripe", create={"checkout.session": 1, "customer": 0},
                          session_kinds=[("subscription", "card")])
    assert plans["create_as"] == {"checkout.session": {"mode": "subscription", "payment_method_types": ["card"]}}
    assert plans["create_each"] == {"checkout.session": [{"mode": "subscription", "payment_method_types": ["card"]}]}


class _Seeded(BaseHTTPRequestHandler):
    received: list[dict[str, object]] = []
    status = 204

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["content-length"]))
        type(self).received.append(json.loads(body))
        self.send_response(self.status)
        self.end_headers()
        if self.status >= 300:
            self.wfile.write(b"no such price\nin the catalog")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def seed_server() -> Iterator[tuple[str, type[_Seeded]]]:
    handler = type("Handler", (_Seeded,), {"received": [], "status": 204})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/seed", handler
    finally:
        server.shutdown()
        server.server_close()


def test_a_seed_url_receives_the_document_and_a_non_2xx_answer_is_the_reason(
        seed_server: tuple[str, type[_Seeded]]) -> None:
    url, handler = seed_server
    document = {"scenario": "s", "objects": {"customer": [{"id": "cus_1"}]}}
    assert run_seed(SeedHook(url=url, timeout_s=5), document) is None
    assert handler.received == [document]
    handler.status = 500
    assert run_seed(SeedHook(url=url, timeout_s=5), document) == (
        f"seed URL {url} answered 500: no such price | in the catalog")


def test_a_seed_command_is_bounded_by_its_timeout() -> None:
    # -S (no site): the child has written its line long before the 0.5 s timeout even on a loaded
    # machine (at load 18, 0.05 s; with site and this venv's .pth files 0.34-0.48 s).
    hook = SeedHook(argv=(sys.executable, "-S", "-c", "import sys, time; print('working', file=sys.stderr, "
                                                      "flush=True); time.sleep(30)"), timeout_s=0.5)
    assert run_seed(hook, {}) == f"seed command {Path(sys.executable).name} ran past its 0.5 s timeout: working"


def test_a_long_stderr_keeps_what_failed_and_the_end_of_the_tail() -> None:
    hook = SeedHook(argv=(sys.executable, "-c", "import sys; print('x' * 5000 + ' the end', file=sys.stderr); "
                                                "sys.exit(1)"), timeout_s=10)
    reason = run_seed(hook, {})
    assert reason is not None and len(reason) == REASON_CHARS
    assert reason.startswith(f"seed command {Path(sys.executable).name} exited with 1: …x")
    assert reason.endswith("x the end")


def test_a_seed_command_that_cannot_start_says_so() -> None:
    assert run_seed(SeedHook(argv=("/nonexistent/seed-tool",), timeout_s=5), {}) == (
        "seed command seed-tool could not start: No such file or directory")


@pytest.mark.parametrize(("seed", "message"), [
    ('[target.seed]\ntimeout_s = 5\n', "give exactly one of 'command' or 'url'"),
    ('[target.seed]\ncommand = "seed"\nurl = "http://127.0.0.1:1/seed"\n', "give exactly one of 'command' or 'url'"),
    ('[target.seed]\ncommand = "seed --key {token}"\n', "unknown placeholder {token}"),
    ('[target.seed]\nurl = "http://127.0.0.1:1/seed"\nenv = { A = "1" }\n', "cwd and env are a command's"),
    ('[target.seed]\ncommand = "seed"\ntimeout_s = 0\n', "greater than 0"),
], ids=["neither", "both", "placeholder", "url-env", "timeout"])
def test_a_bad_seed_table_is_one_config_error_naming_it(tmp_path: Path, seed: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(_config(tmp_path, seed))
    assert caught.value.field is not None and caught.value.field.startswith("target.seed")
    assert message in str(caught.value)


def test_the_readmes_seed_table_fills_in_hookproofs_values() -> None:
    (table,) = re.findall(r"```toml seeded\.toml\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"),
                          flags=re.S)
    config = parse_config(f'[target]\nurl = "http://127.0.0.1:8000/webhooks"\nsecret = "{SECRET}"\n{table}'
                          '[observer]\nkind = "sink"\n', "README.md")
    hook = seed_hook(config, [SECRET], "http://127.0.0.1:9", "http://127.0.0.1:9/sink")
    assert hook.argv == ("python", "manage.py", "seed_from_hookproof", "--api-base", "http://127.0.0.1:9")
    assert hook.env["STRIPE_API_KEY"] == config.provider.api_key and hook.env["HOOKPROOF_SECRET"] == SECRET
    assert hook.timeout_s == 30 and hook.masked == (SECRET, config.provider.api_key)


@pytest.mark.parametrize("kind", sorted(WORLDS))
def test_every_world_hands_over_each_of_its_objects_once(kind: str) -> None:
    world = new_world(kind, 3)
    for event_type in world_event_types(kind)[:3]:
        emit_events(world, event_type)
    document = json.loads(json.dumps(seed_document(world, scenario="s", profile=kind)))
    expected = {world.object_type(i): len(world.objects(world.object_type(i))) for i in world.objects()}
    assert {kind: len(objects) for kind, objects in document["objects"].items()} == expected
    assert all(isinstance(o, dict) and "id" in o for objects in document["objects"].values() for o in objects)


def test_a_seed_command_printing_the_decoded_key_gets_it_masked() -> None:
    """A failing seed command that prints a Standard Webhooks secret's key bytes (hex and
    bytes repr) on stderr: the reason holds ``***`` for each."""
    from hookproof.scenarios.seeding import SeedHook, run_seed

    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    code = ("import base64, sys; raw = base64.b64decode(sys.argv[1][6:]); "
            "print('seed failed with key', raw.hex(), raw, file=sys.stderr); sys.exit(3)")
    reason = run_seed(SeedHook(argv=(sys.executable, "-c", code, secret), masked=(secret,)), {"objects": []})
    assert reason is not None and reason.endswith("seed failed with key *** b'***'"), reason
