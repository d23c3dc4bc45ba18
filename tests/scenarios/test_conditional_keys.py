"""A team's key made only when conditions hold (`[business_keys."<type>"]` with `when`).

A merged pull request owes a release note, one closed without merging does not (GitHub's
``pull_request.closed`` with ``merged``); a Mercado Pago payment owes a credit once approved,
and its thin notification carries no status (``fetched.status``: the payment as the API
serves it at that notification). A template alone keyed every such event, so a correct
receiver was told its effect was lost.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.config import load_config
from hookproof.errors import ConfigError
from hookproof.scenarios.business_keys import KeyMapping, counter_truth, from_plain, keyed, to_plain
from hookproof.simulator.delivery.history import Attempt, Completion, Outcome
from hookproof.simulator.world.github import GitHubWorld
from hookproof.simulator.world.mercadopago import MercadoPagoWorld


def _config(tmp_path: Path, profile: str, secret: str, keys: str) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text(f'builtin_keys = false\n[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "{profile}"\n'
                    f'secret = "{secret}"\n[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\n'
                    f'effects = "SELECT business_key FROM effects"\n{keys}', encoding="utf-8")
    return path


GITHUB_KEYS = ('[business_keys."pull_request.closed"]\n'
               'key = "release:{repository.full_name}#{pull_request.number}"\n'
               'when = { "pull_request.merged" = true }\n')


def test_a_merged_pull_request_owes_a_release_note_and_an_unmerged_one_does_not(tmp_path: Path) -> None:
    mapping = load_config(_config(tmp_path, "github", "gh_x", GITHUB_KEYS)).key_mapping()
    world = GitHubWorld(5)
    closed = [e for e in keyed(world.effect_story(), mapping) if e.type == "pull_request.closed"]
    assert [(e.object["merged"], e.business_key is not None) for e in closed] == [(True, True), (False, False)]
    (merged,) = [e for e in closed if e.business_key]
    assert merged.business_key == f"release:{world.event(merged.id).object['base']['repo']['full_name']}" \
                                  f"#{merged.object['number']}"


def test_a_thin_notification_s_condition_reads_the_payment_the_api_serves(tmp_path: Path) -> None:
    keys = "".join(f'[business_keys."{t}"]\nkey = "credit:{{data.id}}"\nwhen = {{ "fetched.status" = "approved" }}\n'
                   for t in ("payment.created", "payment.updated"))
    mapping = load_config(_config(tmp_path, "mercadopago", "mp_x", keys)).key_mapping()
    world = MercadoPagoWorld(7)
    pix = world.pay(method="pix")  # created pending: no credit yet
    world.approve_pending(pix)  # approved: the credit
    world.refund(pix)  # refunded: no credit
    card = world.pay(approve=False)  # rejected: never a credit
    events = [(e.object_id, e.status, e.business_key) for e in keyed(world.events, mapping) if e.object_type == "payment"]
    assert events == [(pix, "pending", None), (pix, "approved", f"credit:{pix}"), (pix, "refunded", None),
                      (card, "rejected", None)]


def test_a_key_s_condition_also_gates_its_counter(tmp_path: Path) -> None:
    keys = ('[business_keys."payment.updated"]\nkey = "credit:{data.id}"\nwhen = { "fetched.status" = ["approved"] }\n'
            '[counters."payment.updated"]\nkey = "{data.id}"\namount = "user_id"\n')
    # amount = user_id: the thin notification's one integer stands in for an amount
    mapping = load_config(_config(tmp_path, "mercadopago", "mp_x", keys)).key_mapping()
    world = MercadoPagoWorld(7)
    pix = world.pay(method="pix")
    world.approve_pending(pix)
    world.refund(pix)
    events = [e for e in keyed(world.events, mapping) if e.type == "payment.updated"]
    history = [Attempt(event_id=e.id, delivery_id=f"dlv_{e.id}_0", attempt=1, business_key=e.business_key,
                       object_id=e.object_id, object_version=e.version, event_type=e.type, faults=(), valid=True,
                       sent_at=0.0, answered_at=0.0, status=200, outcome=Outcome.ACKED, completion=Completion.OK,
                       latency_ms=1.0) for e in events]
    user = mapping.payload(events[0])["user_id"]
    assert counter_truth(events, history, mapping) == {pix: user}  # the approval only, not the refund


def test_conditions_travel_with_the_storm_spec(tmp_path: Path) -> None:
    mapping = load_config(_config(tmp_path, "github", "gh_x", GITHUB_KEYS)).key_mapping()
    again = from_plain(to_plain(mapping), mapping.profile)
    assert isinstance(again, KeyMapping) and again.conditions == mapping.conditions == {
        "pull_request.closed": {"pull_request.merged": (True,)}}


@pytest.mark.parametrize(("when", "message"), [
    ('{ "pull_request.nope" = true }',
     'business_keys."pull_request.closed": when pull_request.nope: the event has no field pull_request.nope'),
    ('{ "fetched.nope" = true }',
     "business_keys.\"pull_request.closed\": when fetched.nope: the object the provider's API serves has no field "
     "nope"),
    ("{}", 'business_keys."pull_request.closed": when: names no condition'),
    ('{ "pull_request..merged" = true }',
     "business_keys.\"pull_request.closed\": when: 'pull_request..merged' is not a dotted path"),
    ('{ "pull_request.merged" = [] }',
     'business_keys."pull_request.closed": when: pull_request.merged: an empty list matches nothing'),
])
def test_a_bad_condition_is_one_config_error(tmp_path: Path, when: str, message: str) -> None:
    keys = f'[business_keys."pull_request.closed"]\nkey = "release:{{pull_request.number}}"\nwhen = {when}\n'
    with pytest.raises(ConfigError) as caught:
        load_config(_config(tmp_path, "github", "gh_x", keys)).key_mapping()
    assert message in str(caught.value), str(caught.value)


def test_a_boolean_condition_matches_only_a_boolean(tmp_path: Path) -> None:
    keys = GITHUB_KEYS.replace('"pull_request.merged" = true', '"pull_request.merged" = 1')
    mapping = load_config(_config(tmp_path, "github", "gh_x", keys)).key_mapping()
    closed = [e for e in keyed(GitHubWorld(5).effect_story(), mapping) if e.type == "pull_request.closed"]
    assert len(closed) == 2 and not any(e.business_key for e in closed)


def test_a_rule_wider_than_the_built_in_key_is_named_with_the_when_that_narrows_it(tmp_path: Path) -> None:
    """A Stripe team keying ``checkout.session.completed`` without ``when`` owes a fulfilment
    for an unpaid session too, which hookproof's own key does not (Stripe: fulfil paid ones);
    its receiver, fulfilling paid sessions only, showed lost findings nothing explained.
    Certify's notes now name the field and the ``when`` that keeps to paid sessions; with that
    ``when``, or for a rule no wider than the built-in key, nothing is said."""
    from hookproof.certify import wider_keys_notes

    wide = '[business_keys]\n"checkout.session.completed" = "fulfil:{data.object.id}"\n"invoice.paid" = "r:{data.object.id}"\n'
    config = load_config(_config(tmp_path, "stripe", "whsec_x", wide))
    assert wider_keys_notes(config) == [
        '[business_keys] "checkout.session.completed" owes an effect for every such event, hookproof\'s own key only '
        "when data.object.payment_status is 'paid' (not 'unpaid'): a receiver that acts only then shows lost "
        'findings; add when = { "data.object.payment_status" = ["paid"] } to keep to that']
    narrow = ('[business_keys."checkout.session.completed"]\nkey = "fulfil:{data.object.id}"\n'
              'when = { "data.object.payment_status" = ["paid"] }\n')
    assert wider_keys_notes(load_config(_config(tmp_path, "stripe", "whsec_x", narrow))) == []
    assert wider_keys_notes(load_config(_config(tmp_path, "github", "gh_x", GITHUB_KEYS))) == []


def test_the_wider_rule_s_note_comes_only_with_lost_findings() -> None:
    """A user's passing runs printed the note every time: it explains lost findings, so a run
    without one does not carry it."""
    from hookproof.certify import with_wider_keys_notes
    from hookproof.reports.model import CheckView, FindingView, RunReport, ScenarioReport

    def run(check_id: str | None) -> RunReport:
        findings = () if check_id is None else (FindingView(check_id=check_id, key="k", message="m",
                                                             severity="finding", attempts=(1,)),)
        scenario = ScenarioReport("s", "S", "", "fail" if findings else "pass", (), checks=(
            CheckView(check_id or "lost", "invalid" if findings else "valid", findings),))
        return RunReport("0", "http://127.0.0.1:1/w", "stripe", "test", 1, 0.0, 1.0, scenario.verdict, (scenario,), ())

    note = "[business_keys] ..."
    assert with_wider_keys_notes(run("lost"), [note]).notes == (note,)
    for report in (run(None), run("duplicated")):
        assert with_wider_keys_notes(report, [note]) is report
    assert with_wider_keys_notes(run("lost"), []).notes == ()


def test_a_scenario_left_without_effects_by_keys_and_enabled_events_names_both(tmp_path: Path) -> None:
    """A GitHub endpoint subscribed to comments and pushes whose team keys only opened issues:
    `distinct-events-same-object` has nothing effectful to send. The reason blamed
    enabled_events alone, which did include the scenario's types; it named both, then; it now
    names the one cause that holds: the types are sent, and the team's keys make them
    effectless."""
    from hookproof.scenarios.catalog import CATALOG, Context, NotApplicable
    from hookproof.simulator.world import new_world

    keys = '[business_keys]\n"issues.opened" = "triage:{repository.full_name}#{issue.number}"\n'
    config = load_config(_config(tmp_path, "github", "gh_x", keys))
    profile = config.profile()
    ctx = Context(profile=profile, keys=config.key_mapping(),
                  enabled=frozenset({"issue_comment.created", "pull_request.synchronize", "issues.opened"}))
    plan = CATALOG["distinct-events-same-object"].plan(ctx, new_world(profile.world, 2))
    assert isinstance(plan, NotApplicable)
    assert plan.reason == ("the team's business keys make none of this scenario's events effectful "
                           "(business_keys, builtin_keys): no effectful events to send"), plan.reason
