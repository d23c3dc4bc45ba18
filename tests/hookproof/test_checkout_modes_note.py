"""The note of lost Checkout fulfilments names the mode only where the key tells it.

Under hookproof's built-in keys a ``fulfillment:cs_…`` key is a payment-mode session's (a
subscription-mode one owes ``provision:``), and the note advises ``checkout_modes =
["subscription"]``. Under the team's own key for ``checkout.session.completed`` every session's
fulfilment is ``fulfillment:``: a one-off shop losing the plans' sessions was told to say
``["subscription"]``, which would have lost every order it sells.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from hookproof.certify import checkout_modes_note
from hookproof.config import load_config
from hookproof.scenarios.findings import Finding

BASE = """
[target]
url = "http://127.0.0.1:9/webhooks"
secret = "whsec_modes_note_0123456789"
enabled_events = ["checkout.session.completed", "checkout.session.async_payment_succeeded"]
"""
TEAM_KEYS = """
[business_keys]
"checkout.session.completed" = "fulfillment:{data.object.id}"
"checkout.session.async_payment_succeeded" = "fulfillment:{data.object.id}"
"""
#: A run whose only findings are two lost session fulfilments.
LOST = SimpleNamespace(scenarios=[SimpleNamespace(findings=[Finding("lost", "fulfillment:cs_test_a1", "lost"),
                                                             Finding("lost", "fulfillment:cs_test_b2", "lost")])])


def _note(tmp_path: Path, text: str) -> str | None:
    path = tmp_path / "hookproof.toml"
    path.write_text(text, encoding="utf-8")
    return checkout_modes_note(load_config(path), LOST)  # type: ignore[arg-type]


def test_under_built_in_keys_the_lost_sessions_are_payment_mode_ones(tmp_path: Path) -> None:
    note = _note(tmp_path, BASE)
    assert note is not None and note.startswith("2 lost finding(s) are payment-mode Checkout Sessions' fulfilments")
    assert 'checkout_modes = ["subscription"] under [target]' in note


def test_under_the_team_s_keys_the_note_names_both_modes(tmp_path: Path) -> None:
    note = _note(tmp_path, BASE + TEAM_KEYS)
    assert note is not None and note.startswith("2 lost finding(s) are Checkout Sessions' fulfilments")
    assert 'checkout_modes = ["payment"] (one-off purchases) or ["subscription"] (plans)' in note
    assert "payment-mode" not in note


def test_a_shop_that_said_its_modes_gets_no_note(tmp_path: Path) -> None:
    assert _note(tmp_path, BASE.replace("[target]\n", '[target]\ncheckout_modes = ["payment"]\n')) is None
