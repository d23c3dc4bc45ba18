"""A correct Mercado Pago receiver fetching each payment after it answered passes the scenarios
that deliver only part of a story.

`tests.examples.mp_fetch_after_ack` answers a notification at once and fetches the payment
in a worker afterwards, as Mercado Pago's SDK advises. `provider-api-transient` delivers the
first notification of each payment, and `crash-after-ack` one payment's first notification
and then a burst of later stories: a payment's refund whose notification these scenarios never
send comes before later stories' notifications in the world. The provider API must not serve
that refund to a fetch made after those notifications went out, or the receiver recording
what it fetched would be judged to apply a refund no notification carried.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config import ChaosConfig, Config, ProcessTargetConfig
from tests.examples.test_provider_receivers import PROJECT_ROOT, config

MODULE = "tests.examples.mp_fetch_after_ack"


def after_ack_config(tmp_path: Path, *, chaos: bool = False) -> Config:
    """The reference receiver's config, running `MODULE` (under hookproof's control with `chaos`)."""
    cfg = config("mercadopago_fetch", tmp_path)
    start = cfg.target.start
    assert start is not None
    command = start.command.replace("examples.receivers.mercadopago_fetch", MODULE)
    if not chaos:
        return cfg.model_copy(update={"target": cfg.target.model_copy(update={
            "start": start.model_copy(update={"command": command})})})
    env = {k: v for k, v in start.env.items() if k != "PORT"}
    process = ProcessTargetConfig(command=command, cwd=str(PROJECT_ROOT), health_path="/healthz", env=env)
    return cfg.model_copy(update={"target": cfg.target.model_copy(update={"start": None, "process": process}),
                                  "chaos": ChaosConfig(events=3, kill_trials=2, replicas=3)})


@pytest.mark.slow
def test_a_receiver_fetching_after_it_answers_passes_provider_api_transient(tmp_path: Path) -> None:
    (scenario,) = certify(after_ack_config(tmp_path), scenarios=["provider-api-transient"],
                          out_dir=tmp_path / "report").report.scenarios
    assert (scenario.verdict, [f.message for f in scenario.findings]) == ("pass", []), \
        (scenario.reason, [f.message for f in scenario.findings])


@pytest.mark.slow
def test_a_receiver_fetching_after_it_answers_passes_crash_after_ack(tmp_path: Path) -> None:
    (scenario,) = certify(after_ack_config(tmp_path, chaos=True), scenarios=["crash-after-ack"],
                          out_dir=tmp_path / "report", chaos=True).report.scenarios
    assert (scenario.verdict, [f.message for f in scenario.findings]) == ("pass", []), \
        (scenario.reason, [f.message for f in scenario.findings])
