"""A Stripe-Version hookproof does not model (stripe-node 23.2.0 pins 2026-11-18.endive) is
served in the latest modelled shape, and the run's report says so once, in one note."""

from __future__ import annotations

import time

import httpx
import pytest

from hookproof.scenarios.runner import Runner
from hookproof.simulator.delivery import History, Target
from hookproof.simulator.events import LATEST_API_VERSION
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.profiles.stripe_versions import unmodelled
from hookproof.simulator.server import ServerState, create_app
from hookproof.simulator.server.state import DEFAULT_API_KEY
from hookproof.simulator.world import World

ENDIVE = "2026-11-18.endive"  # stripe-node 23.2.0's pin (its apiVersion.js)
FUTURE = "2099-01-01.zebra"  # a version no one knows yet


async def _fetch(state: ServerState, *versions: str | None) -> None:
    """Retrieve one customer and list invoices at each of `versions` (None: no Stripe-Version)."""
    world = state.worlds[0]
    (customer,) = world.objects("customer")[:1]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(state)), base_url="http://api.test",
                                 headers={"Authorization": f"Bearer {DEFAULT_API_KEY}"}) as client:
        for version in versions:
            headers = {"Stripe-Version": version} if version else {}
            got = await client.get(f"/v1/customers/{customer}", headers=headers)
            assert got.status_code == 200, got.text
            listed = await client.get("/v1/invoices", headers=headers)
            assert listed.status_code == 200, listed.text


def _state() -> ServerState:
    world = World(5)
    world.lifecycle()  # customers, subscriptions, invoices
    return ServerState([world])


@pytest.mark.parametrize(("version", "expected"), [
    (ENDIVE, True), (FUTURE, True), ("2026-06-24.endive", True),
    (LATEST_API_VERSION, False), (LATEST_API_VERSION.split(".")[0], False), ("2025-03-31.basil", False),
    ("2024-06-20", False),
])
def test_which_versions_are_not_modelled(version: str, expected: bool) -> None:
    assert unmodelled(version) is expected


async def test_a_later_version_is_noted_once_naming_the_shape_served() -> None:
    state = _state()
    await _fetch(state, ENDIVE, ENDIVE, ENDIVE)
    note = state.api_version_note()
    assert note is not None
    assert note.count(ENDIVE) == 1
    assert f"in the shape of {LATEST_API_VERSION}, the latest API version hookproof models" in note
    assert f"pin its SDK to {LATEST_API_VERSION}" in note and "apiVersion" in note
    assert DEFAULT_API_KEY not in note


async def test_an_unknown_future_version_is_in_the_same_note() -> None:
    state = _state()
    await _fetch(state, ENDIVE, FUTURE)
    note = state.api_version_note()
    assert note is not None and f"pinned to {ENDIVE}, {FUTURE}" in note


async def test_the_modelled_version_and_no_version_are_not_noted() -> None:
    state = _state()
    await _fetch(state, LATEST_API_VERSION, "2024-06-20", None)
    assert state.api_version_note() is None


async def test_the_run_report_carries_the_note_once() -> None:
    state = _state()
    runner = Runner(target=Target(url="http://127.0.0.1:9/webhooks"), profile=get_profile("stripe"),
                    secrets=("whsec_test",), observe=lambda: None, history=History(),  # type: ignore[arg-type]
                    server_state=state, notes=["an earlier note"])
    assert runner.report(time.time(), partial=False).notes == ("an earlier note",)
    await _fetch(state, ENDIVE, ENDIVE)
    notes = runner.report(time.time(), partial=False).notes
    assert notes[0] == "an earlier note" and len(notes) == 2 and ENDIVE in notes[1]
    assert runner.notes == ["an earlier note"]  # asked again, the report says it once still
    assert len(runner.report(time.time(), partial=False).notes) == 2
