"""A key rule over one Checkout mode is checked on a session of that mode.

A dj-stripe SaaS provisions on a subscription-mode session alone: ``key =
"provision:{data.object.subscription}"`` with ``when = { "data.object.mode" = "subscription" }``.
The config was refused ("data.object.subscription is null"): the rule's template was rendered
on the one sample session, a payment-mode one, where its `when` does not hold and Stripe sends
a null subscription. A Checkout Session's type is now checked on a session of each mode, each
rule's template where its `when` holds; a rule whose `when` holds on none still has its fields
looked up (a misspelt template stays a config error, a null field is allowed: a setup-mode
session's rule), as does every path of every `when`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.config import load_config
from hookproof.errors import ConfigError
from hookproof.simulator.world import emit_events, new_world

HEAD = ('[target]\nurl = "http://127.0.0.1:9/webhooks"\nsecret = "whsec_x"\n'
        '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n')


def _mapping(tmp_path: Path, rule: str) -> object:
    path = tmp_path / "hookproof.toml"
    path.write_text(f'{HEAD}[business_keys."checkout.session.completed"]\n{rule}', encoding="utf-8")
    return load_config(path).key_mapping()


def test_a_subscription_mode_rule_is_accepted_and_keys_only_that_mode(tmp_path: Path) -> None:
    mapping = _mapping(tmp_path, 'key = "provision:{data.object.subscription}"\n'
                                 'when = { "data.object.mode" = "subscription" }\n')
    world = new_world("billing", 3)
    [sub] = emit_events(world, "checkout.session.completed", checkout_mode="subscription")
    [pay] = emit_events(world, "checkout.session.completed", checkout_mode="payment")
    assert mapping.key_of(sub) == f"provision:{sub.object['subscription']}"  # type: ignore[attr-defined]
    assert mapping.key_of(pay) is None  # type: ignore[attr-defined]


def test_a_rule_of_a_mode_never_sampled_may_name_a_field_null_there(tmp_path: Path) -> None:
    _mapping(tmp_path, 'key = "setup:{data.object.subscription}"\nwhen = { "data.object.mode" = "setup" }\n')


@pytest.mark.parametrize(("rule", "said"), [
    ('key = "provision:{data.object.subscriptoin}"\nwhen = { "data.object.mode" = "subscription" }\n',
     "the event has no field data.object.subscriptoin"),
    ('key = "provision:{data.object.subscriptoin}"\nwhen = { "data.object.mode" = "setup" }\n',
     "the event has no field data.object.subscriptoin"),
    ('key = "provision:{data.object.id}"\nwhen = { "data.object.mdoe" = "subscription" }\n',
     "when data.object.mdoe: the event has no field data.object.mdoe"),
])
def test_a_wrong_template_or_path_is_still_a_config_error(tmp_path: Path, rule: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        _mapping(tmp_path, rule)


def test_a_payment_only_shop_s_key_and_counter_are_checked_on_a_payment_mode_session(tmp_path: Path) -> None:
    """With ``checkout_modes = ["payment"]`` the endpoint is never sent a subscription-mode
    session, whose ``payment_intent`` is null: a key or a counter on it is checked on a
    payment-mode session alone (it was refused: "data.object.payment_intent is null")."""
    path = tmp_path / "hookproof.toml"
    path.write_text(HEAD.replace('secret = "whsec_x"\n', 'secret = "whsec_x"\ncheckout_modes = ["payment"]\n')
                    + '[business_keys."checkout.session.completed"]\nkey = "sale:{data.object.payment_intent}"\n'
                    '[counters."checkout.session.completed"]\nkey = "{data.object.payment_intent}"\n'
                    'amount = "data.object.amount_total"\n', encoding="utf-8")
    mapping = load_config(path).key_mapping()
    [pay] = emit_events(new_world("billing", 3), "checkout.session.completed", checkout_mode="payment")
    assert mapping.key_of(pay) == f"sale:{pay.object['payment_intent']}"
    both = tmp_path / "both.toml"
    both.write_text(path.read_text(encoding="utf-8").replace('checkout_modes = ["payment"]\n', ""), encoding="utf-8")
    with pytest.raises(ConfigError, match="data.object.payment_intent is null"):
        load_config(both).key_mapping()


@pytest.mark.parametrize("account", ["acct_1Seller0000000001", None])
def test_a_connect_key_may_name_the_events_account(tmp_path: Path, account: str | None) -> None:
    """Every event of a run with ``target.account`` carries ``account`` (the connected account
    it comes from), so a marketplace keys its sale by seller: ``sale:{account}:...``. Without
    an account the events carry none, and the key stays refused."""
    path = tmp_path / "hookproof.toml"
    target = f'connect = true\naccount = "{account}"\n' if account else ""
    path.write_text(HEAD.replace('secret = "whsec_x"\n', f'secret = "whsec_x"\n{target}')
                    + '[business_keys."charge.refunded"]\nkey = "refund:{account}:{data.object.id}"\n', encoding="utf-8")
    if account is None:
        with pytest.raises(ConfigError, match="the event has no field account"):
            load_config(path).key_mapping()
        return
    mapping = load_config(path).key_mapping()
    [refund] = emit_events(new_world("billing", 3, account=account), "charge.refunded")
    assert mapping.key_of(refund) == f"refund:{account}:{refund.object['id']}"
