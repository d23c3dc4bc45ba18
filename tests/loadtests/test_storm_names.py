"""A storm sends the names the config lists: they travel to the Locust workers in the spec.

Standard Webhooks has no fixed catalog; `Config.event_names` (the config's spellings) goes
into `StormSpec.event_names`, and every storm process builds its profile from the spec
(`StormSpec.sending_profile`). The fast test follows the spec as the master hands it to its
workers; the slow ones storm `examples/receivers/standard/billing_names.py` (it knows only
the billing names) with two workers: with the config listing them it passes, with a config
listing none the default renaming reaches it and its effects are ``lost``.
"""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hookproof.loadtests.spec import SpecError, StormSpec
from tests.examples.test_standard_names import BILLING_NAMES, write_config
from tests.loadtests.storm_batch import StormBatch, storm_batch
from tests.loadtests.test_storm_worlds import failing_checks, storm


def test_the_config_s_names_travel_with_the_spec_to_the_workers(tmp_path: Path) -> None:
    from hookproof.commands.storm import build_spec
    from hookproof.config import load_config

    config = load_config(write_config(tmp_path))
    spec = build_spec(config, users=1, rate=1.0, duration_s=1.0, shape="steady", duplicates=0.2, burst=2,
                      reorder_window=2, waves=0, out=tmp_path / "out", sink_url=None, progress_path=None)
    assert spec.event_names == {"payment_intent.succeeded": "payment_intent.succeeded",
                                "customer.subscription.created": "customer.subscription.created",
                                "customer.subscription.updated": "customer.subscription.updated",
                                "customer.subscription.deleted": "customer.subscription.deleted"}
    worker = StormSpec.from_json(spec.for_workers().to_json())
    names = worker.sending_profile().event_types()
    assert {t: names[t] for t in BILLING_NAMES} == {t: t for t in BILLING_NAMES}
    assert names["payment_intent.payment_failed"] == "payment.failed"  # not listed: the default
    listing_none = build_spec(load_config(write_config(tmp_path, enabled=None)), users=1, rate=1.0, duration_s=1.0,
                              shape="steady", duplicates=0.2, burst=2, reorder_window=2, waves=0,
                              out=tmp_path / "out", sink_url=None, progress_path=None)
    assert listing_none.event_names == {}
    assert listing_none.sending_profile().event_types()["payment_intent.succeeded"] == "payment.succeeded"
    with pytest.raises(SpecError, match="event_names"):
        StormSpec(target_url="http://127.0.0.1:9/", profile="stripe", event_names={"invoice.paid": "paid"})


def test_a_storm_s_checkout_intents_owe_their_license_where_the_session_s_events_are_not_sent(
        tmp_path: Path) -> None:
    """A Checkout purchase is fulfilled on the session's events; a storm endpoint enabled for
    the billing names (no Checkout event) is owed it on the intent's payment_intent.succeeded,
    as a certify run's is (`World.sent_only`): the storm's stories key those intents, and key
    none where every type is sent."""
    import gc

    from hookproof.commands.storm import build_spec
    from hookproof.config import load_config
    from hookproof.loadtests.storm_state import StormProcess

    threshold = gc.get_threshold()
    try:
        for enabled, keyed in ((BILLING_NAMES, True), (None, False)):
            spec = build_spec(load_config(write_config(tmp_path, enabled=enabled)), users=1, rate=1.0,
                              duration_s=1.0, shape="steady", duplicates=0.2, burst=2, reorder_window=2, waves=0,
                              out=tmp_path / "out", sink_url=None, progress_path=None)
            state = StormProcess()
            state.setup(spec, sender=False)
            book = state.story_book(state.process_seed(0))
            events = [e for story in book.templates for e in story]
            intents = [e for e in events if e.type == "payment_intent.succeeded"  # the stories mark a session's
                       and (e.object.get("metadata") or {}).get("channel") == "checkout"]
            assert intents, sorted({e.type for e in events})
            assert {e.business_key for e in intents} == (
                {f"license:{e.object_id}" for e in intents} if keyed else {None}), enabled
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


Ran = tuple[Path, subprocess.CompletedProcess[str]]


def _storm(enabled: list[str] | None) -> Callable[[Path], Ran]:
    return lambda tmp_path: (tmp_path, storm(write_config(tmp_path, enabled=enabled), tmp_path / "out",
                                             "--workers", "2"))


STORMS: dict[str, Callable[[Path], Ran]] = {
    "test_a_storm_sends_the_listed_names_from_every_worker/storm": _storm(BILLING_NAMES),
    "test_a_storm_of_a_config_listing_no_names_sends_the_default_ones/storm": _storm(None),
}


@pytest.fixture(scope="module")
def storms(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StormBatch[Ran]]:
    """The selected tests' storms of `STORMS`, started side by side: (its directory, the storm process)."""
    with storm_batch(request, tmp_path_factory, STORMS) as batch:
        yield batch


def _effect_kinds(tmp_path: Path) -> set[str]:
    with sqlite3.connect(tmp_path / "billing.sqlite") as conn:
        return {k.split(":")[0] for (k,) in conn.execute("SELECT business_key FROM effects")}


@pytest.mark.slow
def test_a_storm_sends_the_listed_names_from_every_worker(storms: StormBatch[Ran], request: pytest.FixtureRequest) -> None:
    tmp_path, result = storms.result(f"{request.node.name}/storm")
    assert failing_checks(tmp_path / "out") == {}, result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 worker(s)" in result.stderr
    assert "license" in _effect_kinds(tmp_path)  # payment_intent.succeeded reached it under that name


@pytest.mark.slow
def test_a_storm_of_a_config_listing_no_names_sends_the_default_ones(storms: StormBatch[Ran],
                                                                      request: pytest.FixtureRequest) -> None:
    tmp_path, result = storms.result(f"{request.node.name}/storm")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "lost" in failing_checks(tmp_path / "out"), result.stdout
    assert "license" not in _effect_kinds(tmp_path)  # payment.succeeded is unknown to it
