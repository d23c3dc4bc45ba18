"""A scenario whose every check but the answer checks is not applicable compared nothing: it is
``not_applicable`` with the reason, never ``pass`` (README: "nothing compared is not a pass"), and
it evidences no checklist item. The same receivers with a state query are judged: the correct one
passes, the blind one fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.reports.model import RunReport
from hookproof.scenarios.checks import CheckResult, Verdict, nothing_compared
from hookproof.scenarios.effect_checks import NO_STATE_QUERY

NA = {"applicability": "not applicable", "objects": 0}


def test_nothing_compared_names_the_checks_and_why() -> None:
    results = [CheckResult("regressed", Verdict.VALID, (), NA, NO_STATE_QUERY),
               CheckResult("stale", Verdict.VALID, (), NA, NO_STATE_QUERY),
               CheckResult("no_server_error", Verdict.VALID, (), {"server_errors": 0}, "0 finding(s), 0 advisory(ies)")]
    assert nothing_compared(results) == "nothing compared: regressed, stale not applicable (no state query configured)"
    compared = [*results[:1], CheckResult("stale", Verdict.VALID, (), {"objects": 1}, "0 finding(s), 0 advisory(ies)")]
    assert nothing_compared(compared) is None
    assert nothing_compared(results[2:]) is None  # answer checks alone: not this rule


SCENARIOS = ["reorder", "stale-after-newer", "duplicate-sequential"]


def _run(tmp_path: Path, receiver: str, *, state_query: bool) -> RunReport:
    from examples.receivers import config as receiver_config

    cfg = receiver_config(receiver, tmp_path, "whsec_nothing_compared", seed=11, scenarios=SCENARIOS,
                          settle_window_s=0.15)
    if not state_query:
        cfg = cfg.model_copy(update={"observer": cfg.observer.model_copy(update={"state": None})})
    return certify(cfg, out_dir=tmp_path / "out").report


@pytest.mark.slow
@pytest.mark.parametrize(("receiver", "state_query", "verdicts"), [
    ("inbox_sync", True, {"reorder": "pass", "stale-after-newer": "pass"}),
    ("blind_overwrite", True, {"reorder": "fail", "stale-after-newer": "fail"}),
    ("inbox_sync", False, {"reorder": "not_applicable", "stale-after-newer": "not_applicable"}),
    ("blind_overwrite", False, {"reorder": "not_applicable", "stale-after-newer": "not_applicable"}),
])
def test_state_scenarios_without_a_state_query_are_not_applicable(
        tmp_path: Path, receiver: str, state_query: bool, verdicts: dict[str, str]) -> None:
    report = _run(tmp_path, receiver, state_query=state_query)
    by_id = {s.id: s for s in report.scenarios}
    assert {i: by_id[i].verdict for i in verdicts} == verdicts
    assert by_id["duplicate-sequential"].verdict == "pass"
    if not state_query:
        for i in verdicts:
            assert by_id[i].reason == ("nothing compared: regressed, stale not applicable "
                                       "(no state query configured)"), by_id[i]
        [reordering] = [item for item in report.checklist if item.id == "reordering-tested"]
        assert (reordering.verdict, reordering.evidence) == ("untested", ()), reordering


def test_a_state_query_no_scenario_walked_is_named_in_a_note(tmp_path: Path) -> None:
    """`[observer.states]` names a kind the world has states for (a Checkout Session's) but the
    run's scenarios walked none of them: its query compared nothing, and a note says so."""
    from examples.receivers import config as receiver_config

    cfg = receiver_config("inbox_sync", tmp_path, "whsec_nothing_compared", seed=11, scenarios=["reorder"],
                          settle_window_s=0.15)
    idle = "SELECT business_key AS object_id, 'open' AS status FROM effects WHERE 1 = 0"
    cfg = cfg.model_copy(update={"observer": cfg.observer.model_copy(update={"states": {"checkout.session": idle}})})
    report = certify(cfg, out_dir=tmp_path / "out").report
    assert [s.verdict for s in report.scenarios] == ["pass"]
    assert ("[observer.states] checkout.session: no scenario of this run walked the states of this kind, so the "
            "query was compared with nothing") in report.notes, report.notes


def test_the_note_names_only_the_kinds_not_walked(tmp_path: Path) -> None:
    from examples.receivers import config as receiver_config
    from hookproof.certify import unwalked_states_note

    cfg = receiver_config("inbox_sync", tmp_path, "whsec_nothing_compared", seed=11)
    cfg = cfg.model_copy(update={"observer": cfg.observer.model_copy(update={
        "states": {"invoice": "SELECT 1", "charge": "SELECT 1"}})})
    assert unwalked_states_note(cfg, frozenset({"invoice", "subscription"})) == (
        "[observer.states] charge: no scenario of this run walked the states of this kind, so the query was compared "
        "with nothing (states compared: invoice)")
    assert unwalked_states_note(cfg, frozenset({"invoice", "charge"})) is None
