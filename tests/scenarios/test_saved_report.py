"""The run report as a history keeps it: inline (certify's), or apart from its findings (a storm's)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from hookproof.reports import RunReport, SchemaVersionError, load_json, render_json
from hookproof.reports.model import LogExcerpt
from hookproof.scenarios.report_views import REPORT_META_KEY
from hookproof.scenarios.saved_report import (
    APART_VERSION,
    FindingsKeeper,
    StoredFindings,
    saved_document,
    store_report,
)
from hookproof.simulator.delivery.history import History, HistoryFile
from tests.reports.sample import sample_report


def _history(tmp_path: Path) -> Path:
    path = tmp_path / "history.sqlite"
    History(path).close()
    return path


def _with_log(report: RunReport | None = None) -> RunReport:
    """The sample report, one finding quoting the receiver's log (a non-ASCII tail), as a
    storm's findings are once linked to it."""
    report = report or sample_report()
    failing = report.scenarios[1]
    check = failing.checks[0]
    logged = replace(check.findings[0], log=LogExcerpt("receiver.log", "Traceback: naïve → 500"))
    failing = replace(failing, checks=(replace(check, findings=(logged, *check.findings[1:])), *failing.checks[1:]))
    return replace(report, receiver_log="receiver.log", scenarios=(report.scenarios[0], failing, report.scenarios[2]))


def test_a_report_stored_apart_reads_back_as_report_json_s_document(tmp_path: Path) -> None:
    report = _with_log()
    findings = [(s, c, check.check_id, f) for s, scenario in enumerate(report.scenarios)
                for c, check in enumerate(scenario.checks) for f in check.findings]
    assert [(s, c, check_id) for s, c, check_id, _ in findings] == [(0, 4, "ack_latency"), (1, 0, "duplicated")]
    path = _history(tmp_path)
    with HistoryFile(path) as history:
        assert store_report(history, report) == len(findings)
        db = history._db
        document = json.loads(db.execute("SELECT value FROM meta WHERE key = 'report'").fetchone()[0])
        # the meta holds the report without a finding, its rows each one, in the report's order
        assert document["schema_version"] == APART_VERSION
        assert [c["findings"] for s in document["scenarios"] for c in s["checks"]] == [
            [] for s in report.scenarios for _ in s.checks]
        rows = db.execute("SELECT scenario_pos, check_pos, check_id, json_extract(finding, '$.key'),"
                          " json_extract(finding, '$.log.tail') FROM findings ORDER BY idx").fetchall()
        assert rows == [(s, c, check_id, f.key, f.log.tail if f.log else None) for s, c, check_id, f in findings]
        assert history.meta()[f"{REPORT_META_KEY}_findings"] == len(findings)
        assert saved_document(db) == json.loads(render_json(report))
    assert load_json(json.dumps(saved_document(sqlite3.connect(path)))) == report


def test_a_reader_before_the_apart_form_refuses_it_by_its_version(tmp_path: Path) -> None:
    """What an older hookproof's `hookproof report` does with the meta's document: it stops,
    saying to upgrade, rather than render a report without its findings."""
    path = _history(tmp_path)
    with HistoryFile(path) as history:
        store_report(history, sample_report())
        meta = history.meta()[REPORT_META_KEY]
    with pytest.raises(SchemaVersionError, match="version 2 is not supported .*upgrade hookproof to read it"):
        load_json(json.dumps(meta))


def test_an_inline_report_is_read_as_it_is_and_storing_apart_replaces_it(tmp_path: Path) -> None:
    report = sample_report()
    path = tmp_path / "history.sqlite"
    with History(path) as history:  # as certify stores it after every scenario
        history.set_meta(REPORT_META_KEY, json.loads(render_json(report)))
    with sqlite3.connect(path) as db:
        assert saved_document(db) == json.loads(render_json(report))
        assert db.execute("SELECT count(*) FROM findings").fetchone() == (0,)
    linked = _with_log(report)
    with HistoryFile(path) as history:  # the report linked to the receiver's log, stored at the end
        store_report(history, linked)
        store_report(history, linked)  # again (a storm interrupted after its master stored it): rows replaced
    with sqlite3.connect(path) as db:
        assert saved_document(db) == json.loads(render_json(linked))


def test_rows_that_do_not_fit_their_report_are_refused(tmp_path: Path) -> None:
    path = _history(tmp_path)
    with HistoryFile(path) as history:
        store_report(history, sample_report())
    with sqlite3.connect(path) as db:
        assert saved_document(db) is not None
        db.execute("DELETE FROM findings WHERE idx = (SELECT max(idx) FROM findings)")
        with pytest.raises(ValueError, match=r"the history's findings table holds \d+ finding\(s\), its report \d+"):
            saved_document(db)
        db.execute("INSERT INTO findings (scenario_pos, check_pos, check_id, finding) VALUES (7, 0, 'lost', '{}')")
        with pytest.raises(ValueError, match="names no check of its report"):
            saved_document(db)
        db.execute("DELETE FROM meta WHERE key = 'report'")
        assert saved_document(db) is None


def test_findings_kept_as_their_views_are_made_are_rows_the_report_reads_back(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A storm's end: each check's views written as they are made (`FindingsKeeper`), the
    report holding the rows (`StoredFindings`); storing the report then keeps those rows."""
    from hookproof.scenarios import saved_report

    report = _with_log()
    path = _history(tmp_path)
    with HistoryFile(path) as history:
        history.add_findings([(9, 9, "stale", "{}")])  # an earlier report's row: gone with the keeper
        keeper = FindingsKeeper(history, scenario_pos=1)
        failing = report.scenarios[1]
        checks = tuple(replace(c, findings=keeper.keep(c.check_id)(iter(c.findings))) for c in failing.checks)
        stored = replace(report, scenarios=(report.scenarios[0], replace(failing, checks=checks), report.scenarios[2]))
        rows = checks[0].findings
        assert isinstance(rows, StoredFindings) and (rows.scenario_pos, rows.check_pos, rows.first) == (1, 0, 1)
        assert rows == failing.checks[0].findings and len(rows) == 1 and rows[0] == rows[-1] == rows[:1][0]
        assert rows[::1] == tuple(failing.checks[0].findings)
        with pytest.raises(IndexError, match="finding 1 out of range"):
            rows[1]
        assert stored == report  # equal to the views held
        assert [c.findings for c in checks[1:]] == [() for _ in checks[1:]]  # a check without findings: none
        # the first scenario's advisory is not among the rows: stored again, whole
        assert store_report(history, stored) == 2
        assert saved_document(history._db) == json.loads(render_json(report))
        only_failing = replace(report, scenarios=report.scenarios[1:])  # its views held, to keep anew
        keeper = FindingsKeeper(history)
        checks = tuple(replace(c, findings=keeper.keep(c.check_id)(iter(c.findings)))
                       for c in only_failing.scenarios[0].checks)
        kept = replace(only_failing, scenarios=(replace(only_failing.scenarios[0], checks=checks),
                                                *only_failing.scenarios[1:]))
        monkeypatch.setattr(saved_report, "finding_rows", lambda report: pytest.fail("rows written twice"))
        assert store_report(history, kept) == 1  # the rows already there are the report's: the meta alone
        assert saved_document(history._db) == json.loads(render_json(only_failing))
