"""A config as a Mercado Pago seller writes it: the seller's user id as a TOML number, a scenario
id misspelt in ``[run] scenarios``."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.errors import ConfigError
from hookproof.terminal import load

TARGET = """[target]
url = "http://127.0.0.1:9/webhooks"
profile = "mercadopago"
secret = "mp_test"
"""
OBSERVER = """
[observer]
kind = "sql"
url = "sqlite:///observed.sqlite"
effects = "SELECT business_key FROM effects"
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_numeric_user_id_is_the_account_as_text(tmp_path: Path) -> None:
    """Mercado Pago's ``user_id`` is a number in its notifications (``"user_id": 44444``, the
    "Webhooks" page's example), so ``account = 123456789`` is read as the account ``"123456789"``,
    the same as the quoted form."""
    numeric = load(_write(tmp_path, TARGET + "account = 123456789\n" + OBSERVER))
    assert numeric.target.account == "123456789"
    quoted = load(_write(tmp_path, TARGET + 'account = "123456789"\n' + OBSERVER))
    assert quoted.target.account == numeric.target.account


@pytest.mark.parametrize("value", ["true", "1.5", "[1]"])
def test_an_account_that_is_no_id_is_still_refused(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(_write(tmp_path, TARGET + f"account = {value}\n" + OBSERVER))
    assert info.value.field == "target.account"
    assert (info.value.line, "\n" in str(info.value)) == (5, False)


def test_a_misspelt_scenario_in_run_scenarios_names_the_nearest(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(_write(tmp_path, TARGET + OBSERVER + '[run]\nscenarios = ["dupicate-sequential"]\n'))
    assert info.value.field == "run.scenarios"
    assert str(info.value).endswith(
        "run.scenarios: unknown scenario id 'dupicate-sequential' (did you mean duplicate-sequential"
        " or duplicate-concurrent? see 'hookproof scenarios')"), str(info.value)
