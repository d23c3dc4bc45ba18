"""explore over every provider's world: the state machine drives the world the profile sends
from, with the same delivery rules, against receivers written from each provider's docs and
official SDK (the detection matrix's `PROVIDER_RECEIVERS`, and the Node GitHub App).

The correct receivers survive a search with zero findings; each twin without dedupe is
found (`duplicated`), shrunk to a few delivery steps, and replaying the saved schedule
reproduces it. The Paddle and Mercado Pago receivers run in process (the Mercado Pago SDK
fetches over real HTTP from the provider server on 127.0.0.1); the GitHub App runs in Node
and is explored at its URL, through the `hookproof explore` entry point.
"""

from __future__ import annotations

import itertools
import re
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from examples.receivers import PROVIDER_RECEIVERS
from hookproof.commands.explore import held_fetch_note, machine_report
from hookproof.scenarios.observations import Effect, ObjectState, Observation
from hookproof.scenarios.statemachine import (
    ExploreTarget,
    Prepared,
    Step,
    explore,
    format_steps,
    load_schedule,
    ops_for,
    replay,
    write_schedule,
)
from hookproof.scenarios.world_ops import focused
from hookproof.simulator.delivery import Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState, run_server
from hookproof.simulator.server.state import DEFAULT_API_KEY
from hookproof.simulator.world import new_world
from tests.support import require_service

SECRETS = {"mercadopago": "a" * 64, "paddle": "pdl_ntfset_01hv8x29kz0t586xy6zn1a62ny_0123456789abcdefABCDEF0123456789",
           "shopify": "shpss_0123456789abcdef0123456789abcdef"}
#: Each profile's state table and the object kind it holds.
STATES = {"mercadopago": ("payments", "payment"), "paddle": ("subscriptions", "subscription"),
          "shopify": ("orders", "order")}
SEED = 20240601
NODE_DIR = Path(__file__).resolve().parents[2] / "examples" / "receivers" / "node"


def sqlite_observer(db: Path, profile: str) -> Callable[[], Observation]:
    """The receiver's effects and states, read from its SQLite file (as certify's sql observer)."""
    table, kind = STATES[profile]

    def observe() -> Observation:
        with sqlite3.connect(db) as conn:
            effects = tuple(Effect(str(k), a) for k, a in conn.execute("SELECT business_key, amount FROM effects"))
            states = tuple(ObjectState(str(o), str(s)) for o, s in conn.execute(f"SELECT object_id, status FROM {table}"))
        return Observation(time.time(), effects, states, frozenset({kind}))

    return observe


class ProviderReceivers:
    """Fresh in-process copies of one provider receiver, each on its own SQLite file."""

    def __init__(self, name: str, directory: Path, api_base: str) -> None:
        self.name, self.directory, self.api_base = name, directory, api_base
        self.profile = PROVIDER_RECEIVERS[name]
        self._count = itertools.count()

    def open(self) -> Prepared:
        db = self.directory / f"{self.name}-{next(self._count)}.sqlite"
        dedupe = not self.name.endswith("_no_dedupe")
        secret = SECRETS[self.profile]
        if self.profile == "paddle":
            from examples.receivers.paddle_billing import create_app

            app = create_app(str(db), secret, dedupe=dedupe)
        elif self.profile == "shopify":
            from examples.receivers.shopify_app import AdminApi
            from examples.receivers.shopify_app import create_app as create_shop

            fetch = AdminApi(self.api_base, DEFAULT_API_KEY) if self.name == "shopify_app_fetch" else None
            app = create_shop(str(db), secret, dedupe=dedupe, admin=fetch)
        else:
            from examples.receivers.mercadopago_fetch import Settings
            from examples.receivers.mercadopago_fetch import create_app as create_mp

            app = create_mp(Settings(database=str(db), secret=secret, access_token=DEFAULT_API_KEY,
                                     api_base=self.api_base, dedupe=dedupe))
        return Prepared(Target(app=app), sqlite_observer(db, self.profile))

    def target(self) -> ExploreTarget:
        return ExploreTarget(profile=get_profile(self.profile), secrets=(SECRETS[self.profile],), open=self.open,
                             describe=f"in-process {self.name}", settle_window_s=0.02)


@pytest.fixture
def provider() -> Iterator[tuple[ServerState, str]]:
    """The provider API on 127.0.0.1 (the Mercado Pago SDK fetches over real HTTP)."""
    state = ServerState()
    with run_server(state) as api:
        yield state, api.url


@pytest.mark.parametrize("kind", ["billing", "github", "mercadopago", "paddle", "shopify"])
def test_every_world_has_operations_that_emit_its_own_event_types(kind: str) -> None:
    """A walk over the legal operations emits only the world's own types, and each is legal;
    each operation the world says moves an object's state (`WorldOps.moves`) gives that
    object a new event whose status differs from its last one."""
    ops = ops_for(kind)
    world = new_world(kind, 5)
    assert ops.moves and set(ops.moves) <= set(ops.actions)
    moved = set()
    for i in range(40):
        legal = ops.legal(world)
        assert legal and all(a in ops.actions for a, _ in legal)
        action, obj = legal[(i * 7) % len(legal)]
        start = len(world.events)
        ops.apply(world, action, obj)
        if action in ops.moves and obj is not None:
            object_id = world.objects(ops.moves[action])[obj]
            before = [e.status for e in world.events[:start] if e.object_id == object_id and e.status is not None]
            after = [e.status for e in world.events[start:] if e.object_id == object_id and e.status is not None]
            assert before and after and after[-1] != before[-1], (action, before, after)
            moved.add(action)
    assert moved
    profile_types = {"billing": "stripe", "github": "github", "mercadopago": "mercadopago", "paddle": "paddle",
                     "shopify": "shopify"}[kind]
    assert {e.type for e in world.events} <= set(get_profile(profile_types).event_types())


@pytest.mark.slow
@pytest.mark.parametrize("name", ["paddle_billing", "mercadopago_fetch", "shopify_app", "shopify_app_fetch"])
def test_the_correct_provider_receiver_survives_a_search(name: str, tmp_path: Path,
                                                         provider: tuple[ServerState, str]) -> None:
    state, api = provider
    result = explore(ProviderReceivers(name, tmp_path, api).target(), max_examples=60, seed=SEED,
                     provider_state=state)
    assert result.failure is None, "\n".join([result.failure.summary(), *format_steps(
        result.failure.steps, result.failure.event_types)]) if result.failure else ""
    assert result.error is None and result.examples >= 60 and result.acked > 0
    # a receiver reading the provider API is told what explore's search never holds
    note = held_fetch_note(state)
    assert (note is not None) == name.endswith("_fetch"), note
    if note is not None:
        assert "certify's fetch-overtaken holds one" in note


@pytest.mark.slow
@pytest.mark.parametrize("name", ["paddle_billing_no_dedupe", "mercadopago_fetch_no_dedupe", "shopify_app_no_dedupe"])
def test_the_twin_without_dedupe_is_found_shrunk_and_replayed(name: str, tmp_path: Path,
                                                             provider: tuple[ServerState, str]) -> None:
    state, api = provider
    target = ProviderReceivers(name, tmp_path, api).target()
    result = explore(target, max_examples=200, seed=SEED, provider_state=state)
    failure = result.failure
    assert failure is not None, f"{name}: no finding in {result.examples} examples"
    assert "duplicated" in {f.check_id for f in failure.findings}, failure.summary()
    assert failure.delivery_steps <= 4, "\n".join(format_steps(failure.steps, failure.event_types))
    profile = PROVIDER_RECEIVERS[name]
    path = write_schedule(failure, tmp_path / "failing-schedule.json", target=target.describe, profile=profile)
    seed, steps, doc = load_schedule(path)  # checked against the profile's own world
    assert (seed, steps) == (failure.seed, failure.steps) and doc["profile"] == profile
    again = replay(target, steps, seed, provider_state=state)
    assert again is not None and "duplicated" in {f.check_id for f in again.findings}


def test_a_schedule_of_another_world_names_the_bad_step(tmp_path: Path) -> None:
    """A billing action in a Paddle schedule is refused before anything runs, naming the step."""
    from hookproof.scenarios.statemachine import ScheduleError

    path = tmp_path / "s.json"
    path.write_text('{"format": "hookproof-schedule/1", "seed": 3, "profile": "paddle", '
                    '"steps": [{"op": "emit", "action": "subscribe"}, {"op": "emit", "action": "pay"}]}')
    with pytest.raises(ScheduleError, match=r"step 2 \(emit\): action must be one of buy, subscribe"):
        load_schedule(path)


def test_a_schedule_is_checked_on_a_world_told_what_the_endpoint_is_sent(tmp_path: Path) -> None:
    """A GitHub App sent the checks gets a check suite per push: a schedule delivering one checks
    against a world told so, as explore's was; a world told nothing has emitted the push alone."""
    from hookproof.scenarios.explore_targets import sends_of, tell_world
    from hookproof.scenarios.statemachine import ScheduleError
    from hookproof.simulator.world import GITHUB_CHECK_TYPES

    path = tmp_path / "s.json"
    path.write_text('{"format": "hookproof-schedule/1", "seed": 3, "profile": "github", "steps": '
                    '[{"op": "emit", "action": "push"}, {"op": "deliver", "event": 4}]}')
    github = get_profile("github", subscribed=list(GITHUB_CHECK_TYPES))  # as the config's profile() makes it
    checks = sends_of(github, frozenset({"push", *GITHUB_CHECK_TYPES}))
    seed, steps, doc = load_schedule(path, tell=lambda world: tell_world(world, checks, None))
    assert (seed, len(steps)) == (3, 2)
    assert doc["events"] == ["push", "check_suite.requested", "check_run.created", "check_run.created",
                             "check_run.completed", "check_run.completed", "check_suite.completed"]
    with pytest.raises(ScheduleError, match=r"step 2 \(deliver\): no event #4 \(the world of seed 3 has emitted 1"):
        load_schedule(path)
    # a Stripe endpoint's schedule, told its types and Checkout modes, loads as it always did
    stripe = tmp_path / "stripe.json"
    stripe.write_text('{"format": "hookproof-schedule/1", "seed": 5, "profile": "stripe", "steps": '
                      '[{"op": "emit", "action": "subscribe"}, {"op": "deliver", "event": 1}]}')
    told = sends_of(get_profile("stripe"), None)
    assert load_schedule(stripe, tell=lambda world: tell_world(world, told, frozenset({"payment"})))[1] \
        == load_schedule(stripe)[1]


def test_new_steps_round_trip_through_the_schedule_file() -> None:
    steps = [Step("burst_related", events=(1, 2)), Step("redeliver_window", count=3),
             Step("api_fault", event=2, status=404)]
    assert [Step.from_dict(s.to_dict()) for s in steps] == steps
    from hookproof.scenarios.statemachine import format_step

    types = ["customer.created", "payment_intent.succeeded", "charge.succeeded"]
    assert [format_step(s, types) for s in steps] == [
        "burst_related #1 payment_intent.succeeded, #2 charge.succeeded", "redeliver_window last 3",
        "api_fault #2 charge.succeeded -> 404"]


# ---- GitHub: the Node App at its URL, through `hookproof explore` ------------------------------

@pytest.fixture(scope="module")
def node() -> str:
    node = shutil.which("node")
    if node is None:
        require_service("node", "node is not installed")
    for package in ("@octokit/webhooks", "better-sqlite3"):
        if not (NODE_DIR / "node_modules" / package).is_dir():
            require_service(package, "run `npm ci` in examples/receivers/node first")
    return node  # type: ignore[return-value]


def _github_run(name: str, tmp_path: Path, max_examples: int) -> Any:
    from hookproof.commands.explore import run_explore
    from tests.examples.test_github_app import config

    cfg = config(name, tmp_path)
    return cfg, run_explore(cfg, out_dir=tmp_path / "report", max_examples=max_examples, seed=SEED, repeats=3)


@pytest.mark.slow
def test_the_github_app_survives_explore_at_its_url(node: str, tmp_path: Path) -> None:
    _, run = _github_run("github_app", tmp_path, 25)
    assert run.result.failure is None, run.lines
    assert run.report.verdict == "pass", run.lines
    assert run.hit_rate is not None and run.hit_rate.hits == 0 and run.hit_rate.acked > 0


@pytest.mark.slow
def test_the_github_twin_without_dedupe_is_found_and_replayed(node: str, tmp_path: Path) -> None:
    from hookproof.commands.explore import explore_target

    cfg, run = _github_run("github_app_no_dedupe", tmp_path, 60)
    failure = run.result.failure
    assert failure is not None, run.lines
    assert "duplicated" in {f.check_id for f in failure.findings}, failure.summary()
    assert failure.delivery_steps <= 4, "\n".join(format_steps(failure.steps, failure.event_types))
    assert run.schedule_path is not None
    seed, steps, doc = load_schedule(run.schedule_path)  # what `hookproof replay` reads
    assert doc["profile"] == "github"
    with explore_target(cfg) as (target, state):  # what `hookproof replay` runs it against
        again = replay(target, steps, seed, provider_state=state)
    assert again is not None and "duplicated" in {f.check_id for f in again.findings}


@pytest.mark.slow
def test_the_github_twin_ordering_by_updated_at_is_found_through_a_same_second_tie(node: str, tmp_path: Path) -> None:
    """GitHub's ``updated_at`` counts whole seconds and GitHub sends no event time. The Node twin
    storing the payload's state when its ``updated_at`` is not older (``>=``) passed explore while
    the world spaced an issue's changes a second apart; a ``triage`` (labeled, commented on and
    closed in one second) lets a late event of that second reopen the issue (as does a pull
    request's synchronize after its merge of the same second, ``bot_merge``). The correct App
    fetches the issue (`test_the_github_app_survives_explore_at_its_url`)."""
    _, run = _github_run("github_app_updated_at", tmp_path, 100)
    failure = run.result.failure
    assert failure is not None, run.lines
    assert {f.check_id for f in failure.findings} <= {"regressed", "stale"}, failure.summary()
    # a tie of one second: an issue's triage, or a pull request's close and reopen or sync and merge
    assert any(step.op == "emit" and step.action in ("triage", "rerun_ci", "bot_merge")
               for step in failure.steps), format_steps(failure.steps, failure.event_types)


# ---- the config's enabled_events and the team's own keys ------------------------------------------

def test_an_event_type_the_config_does_not_enable_is_never_sent(tmp_path: Path,
                                                                provider: tuple[ServerState, str]) -> None:
    """Paddle, enabled for its subscriptions only: no transaction or adjustment event is ever
    attempted, whatever the search does (the provider's own names)."""
    import dataclasses

    state, api = provider
    enabled = frozenset({"subscription.created", "subscription.canceled", "subscription.past_due"})
    target = dataclasses.replace(ProviderReceivers("paddle_billing", tmp_path, api).target(), enabled=enabled)
    sent: set[str] = set()
    from hookproof.scenarios.session import Session

    for seed in (1, 2, 3):
        session = Session(target, seed, provider_state=state)
        try:
            for step in [Step("emit", action="subscribe"), Step("emit", action="buy"),
                         Step("emit", action="fail_renewal", object=0), Step("emit", action="refund", object=0)]:
                session.apply(step)
            for index in session.pending():
                session.apply(Step("burst", event=index, copies=2))
            assert session.finish() is None
            sent |= {a.event_type for a in session.history.attempts()}
        finally:
            session.close()
    assert sent == {"subscription.created", "subscription.past_due"}
    with pytest.raises(ValueError, match="is a transaction.created, which the receiver is not sent"):
        replay(target, [Step("emit", action="buy"), Step("deliver", event=0)], 4, provider_state=state)


def test_an_unknown_enabled_event_is_a_config_error_listing_the_names() -> None:
    from hookproof.config import parse_config
    from hookproof.errors import ConfigError

    text = ('[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "paddle"\nsecret = "pdl_ntfset_x"\n'
            'enabled_events = ["subscription.created", "invoice.paid"]\n\n'
            '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n')
    with pytest.raises(ConfigError, match=r"Paddle.* sends no event 'invoice.paid' \(known: address.created, adjustment.created, "):
        parse_config(text, "hookproof.toml")


def _ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, broken: bool) -> Any:
    """The README's team-keys ledger (tests/test_readme.py) as an in-process app, with its own
    hookproof.toml's keys, counter and invoice states."""
    import importlib
    import re
    import sys

    from hookproof.config import load_config
    from tests.test_readme import _ledger_project

    monkeypatch.setenv("WEBHOOK_SECRET", "whsec_readme_ledger_example")
    monkeypatch.setenv("HOOKPROOF_SECRET", "whsec_readme_ledger_example")
    path = _ledger_project(tmp_path, broken=broken)
    # In process, and subscribed to the two types it handles: it keeps no row for an unpaid
    # invoice, so with its invoice state query an invoice.created it was sent is missing.
    text = re.sub(r'url = "http://127\.0\.0\.1:\d+/webhooks"',
                  'app = "ledger:app"\nenabled_events = ["charge.succeeded", "invoice.paid"]', path.read_text())
    path.write_text(re.sub(r"\[target\.start\]\n[^\n]*\n[^\n]*\n", "", text), encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # ledger.py's database, and the observer's, is ./ledger.db
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ledger", raising=False)
    ledger = importlib.import_module("ledger")
    with sqlite3.connect(tmp_path / "ledger.db") as conn:
        conn.executescript(ledger.SCHEMA)
    return load_config(path)


@pytest.mark.slow
def test_the_readme_team_keys_receiver_survives_explore(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its effects are keyed ``payment:{data.object.payment_intent}`` and ``renewal:…``, its
    balance is a counter: under the config's keys explore flags none of them."""
    from hookproof.commands.explore import run_explore

    cfg = _ledger(tmp_path, monkeypatch, broken=False)
    run = run_explore(cfg, out_dir=tmp_path / "out", max_examples=25, seed=SEED)
    assert run.result.failure is None, run.lines
    assert run.report.verdict == "pass" and run.result.acked > 0


@pytest.mark.slow
def test_the_readme_team_keys_twin_is_found_by_its_counter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the event-id dedupe only the balance shows the double credit: explore compares
    the team's counter as certify does, and shrinks it to one repeated invoice.paid."""
    from hookproof.commands.explore import run_explore

    cfg = _ledger(tmp_path, monkeypatch, broken=True)
    run = run_explore(cfg, out_dir=tmp_path / "out", max_examples=40, seed=SEED)
    failure = run.result.failure
    assert failure is not None, run.lines
    (finding,) = failure.findings
    assert finding.check_id == "counter" and finding.key.startswith("cus_"), run.lines
    assert finding.actual == 2 * finding.expected
    assert failure.delivery_steps == 1 and "invoice.paid" in format_steps(failure.steps, failure.event_types)[1]


def test_a_paddle_counter_reads_its_string_minor_units() -> None:
    """Paddle sends money in minor units as strings (``"3266"``): a counter on
    ``data.details.totals.grand_total`` takes it as the integer it writes; a field that is not
    one is still refused, naming the path."""
    from hookproof.config import parse_config
    from hookproof.errors import ConfigError
    from hookproof.simulator.world import emit_events, new_world

    text = ('[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "paddle"\nsecret = "pdl_ntfset_x"\n\n'
            '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n'
            'counter = "SELECT key, total FROM totals"\n\n'
            '[counters."transaction.completed"]\nkey = "{data.customer_id}"\namount = "data.details.totals.grand_total"\n')
    mapping = parse_config(text, "hookproof.toml").key_mapping()
    events = emit_events(new_world("paddle", 5), "transaction.completed", 2)
    assert events
    for event in events:
        total = event.object["details"]["totals"]["grand_total"]
        assert isinstance(total, str)
        assert mapping.counter_of(event) == (event.object["customer_id"], int(total))
    with pytest.raises(ConfigError, match="data.currency_code: is '[A-Z]{3}', not an amount"):
        parse_config(text.replace("data.details.totals.grand_total", "data.currency_code"), "hookproof.toml")


@pytest.mark.slow
def test_the_paddle_twin_claiming_notification_ids_is_found_by_a_replayed_window(tmp_path: Path) -> None:
    """A new user's Paddle receiver claimed ``notification_id`` instead of ``event_id``: certify's
    mass-redelivery found it, explore passed it at 300 examples, its window redelivery sending
    the first notification again. `redeliver_window` now sends Paddle's replay (a new
    notification of the same event, `Profile.replayed`): the twin is found in at least one of
    three searches at the default budget, always through a replayed window, never otherwise."""
    from examples.receivers.paddle_billing import create_app

    count = itertools.count()
    secret = SECRETS["paddle"]

    def open_() -> Prepared:
        db = tmp_path / f"ntf-{next(count)}.sqlite"
        return Prepared(Target(app=create_app(str(db), secret, dedupe_on="notification_id")),
                        sqlite_observer(db, "paddle"))

    target = ExploreTarget(profile=get_profile("paddle"), secrets=(secret,), open=open_,
                           describe="in-process paddle_billing claiming notification_id", settle_window_s=0.02)
    found = []
    for seed in (1, 3, 7):  # one finding is the test: the searches after it would only take time
        failure = explore(target, max_examples=100, seed=seed, provider_state=ServerState()).failure
        if failure is not None:
            found.append(failure)
            break
    assert found, "the notification_id twin passed three searches"
    for failure in found:
        assert {f.check_id for f in failure.findings} == {"duplicated"}, failure.summary()
        assert any(step.op == "redeliver_window" for step in failure.steps), format_steps(
            failure.steps, failure.event_types)
        assert all(REPLAY_NAMED.search(f.message) for f in failure.findings), failure.summary()


#: How a ``duplicated`` finding names the attempts that were Paddle's manual replay.
REPLAY_NAMED = re.compile(r"; attempts? [0-9, ]+(?: and [0-9]+ more)? (?:was|were) a manual replay: a new "
                          r"notification_id, the same event_id(?:;|$)")


def _notification_twin(tmp_path: Path) -> ExploreTarget:
    """`paddle_billing` claiming ``notification_id`` (which Paddle's replay renews), in process."""
    from examples.receivers.paddle_billing import create_app

    count = itertools.count()
    secret = SECRETS["paddle"]

    def open_() -> Prepared:
        db = tmp_path / f"ntf-{next(count)}.sqlite"
        return Prepared(Target(app=create_app(str(db), secret, dedupe_on="notification_id")),
                        sqlite_observer(db, "paddle"))

    return ExploreTarget(profile=get_profile("paddle"), secrets=(secret,), open=open_,
                         describe="in-process paddle_billing claiming notification_id", settle_window_s=0.02)


def test_a_replayed_window_is_recorded_and_named_as_paddles_replay(tmp_path: Path) -> None:
    """A checkout's nine events delivered (a new customer's: its ``customer.created`` and
    ``address.created`` among them), then the last two replayed by Paddle: the replays are
    tagged ``replay`` (and ``redeliver``) in the history, and the twin's ``duplicated`` finding on
    the checkout's fulfilment names the replayed attempt in Paddle's words."""
    steps = [Step("emit", action="buy"), *(Step("deliver", event=i) for i in range(9)),
             Step("redeliver_window", count=2)]
    failure = replay(_notification_twin(tmp_path), steps, SEED)
    assert failure is not None
    (finding,) = failure.findings
    assert (finding.check_id, finding.key.split(":")[0], finding.attempts) == ("duplicated", "fulfil", (8, 10))
    assert finding.message.startswith("applied 2 times instead of once; 2 delivery attempt(s) carried it; attempt 10 "
                                      "was a manual replay: a new notification_id, the same event_id; "), finding.message
    tags = [a.faults for a in failure.attempts]
    assert tags == [()] * 9 + [("redeliver", "replay")] * 2


@pytest.mark.slow
def test_the_shopify_twin_claiming_webhook_ids_is_found_through_a_second_subscription(tmp_path: Path) -> None:
    """A new user's Shopify app deduplicating on ``X-Shopify-Webhook-Id`` passed explore: its
    window redelivery sent each event's first delivery again. `redeliver_window` now sends the
    event through a second subscription to its topic (`ShopifyProfile.replayed`: a new
    Webhook-Id, the same Event-Id): the twin is found at the default budget (in 8 searches of 8,
    seeds 1 to 8), always through a window redelivery."""
    from examples.receivers.shopify_app import create_app

    count = itertools.count()
    secret = SECRETS["shopify"]

    def open_() -> Prepared:
        db = tmp_path / f"wh-{next(count)}.sqlite"
        return Prepared(Target(app=create_app(str(db), secret, dedupe_by_webhook_id=True)),
                        sqlite_observer(db, "shopify"))

    target = ExploreTarget(profile=get_profile("shopify"), secrets=(secret,), open=open_,
                           describe="in-process shopify_app claiming X-Shopify-Webhook-Id", settle_window_s=0.02)
    failures = [explore(target, max_examples=100, seed=seed, provider_state=ServerState()).failure
                for seed in (2, 3, 5)]
    found = [f for f in failures if f is not None]
    assert len(found) == 3, "the X-Shopify-Webhook-Id twin passed a search"
    for failure in found:
        assert {f.check_id for f in failure.findings} == {"duplicated"}, failure.summary()
        assert any(step.op == "redeliver_window" for step in failure.steps), format_steps(
            failure.steps, failure.event_types)
        assert all("through a second subscription to its topic: a new X-Shopify-Webhook-Id" in f.message
                   for f in failure.findings), failure.summary()


@pytest.mark.slow
def test_the_shopify_twin_claiming_the_event_id_alone_is_found(tmp_path: Path) -> None:
    """One merchant action's topics share ``X-Shopify-Event-Id`` (shopify.dev, "Webhooks delivery
    structure"): a twin claiming it without the topic drops a checkout's ``orders/paid`` after its
    ``orders/create``. Found at the default budget (in 3 searches of 3, seeds 2, 3, 5), with ``lost``
    (and ``stale``: an order whose every event was dropped is never stored)."""
    from examples.receivers.shopify_app import create_app

    count = itertools.count()
    secret = SECRETS["shopify"]

    def open_() -> Prepared:
        db = tmp_path / f"ev-{next(count)}.sqlite"
        return Prepared(Target(app=create_app(str(db), secret, dedupe_by_event_id_alone=True)),
                        sqlite_observer(db, "shopify"))

    target = ExploreTarget(profile=get_profile("shopify"), secrets=(secret,), open=open_,
                           describe="in-process shopify_app claiming X-Shopify-Event-Id alone", settle_window_s=0.02)
    results = [explore(target, max_examples=100, seed=seed, provider_state=ServerState()) for seed in (2, 3, 5)]
    found = [r for r in results if r.failure is not None]
    assert len(found) == 3, "the twin claiming X-Shopify-Event-Id alone passed a search"
    for result in found:
        assert result.failure is not None
        assert "lost" in {f.check_id for f in result.failure.findings} <= {"lost", "stale"}, result.failure.summary()
        # the report's lost finding says, as certify's does, which event sharing its id was handled first
        report = machine_report(result, "twin", get_profile("shopify"))
        lost = [f.message for c in report.checks if c.check_id == "lost" for f in c.findings]
        assert lost and all(", another event sharing its id, was acknowledged" in m
                            and "deduplicate on X-Shopify-Topic with it" in m for m in lost), lost


@pytest.mark.slow
def test_the_shopify_twin_overwriting_within_one_updated_at_second_is_found(tmp_path: Path) -> None:
    """Shopify's ``updated_at`` counts whole seconds. A twin guarding an order's state with
    ``stored updated_at <= incoming`` passed explore while the world spaced an order's changes a
    second apart; its ``quick_cancel`` (paid, partly refunded and cancelled in one second) lets
    an older payload of the second overwrite a newer one. Found at the default budget (in 6
    searches of 6, seeds 1 to 6) from a quick cancellation; the correct receiver (then
    ``X-Shopify-Triggered-At``) passed 3 of 3."""
    from examples.receivers.shopify_app import create_app

    count = itertools.count()
    secret = SECRETS["shopify"]

    def open_() -> Prepared:
        db = tmp_path / f"tie-{next(count)}.sqlite"
        return Prepared(Target(app=create_app(str(db), secret, same_second="overwrite")),
                        sqlite_observer(db, "shopify"))

    target = ExploreTarget(profile=get_profile("shopify"), secrets=(secret,), open=open_,
                           describe="in-process shopify_app guarding with updated_at <=", settle_window_s=0.02)
    for seed in (2, 4, 6):
        failure = explore(target, max_examples=100, seed=seed, provider_state=ServerState()).failure
        assert failure is not None, f"seed {seed}: the <= twin passed"
        assert {f.check_id for f in failure.findings} <= {"regressed", "stale"}, failure.summary()
        assert any(step.op == "emit" and step.action == "quick_cancel" for step in failure.steps), format_steps(
            failure.steps, failure.event_types)


def test_explore_can_triage_an_issue_within_one_second_and_suspend_an_installation() -> None:
    """GitHub's explore operations include a triage in one ``updated_at`` second (labeled,
    commented on, closed: `GitHubWorld.triage`), an unlabel, and an installation suspended,
    unsuspended, its repositories added and removed; each emits the world's own types."""
    ops = ops_for("github")
    world = new_world("github", 3)
    ops.apply(world, "open_issue", None)
    assert ("triage", 0) in ops.legal(world) and ("unlabel", 0) not in ops.legal(world)
    start = len(world.events)
    ops.apply(world, "triage", 0)
    issue = world.events[start:]
    assert [(e.type, e.status) for e in issue] == [("issues.labeled", "open"), ("issue_comment.created", "open"),
                                                   ("issues.closed", "closed")]
    assert len({e.extra["payload"]["issue"]["updated_at"] for e in issue}) == 1
    assert ("triage", 0) not in ops.legal(world) and ("unlabel", 0) in ops.legal(world)
    ops.apply(world, "install", None)
    installation = len(world.objects("installation")) - 1
    assert {a for a, i in ops.legal(world) if i == installation} >= {"suspend", "add_repository", "uninstall"}
    for action in ("add_repository", "remove_repository", "suspend", "unsuspend", "suspend", "uninstall"):
        assert (action, installation) in ops.legal(world), action
        ops.apply(world, action, installation)
    assert [e.type for e in world.events[-6:]] == [
        "installation_repositories.added", "installation_repositories.removed", "installation.suspend",
        "installation.unsuspend", "installation.suspend", "installation.deleted"]
    assert not [a for a, i in ops.legal(world) if i == installation and a in ops.moves]
    assert ops.moves["triage"] == "issue" and ops.moves["suspend"] == "installation"


def test_explore_re_runs_a_checks_app_s_suites_and_clicks_a_button() -> None:
    """To an App sent the checks, a completed check suite (a push's, a pull request head's) may be
    re-run whole (``rerun_suite``), its newest ``test`` run re-run (``rerun_check``) and its newest
    ``lint`` run's button clicked (``request_action``), each emitting GitHub's events and owing its
    own key, a second click too; a world told no checks has no suite, so none is ever legal, and an
    endpoint listing only the checks is drawn them (`focused`)."""
    ops = ops_for("github")
    plain = new_world("github", 3)
    ops.apply(plain, "push", None)
    ops.apply(plain, "open_pull_request", None)
    assert not [a for a, _ in ops.legal(plain) if a in ("rerun_suite", "rerun_check", "request_action")]

    def told() -> Any:
        world = new_world("github", 3)
        world.sent_only(lambda t: True)
        return world

    world = told()
    ops.apply(world, "open_pull_request", None)
    assert [a for a in ops.legal(world) if a[0] in ("rerun_suite", "rerun_check", "request_action")] == [
        ("rerun_suite", 0), ("rerun_check", 0), ("request_action", 0)]
    emitted = []
    for action in ("rerun_suite", "rerun_check", "request_action", "request_action"):
        start = len(world.events)
        ops.apply(world, action, 0)
        emitted.append([(e.type, (e.business_key or "").split(":")[0]) for e in world.events[start:]])
    ci = [("check_run.created", ""), ("check_run.created", ""), ("check_run.completed", ""),
          ("check_run.completed", ""), ("check_suite.completed", "")]
    assert emitted == [[("check_suite.rerequested", "rerun"), *ci],
                       [("check_run.rerequested", "rerun-run"), ("check_run.created", ""),
                        ("check_run.completed", ""), ("check_suite.completed", "")],
                       [("check_run.requested_action", "action")], [("check_run.requested_action", "action")]]
    clicks = world.events[-2:]
    assert clicks[0].business_key != clicks[1].business_key and clicks[0].object_id == clicks[1].object_id
    runs = world.runs_of(world.objects("check_suite")[0])
    assert world.events[-4].object_id == runs[-1]  # the re-run check's new run, completed
    assert clicks[0].object_id == runs[2] and world.peek(runs[2])["name"] == "lint"  # the newest lint run
    checks_only = focused(ops, lambda t: t.startswith(("check_suite.", "check_run.")), told)
    assert {a for a, _ in checks_only.legal(world)} >= {"rerun_suite", "rerun_check", "request_action", "push"}
    assert "open_issue" not in {a for a, _ in checks_only.legal(world)}


@pytest.mark.slow
def test_the_github_twin_keeping_the_first_of_a_tie_is_found_through_a_pull_request(node: str, tmp_path: Path) -> None:
    """The twin ordering payloads by ``updated_at`` with ``>`` (`github_app_keep_first.js`) keeps
    the first of a same-second tie: a pull request closed and reopened in one second (``rerun_ci``)
    or pushed to and merged in one second (``bot_merge``), or an issue's triage, leaves a stale
    state. Explore finds it."""
    _, run = _github_run("github_app_keep_first", tmp_path, 100)
    failure = run.result.failure
    assert failure is not None, run.lines
    assert {f.check_id for f in failure.findings} <= {"regressed", "stale"}, failure.summary()
    assert any(step.op == "emit" and step.action in ("triage", "rerun_ci", "bot_merge") for step in failure.steps)
