"""False alarms a new user hit on correct receivers written from provider docs, each pinned.

1. `builtin_keys = false` with a `[catalog]` keeps the catalog's own keys (they are the
   user's): the document's receiver passes, its twin without dedupe still fails.
2. A catalog world's status only moves forward in explore, and a `duplicated` finding
   over several distinct events says so (event ids) and that the key is owed once for them all.
3. A scenario whose events the team's keys make none effectful is not applicable with
   that reason (Paddle's `distinct-events-same-object`), and reasons and descriptions do
   not speak another world's words.
4. `foreign-account` does not apply to Shopify (a public app serves every shop), nor to
   Stripe (a Connect endpoint is sent every connected account's events, never another's:
   `tests/scenarios/test_other_mode_findings.py`). A Shopify app acting on every shop
   passes; its twin without dedupe still fails.
5. `hookproof replay` of a passing explore's folder: nothing to replay, exit 0.
6. `hookproof demo`'s progress: a heartbeat line with the scenario count off a terminal.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from rich.console import Console

from examples.receivers import PROJECT_ROOT
from hookproof.config import Config, ObserverConfig, RunConfig, SettleConfig, StartConfig, TargetConfig, load_config
from hookproof.scenarios.business_keys import KeyMapping
from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable
from hookproof.simulator.errors import WorldError
from hookproof.simulator.faults import Mutation, applicable, is_valid
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import new_world
from tests.examples.test_catalog_receivers import SECRETS, project
from tests.support import free_port


@pytest.fixture(autouse=True)
def _webhook_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOOK_SECRET", SECRETS["standard-webhooks"])


def catalog_config(tmp_path: Path, receiver: str = "invoices", profile: str = "standard-webhooks",
                   *, builtin_keys: bool = False) -> Config:
    """The README's OpenAPI example under `profile`, with ``builtin_keys = false`` on top."""
    path = project(tmp_path, receiver, profile)
    if not builtin_keys:
        path.write_text("builtin_keys = false\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    return load_config(path)


# ---- 1. builtin_keys = false keeps a catalog's keys ------------------------------------

def test_builtin_keys_false_keeps_every_key_of_the_document(tmp_path: Path) -> None:
    config = catalog_config(tmp_path)
    mapping = config.key_mapping()
    world = new_world(config.profile().world, 5)
    events = world.lifecycle()
    keyed = {e.type: mapping.key_of(e) for e in events}
    assert keyed == {e.type: e.business_key for e in events}
    assert sorted(t for t, k in keyed.items() if k) == ["invoice.paid", "invoice.payment_failed", "refund.created"]


def test_builtin_keys_false_still_drops_hookproofs_billing_keys() -> None:
    from hookproof.config_model import _sample_events

    mapping = KeyMapping({}, get_profile("stripe"), builtin=False)
    assert mapping.key_of(_sample_events("invoice.paid")[0]) is None


def test_no_scenario_says_no_effectful_events_under_builtin_keys_false(tmp_path: Path) -> None:
    config = catalog_config(tmp_path)
    profile = config.profile()
    ctx = Context(profile=profile, keys=config.key_mapping(), redelivery_window=20)
    reasons = {sid: plan.reason for sid, s in CATALOG.items()
               if isinstance(plan := s.plan(ctx, new_world(profile.world, 7)), NotApplicable)}
    assert not [r for r in reasons.values() if "effectful" in r or "enabled_events" in r], reasons


def certify_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: str) -> dict[str, tuple[str, set[str]]]:
    from hookproof.certify import certify

    monkeypatch.setenv("WEBHOOK_SECRET", SECRETS["standard-webhooks"])
    config = catalog_config(tmp_path, receiver)
    report = certify(config, scenarios=["duplicate-sequential", "mass-redelivery", "distinct-events-same-object"],
                     out_dir=tmp_path / "out").report
    return {s.id: (s.verdict, {f.check_id for f in s.findings}) for s in report.scenarios}


@pytest.mark.slow
def test_the_documents_receiver_passes_with_builtin_keys_false(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    assert certify_catalog(tmp_path, monkeypatch, "invoices") == {
        "duplicate-sequential": ("pass", set()), "mass-redelivery": ("pass", set()),
        "distinct-events-same-object": ("pass", set())}


@pytest.mark.slow
def test_its_twin_without_dedupe_still_fails_with_builtin_keys_false(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    verdicts = certify_catalog(tmp_path, monkeypatch, "invoices_no_dedupe")
    assert verdicts["duplicate-sequential"] == ("fail", {"duplicated"})
    assert verdicts["mass-redelivery"][0] == "fail" and "duplicated" in verdicts["mass-redelivery"][1]


# ---- 2. a status moves forward; distinct events under one key -------------------------

def test_explore_never_sets_an_objects_status_again(tmp_path: Path) -> None:
    from hookproof.scenarios.catalog_ops import catalog_ops

    config = catalog_config(tmp_path, builtin_keys=True)
    kind = config.profile().world
    ops = catalog_ops(kind)
    world = new_world(kind, 3)
    ops.apply(world, "invoice.created", None)
    assert {a for a in ops.legal(world) if a[0].startswith("invoice.")} == {
        ("invoice.created", None), ("invoice.payment_failed", 0), ("invoice.paid", 0)}
    ops.apply(world, "invoice.paid", 0)
    assert {a for a in ops.legal(world) if a[0].startswith("invoice.")} == {("invoice.created", None)}
    with pytest.raises(WorldError, match=r"invoice\.paid: invoice #0 is already past the status it sets "
                                         r"\(order: open, past_due, paid\)"):
        ops.apply(world, "invoice.paid", 0)
    assert [e.type for e in world.events] == ["invoice.created", "invoice.paid"]


def test_duplicated_names_the_distinct_events_that_carried_one_key() -> None:
    from hookproof.scenarios.checks import check_duplicated
    from tests.scenarios.test_checks import att, exp, hist, obs

    observed = [obs(5, "confirm:bk_1", "confirm:bk_1")]
    history = hist(att("evt_a", "confirm:bk_1"), att("evt_b", "confirm:bk_1"))
    (finding,) = check_duplicated(history, exp("confirm:bk_1"), observed).findings
    assert finding.message == ("applied 2 times instead of once; 2 delivery attempt(s) carried it, of 2 distinct "
                               "events (evt_a, evt_b) that share this business key, so it is owed once for them all")
    redelivered = hist(att("evt_a", "confirm:bk_1"), att("evt_a", "confirm:bk_1"))
    (finding,) = check_duplicated(redelivered, exp("confirm:bk_1"), observed).findings
    assert finding.message == "applied 2 times instead of once; 2 delivery attempt(s) carried it"


# ---- 3. the team's keys make none effectful: not applicable, in neutral words -----------

def test_paddle_distinct_events_is_not_applicable_when_the_teams_keys_make_none_effectful() -> None:
    profile = get_profile("paddle")
    keys = KeyMapping({"subscription.past_due": None}, profile)
    plan = CATALOG["distinct-events-same-object"].plan(Context(profile=profile, keys=keys), new_world("paddle", 2))
    assert plan == NotApplicable("the team's business keys make none of this scenario's events effectful "
                                 "(business_keys, builtin_keys): no effectful events to send")
    plan = CATALOG["distinct-events-same-object"].plan(Context(profile=profile), new_world("paddle", 2))
    assert not isinstance(plan, NotApplicable)
    assert {e.type for p in plan.phases for e in p.events} == {"subscription.past_due"}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["paddle_billing", "paddle_billing_no_dedupe"])
def test_paddle_certify_under_keys_without_past_due_ends_on_findings_not_unknown(tmp_path: Path, name: str,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from hookproof.certify import certify
    from tests.examples.test_provider_receivers import config as provider_config

    monkeypatch.delenv("WEBHOOK_SECRET")  # the receiver would prefer it to the secret certify hands it
    config = provider_config(name, tmp_path).model_copy(update={"business_keys": {"subscription.past_due": False}})
    report = certify(config, scenarios=["distinct-events-same-object", "duplicate-sequential"],
                     out_dir=tmp_path / "out").report
    verdicts = {s.id: (s.verdict, sorted({f.check_id for f in s.findings}), s.reason) for s in report.scenarios}
    assert verdicts["distinct-events-same-object"] == (
        "not_applicable", [], "the team's business keys make none of this scenario's events effectful "
                              "(business_keys, builtin_keys): no effectful events to send")
    # the subscription's whole story is sent, its past_due too: the team's keys say it owes no
    # effect, and these receivers record a dunning effect on it
    assert verdicts["duplicate-sequential"][:2] == (
        ("fail", ["unexpected"]) if name == "paddle_billing" else ("fail", ["duplicated", "unexpected"]))
    duplicate = next(s for s in report.scenarios if s.id == "duplicate-sequential")
    assert {f.key.split(":")[0] for f in duplicate.findings if f.check_id == "unexpected"} == {"dunning"}
    assert report.verdict == "fail"


def test_descriptions_and_reasons_speak_no_other_worlds_words(tmp_path: Path) -> None:
    for sid in ("reorder", "stale-after-newer", "distinct-events-same-object"):
        text = CATALOG[sid].description.lower()
        assert not any(w in text for w in ("invoice", "charge", "canceled")), (sid, text)
    config = catalog_config(tmp_path, builtin_keys=True)
    profile = config.profile()
    ctx = Context(profile=profile, keys=KeyMapping({t: None for t in ("invoice.payment_failed", "invoice.paid",
                                                                      "refund.created")}, profile))
    reasons = [p.reason for s in CATALOG.values()
               if isinstance(p := s.plan(ctx, new_world(profile.world, 1)), NotApplicable)]
    assert not [r for r in reasons if "issue_comment" in r or "pull_request" in r or "subscription" in r], reasons
    assert reasons.count("the team's business keys make none of this scenario's events effectful "
                         "(business_keys, builtin_keys): no effectful events to send") >= 5


# ---- 4. Shopify: another shop's delivery is valid ------------------------------------

def test_foreign_account_does_not_apply_to_shopify_nor_to_stripe() -> None:
    shopify, stripe = get_profile("shopify"), get_profile("stripe")
    assert is_valid([Mutation.FOREIGN_ACCOUNT], shopify)
    assert not is_valid([Mutation.FOREIGN_ACCOUNT], stripe)  # Stripe never sends one: not a valid delivery
    assert applicable(Mutation.FOREIGN_ACCOUNT, stripe, connect=True) == stripe.foreign_account_never_sent
    reason = applicable(Mutation.FOREIGN_ACCOUNT, shopify)
    assert reason == ("a Shopify app serves every shop that installs it under one app secret; a delivery from "
                      "another shop (X-Shopify-Shop-Domain) is valid, so there is no foreign account")
    plan = CATALOG["foreign-account"].plan(Context(profile=shopify, account="acme"), new_world("shopify", 1))
    assert plan == NotApplicable(reason)


def shopify_config(tmp_path: Path, name: str) -> Config:
    """A Shopify app from shopify.dev that acts on every shop (no SHOP_DOMAIN), `target.account = "acme"`."""
    port = free_port()
    db = tmp_path / f"{name}.sqlite"
    return Config(
        target=TargetConfig(url=f"http://127.0.0.1:{port}/webhooks", profile="shopify",
                            secret="shpss_0123456789abcdef0123456789abcdef", account="acme",
                            start=StartConfig(command=f"{sys.executable} -m examples.receivers.{name}",
                                              health_url=f"http://127.0.0.1:{port}/healthz", startup_timeout_s=30,
                                              cwd=str(PROJECT_ROOT), env={"PORT": str(port), "DATABASE": str(db)})),
        observer=ObserverConfig(kind="sql", url=f"sqlite:///{db}", effects="SELECT business_key, amount FROM effects"),
        run=RunConfig(seed=4242), settle=SettleConfig(window_s=0.15))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["shopify_app", "shopify_app_no_dedupe"])
def test_a_shopify_app_serving_every_shop_is_not_held_to_foreign_account(tmp_path: Path, name: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from hookproof.certify import certify

    monkeypatch.delenv("WEBHOOK_SECRET")  # the app would prefer it to the secret certify hands it

    report = certify(shopify_config(tmp_path, name), scenarios=["foreign-account", "duplicate-sequential"],
                     out_dir=tmp_path / "out").report
    verdicts = {s.id: (s.verdict, sorted({f.check_id for f in s.findings})) for s in report.scenarios}
    assert verdicts["foreign-account"] == ("not_applicable", [])
    assert verdicts["duplicate-sequential"] == (("pass", []) if name == "shopify_app" else ("fail", ["duplicated"]))


# ---- 5. replay after a passing explore -------------------------------------------------

def run_replay(tmp_path: Path, schedule: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookproof", "replay", str(schedule)], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path, env={**os.environ, "COLUMNS": "300"})


@pytest.mark.parametrize(("verdict", "code"), [("pass", 0), ("unknown", 2)])
def test_replay_of_a_run_without_a_schedule_says_there_is_nothing_to_replay(tmp_path: Path, verdict: str,
                                                                           code: int) -> None:
    run = tmp_path / "hookproof-reports" / "explore-20261202T020000Z"
    run.mkdir(parents=True)
    (run / "report.json").write_text(json.dumps({"verdict": verdict}), encoding="utf-8")
    (tmp_path / "hookproof-reports" / "latest").symlink_to(run.name)
    done = run_replay(tmp_path, Path("hookproof-reports/latest/failing-schedule.json"))
    assert done.returncode == code, done.stdout + done.stderr
    said = " ".join((done.stdout + done.stderr).split())
    if verdict == "pass":
        assert said == ("nothing to replay: the run in hookproof-reports/latest (explore-20261202T020000Z) passed, "
                        "so it wrote no failing-schedule.json")
    else:
        assert said == ("hookproof: nothing to replay: the run in hookproof-reports/latest "
                        "(explore-20261202T020000Z) ended unknown without writing failing-schedule.json (only a "
                        "failing 'hookproof explore' writes one)")


def test_replay_of_a_run_that_failed_only_in_its_bursts_says_bursts_leave_seeds(tmp_path: Path) -> None:
    from hookproof.commands.explore import BURSTS_ID

    run = tmp_path / "hookproof-reports" / "explore-20261203T020000Z"
    run.mkdir(parents=True)
    (run / "report.json").write_text(json.dumps({"verdict": "fail", "seed": 77, "scenarios": [
        {"id": "explore-state-machine", "verdict": "pass"}, {"id": BURSTS_ID, "verdict": "fail"}]}), encoding="utf-8")
    done = run_replay(tmp_path, Path("hookproof-reports/explore-20261203T020000Z"))  # the folder: its schedule
    assert done.returncode == 2, done.stdout + done.stderr
    assert " ".join(done.stderr.split()) == (
        "hookproof: nothing to replay: the run in hookproof-reports/explore-20261203T020000Z "
        "(explore-20261203T020000Z) failed only in its real-socket bursts, which leave a hit rate and seeds, not a "
        "schedule; 'hookproof explore --seed 77' repeats them")


def test_replay_of_a_missing_file_elsewhere_is_still_a_usage_error(tmp_path: Path) -> None:
    catalog_config(tmp_path)  # hookproof.toml beside it
    done = run_replay(tmp_path, Path("nowhere/failing-schedule.json"))
    assert done.returncode == 2
    assert "no such file or directory" in done.stderr


# ---- 6. demo progress ---------------------------------------------------------------------

def test_demo_progress_off_a_terminal_is_a_heartbeat_with_the_scenario_count(monkeypatch: pytest.MonkeyPatch) -> None:
    from hookproof.demo import scenario_progress

    monkeypatch.setenv("HOOKPROOF_HEARTBEAT_S", "0.01")
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, force_interactive=False, width=200)
    seen = threading.Event()
    original = console.print

    def printed(*args: object, **kwargs: object) -> None:
        original(*args, **kwargs)  # type: ignore[arg-type]
        if "reorder" in out.getvalue():
            seen.set()

    monkeypatch.setattr(console, "print", printed)
    with scenario_progress(console, "demo inbox_sync", 27) as progress:
        for i, sid in enumerate(("duplicate-sequential", "duplicate-concurrent", "sender-timeout", "dropped-response")):
            progress.start(sid, i, 27)
            progress.finish(sid)
        progress.start("reorder", 4, 27)
        assert seen.wait(30)
    line = next(x for x in out.getvalue().splitlines() if "reorder" in x)
    assert line.startswith("demo inbox_sync: 4/27 scenario(s) done, running reorder, ") and line.endswith(" s")


# ---- 7. send --config takes the target ----------------------------------------------------

def _send(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookproof", "send", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env={**os.environ, "COLUMNS": "300"})


def test_send_with_a_config_takes_its_target_url_secret_and_account(tmp_path: Path) -> None:
    """A new user's GitHub App config names its installation (`target.account`): certify sent
    that installation's events, send --config another one, and asked for --url and --secret
    the config already gives."""
    import hashlib
    import hmac

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from tests.examples.serving import serve_app

    received: list[tuple[bytes, str]] = []

    async def hook(request: Request) -> Response:
        received.append((await request.body(), request.headers.get("x-hub-signature-256", "")))
        return Response(status_code=204)

    secret = "gh_send_config_secret"
    with serve_app(Starlette(routes=[Route("/webhooks", hook, methods=["POST"])])) as base:
        (tmp_path / "hookproof.toml").write_text(
            f'[target]\nurl = "{base}/webhooks"\nprofile = "github"\nsecret = "{secret}"\naccount = "4242"\n\n'
            '[observer]\nkind = "sink"\n', encoding="utf-8")
        sent = _send(tmp_path, "--config", "hookproof.toml", "--event", "issues.opened", "--seed", "3")
    assert sent.returncode == 0, sent.stdout + sent.stderr
    ((body, signature),) = received
    assert json.loads(body)["installation"]["id"] == 4242
    assert signature == "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    with serve_app(Starlette(routes=[Route("/webhooks", hook, methods=["POST"])])) as base:
        dropped = _send(tmp_path, "--config", "hookproof.toml", "--url", f"{base}/webhooks", "--drop-response")
    assert dropped.returncode == 1
    assert ("1 attempt(s), 0 acknowledged; exit 1: the receiver answered 1 with a 2xx, discarded by "
            "--drop-response, and GitHub sends no retry") in " ".join(dropped.stdout.split())


def test_send_and_events_need_no_observer_and_the_judging_commands_say_they_do(tmp_path: Path) -> None:
    """A new user's `send --config` asked for an `[observer]` it never reads: a config with only
    a [target] sends and lists its events; certify, explore, replay and storm, which read the
    receiver through it, refuse it in one line naming the table."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from tests.examples.serving import serve_app

    received: list[bytes] = []

    async def hook(request: Request) -> Response:
        received.append(await request.body())
        return Response(status_code=200)

    with serve_app(Starlette(routes=[Route("/hook", hook, methods=["POST"])])) as base:
        (tmp_path / "hookproof.toml").write_text(
            f'[target]\nurl = "{base}/hook"\nprofile = "stripe"\nsecret = "whsec_only_a_target"\n', encoding="utf-8")
        sent = _send(tmp_path, "--config", "hookproof.toml", "--event", "invoice.paid", "--seed", "3")
    assert sent.returncode == 0, sent.stdout + sent.stderr
    assert [json.loads(body)["type"] for body in received] == ["invoice.paid"]
    events = subprocess.run([sys.executable, "-m", "hookproof", "events", "--config", "hookproof.toml"],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert events.returncode == 0 and "invoice.paid" in events.stdout.split(), events.stderr
    for command in (["certify"], ["explore"], ["storm", "--users", "1", "--duration", "1s"],
                    ["replay", "failing-schedule.json"]):
        run = subprocess.run([sys.executable, "-m", "hookproof", *command, "--config", "hookproof.toml"],
                             capture_output=True, text=True, timeout=120, cwd=tmp_path,
                             env={**os.environ, "COLUMNS": "300"})
        assert run.returncode == 2, (command, run.stdout, run.stderr)
        assert run.stderr.startswith("hookproof: hookproof.toml:1: observer: is required: certify, explore, replay "
                                     "and storm read what the receiver applied through it"), (command, run.stderr)


def test_send_names_the_missing_url(tmp_path: Path) -> None:
    (tmp_path / "hookproof.toml").write_text(
        '[target]\nurl = "http://127.0.0.1:{port}/webhooks"\nprofile = "github"\nsecret = "s"\n'
        '[target.start]\ncommand = "node app.js {port}"\n\n[observer]\nkind = "sink"\n', encoding="utf-8")
    with_port = _send(tmp_path, "--config", "hookproof.toml")
    assert with_port.returncode == 2
    assert "--url: hookproof.toml's target.url names {port}" in " ".join(with_port.stderr.split())
    bare = _send(tmp_path, "--secret", "s")
    assert bare.returncode == 2 and "--url: missing (give it, or --config with a [target])" in bare.stderr
