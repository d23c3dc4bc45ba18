"""A sender's copiers: a group's sends delivered at once, the sender's first, copiers kept."""

from __future__ import annotations

from typing import Callable

import gevent
import gevent.pool
import pytest

from hookproof.loadtests.copiers import Copier, Pending, release


def _recorder(log: list[str], *, fail: str | None = None) -> Callable[[str], None]:
    def deliver(send: str) -> None:
        log.append(f"start {send}")
        gevent.sleep(0.01)  # a blocking exchange: the others run meanwhile
        if send == fail:
            raise RuntimeError(f"deliver {send}")
        log.append(f"end {send}")
    return deliver


def test_a_group_is_delivered_at_once_the_sender_s_first_and_copiers_are_kept() -> None:
    pool = gevent.pool.Group()
    log: list[str] = []
    copiers: list[Copier[str]] = []

    def sender() -> None:
        release(("a1", "a2", "a3", "a4"), _recorder(log), copiers, pool)
        log.append("group a done")
        release(("b1", "b2"), _recorder(log), copiers, pool)
        log.append("group b done")
        release(("c1",), _recorder(log), copiers, pool)
        release((), _recorder(log), copiers, pool)

    gevent.spawn(sender).join(timeout=5)
    # every send of a group starts before any ends (they overlap), the sender's own first,
    # and the next group starts only when every send of the last one is done
    assert log[:4] == ["start a1", "start a2", "start a3", "start a4"]
    assert sorted(log[4:8]) == ["end a1", "end a2", "end a3", "end a4"] and log[8] == "group a done"
    assert log[9:11] == ["start b1", "start b2"] and log[13] == "group b done"
    assert log[14:] == ["start c1", "end c1"]
    assert len(copiers) == 3  # three copiers for group a, two of them reused for group b
    kept = [c.greenlet for c in copiers]
    for copier in copiers:
        copier.stop()
    pool.join(timeout=5)
    assert all(g.dead for g in kept) and len(pool) == 0


def test_a_copier_whose_delivery_raises_is_replaced_and_its_send_counted_done() -> None:
    pool = gevent.pool.Group()
    log: list[str] = []
    copiers: list[Copier[str]] = []
    hub = gevent.get_hub()
    hub.NOT_ERROR = (*hub.NOT_ERROR, RuntimeError)  # the expected error: not printed by the hub
    try:
        def sender() -> None:
            release(("a1", "a2", "a3"), _recorder(log, fail="a2"), copiers, pool)
            first = copiers[0]
            assert first.dead
            release(("b1", "b2"), _recorder(log), copiers, pool)
            assert copiers[0] is not first and not copiers[0].dead

        done = gevent.spawn(sender)
        done.join(timeout=5)
        assert done.successful(), done.exception
    finally:
        hub.NOT_ERROR = tuple(e for e in hub.NOT_ERROR if e is not RuntimeError)
    assert "end a2" not in log and {"end a1", "end a3", "end b1", "end b2"} <= set(log)
    for copier in copiers:
        copier.stop()
    pool.join(timeout=5)


def test_pending_waits_for_every_send() -> None:
    pending = Pending(2)
    waited: list[bool] = []
    waiter = gevent.spawn(lambda: waited.append(bool(pending.wait() is None)))
    gevent.sleep(0)
    pending.one_done()
    gevent.sleep(0)
    assert not waited
    pending.one_done()
    waiter.join(timeout=1)
    assert waited == [True]
    Pending(0).wait()  # nothing pending: returns at once


@pytest.mark.parametrize("sends", [("x",), ("x", "y")])
def test_sequential_delivery_is_not_a_release(sends: tuple[str, ...]) -> None:
    """The overlap test above fails for a sender delivering its group one send after the
    other (what a broken release would do)."""
    log: list[str] = []
    deliver = _recorder(log)
    gevent.spawn(lambda: [deliver(s) for s in sends]).join(timeout=5)
    overlapped = all(log.index(f"start {s}") < min(log.index(f"end {t}") for t in sends) for s in sends)
    assert overlapped == (len(sends) == 1)
