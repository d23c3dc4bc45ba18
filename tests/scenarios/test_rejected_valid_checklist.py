"""A valid delivery refused with a 4xx is the receiver rejecting valid events, and the go-live
checklist says so under "Accepts every valid delivery", not under "Survives duplicate
deliveries" nor "Survives sender timeouts and lost answers" (where ``valid_not_rejected``
used to count: a receiver whose parser rejected one event type's body read as one that
fails on duplicates). A copy refused after an acknowledged one stays ``duplicate_acked``'s,
a duplicates finding.

`rejects_one_type` answers 400 to every ``charge.succeeded`` and is otherwise inbox_sync:
the scenarios that send one fail on ``valid_not_rejected`` alone, and only the new item
fails. inbox_sync's checklist passes every item, the new one included, with the same
evidence as before for every other item.
"""

from __future__ import annotations

from pathlib import Path

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.demo import receiver_config
from hookproof.reports import render_markdown
from hookproof.scenarios.catalog import CATALOG, CHECKLIST, CHECKLIST_DECIDED_BY

SECRET = "whsec_rejects_one_type_" + "0" * 16
SCENARIOS = ["duplicate-sequential", "dropped-response", "related-burst", "reorder", "forged-signature"]


def _certify(name: str, tmp_path: Path, module: str | None = None) -> object:
    cfg = receiver_config(name, tmp_path, SECRET, seed=4242, scenarios=SCENARIOS, module=module, cwd=PROJECT_ROOT,
                          settle_window_s=0.15)
    return certify(cfg, out_dir=tmp_path / "report").report


def _rows(markdown: str) -> dict[str, str]:
    section = markdown.split("### Go-live checklist\n\n", 1)[1].split("\n\n", 1)[0]
    return {row.split(" | ")[0].lstrip("| "): row for row in section.splitlines()[2:]}


def test_a_receiver_rejecting_one_valid_type_fails_accepts_valid_only(tmp_path: Path) -> None:
    report = _certify("rejects_one_type", tmp_path, "tests.scenarios.rejects_one_type")
    got = {s.id: (s.verdict, sorted({f.check_id for f in s.findings})) for s in report.scenarios}
    assert got == {"duplicate-sequential": ("fail", ["valid_not_rejected"]),
                   "dropped-response": ("fail", ["valid_not_rejected"]),
                   "related-burst": ("fail", ["valid_not_rejected"]),
                   "reorder": ("pass", []), "forged-signature": ("pass", [])}, got
    answered = 'with 400; the receiver answered "{"error":"could not parse the event"}"'
    messages = [(s.id, f.message) for s in report.scenarios for f in s.findings]
    assert messages == [  # duplicate-sequential's three copies, each on the whole retry schedule
        ("duplicate-sequential", f"1 valid charge.succeeded event(s) refused 33 time(s) {answered}"),
        ("dropped-response", f"1 valid charge.succeeded event(s) refused 11 time(s) {answered}"),
        ("related-burst", f"1 valid charge.succeeded event(s) refused 11 time(s) {answered}"),
        ("related-burst", f"1 valid charge.succeeded event(s) refused 11 time(s) {answered}")], messages
    checklist = {item.id: item.verdict for item in report.checklist}
    assert checklist == {"raw-body-signature": "pass", "accepts-valid": "fail", "refuses-foreign": "untested",
                         "persists-before-ack": "untested", "unique-under-concurrency": "pass",
                         "duplicates-tested": "pass", "reordering-tested": "pass", "timeouts-tested": "pass",
                         "retries-bounded": "pass", "transient-vs-permanent": "untested"}, checklist
    (accepts,) = [i for i in report.checklist if i.id == "accepts-valid"]
    assert [(e.scenario, e.verdict) for e in accepts.evidence] == [
        ("duplicate-sequential", "fail"), ("dropped-response", "fail"), ("related-burst", "fail"), ("reorder", "pass")]
    rows = _rows(render_markdown(report))
    assert rows["Accepts every valid delivery"] == (
        "| Accepts every valid delivery | FAIL | `duplicate-sequential` FAIL, `dropped-response` FAIL, `related-burst` FAIL, "
        "`reorder` PASS |")
    assert rows["Survives duplicate deliveries"] == (
        "| Survives duplicate deliveries | PASS | `duplicate-sequential` no finding here; failed on `valid_not_rejected` "
        "(Accepts every valid delivery), `dropped-response` no finding here; failed on `valid_not_rejected` "
        "(Accepts every valid delivery) |")
    assert rows["Survives sender timeouts and lost answers"] == (
        "| Survives sender timeouts and lost answers | PASS | `dropped-response` no finding here; failed on "
        "`valid_not_rejected` (Accepts every valid delivery) |")


def test_a_correct_receiver_passes_every_item_with_the_same_evidence(tmp_path: Path) -> None:
    report = _certify("inbox_sync", tmp_path)
    assert [s.verdict for s in report.scenarios] == ["pass"] * len(SCENARIOS)
    assert [item.id for item in report.checklist] == list(CHECKLIST)
    for item in report.checklist:
        declared = [sid for sid in SCENARIOS if item.id in CATALOG[sid].checklist]
        assert item.verdict == ("pass" if declared else "untested"), item
        deciding = [sid for sid in CHECKLIST_DECIDED_BY.get(item.id, ()) if sid not in declared]  # shown not run
        assert sorted(item.scenarios) == sorted(declared + deciding), item
    before = {"duplicates-tested": ["duplicate-sequential", "dropped-response"], "timeouts-tested": ["dropped-response"],
              "reordering-tested": ["reorder"], "raw-body-signature": ["forged-signature"],
              "unique-under-concurrency": ["related-burst"], "retries-bounded": ["duplicate-sequential", "related-burst"]}
    assert {i.id: sorted(i.scenarios) for i in report.checklist if i.id in before} == {
        k: sorted(v) for k, v in before.items()}
    (accepts,) = [i for i in report.checklist if i.id == "accepts-valid"]
    assert accepts.verdict == "pass" and sorted(accepts.scenarios) == sorted(
        ["duplicate-sequential", "dropped-response", "related-burst", "reorder"])


def test_copies_spread_over_replicas_one_after_another_are_no_evidence_of_concurrency() -> None:
    """replicas-duplicates sends each copy after the previous one's answer, to another replica:
    it tests dedupe kept in one replica's memory, not a race, so a pass of it alone leaves
    "Keeps effects unique under concurrency" untested (it counted as that item's evidence)."""
    from hookproof.reports.model import ScenarioReport
    from hookproof.scenarios.chaos import CHAOS_CATALOG
    from hookproof.scenarios.report_views import checklist

    scenario = CHAOS_CATALOG["replicas-duplicates"]
    passed = ScenarioReport(scenario.id, scenario.title, scenario.description, "pass", scenario.checklist)
    verdicts = {item.id: item.verdict for item in checklist([passed])}
    assert verdicts["unique-under-concurrency"] == "untested"
    assert verdicts["duplicates-tested"] == "pass"
