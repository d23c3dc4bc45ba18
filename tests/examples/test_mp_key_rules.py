"""Several key rules for one event type: Mercado Pago's ``payment.updated`` is a credit or a chargeback.

Under ``builtin_keys = false`` a team declares ``[[business_keys."payment.updated"]]`` twice
(`tests.examples.mp_credit_chargeback.CONFIG_KEYS`): ``credit:{data.id}`` when the fetched
payment is approved, ``chargeback:{data.id}`` when it is charged back; the first rule whose
`when` holds makes an event's key. The receiver written to those keys passes certify's whole
catalog; its twin without dedupe fails with ``duplicated`` on the same keys.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config import Config
from tests.examples.mp_credit_chargeback import CONFIG_KEYS
from tests.examples.test_provider_receivers import config

MODULE = "tests.examples.mp_credit_chargeback"
#: The twin's failures: the reference twin's (detection matrix, ``mercadopago_fetch_no_dedupe``)
#: less ``counter``, amounts being compared for no team key.
TWIN_FAILURES = {scenario: ["duplicated"] for scenario in (
    "duplicate-sequential", "duplicate-concurrent", "sender-timeout", "dropped-response", "reserialized-retry",
    "transport-fields-change", "mass-redelivery", "related-burst")} | {"thin-event": ["duplicated", "lost"],
                                                      "mass-redelivery-window": ["duplicated", "lost"]}


def keyed_config(tmp_path: Path, *, dedupe: bool) -> Config:
    """The reference receiver's certify config, running `MODULE` under `CONFIG_KEYS`."""
    base = config("mercadopago_fetch", tmp_path)
    assert base.target.start is not None
    command = base.target.start.command.replace("examples.receivers.mercadopago_fetch", MODULE)
    start = base.target.start.model_copy(update={"command": command + ("" if dedupe else " --no-dedupe")})
    keys = tomllib.loads(CONFIG_KEYS)
    return base.model_copy(update={"target": base.target.model_copy(update={"start": start}),
                                   "builtin_keys": keys["builtin_keys"], "business_keys": keys["business_keys"]})


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("dedupe", [True, False])
def test_a_receiver_under_two_rules_of_one_type_passes_and_its_twin_fails(tmp_path: Path, dedupe: bool) -> None:
    report = certify(keyed_config(tmp_path, dedupe=dedupe), out_dir=tmp_path / "report").report
    failed = {s.id: sorted({f.check_id for f in s.findings if f.severity == "finding"}) for s in report.scenarios
              if s.verdict not in ("pass", "not_applicable")}
    if dedupe:
        assert failed == {}, [(s.id, s.reason, [f.message for f in s.findings]) for s in report.scenarios
                              if s.verdict not in ("pass", "not_applicable")]
        ran = {s.id for s in report.scenarios if s.verdict == "pass"}
        assert {"duplicate-sequential", "distinct-updates-same-object", "thin-event", "foreign-account"} <= ran
        return
    assert failed == TWIN_FAILURES
    duplicated = {f.key.split(":")[0] for s in report.scenarios for f in s.findings if f.check_id == "duplicated"}
    assert duplicated == {"credit", "chargeback"}, duplicated
