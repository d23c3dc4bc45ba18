"""dj-stripe 2.11.0 from PyPI, in its own venv, takes every event hookproof's Stripe profile
sends and syncs what they name through the provider API (no shim, no edit to the package).

This is the first half of certifying dj-stripe (issue 15): its webhook view verifies every
event of a whole-lifecycle world and answers 200, and every object it fetches to sync
(customers, subscriptions, invoices, prices, products and their features, checkout sessions
with their line items) the provider API serves. A certify run over its signals is not here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from hookproof.simulator.profiles.stripe import STRIPE_OPTIONAL_EVENT_TYPES, StripeProfile
from hookproof.simulator.server import DEFAULT_API_KEY, ServerHandle, ServerState, run_server
from hookproof.simulator.world import World
from tests.examples.django_shops import DJSTRIPE_SHOP, djstripe_python, migrated_db
from tests.simulator.test_stripe_fidelity import full_world

APP = Path(__file__).with_name("djstripe_app")
RUN_TIMEOUT_S = 600

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200 + RUN_TIMEOUT_S)]


@pytest.fixture(scope="module")
def venv_python() -> Path:
    """The venv with the pinned dj-stripe (its own Django and stripe), built from PyPI once and shared
    with the shop certified in tests/examples/test_djstripe_shop.py."""
    return djstripe_python()


@pytest.fixture(scope="module")
def world() -> World:
    return full_world()


@pytest.fixture(scope="module")
def provider(world: World) -> Iterator[ServerHandle]:
    with run_server(ServerState([world])) as handle:
        yield handle


def test_djstripe_takes_every_event_and_syncs_through_the_provider_api(
        venv_python: Path, provider: ServerHandle, world: World, tmp_path: Path) -> None:
    db = tmp_path / "shop.sqlite3"
    shutil.copyfile(migrated_db(venv_python, DJSTRIPE_SHOP), db)  # drive.py's migrate finds nothing left to do
    env = {**os.environ, "HOOKPROOF_API_BASE": provider.api_base, "HOOKPROOF_API_KEY": DEFAULT_API_KEY,
           "DJSTRIPE_DB": str(db)}
    run = subprocess.run([str(venv_python), str(APP / "drive.py")], capture_output=True, text=True, env=env,
                         timeout=RUN_TIMEOUT_S, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout)
    assert result["failed_requests"] == []
    answers = Counter(status for _, status in result["answers"])
    assert answers == Counter({200: len(world.events)})
    # every type, invoice.payment_succeeded too: the world's scripts send it as to an endpoint listing it
    assert {event_type for event_type, _ in result["answers"]} == set(
        StripeProfile(subscribed=STRIPE_OPTIONAL_EVENT_TYPES).event_types())
    rows = result["rows"]
    assert rows["Event"] == len(world.events)
    for model, object_type in (("Customer", "customer"), ("Subscription", "subscription"), ("Invoice", "invoice")):
        assert rows[model] == len(world.objects(object_type)), model
    # dj-stripe makes its Refund rows from a charge's `refunds` list only, which Stripe leaves out of
    # the charge from API version 2022-11-15 on unless expanded (changelog: "The Charge object no
    # longer auto-expands refunds"); dj-stripe never expands it, so on Stripe, as here, it has none
    assert world.objects("refund") and rows["Refund"] == 0
