"""The run report as a history keeps it, for `hookproof report` to re-render a saved run.

Two forms, both under the meta key `report_views.REPORT_META_KEY`:

- inline: report.json's document itself (``schema_version`` 1), every finding in it. Certify
  stores its report so after every scenario (a few dozen findings; `scenarios.runner`).
- apart (`store_report`): the document with every check's ``findings`` empty and
  ``schema_version`` `APART_VERSION`, each finding a row of the history's ``findings`` table
  (`simulator.delivery.history.HistoryFile.set_report`: one JSON text per finding, in the
  report's order) and their count under ``report_findings``. A storm's end stores its report
  so: a failing storm of a million attempts has ~850,000 findings, ~200 MB of JSON that
  SQLite would hold twice as one meta value while inserting it. ``json_extract`` reads the
  meta value and each row alike. A hookproof that predates the form stops at its version
  (`reports.load_json`: "version 2 is not supported ... upgrade hookproof to read it")
  rather than re-render a report without its findings.

`saved_document` reads either form back as report.json's document.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from typing import Any, Iterator

from hookproof.reports.json_report import finding_json, iter_json
from hookproof.reports.model import SCHEMA_VERSION, RunReport
from hookproof.scenarios.report_views import REPORT_META_KEY
from hookproof.simulator.delivery.history import HistoryFile

#: ``schema_version`` of a report saved apart from its findings (never report.json's own:
#: its next incompatible version takes the next number after this one).
APART_VERSION = 2
#: The meta key holding how many findings a report saved apart has in the ``findings`` table.
FINDINGS_COUNT_KEY = f"{REPORT_META_KEY}_findings"


def store_report(history: HistoryFile, report: RunReport) -> int:
    """Store `report` in `history` apart from its findings (committed at once; the rows of a
    report stored before are replaced): the document without them in the meta, each finding
    a row, written as the report's checks give them (no list of their texts). Returns how many
    findings were stored. Raises sqlite3.Error when the history cannot be written."""
    return history.set_report(REPORT_META_KEY, iter_json(without_findings(report), indent=None, ensure_ascii=True),
                              finding_rows(report))


def without_findings(report: RunReport) -> RunReport:
    """`report` with every check's findings left out and ``schema_version`` `APART_VERSION`
    (the rest shared, not copied)."""
    return replace(report, schema_version=APART_VERSION, scenarios=tuple(
        replace(s, checks=tuple(replace(c, findings=()) for c in s.checks)) for s in report.scenarios))


def finding_rows(report: RunReport) -> Iterator[tuple[int, int, str, str]]:
    """Each finding of `report` as a ``findings`` row: (its scenario's position, its check's
    position in the scenario, the check's id, the finding's JSON text: `finding_json`), in
    the report's order."""
    for s_pos, scenario in enumerate(report.scenarios):
        for c_pos, check in enumerate(scenario.checks):
            for finding in check.findings:
                yield s_pos, c_pos, check.check_id, finding_json(finding)


def saved_document(db: sqlite3.Connection) -> dict[str, Any] | None:
    """The report a history's database `db` keeps, as report.json's document (JSON values,
    ``schema_version`` `reports.model.SCHEMA_VERSION` for both forms, a saved-apart one's
    findings read back from its rows in order); None when it keeps no report. A document of
    another version is returned as it is (`reports.load_json` says which).

    Raises sqlite3.Error when `db` is not a history, ValueError when its report is not JSON
    or its findings' rows do not fit it (a row naming no check of the document, or not as
    many rows as the count stored with it).
    """
    row = db.execute("SELECT value FROM meta WHERE key = ?", (REPORT_META_KEY,)).fetchone()
    if row is None:
        return None
    document = json.loads(row[0])
    if not isinstance(document, dict) or document.get("schema_version") != APART_VERSION:
        return document if isinstance(document, dict) else None
    counted = db.execute("SELECT value FROM meta WHERE key = ?", (FINDINGS_COUNT_KEY,)).fetchone()
    expected = json.loads(counted[0]) if counted is not None else None
    read = 0
    try:
        scenarios = document["scenarios"]
        for s_pos, c_pos, text in db.execute("SELECT scenario_pos, check_pos, finding FROM findings ORDER BY idx"):
            scenarios[s_pos]["checks"][c_pos]["findings"].append(json.loads(text))
            read += 1
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ValueError(f"finding {read + 1} of the history's findings table names no check of its report "
                         f"({type(exc).__name__}: {exc})") from None
    if read != expected:
        raise ValueError(f"the history's findings table holds {read} finding(s), its report {expected}")
    document["schema_version"] = SCHEMA_VERSION
    return document


__all__ = ["APART_VERSION", "FINDINGS_COUNT_KEY", "finding_rows", "saved_document", "store_report",
           "without_findings"]
