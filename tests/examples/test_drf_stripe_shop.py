"""drf-stripe-subscription 1.2.2 from PyPI, certified end to end (issue 15): its webhook view in a
minimal Django project (examples/django/drf_stripe_shop), served by gunicorn over SQLite, in
its own venv (it needs pydantic 1 and stripe < 13), no shim and no edit to the package.

The shop's rows come first through ``[target.seed]``: drf-stripe-subscription looks the
event's customer up (``StripeUser.objects.get(customer_id=...)``, a 500 without it) and
links subscription items to its ``Price`` rows. Its effect is the shop's own: one ``Grant``
per subscription item the package creates (Django's ``post_save``, the only hook it has).

What it is found to do, each read off the package's code (drf_stripe/stripe_webhooks):

- ``duplicated`` on ``access:<subscription>``: ``_handle_customer_subscription_event_data``
  keeps no record of handled events; on every delivery it runs
  ``subscription.items.all().delete()`` and creates the items again, so each copy of each
  of the subscription's events grants access again (three copies of its three events: nine grants).
- ``regressed`` (and ``stale``) on the subscription: it writes the event's ``status`` with
  ``update_or_create`` whatever the stored one is (no ``created`` or version comparison),
  so the delayed ``past_due`` update delivered after ``customer.subscription.deleted``
  turns the canceled subscription back to ``past_due``, and a second subscription's recovery
  (``active``), made in the second of its cancellation and delivered after it, brings it back.

Nothing else: every delivery is acknowledged 200, nothing is lost. The API version is the
one the package pins (``stripe.api_version = "2020-08-27"`` in drf_stripe/stripe_api/api.py).
"""

from __future__ import annotations

import shutil
from concurrent.futures import Future
from pathlib import Path
from typing import Callable

import pytest

from hookproof.certify import CertifyResult, certify
from hookproof.config import load_config
from hookproof.reports.model import ScenarioReport
from tests.examples.django_shops import DRF_STRIPE_SHOP as SHOP
from tests.examples.django_shops import migrated_db
from tests.support import run_side_by_side, selected_tests
from tests.venvs import venv_python

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]


@pytest.fixture(scope="module")
def shop_python() -> Path:
    return venv_python(SHOP / "requirements.txt", "drf-stripe-subscription")


def _config(tmp_path: Path, python: Path, db: Path, *, seeded: bool = True) -> Path:
    bin_dir = python.parent
    seed = f"""
[target.seed]
command = "{python} seed.py"
cwd = "{SHOP}"
env = {{ SHOP_DB = "{db}" }}
timeout_s = 60
""" if seeded else ""
    path = tmp_path / "hookproof.toml"
    path.write_text(f"""
builtin_keys = false

[business_keys]
"customer.subscription.created" = "access:{{data.object.id}}"

[target]
url = "http://127.0.0.1:{{port}}/stripe/webhook/"
profile = "stripe"
secret = "whsec_drf_shop_0123456789abcdef"
api_version = "2020-08-27"
enabled_events = ["customer.subscription.created", "customer.subscription.updated",
                  "customer.subscription.deleted"]

[target.start]
command = "{bin_dir}/gunicorn --workers 1 --bind 127.0.0.1:{{port}} shop.wsgi"
cwd = "{SHOP}"
env = {{ SHOP_DB = "{db}" }}
{seed}
[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key FROM grants_grant"
state = "SELECT subscription_id AS object_id, status FROM drf_stripe_subscription"

[run]
seed = 15
""", encoding="utf-8")
    return path


def _findings(report: ScenarioReport) -> set[tuple[str, str]]:
    return {(f.check_id, f.key) for f in report.findings}


def _migrated(python: Path, db: Path) -> Path:
    shutil.copyfile(migrated_db(python, SHOP), db)
    return db


#: test -> its certify run over its own copy of the migrated shop in `directory`.
RUNS: dict[str, Callable[[Path, Path, Path], CertifyResult]] = {
    "test_without_its_rows_first_drf_stripe_subscription_answers_500":
        lambda directory, python, db: certify(
            load_config(_config(directory, python, db, seeded=False)), out_dir=directory / "out",
            scenarios=["duplicate-sequential"]),
    "test_drf_stripe_subscription_duplicates_grants_and_revives_a_canceled_subscription":
        lambda directory, python, db: certify(
            load_config(_config(directory, python, db)), out_dir=directory / "out",
            scenarios=["duplicate-sequential", "stale-after-newer"]),
}


@pytest.fixture(scope="module")
def runs(shop_python: Path, request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> dict[str, Future[CertifyResult]]:
    """The selected tests' certify runs, side by side (each its own shop database, gunicorn and
    port; a run mostly waits on the shop): test name -> its result."""

    def one(test: str) -> CertifyResult:
        directory = tmp_path_factory.mktemp("drf-shop")
        return RUNS[test](directory, shop_python, _migrated(shop_python, directory / "shop.sqlite3"))

    return run_side_by_side(selected_tests(request), one, workers=len(RUNS))


def test_without_its_rows_first_drf_stripe_subscription_answers_500(
        runs: dict[str, Future[CertifyResult]], request: pytest.FixtureRequest) -> None:
    """The package looks up the StripeUser of the event's customer (``StripeUser.DoesNotExist``)."""
    result = runs[request.node.name].result()
    [duplicate] = result.report.scenarios
    assert duplicate.verdict == "fail"
    assert {a.status for a in duplicate.attempts} == {500}
    assert {f.check_id for f in duplicate.findings} == {"no_server_error", "lost"}


def test_drf_stripe_subscription_duplicates_grants_and_revives_a_canceled_subscription(
        runs: dict[str, Future[CertifyResult]], request: pytest.FixtureRequest) -> None:
    result = runs[request.node.name].result()
    by_id = {s.id: s for s in result.report.scenarios}
    assert {i: s.verdict for i, s in by_id.items()} == {"duplicate-sequential": "fail", "stale-after-newer": "fail"}

    duplicate = by_id["duplicate-sequential"]
    [sub] = {a.object_id for a in duplicate.attempts}
    assert _findings(duplicate) == {("duplicated", f"access:{sub}")}
    [finding] = duplicate.findings
    assert (finding.expected, finding.actual) == (1, 9)  # three copies of the subscription's three events
    assert {a.status for a in duplicate.attempts} == {200}

    stale = by_id["stale-after-newer"]
    canceled = sorted({a.object_id for a in stale.attempts})  # the second: its recovery of the same second
    assert len(canceled) == 2
    assert _findings(stale) == {(check, sub) for sub in canceled for check in ("regressed", "stale")}
    regressed = [f for f in stale.findings if f.check_id == "regressed"]
    assert all("canceled" in f.message for f in regressed)
    assert sorted("past_due" in f.message for f in regressed) == [False, True]
    assert {a.status for a in stale.attempts} == {200}
