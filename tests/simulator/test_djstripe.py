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
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from hookproof.simulator.profiles.stripe import StripeProfile
from hookproof.simulator.server import DEFAULT_API_KEY, ServerHandle, ServerState, run_server
from hookproof.simulator.world import World
from tests.simulator.test_stripe_fidelity import full_world
from tests.support import require_service

APP = Path(__file__).with_name("djstripe_app")
INSTALL_TIMEOUT_S = 600
RUN_TIMEOUT_S = 600

pytestmark = [pytest.mark.slow, pytest.mark.timeout(INSTALL_TIMEOUT_S + RUN_TIMEOUT_S)]


@pytest.fixture(scope="module")
def venv_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the pinned dj-stripe (its own Django and stripe), built from PyPI."""
    venv = tmp_path_factory.mktemp("djstripe-venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", str(APP / "requirements.txt")],
                             capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)
    if install.returncode != 0:
        require_service("dj-stripe 2.11.0 from PyPI", install.stderr.strip().splitlines()[-1:] or "pip failed")
    return python


@pytest.fixture(scope="module")
def world() -> World:
    return full_world()


@pytest.fixture(scope="module")
def provider(world: World) -> Iterator[ServerHandle]:
    with run_server(ServerState([world])) as handle:
        yield handle


def test_djstripe_takes_every_event_and_syncs_through_the_provider_api(
        venv_python: Path, provider: ServerHandle, world: World, tmp_path: Path) -> None:
    env = {**os.environ, "HOOKPROOF_API_BASE": provider.api_base, "HOOKPROOF_API_KEY": DEFAULT_API_KEY,
           "DJSTRIPE_DB": str(tmp_path / "shop.sqlite3")}
    run = subprocess.run([str(venv_python), str(APP / "drive.py")], capture_output=True, text=True, env=env,
                         timeout=RUN_TIMEOUT_S, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(run.stdout)
    assert result["failed_requests"] == []
    answers = Counter(status for _, status in result["answers"])
    assert answers == Counter({200: len(world.events)})
    assert {event_type for event_type, _ in result["answers"]} == set(StripeProfile().event_types())
    rows = result["rows"]
    assert rows["Event"] == len(world.events)
    for model, object_type in (("Customer", "customer"), ("Subscription", "subscription"), ("Invoice", "invoice"),
                               ("Refund", "refund")):
        assert rows[model] == len(world.objects(object_type)), model
