"""A team's key refused where a field has some value (`[business_keys."<type>"]` with `unless`).

A Stripe shop grants a license per payment intent it creates, and none for the intents its
subscriptions' invoices make (their invoice.paid carries the effect) or its Checkout Sessions
make (fulfilled on the session's events). Stripe marks neither with a field a `when` could
require: an invoice's intent says "Subscription creation" or "Subscription update" in its
description, the shop's own intents say nothing there. Under the natural rule
``"payment_intent.succeeded" = "license:{data.object.id}"`` a correct receiver failed ten
scenarios on `lost`, and no `when` could narrow the rule; `unless` does, and certify's note
gives the `unless` that keeps to the intents hookproof's own key owes a license for.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.receivers import config as receiver_config
from hookproof.certify import certify, wider_keys_notes
from hookproof.config import load_config
from hookproof.errors import ConfigError
from hookproof.scenarios.business_keys import KeyMapping, from_plain, keyed, to_plain
from hookproof.simulator.world import World, emit_events

SECRET = "whsec_key_unless_" + "0" * 20
INVOICE_INTENTS = '"data.object.description" = ["Subscription creation", "Subscription update"]'
UNLESS = f'{{ {INVOICE_INTENTS}, "data.object.metadata.channel" = ["checkout"] }}'
NOTE = ('[business_keys] "payment_intent.succeeded" owes an effect for every such event, hookproof\'s own key none '
        "where data.object.description is 'Subscription creation' or 'Subscription update'; "
        "data.object.metadata.channel is 'checkout': a receiver that acts only on the others shows lost findings; "
        f"add unless = {UNLESS} to keep to those")


def _config(tmp_path: Path, keys: str) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text('builtin_keys = false\n[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "stripe"\n'
                    'secret = "whsec_x"\n[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\n'
                    f'effects = "SELECT business_key FROM effects"\n{keys}', encoding="utf-8")
    return path


def _rule(unless: str = UNLESS) -> str:
    return f'[business_keys."payment_intent.succeeded"]\nkey = "license:{{data.object.id}}"\nunless = {unless}\n'


def _intents(mapping: KeyMapping) -> list[tuple[str | None, str | None, str | None]]:
    """(description, metadata channel, key) of each payment_intent.succeeded of a world with
    a shop's own payment, a Checkout purchase and a subscription paid twice."""
    world = World(11)
    world.sent_only(lambda t: t != "invoice.payment_succeeded")
    emit_events(world, "payment_intent.succeeded")
    emit_events(world, "checkout.session.completed", checkout_mode="payment")
    subscription = emit_events(world, "invoice.paid")[-1].object["subscription"]
    world.renew(subscription)
    return [(e.object.get("description"), (e.object.get("metadata") or {}).get("channel"), e.business_key)
            for e in keyed(world.events, mapping) if e.type == "payment_intent.succeeded"]


def test_unless_refuses_the_key_of_the_events_naming_one_of_its_values(tmp_path: Path) -> None:
    mapping = load_config(_config(tmp_path, _rule())).key_mapping()
    intents = _intents(mapping)
    assert sorted({(d, c, k is not None) for d, c, k in intents}, key=str) == sorted(
        {(None, None, True), (None, "checkout", False), ("Subscription creation", None, False),
         ("Subscription update", None, False)}, key=str)
    # without it, the same events are keyed alike: every intent owes a license
    plain = load_config(_config(tmp_path, '[business_keys]\n"payment_intent.succeeded" = "license:{data.object.id}"\n'))
    assert all(k is not None for _, _, k in _intents(plain.key_mapping()))


def test_a_later_rule_takes_the_events_an_earlier_rule_s_unless_refused(tmp_path: Path) -> None:
    rules = (f'[[business_keys."payment_intent.succeeded"]]\nkey = "license:{{data.object.id}}"\nunless = {UNLESS}\n'
             '[[business_keys."payment_intent.succeeded"]]\nkey = "seat:{data.object.id}"\n'
             f"when = {{ {INVOICE_INTENTS} }}\n")
    intents = _intents(load_config(_config(tmp_path, rules)).key_mapping())
    kinds = {(d is not None, c, (k or "none:").split(":")[0]) for d, c, k in intents}
    assert kinds == {(False, None, "license"), (False, "checkout", "none"), (True, None, "seat")}


def test_unless_travels_with_the_storm_spec(tmp_path: Path) -> None:
    mapping = load_config(_config(tmp_path, _rule())).key_mapping()
    again = from_plain(to_plain(mapping), mapping.profile)
    assert again.exclusions == mapping.exclusions == {"payment_intent.succeeded": {
        "data.object.description": ("Subscription creation", "Subscription update"),
        "data.object.metadata.channel": ("checkout",)}}
    assert _intents(again) == _intents(mapping)


@pytest.mark.parametrize(("unless", "message"), [
    ('{ "data.object.metadata.chanel" = "checkout" }',
     'business_keys."payment_intent.succeeded": unless data.object.metadata.chanel: no event of this type has a '
     "field data.object.metadata.chanel, so it would refuse no key"),
    ("{}", 'business_keys."payment_intent.succeeded": unless: names no condition'),
    ('{ "data.object.description" = [] }',
     'business_keys."payment_intent.succeeded": unless: data.object.description: an empty list matches nothing'),
])
def test_a_bad_unless_is_one_config_error(tmp_path: Path, unless: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(_config(tmp_path, _rule(unless))).key_mapping()
    assert message in str(caught.value), str(caught.value)


def test_the_note_on_a_wider_rule_gives_the_unless_that_narrows_it(tmp_path: Path) -> None:
    wide = '[business_keys]\n"payment_intent.succeeded" = "license:{data.object.id}"\n'
    assert wider_keys_notes(load_config(_config(tmp_path, wide))) == [NOTE]
    assert wider_keys_notes(load_config(_config(tmp_path, _rule()))) == []


@pytest.mark.slow
@pytest.mark.parametrize("unless", [False, True])
def test_a_correct_receiver_passes_under_the_rule_with_unless_and_fails_lost_without(tmp_path: Path,
                                                                                     unless: bool) -> None:
    config = receiver_config("inbox_sync", tmp_path, SECRET)
    rule: object = "license:{data.object.id}"
    if unless:
        rule = {"key": "license:{data.object.id}", "unless": {
            "data.object.description": ["Subscription creation", "Subscription update"],
            "data.object.metadata.channel": "checkout"}}
    observer = config.observer.model_copy(update={
        "effects": "SELECT business_key FROM effects WHERE business_key LIKE 'license:%'"})
    config = config.model_copy(update={"builtin_keys": False, "business_keys": {"payment_intent.succeeded": rule},
                                       "observer": observer})
    report = certify(config, scenarios=["duplicate-sequential", "secret-rotation"], out_dir=tmp_path / "out").report
    if unless:
        assert report.verdict == "pass" and NOTE not in report.notes, [(s.id, s.reason) for s in report.scenarios]
    else:
        assert [(s.id, s.verdict) for s in report.scenarios] == [("duplicate-sequential", "fail"),
                                                                  ("secret-rotation", "fail")]
        assert {f.check_id for s in report.scenarios for f in s.findings} == {"lost"}
        assert NOTE in report.notes


def test_events_words_a_rule_whose_unless_refused_every_sample(tmp_path: Path) -> None:
    from hookproof.commands.events import unmatched_rules

    config = _config(tmp_path, _rule('{ "data.object.object" = "payment_intent" }'))
    assert unmatched_rules("stripe", str(config), {}) == {
        "payment_intent.succeeded": "license:{data.object.id} unless data.object.object = payment_intent"}
