"""`hookproof events` reads the config as certify does: hookproof.toml in the current folder
by default, its profile, its business keys, `builtin_keys` honoured; its secret is not needed.

A trial's Standard Webhooks receiver (Django) with ``builtin_keys = false`` and its own
``ledger:`` keys saw ``events --keys`` show hookproof's ``license:``/``renewal:`` keys, and
``hookproof events`` in its folder list Stripe's names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """builtin_keys = false

[target]
url = "http://127.0.0.1:8000/webhooks/"
profile = "standard-webhooks"
secret = "env:HOOKPROOF_TEST_UNSET_SECRET"

[observer]
kind = "sql"
url = "sqlite:///receiver.db"
effects = "SELECT business_key, amount FROM ledger"

[business_keys]
"invoice.paid" = "ledger:{data.id}"
"""


def events(*args: str, cwd: Path) -> dict[str, list[str]]:
    env = {k: v for k, v in os.environ.items() if k != "HOOKPROOF_TEST_UNSET_SECRET"}
    run = subprocess.run([sys.executable, "-m", "hookproof", "events", "--keys", "--json", *args],
                         capture_output=True, text=True, timeout=120, cwd=cwd, env=env)
    assert run.returncode == 0, run.stderr
    return {row["event"]: row["keys"] for row in json.loads(run.stdout)}


def test_events_in_a_folder_with_hookproof_toml_speaks_its_profile_and_keys(tmp_path: Path) -> None:
    (tmp_path / "hookproof.toml").write_text(CONFIG)
    rows = events(cwd=tmp_path)
    assert "payment.succeeded" in rows and "payment_intent.succeeded" not in rows  # standard-webhooks' names
    assert rows["invoice.paid"][0].startswith("ledger:in_")
    assert {k for keys in rows.values() for k in keys} == {rows["invoice.paid"][0]}  # no built-in key left
    assert events("--config", "hookproof.toml", cwd=tmp_path) == rows


def test_events_with_config_keeps_builtin_keys_unless_told_not_to(tmp_path: Path) -> None:
    config = tmp_path / "other.toml"
    config.write_text(CONFIG.replace("builtin_keys = false", ""))
    rows = events("--config", str(config), cwd=tmp_path)
    assert rows["invoice.paid"][0].startswith("ledger:in_")
    assert rows["payment.succeeded"][0].startswith("license:pi_")  # the built-in key, still on


def test_another_profile_than_the_configs_shows_its_builtin_keys(tmp_path: Path) -> None:
    (tmp_path / "hookproof.toml").write_text(CONFIG)
    rows = events("--profile", "stripe", cwd=tmp_path)
    assert "payment_intent.succeeded" in rows and rows["invoice.paid"][0].startswith("renewal:")


def test_events_without_a_config_is_stripe(tmp_path: Path) -> None:
    rows = events(cwd=tmp_path)
    assert "payment_intent.succeeded" in rows and rows["invoice.paid"][0].startswith("renewal:")


def test_events_marks_the_types_enabled_events_leaves_out(tmp_path: Path) -> None:
    """A config with target.enabled_events: the other types are marked "not sent" (certify
    sends only the enabled ones); without it, none is marked."""
    text = CONFIG.replace('profile = "standard-webhooks"',
                          'profile = "standard-webhooks"\nenabled_events = ["invoice.paid", "payment.succeeded"]')
    (tmp_path / "hookproof.toml").write_text(text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "HOOKPROOF_TEST_UNSET_SECRET"}
    rows = json.loads(subprocess.run([sys.executable, "-m", "hookproof", "events", "--keys", "--json"],
                                     capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env).stdout)
    assert {r["event"] for r in rows if r["sent"]} == {"invoice.paid", "payment.succeeded"}
    assert len(rows) == 16
    lines = subprocess.run([sys.executable, "-m", "hookproof", "events", "--keys"], capture_output=True, text=True,
                           timeout=120, cwd=tmp_path, env=env).stdout.splitlines()
    marked = [line.split()[0] for line in lines if line.endswith("not sent (not in target.enabled_events)")]
    assert len(marked) == 14 and "invoice.paid" not in marked and "customer.created" in marked
    (tmp_path / "hookproof.toml").write_text(CONFIG, encoding="utf-8")
    plain = subprocess.run([sys.executable, "-m", "hookproof", "events", "--keys", "--json"], capture_output=True,
                           text=True, timeout=120, cwd=tmp_path, env=env).stdout
    assert '"sent"' not in plain


def test_a_rule_no_sample_event_meets_is_shown_not_hidden(tmp_path: Path) -> None:
    """A new user's `when = { "data.object.mode" = "subscription" }` rule read "(no effect)":
    the sample checkout is payment-mode, so it looked as if the rule was not loaded."""
    (tmp_path / "hookproof.toml").write_text(
        '[target]\nurl = "http://127.0.0.1:9/hook"\nprofile = "stripe"\nsecret = "whsec_events_rule"\n\n'
        '[business_keys."checkout.session.completed"]\nkey = "provision:{data.object.id}"\n'
        'when = { "data.object.mode" = "setup" }\n', encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "hookproof", "events", "--keys"], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path, env={**os.environ, "COLUMNS": "300"})
    assert run.returncode == 0, run.stderr
    (line,) = [x for x in run.stdout.splitlines() if x.startswith("checkout.session.completed ")]
    assert line.split(None, 1)[1] == ("(no sample event met its rule: provision:{data.object.id} when "
                                      "data.object.mode = setup)")
    (unkeyed,) = [x for x in run.stdout.splitlines() if x.startswith("checkout.session.expired ")]
    assert unkeyed.split(None, 1)[1] == "(no effect)"


def test_events_keys_reads_the_config_init_writes_for_every_profile(tmp_path: Path) -> None:
    """A new user ran `hookproof init --profile mercadopago` then `hookproof events --keys` in
    that folder and got a traceback (a config with no [business_keys] has no rules to word)."""
    from hookproof.simulator.profiles.registry import PROFILES

    for name in sorted(PROFILES):
        folder = tmp_path / name
        folder.mkdir()
        init = subprocess.run([sys.executable, "-m", "hookproof", "init", "--profile", name], capture_output=True,
                              text=True, timeout=120, cwd=folder)
        assert init.returncode == 0, (name, init.stderr)
        run = subprocess.run([sys.executable, "-m", "hookproof", "events", "--keys"], capture_output=True,
                             text=True, timeout=120, cwd=folder)
        assert run.returncode == 0 and "Traceback" not in run.stderr, (name, run.stderr)
        assert run.stdout.strip(), name


def test_a_connect_endpoint_s_keys_naming_the_account_are_shown(tmp_path: Path) -> None:
    """A trial's Connect platform keyed payments ``payment:{account}:{data.object.id}``: `events
    --keys` showed ``(no effect)``, its sample world having no connected account; it now has the
    config's, as certify's worlds do."""
    (tmp_path / "hookproof.toml").write_text(
        'builtin_keys = false\n\n[target]\nurl = "http://127.0.0.1:8000/webhooks"\nprofile = "stripe"\n'
        'secret = "env:HOOKPROOF_TEST_UNSET_SECRET"\nconnect = true\naccount = "acct_1SellerAlpha00001"\n\n'
        '[observer]\nkind = "sql"\nurl = "sqlite:///receiver.db"\neffects = "SELECT business_key FROM fees"\n\n'
        '[business_keys]\n"payment_intent.succeeded" = "payment:{account}:{data.object.id}"\n')
    rows = events(cwd=tmp_path)
    (key,) = rows["payment_intent.succeeded"]
    assert key.startswith("payment:acct_1SellerAlpha00001:pi_"), rows
