"""A counter with a constant key is refused when the config is read.

``[counters."invoice.paid"] key = "total"`` (a shop-wide revenue total) made every
scenario running ``counter`` fail on a correct receiver (``total counter is 73800; the
provider's truth implies 4900``): one total sums every scenario's and every run's events,
the truth is one scenario's. The config is now refused (exit 2, the entry's line, why, and
what to write); a counter keyed by the object (``{data.object.customer}``) still passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.config import load_config
from hookproof.errors import ConfigError
from tests.hookproof.test_counters_everywhere import SECRET, shop_config
from tests.hostile.harness import run_hookproof

PER_CUSTOMER = 'key = "{data.object.customer}"'


def _constant(tmp_path: Path) -> Path:
    path = shop_config(tmp_path, "with-grant")
    text = path.read_text(encoding="utf-8")
    assert PER_CUSTOMER in text
    path.write_text(text.replace(PER_CUSTOMER, 'key = "total"'), encoding="utf-8")
    return path


def test_a_constant_counter_key_is_a_config_error_naming_its_line(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBHOOK_SECRET", SECRET)
    path = _constant(tmp_path)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    line = path.read_text(encoding="utf-8").splitlines().index('key = "total"') + 1
    assert caught.value.line == line and caught.value.field == 'counters."invoice.paid".key'
    message = str(caught.value)
    assert "counters.\"invoice.paid\".key: 'total' names no field of the event" in message
    assert "shop-wide" in message and 'e.g. key = "{data.object.customer}"' in message


def test_certify_refuses_it_with_exit_2_before_starting_the_receiver(tmp_path: Path) -> None:
    path = _constant(tmp_path)
    run = run_hookproof("certify", "--config", str(path), timeout_s=60, env={"WEBHOOK_SECRET": SECRET}, cwd=tmp_path)
    assert run.returncode == 2, run
    said = run.stderr.strip()
    assert said.count("\n") == 0 and said.startswith(f"hookproof: {path}:24: counters.\"invoice.paid\".key: "), said
    assert not (tmp_path / "shop.db").exists()  # the receiver never started


@pytest.mark.slow
def test_a_counter_keyed_by_customer_passes_on_the_correct_receiver(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from hookproof.certify import certify

    monkeypatch.setenv("WEBHOOK_SECRET", SECRET)
    report = certify(load_config(shop_config(tmp_path, "with-grant")), scenarios=["duplicate-sequential", "mass-redelivery"],
                     out_dir=tmp_path / "out").report
    counted = {s.id: [c.verdict for c in s.checks if c.check_id == "counter"] for s in report.scenarios}
    assert counted == {"duplicate-sequential": ["valid"], "mass-redelivery": ["valid"]}, counted
    assert report.verdict == "pass", [(s.id, s.verdict, s.reason) for s in report.scenarios]


def test_the_example_is_in_the_configs_own_profiles_events(tmp_path: Path) -> None:
    """A new user's Paddle config was told to write key = "{data.object.customer}", a Stripe path."""
    path = tmp_path / "hookproof.toml"
    path.write_text('[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "paddle"\nsecret = "pdl_x"\n\n'
                    '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT 1"\n'
                    'counter = "SELECT 1, 1"\n\n[counters."transaction.completed"]\nkey = "total"\n'
                    'amount = "data.details.totals.total"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert 'e.g. key = "{data.customer_id}"' in str(caught.value) and "data.object" not in str(caught.value)
