"""What Mercado Pago's `concurrent-updates-stored-object` proves, said as it is.

Mercado Pago's notifications carry no status: every receiver fetches the payment, and the
provider API serves both notifications released together the same payment, refunded (as
Mercado Pago's API serves a payment's current state). So a receiver writing whatever it fetched,
without comparing ``date_last_updated`` or locking the row, passes this scenario
(`tests.examples.mp_blind_status`, which `fetch-overtaken` fails); the scenario's words must not
promise to catch it, and must say which scenario does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.scenarios.catalog import WORDED

MP = dict((profile, (title, words)) for profile, title, words in WORDED["concurrent-updates-stored-object"])


def test_the_mercadopago_words_promise_no_status_race_and_name_fetch_overtaken() -> None:
    title, words = MP["mercadopago"]
    assert title == "Two notifications of a stored payment arrive together"
    assert "lets the older write land last" not in words, words
    assert words.endswith(
        "Mercado Pago's notifications carry no status and its API serves both fetches the refunded payment, so "
        "a status written whatever was fetched, without a row lock, is not caught here: a fetch answered after "
        "a newer one's write is fetch-overtaken's story."), words


@pytest.mark.slow
def test_a_blind_status_write_passes_here_as_the_words_say(tmp_path: Path) -> None:
    from hookproof.certify import certify
    from tests.examples.test_provider_receivers import config

    base = config("mercadopago_fetch", tmp_path)
    assert base.target.start is not None
    start_cmd = base.target.start.command.replace("-m examples.receivers.mercadopago_fetch",
                                                   "-m tests.examples.mp_blind_status")
    target = base.target.model_copy(update={"start": base.target.start.model_copy(update={"command": start_cmd})})
    report = certify(base.model_copy(update={"target": target}), scenarios=["concurrent-updates-stored-object"],
                     out_dir=tmp_path / "report").report
    (scenario,) = report.scenarios
    assert (scenario.verdict, scenario.findings) == ("pass", ()), [f.message for f in scenario.findings]
