"""A `[business_keys."<type>"]` table without `when` is the plain template: its key is made for
every event of the type (a new user wrote one and was refused with "when: is required")."""

from __future__ import annotations

import pytest

from hookproof.config import parse_config
from hookproof.errors import ConfigError
from hookproof.simulator.world import emit_events, new_world

BASE = ('[target]\nurl = "http://127.0.0.1:9/webhooks"\nsecret = "whsec_x"\nprofile = "stripe"\n'
        '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n')
TYPE = "checkout.session.async_payment_succeeded"


def _mapping(rule: str) -> object:
    return parse_config(BASE + f'[business_keys."{TYPE}"]\n{rule}\n').key_mapping()


def test_a_rule_without_when_keys_every_event_of_its_type_as_the_plain_template_does() -> None:
    event = emit_events(new_world("billing", 2), TYPE)[0]
    table = _mapping('key = "order:{data.object.id}"')
    plain = parse_config(BASE + f'[business_keys]\n"{TYPE}" = "order:{{data.object.id}}"\n').key_mapping()
    assert table.key_of(event) == plain.key_of(event) == f"order:{event.object['id']}"  # type: ignore[attr-defined]
    assert TYPE not in table.conditions  # type: ignore[attr-defined]


def test_a_rule_whose_when_holds_for_no_event_still_makes_no_key() -> None:
    event = emit_events(new_world("billing", 2), TYPE)[0]
    assert _mapping('key = "order:{data.object.id}"\nwhen = { "data.object.payment_status" = "unpaid" }'
                    ).key_of(event) is None  # type: ignore[attr-defined]


def test_an_empty_when_and_a_missing_key_are_still_refused() -> None:
    with pytest.raises(ConfigError, match="names no condition"):
        _mapping('key = "order:{data.object.id}"\nwhen = {}')
    with pytest.raises(ConfigError, match="key: is required"):
        _mapping('when = { "data.object.payment_status" = "paid" }')
