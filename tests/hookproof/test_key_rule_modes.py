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
