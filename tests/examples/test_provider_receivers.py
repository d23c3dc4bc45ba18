"""The Mercado Pago, Paddle and Shopify reference receivers against hookproof, over real HTTP on 127.0.0.1.

`mercadopago_fetch` (x-signature with the official SDK, the payment fetched with
``sdk.payment().get()`` from the provider API, dedupe by notification id in the effect's
transaction), `paddle_billing` (paddle-python-sdk's Verifier and entities, dedupe by
``event_id``, subscription states ordered by ``occurred_at``) and `shopify_app` (shopify.dev's
base64 HMAC check, dedupe by ``X-Shopify-Topic`` with ``X-Shopify-Event-Id``, order states ordered by ``updated_at``)
are written from the providers' docs and SDKs. `hookproof send` reaches them with every event
type of their profile; `certify` passes them on the whole catalog, fails their twins without dedupe
with `duplicated` for the receivers' own business keys, Shopify's twin claiming the topic and
the order instead of the event with `stale` where an order's second ``orders/updated`` is dropped,
its twin claiming ``X-Shopify-Webhook-Id`` with `duplicated` where the same events come
through a second subscription, its twin claiming ``X-Shopify-Event-Id`` without the topic with
`lost` where a merchant action's second topic is dropped (a checkout's ``orders/paid`` after its
``orders/create``: they share the Event-Id), and its twin ordering by ``updated_at`` alone (``<=``) with
`regressed` and `stale` where an order changes twice in one second (`MATRIX`).
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from concurrent.futures import Future
from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT, PROVIDER_RECEIVERS
from hookproof.certify import certify
from hookproof.config import Config, ObserverConfig, RunConfig, SettleConfig, StartConfig, TargetConfig
from hookproof.reports.model import RunReport
from hookproof.send import SendOptions, send, send_world_seed
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState, run_server
from hookproof.simulator.server.state import DEFAULT_API_KEY
from hookproof.simulator.world import emit_events, new_world, world_event_types
from tests.examples.test_github_app import own_duplicated_keys
from tests.support import free_port, run_side_by_side, selected_params

SEED = 4242
ACCOUNT = "123456789"
SECRETS = {"mercadopago": "a" * 64, "paddle": "pdl_ntfset_01hv8x29kz0t586xy6zn1a62ny_0123456789abcdefABCDEF0123456789",
           "shopify": "shpss_0123456789abcdef0123456789abcdef"}
PROFILE = PROVIDER_RECEIVERS
STATES = {"mercadopago": {"payment": "SELECT object_id, status FROM payments"},
          "paddle": {"subscription": "SELECT object_id, status FROM subscriptions",
                     "adjustment": "SELECT object_id, status FROM adjustments",
                     "customer": "SELECT object_id, status FROM customers"},
          "shopify": {"order": "SELECT object_id, status FROM orders"}}
#: The shop a Shopify receiver serves (``target.account``; other shops' webhooks are acknowledged, not acted on).
SHOP = "acme"

#: receiver -> scenario id -> the checks with findings (full catalog, seed 4242), from the
#: detection matrix's ``provider_receivers``. Scenarios not listed pass or do not apply.
#: The Mercado Pago twin also applies the effect of the status it reads when the
#: notification arrives late (a replayed or thin notification after a refund), so a
#: license it never granted is `lost` there.
_ROWS = json.loads((Path(__file__).parents[1] / "scenarios" / "detection_matrix.json").read_text())["provider_receivers"]
MATRIX: dict[str, dict[str, list[str]]] = {name: row["failures"] for name, row in _ROWS.items() if name != "_about"}
#: receiver -> scenario id -> the checks it fails with, some of them, depending on which of the
#: deliveries in flight together it handles first (a Shopify checkout's topics sent at once to
#: `shopify_app_dedupe_by_event_id_alone`: the first one handled claims the shared Event-Id).
RACES: dict[str, dict[str, list[str]]] = {name: row.get("race_dependent", {}) for name, row in _ROWS.items()
                                          if name != "_about"}


def start(name: str, db: Path, *, api_base: str = "") -> tuple[subprocess.Popen[str], str]:
    """Start receiver `name` on a free port (any seller's notifications accepted); its
    process and webhook URL once it listens."""
    port = free_port()
    env = {"PATH": "/usr/bin:/bin", "PORT": str(port), "DATABASE": str(db), "WEBHOOK_SECRET": SECRETS[PROFILE[name]],
           "MP_ACCESS_TOKEN": DEFAULT_API_KEY, "MP_API_BASE": api_base,
           "HOOKPROOF_API_KEY": DEFAULT_API_KEY, "HOOKPROOF_API_BASE": api_base}
    proc = subprocess.Popen([sys.executable, "-m", f"examples.receivers.{name}"], cwd=PROJECT_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise AssertionError(f"{name} did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc, f"http://127.0.0.1:{port}/webhooks"


def rows(db: Path, query: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute(query))


def test_matrix_covers_every_provider_receiver() -> None:
    assert set(MATRIX) == set(PROVIDER_RECEIVERS)
    assert {_ROWS[name]["profile"] for name in MATRIX} == {"mercadopago", "paddle", "shopify"}
    assert all(_ROWS[name]["profile"] == PROVIDER_RECEIVERS[name] for name in MATRIX)
    assert all(not set(RACES[name]) & set(MATRIX[name]) for name in MATRIX)
    assert {name for name in MATRIX if RACES[name]} == {"shopify_app_dedupe_by_event_id_alone"}
    assert all(MATRIX[name] == {} for name in MATRIX
               if not name.endswith(("_no_dedupe", "_dedupe_by_object", "_dedupe_by_webhook_id",
                                     "_dedupe_by_event_id_alone", "_same_second_overwrite")))
    assert all("duplicated" in MATRIX[name]["duplicate-sequential"] for name in MATRIX if name.endswith("_no_dedupe"))
    assert all(MATRIX[name]["distinct-updates-same-object"] == ["stale"]
               for name in MATRIX if name.endswith("_dedupe_by_object"))
    # a claim of X-Shopify-Webhook-Id catches retries, not the same event through a second subscription
    assert all(set(MATRIX[name]) == {"mass-redelivery", "mass-redelivery-window"}
               for name in MATRIX if name.endswith("_dedupe_by_webhook_id"))
    # a claim of X-Shopify-Event-Id alone drops the second topic of one merchant action (a checkout's
    # orders/paid after its orders/create): an effect lost, never one applied twice
    assert all(MATRIX[name]["duplicate-sequential"] == ["lost"]
               and all("duplicated" not in checks for checks in MATRIX[name].values())
               for name in MATRIX if name.endswith("_dedupe_by_event_id_alone"))
    # an order's changes within one updated_at second, the older delivered last (Shopify's whole seconds)
    assert all(MATRIX[name] == {"stale-after-newer": ["regressed", "stale"]}
               for name in MATRIX if name.endswith("_same_second_overwrite"))


@pytest.mark.parametrize("name", ["mercadopago_fetch", "paddle_billing", "shopify_app"])
def test_send_reaches_the_receiver_with_every_event_type(tmp_path: Path, name: str) -> None:
    profile = get_profile(PROFILE[name])
    state = ServerState()
    with run_server(state) as api:
        db = tmp_path / "receiver.sqlite"
        proc, url = start(name, db, api_base=api.url)
        try:
            expected: list[str] = []
            for i, event_type in enumerate(world_event_types(profile.world)):
                seed = 300 + i
                world = new_world(profile.world, send_world_seed(seed, event_type))  # the world `send` builds
                events = emit_events(world, event_type)
                state.add_world(world)
                attempts = send(SendOptions(profile=profile, url=url, event=event_type, seed=seed, copies=2),
                                [SECRETS[profile.name]])
                assert [(a.event_type, a.status) for a in attempts] == [(event_type, 200)] * 2
                assert len(events) == len(attempts) // 2
                if profile.name == "mercadopago":  # its keys name ids alone: the same in send's world
                    expected += [e.business_key for e in world.events if e.business_key]
                else:  # keys may name a time (Paddle's dunning), dated by send's own clock start
                    expected += list(dict.fromkeys(a.business_key for a in attempts if a.business_key))
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    got = sorted(str(k) for (k,) in rows(db, "SELECT business_key FROM effects"))
    if profile.name in ("paddle", "shopify"):
        assert got == sorted(expected)
    else:  # a fetching receiver applies what the payment shows, whichever notification it got
        assert got and set(got) <= set(expected) and len(got) == len(set(got))


def test_the_send_command_reaches_the_fetching_receiver(tmp_path: Path) -> None:
    """``hookproof send --profile mercadopago --event payment.created``: accepted, and the
    license granted once for the two copies, from the payment the provider API serves."""
    state = ServerState()
    with run_server(state) as api:
        world = new_world("mercadopago", send_world_seed(5, "payment.created"))  # the world `send --seed 5` builds
        (event,) = emit_events(world, "payment.created")
        state.add_world(world)
        proc, url = start("mercadopago_fetch", tmp_path / "mp.sqlite", api_base=api.url)
        try:
            done = subprocess.run(
                [sys.executable, "-m", "hookproof", "send", "--profile", "mercadopago", "--event", "payment.created",
                 "--url", url, "--secret", SECRETS["mercadopago"], "--seed", "5", "--copies", "2", "--json"],
                capture_output=True, text=True, timeout=60, cwd=PROJECT_ROOT)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    attempts = json.loads(done.stdout)
    assert [(a["event_type"], a["status"]) for a in attempts] == [("payment.created", 200)] * 2
    assert rows(tmp_path / "mp.sqlite", "SELECT business_key, amount FROM effects") == [
        (event.business_key, event.amount)]
    assert rows(tmp_path / "mp.sqlite", "SELECT object_id, status FROM payments") == [(event.object_id, "approved")]


def test_a_forged_delivery_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "paddle.sqlite"
    proc, url = start("paddle_billing", db)
    try:
        attempts = send(SendOptions(profile=get_profile("paddle"), url=url, seed=3), ["pdl_ntfset_wrong"])
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert [a.status for a in attempts][:1] == [401]
    assert rows(db, "SELECT COUNT(*) FROM effects") == [(0,)]


def config(name: str, out: Path) -> Config:
    port = free_port()
    db = out / f"{name}.sqlite"
    profile = PROFILE[name]
    return Config(
        target=TargetConfig(
            url=f"http://127.0.0.1:{port}/webhooks", profile=profile, secret=SECRETS[profile],
            account={"mercadopago": ACCOUNT, "shopify": SHOP}.get(profile),
            start=StartConfig(command=f"{sys.executable} -m examples.receivers.{name}",
                              health_url=f"http://127.0.0.1:{port}/healthz", startup_timeout_s=30,
                              cwd=str(PROJECT_ROOT),
                              env={"PORT": str(port), "DATABASE": str(db), "MP_USER_ID": ACCOUNT,
                                   "SHOP_DOMAIN": f"{SHOP}.myshopify.com"})),
        observer=ObserverConfig(kind="sql", url=f"sqlite:///{db}", effects="SELECT business_key, amount FROM effects",
                                states=STATES[profile]),
        run=RunConfig(seed=SEED), settle=SettleConfig(window_s=0.15))


def config_of(name: str, module: str, out: Path) -> Config:
    """`config` for receiver `name`, its start command running `module` instead (a twin of it)."""
    cfg = config(name, out)
    assert cfg.target.start is not None
    start = cfg.target.start.model_copy(update={"command": cfg.target.start.command.replace(
        f"examples.receivers.{name}", module)})
    return cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": start})})


#: Seconds the first matrix case may take: its fixture certifies every selected receiver.
MATRIX_TIMEOUT_S = 1200


@pytest.fixture(scope="module")
def matrix_reports(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Future[RunReport]]:
    """Each selected receiver certified over the whole catalog, side by side (each run mostly
    waits on its receiver process and its settle reads): receiver -> its report (or its error)."""
    out = tmp_path_factory.mktemp("provider-matrix")

    def one(name: str) -> RunReport:
        (out / name).mkdir()
        return certify(config(name, out / name), out_dir=out / name / "report").report

    return run_side_by_side(selected_params(request, "name"), one, workers=len(MATRIX))


@pytest.mark.slow
@pytest.mark.timeout(MATRIX_TIMEOUT_S)
@pytest.mark.parametrize("name", sorted(MATRIX))
def test_receiver_fails_exactly_what_its_fault_predicts(matrix_reports: dict[str, Future[RunReport]],
                                                        name: str) -> None:
    report = matrix_reports[name].result()
    assert not report.partial
    assert not [s.id for s in report.scenarios if s.verdict == "error"], [s.reason for s in report.scenarios]
    failed = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios
              if s.verdict not in ("pass", "not_applicable")}
    races = RACES[name]
    assert {s: checks for s, checks in failed.items() if s not in races} == MATRIX[name]
    for scenario, checks in races.items():  # fails with some of the listed checks
        assert failed.get(scenario) and set(failed[scenario]) <= set(checks), (scenario, failed.get(scenario))
    duplicated = own_duplicated_keys(report, PROFILE[name])
    assert bool(duplicated) == any("duplicated" in checks for checks in MATRIX[name].values())
    ran = {s.id for s in report.scenarios if s.verdict != "not_applicable"}
    assert {"duplicate-sequential", "reorder", "stale-after-newer", "distinct-events-same-object",
            "unknown-event-type", "forged-signature"} <= ran


@pytest.mark.slow
def test_a_receiver_crediting_a_rejected_payment_is_caught(tmp_path: Path) -> None:
    """The effect story ends with a rejected card payment, sent because payments of its type
    are effectful: a receiver licensing every payment it reads applies an effect nothing owes."""
    base = config("mercadopago_fetch", tmp_path)
    assert base.target.start is not None
    start_cmd = base.target.start.command.replace("-m examples.receivers.mercadopago_fetch",
                                                   "-m tests.examples.mp_credit_any_status")
    target = base.target.model_copy(update={"start": base.target.start.model_copy(update={"command": start_cmd})})
    report = certify(base.model_copy(update={"target": target}), scenarios=["duplicate-sequential"],
                     out_dir=tmp_path / "report").report
    (scenario,) = report.scenarios
    findings = [(f.check_id, f.message.split(" (seen in the")[0]) for f in scenario.findings]
    assert scenario.verdict == "fail" and findings, findings
    assert set(findings) == {("unexpected", "applied, but no validly sent event carries this key (an effect for an "
                                            "event that owes none, or a key of the receiver's own shape that "
                                            "hookproof's key templates do not produce: map each event type to the "
                                            "receiver's key under [business_keys], and set builtin_keys = false to "
                                            "judge by those alone)")}
    rejected = {a.object_id for a in scenario.attempts if a.event_type == "payment.created"}
    assert {f.key for f in scenario.findings} <= {f"license:{pid}" for pid in rejected}


@pytest.mark.slow
@pytest.mark.parametrize(("module", "verdict"), [("examples.receivers.mercadopago_fetch", "pass"),
                                                 ("tests.examples.mp_blind_status", "fail")])
def test_a_slow_fetch_overtaken_by_a_refund_catches_a_blind_status_write(tmp_path: Path, module: str,
                                                                         verdict: str) -> None:
    """Mercado Pago's notifications carry an id alone, so every receiver fetches: the approved
    payment's fetch is answered late while its refund is delivered and fetched; a receiver
    writing what it fetched without comparing date_last_updated ends with the older status."""
    base = config("mercadopago_fetch", tmp_path)
    assert base.target.start is not None
    start_cmd = base.target.start.command.replace("-m examples.receivers.mercadopago_fetch", f"-m {module}")
    target = base.target.model_copy(update={"start": base.target.start.model_copy(update={"command": start_cmd})})
    report = certify(base.model_copy(update={"target": target}), scenarios=["fetch-overtaken"],
                     out_dir=tmp_path / "report").report
    (scenario,) = report.scenarios
    assert scenario.verdict == verdict, (scenario.reason, [f.message for f in scenario.findings])
    assert scenario.title == "A slow fetch overtaken by a newer notification"
    if verdict == "fail":
        assert {f.check_id for f in scenario.findings} == {"stale"}, [f.message for f in scenario.findings]
        (stale,) = scenario.findings
        assert "approved" in stale.message and "refunded" in stale.message, stale.message
