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

`saved_document` reads either form back as report.json's document. A storm's end writes the
findings as their views are made (`FindingsKeeper`) and its report holds them as those rows
(`StoredFindings`), read back one at a time as the renderers reach them.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, overload

from hookproof.reports.json_report import finding_json, finding_of, iter_json
from hookproof.reports.model import SCHEMA_VERSION, FindingView, RunReport
from hookproof.scenarios.findings import EqualAsSequence
from hookproof.scenarios.report_views import REPORT_META_KEY
from hookproof.simulator.delivery.history import STREAM_ROWS, HistoryFile

#: ``schema_version`` of a report saved apart from its findings (never report.json's own:
#: its next incompatible version takes the next number after this one).
APART_VERSION = 2
#: The meta key holding how many findings a report saved apart has in the ``findings`` table.
FINDINGS_COUNT_KEY = f"{REPORT_META_KEY}_findings"


def store_report(history: HistoryFile, report: RunReport) -> int:
    """Store `report` in `history` apart from its findings (committed at once; the rows of a
    report stored before are replaced): the document without them in the meta, each finding
    a row, written as the report's checks give them (no list of their texts); findings that
    already are `history`'s rows in their places (`FindingsKeeper`: a storm's end) are kept
    as they are. Returns how many findings were stored. Raises sqlite3.Error when the history
    cannot be written."""
    document = iter_json(without_findings(report), indent=None, ensure_ascii=True)
    if _stored_in(history, report):
        return history.set_report(REPORT_META_KEY, document, None)
    return history.set_report(REPORT_META_KEY, document, finding_rows(report))


def _stored_in(history: HistoryFile, report: RunReport) -> bool:
    """Whether every finding of `report` is a row of `history`, in its place and order, and no
    other row is there: each check's findings `StoredFindings` of `history`'s file at the
    check's own positions, one after the other."""
    following = 1
    for s_pos, scenario in enumerate(report.scenarios):
        for c_pos, check in enumerate(scenario.checks):
            rows = check.findings
            if not rows:
                continue
            if not (isinstance(rows, StoredFindings) and rows.path == history.path
                    and (rows.scenario_pos, rows.check_pos, rows.first) == (s_pos, c_pos, following)):
                return False
            following += len(rows)
    return history.findings_stored() == following - 1


class StoredFindings(EqualAsSequence, Sequence[FindingView]):
    """One check's findings as rows of a history's ``findings`` table (``idx`` `first` …
    `first` + `count` - 1, in order), each read back as its view when reached (`finding_of`):
    a storm's end holds a count and a place, not hundreds of thousands of views. Each pass
    opens the file for reading (readable while the history is there and its rows are these:
    a later report stored in it with other findings replaces them); equal to any sequence of
    the same views. `immutable`: each pass opens the file read-only as immutable (SQLite then
    takes it to be unchanging and leaves no ``-wal`` or ``-shm`` beside it: a history no
    writer holds open, `hookproof report`'s). Raises sqlite3.Error when the file cannot be read."""

    def __init__(self, path: Path, scenario_pos: int, check_pos: int, first: int, count: int, *,
                 immutable: bool = False) -> None:
        self.path, self.scenario_pos, self.check_pos = path, scenario_pos, check_pos
        self.first, self._count, self.immutable = first, count, immutable

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> FindingView: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[FindingView, ...]: ...

    def __getitem__(self, i: int | slice) -> FindingView | tuple[FindingView, ...]:
        if isinstance(i, slice):
            start, stop, step = i.indices(self._count)
            if step == 1:
                return tuple(self._read(start, stop))
            return tuple(self[j] for j in range(start, stop, step))
        j = i + self._count if i < 0 else i
        if not 0 <= j < self._count:
            raise IndexError(f"finding {i} out of range (the check has {self._count})")
        return next(self._read(j, j + 1))

    def __iter__(self) -> Iterator[FindingView]:
        return self._read(0, self._count)

    def _read(self, start: int, stop: int) -> Iterator[FindingView]:
        """The views of the rows `start` … `stop` - 1 of this check, a fetch at a time."""
        if start >= stop:
            return
        db = _immutable(self.path) if self.immutable else sqlite3.connect(str(self.path))
        try:
            cur = db.execute("SELECT finding FROM findings WHERE idx >= ? AND idx < ? ORDER BY idx",
                             (self.first + start, self.first + stop))
            while rows := cur.fetchmany(STREAM_ROWS):
                for (text,) in rows:
                    yield finding_of(text)
        finally:
            db.close()

    def __repr__(self) -> str:
        return f"StoredFindings({self._count} findings of {self.path.name})"


class FindingsKeeper:
    """Writes a report's findings into `history`'s ``findings`` table as their views are made
    (`report_views.take_check_view`'s ``keep``), and holds each check's as `StoredFindings`:
    a storm's end keeps no view of its hundreds of thousands of findings. The table is
    emptied when the keeper is made; `store_report` then stores the report around the rows."""

    def __init__(self, history: HistoryFile, scenario_pos: int = 0) -> None:
        self._history = history
        self._scenario_pos = scenario_pos
        self._check_pos = 0
        history.clear_findings()

    def keep(self, check_id: str) -> "Callable[[Iterator[FindingView]], Sequence[FindingView]]":
        """What `take_check_view` calls with the views of the next check (`check_id`) of the
        scenario: they are written as they come, and their rows returned."""
        s_pos, c_pos = self._scenario_pos, self._check_pos
        self._check_pos += 1

        def write(views: Iterator[FindingView]) -> Sequence[FindingView]:
            first, count = self._history.add_findings((s_pos, c_pos, check_id, finding_json(v)) for v in views)
            return StoredFindings(self._history.path, s_pos, c_pos, first, count) if count else ()
        return write


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


def stored_report(path: Path, *, immutable: bool = False) -> RunReport | None:
    """The report the history file at `path` keeps, as a `RunReport` whose findings stay rows:
    each check's a `StoredFindings` over its rows (a saved-apart report; an inline one is read
    whole, `load_json`), so a storm's command adds its notes to a failing million-attempt storm's
    report and writes it again, and `hookproof report` re-renders it, without holding its
    findings. `immutable`: the file is read as immutable, here and by its `StoredFindings` (a
    history no writer holds open: no ``-wal`` or ``-shm`` left beside it). None when it keeps no
    report. Raises sqlite3.Error when the file is not a history, the `reports` errors when the
    report does not read (`load_json`), ValueError when its rows do not fit it."""
    from hookproof.reports import load_json

    db = _immutable(path) if immutable else sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (REPORT_META_KEY,)).fetchone()
        if row is None:
            return None
        document = json.loads(row[0])
        if not isinstance(document, dict) or document.get("schema_version") != APART_VERSION:
            return load_json(row[0])
        counted = db.execute("SELECT value FROM meta WHERE key = ?", (FINDINGS_COUNT_KEY,)).fetchone()
        places = db.execute("SELECT scenario_pos, check_pos, MIN(idx), COUNT(*) FROM findings "
                            "GROUP BY scenario_pos, check_pos").fetchall()
    finally:
        db.close()
    document["schema_version"] = SCHEMA_VERSION
    report = load_json(json.dumps(document))
    if sum(n for *_, n in places) != (json.loads(counted[0]) if counted is not None else None):
        raise ValueError(f"the history's findings table does not hold the {counted and counted[0]} finding(s) "
                         "its report counts")
    rows = {(s_pos, c_pos): (first, n) for s_pos, c_pos, first, n in places}
    scenarios = []
    for s_pos, scenario in enumerate(report.scenarios):
        checks = tuple(replace(c, findings=StoredFindings(path, s_pos, c_pos, *rows.pop((s_pos, c_pos)),
                                                          immutable=immutable))
                       if (s_pos, c_pos) in rows else c for c_pos, c in enumerate(scenario.checks))
        scenarios.append(replace(scenario, checks=checks))
    if rows:
        raise ValueError(f"the history's findings table names {len(rows)} check(s) its report does not have")
    return replace(report, scenarios=tuple(scenarios))


def _immutable(path: Path) -> sqlite3.Connection:
    """A read-only connection to the SQLite file at `path`, opened as immutable."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)


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


__all__ = ["APART_VERSION", "FINDINGS_COUNT_KEY", "FindingsKeeper", "StoredFindings", "finding_rows",
           "saved_document", "store_report", "stored_report", "without_findings"]
