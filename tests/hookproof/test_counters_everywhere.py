"""A team's counters are checked wherever an effect can be applied twice or lost.

A receiver whose grants are unique per invoice but whose balance credit is not deduped
(`balance_shop.py`, ``BALANCE = "every-delivery"``) looks exactly-once to the effect checks:
certify fails it on the `counter` check of every scenario that delivers an invoice again,
and its twin, which credits the balance in the dedupe's transaction, passes every scenario.
Both run as real processes (Flask, SQLite) under a ``hookproof.toml``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from hookproof.config import load_config
from tests.support import free_port

SHOP = Path(__file__).with_name("balance_shop.py")
SECRET = "whsec_counters_everywhere"

#: Each scenario that delivers an invoice more than once, and fails only on the balance.
DOUBLE_CREDITED = ("duplicate-sequential", "duplicate-concurrent", "sender-timeout", "dropped-response",
                   "reserialized-retry", "transport-fields-change", "mass-redelivery", "mass-redelivery-window")


def shop_config(tmp_path: Path, balance: str) -> Path:
    """A ``hookproof.toml`` that starts `balance_shop.py` with `balance` on a free port."""
    port = free_port()
    path = tmp_path / "hookproof.toml"
    path.write_text(f"""builtin_keys = false

[target]
url = "http://127.0.0.1:{port}/webhooks"
profile = "stripe"
secret = "env:WEBHOOK_SECRET"
enabled_events = ["invoice.paid"]

[target.start]
command = "{sys.executable} {SHOP} {port}"
health_url = "http://127.0.0.1:{port}/healthz"
env = {{ STRIPE_WEBHOOK_SECRET = "{SECRET}", DB = "shop.db", BALANCE = "{balance}" }}

[observer]
kind = "sql"
url = "sqlite:///shop.db"
effects = "SELECT business_key, amount FROM grants"
counter = "SELECT customer AS key, amount FROM balances"

[business_keys]
"invoice.paid" = "inv:{{data.object.id}}"

[counters."invoice.paid"]
key = "{{data.object.customer}}"
amount = "data.object.amount_paid"
""", encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("balance", ["with-grant", "every-delivery"])
def test_a_balance_credited_on_every_delivery_fails_counter_wherever_invoices_repeat(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, balance: str) -> None:
    from hookproof.certify import certify

    monkeypatch.setenv("WEBHOOK_SECRET", SECRET)
    report = certify(load_config(shop_config(tmp_path, balance)), out_dir=tmp_path / "out").report
    verdicts = {s.id: s.verdict for s in report.scenarios}
    failing = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.findings}
    counted = {s.id for s in report.scenarios for c in s.checks if c.check_id == "counter"}
    assert set(DOUBLE_CREDITED) <= counted
    assert "unknown" not in verdicts.values(), [(s.id, s.reason) for s in report.scenarios]
    if balance == "with-grant":
        assert report.verdict == "pass" and failing == {}, [(s.id, s.verdict, s.reason) for s in report.scenarios]
        return
    assert failing == dict.fromkeys(DOUBLE_CREDITED, ["counter"]), failing
    for finding in (f for s in report.scenarios for f in s.findings):
        # the truth's moves, added up: the invoices' payments, each once
        assert re.fullmatch(r"counter is \d+; the provider's truth implies \d+ \(\+\d+ invoice\.paid evt_\w+"
                            r"(, \+\d+ invoice\.paid evt_\w+)*\)", finding.message), finding.message
        assert finding.key.startswith("cus_") and finding.actual > finding.expected, finding


REPEATS = 3


@pytest.mark.slow
@pytest.mark.parametrize(("balance", "hits"), [("with-grant", 0), ("every-delivery", REPEATS)])
def test_explores_burst_race_counts_a_balance_credited_twice_as_a_double_apply(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, balance: str, hits: int) -> None:
    """The burst race's event moves the team's counter (an ``invoice.paid``, not the first
    payment), and a balance past the truth is a double apply though the grant stayed single."""
    from hookproof.commands.explore import burst_report, run_explore

    monkeypatch.setenv("WEBHOOK_SECRET", SECRET)
    config = load_config(shop_config(tmp_path, balance))
    run = run_explore(config, out_dir=tmp_path / "out", max_examples=3, seed=3, repeats=REPEATS)
    hit = run.hit_rate
    assert hit is not None and hit.attempts == hit.acked == REPEATS * hit.copies
    assert hit.hits == hits and all(key.startswith("cus_") for key in hit.keys) and len(hit.keys) == hits, hit
    assert hit.kinds == ["counter"] * hits  # the grant stayed single: the balance is what moved twice
    if hits:
        (check,) = burst_report(hit).checks
        (finding,) = check.findings
        assert (check.check_id, finding.key) == ("counter", hit.keys[0])
        assert "moved the counter past the provider's truth (its effect rows showed it applied once)" in finding.message


def test_the_burst_lines_say_more_than_once_and_never_contradict_each_other() -> None:
    """A check-then-insert twin applied a burst 4 times: the burst line said "applied twice"
    and the counter's beside it "(the effect itself once)". Now: "more than once", and the
    counter's clause about the effect rows only when no run saw them doubled."""
    from hookproof.commands.explore import burst_report
    from hookproof.scenarios.bursts import HitRate

    both = burst_report(HitRate(20, 20, 8, list(range(20)), ["renewal:in_1", "cus_1"], ["duplicated", "counter"],
                                attempts=160, acked=160))
    messages = {c.check_id: c.findings[0].message for c in both.checks}
    assert messages == {
        "duplicated": "20/20 bursts of 8 copies applied more than once (hit rate 100%; seeds " + str(list(range(20))) + ")",
        "counter": "20/20 bursts of 8 copies moved the counter past the provider's truth (hit rate 100%; seeds "
                   + str(list(range(20))) + ")"}
    alone = burst_report(HitRate(1, 3, 8, [4], ["cus_1"], ["counter"], attempts=24, acked=24))
    assert alone.checks[0].findings[0].message == (
        "1/3 bursts of 8 copies moved the counter past the provider's truth (its effect rows showed it applied "
        "once) (hit rate 33%; seeds [4])")
