"""Bad catalogs: one line naming the file, the webhook or type and the field; exit 2.

Each case writes a hookproof.toml with a ``[catalog]`` (and, for the document cases, a
small OpenAPI 3.1 ``webhooks.yaml`` beside it), runs ``hookproof certify`` in this process
(`tests.hookproof.test_bad_input.run_in_process`) and expects exactly one line on stderr,
the exit code 2, no traceback and no report. A problem in the config's own entries names
``hookproof.toml:LINE`` and the entry; a problem in the document names the document, the
webhook and the field (an extension, a ``$ref``, the failing place in the document).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from hookproof.loadtests.spec import SpecError
from tests.hookproof.test_bad_input import run_in_process

TARGET = """[target]
url = "http://127.0.0.1:9/webhooks"
profile = "generic-hmac"
secret = "s3cret"

[observer]
kind = "sql"
url = "sqlite:///observed.sqlite"
effects = "SELECT business_key FROM effects"
"""
DOC_CONFIG = TARGET + '\n[catalog]\nopenapi = "webhooks.yaml"\n'
SCHEMA = ('{type: object, required: [id, type, data], properties: {id: {type: string}, type: {type: string}, '
          'data: {type: object, required: [id, total], properties: {id: {type: string}, total: {type: integer}, '
          'code: {type: string, pattern: "^[A-Z]{3}-[0-9]{4}$"}}}}}')

#: A catalog of two kinds, one with states (its default kind is camelCase, as Clerk's types
#: make it), and the start of an [observer.states] table (its entry on line 19).
MEMBERSHIPS = """
[catalog.events."organizationMembership.created"]
example = { type = "organizationMembership.created", data = { id = "orgmem_1" } }
state = "member"

[catalog.events."session.created"]
example = { type = "session.created", data = { id = "sess_1" } }

[observer.states]
"""


def document(schema: str = SCHEMA, *, extensions: str = "", responses: str = '{"200": {description: ok}}',
             version: str = "3.1.0") -> str:
    return f"""openapi: {version}
info: {{title: Shop, version: "1"}}
webhooks:
  order.placed:
    post:
      x-hookproof-event-id: id
      x-hookproof-key: "fulfil:{{data.id}}"
{extensions}      requestBody:
        content:
          application/json:
            schema: {schema}
      responses: {responses}
components:
  schemas:
    Order: {SCHEMA}
"""


@dataclass(frozen=True)
class BadCatalog:
    id: str
    config: str
    doc: str | None
    expected: str  # the one line, after "hookproof: "


CASES = [
    BadCatalog("entry-without-schema-or-example",
               TARGET + '\n[catalog.events."order.placed"]\nkey = "fulfil:{data.id}"\n', None,
               'hookproof.toml:11: catalog.events."order.placed": neither a schema nor an example: '
               "hookproof cannot make its body"),
    BadCatalog("entry-key-names-a-missing-field",
               TARGET + '\n[catalog.events."order.placed"]\nexample = { id = "evt_1", type = "order.placed", '
               'data = { id = "ord_1" } }\nkey = "fulfil:{data.total}"\n', None,
               'hookproof.toml:11: catalog.events."order.placed": key: fulfil:{data.total}: the example has no '
               "field data.total"),
    BadCatalog("entry-ordering-the-example-lacks",  # hookproof would add a field the provider never sends
               TARGET + '\n[catalog.events."user.deleted"]\nexample = { type = "user.deleted", '
               'data = { id = "user_1", deleted = true } }\nordering = "data.updated_at"\n', None,
               'hookproof.toml:11: catalog.events."user.deleted": ordering: the example has no field data.updated_at: '
               "user.deleted's body as the provider sends it has no such field, and hookproof sends only fields it "
               "has; leave ordering out for this type, or add the field to its example or schema"),
    # references to another object (refs): a path the body lacks, a kind no type makes, the object's own id
    BadCatalog("entry-ref-the-example-lacks",
               TARGET + '\n[catalog.events."order.placed"]\nexample = { id = "evt_1", type = "order.placed", '
               'data = { id = "ord_1" } }\nrefs = { "data.customer_id" = "order" }\n', None,
               'hookproof.toml:11: catalog.events."order.placed": refs: data.customer_id: the example has no field '
               "data.customer_id"),
    BadCatalog("entry-ref-to-a-kind-no-type-makes",
               TARGET + '\n[catalog.events."order.placed"]\nexample = { id = "evt_1", type = "order.placed", '
               'data = { id = "ord_1", customer_id = "cus_1" } }\nrefs = { "data.customer_id" = "customer" }\n', None,
               'hookproof.toml:11: catalog.events."order.placed": refs: data.customer_id: no type of the catalog makes '
               "a customer object, the kind 'customer' names (its kinds: order; a type's kind is its object_type, else "
               "the type without its last part)"),
    BadCatalog("entry-ref-at-the-object-s-own-id",
               TARGET + '\n[catalog.events."order.placed"]\nexample = { id = "evt_1", type = "order.placed", '
               'data = { id = "ord_1" } }\nrefs = { "data.id" = "order" }\n', None,
               'hookproof.toml:11: catalog.events."order.placed": refs: data.id is the object\'s own id (object_id), '
               "not another object's; a reference names an object the world made before"),
    BadCatalog("document-ref-the-schema-lacks", DOC_CONFIG,
               document('{$ref: "#/components/schemas/Order"}',
                        extensions="      x-hookproof-refs: {data.customer_id: order}\n"),
               "webhooks.yaml: webhook order.placed: x-hookproof-refs: data.customer_id: the schema has no field "
               "data.customer_id"),
    BadCatalog("document-refs-not-a-mapping", DOC_CONFIG,
               document('{$ref: "#/components/schemas/Order"}', extensions="      x-hookproof-refs: data.customer_id\n"),
               "webhooks.yaml: webhook order.placed: x-hookproof-refs: a mapping of paths to object kinds "
               "({data.user_id: user}), not 'data.customer_id'"),
    BadCatalog("states-kind-the-catalog-lacks", TARGET + MEMBERSHIPS + 'organization_membership = "SELECT 1"\n', None,
               'hookproof.toml:19: observer.states.organization_membership: your catalog has no object kind '
               "'organization_membership' (its kinds: organizationMembership, session; a type's kind is its "
               "object_type, else the type without its last part)"),
    BadCatalog("states-kind-without-states", TARGET + MEMBERSHIPS + 'session = "SELECT 1"\n', None,
               "hookproof.toml:19: observer.states.session: no type of your catalog about a session sets a state, so "
               "nothing would compare this query's rows (the kinds whose types set one: organizationMembership)"),
    BadCatalog("unresolvable-ref", DOC_CONFIG, document('{$ref: "#/components/schemas/Nope"}'),
               "webhooks.yaml: webhook order.placed: $ref '#/components/schemas/Nope' cannot be resolved"),
    BadCatalog("invalid-document", DOC_CONFIG, document(responses="{}"),
               "webhooks.yaml: webhook order.placed: not a valid OpenAPI 3.1 document at "
               "webhooks.order.placed.post.responses: {} has less than 1 property"),
    BadCatalog("not-3.1", DOC_CONFIG, document(version="3.0.3"),
               "webhooks.yaml: openapi: not an OpenAPI 3.1 document (openapi is '3.0.3'; webhooks need 3.1)"),
    BadCatalog("document-key-names-a-missing-field", DOC_CONFIG,
               document('{$ref: "#/components/schemas/Order"}', extensions='      x-hookproof-amount: data.amount\n'),
               "webhooks.yaml: webhook order.placed: x-hookproof-amount: the schema has no field data.amount"),
    BadCatalog("document-key-template", DOC_CONFIG,
               document('{$ref: "#/components/schemas/Order"}').replace("fulfil:{data.id}", "fulfil:{data.number}"),
               "webhooks.yaml: webhook order.placed: x-hookproof-key: fulfil:{data.number}: the schema has no "
               "field data.number"),
    BadCatalog("pattern-needs-an-example", DOC_CONFIG, document(
        '{$ref: "#/components/schemas/Order"}').replace("required: [id, total]", "required: [id, total, code]"),
               "webhooks.yaml: webhook order.placed: the body hookproof made (give an example) does not match the "
               "schema at data.code: "),
    # a new user's typo in the config's file name: the config's file, line and field, as every config error
    BadCatalog("missing-document", DOC_CONFIG, None,
               "hookproof.toml:12: catalog.openapi: cannot read webhooks.yaml: No such file or directory"),
    BadCatalog("missing-example-file",
               TARGET + '\n[catalog.events."order.placed"]\nexample = "placed.json"\nobject_id = "data.id"\n', None,
               'hookproof.toml:12: catalog.events."order.placed".example: cannot read placed.json: '
               "No such file or directory"),
    # a new user's x-hookproof-state spelt otherwise than the schema's enum: the state named, not the example
    BadCatalog("state-outside-the-enum", DOC_CONFIG, document(
        '{$ref: "#/components/schemas/Order"}',
        extensions="      x-hookproof-object-id: data.id\n      x-hookproof-status: data.code\n"
                   "      x-hookproof-state: cancelled\n"),
               "webhooks.yaml: webhook order.placed: x-hookproof-state: 'cancelled' is not a status the schema "
               "allows at data.code: 'cancelled' does not match '^[A-Z]{3}-[0-9]{4}$'"),
    BadCatalog("catalog-for-stripe", DOC_CONFIG.replace('"generic-hmac"', '"stripe"'), document(),
               "hookproof.toml:11: catalog: the stripe profile sends its provider's own events; a catalog is "
               "for generic-hmac, standard-webhooks, svix"),
    BadCatalog("enabled-event-not-in-the-catalog",
               DOC_CONFIG.replace('secret = "s3cret"', 'secret = "s3cret"\nenabled_events = ["order.paid"]'),
               document('{$ref: "#/components/schemas/Order"}'),
               "hookproof.toml:5: target.enabled_events: the Generic HMAC profile sends no event 'order.paid' "
               "(known: order.placed)"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_bad_catalog_is_one_line_naming_file_webhook_and_field(tmp_path: Path, case: BadCatalog) -> None:
    (tmp_path / "hookproof.toml").write_text(case.config, encoding="utf-8")
    if case.doc is not None:
        (tmp_path / "webhooks.yaml").write_text(case.doc, encoding="utf-8")
    run = run_in_process("certify", "--config", "hookproof.toml", "--out", str(tmp_path / "out"), cwd=tmp_path)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and "Traceback" not in run.stderr, run
    assert lines[0].startswith("hookproof: " + case.expected), lines[0]
    assert not (tmp_path / "out" / "report.json").exists()


def test_a_catalog_s_camel_case_kind_is_a_states_kind(tmp_path: Path) -> None:
    """`organizationMembership`, the default kind of Clerk's membership types, names its states."""
    from hookproof.config import load_config

    (tmp_path / "hookproof.toml").write_text(TARGET + MEMBERSHIPS + 'organizationMembership = "SELECT 1"\n',
                                             encoding="utf-8")
    assert set(load_config(tmp_path / "hookproof.toml").observer.states) == {"organizationMembership"}  # type: ignore[union-attr]


def test_a_good_document_loads(tmp_path: Path) -> None:
    from hookproof.config import load_config

    (tmp_path / "hookproof.toml").write_text(DOC_CONFIG, encoding="utf-8")
    (tmp_path / "webhooks.yaml").write_text(document('{$ref: "#/components/schemas/Order"}'), encoding="utf-8")
    profile = load_config(tmp_path / "hookproof.toml").profile()
    assert dict(profile.event_types()) == {"order.placed": "order.placed"}


def test_team_keys_and_counters_apply_to_the_catalogs_types(tmp_path: Path) -> None:
    """[business_keys] overrides a document's key by the user's type name; [counters] reads its bodies."""
    from hookproof.config import load_config
    from hookproof.errors import ConfigError
    from hookproof.simulator.world import emit_events, new_world

    extra = ('\n[business_keys]\n"order.placed" = "order:{data.id}:{data.total}"\n\n'
             '[counters."order.placed"]\nkey = "{data.id}"\namount = "data.total"\n')
    (tmp_path / "hookproof.toml").write_text(DOC_CONFIG + extra, encoding="utf-8")
    (tmp_path / "webhooks.yaml").write_text(document('{$ref: "#/components/schemas/Order"}'), encoding="utf-8")
    config = load_config(tmp_path / "hookproof.toml")
    mapping = config.key_mapping()
    (event,) = emit_events(new_world(config.profile().world, 4), "order.placed")
    data = event.extra["body"]["data"]
    assert event.business_key == f"fulfil:{data['id']}"  # the document's key, in the world
    assert mapping.key_of(event) == f"order:{data['id']}:{data['total']}"  # the team's wins
    assert mapping.counter_of(event) == (data["id"], data["total"])
    (tmp_path / "hookproof.toml").write_text(DOC_CONFIG + extra.replace("data.total\"\n", "data.sum\"\n"),
                                             encoding="utf-8")
    with pytest.raises(ConfigError, match=r'counters\."order.placed": data.sum: the event has no field data.sum'):
        load_config(tmp_path / "hookproof.toml")


def test_svix_sends_the_catalog_too(tmp_path: Path) -> None:
    from hookproof.config import load_config

    (tmp_path / "hookproof.toml").write_text(DOC_CONFIG.replace('"generic-hmac"', '"svix"')
                                             .replace('"s3cret"', '"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"'),
                                             encoding="utf-8")
    (tmp_path / "webhooks.yaml").write_text(document('{$ref: "#/components/schemas/Order"}'), encoding="utf-8")
    profile = load_config(tmp_path / "hookproof.toml").profile()
    assert profile.name == "svix" and list(profile.event_types()) == ["order.placed"]
    assert profile.default_event == "order.placed"


def test_a_storm_carries_the_catalog_and_its_enabled_events_to_its_processes(tmp_path: Path) -> None:
    """A storm's Locust processes (maybe on other machines, without the config's files) get the
    catalog as data in the spec: the same types, bodies and keys; enabled_events in its names."""
    from hookproof.commands.storm import build_spec
    from hookproof.config import load_config
    from hookproof.loadtests.spec import StormSpec
    from hookproof.loadtests.stories import StoryBook, template_world

    (tmp_path / "hookproof.toml").write_text(DOC_CONFIG.replace('profile = "generic-hmac"',
                                                                'profile = "generic-hmac"\nenabled_events = '
                                                                '["order.placed"]'), encoding="utf-8")
    (tmp_path / "webhooks.yaml").write_text(document('{$ref: "#/components/schemas/Order"}'), encoding="utf-8")
    config = load_config(tmp_path / "hookproof.toml")
    spec = build_spec(config, users=1, rate=1.0, duration_s=1.0, shape="steady", duplicates=0.0, burst=1,
                      reorder_window=1, waves=0, out=tmp_path / "out", sink_url=None, progress_path=None)
    ours = config.profile()
    (tmp_path / "webhooks.yaml").unlink()  # a worker elsewhere has no file
    spec = StormSpec.from_json(spec.for_workers().to_json())
    assert spec.catalog is not None and spec.enabled_types == ("order.placed",)
    profile = spec.sending_profile()
    assert profile.name == "generic-hmac" and list(profile.event_types()) == ["order.placed"]
    world = template_world(profile.world, 3)
    book = StoryBook(world, profile, lambda e: e.type in ("order.placed",) and e.business_key is not None, stories=2)
    assert book.templates
    for s, story in enumerate(book.templates):
        for i, template in enumerate(story):
            event = book.render(s, i, 1).event
            assert event.type == "order.placed" and event.business_key not in (None, template.business_key)
            assert ours.envelope(template).body == profile.envelope(template).body  # certify's rendering
    with pytest.raises(SpecError, match="profile: not a catalog's data"):
        StormSpec(target_url="http://127.0.0.1:9/h", profile="generic-hmac", catalog={"events": [{"nope": 1}]}
                  ).sending_profile()


def test_schemas_in_files_and_refs_to_files_beside_them_resolve(tmp_path: Path) -> None:
    """A config entry's schema file whose $ref names another file, and a document whose $ref does."""
    from hookproof.config import load_config

    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "common.yaml").write_text(
        "Money: {type: integer, minimum: 1}\nId: {type: string, examples: [pay_0123456789abcdefghijklmn]}\n",
        encoding="utf-8")
    (tmp_path / "schemas" / "payment.json").write_text(
        '{"type": "object", "required": ["id", "type", "data"], "properties": {"id": {"type": "string"}, '
        '"type": {"type": "string"}, "data": {"type": "object", "required": ["id", "amount"], "properties": '
        '{"id": {"$ref": "common.yaml#/Id"}, "amount": {"$ref": "common.yaml#/Money"}}}}}', encoding="utf-8")
    (tmp_path / "hookproof.toml").write_text(
        TARGET + '\n[catalog.events."payment.captured"]\nschema = "schemas/payment.json"\nevent_id = "id"\n'
        'key = "capture:{data.id}"\namount = "data.amount"\n', encoding="utf-8")
    profile = load_config(tmp_path / "hookproof.toml").profile()
    from hookproof.simulator.world import emit_events, new_world

    (event,) = emit_events(new_world(profile.world, 2), "payment.captured")
    data = event.extra["body"]["data"]
    assert data["id"].startswith("pay_") and event.business_key == f"capture:{data['id']}"
    assert isinstance(data["amount"], int) and data["amount"] >= 1 and event.amount == data["amount"]

    (tmp_path / "webhooks.yaml").write_text(document('{$ref: "schemas/order.yaml#/Order"}'), encoding="utf-8")
    (tmp_path / "schemas" / "order.yaml").write_text(f"Order: {SCHEMA}\n", encoding="utf-8")
    (tmp_path / "hookproof.toml").write_text(DOC_CONFIG, encoding="utf-8")
    assert list(load_config(tmp_path / "hookproof.toml").profile().event_types()) == ["order.placed"]
