"""`unexpected` names why a forbidden key's deliveries were invalid: another mode (livemode),
another account, or a forged/stale request; and `test-mode-to-live`/`foreign-account` apply to a
Stripe endpoint only when the config declares it a Connect endpoint (`target.connect`): Stripe sends
another mode's or account's events only there (stripe.com/docs/connect/webhooks)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hookproof.config import parse_config
from hookproof.errors import ConfigError
from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable, Plan
from hookproof.scenarios.effect_checks import check_unexpected
from hookproof.scenarios.observations import Expectations
from hookproof.simulator.delivery.history import Attempt
from hookproof.simulator.faults import Mutation, applicable
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world.registry import new_world
from tests.scenarios.test_checks import att, exp, hist, obs


def _tagged(event: str, tag: str) -> Attempt:
    return replace(att(event, "k1", "200", valid=False), faults=(tag,))


@pytest.mark.parametrize(("tag", "words"), [
    ("livemode-mismatch", "applied an event of the other mode than the endpoint's (livemode: a live-mode event"),
    ("foreign-account", "applied an event of another account than the endpoint's (account: not target.account)"),
    ("forged", "applied although every delivery of it was invalid (forged, stale or foreign)"),
    ("future-timestamp", "applied although every delivery of it was signed with a future timestamp the profile's "
                         "official verifier rejects"),
])
def test_an_applied_forbidden_key_says_why_its_deliveries_were_invalid(tag: str, words: str) -> None:
    expectations: Expectations = exp(forbidden=["k1"])
    history = hist(_tagged("e1", tag), _tagged("e1", tag))
    [finding] = [f for f in check_unexpected(history, expectations, [obs(20, "k1")]).findings
                  if f.message.startswith("applied")]
    assert finding.message.startswith(words), finding.message


STRIPE = get_profile("stripe")


@pytest.mark.parametrize("scenario", ["test-mode-to-live", "foreign-account"])
def test_an_ordinary_stripe_endpoint_is_never_sent_another_mode_or_account(scenario: str) -> None:
    plan = CATALOG[scenario].plan(Context(profile=STRIPE, account="acct_1Mine"), new_world("billing", 3))
    assert isinstance(plan, NotApplicable)
    assert "Connect endpoint" in plan.reason and "target.connect" in plan.reason


def test_a_stripe_connect_endpoint_is_sent_another_mode_but_no_foreign_account() -> None:
    """A Connect endpoint gets live and test events (Stripe's docs: check `livemode`), and the
    events of every connected account, each naming its `account`; Stripe never sends it an
    account's the platform is not connected to, so no event it gets is foreign."""
    connect = Context(profile=STRIPE, account="acct_1Mine", connect=True)
    assert isinstance(CATALOG["test-mode-to-live"].plan(connect, new_world("billing", 3)), Plan)
    foreign = CATALOG["foreign-account"].plan(connect, new_world("billing", 3))
    assert isinstance(foreign, NotApplicable)
    assert foreign.reason == STRIPE.foreign_account_never_sent
    assert "every account connected to the platform" in foreign.reason
    assert "docs.stripe.com/connect/webhooks" in foreign.reason


@pytest.mark.parametrize("live", [False, True])
def test_a_test_mode_connect_endpoint_is_told_the_live_event_stands_in_for_the_live_endpoints_case(
        live: bool) -> None:
    """Stripe sends a test-mode Connect endpoint test events only; a live one gets the connected
    accounts' test events too (docs.stripe.com/connect/webhooks). A receiver's code is the same
    on both, so the scenario still runs on a test-mode endpoint, sending a live event in place of
    the live endpoint's test one, and says so; on a live endpoint it plays the case itself."""
    plan = CATALOG["test-mode-to-live"].plan(Context(profile=STRIPE, account="acct_1Mine", connect=True, live=live),
                                             new_world("billing", 3, livemode=live))
    assert isinstance(plan, Plan)
    assert plan.note == (None if live else STRIPE.live_event_mirrored)
    assert {e.livemode for p in plan.phases for e in p.events} == {live}  # the events the mutation flips
    assert get_profile("mercadopago").live_event_mirrored is None


def test_foreign_account_keeps_applying_where_the_provider_may_send_another_accounts_event() -> None:
    assert applicable(Mutation.FOREIGN_ACCOUNT, get_profile("mercadopago")) is None


def test_foreign_account_does_not_apply_to_a_github_app() -> None:
    """An App's webhook is sent every installation's events under its one secret, and no other."""
    github = get_profile("github")
    assert applicable(Mutation.FOREIGN_ACCOUNT, github) == github.foreign_account_valid
    assert "every installation's events" in (github.foreign_account_valid or "")


def test_other_profiles_keep_their_rules_without_connect() -> None:
    mp = get_profile("mercadopago")
    assert applicable(Mutation.LIVEMODE_MISMATCH, mp) is None
    assert applicable(Mutation.LIVEMODE_MISMATCH, STRIPE) is not None
    assert applicable(Mutation.LIVEMODE_MISMATCH, STRIPE, connect=True) is None


BASE = '[target]\nurl = "http://127.0.0.1:9/h"\nprofile = "{p}"\nsecret = "s"\n{extra}\n[observer]\nkind = "sink"\n'


def test_connect_is_a_stripe_field() -> None:
    assert parse_config(BASE.format(p="stripe", extra="connect = true")).target.connect
    assert not parse_config(BASE.format(p="stripe", extra="")).target.connect
    with pytest.raises(ConfigError, match="connect: only the stripe profile has Connect endpoints"):
        parse_config(BASE.format(p="github", extra="connect = true"))


@pytest.mark.parametrize(("live", "words"), [
    (False, "applied a live-mode event on a test-mode endpoint (livemode) (seen in the third read after delivering)"),
    (True, "applied a test-mode event on a live-mode endpoint (livemode) (seen in the third read after delivering)"),
])
def test_the_runner_words_the_other_mode_for_the_endpoints_own(live: bool, words: str) -> None:
    from hookproof.reports.model import CheckView, FindingView, ScenarioReport
    from hookproof.scenarios.fetched_states import with_mode
    from hookproof.scenarios.key_loops import UNEXPECTED_OTHER_MODE, UNEXPECTED_UNOWED, other_mode_message

    other = FindingView(check_id="unexpected", key="k2",
                        message=f"{UNEXPECTED_UNOWED} (seen in the second read after delivering)", severity="finding")
    mode = FindingView(check_id="unexpected", key="k1",
                       message=f"{UNEXPECTED_OTHER_MODE} (seen in the third read after delivering)", severity="finding")
    report = ScenarioReport("test-mode-to-live", "t", "d", "fail", (), checks=(
        CheckView(check_id="unexpected", verdict="invalid", findings=(mode, other)),))
    worded = with_mode(report, other_mode_message(live))
    assert [f.message for f in worded.checks[0].findings] == [words, other.message]


def test_an_error_answer_to_another_account_s_event_the_api_refused_gets_no_4xx_advice() -> None:
    """A receiver that fetched another account's object and was refused it (404) cannot tell
    that from an object not visible yet: its 5xx asks the provider to retry, as it must.
    Without such a refused fetch (an unreachable API, a crash) the advice stands."""
    from hookproof.scenarios.answer_checks import check_no_server_error

    history = hist(replace(att("e1", "k1", "503", valid=False, obj="pay_1"), faults=("foreign-account",)))
    refused = replace(exp(forbidden=["k1"]), checked_foreign=frozenset({"pay_1"}))
    assert check_no_server_error(history, refused, [obs(20)]).findings == ()
    assert check_unexpected(history, refused, [obs(20)]).findings == ()
    [advice] = check_no_server_error(history, exp(forbidden=["k1"]), [obs(20)]).findings
    assert advice.severity == "advisory" and advice.message.endswith("; a 4xx is expected"), advice.message


def test_a_connect_endpoint_without_an_account_is_told_its_events_name_none() -> None:
    """Every event Stripe sends a Connect endpoint carries the connected account's id; with
    connect = true and no target.account hookproof's carry none: certify notes it."""
    from hookproof.certify import connect_account_note

    bare = parse_config(BASE.format(p="stripe", extra="connect = true"))
    assert connect_account_note(bare) == (
        "connect = true names no connected account (target.account), so the events carried no `account`; every "
        "event Stripe sends a Connect endpoint names the connected account it comes from "
        "(docs.stripe.com/connect/webhooks): name one of the platform's connected accounts to send them so")
    named = parse_config(BASE.format(p="stripe", extra='connect = true\naccount = "acct_1Seller0000000001"'))
    assert connect_account_note(named) is None
    assert connect_account_note(parse_config(BASE.format(p="stripe", extra=""))) is None
