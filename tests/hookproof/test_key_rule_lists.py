"""Key rules checked whole, and several rules for one event type.

- Every path of a rule's `when` is looked up on the config's sample event, a misspelt later
  path included: ``when = { "fetched.status" = "charged_back", "fetched.statsu" = … }`` was
  accepted because the first path did not hold, and certify then marked every scenario
  ERROR. It is one config error (exit 2) naming the file, the line and the path; the
  storm's check of every template over every event looks every path up too.
- ``[[business_keys."<type>"]]``: an array of rules for one type (Mercado Pago's
  ``payment.updated`` is a credit, a refund or a chargeback). The first rule whose `when`
  holds makes an event's key (two rules that could both hold: the first wins); a rule after
  one without `when` could never make a key and is refused.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT
from hookproof.config import load_config
from hookproof.errors import ConfigError
from hookproof.loadtests.spec import StormSpec
from hookproof.loadtests.stories import StoryBook, process_seed, template_world
from hookproof.loadtests.storm_truth import template_worlds
from hookproof.loadtests.team_keys import KeyCheckError, check_templates, storm_keys
from hookproof.scenarios.business_keys import KeyMapping, Rule, from_plain, keyed, to_plain
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world.mercadopago import MercadoPagoWorld
from tests.examples.mp_credit_chargeback import CONFIG_KEYS

HEAD = ('[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "mercadopago"\nsecret = "x"\n'
        '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n')


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _events(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookproof", "events", "--keys", "--config", str(path)],
                          capture_output=True, text=True, timeout=60, cwd=PROJECT_ROOT)


@pytest.mark.parametrize(("when", "path"), [
    ('{ "fetched.status" = "charged_back", "fetched.statsu" = "approved" }', "fetched.statsu"),
    ('{ "fetched.status" = ["charged_back"], "fetched.statsu" = ["charged_back"] }', "fetched.statsu"),
    ('{ "fetched.nope" = 1, "fetched.status" = "charged_back" }', "fetched.nope"),
])
def test_a_misspelt_path_of_when_is_a_config_error_wherever_it_stands(tmp_path: Path, when: str, path: str) -> None:
    config = _write(tmp_path, f'builtin_keys = false\n{HEAD}[business_keys."payment.updated"]\n'
                              f'key = "chargeback:{{data.id}}"\nwhen = {when}\n')
    done = _events(config)
    assert done.returncode == 2, done.stdout
    assert done.stderr.splitlines() == [
        f"hookproof: {config}:10: business_keys.\"payment.updated\": when {path}: the object the provider's API "
        f"serves has no field {path.removeprefix('fetched.')}"]


def test_a_misspelt_path_of_a_later_rule_is_a_config_error(tmp_path: Path) -> None:
    keys = CONFIG_KEYS.replace('when = { "fetched.status" = "charged_back" }',
                               'when = { "fetched.status" = "charged_back", "data.idd" = "1" }')
    config = _write(tmp_path, keys + HEAD)
    with pytest.raises(ConfigError) as caught:
        load_config(config).key_mapping()
    assert str(caught.value) == (f'{config}:11: business_keys."payment.updated": rule 2: when data.idd: the event '
                                 "has no field data.idd")  # line 11: the second [[business_keys."payment.updated"]]


def test_the_storm_check_looks_every_path_up() -> None:
    plain = {"builtin": False, "templates": {"payment.updated": "chargeback:{data.id}"}, "counters": {},
             "conditions": {"payment.updated": {"fetched.status": ["charged_back"], "fetched.statsu": ["x"]}}}
    spec = StormSpec(target_url="http://127.0.0.1:9/webhooks", profile="mercadopago", users=1, rate_per_s=1.0,
                     duration_s=1.0, seed=5, world_start_us=1_790_000_000_000_000, out_dir="unused", keys=plain)
    with pytest.raises(KeyCheckError, match="when fetched.statsu: the object the provider's API serves has no field"):
        check_templates(spec)


def test_two_rules_of_one_type_key_a_credit_and_a_chargeback(tmp_path: Path) -> None:
    config = _write(tmp_path, CONFIG_KEYS + HEAD)
    mapping = load_config(config).key_mapping()
    assert mapping.rules("payment.updated") == (Rule("credit:{data.id}", {"fetched.status": ("approved",)}),
                                                Rule("chargeback:{data.id}", {"fetched.status": ("charged_back",)}))
    world = MercadoPagoWorld(7)
    pix = world.pay(method="pix")  # pending, then approved: the credit
    world.approve_pending(pix)
    world.refund(pix)  # refunded: no key (the team declares none)
    card = world.pay()
    world.charge_back(card)
    got = [(e.type, e.status, e.business_key) for e in keyed(world.events, mapping) if e.object_type == "payment"]
    assert got == [("payment.created", "pending", None), ("payment.updated", "approved", f"credit:{pix}"),
                   ("payment.updated", "refunded", None), ("payment.created", "approved", f"credit:{card}"),
                   ("payment.updated", "charged_back", f"chargeback:{card}")]
    again = from_plain(to_plain(mapping), mapping.profile)
    assert (again.templates, again.conditions, again.more) == (mapping.templates, mapping.conditions, mapping.more)
    done = _events(config)
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines()}
    assert "e.g. credit:" in lines["payment.updated"] and ", chargeback:" in lines["payment.updated"]


def test_the_storm_keeps_every_rule(tmp_path: Path) -> None:
    mapping = load_config(_write(tmp_path, CONFIG_KEYS + HEAD)).key_mapping()
    spec = StormSpec(target_url="http://127.0.0.1:9/webhooks", profile="mercadopago", users=1, rate_per_s=1.0,
                     duration_s=1.0, seed=5, world_start_us=1_790_000_000_000_000, out_dir="unused",
                     keys=to_plain(mapping))
    check_templates(spec)
    storm = storm_keys(spec, template_worlds(spec, 1))
    assert storm is not None and storm.rules("payment.updated") == mapping.rules("payment.updated")
    profile = get_profile("mercadopago")
    book = StoryBook(template_world(profile.world, process_seed(spec.seed, 0), start_us=spec.world_start_us), profile,
                     lambda e: True)
    keyed_slim = {(r.event.type, r.event.status, (storm.key_of(r.event) or "-").split(":")[0])
                  for r in book.stream(first_copy=3, max_events=80)}  # slim events: read on their senders' bodies
    assert {t for t in keyed_slim if t[0].startswith("payment.")} == {
        ("payment.created", "approved", "credit"), ("payment.created", "pending", "-"),
        ("payment.created", "rejected", "-"), ("payment.updated", "approved", "credit"),
        ("payment.updated", "refunded", "-"), ("payment.updated", "charged_back", "chargeback"),
        ("payment.created", "in_process", "-"), ("payment.created", "authorized", "-"),  # in review, not captured
        ("payment.updated", "cancelled", "-")}  # a Pix expired, an authorization released


def test_the_first_rule_whose_when_holds_makes_the_key(tmp_path: Path) -> None:
    both = CONFIG_KEYS.replace('"fetched.status" = "charged_back"', '"fetched.status" = ["approved", "charged_back"]')
    mapping: KeyMapping = load_config(_write(tmp_path, both + HEAD)).key_mapping()
    world = MercadoPagoWorld(7)
    card = world.pay()
    world.charge_back(card)
    assert [e.business_key for e in keyed(world.events, mapping) if e.object_type == "payment"] == [
        f"credit:{card}", f"chargeback:{card}"]  # approved: both rules hold, the first (credit) wins


@pytest.mark.parametrize(("rules", "message"), [
    ('[[business_keys."payment.updated"]]\nkey = "credit:{data.id}"\n'
     '[[business_keys."payment.updated"]]\nkey = "chargeback:{data.id}"\nwhen = { "fetched.status" = "charged_back" }\n',
     'business_keys."payment.updated": rule 2 is never used: rule 1 has no when'),
    ('[[business_keys."payment.updated"]]\nkey = "credit:{data.id}"\nwhen = { "fetched.status" = "approved" }\n'
     '[[business_keys."payment.updated"]]\nwhen = { "fetched.status" = "charged_back" }\n',
     'hookproof.toml:13: business_keys."payment.updated": rule 2: key: is required'),
    ('[business_keys]\n"payment.updated" = []\n',
     'business_keys."payment.updated": an empty array of rules makes no key'),
])
def test_a_bad_array_of_rules_is_one_config_error(tmp_path: Path, rules: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, f"builtin_keys = false\n{HEAD}{rules}")).key_mapping()
    assert message in str(caught.value), str(caught.value)
