"""What one Locust process of a storm knows: its spec, profile, secrets, users' records.

One `StormProcess` per process (`STATE`), shared by the user (`storm_user`), the worker's
flush (`storm_worker`) and the master's control (`storm_master`); gevent: no locks.
Imported only in Locust's processes (it imports gevent).
"""

from __future__ import annotations

import gc
import logging
import math
import time
from collections import deque
from typing import Any, Mapping

import gevent
import gevent.event
import gevent.pool

from hookproof.loadtests.collect import Collector
from hookproof.loadtests.cut import CutDelivery
from hookproof.loadtests.exchange import ObservedAtoms, observed
from hookproof.loadtests.plan import Send
from hookproof.loadtests.records import STORM_SCENARIO, event_to_wire, make_attempt
from hookproof.loadtests.spec import SpecError, StormSpec, secrets_from_env, secrets_from_text
from hookproof.loadtests.stories import STORIES, StoryBook, process_seed, storm_sends, template_world
from hookproof.simulator.delivery.attempt_core import grade
from hookproof.simulator.delivery.history import Attempt
from hookproof.simulator.profiles.base import Profile
from hookproof.simulator.secret_forms import Masker

log = logging.getLogger("hookproof.storm")

#: Copy-number stride between the users of one process (users per process at most).
USER_STRIDE = 1 << 16
#: Allocations between two young-generation collections in a sender (CPython's default: 700).
GC_YOUNG_THRESHOLD = 20_000
#: Distinct observations whose grade `StormProcess.row` keeps (a storm meets a handful).
GRADES_KEPT = 1024

#: What a user keeps of one finished attempt, as a plain tuple of atoms (so the garbage
#: collector untracks it: a storm keeps hundreds of thousands): world event id, delivery
#: id, tags, attempt number, envelope event id, sent at (unix s), latency (ms), and what
#: the exchange observed (`loadtests.exchange.ObservedAtoms`). `StormProcess.row` builds
#: the history row, graded by the attempt core.
_Sent = tuple[str, str, tuple[str, ...], int, str, float, float, ObservedAtoms]


#: A loop late by this many seconds or more is noted as an interval (`SenderLoad.lagged`).
LAG_NOTED_S = 0.01
#: Late intervals kept (the newest; an attempt looks back over its own time only).
STALLS_KEPT = 4096
#: Seconds of an on-time loop between two late intervals that break a run of lag (a
#: probe's period, `storm_worker.LAG_PROBE_S`, and a margin).
GAP_S = 0.075


class SenderLoad:
    """How well one process's senders kept up, and the share of each attempt's time that
    was theirs.

    The longest an attempt waited for its connection before its request went on the wire
    (`waited`); when the process's loop was late (`lagged`: a probe's sleep overshooting,
    kept as intervals for `lag_within`, and `probing`: when it should wake next); and the attempts written whole that got no
    answer within the sender timeout, told apart by whose time ran out (`timed_out`:
    less than half of it was the loop's lag; `timed_out_lagged`: more). `report` is what
    a worker sends the master (``hookproof_done``'s ``sender``)."""

    __slots__ = ("attempts", "lag_max_s", "probe_due", "stalls", "timed_out", "timed_out_lagged", "wait_max_s")

    def __init__(self) -> None:
        self.attempts = 0
        self.wait_max_s = 0.0
        self.lag_max_s = 0.0
        self.timed_out = 0
        self.timed_out_lagged = 0
        # (when the loop should have woken the probe, when it did), perf_counter seconds, in time order
        self.stalls: deque[tuple[float, float]] = deque(maxlen=STALLS_KEPT)
        self.probe_due = math.inf  # when the probe should wake next (perf_counter s)

    def waited(self, seconds: float) -> None:
        """Note an attempt's wait before its request went on the wire (its connection)."""
        self.attempts += 1
        if seconds > self.wait_max_s:
            self.wait_max_s = seconds

    def lagged(self, due: float, woke: float) -> None:
        """Note that the loop woke a greenlet due at `due` only at `woke` (perf_counter s)."""
        lag = woke - due
        if lag > self.lag_max_s:
            self.lag_max_s = lag
        if lag >= LAG_NOTED_S:
            self.stalls.append((due, woke))

    def probing(self, due: float) -> None:
        """Note that the probe sleeps until `due` (perf_counter s): past it, the loop is late."""
        self.probe_due = due

    def lag_within(self, start: float, end: float) -> float:
        """Seconds of [start, end] in which an answer that came may have waited for the
        sender to read it: the loop's late intervals (`lagged`, and the one still going on
        when the probe is overdue) that run up to `end` without a break. A break of more
        than a probe's period in which the loop was on time ends the count: an answer that
        had come before it would have been read then, so the time before it was the
        receiver's."""
        total = 0.0
        reach = end
        gap = GAP_S
        if end - self.probe_due >= LAG_NOTED_S:  # late now: the probe has not woken yet
            total += end - max(self.probe_due, start)
            reach = self.probe_due
        for due, woke in reversed(self.stalls):
            if due >= reach:  # after the attempt (it is read later than the probe that noted this)
                continue
            if woke <= start or woke < reach - gap:
                break
            total += max(0.0, min(woke, reach) - max(due, start))
            reach = due
        return total

    def report(self) -> dict[str, Any]:
        return {"attempts": self.attempts, "wait_max_ms": round(self.wait_max_s * 1000.0, 1),
                "lag_max_ms": round(self.lag_max_s * 1000.0, 1), "timed_out": self.timed_out,
                "timed_out_lagged": self.timed_out_lagged}


class StormProcess:
    """What one Locust process knows about its storm (one per process; gevent: no locks)."""

    def __init__(self) -> None:
        self.spec: StormSpec | None = None
        self.profile: Profile | None = None
        self.secrets: list[str] = []
        self.mask = Masker(())  # every form of the secrets, masked in answer excerpts and reasons
        self.error: str | None = None
        self.t0 = 0.0  # monotonic seconds at test start
        self.started_at = 0.0  # unix seconds at test start
        self.users = 0
        self.sent: list[_Sent] = []
        self.events: dict[str, dict[str, Any]] = {}  # world event id -> `event_to_wire`
        self.book: StoryBook | None = None
        self.pending: dict[int, tuple[Send, int, str, float, float]] = {}
        # retries owed: token -> (the send, attempts made, the event id they carried), while
        # its sender waits out the retry's delay (`owe`, `paid`)
        self.owed: dict[int, tuple[Send, int, str]] = {}
        # deliveries whose schedule the drain deadline cut (`cut_short`, `cut`)
        self._cut: list[CutDelivery] = []
        self.drain_until: float | None = None  # monotonic seconds the drain ends at; None: the storm sends
        self.pools: list[gevent.pool.Group] = []
        self.stopped = gevent.event.Event()  # set when the storm ends: senders draw no new group
        self.next_token = 0
        self.phase = "starting"
        self.exit_code: int | None = None
        self.collector = Collector()
        self.flushed = False  # the storm's end began (`storm_worker.flush` started)
        self.closed = False  # the process sent its closing message (`storm_worker.flush` ended)
        self.hurry = gevent.event.Event()  # set when the worker was stopped: its storm ends now, no drain
        self.go = gevent.event.Event()  # set when the users may send (a worker: on its master's go)
        self.refused = ""  # why the master refused this worker (it joined after the storm began)
        self.build_error = False  # this worker is of another version or build than its master's
        self.quit_note = ""  # how the worker was stopped before the storm ended, for its closing message
        self.chunks = 0  # chunks streamed to the master so far (a worker's count)
        self.shipped = 0  # attempts streamed to the master so far (a worker's count)
        self.refusal: str | None = None  # why the master refused to run the storm (exit 2)
        self.failure: str | None = None  # the one line of an exception that ended the master's checks
        self.stop_early = gevent.event.Event()  # set by SIGUSR1: end the storm now, then check and report
        self.sender = SenderLoad()  # how well this process's senders kept up
        self._type_names: dict[str, str] = {}
        # what the exchange observed -> its grade's status, outcome, completion, excerpt, reason
        self._grades: dict[ObservedAtoms, tuple[int | None, str, str, str, str | None]] = {}

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def setup(self, spec: StormSpec, *, sender: bool, secrets: str | None = None) -> None:
        """Start the process's storm; a sender takes the signing secrets from `secrets`
        (the master's, forwarded with the run) or else ``HOOKPROOF_STORM_SECRETS``."""
        self.spec = spec
        self.profile = spec.sending_profile()
        self.t0 = time.monotonic()
        self.started_at = time.time()
        if sender:
            try:
                self.secrets = (secrets_from_text(secrets, "the signing secrets the master sent") if secrets
                                else secrets_from_env())
                self.mask = Masker(self.secrets)
            except SpecError as exc:
                self.error = str(exc)
                log.error("%s", exc)

    def begin(self, send: Send, number: int, event_id: str, sent_at: float, t: float) -> int:
        if send.event.id not in self.events:
            self.events[send.event.id] = event_to_wire(send.event)
        self.next_token += 1
        self.pending[self.next_token] = (send, number, event_id, sent_at, t)
        return self.next_token

    def complete(self, token: int, sent: _Sent) -> None:
        self.pending.pop(token, None)
        self.sent.append(sent)

    def owe(self, send: Send, attempts: int, event_id: str) -> int:
        """Note a retry of `send` owed after `attempts` attempts (whose event id was
        `event_id`), while its sender waits out its delay; the token `paid` takes."""
        self.next_token += 1
        self.owed[self.next_token] = (send, attempts, event_id)
        return self.next_token

    def paid(self, token: int) -> None:
        """The retry owed under `token` is going out (or was cut): no longer owed."""
        self.owed.pop(token, None)

    def draining_past(self, delay_s: float) -> bool:
        """True when the storm drains and a retry due in `delay_s` seconds would go out
        past the drain's end."""
        return self.drain_until is not None and time.monotonic() + delay_s >= self.drain_until

    def cut_short(self, send: Send, attempts: int, event_id: str, *, in_flight: bool = False) -> None:
        """Note a delivery whose schedule the drain deadline cut after `attempts` attempts
        (`in_flight`: its last one was still waiting for its answer)."""
        self._cut.append(CutDelivery(send.event.id, event_id, send.delivery_id, attempts, in_flight))

    def still_owed(self) -> int:
        """Retries owed and attempts in flight now (a draining worker's progress)."""
        return len(self.owed) + len(self.pending)

    def cut(self) -> list[CutDelivery]:
        """Every delivery cut so far, the retries still owed counted as cut (call once the
        senders are stopped: at the drain's end)."""
        for send, attempts, event_id in self.owed.values():
            self._cut.append(CutDelivery(send.event.id, event_id, send.delivery_id, attempts, False))
        self.owed.clear()
        return list(self._cut)

    def process_seed(self, worker_index: int) -> int:
        """The seed of this process's stories and of its users' plans (a worker's index,
        0 for a single local process): the same on every run of one spec."""
        assert self.spec is not None
        return process_seed(self.spec.seed, worker_index)

    def copies(self, user_number: int) -> tuple[int, int]:
        """(first copy number, stride) of a user's replays: disjoint per user of a process.
        Billing's ids hold 62**6 copies, so users are `USER_STRIDE` apart; the other worlds'
        numbers hold fewer, so their users take turns (a process never has more users than
        the storm's total)."""
        assert self.spec is not None and self.book is not None
        if self.book.renamer is None:
            return 1 + user_number % USER_STRIDE, USER_STRIDE
        return 1 + user_number % self.spec.users, self.spec.users

    def story_book(self, seed: int) -> StoryBook:
        """The process's stories, built by its first user (world seeded by `seed`)."""
        if self.book is None:
            spec, profile = self.spec, self.profile
            assert spec is not None and profile is not None
            keep = storm_sends(profile, spec.enabled_types, spec.keys)
            world = template_world(profile.world, seed, live=spec.live, account=spec.account,
                                   start_us=spec.world_start_us, checkout_modes=spec.checkout_modes)
            world.sent_only(keep.sends_type)  # its stories are the endpoint's (a Checkout intent's license)
            # building takes seconds: yield between stories, so a worker's heartbeats
            # reach its master meanwhile (else it is taken for missing and the storm stopped)
            self.book = StoryBook(world, profile, keep, stories=STORIES, pause=lambda: gevent.sleep(0))
            # Everything built so far (Locust, the world, the stories) lives until the
            # end: keep it out of every later collection, and collect the young objects
            # of sending (freed by reference counting, nearly all) less often. Measured:
            # a tenth of a sender's CPU went to the collector otherwise.
            gc.freeze()
            gc.set_threshold(GC_YOUNG_THRESHOLD)
        return self.book

    def type_name(self, world_type: str) -> str:
        """The profile's name of `world_type` (else `world_type`), looked up once."""
        name = self._type_names.get(world_type)
        if name is None:
            assert self.profile is not None
            name = self._type_names[world_type] = self.profile.provider_type(world_type) or world_type
        return name

    def row(self, sent: _Sent, events: Mapping[str, Mapping[str, Any]]) -> list[Any]:
        """The history row of `sent` (`records.graded_row`'s, graded by the attempt core
        once per distinct observation); `events` maps world event ids to their
        `event_to_wire` dicts."""
        world_id, delivery_id, tags, number, event_id, sent_at, latency_ms, atoms = sent
        event = events[world_id]
        graded = self._grades.get(atoms)
        if graded is None:  # graded once per distinct observation (nearly all are one 200 answer)
            assert self.profile is not None
            g = grade(observed(atoms), self.profile)
            mask = self.mask
            graded = (g.status, g.outcome.value, g.completion.value, mask(g.excerpt),
                      mask(g.reason) if g.reason else g.reason)
            if len(self._grades) >= GRADES_KEPT:
                self._grades.clear()
            self._grades[atoms] = graded
        status, outcome, completion, excerpt, reason = graded
        # `records.graded_row`'s values, in `records.COLUMNS` order (tests/loadtests/test_records.py)
        return [STORM_SCENARIO, event_id, delivery_id, number, event["business_key"], event["object_id"],
                event["version"], self.type_name(event["type"]), list(tags), True, sent_at,
                sent_at + latency_ms / 1000.0, status, outcome, completion, round(latency_ms, 3), excerpt, reason,
                event["amount"]]

    def unfinished(self) -> list[Attempt]:
        """The attempts still in flight, completed as unknown (the storm's drain ended
        first); their deliveries are cut (`cut_short`)."""
        assert self.profile is not None
        now = time.perf_counter()
        for send, number, event_id, _, _ in self.pending.values():
            self.cut_short(send, number, event_id, in_flight=True)
        out = [
            make_attempt(event=send.event, event_id=event_id, delivery_id=send.delivery_id, attempt=number,
                         tags=send.tags, profile=self.profile, sent_at=sent_at, latency_ms=(now - t) * 1000.0,
                         status=None, error_kind="unfinished")
            for send, number, event_id, sent_at, t in self.pending.values()
        ]
        self.pending.clear()
        return out


#: The process's storm.
STATE = StormProcess()
