"""`hookproof.certify`'s refusals before anything is sent: an unreachable receiver, a
remote target, and `--chaos` without a receiver hookproof controls."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from hookproof.certify import certify, check_chaos, check_loopback, check_reachable
from hookproof.config import load_config
from hookproof.errors import ConfigError, UsageError
from hookproof.headline import HEADLINE_PREFIX
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from tests.hostile.harness import run_hookproof
from tests.support import free_port

OBSERVER = '[observer]\nkind = "sql"\nurl = "sqlite:///observed.sqlite"\neffects = "SELECT business_key FROM effects"\n'
CHAOS_LINE = ("hookproof: --chaos needs [target.process] or [target.docker] in the config "
              "(hookproof must control the receiver)")


def _config(tmp_path: Path, url: str, extra: str = "") -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text(f'[target]\nurl = "{url}"\nprofile = "stripe"\nsecret = "whsec_certify_test"\n{extra}\n{OBSERVER}',
                    encoding="utf-8")
    return path


def test_check_reachable_names_target_url_when_nothing_listens(tmp_path: Path) -> None:
    port = free_port()
    cfg = load_config(_config(tmp_path, f"http://127.0.0.1:{port}/webhooks"))
    with pytest.raises(ConfigError) as caught:
        check_reachable(cfg)
    assert caught.value.field == "target.url"
    assert str(caught.value) == (f"target.url: cannot reach 127.0.0.1:{port} (nothing listens there); "
                                 "start the receiver or fix the URL")


def test_check_reachable_passes_when_something_listens(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        check_reachable(load_config(_config(tmp_path, f"http://127.0.0.1:{port}/webhooks")))


def test_check_reachable_leaves_a_process_target_to_hookproof(tmp_path: Path) -> None:
    port = free_port()  # nothing listens: hookproof starts [target.process] itself
    cfg = load_config(_config(tmp_path, f"http://127.0.0.1:{port}/webhooks",
                              '[target.process]\ncommand = "receiver --port {port}"\n'))
    check_reachable(cfg)


def test_check_loopback_names_the_command(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, "http://hooks.example.com/webhooks"))
    with pytest.raises(UsageError, match=r"^target.url: http://hooks.example.com/webhooks is not a loopback "
                                         r"address; explore sends concurrent duplicate bursts, so a remote "
                                         r"receiver needs --allow-remote$"):
        check_loopback(cfg, False, command="explore", sends="concurrent duplicate bursts")
    check_loopback(cfg, True, command="explore")


@pytest.mark.parametrize("extra", ["", '[target.start]\ncommand = "receiver"\nhealth_url = "http://127.0.0.1:9/h"\n'],
                         ids=["url-only", "start-command"])
def test_chaos_needs_a_receiver_hookproof_can_fault(tmp_path: Path, extra: str) -> None:
    """A [target.start] receiver is started but never faulted: it does not count."""
    cfg = load_config(_config(tmp_path, f"http://127.0.0.1:{free_port()}/webhooks", extra))
    check_chaos(cfg, False)
    with pytest.raises(UsageError) as caught:
        certify(cfg, out_dir=tmp_path / "out", chaos=True)
    assert f"hookproof: {caught.value}" == CHAOS_LINE
    assert not (tmp_path / "out").exists()


def test_chaos_with_a_process_target_is_allowed(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, f"http://127.0.0.1:{free_port()}/webhooks",
                              '[target.process]\ncommand = "receiver --port {port}"\n'))
    check_chaos(cfg, True)


@pytest.mark.slow
def test_certify_chaos_without_control_is_one_line_exit_2(tmp_path: Path) -> None:
    run = run_hookproof("certify", "--config", str(_config(tmp_path, f"http://127.0.0.1:{free_port()}/webhooks")),
                        "--chaos", "--out", str(tmp_path / "out"), timeout_s=60, cwd=tmp_path)
    assert run.returncode == 2, run
    assert run.stderr.strip().splitlines() == [CHAOS_LINE], run
    assert "Traceback" not in run.stdout + run.stderr
    assert not (tmp_path / "out" / "report.json").exists()


# ---- no false alarms: each rule with a correct receiver that passes and a broken one that fails ----

NO_ALARM_SCENARIOS = ["test-mode-to-live", "foreign-account", "unknown-event-type", "future-timestamp"]


@pytest.mark.slow
@pytest.mark.parametrize(("receiver", "failing"), [
    ("foreign_acked", {}),  # acks 200 and ignores another mode's or account's event: correct
    ("inbox_sync", {}),  # refuses them with 400: correct too
    ("test_mode_applies", {"test-mode-to-live": ["unexpected"]}),
    ("unknown_type_400", {"unknown-event-type": ["valid_not_rejected"]}),
])
def test_certify_holds_receivers_to_the_contract_not_to_our_taste(
        tmp_path: Path, receiver: str, failing: dict[str, list[str]]) -> None:
    """Over real HTTP (the receiver runs as its own process): a mode or account mismatch
    may be acknowledged or refused, never applied; an unhandled type must get a 2xx; a
    future-dated Stripe delivery is accepted by Stripe's SDK, so it must be applied."""
    from examples.receivers import config as receiver_config

    cfg = receiver_config(receiver, tmp_path, "whsec_certify_no_false_alarms", seed=7,
                          scenarios=NO_ALARM_SCENARIOS, settle_window_s=0.15)
    report = certify(cfg, out_dir=tmp_path / "out").report
    verdicts = {s.id: s.verdict for s in report.scenarios}
    # Stripe never sends an endpoint an event of an account it does not listen to
    assert verdicts == {s: "not_applicable" if s == "foreign-account" else "fail" if s in failing else "pass"
                        for s in NO_ALARM_SCENARIOS}, report.scenarios
    assert {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.findings} == failing
    assert all(s.reason for s in report.scenarios if s.verdict == "unknown")


FUTURE_SCENARIOS = ["future-timestamp", "stale-timestamp"]
STANDARD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@pytest.mark.slow
@pytest.mark.parametrize(("receiver", "failing"), [
    ("inbox_sync", {}),  # Standard Webhooks' library refuses a timestamp 300 s off either way
    ("no_timestamp_tolerance", {s: ["unexpected"] for s in FUTURE_SCENARIOS}),
])
def test_a_future_dated_delivery_is_a_finding_where_the_official_verifier_rejects_it(
        tmp_path: Path, receiver: str, failing: dict[str, list[str]]) -> None:
    """Over real HTTP, under Standard Webhooks (whose verifier rejects future timestamps):
    a receiver that accepts and applies a future-dated delivery fails `unexpected`."""
    from examples.receivers import config as receiver_config

    cfg = receiver_config(receiver, tmp_path, STANDARD_SECRET, seed=7, profile="standard-webhooks",
                          scenarios=FUTURE_SCENARIOS, settle_window_s=0.15)
    report = certify(cfg, out_dir=tmp_path / "out").report
    assert {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.findings} == failing
    assert {s.id: s.verdict for s in report.scenarios} == {s: "fail" if failing else "pass" for s in FUTURE_SCENARIOS}
    if failing:  # each applied key names why its deliveries were invalid
        applied = {s.id: {f.message for f in s.findings if f.message.startswith("applied")} for s in report.scenarios}
        assert applied == {
            "future-timestamp": {"applied although every delivery of it was signed with a future timestamp the "
                                 "profile's official verifier rejects (seen in the first read after delivering)"},
            "stale-timestamp": {"applied although every delivery of it was invalid (forged, stale or foreign) "
                                "(seen in the first read after delivering)"}}


@pytest.mark.slow
def test_a_future_dated_stripe_delivery_refused_is_an_advisory_not_a_finding(tmp_path: Path) -> None:
    """Stripe's SDK accepts a future timestamp: a receiver stricter than that (it refuses one
    more than 300 s ahead, tests/hookproof/future_strict.py) passes with an advisory."""
    from examples.receivers import PROJECT_ROOT
    from hookproof.demo import receiver_config

    cfg = receiver_config("future_strict", tmp_path, "whsec_certify_future_strict", seed=7,
                          scenarios=["future-timestamp"], settle_window_s=0.15,
                          module="tests.hookproof.future_strict", cwd=PROJECT_ROOT)
    (scenario,) = certify(cfg, out_dir=tmp_path / "out").report.scenarios
    assert scenario.verdict == "pass" and scenario.findings == ()
    advisories = [f for c in scenario.checks for f in c.findings]
    assert advisories and all(f.check_id == "valid_not_rejected" and f.severity == "advisory" for f in advisories)
    assert all(re.match(r"\d+ future-dated [\w.]+ event\(s\) refused \d+ time\(s\) with 400; ", f.message)
               for f in advisories), [f.message for f in advisories]


KEPT_SCENARIOS = ["duplicate-sequential", "reorder", "forged-signature"]


@pytest.mark.slow
def test_a_second_run_of_one_seed_against_a_kept_database_is_no_pass_and_names_the_cause(tmp_path: Path) -> None:
    """Over real HTTP, the demo's reference receiver twice on one SQLite file: with the same
    seed every event id and business key is the first run's again, so the receiver would dedupe
    them all and every check pass; the scenarios whose keys or objects were there already are
    errors naming how many and why, the headline says so; another seed is judged, and passes."""
    from hookproof.demo import receiver_config

    cfg = receiver_config("inbox_sync", tmp_path, "whsec_certify_kept_database", seed=7, scenarios=KEPT_SCENARIOS,
                          settle_window_s=0.15)
    first = certify(cfg, out_dir=tmp_path / "first").report
    assert (first.verdict, [s.verdict for s in first.scenarios]) == ("pass", ["pass"] * 3), first.scenarios
    assert not [n for n in first.notes if n.startswith(HEADLINE_PREFIX)]

    second = certify(cfg, out_dir=tmp_path / "second").report
    cause = ("a database kept from an earlier run with the same seed (run.seed / --seed 7): use a fresh database, "
             "or another seed")
    assert second.verdict == "fail"
    assert second.notes[0] == (f"{HEADLINE_PREFIX}{cause}; the receiver already held the business keys or objects of "
                               "2 scenario(s) (duplicate-sequential, reorder) before their first delivery, so they "
                               "were not judged")
    by_id = {s.id: s for s in second.scenarios}
    assert {i: s.verdict for i, s in by_id.items()} == {
        "duplicate-sequential": "error", "reorder": "error", "forged-signature": "pass"}  # nothing of it was applied
    judged = ("before the scenario's first delivery: a receiver that dedupes them would apply nothing new and every "
              f"check would pass, so nothing was sent and the scenario was not judged; likely cause: {cause}")
    keys = sorted({a.business_key for s in first.scenarios if s.id == "duplicate-sequential" for a in s.attempts
                   if a.business_key and a.valid})
    assert by_id["duplicate-sequential"].reason == (
        f"the receiver already held {len(keys)} of its {len(keys)} business key(s) (e.g. {keys[0]}) {judged}")
    states = sorted({a.object_id for s in first.scenarios if s.id == "reorder" for a in s.attempts
                     if a.object_id and a.object_id.startswith("sub_")})
    assert by_id["reorder"].reason == (
        f"the receiver already held a state for {len(states)} of its object(s) (e.g. {states[0]}) {judged}")

    other = cfg.model_copy(update={"run": cfg.run.model_copy(update={"seed": 8})})
    third = certify(other, out_dir=tmp_path / "third").report  # the same database, fresh ids
    assert (third.verdict, [s.verdict for s in third.scenarios]) == ("pass", ["pass"] * 3), third.scenarios


@pytest.mark.slow
def test_a_receiver_that_lost_every_state_row_is_stale_not_unknown(tmp_path: Path) -> None:
    """Over real HTTP: inbox_sync acknowledges every subscription event, but the configured
    state query shows no row at all (as if the receiver lost its table): every subscription
    is missing, a `stale` finding, never `unknown: the observer reported no state at all`."""
    from examples.receivers import config as receiver_config

    cfg = receiver_config("inbox_sync", tmp_path, "whsec_certify_lost_states", seed=7,
                          scenarios=["reorder", "stale-after-newer"], settle_window_s=0.15)
    lost = "SELECT object_id, status, version FROM subscription_states WHERE 1 = 0"
    cfg = cfg.model_copy(update={"observer": cfg.observer.model_copy(update={"state": lost})})
    report = certify(cfg, out_dir=tmp_path / "out").report
    assert {s.id: (s.verdict, sorted({f.check_id for f in s.findings})) for s in report.scenarios} == {
        "reorder": ("fail", ["stale"]), "stale-after-newer": ("fail", ["stale"])}
    stale = [f for s in report.scenarios for f in s.findings]
    assert len(stale) == 3 and all(f.key.startswith("sub_") for f in stale), [(f.key, f.message) for f in stale]


@pytest.mark.slow
def test_identical_5xx_findings_of_reorder_merge_and_name_their_event_type(tmp_path: Path) -> None:
    """Over real HTTP: fetch_state with an API key the provider API refuses answers 503 to
    each of reorder's subscription events (on every retry). Each no_server_error finding names
    its event type and attempts; the four updates' identical findings are one, counted 4."""
    from examples.receivers import config as receiver_config

    cfg = receiver_config("fetch_state", tmp_path, "whsec_certify_merged_findings", seed=7, scenarios=["reorder"],
                          settle_window_s=0.15)
    start = cfg.target.start
    assert start is not None
    start = start.model_copy(update={"command": f"{start.command} --api-key sk_test_51NotTheKeyOfThisTeam000xyzw"})
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": start})})
    (scenario,) = certify(cfg, out_dir=tmp_path / "out").report.scenarios
    errors = [f for c in scenario.checks if c.check_id == "no_server_error" for f in c.findings]
    words = [re.match(r"(\d+) valid ([\w.]+) event\(s\) without injected fault answered 503 (\d+) time\(s\)", f.message)
             for f in errors]
    assert all(words), [f.message for f in errors]
    counts = {m.group(2): f.count for m, f in zip(words, errors) if m}
    assert counts == {"customer.subscription.created": 1, "customer.subscription.updated": 4,
                      "customer.subscription.deleted": 1}
    assert len({f.message for f in errors}) == len(errors)
    assert all(f.count == int(m.group(1)) and len(f.attempts) == int(m.group(3)) for m, f in zip(words, errors) if m)


@pytest.mark.slow
def test_a_state_check_over_no_object_is_unknown_with_its_reason(tmp_path: Path) -> None:
    """Over real HTTP: the observer reads only checkout sessions' states, which reorder's and
    stale-after-newer's stories never send: their state checks compared nothing, so each
    scenario is unknown and says why, never a pass."""
    from examples.receivers import config as receiver_config

    cfg = receiver_config("inbox_sync", tmp_path, "whsec_certify_vacuous_states", seed=7,
                          scenarios=["reorder", "stale-after-newer"], settle_window_s=0.15)
    sessions = {"checkout.session": "SELECT object_id, status FROM subscription_states WHERE 1 = 0"}
    cfg = cfg.model_copy(update={"observer": cfg.observer.model_copy(update={"state": None, "states": sessions})})
    report = certify(cfg, out_dir=tmp_path / "out").report
    why = ("no object whose state the observer reads (checkout.session) was validly sent: nothing to compare; "
           "0 finding(s), 0 advisory(ies)")
    for scenario in report.scenarios:
        assert scenario.verdict == "unknown" and scenario.reason == f"regressed: {why}; stale: {why}", scenario
        assert {c.check_id: c.verdict for c in scenario.checks if c.check_id in ("stale", "regressed")} == {
            "stale": "unknown", "regressed": "unknown"}
    assert report.verdict == "unknown"


@pytest.mark.slow
def test_a_connect_receiver_applying_every_accounts_events_is_not_held_to_foreign_account(tmp_path: Path) -> None:
    """A Stripe Connect endpoint is sent the events of every connected account, each naming its
    `account`, and never another's: a receiver written from Stripe's Connect docs applies them
    all (the reference receiver without `--account`) and passes; `foreign-account` does not
    apply, and says why."""
    from examples.receivers import config as receiver_config
    from hookproof.demo import DEMO_ACCOUNT
    from hookproof.simulator.profiles import get_profile

    cfg = receiver_config("inbox_sync", tmp_path, "whsec_certify_connect", seed=7,
                          scenarios=["foreign-account", "test-mode-to-live", "duplicate-sequential"],
                          settle_window_s=0.15)
    start = cfg.target.start
    assert start is not None and f" --account {DEMO_ACCOUNT}" in start.command and cfg.target.connect
    every_account = start.model_copy(update={"command": start.command.replace(f" --account {DEMO_ACCOUNT}", "")})
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": every_account})})
    report = certify(cfg, out_dir=tmp_path / "out").report
    by_id = {s.id: s for s in report.scenarios}
    assert {i: s.verdict for i, s in by_id.items()} == {
        "foreign-account": "not_applicable", "test-mode-to-live": "pass", "duplicate-sequential": "pass"}, \
        report.scenarios
    assert by_id["foreign-account"].reason == get_profile("stripe").foreign_account_never_sent


def test_the_sink_url_does_not_override_what_the_user_set(tmp_path: Path) -> None:
    from hookproof.certify import receiver_env

    cfg = load_config(_config(tmp_path, "http://127.0.0.1:9/webhooks"))
    ours = receiver_env({}, cfg, ["whsec_a"], "http://api", "http://sink", environ={})
    assert ours == {"HOOKPROOF_API_BASE": "http://api", "HOOKPROOF_SINK_URL": "http://sink",
                    "HOOKPROOF_SECRET": "whsec_a", "HOOKPROOF_API_KEY": cfg.provider.api_key}
    theirs = receiver_env({"HOOKPROOF_SINK_URL": "http://licenses.internal", "APP_ENV": "ci"}, cfg, ["whsec_a"],
                          "http://api", "http://sink", environ={"HOOKPROOF_API_BASE": "http://stripe-mock"})
    assert theirs == {"HOOKPROOF_SINK_URL": "http://licenses.internal", "APP_ENV": "ci",
                      "HOOKPROOF_SECRET": "whsec_a", "HOOKPROOF_API_KEY": cfg.provider.api_key}
    # the secret always matches what hookproof signs with
    assert receiver_env({"HOOKPROOF_SECRET": "other"}, cfg, ["whsec_a"], "a", "s", environ={})["HOOKPROOF_SECRET"] \
        == "whsec_a"


# ---- a team's own business keys and counters in hookproof.toml --------------------------------

KEYS_BASE = ('[target]\nurl = "http://127.0.0.1:9/webhooks"\nsecret = "whsec_x"\n'
             '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n')


def test_an_unknown_business_key_type_names_the_closest_and_every_type_sent(tmp_path: Path) -> None:
    """A trial wrote business_keys."customer.updated" (Stripe sends no such event here): the
    error names its file and line, the closest types and every type the profile sends."""
    from hookproof.simulator.profiles import get_profile

    path = tmp_path / "hookproof.toml"
    path.write_text(KEYS_BASE + '[business_keys]\n"customer.updated" = "c:{data.object.id}"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    every = ", ".join(get_profile("stripe").event_types().values())
    assert str(caught.value) == (
        f"{path}:9: business_keys.\"customer.updated\": the Stripe profile sends no event 'customer.updated' "
        f"(did you mean customer.created, customer.subscription.updated or customer.subscription.deleted? "
        f"it sends: {every})")
    path.write_text(KEYS_BASE + '[counters."zzz"]\nkey = "{data.object.customer}"\namount = "data.object.amount"\n',
                    encoding="utf-8")
    with pytest.raises(ConfigError, match=r"sends no event 'zzz' \(it sends: customer.created, "):
        load_config(path)


@pytest.mark.parametrize(("extra", "line", "message"), [
    ('[business_keys]\n"charge.succeeded" = "payment:{data.object.payment_intent}"\n'
     '"invoice.paid" = "renewal:{data.object.nope}"\n', 10,
     'business_keys."invoice.paid": renewal:{data.object.nope}: the event has no field data.object.nope '
     "(data.object has no 'nope')"),
    ('[business_keys]\n"charge.exploded" = "payment:{data.object.id}"\n', 9,
     "business_keys.\"charge.exploded\": the Stripe profile sends no event 'charge.exploded'"),
    ('[counters."invoice.paid"]\nkey = "{data.object.customer}"\namount = "data.object.customer"\n', 8,
     'counters."invoice.paid": data.object.customer: is \'cus_'),
])
def test_a_bad_business_key_is_one_config_error_with_its_line(tmp_path: Path, extra: str, line: int,
                                                                 message: str) -> None:
    path = tmp_path / "hookproof.toml"
    path.write_text(KEYS_BASE + extra, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}:{line}: {message}"), str(caught.value)


@pytest.mark.parametrize(("profile", "kind", "error"), [
    ("github", "issues", "hookproof's github profile models no object kind 'issues' (the kinds it models: commit, "
                         "hook, installation, issue, pull_request)"),
    # a ping is about the App's webhook alone, and owes no state (its body names no installation)
    ("github", "hook", "no event of hookproof's github profile carries a hook's status, so nothing would compare "
                       "this query's rows (the kinds whose states it compares: installation, issue, pull_request)"),
    ("stripe", "subscriptions", "hookproof's stripe profile models no object kind 'subscriptions' (the kinds it "
                                "models: balance_transaction, charge, "),
    # Stripe sends payout events; hookproof's Stripe world makes no payout, and says so
    ("stripe", "payout", "hookproof's stripe profile models no object kind 'payout' (the kinds it models: "
                         "balance_transaction, charge, checkout.session, customer, dispute, invoice, "
                         "payment_intent, payment_method, price, product, refund, subscription)"),
    ("github", "pull_request", None),
    ("github", "installation", None),  # suspended, unsuspended, deleted: a state kind
    ("stripe", "checkout.session", None),
    # a new customer's checkout sends customer.created and address.created, each ``active``
    # (developer.paddle.com/webhooks/simulator/subscription-created)
    ("paddle", "customer", None),
    ("paddle", "address", None),
    ("paddle", "customers", "hookproof's paddle profile models no object kind 'customers' (the kinds it models: "
                            "address, adjustment, customer, subscription, transaction)"),
    ("github", "commit", "no event of hookproof's github profile carries a commit's status, so nothing would compare "
                         "this query's rows (the kinds whose states it compares: installation, issue, pull_request)"),
    ("stripe", "customer", "no event of hookproof's stripe profile carries a customer's status, so nothing would "
                           "compare this query's rows (the kinds whose states it compares: charge, checkout.session, "
                           "invoice, payment_intent, refund, subscription)"),  # refund.created carries its Refund's status
    # Stripe's disputes: a modelled kind, whose events (optional types) come only to an endpoint listing them
    ("stripe", "dispute", "a dispute's states come from Stripe's charge.dispute.* events, which hookproof sends only "
                          "to an endpoint whose enabled_events lists them (as Stripe sends an endpoint only the types "
                          "it enabled): add charge.dispute.created, charge.dispute.funds_withdrawn, "
                          "charge.dispute.updated, charge.dispute.closed and charge.dispute.funds_reinstated to "
                          "[target] enabled_events"),
])
def test_a_state_kind_the_world_has_no_object_of_is_a_config_error(tmp_path: Path, profile: str, kind: str,
                                                                    error: str | None) -> None:
    path = tmp_path / "hookproof.toml"
    path.write_text(KEYS_BASE.replace('secret = "whsec_x"', f'secret = "whsec_x"\nprofile = "{profile}"')
                    + f'[observer.states]\n"{kind}" = "SELECT id AS object_id, status FROM things"\n', encoding="utf-8")
    if error is None:
        assert kind in load_config(path).observer.states
        return
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}:10: observer.states.{kind}: {error}"), str(caught.value)


def test_a_dispute_state_kind_is_accepted_from_an_endpoint_listing_stripes_dispute_events(tmp_path: Path) -> None:
    """docs.stripe.com/api/disputes/object: a Dispute's status, told by ``charge.dispute.*``."""
    path = tmp_path / "hookproof.toml"
    listed = '", "'.join(["charge.refunded", "charge.dispute.created", "charge.dispute.funds_withdrawn",
                          "charge.dispute.updated", "charge.dispute.closed", "charge.dispute.funds_reinstated"])
    path.write_text(KEYS_BASE.replace('secret = "whsec_x"', f'secret = "whsec_x"\nenabled_events = ["{listed}"]')
                    + '[observer.states]\ndispute = "SELECT id AS object_id, status FROM disputes"\n', encoding="utf-8")
    assert list(load_config(path).observer.states) == ["dispute"]


def test_business_keys_map_a_team_s_effects_over_the_provider_s_payload(tmp_path: Path) -> None:
    from hookproof.scenarios.business_keys import counter_truth, keyed
    from hookproof.simulator.world import World

    path = tmp_path / "hookproof.toml"
    path.write_text('builtin_keys = false\n' + KEYS_BASE + '[business_keys]\n'
                    '"charge.succeeded" = "payment:{data.object.payment_intent}"\n'
                    '"invoice.paid" = "renewal:{data.object.id}"\n'
                    '[counters."invoice.paid"]\nkey = "{data.object.customer}"\namount = "data.object.amount_paid"\n',
                    encoding="utf-8")
    mapping = load_config(path).key_mapping()
    w = World(3)
    cus = w.event(w.create_customer()).object_id
    pi = w.pay(cus)
    w.renew(w.subscribe(cus))
    events = keyed(w.events, mapping)
    keys = {e.type: e.business_key for e in events if e.business_key}
    invoices = [e for e in events if e.type == "invoice.paid"]
    assert keys["charge.succeeded"] == f"payment:{pi}" and "payment_intent.succeeded" not in keys
    assert keys["invoice.paid"] == f"renewal:{invoices[-1].object_id}"
    history = [Attempt(event_id=e.id, delivery_id=f"dlv_{e.id}_0", attempt=1, business_key=e.business_key,
                       object_id=e.object_id, object_version=e.version, event_type=e.type, faults=(), valid=True,
                       sent_at=0.0, answered_at=0.0, status=200, outcome=Outcome.ACKED, completion=Completion.OK,
                       latency_ms=1.0) for e in [*invoices, *invoices]]  # each paid invoice delivered twice
    assert counter_truth([*invoices, *invoices], history, mapping) == {
        cus: sum(w.get(e.object_id)["amount_paid"] for e in invoices)}


@pytest.mark.slow
@pytest.mark.parametrize(("receiver", "failing"), [
    ("inbox_sync", {}),
    ("blind_overwrite", {"reorder": ["stale"], "stale-after-newer": ["regressed", "stale"]}),
])
def test_standard_webhooks_state_checks_compare_real_objects(tmp_path: Path, receiver: str,
                                                              failing: dict[str, list[str]]) -> None:
    """Standard Webhooks records the envelope's msg_ id: the truth is still built, so the
    state checks compare an object instead of passing over none."""
    from examples.receivers import config as receiver_config

    cfg = receiver_config(receiver, tmp_path, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", seed=7,
                          profile="standard-webhooks", scenarios=["reorder", "stale-after-newer"],
                          settle_window_s=0.15)
    report = certify(cfg, out_dir=tmp_path / "out").report
    assert {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.findings} == failing
    stale = [c for s in report.scenarios for c in s.checks if c.check_id == "stale"]
    assert [c.stats["objects"] for c in stale] == [1, 2]  # stale-after-newer: and its same-second subscription
