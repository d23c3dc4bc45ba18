"""Amounts are compared only for what the team declares, or for hookproof's own keys.

A key's name never makes a team's effect money: with ``builtin_keys = false`` a team key
``refund:…`` is an effect like any other (exactly once), its row's amount in whatever unit
the receiver keeps (a shop storing 24.00, not 2400) is not compared; only `[counters]` are.
hookproof's built-in keys (``refund:<charge>:<amount>``…) keep their amounts compared while
its built-in keys are on. A receiver that refunds twice still fails, on ``duplicated``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.receivers import config as receiver_config
from hookproof.certify import certify
from hookproof.config_model import Config
from hookproof.scenarios.business_keys import KeyMapping, money_prefixes
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import MONEY_PREFIXES

SECRET = "whsec_money_by_name_" + "0" * 20
STRIPE = get_profile("stripe")
REFUND = "refund:{data.object.id}:{data.object.amount_refunded}"


@pytest.mark.parametrize(("mapping", "prefixes"), [
    (None, MONEY_PREFIXES),
    (KeyMapping({"invoice.paid": "credit:{data.object.id}"}, STRIPE), MONEY_PREFIXES),
    (KeyMapping({"charge.refunded": REFUND}, STRIPE), ("license:", "renewal:", "fulfillment:")),
    (KeyMapping({"charge.refunded": REFUND}, STRIPE, builtin=False), ()),
    (KeyMapping({"invoice.paid": "credit:{data.object.id}"}, STRIPE, builtin=False), ()),
])
def test_money_prefixes_are_hookproofs_own_keys_only(mapping: KeyMapping | None, prefixes: tuple[str, ...]) -> None:
    assert money_prefixes(mapping) == prefixes


def _refunds_in_units(tmp_path: Path, name: str) -> Config:
    """`name` under the team's keys with builtin keys off: a refund per charge and amount,
    observed with its amount in currency units (cents // 100), as a shop may keep it."""
    config = receiver_config(name, tmp_path, SECRET)
    observer = config.observer.model_copy(update={
        "effects": "SELECT business_key, amount / 100 AS amount FROM effects WHERE business_key LIKE 'refund:%'"})
    return config.model_copy(update={"builtin_keys": False, "business_keys": {"charge.refunded": REFUND},
                                     "observer": observer})


SCENARIOS = ["distinct-events-same-object", "older-after-newer-redelivery"]


@pytest.mark.slow
def test_a_team_refund_key_in_other_units_is_not_compared_as_money(tmp_path: Path) -> None:
    report = certify(_refunds_in_units(tmp_path, "inbox_sync"), scenarios=SCENARIOS, out_dir=tmp_path / "out").report
    assert [(s.id, s.verdict, s.findings) for s in report.scenarios] == [(s, "pass", ()) for s in SCENARIOS], \
        [(s.id, s.reason, s.findings) for s in report.scenarios]
    counters = [c for s in report.scenarios for c in s.checks if c.check_id == "counter"]
    assert counters and all(c.stats["money_keys"] == 0 for c in counters)


@pytest.mark.slow
def test_a_refund_applied_twice_under_the_teams_key_still_fails_duplicated(tmp_path: Path) -> None:
    report = certify(_refunds_in_units(tmp_path, "last_refund_marker"), scenarios=SCENARIOS[1:],
                     out_dir=tmp_path / "out").report
    (older,) = report.scenarios
    assert older.verdict == "fail"
    assert {f.check_id for f in older.findings} == {"duplicated"}
    assert all(f.key.startswith("refund:ch_") for f in older.findings)


@pytest.mark.slow
def test_hookproofs_own_refund_keys_keep_their_amounts_compared(tmp_path: Path) -> None:
    config = receiver_config("inbox_sync", tmp_path, SECRET)
    observer = config.observer.model_copy(update={"effects": "SELECT business_key, amount / 100 AS amount FROM effects"})
    report = certify(config.model_copy(update={"observer": observer}), scenarios=SCENARIOS[1:],
                     out_dir=tmp_path / "out").report
    (older,) = report.scenarios
    assert older.verdict == "fail"
    assert {f.check_id for f in older.findings} == {"counter"}
    assert all(f.key.startswith("refund:ch_") and f.message.startswith("moved ") for f in older.findings)


@pytest.mark.parametrize("builtin_keys", [False, True])
def test_a_catalogs_declared_amounts_are_its_money_and_nothing_else(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   builtin_keys: bool) -> None:
    """The README's OpenAPI document declares an amount for ``refund:{data.id}`` only
    (``x-hookproof-amount``): that is compared, its ``fulfil:`` and ``dunning:`` keys are not,
    nor hookproof's own prefixes, with or without its built-in keys."""
    from tests.examples.test_catalog_receivers import SECRETS
    from tests.hookproof.test_new_user_fixes import catalog_config

    monkeypatch.setenv("WEBHOOK_SECRET", SECRETS["standard-webhooks"])
    config = catalog_config(tmp_path, builtin_keys=builtin_keys)
    profile, mapping = config.profile(), config.key_mapping()
    assert money_prefixes(mapping, profile) == money_prefixes(None, profile) == ("refund:",)
    team = KeyMapping({"refund.created": "credit:{data.id}"}, profile, builtin=builtin_keys)
    assert money_prefixes(team) == ()
