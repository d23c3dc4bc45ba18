"""A scenario whose keys or objects the receiver already holds before its first delivery is not
judged (`scenarios.leftovers`): a database kept from an earlier run of the same seed holds every
effect and state of that run, so a receiver that dedupes would apply nothing and pass whatever it does.
A fresh database shows nothing, and what another scenario of the same run sends is never counted."""

from __future__ import annotations

import re
import time
from pathlib import Path

from examples.receivers import load
from hookproof.receivers import ReceiverConfig, receiver_of
from hookproof.reports.model import RunReport, ScenarioReport
from hookproof.scenarios.catalog import Context, Phase, Plan, Scenario, effect_events
from hookproof.scenarios.leftovers import LEFTOVERS_PREFIX, Leftovers, leftovers
from hookproof.scenarios.observations import Effect, ObjectState, Observation
from hookproof.scenarios.observers import observation_from_data
from hookproof.scenarios.runner import Runner
from hookproof.simulator.delivery import History, Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World, new_world
from tests.examples.serving import serve_app

SECRET = "whsec_leftovers_0123"
ACCOUNT = "acct_leftovers00001"
#: Scenarios of every kind of leftover: effects only, a state only, both; and one whose events
#: are all invalid (nothing applied, nothing left over: judged again, and passes again).
CHOSEN = ["duplicate-sequential", "reorder", "mass-redelivery", "forged-signature"]
REASON = re.compile(
    re.escape(LEFTOVERS_PREFIX) + r"(?:(\d+) of its (\d+) business key\(s\) \(e\.g\. (\S+)\))?(?: and )?"
    r"(?:a state for (\d+) of its object\(s\) \(e\.g\. (\S+)\))? before the scenario's first delivery: a receiver "
    r"that dedupes them would apply nothing new and every check would pass, so nothing was sent and the scenario "
    r"was not judged; likely cause: a database kept from an earlier run with the same seed \(run\.seed / "
    r"--seed 7\): use a fresh database, or another seed")


def test_a_read_showing_nothing_of_the_scenario_is_no_leftover() -> None:
    others = Observation(1.0, (Effect("license:pi_other"), Effect("refund:ch_other:1")), (ObjectState("sub_other", "active"),))
    assert leftovers(others, {"sub_1", "ch_1"}, {"license:pi_1"}) is None
    assert leftovers(Observation(1.0), {"sub_1"}, {"license:pi_1"}) is None


def test_leftovers_count_the_scenario_s_keys_and_states_and_name_one_of_each() -> None:
    before = Observation(1.0, (Effect("license:pi_1"), Effect("license:pi_1"), Effect("refund:ch_1:1"),
                               Effect("license:pi_other")),
                         (ObjectState("sub_1", "active"), ObjectState("sub_other", "active")), counters={"ch_1": 5})
    held = leftovers(before, {"sub_1", "ch_1"}, {"license:pi_1", "license:pi_2"})
    # refund:ch_1:1 names one of its objects: its key too, although no event of it carries it
    assert held == Leftovers(("license:pi_1", "refund:ch_1:1"), 3, ("sub_1",))
    assert held.reason(7) == (
        "the receiver already held 2 of its 3 business key(s) (e.g. license:pi_1) and a state for 1 of its "
        "object(s) (e.g. sub_1) before the scenario's first delivery: a receiver that dedupes them would apply "
        "nothing new and every check would pass, so nothing was sent and the scenario was not judged; likely "
        "cause: a database kept from an earlier run with the same seed (run.seed / --seed 7): use a fresh "
        "database, or another seed")
    assert Leftovers((), 2, ("sub_1",)).reason(3).startswith(
        "the receiver already held a state for 1 of its object(s) (e.g. sub_1) before the scenario's first delivery")


def _receiver_runner(db: Path, url: str, receiver: object, seed: int, overlap: int = 1) -> Runner:
    def observe() -> Observation:
        return observation_from_data(receiver.observe(), time.time(), observer="python")  # type: ignore[attr-defined]

    return Runner(target=Target(url=url + "/webhooks"), profile=get_profile("stripe"), secrets=(SECRET,),
                  observe=observe, history=History(), account=ACCOUNT, seed=seed, settle_window_s=0.1,
                  settle_interval_s=0.02, overlap=overlap)


def _certify(db: Path, seed: int, overlap: int) -> RunReport:
    app = load("inbox_sync").create_app(ReceiverConfig(db_url=f"sqlite:///{db}", secrets=(SECRET,), account=ACCOUNT))
    receiver = receiver_of(app)
    try:
        with serve_app(app) as url:
            return _receiver_runner(db, url, receiver, seed, overlap).run(CHOSEN)
    finally:
        receiver.close()


def test_a_second_run_of_one_seed_over_a_kept_database_is_not_judged_and_another_seed_is(tmp_path: Path) -> None:
    db = tmp_path / "kept.db"
    first = _certify(db, 7, overlap=4)
    assert {s.id: s.verdict for s in first.scenarios} == dict.fromkeys(CHOSEN, "pass")

    second = _certify(db, 7, overlap=4)  # every id and key is the first run's again
    assert {s.id: s.verdict for s in second.scenarios} == {
        "duplicate-sequential": "error", "reorder": "error", "mass-redelivery": "error", "forged-signature": "pass"}
    sent = {s.id: {a.business_key for a in s.attempts} for s in first.scenarios}
    held = {s.id: REASON.fullmatch(s.reason or "") for s in second.scenarios if s.verdict == "error"}
    assert all(held.values()), [s.reason for s in second.scenarios]
    # how many keys and objects were there: every key the first run applied; reorder owes none, only states
    counts = {i: (m.group(1), m.group(2), m.group(4)) for i, m in held.items() if m}
    assert counts == {"duplicate-sequential": ("7", "7", None), "reorder": (None, None, "1"),
                      "mass-redelivery": ("7", "7", "1")}
    assert all(m.group(3) in sent[i] for i, m in held.items() if m and m.group(3))
    assert all(s.attempts == () for s in second.scenarios if s.verdict == "error")  # nothing was sent

    third = _certify(db, 8, overlap=4)  # another seed over the same database: fresh ids, judged
    assert {s.id: s.verdict for s in third.scenarios} == dict.fromkeys(CHOSEN, "pass")


def _shared(ctx: Context, w: World) -> Plan:
    """Three events of one fixed world, whatever the scenario's own: two scenarios sending them
    share their keys (as a team's key over a field every story carries)."""
    fixed = new_world("billing", 5, livemode=False, account=ACCOUNT)
    assert isinstance(fixed, World)
    return Plan(w, (Phase(tuple(effect_events(ctx, fixed)[:3])),))


def _scenario(scenario_id: str) -> Scenario:
    return Scenario(scenario_id, "Shared events", "Three events another scenario sends too.", ("lost",), (), _shared)


def test_what_another_scenario_of_the_run_sent_is_no_leftover(tmp_path: Path) -> None:
    db = tmp_path / "fresh.db"
    app = load("inbox_sync").create_app(ReceiverConfig(db_url=f"sqlite:///{db}", secrets=(SECRET,), account=ACCOUNT))
    receiver = receiver_of(app)
    try:
        with serve_app(app) as url:
            runner = _receiver_runner(db, url, receiver, 7)
            reports: list[ScenarioReport] = [runner.run_one(_scenario(i), n) for n, i in enumerate(("one", "two"))]
            # a new run over the same database: the keys are no run's of its own
            again = _receiver_runner(db, url, receiver, 7).run_one(_scenario("two"), 0)
    finally:
        receiver.close()
    assert [(r.id, r.verdict, r.reason) for r in reports] == [("one", "pass", None), ("two", "pass", None)]
    assert len(reports[1].attempts) == 3  # sent and judged: the keys were the first scenario's
    assert again.verdict == "error" and REASON.fullmatch(again.reason or ""), again.reason
