"""The storm spec is a document checked whole when read: each wrong field is one line naming it."""

from __future__ import annotations

import pytest

from hookproof.loadtests.spec import PROTOCOL, SpecError, StormSpec, schema_protocol, storm_protocol


@pytest.mark.parametrize(("text", "message"), [
    ('{"users": 5}', "target_url: required"),
    ('{"target_url": "http://127.0.0.1", "users": "5"}', "users: input should be a valid integer, got '5'"),
    ('{"target_url": "http://127.0.0.1", "shape": 3}', "shape: input should be a valid string, got 3"),
    ('{"target_url": "http://127.0.0.1", "live": "yes"}', "live: input should be a valid boolean, got 'yes'"),
    ('{"target_url": "http://127.0.0.1", "enabled_types": "invoice.paid"}', "enabled_types: input should be a valid tuple"),
    ('{"target_url": "http://127.0.0.1", "users": 0}', "users: must be >= 1"),
    ('{"target_url": "http://127.0.0.1", "sender_timeout_s": 1e999}', "sender_timeout_s: must be a finite number"),
    ('{"target_url": "http://127.0.0.1", "extra": 1}', "unknown storm spec field 'extra'"),
    ('[1]', "the storm spec must be a JSON object"),
    ('{', "the storm spec is not JSON"),
])
def test_a_bad_spec_is_one_line_naming_the_field(text: str, message: str) -> None:
    with pytest.raises(SpecError) as info:
        StormSpec.from_json(text)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_numbers_may_be_written_as_whole_numbers_and_lists_become_tuples() -> None:
    spec = StormSpec.from_json('{"target_url": "http://127.0.0.1", "rate_per_s": 5, "enabled_types": ["invoice.paid"]}')
    assert spec.rate_per_s == 5.0 and spec.enabled_types == ("invoice.paid",)
    assert StormSpec.from_json(spec.to_json()) == spec


def test_the_storm_protocol_changes_with_the_spec_s_fields_and_its_number_not_its_words() -> None:
    class Wider(StormSpec):
        signing: str = ""

    class Reworded(StormSpec):
        """The same fields, other words."""

    assert storm_protocol() == schema_protocol(StormSpec) and storm_protocol().startswith(f"{PROTOCOL}-")
    assert schema_protocol(Reworded) == storm_protocol()
    assert schema_protocol(Wider) != storm_protocol()
    assert schema_protocol(StormSpec, PROTOCOL + 1) != storm_protocol()
