"""A receiver that verifies over a compact re-dump of the JSON.

Under ``generic-hmac`` (hookproof's own sender, whose bodies are compact by definition) the
re-dump is the body sent, so it passes every first delivery and refuses a correctly signed
retry whose JSON was re-serialised: `reserialized-retry` fails it with `duplicate_acked` (it
passed before: `valid_not_rejected` leaves copies after an acknowledged one to
`duplicate_acked`, which the scenario did not run). `reserialized-body` sends each event once in
such bytes: the receiver refuses it (`valid_not_rejected`), and the go-live checklist's
"Verifies the signature over the raw body" fails (it read PASS: forged, missing and
wrong-secret requests were all refused).

Under ``stripe`` the body is pretty-printed as Stripe sends it, so the same receiver refuses
every genuine first delivery: `duplicate-sequential` fails it with `valid_not_rejected` and
`lost`, as real Stripe deliveries would.
"""

from __future__ import annotations

from pathlib import Path

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.demo import receiver_config

SECRET = "whsec_compact_reserialize_" + "0" * 14


def test_a_receiver_verifying_a_compact_re_dump_fails_reserialized_retry(tmp_path: Path) -> None:
    scenarios = ["duplicate-sequential", "reserialized-retry", "reserialized-body", "transport-fields-change"]
    cfg = receiver_config("compact_reserialize", tmp_path, SECRET, seed=4242, scenarios=scenarios,
                          profile="generic-hmac", module="tests.scenarios.compact_reserialize", cwd=PROJECT_ROOT,
                          settle_window_s=0.15)
    report = certify(cfg, out_dir=tmp_path / "report").report
    got = {s.id: (s.verdict, sorted({f.check_id for f in s.findings})) for s in report.scenarios}
    assert got == {"duplicate-sequential": ("pass", []), "reserialized-retry": ("fail", ["duplicate_acked"]),
                   "reserialized-body": ("fail", ["lost", "valid_not_rejected"]),
                   "transport-fields-change": ("pass", [])}, got
    checklist = {item.id: item.verdict for item in report.checklist}
    assert checklist["raw-body-signature"] == "fail", checklist
    messages = [f.message for s in report.scenarios if s.id == "reserialized-retry" for f in s.findings]
    assert messages and all("400" in m for m in messages), messages


def test_under_stripe_a_compact_re_dump_fails_the_first_delivery(tmp_path: Path) -> None:
    cfg = receiver_config("compact_reserialize", tmp_path, SECRET, seed=4242, scenarios=["duplicate-sequential"],
                          module="tests.scenarios.compact_reserialize", cwd=PROJECT_ROOT, settle_window_s=0.15)
    report = certify(cfg, out_dir=tmp_path / "report").report
    got = {s.id: (s.verdict, sorted({f.check_id for f in s.findings})) for s in report.scenarios}
    assert got == {"duplicate-sequential": ("fail", ["lost", "valid_not_rejected"])}, got
