"""The history: attempts kept as given, and on disk written in batches that are never
lost (flushed when the history is read, with fault operations, on flush and close)."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Iterable

import pytest

from hookproof.simulator.delivery import Attempt, Completion, FaultOp, History, Outcome, load_history


def attempt(n: int, **changes: object) -> Attempt:
    base = Attempt(
        event_id=f"evt_{n}", delivery_id=f"dlv_{n}", attempt=1, business_key=f"k{n}", object_id="pi_1",
        object_version=n, event_type="payment_intent.succeeded", faults=("copies=2",), valid=True, sent_at=100.0 + n,
        answered_at=100.5 + n, status=200, outcome=Outcome.ACKED, completion=Completion.OK, latency_ms=500.0,
        response_excerpt="ok", amount=1000, scenario="s",
    )
    return replace(base, **changes) if changes else base


def rows_on_disk(path: Path) -> int:
    """Attempt rows another reader of the file sees (committed ones)."""
    with sqlite3.connect(path) as other:
        return int(other.execute("SELECT COUNT(*) FROM attempts").fetchone()[0])


@pytest.fixture
def lazy_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> History:
    """A history on disk that never writes on its own (batch and interval out of reach)."""
    monkeypatch.setattr(History, "COMMIT_EVERY", 10**9)
    monkeypatch.setattr(History, "COMMIT_INTERVAL_S", 10**9)
    history = History(tmp_path / "history.sqlite")
    yield history
    history.close()


def test_an_attempt_built_with_its_index_is_kept_as_is_and_any_other_is_copied() -> None:
    history = History()
    first = attempt(0, index=0)
    assert history.record(first) is first
    stored = history.record(attempt(1, index=7))
    assert stored.index == 1 and stored == attempt(1, index=1)
    again = history.record(first)  # the same value recorded twice: a copy at the new position
    assert again.index == 2 and first.index == 0
    assert [a.index for a in history] == [0, 1, 2]


def test_pending_rows_reach_the_file_when_the_history_is_read(lazy_history: History) -> None:
    path = lazy_history.path
    assert path is not None
    for n in range(5):
        lazy_history.record(attempt(n))
    assert rows_on_disk(path) == 0
    assert len(lazy_history.attempts()) == 5
    assert rows_on_disk(path) == 5
    lazy_history.record(attempt(5))
    lazy_history.ops()
    assert rows_on_disk(path) == 6


def test_flush_and_fault_operations_write_pending_rows(lazy_history: History) -> None:
    path = lazy_history.path
    assert path is not None
    lazy_history.record(attempt(0))
    lazy_history.flush()
    assert rows_on_disk(path) == 1
    lazy_history.record(attempt(1))
    lazy_history.record_op(FaultOp(op="kill", target="receiver", at=101.0))
    assert rows_on_disk(path) == 2
    lazy_history.record(attempt(2))
    lazy_history.set_meta("profile", "stripe")
    assert rows_on_disk(path) == 3


def test_close_writes_every_row_and_the_file_reads_back_the_same(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(History, "COMMIT_EVERY", 7)  # several batches and a partial last one
    path = tmp_path / "history.sqlite"
    history = History(path)
    recorded = [history.record(attempt(n, faults=() if n % 2 else ("drop-response", "burst=8"), status=None,
                                       outcome=Outcome.TIMEOUT, completion=Completion.UNKNOWN, error="timed out"))
                for n in range(30)]
    history.close()
    assert rows_on_disk(path) == 30
    reread = load_history(path)
    try:
        assert reread.attempts() == recorded
    finally:
        reread.close()


def test_rows_are_written_in_batches_of_commit_every(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(History, "COMMIT_EVERY", 4)
    monkeypatch.setattr(History, "COMMIT_INTERVAL_S", 10**9)
    path = tmp_path / "history.sqlite"
    history = History(path)
    try:
        for n in range(3):
            history.record(attempt(n))
        assert rows_on_disk(path) == 0
        history.record(attempt(3))
        assert rows_on_disk(path) == 4
    finally:
        history.close()


def test_a_reopened_file_continues_where_it_stopped(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    with History(path) as history:
        history.record(attempt(0))
    with History(path) as history:
        assert history.record(attempt(1)).index == 1
    reread = load_history(path)
    try:
        assert [a.event_id for a in reread] == ["evt_0", "evt_1"]
    finally:
        reread.close()


class FailingWrites:
    """The history's connection, except that its next `failures` batches write their
    first row and then fail, as a full disk would part-way through."""

    def __init__(self, db: sqlite3.Connection, failures: int) -> None:
        self._db = db
        self.failures = failures
        self.closed = False

    def executemany(self, sql: str, rows: Iterable[tuple[object, ...]]) -> sqlite3.Cursor:
        if self.failures:
            self.failures -= 1
            self._db.execute(sql, next(iter(rows)))
            raise sqlite3.OperationalError("database or disk is full")
        return self._db.executemany(sql, rows)

    def close(self) -> None:
        self.closed = True
        self._db.close()

    def __getattr__(self, name: str) -> object:
        return getattr(self._db, name)


def test_a_batch_failing_part_way_is_rolled_back_and_written_whole_by_the_next_commit(
        lazy_history: History, monkeypatch: pytest.MonkeyPatch) -> None:
    path = lazy_history.path
    assert path is not None
    monkeypatch.setattr(lazy_history, "_db", FailingWrites(lazy_history._db, failures=2))  # type: ignore[arg-type]
    recorded = [lazy_history.record(attempt(n)) for n in range(3)]
    with pytest.raises(sqlite3.OperationalError):
        lazy_history.flush()
    assert rows_on_disk(path) == 0  # the first row, written before the failure, was rolled back
    with pytest.raises(sqlite3.OperationalError):
        lazy_history.record_op(FaultOp(op="kill", target="receiver", at=101.0))
    lazy_history.set_meta("seed", 7)  # the disk has room again: everything pending is written once
    assert rows_on_disk(path) == 3
    lazy_history.close()
    reread = load_history(path)
    try:
        assert reread.attempts() == recorded
        assert reread.ops() == [FaultOp(op="kill", target="receiver", at=101.0)]
        assert reread.meta() == {"seed": 7}
    finally:
        reread.close()


def test_close_releases_the_file_even_when_the_last_commit_fails(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    history = History(tmp_path / "history.sqlite")
    failing = FailingWrites(history._db, failures=1)  # type: ignore[arg-type]
    monkeypatch.setattr(history, "_db", failing)
    history.record(attempt(0))
    with pytest.raises(sqlite3.OperationalError):
        history.close()
    assert failing.closed
    history.close()  # already closed: nothing more to do


def test_an_error_quoting_undecodable_bytes_is_stored_with_stand_ins(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    with History(path) as history:
        history.record(attempt(0, error="the answer was not valid HTTP (Bad status line 'HTTP/1.1 2\udcff0')"))
        history.record(attempt(1, error="no answer within 5 s – sender timeout"))
    reread = load_history(path)
    try:
        assert [a.error for a in reread] == ["the answer was not valid HTTP (Bad status line 'HTTP/1.1 2?0')",
                                             "no answer within 5 s – sender timeout"]
    finally:
        reread.close()


def test_a_history_file_streams_its_attempts_in_order_and_reads_any_one_back(tmp_path: Path) -> None:
    from hookproof.simulator.delivery.history import STREAM_ROWS, HistoryFile

    path = tmp_path / "history.sqlite"
    with History(path) as history:
        written = [history.record(attempt(n, faults=("forged",) if n % 3 else ())) for n in range(STREAM_ROWS + 5)]
        history.set_meta("seed", 7)
    with HistoryFile(path) as streamed:
        assert len(streamed) == len(written)
        assert list(streamed) == written  # more rows than one fetch: the cursor goes on
        assert streamed[0] == written[0] and streamed[-1] == written[-1]
        assert streamed[3:6] == written[3:6] and streamed[-2:] == written[-2:] and streamed[::2000] == written[::2000]
        with pytest.raises(IndexError, match=f"attempt {len(written)} out of range"):
            streamed[len(written)]
        streamed.set_meta("finished", True)
        streamed.set_meta_json("report", ['{"verdict": ', '"pass"}'])  # JSON text in pieces: no values built
        assert streamed._db.execute("SELECT typeof(value), value FROM meta WHERE key = 'report'").fetchall() == [
            ("text", '{"verdict": "pass"}')]  # as every meta value: json_extract reads it
        assert streamed.meta() == {"seed": 7, "finished": True, "report": {"verdict": "pass"}}
    reread = load_history(path)
    try:
        assert reread.attempts() == written
        assert reread.meta() == {"seed": 7, "finished": True, "report": {"verdict": "pass"}}
    finally:
        reread.close()
    with pytest.raises(FileNotFoundError, match="no history file at"):
        HistoryFile(tmp_path / "absent.sqlite")


def test_a_report_s_findings_are_rows_of_their_own_replaced_whole_with_the_report(tmp_path: Path) -> None:
    from hookproof.simulator.delivery.history import HistoryFile

    path = tmp_path / "history.sqlite"
    with History(path) as history:
        history.record(attempt(0))
    rows = [(0, 1, "lost", '{"key": "renewal:in_1"}'), (0, 1, "lost", '{"key": "renewal:in_2"}'),
            (1, 0, "counter", '{"key": "renewal:in_1"}')]
    with HistoryFile(path) as saved:
        assert saved.set_report("report", ['{"verdict": ', '"fail"}'], iter(rows)) == 3  # rows as they come
        db = saved._db
        assert db.execute("SELECT scenario_pos, check_pos, check_id, finding FROM findings ORDER BY idx").fetchall() \
            == rows
        assert db.execute("SELECT json_extract(finding, '$.key') FROM findings WHERE check_id = 'lost'"
                          " ORDER BY idx").fetchall() == [("renewal:in_1",), ("renewal:in_2",)]
        assert db.execute("SELECT typeof(value), json_extract(value, '$.verdict') FROM meta WHERE key = 'report'"
                          ).fetchall() == [("text", "fail")]
        assert saved.meta() == {"report": {"verdict": "fail"}, "report_findings": 3}
        # stored again (a report linked to the receiver's log): the rows of the first are gone
        assert saved.set_report("report", ['{"verdict": "pass"}'], [(0, 0, "lost", "{}")]) == 1
        assert db.execute("SELECT scenario_pos, check_pos, check_id, finding FROM findings").fetchall() == [
            (0, 0, "lost", "{}")]
        assert saved.meta() == {"report": {"verdict": "pass"}, "report_findings": 1}


def test_a_history_written_before_the_findings_table_gets_it_when_a_report_is_stored(tmp_path: Path) -> None:
    from hookproof.simulator.delivery.history import HistoryFile

    path = tmp_path / "history.sqlite"
    with History(path) as history:
        history.record(attempt(0))
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE findings")
    with HistoryFile(path) as saved:
        assert saved.set_report("report", ["{}"], []) == 0
        assert saved._db.execute("SELECT count(*) FROM findings").fetchone() == (0,)
        assert saved.meta() == {"report": {}, "report_findings": 0}
