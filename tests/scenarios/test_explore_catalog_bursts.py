"""explore's burst tier over a user's own catalog: the bursts are about the catalog's events.

The README's OpenAPI example (`examples/openapi`) starts `examples.receivers.catalog.invoices`,
written from that document. `hookproof explore` races concurrent copies of one of the
catalog world's effectful events over real sockets: the receiver that dedupes passes the
burst tier with every copy counted and acknowledged, its twin without dedupe fails it.
Under Standard Webhooks the envelope's ``msg_`` id is not the world's event id: the copies
are still counted (by their delivery ids), so a correct receiver is never left unknown.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.examples.test_catalog_receivers import SECRETS, project

PROFILES = ["generic-hmac", "standard-webhooks"]
REPEATS = 3


def _explore(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: str, profile: str) -> object:
    from hookproof.commands.explore import run_explore
    from hookproof.config import load_config

    monkeypatch.setenv("WEBHOOK_SECRET", SECRETS[profile])
    config = load_config(project(tmp_path, receiver, profile))
    return run_explore(config, out_dir=tmp_path / "out", max_examples=3, seed=3, repeats=REPEATS)


def _burst(run: object) -> object:
    (scenario,) = [s for s in run.report.scenarios if s.id == "explore-burst-race"]  # type: ignore[attr-defined]
    return scenario


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES)
def test_the_catalog_receiver_passes_the_burst_tier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     profile: str) -> None:
    run = _explore(tmp_path, monkeypatch, "invoices", profile)
    hit = run.hit_rate  # type: ignore[attr-defined]
    assert hit is not None and hit.hits == 0
    assert hit.attempts == hit.acked == REPEATS * hit.copies  # every copy sent, counted and acknowledged
    assert _burst(run).verdict == "pass", _burst(run).reason  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES)
def test_the_twin_without_dedupe_fails_the_burst_tier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      profile: str) -> None:
    run = _explore(tmp_path, monkeypatch, "invoices_no_dedupe", profile)
    hit = run.hit_rate  # type: ignore[attr-defined]
    assert hit is not None and hit.hits == REPEATS and hit.attempts == REPEATS * hit.copies
    # the document's own keys (webhooks.yaml's x-hookproof-key), not the billing world's
    assert hit.keys and all(key.split(":")[0] in {"dunning", "fulfil", "refund"} for key in hit.keys), hit.keys
    assert _burst(run).verdict == "fail"  # type: ignore[attr-defined]
