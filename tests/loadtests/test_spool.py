"""The master's spool: records appended as they come, read back in send order and once each."""

from __future__ import annotations

from pathlib import Path

from hookproof.loadtests.records import attempt_to_wire, event_to_wire, make_attempt
from hookproof.loadtests.spool import Spool
from hookproof.simulator.delivery.history import HistoryFile
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import get_profile

STRIPE = get_profile("stripe")


def _event(i: int) -> Event:
    return Event(id=f"evt_{i}", type="invoice.paid", created=i, created_us=i, object_type="invoice",
                 object_id=f"in_{i}", version=1, object={}, business_key=f"renewal:in_{i}", amount=1500,
                 currency="usd")


def test_events_come_back_once_each_sharing_the_values_they_repeat(tmp_path: Path) -> None:
    events = [_event(i) for i in range(3)]
    attempts = [make_attempt(event=e, event_id=e.id, delivery_id=f"dlv_{e.id}_{c}", attempt=1, tags=(),
                             profile=STRIPE, sent_at=1000.0 + 3 - i + c / 10, latency_ms=5.0, status=200)
                for i, e in enumerate(events) for c in range(2)]
    spool = Spool(tmp_path / "history.sqlite")
    assert spool.add([attempt_to_wire(a) for a in attempts[:3]], [event_to_wire(e) for e in events]) == []
    assert spool.add([attempt_to_wire(a) for a in attempts[3:]], [event_to_wire(events[0])]) == []
    spool.finalize()
    read = list(spool.events())
    spool.close()
    assert [e.id for e in read] == ["evt_0", "evt_1", "evt_2"]
    assert [(e.business_key, e.amount, e.currency, e.type) for e in read] == [
        (e.business_key, e.amount, e.currency, e.type) for e in events]
    assert read[0].type is read[1].type is read[2].type and read[0].currency is read[2].currency
    with HistoryFile(tmp_path / "history.sqlite") as history:
        assert [a.sent_at for a in history] == sorted(a.sent_at for a in attempts)
        assert [a.index for a in history] == list(range(len(attempts)))


def test_a_malformed_event_record_is_skipped_with_the_error_a_decoded_event_raises(tmp_path: Path) -> None:
    """Whatever its shape (a dict short of a field, another mapping, no mapping at all),
    a bad event record is one problem naming the error `event_from_wire` raises on it;
    the good records of the chunk are kept."""
    from types import MappingProxyType

    from hookproof.loadtests.records import event_from_wire

    good = event_to_wire(_event(1))
    short = {k: v for k, v in event_to_wire(_event(2)).items() if k != "version"}
    bad: list[object] = [short, MappingProxyType(short), ["evt_3"], None]
    want = []
    for raw in bad:
        try:
            event_from_wire(raw)  # type: ignore[arg-type]
        except (KeyError, TypeError, ValueError) as exc:
            want.append(f"bad event record ({type(exc).__name__}: {exc})")
    spool = Spool(tmp_path / "history.sqlite")
    assert spool.add([], [good, *bad]) == want  # type: ignore[list-item]
    assert spool.add([], [MappingProxyType(event_to_wire(_event(4)))]) == []
    spool.finalize()
    assert [e.id for e in spool.events()] == ["evt_1", "evt_4"]
    spool.close()
    assert want[0] == "bad event record (KeyError: 'version')" and len(want) == 4


def test_events_staged_over_chunks_are_kept_once_each_the_first_received(tmp_path: Path) -> None:
    """Chunks stage their events without an index; finalizing keeps, per id, the first
    one received (a later record of the same id with other values does not replace it),
    and leaves the history with no staging table."""
    import sqlite3

    first = event_to_wire(_event(2))
    later = {**first, "amount": 9999}
    spool = Spool(tmp_path / "history.sqlite")
    assert spool.add([], [event_to_wire(_event(3)), first]) == []
    assert spool.add([], [later, event_to_wire(_event(1))]) == []
    assert spool.add([], [event_to_wire(_event(3))]) == []
    before = [(e.id, e.amount) for e in spool.events()]  # read while the storm still spools
    assert spool.add([], [{**event_to_wire(_event(1)), "amount": 7}, event_to_wire(_event(4))]) == []
    spool.finalize()
    after = [(e.id, e.amount) for e in spool.events()]
    spool.close()
    assert before == [("evt_1", 1500), ("evt_2", 1500), ("evt_3", 1500)]
    assert after == [("evt_1", 1500), ("evt_2", 1500), ("evt_3", 1500), ("evt_4", 1500)]
    with sqlite3.connect(tmp_path / "history.sqlite") as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert (db.execute("SELECT count(*) FROM storm_events").fetchone()[0]) == 4
    assert not {"storm_incoming", "storm_events_incoming"} & tables and "storm_events" in tables
