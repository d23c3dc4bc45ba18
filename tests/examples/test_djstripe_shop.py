"""dj-stripe 2.11.0 from PyPI, certified end to end through its signals (issue 15): its webhook
view in a minimal Django project (examples/django/djstripe_shop), served by gunicorn over
SQLite in its own venv, no shim and no edit to the package.

The shop connects one effect per event type to ``djstripe.signals.WEBHOOK_SIGNALS`` (an
``effects_effect`` row under the business key of that effect); hookproof reads those rows and
dj-stripe's own ``djstripe_subscription`` rows with the sql observer.

What it is found to do, read off the package's code:

- exactly once under duplicates, concurrent bursts and the chaos scenarios: ``Event.process``
  (djstripe/models/core.py) returns the stored ``Event`` when its id is known and sends the
  signal only inside the transaction that inserts it (an ``IntegrityError`` on a concurrent
  insert returns the existing row), and a crash before the commit leaves nothing;
- the provider's current state under reordering: every subscription event is synced by
  re-retrieving the subscription from the API (``_handle_crud_like_event``), never from the
  event's snapshot;
- ``unexpected`` in ``test-mode-to-live``: the view verifies the signature and processes the
  event without comparing its ``livemode`` to the endpoint's (``WebhookEventTrigger.validate``
  with ``verify_signature`` looks at the signature only; a live event falls back to the test
  key, ``get_default_api_key``), so a live-mode event sent to the test endpoint is processed:
  its effect applied, then its sync's retrieve of the live customer refused 404 to the test
  key, answered 500.
"""

from __future__ import annotations

import shutil
from concurrent.futures import Future
from pathlib import Path

import pytest

from hookproof.certify import CertifyResult, certify
from hookproof.config import load_config
from hookproof.scenarios.chaos import CHAOS_CATALOG
from tests.examples.django_shops import DJSTRIPE_SHOP as SHOP
from tests.examples.django_shops import djstripe_python, manage, migrated_db
from tests.support import run_side_by_side, selected_tests

ENDPOINT = "7d3c1f0e-5b8a-4c2e-9f61-0a4b2c6d8e10"
SECRET = "whsec_djstripe_shop_0123456789"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]


@pytest.fixture(scope="module")
def shop_python() -> Path:
    return djstripe_python()


def shop_db(shop_python: Path, tmp_path: Path) -> Path:
    """The shop's database, migrated, with its webhook endpoint registered (a deploy's steps)."""
    db = tmp_path / "shop.sqlite3"
    shutil.copyfile(migrated_db(shop_python, SHOP), db)
    manage(shop_python, SHOP, db, "register_endpoint", ENDPOINT, env={"HOOKPROOF_SECRET": SECRET})
    return db


def _config(tmp_path: Path, python: Path, db: Path) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text(f"""
[target]
url = "http://127.0.0.1:{{port}}/stripe/webhook/{ENDPOINT}/"
profile = "stripe"
secret = "{SECRET}"
connect = true

[target.process]
command = "{python.parent}/gunicorn --workers 1 --bind 127.0.0.1:{{port}} shop.wsgi"
cwd = "{SHOP}"
env = {{ SHOP_DB = "{db}" }}

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key FROM effects_effect"
state = "SELECT id AS object_id, json_extract(stripe_data, '$.status') AS status FROM djstripe_subscription"

[settle]
window_s = 0.5

[run]
seed = 21
burst = 4

[chaos]
events = 3
kill_trials = 2
""", encoding="utf-8")
    return path


#: test -> (its scenarios, chaos or not): one certify run each, over its own shop database.
RUNS: dict[str, tuple[list[str], bool]] = {
    "test_djstripe_applies_each_effect_once_and_ends_in_the_providers_state":
        (["duplicate-sequential", "duplicate-concurrent", "reorder", "stale-after-newer", "test-mode-to-live"], False),
    "test_djstripe_passes_the_chaos_scenarios": (list(CHAOS_CATALOG), True),
}


@pytest.fixture(scope="module")
def runs(shop_python: Path, request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> dict[str, Future[CertifyResult]]:
    """The selected tests' certify runs, side by side (each its own shop database, gunicorn and
    port; a run mostly waits on the shop): test name -> its result."""

    def one(test: str) -> CertifyResult:
        directory = tmp_path_factory.mktemp("djstripe-shop")
        scenarios, chaos = RUNS[test]
        return certify(load_config(_config(directory, shop_python, shop_db(shop_python, directory))),
                       out_dir=directory / "out", scenarios=scenarios, chaos=chaos)

    return run_side_by_side(selected_tests(request), one, workers=len(RUNS))


def test_djstripe_applies_each_effect_once_and_ends_in_the_providers_state(
        runs: dict[str, Future[CertifyResult]], request: pytest.FixtureRequest) -> None:
    result = runs[request.node.name].result()
    by_id = {s.id: s for s in result.report.scenarios}
    assert {i: s.verdict for i, s in by_id.items()} == {
        "duplicate-sequential": "pass", "duplicate-concurrent": "pass", "reorder": "pass",
        "stale-after-newer": "pass", "test-mode-to-live": "fail"}
    live = by_id["test-mode-to-live"]
    sent = {a.business_key for a in live.attempts if a.business_key}
    assert sent and {(f.check_id, f.key) for f in live.findings} == {("unexpected", key) for key in sent}
    # livemode never compared: it processes the event, and its sync's retrieve of the other mode's
    # customer is refused 404 (the endpoint's test key reads no live object, as at Stripe): a 500
    assert {a.status for a in live.attempts} == {500}


def test_djstripe_passes_the_chaos_scenarios(runs: dict[str, Future[CertifyResult]],
                                             request: pytest.FixtureRequest) -> None:
    result = runs[request.node.name].result()
    verdicts = {s.id: (s.verdict, s.reason) for s in result.report.scenarios}
    assert verdicts == {scenario: ("pass", None) for scenario in CHAOS_CATALOG}
