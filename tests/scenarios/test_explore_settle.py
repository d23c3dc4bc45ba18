"""Explore's teardown settle on an in-process app (issue 19).

An app that is quiet before the first read (every request answered, nothing left on the
search's loop, no thread but anyio's idle workers) cannot change what that read shows: when
it shows every acked effect and final state, it is final, and the 5 ms quick window is not
waited for. Anything still running (the app's own thread, a task it left on the loop) keeps
the window, and an effect landing in it is seen, as before.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import anyio.to_thread
import pytest

from examples.receivers.pool import ReceiverPool
from hookproof.receivers import ReceiverConfig, Reply, WebhookEvent, make_app, receiver_of
from hookproof.receivers.inbox_sync import InboxSync
from hookproof.scenarios import search_loop as search_loop_module
from hookproof.scenarios import session as session_module
from hookproof.scenarios.observations import Observation
from hookproof.scenarios.observers import observation_from_data
from hookproof.scenarios.search_loop import SearchLoop
from hookproof.scenarios.statemachine import ExploreTarget, Prepared, Step, replay
from hookproof.simulator.delivery import Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server.state import ServerState

SECRET = "whsec_explore_settle_0123456789"
SEED = 5
#: A payment (#0 customer.created, #1 payment_intent.succeeded, #2 charge.succeeded), each
#: delivered once: the settle's first read shows every effect.
PAID = [Step("emit", action="pay"), *(Step("deliver", event=i) for i in range(3))]
#: Seconds a late effect waits for its cue at most (the tests never get near it).
CUE_WAIT_S = 10.0


@pytest.fixture(autouse=True)
def _only_threads_of_this_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """`SearchLoop.quiet` counts every thread it does not know as a reason to wait, rightly;
    in a whole suite, other tests leave threads behind (servers' pools, idle executors), so
    these tests judge it on the threads started while they run (which is what a search sees
    in its own process)."""
    before = set(threading.enumerate()) - {threading.current_thread()}
    real = threading.enumerate
    view = type("ThreadsOfThisTest", (), {
        "current_thread": staticmethod(threading.current_thread),
        "enumerate": staticmethod(lambda: [t for t in real() if t not in before]),
    })
    monkeypatch.setattr(search_loop_module, "threading", view)


class _Reads:
    """An observer counting its reads; from read `cue_after` on, it sets `cue` after reading
    and, before each later read, waits for `landed` (the late effect lands inside the quick
    window, however slow the machine)."""

    def __init__(self, read: Callable[[], Observation], cue_after: int | None = None) -> None:
        self.read, self.cue_after = read, cue_after
        self.count = 0
        self.cue, self.landed = threading.Event(), threading.Event()

    def __call__(self) -> Observation:
        self.count += 1
        if self.cue_after is not None and self.count > self.cue_after:
            self.landed.wait(CUE_WAIT_S)
        obs = self.read()
        if self.cue_after is not None and self.count == self.cue_after:
            self.cue.set()
        return obs


def _late_target(tmp_path: Path, late: str) -> tuple[ExploreTarget, _Reads, list[Any]]:
    """inbox_sync whose effects are applied a second time after it answered, once the
    settle's first read is done: from a thread of its own (`late="thread"`) or from a task it
    leaves on the loop that hands the write to anyio's worker thread (`late="task"`)."""
    receivers: list[Any] = []
    reads_box: list[_Reads] = []

    class LateDuplicate(InboxSync):
        name = "late_duplicate"

        def process(self, event: WebhookEvent) -> Reply:
            reply = super().process(event)
            effect = self.effect_of(event)
            if effect is not None and reply.body.get("received"):
                reads = reads_box[0]

                def again() -> None:
                    reads.cue.wait(CUE_WAIT_S)
                    with self.store.transaction() as conn:
                        self.store.apply_effect(conn, effect, event.id)
                    reads.landed.set()

                if late == "thread":
                    threading.Thread(target=again, daemon=True).start()
                else:
                    self.pending_late = again
            return reply

    config = ReceiverConfig(db_url=f"sqlite:///{tmp_path / 'late.db'}", secrets=(SECRET,))
    receiver = LateDuplicate(config)
    receiver.pending_late = None  # type: ignore[attr-defined]
    inner = make_app(receiver)
    receivers.append(receiver)
    tasks: list[asyncio.Task[Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await inner(scope, receive, send)
        late_call = receiver.pending_late  # type: ignore[attr-defined]
        if late_call is not None:
            receiver.pending_late = None  # type: ignore[attr-defined]
            tasks.append(asyncio.get_running_loop().create_task(anyio.to_thread.run_sync(late_call)))

    reads = _Reads(lambda: observation_from_data(receiver_of(inner).observe(), time.time(), observer="python"),
                   cue_after=2)  # read 1: the safety check after the last delivery; read 2: the settle's first
    reads_box.append(reads)
    prepared = Prepared(Target(app=app), reads)
    target = ExploreTarget(profile=get_profile("stripe"), secrets=(SECRET,), open=lambda: prepared,
                           describe="in-process late_duplicate")
    return target, reads, receivers


@pytest.mark.parametrize("late", ["thread", "task"])
def test_an_effect_landing_after_the_settle_s_first_read_is_still_seen(late: str, tmp_path: Path) -> None:
    target, reads, receivers = _late_target(tmp_path, late)
    steps = [Step("emit", action="pay"), Step("deliver", event=1)]
    try:
        found = replay(target, steps, SEED, provider_state=ServerState())
    finally:
        for r in receivers:
            r.close()
    assert found is not None and found.phase == "teardown"
    assert {f.check_id for f in found.findings} == {"duplicated"}
    assert reads.count >= 3  # the quick window was waited for: the duplicate landed in it


def test_a_quiet_app_showing_everything_is_settled_by_its_first_read(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    provider = ServerState()
    receivers = ReceiverPool("inbox_sync", tmp_path, secrets=(SECRET,), provider_state=provider)
    pooled = receivers.target()
    counters: list[_Reads] = []

    def open_() -> Prepared:
        prepared = pooled.open()
        counters.append(_Reads(prepared.observe))
        return Prepared(prepared.target, counters[-1], prepared.close)

    settles: list[object] = []
    monkeypatch.setattr(session_module, "settle", lambda *a, **k: settles.append(k))
    try:
        found = replay(replace(pooled, open=open_), PAID, SEED, provider_state=provider)
    finally:
        receivers.close()
    assert found is None
    assert [r.count for r in counters] == [4]  # a safety read after each delivery, one settle read
    assert settles == []  # no wait for a quiet window


def test_the_search_loop_is_quiet_only_with_nothing_running() -> None:
    loop = SearchLoop()
    try:
        assert loop.quiet()
        loop.run(anyio.to_thread.run_sync(lambda: None))  # anyio's worker, idle again
        assert loop.quiet()
        stray = loop.loop.create_task(asyncio.sleep(3600))
        loop.run(asyncio.sleep(0))
        assert not loop.quiet()
        loop.settle_strays()
        assert stray.cancelled() and loop.quiet()
        handle = loop.loop.call_later(3600, lambda: None)
        assert not loop.quiet()
        handle.cancel()
        assert loop.quiet()
        release = threading.Event()
        other = threading.Thread(target=release.wait, args=(CUE_WAIT_S,))
        other.start()
        try:
            assert not loop.quiet()  # a thread hookproof does not know may still change the app
        finally:
            release.set()
            other.join(CUE_WAIT_S)
        assert loop.quiet()
        release.clear()
        deadline = threading.Thread(target=release.wait, args=(CUE_WAIT_S,), name="hookproof-deadline")
        deadline.start()
        try:
            assert loop.quiet()  # the run's own deadline thread never touches the app
        finally:
            release.set()
            deadline.join(CUE_WAIT_S)
    finally:
        loop.close()


@pytest.mark.parametrize(("name", "findings"), [("ack_before_persist", set()), ("mark_before_effect", {"lost", "no_server_error"})])
def test_a_worker_applying_after_the_window_is_waited_for_and_a_loss_still_found(
        name: str, findings: set[str], tmp_path: Path) -> None:
    """ack_before_persist answers 200 and applies each event 0.2 s later in its worker, four
    times explore's 0.05 s settle window: the teardown reads on until every acked effect shows
    (no `lost`). mark_before_effect loses its effect for good: the reads wait the deadline,
    then `lost` is found, and the search remembers it (`fell_short`)."""
    provider = ServerState()
    receivers = ReceiverPool(name, tmp_path, secrets=(SECRET,), provider_state=provider,
                             options={"apply_delay_s": 0.2})
    target = receivers.target(settle_window_s=0.05, settle_deadline_s=3.0)  # not the pool's 0.5 s for it
    steps = [Step("emit", action="pay"), Step("deliver", event=1), Step("deliver", event=1)]
    try:
        found = replay(target, steps, SEED, provider_state=provider)
    finally:
        receivers.close()
    assert (set() if found is None else {f.check_id for f in found.findings}) == findings, found
    assert target.fell_short == bool(findings)
