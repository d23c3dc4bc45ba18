"""django-payments 4.1.0 from PyPI, a shop that creates its own checkout sessions, certified end to
end (issue 15): its Stripe provider (``payments.stripe.StripeProviderV3``) in a minimal Django
shop (examples/django/payments_shop), served by gunicorn over SQLite, in its own venv (it
needs Django 5.2), no shim and no edit to the package.

The shop's checkout page is its seed (``[target.seed] creates = ["checkout.session"]``):
``manage.py checkout`` makes a ``Payment`` per session the story needs and calls
``payment.get_form()``, so the package opens the session through ``POST
/v1/checkout/sessions`` with the payment's token as ``client_reference_id``; the catalog's
scenarios then complete *those* sessions and deliver them to the package's static callback
(``/payments/process/stripe/``), which finds the payment by that token. The shop ships an
order (one ``Fulfilment``) on the package's ``status_changed`` signal when the payment is
confirmed.

What it is found to do, each read off the package's code (payments/stripe/providers.py,
payments/urls.py, payments/models.py):

- ``duplicated`` on ``fulfillment:<session>``: ``process_data`` calls
  ``payment.change_status(PaymentStatus.CONFIRMED)`` for every delivery of a paid session,
  whatever the payment's status already is, and ``change_status`` always sends
  ``status_changed``: three copies, three shipments. It keeps no record of handled events.
- ``unexpected`` for a forged signature: ``static_callback`` catches only ``PaymentError``;
  the ``stripe.SignatureVerificationError`` of ``construct_event`` escapes as a 500 (nothing
  is shipped, but the answer is a server error, not the 400 Stripe's docs ask for).
- ``valid_not_rejected`` for an event type it does not handle: with no
  ``client_reference_id`` it answers 400 ("Could not extract payment token"), so Stripe
  retries a valid event it will never accept.
- in the chaos scenarios (hookproof runs gunicorn as ``[target.process]``), over the shop's
  sessions too: ``duplicated`` when the receiver restarts between two copies (the same
  re-confirmation).
- ``unexpected`` when a live shop gets a test-mode event: ``process_data`` never compares
  ``livemode``, so a test-mode completion of the shop's session confirms the payment and ships.
"""

from __future__ import annotations

import shutil
import sqlite3
from concurrent.futures import Future
from pathlib import Path
from typing import Callable

import pytest

from hookproof.certify import CertifyResult, certify
from hookproof.config import load_config
from hookproof.reports.model import ScenarioReport
from tests.examples.django_shops import DJANGO, migrated_db
from tests.support import run_side_by_side, selected_tests
from tests.venvs import venv_python

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

SHOP = DJANGO / "payments_shop"


@pytest.fixture(scope="module")
def shop_python() -> Path:
    return venv_python(SHOP / "requirements.txt", "django-payments")


def _config(tmp_path: Path, python: Path, db: Path, *, environment: str = "test", controlled: str = "start",
            connect: bool = False) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text(f"""
[target]
url = "http://127.0.0.1:{{port}}/payments/process/stripe/"
profile = "stripe"
secret = "whsec_payments_shop_0123456789abcdef"
environment = "{environment}"
connect = {str(connect).lower()}
# what django-payments handles (payments.stripe.providers.stripe_enabled_events)
enabled_events = ["checkout.session.completed", "checkout.session.expired",
                  "checkout.session.async_payment_succeeded", "checkout.session.async_payment_failed"]

[target.{controlled}]
command = "{python.parent}/gunicorn --workers 1 --bind 127.0.0.1:{{port}} shop.wsgi"
cwd = "{SHOP}"
env = {{ SHOP_DB = "{db}" }}

[target.seed]
command = "{python} manage.py checkout"
cwd = "{SHOP}"
env = {{ SHOP_DB = "{db}" }}
creates = ["checkout.session"]
timeout_s = 60

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key FROM orders_fulfilment"

[run]
seed = 15
""", encoding="utf-8")
    return path


def _migrated(python: Path, db: Path) -> Path:
    shutil.copyfile(migrated_db(python, SHOP), db)
    return db


def _payments(db: Path) -> dict[str, str]:
    """The shop's payments: checkout session id (``transaction_id``) -> status."""
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT transaction_id, status FROM orders_payment"))


def _findings(report: ScenarioReport) -> set[tuple[str, str]]:
    return {(f.check_id, f.key) for f in report.findings}


#: test -> its certify run over its own copy of the migrated shop in `directory`: the result.
RUNS: dict[str, Callable[[Path, Path, Path], CertifyResult]] = {
    "test_django_payments_ships_again_on_every_copy_of_the_shops_own_session":
        lambda directory, python, db: certify(
            load_config(_config(directory, python, db)), out_dir=directory / "out",
            scenarios=["duplicate-sequential", "forged-signature", "unknown-event-type"]),
    "test_a_live_django_payments_shop_ships_a_test_mode_completion":
        lambda directory, python, db: certify(
            load_config(_config(directory, python, db, environment="live", connect=True)), out_dir=directory / "out",
            scenarios=["test-mode-to-live"]),
    "test_the_chaos_scenarios_run_over_the_shops_sessions_too":
        lambda directory, python, db: certify(
            load_config(_config(directory, python, db, controlled="process")), out_dir=directory / "out",
            scenarios=["restart-between-duplicates"], chaos=True),
}


@pytest.fixture(scope="module")
def runs(shop_python: Path, request: pytest.FixtureRequest,
         tmp_path_factory: pytest.TempPathFactory) -> dict[str, Future[tuple[CertifyResult, Path]]]:
    """The selected tests' certify runs, side by side (each its own shop database, gunicorn and
    port; a run mostly waits on the shop): test name -> (its result, the shop's database)."""
    def one(test: str) -> tuple[CertifyResult, Path]:
        directory = tmp_path_factory.mktemp("payments-shop")
        db = _migrated(shop_python, directory / "shop.sqlite3")
        return RUNS[test](directory, shop_python, db), db

    return run_side_by_side(selected_tests(request), one, workers=len(RUNS))


def test_django_payments_ships_again_on_every_copy_of_the_shops_own_session(
        runs: dict[str, Future[tuple[CertifyResult, Path]]], request: pytest.FixtureRequest) -> None:
    result, db = runs[request.node.name].result()
    by_id = {s.id: s for s in result.report.scenarios}
    # the shop's endpoint is subscribed to the types it handles (enabled_events): Stripe never
    # sends it another, so its 400 to one would be no finding
    assert {i: s.verdict for i, s in by_id.items()} == {
        "duplicate-sequential": "fail", "forged-signature": "fail", "unknown-event-type": "not_applicable"}
    assert "target.enabled_events" in (by_id["unknown-event-type"].reason or "")
    payments = _payments(db)
    assert len(payments) == 2  # one session per story that ran, each opened by the package through the API

    duplicate = by_id["duplicate-sequential"]
    [session] = {a.object_id for a in duplicate.attempts}
    assert payments[session] == "confirmed"  # found by its token: the event carried the shop's reference
    assert _findings(duplicate) == {("duplicated", f"fulfillment:{session}")}
    [finding] = duplicate.findings
    assert (finding.expected, finding.actual) == (1, 3)  # three copies, three shipments
    assert {a.status for a in duplicate.attempts} == {200}

    forged = by_id["forged-signature"]
    [session] = {a.object_id for a in forged.attempts}
    assert payments[session] == "waiting"  # nothing shipped, but the answer is a 500
    assert _findings(forged) == {("unexpected", f"fulfillment:{session}")}
    assert {(a.status, a.valid) for a in forged.attempts} == {(500, False)}



def test_a_live_django_payments_shop_ships_a_test_mode_completion(
        runs: dict[str, Future[tuple[CertifyResult, Path]]], request: pytest.FixtureRequest) -> None:
    result, db = runs[request.node.name].result()
    [report] = result.report.scenarios
    [(session, status)] = _payments(db).items()
    assert session.startswith("cs_live_") and status == "confirmed"
    assert report.verdict == "fail"
    assert _findings(report) == {("unexpected", f"fulfillment:{session}")}
    assert {(a.status, a.valid) for a in report.attempts} == {(200, False)}


def test_the_chaos_scenarios_run_over_the_shops_sessions_too(
        runs: dict[str, Future[tuple[CertifyResult, Path]]], request: pytest.FixtureRequest) -> None:
    result, db = runs[request.node.name].result()
    [restarted] = result.report.scenarios
    assert restarted.verdict == "fail", (restarted.reason, [(f.check_id, f.key) for f in restarted.findings])
    payments = _payments(db)
    delivered = {a.object_id for a in restarted.attempts}
    assert delivered <= set(payments) and set(payments.values()) == {"confirmed"}  # only the shop's own sessions
    assert {f.check_id for f in restarted.findings} == {"duplicated"}
    assert {f.key for f in restarted.findings} <= {f"fulfillment:{s}" for s in delivered}
