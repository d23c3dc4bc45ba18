"""``lost`` over events the mapping gives no business key: not applicable, never unknown.

A team that maps one effect (``payment_intent.succeeded`` → a license) and observes its
subscriptions' states owes no effect for an ``invoice.paid`` or a subscription update: the
``lost`` check has nothing to judge for them, so it is not applicable and the scenario's
verdict comes from the state checks (``stale-failure-after-success`` passes on a correct
receiver and fails on `stale_failure_order`). A key the mapping does give is still judged:
an event acknowledged whose mapped effect never shows is a ``lost`` finding.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.receivers import config as receiver_config
from hookproof.certify import certify
from hookproof.config_model import Config
from hookproof.scenarios.checks import Verdict, check_lost
from hookproof.scenarios.key_loops import lost_not_applicable
from tests.scenarios.test_checks import att, exp, hist, obs

SECRET = "whsec_unkeyed_lost_" + "0" * 20
NOT_APPLICABLE = "not applicable: 2 acknowledged event(s) map to no business key, so no effect is owed"


def test_acknowledged_events_without_a_key_make_lost_not_applicable() -> None:
    result = check_lost(hist(att("e1"), att("e2")), exp(), [obs(20)])
    assert (result.verdict, result.findings, result.detail) == (Verdict.VALID, (), NOT_APPLICABLE)
    assert result.stats == {"expected_keys": 0, "lost": 0, "never_acknowledged": 0,
                            "applicability": "not applicable"}
    assert lost_not_applicable(2, {}).detail == NOT_APPLICABLE


def test_a_mapped_key_acknowledged_and_never_applied_is_still_lost() -> None:
    result = check_lost(hist(att("e1"), att("e_k1", "k1")), exp("k1"), [obs(20)])
    assert result.verdict is Verdict.INVALID
    assert [(f.key, f.message) for f in result.findings] == [("k1", "acknowledged 1 time(s) but not applied by the end of settling")]
    assert "applicability" not in result.stats


GONE = ("and applied, then gone by the end of settling: the receiver's read 4.0 s after its first delivery showed it "
        "applied and a later read did not: a receiver whose restart loses committed rows (a start command that resets "
        "its database, storage that is not kept) does that, as does one deleting or rolling back an effect it showed")


def test_a_key_a_read_showed_and_the_last_did_not_is_said_to_be_gone() -> None:
    """Committed, shown, then deleted (a restart resetting the database): not 'never applied'."""
    history = hist(att("e_k1", "k1", at=1.0))
    result = check_lost(history, exp("k1"), [obs(5, "k1"), obs(20)])
    assert [(f.key, f.message) for f in result.findings] == [("k1", f"acknowledged 1 time(s) {GONE}")]
    timed_out = check_lost(hist(att("e_k1", "k1", "timeout", at=1.0)), exp("k1"), [obs(5, "k1"), obs(20)])
    (finding,) = timed_out.findings  # applied: not a delivery a storm's cut could excuse
    assert finding.message == ("never acknowledged, applied, then gone by the end of settling: every valid delivery "
                               "went unanswered or was refused (timeout); the receiver's read 4.0 s after its first "
                               "delivery showed it applied and a later read did not: a receiver whose restart loses "
                               "committed rows (a start command that resets its database, storage that is not kept) "
                               "does that, as does one deleting or rolling back an effect it showed")
    # still there at the end: no finding; never shown: the words of a key never applied
    assert check_lost(history, exp("k1"), [obs(5, "k1"), obs(20, "k1")]).findings == ()
    (never,) = check_lost(history, exp("k1"), [obs(5), obs(20)]).findings
    assert never.message == "acknowledged 1 time(s) but not applied by the end of settling"


def _states_and_license(tmp_path: Path, name: str, *, renewal: str | None = None) -> Config:
    """`name` under the team's keys: a license per payment (and, with `renewal`, that key
    template for ``invoice.paid``), only those effects read, the subscriptions' states observed."""
    config = receiver_config(name, tmp_path, SECRET)
    keys: dict[str, str] = {"payment_intent.succeeded": "license:{data.object.id}"}
    if renewal is not None:
        keys["invoice.paid"] = renewal
    prefixes = " OR ".join(f"business_key LIKE '{t.split(':')[0]}:%'" for t in keys.values())
    observer = config.observer.model_copy(update={"effects": f"SELECT business_key FROM effects WHERE {prefixes}"})
    return config.model_copy(update={"builtin_keys": False, "business_keys": keys, "observer": observer})


SCENARIOS = ["stale-failure-after-success", "older-after-newer-redelivery"]


@pytest.mark.slow
def test_a_correct_receiver_observed_by_its_states_passes_stale_failure(tmp_path: Path) -> None:
    report = certify(_states_and_license(tmp_path, "inbox_sync"), scenarios=SCENARIOS, out_dir=tmp_path / "out").report
    stale, older = report.scenarios
    assert (stale.verdict, stale.findings, report.verdict) == ("pass", (), "pass"), stale.reason
    lost = next(c for c in stale.checks if c.check_id == "lost")
    assert lost.verdict == "valid" and lost.detail.startswith("not applicable: ")
    assert lost.stats["applicability"] == "not applicable"
    assert {c.check_id for c in stale.checks if c.verdict != "valid"} == set()
    # nothing of this one maps to an effect or a state: it does not apply (it is not a pass)
    assert older.verdict == "not_applicable" and older.reason is not None
    assert older.reason.startswith("no event of this scenario (charge.refunded) maps to an effect")


@pytest.mark.slow
def test_a_failure_applied_after_the_payment_still_fails_stale_failure(tmp_path: Path) -> None:
    report = certify(_states_and_license(tmp_path, "stale_failure_order"), scenarios=SCENARIOS[:1],
                     out_dir=tmp_path / "out").report
    (stale,) = report.scenarios
    assert (stale.verdict, report.verdict) == ("fail", "fail")
    assert {f.check_id for f in stale.findings} <= {"stale", "regressed"} and stale.findings


@pytest.mark.slow
def test_a_mapped_effect_the_receiver_never_shows_is_still_lost(tmp_path: Path) -> None:
    config = _states_and_license(tmp_path, "inbox_sync", renewal="paid:{data.object.id}")
    report = certify(config, scenarios=SCENARIOS[:1], out_dir=tmp_path / "out").report
    (stale,) = report.scenarios
    assert stale.verdict == "fail"
    lost = [f for f in stale.findings if f.check_id == "lost"]
    assert lost and all(f.key.startswith("paid:in_") and f.message.startswith("acknowledged 1 time(s) but not applied by the end of settling; the receiver answered 200 ")
                        and " and applied nothing" in f.message
                        for f in lost), lost
