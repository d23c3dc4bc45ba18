"""One paid invoice, one renewal: ``invoice.paid`` and ``invoice.payment_succeeded`` are the same payment.

Stripe sends both for every invoice paid by a payment, with the same invoice data
(docs.stripe.com/invoicing/integration, "Handle payment events"), so both owe the invoice's one
``renewal:{invoice}``. To an endpoint whose ``enabled_events`` lists ``invoice.payment_succeeded``,
certify, explore and storm send both: a SaaS extending access on ``invoice.paid`` alone passes,
one extending it on ``invoice.payment_succeeded`` alone passes, one extending it on both fails
``duplicated`` on each paid invoice (tests/examples/invoice_access.py). An endpoint not listing
it (enabled_events left out, or ``"*"``) is never sent it, so there the twin handling both passes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.demo import receiver_config
from hookproof.reports.model import RunReport
from hookproof.simulator.profiles import get_profile
from tests.loadtests.test_storm_worlds import failing_checks, storm
from tests.support import free_port

SECRET = "whsec_invoice_access_0123"
MODULE = "tests.examples.invoice_access"
SUCCEEDED = "invoice.payment_succeeded"
SCENARIOS = ["duplicate-sequential", "dropped-response"]
#: Every type the stripe profile sends, and invoice.payment_succeeded: an endpoint listing its types.
LISTED = [*get_profile("stripe").event_types(), SUCCEEDED]
DUPLICATED = {"duplicate-sequential": ["duplicated"], "dropped-response": ["duplicated"]}
#: The storms' seed (`test_a_storm_passes_either_event_and_finds_the_renewal_extended_on_both`).
STORM_SEED = ("--seed", "13")


@pytest.fixture(scope="module")
def whole_catalog(tmp_path_factory: pytest.TempPathFactory) -> Callable[[dict[str, float]], RunReport]:
    """The report of certify over every scenario, the endpoint listing ``invoice.payment_succeeded``,
    per receiver options: each run once for the module and read by both tests below (a scenario's
    world is the one it gets run alone, `scenario_seed`: the first test reads `SCENARIOS` off it)."""
    reports: dict[str, RunReport] = {}

    def report_of(options: dict[str, float]) -> RunReport:
        key = json.dumps(options, sort_keys=True)
        if key not in reports:
            folder = tmp_path_factory.mktemp("invoice-access")
            cfg = receiver_config("invoice_access", folder, SECRET, seed=11, settle_window_s=0.15, options=options,
                                  module=MODULE, cwd=PROJECT_ROOT)
            cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": LISTED})})
            reports[key] = certify(cfg, out_dir=folder / "report").report
        return reports[key]

    return report_of


@pytest.mark.slow
@pytest.mark.timeout(900)  # a listing endpoint's case may run the whole catalog (`whole_catalog`)
@pytest.mark.parametrize(("extend_on", "enabled", "failed"), [
    (0, LISTED, {}), (1, LISTED, {}), (2, LISTED, DUPLICATED), (2, None, {}),
])
def test_a_paid_invoice_owes_one_renewal_on_either_event(tmp_path: Path, whole_catalog: Callable[[dict[str, float]],
                                                                                                 RunReport],
                                                         extend_on: int, enabled: list[str] | None,
                                                         failed: dict[str, list[str]]) -> None:
    if enabled is LISTED:  # SCENARIOS as the whole catalog's run of these options played them
        report = whole_catalog({"extend_on": extend_on})
    else:
        cfg = receiver_config("invoice_access", tmp_path, SECRET, seed=11, scenarios=SCENARIOS,
                              settle_window_s=0.15, options={"extend_on": extend_on}, module=MODULE, cwd=PROJECT_ROOT)
        cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"enabled_events": enabled})})
        report = certify(cfg, out_dir=tmp_path / "report").report
    scenarios = [s for s in report.scenarios if s.id in SCENARIOS]
    assert sorted(s.id for s in scenarios) == sorted(SCENARIOS)
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in scenarios if s.verdict != "pass"}
    assert got == failed, [(s.id, s.verdict, s.reason, [f.message for f in s.findings]) for s in scenarios]
    sent = {s.id: {a.event_type for a in s.attempts if a.business_key} for s in scenarios}
    wanted = {"invoice.paid", SUCCEEDED} if enabled is not None else {"invoice.paid"}
    assert all(wanted <= types for types in sent.values()), sent
    assert enabled is not None or not any(SUCCEEDED in types for types in sent.values()), sent
    keys = {s.id: {(a.event_type, a.business_key) for a in s.attempts if a.event_type.startswith("invoice.pa")}
            for s in scenarios}
    for pairs in keys.values():  # each succeeded event owes its invoice.paid's renewal
        assert {k for t, k in pairs if t == SUCCEEDED} <= {k for t, k in pairs if t == "invoice.paid"}, pairs
    if failed:
        renewals = {f.key for s in scenarios for f in s.findings if f.check_id == "duplicated"}
        assert renewals and all(key.startswith("renewal:in_") for key in renewals), renewals
    assert not [n for n in report.notes if SUCCEEDED in n], report.notes


#: What each twin is found by in every scenario of certify, its endpoint listing both invoice events:
#: extending access on both, each scenario sending a paid invoice's two events (and the amount
#: counter moved twice where the invoice's amount is counted); the racy twin only where two copies
#: of one ``invoice.payment_succeeded`` are in flight together.
BOTH_FOUND = {"duplicate-sequential": ["duplicated"], "duplicate-concurrent": ["duplicated"],
              "sender-timeout": ["duplicated"], "dropped-response": ["duplicated"],
              "distinct-events-same-object": ["counter", "duplicated"], "mass-redelivery": ["counter", "duplicated"],
              "related-burst": ["duplicated"], "stale-failure-after-success": ["duplicated"],
              "mass-redelivery-window": ["counter", "duplicated"]}
RACED = {"duplicate-concurrent": ["duplicated"], "sender-timeout": ["duplicated"]}


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize(("options", "failed"), [
    ({"extend_on": 0}, {}), ({"extend_on": 1}, {}), ({"extend_on": 2}, BOTH_FOUND),
    ({"extend_on": 1, "racy_succeeded": 1}, RACED),
], ids=["paid", "succeeded", "both", "succeeded-check-then-insert"])
def test_every_scenario_sends_a_paid_invoice_s_two_events_together(
        whole_catalog: Callable[[dict[str, float]], RunReport], options: dict[str, float],
        failed: dict[str, list[str]]) -> None:
    """Every scenario of certify, the endpoint listing ``invoice.payment_succeeded``: each one
    sending a paid invoice's ``invoice.paid`` validly sends its ``invoice.payment_succeeded`` too,
    and back (Stripe sends both), so a receiver extending on either alone passes them all."""
    report = whole_catalog(options)
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios
           if s.verdict not in ("pass", "not_applicable")}
    if options.get("racy_succeeded"):  # a race: the burst always doubles it, the timed-out retry most times
        assert "duplicate-concurrent" in got and got.items() <= RACED.items(), got
    else:
        assert got == failed, [(s.id, s.verdict, [f.message for f in s.findings]) for s in report.scenarios]
    keys = {f.key for s in report.scenarios for f in s.findings}
    assert all(key.startswith("renewal:in_") for key in keys), keys
    for s in report.scenarios:
        valid = [a for a in s.attempts if a.valid and a.event_type.startswith("invoice.pa")]
        paid = {a.business_key for a in valid if a.event_type == "invoice.paid"}
        assert paid == {a.business_key for a in valid if a.event_type == SUCCEEDED}, (s.id, valid)


def write_config(folder: Path, extend_on: int, enabled: list[str] | None = LISTED) -> Path:
    """A hookproof.toml starting invoice_access (`extend_on`) on a free port, its endpoint
    enabled for `enabled` (None: left out)."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "invoice_access.sqlite"
    port = free_port()
    listed = [] if enabled is None else ["enabled_events = [" + ", ".join(f'"{t}"' for t in enabled) + "]"]
    lines = ["[target]", f'url = "http://127.0.0.1:{port}/webhooks"', 'profile = "stripe"', f'secret = "{SECRET}"',
             *listed, "", "[target.start]",
             f'command = "{sys.executable} -m {MODULE} --port {port} --db sqlite:///{db} --secret {SECRET} '
             f'--api-base {{api_base}} --option extend_on={extend_on}"',
             f'health_url = "http://127.0.0.1:{port}/healthz"', f'cwd = "{PROJECT_ROOT}"', "startup_timeout_s = 60",
             "", "[observer]", 'kind = "sql"', f'url = "sqlite:///{db}"',
             'effects = "SELECT business_key, amount FROM effects"',
             'state = "SELECT object_id, status, version FROM subscription_states"', "",
             "[run]", "seed = 11", "", "[settle]", "window_s = 0.5", "deadline_s = 30", ""]
    path = folder / "hookproof.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def explore(config: Path) -> tuple[int, dict[str, object]]:
    """`hookproof explore` at its default budget: (exit code, report.json)."""
    out = config.parent / "out"
    done = subprocess.run([sys.executable, "-m", "hookproof", "explore", "--config", str(config), "--out", str(out)],
                          capture_output=True, text=True, timeout=600, cwd=PROJECT_ROOT,
                          env={**os.environ, "COLUMNS": "200"})
    return done.returncode, json.loads((out / "report.json").read_text(encoding="utf-8"))


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_explore_passes_either_event_and_finds_the_renewal_extended_on_both(tmp_path: Path) -> None:
    code, report = explore(write_config(tmp_path / "succeeded", 1))
    assert code == 0, report
    code, report = explore(write_config(tmp_path / "both", 2))
    assert code == 1, report
    (machine,) = [s for s in report["scenarios"] if s["id"] == "explore-state-machine"]  # type: ignore[union-attr]
    findings = [(f["check_id"], f["key"]) for c in machine["checks"] for f in c["findings"]]
    assert findings and {check for check, _ in findings} == {"duplicated"}, findings
    assert all(key.startswith("renewal:in_") for _, key in findings), findings


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_storm_passes_either_event_and_finds_the_renewal_extended_on_both(tmp_path: Path) -> None:
    # seed 13: a storm whose end cuts no paid invoice between its invoice.paid and its
    # invoice.payment_succeeded (each invoice's payment's own events now sent beside them moved
    # where seed 11's storm ends, leaving a renewal the receiver extends on the second unknown)
    correct = storm(write_config(tmp_path / "succeeded", 1), tmp_path / "succeeded" / "out", *STORM_SEED)
    assert failing_checks(tmp_path / "succeeded" / "out") == {}, correct.stdout + correct.stderr
    assert correct.returncode == 0, correct.stdout + correct.stderr
    both = storm(write_config(tmp_path / "both", 2), tmp_path / "both" / "out", *STORM_SEED)
    assert both.returncode == 1, both.stdout + both.stderr
    assert "duplicated" in failing_checks(tmp_path / "both" / "out"), both.stdout
    report = json.loads((tmp_path / "both" / "out" / "report.json").read_text())
    keys = {f["key"] for c in report["scenarios"][0]["checks"] if c["check_id"] == "duplicated" for f in c["findings"]}
    assert keys and all(key.startswith("renewal:in_") for key in keys), keys
