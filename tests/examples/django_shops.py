"""The Django shops of examples/django, their venvs and their migrated databases, shared by the
tests that certify them (tests/examples/test_djstripe_shop.py, test_drf_stripe_shop.py) and the
dj-stripe fidelity test (tests/simulator/test_djstripe.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Mapping

from tests.venvs import built_once, venv_python

DJANGO = Path(__file__).resolve().parents[2] / "examples" / "django"
DJSTRIPE_SHOP = DJANGO / "djstripe_shop"
DRF_STRIPE_SHOP = DJANGO / "drf_stripe_shop"
MANAGE_TIMEOUT_S = 900


def djstripe_python() -> Path:
    """The Python of the venv holding dj-stripe 2.11.0 (and gunicorn)."""
    return venv_python(DJSTRIPE_SHOP / "requirements.txt", "dj-stripe")


def manage(python: Path, shop: Path, db: Path, *args: str, env: Mapping[str, str] | None = None) -> None:
    """``manage.py <args>`` of `shop` over the SQLite file `db`; fails the test with its stderr."""
    run = subprocess.run([str(python), "manage.py", *args], cwd=shop, capture_output=True, text=True,
                         env={**os.environ, "SHOP_DB": str(db), **(env or {})}, timeout=MANAGE_TIMEOUT_S)
    assert run.returncode == 0, run.stderr[-2000:]


def migrated_db(python: Path, shop: Path) -> Path:
    """`shop`'s database with every migration applied (dj-stripe has hundreds: minutes on
    SQLite), made once beside the venv of `python`; copy it before use."""
    inputs = [shop / "requirements.txt", *sorted(shop.glob("*/migrations/*.py"))]
    return built_once(python, f"{shop.name}-migrated.sqlite3", inputs,
                      lambda path: manage(python, shop, path, "migrate", "-v", "0"))
