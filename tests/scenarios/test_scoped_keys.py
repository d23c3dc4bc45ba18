"""A team's keys need not name an object id: each scenario keeps the rows its own events' keys name.

certify, explore and storm read a receiver whose tables hold every scenario's rows, and keep
the ones about the current world. hookproof's keys name an object second (``refund:<payment>:…``);
a team's may not (``pay/<payment intent>``, ``<invoice>@renewal``, a comment's own id): rows under
the keys of the world's own events, and counters its events move, are the world's too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookproof.scenarios.business_keys import KeyMapping, counter_keys, scoped
from hookproof.scenarios.observations import Effect, ObjectState, Observation
from tests.test_readme import LEDGER_SCENARIOS, _ledger_project


def test_scoped_keeps_the_world_s_own_keys_whatever_their_shape() -> None:
    obs = Observation(at=1.0, effects=(Effect("pay/pi_1"), Effect("in_1@renewal"), Effect("refund:ch_1:re_1"),
                                       Effect("pay/pi_other"), Effect("refund:ch_other:re_2")),
                      states=(ObjectState("in_1", "paid"), ObjectState("in_other", "paid")),
                      counters={"balance/cus_1": 5, "cus_1": 7, "balance/cus_other": 9})
    mine = scoped(obs, {"ch_1", "in_1", "cus_1"}, {"pay/pi_1", "in_1@renewal"}, {"balance/cus_1"})
    assert [e.business_key for e in mine.effects] == ["pay/pi_1", "in_1@renewal", "refund:ch_1:re_1"]
    assert [s.object_id for s in mine.states] == ["in_1"]
    assert mine.counters == {"balance/cus_1": 5, "cus_1": 7}


def test_counter_keys_skip_events_their_template_does_not_fit() -> None:
    from hookproof.scenarios.business_keys import CounterRule
    from hookproof.simulator.profiles.registry import get_profile
    from hookproof.simulator.world import World

    events = World(1).lifecycle()
    paid = [e for e in events if e.type == "invoice.paid"]
    assert paid
    fits = KeyMapping({}, get_profile("stripe"), counters={
        "invoice.paid": CounterRule("balance/{data.object.customer}", "data.object.amount_paid")})
    assert counter_keys(events, fits) == {f"balance/{e.object['customer']}" for e in paid}
    misfit = KeyMapping({}, get_profile("stripe"), counters={"invoice.paid": CounterRule("{data.object.nope}",
                                                                                         "data.object.amount_paid")})
    assert counter_keys(events, misfit) == frozenset() and counter_keys(events, None) == frozenset()


def _reshaped(tmp_path: Path, *, broken: bool) -> Path:
    """The README's ledger with keys that name no object second, in its code and its config."""
    path = _ledger_project(tmp_path, broken=broken)
    code = (tmp_path / "ledger.py").read_text(encoding="utf-8")
    for old, new in (('f"payment:{obj[\'payment_intent\']}"', 'f"pay/{obj[\'payment_intent\']}"'),
                     ('f"renewal:{obj[\'id\']}"', 'f"{obj[\'id\']}@renewal"'),
                     ('(obj["customer"], obj["amount_paid"])', '("balance/" + obj["customer"], obj["amount_paid"])')):
        assert old in code, old
        code = code.replace(old, new)
    (tmp_path / "ledger.py").write_text(code, encoding="utf-8")
    toml = path.read_text(encoding="utf-8")
    for old, new in (('"payment:{data.object.payment_intent}"', '"pay/{data.object.payment_intent}"'),
                     ('"renewal:{data.object.id}"', '"{data.object.id}@renewal"'),
                     ('key = "{data.object.customer}"', 'key = "balance/{data.object.customer}"')):
        assert old in toml, old
        toml = toml.replace(old, new)
    path.write_text(toml, encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("broken", [False, True], ids=["as-written", "without-event-dedupe"])
def test_a_team_s_keys_that_name_no_object_certify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   broken: bool) -> None:
    from hookproof.certify import certify
    from hookproof.config import load_config

    monkeypatch.setenv("WEBHOOK_SECRET", "whsec_readme_ledger_example")
    config = load_config(_reshaped(tmp_path, broken=broken))
    report = certify(config, scenarios=LEDGER_SCENARIOS, out_dir=tmp_path / "out").report
    failing = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    if not broken:
        assert report.verdict == "pass", [(s.id, s.verdict, s.reason, s.findings[:2]) for s in report.scenarios]
        checks = {c.check_id: c for s in report.scenarios for c in s.checks}
        assert checks["lost"].verdict == "valid" and checks["counter"].stats["counters"] >= 1
        return
    # the balance is credited on each delivery: 3 copies in duplicate-sequential, 2 in mass-redelivery
    assert failing == {"duplicate-sequential": ["counter"], "mass-redelivery": ["counter"]}, \
        [(s.id, s.verdict, s.reason) for s in report.scenarios]
    copies = {"duplicate-sequential": 3, "mass-redelivery": 2}
    for sid, finding in ((s.id, f) for s in report.scenarios for f in s.findings):
        assert re.fullmatch(r"balance/cus_\w+", finding.key) and finding.actual == copies[sid] * finding.expected
