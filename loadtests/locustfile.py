"""Locust storms of signed webhook events, ending in certify's exactly-once checks.

Run by ``hookproof storm`` (never imported by hookproof or pytest: Locust monkey-patches
the standard library with gevent). By hand, from the repository root::

    HOOKPROOF_STORM_SPEC=spec.json HOOKPROOF_STORM_SECRETS='["whsec_..."]' \\
        python -m locust -f loadtests/locustfile.py --headless -u 10 -r 10 --host URL
    # distributed: the same with --master --expect-workers K, and K times
    HOOKPROOF_STORM_SECRETS='[...]' python -m locust -f loadtests/locustfile.py --worker --master-host H

The master reads the spec (`loadtests.spec.StormSpec`) from the file named by
``HOOKPROOF_STORM_SPEC`` and forwards it to the workers with the run (the custom
argument ``--hookproof-spec``); workers read the signing secrets from
``HOOKPROOF_STORM_SECRETS``. Each `StormUser` runs `max_in_flight` senders that pace
themselves on the spec's load shape (an open model: intended send times, never waiting
for answers while a sender is free), draws groups from a `StormPlan` (duplicates,
concurrent bursts, reordering, redelivery waves) over the process's `StoryBook` (world
stories rendered once, replayed with fresh ids: each user its own copy numbers), signs every attempt
with the profile at its send time, retries failed attempts on the profile's schedule
(scaled), and records each attempt like the dispatcher does (the records are built
into history attempts when the storm ends, off the sending path).

When the storm's duration is over the master stops the workers; each waits for its
in-flight requests (bounded by the sender timeout), sends its attempts and events to
the master (custom messages), and the master settles the receiver, runs the checks,
writes the reports (`loadtests.verdict.finish_storm`) and exits 0 (every check valid)
or 1 (findings, unknowns, or missing records).
"""

from __future__ import annotations

import gc
import json
import logging
import math
import os
import signal
import time
import traceback
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import gevent
import gevent.event
import gevent.pool
from geventhttpclient.url import URL as GeventURL
from locust import FastHttpUser, events, task
from locust.env import Environment
from locust.exception import StopUser
from locust.runners import MasterRunner, WorkerRunner

from hookproof.loadtests.collect import DONE_MESSAGE, RECORDS_MESSAGE, Collector
from hookproof.loadtests.plan import Send, StormPlan
from hookproof.loadtests.exchange import ObservedAtoms, exchange, observed
from hookproof.loadtests.records import attempt_to_wire, chunked, event_from_wire, event_to_wire, make_attempt
from hookproof.loadtests.shape import wave_times
from hookproof.loadtests.spec import SPEC_ENV, SpecError, StormSpec, secrets_from_env
from hookproof.loadtests.stories import StoryBook
from hookproof.simulator.delivery.attempt_core import retry_delay_s
from hookproof.simulator.delivery.dispatcher import READ_CAP_BYTES
from hookproof.simulator.delivery.history import RESPONSE_EXCERPT_BYTES, Attempt, Outcome
from hookproof.simulator.delivery.mutations import build_attempt
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.profiles.base import Envelope, Profile, SignedRequest
from hookproof.simulator.world import World

log = logging.getLogger("hookproof.storm")

#: Attempts per custom message.
CHUNK = 2000
#: Seconds added to the sender timeout when a worker waits for its in-flight requests.
DRAIN_GRACE_S = 2.0
#: Seconds between two progress file writes on the master.
PROGRESS_INTERVAL_S = 0.5
#: Copy-number stride between the users of one process (users per process at most).
USER_STRIDE = 1 << 16
#: World lifecycles a process builds once and replays.
STORIES = 16
#: Allocations between two young-generation collections in a sender (CPython's default: 700).
GC_YOUNG_THRESHOLD = 20_000


#: What a user keeps of one finished attempt, as a plain tuple of atoms (so the garbage
#: collector untracks it: a storm keeps hundreds of thousands): world event id, delivery
#: id, tags, attempt number, envelope event id, sent at (unix s), latency (ms), and what
#: the exchange observed (`loadtests.exchange.ObservedAtoms`). `_Process.record` builds
#: the history attempt, graded by the attempt core.
_Sent = tuple[str, str, tuple[str, ...], int, str, float, float, ObservedAtoms]


class _Process:
    """What one Locust process knows about its storm (one per process; gevent: no locks)."""

    def __init__(self) -> None:
        self.spec: StormSpec | None = None
        self.profile: Profile | None = None
        self.secrets: list[str] = []
        self.error: str | None = None
        self.t0 = 0.0  # monotonic seconds at test start
        self.started_at = 0.0  # unix seconds at test start
        self.users = 0
        self.sent: list[_Sent] = []
        self.attempts: list[Attempt] = []
        self.events: dict[str, dict[str, Any]] = {}  # world event id -> `event_to_wire`
        self.book: StoryBook | None = None
        self.pending: dict[int, tuple[Send, int, str, float, float]] = {}
        self.pools: list[gevent.pool.Group] = []
        self.stopped = gevent.event.Event()  # set when the storm ends: senders draw no new group
        self.next_token = 0
        self.phase = "starting"
        self.exit_code: int | None = None
        self.collector = Collector()
        self.flushed = False
        self.stop_early = gevent.event.Event()  # set by SIGUSR1: end the storm now, then check and report

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def setup(self, spec: StormSpec, *, sender: bool) -> None:
        self.spec = spec
        self.profile = get_profile(spec.profile)
        self.t0 = time.monotonic()
        self.started_at = time.time()
        if sender:
            try:
                self.secrets = secrets_from_env()
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

    def story_book(self, seed: int) -> StoryBook:
        """The process's stories, built by its first user (world seeded by `seed`)."""
        if self.book is None:
            spec, profile = self.spec, self.profile
            assert spec is not None and profile is not None
            enabled = set(spec.enabled_types) if spec.enabled_types is not None else None

            def keep(e: Event) -> bool:
                return (profile.provider_type(e.type) is not None and (enabled is None or e.type in enabled)
                        and (e.business_key is not None or e.stateful))

            self.book = StoryBook(World(seed, livemode=spec.live, account=spec.account), profile, keep,
                                  stories=STORIES)
            # Everything built so far (Locust, the world, the stories) lives until the
            # end: keep it out of every later collection, and collect the young objects
            # of sending (freed by reference counting, nearly all) less often. Measured:
            # a tenth of a sender's CPU went to the collector otherwise.
            gc.freeze()
            gc.set_threshold(GC_YOUNG_THRESHOLD)
        return self.book

    def record(self, sent: _Sent, events: dict[str, Event]) -> Attempt:
        """The history attempt of `sent`; `events` maps world event ids to (slim) events."""
        assert self.profile is not None
        world_id, delivery_id, tags, number, event_id, sent_at, latency_ms, atoms = sent
        return make_attempt(event=events[world_id], event_id=event_id, delivery_id=delivery_id, attempt=number,
                            tags=tags, profile=self.profile, sent_at=sent_at, latency_ms=latency_ms,
                            observed=observed(atoms))

    def unfinished(self) -> list[Attempt]:
        """The attempts still in flight, completed as unknown (the storm ended first)."""
        assert self.profile is not None
        now = time.perf_counter()
        out = [
            make_attempt(event=send.event, event_id=event_id, delivery_id=send.delivery_id, attempt=number,
                         tags=send.tags, profile=self.profile, sent_at=sent_at, latency_ms=(now - t) * 1000.0,
                         status=None, error_kind="unfinished")
            for send, number, event_id, sent_at, t in self.pending.values()
        ]
        self.pending.clear()
        return out


STATE = _Process()


# ---- events ------------------------------------------------------------------------------

@events.init_command_line_parser.add_listener
def _add_arguments(parser: Any) -> None:
    parser.add_argument("--hookproof-spec", type=str, default="", include_in_web_ui=False,
                        help="the storm spec as JSON (set by the master from $HOOKPROOF_STORM_SPEC)")


@events.init.add_listener
def _on_init(environment: Environment, **_: Any) -> None:
    runner = environment.runner
    if isinstance(runner, WorkerRunner):
        return
    path = os.environ.get(SPEC_ENV)
    if not path:
        raise SystemExit(f"hookproof storm: {SPEC_ENV} is not set (the path of the storm spec JSON)")
    text = Path(path).read_text(encoding="utf-8")
    StormSpec.from_json(text)  # fail early on a bad spec
    if environment.parsed_options is not None:
        environment.parsed_options.hookproof_spec = text
    if runner is not None:
        runner.register_message(RECORDS_MESSAGE, _on_records)
        runner.register_message(DONE_MESSAGE, _on_done)
    # `hookproof storm` sends SIGUSR1 when it is interrupted: stop sending, gather, check
    # and write a report marked partial (SIGTERM would end Locust without one).
    gevent.signal_handler(signal.SIGUSR1, STATE.stop_early.set)


def _on_records(environment: Environment, msg: Any, **_: Any) -> None:
    STATE.collector.add(str(msg.node_id), msg.data or {})


def _on_done(environment: Environment, msg: Any, **_: Any) -> None:
    STATE.collector.done(str(msg.node_id), msg.data or {})


@events.test_start.add_listener
def _on_test_start(environment: Environment, **_: Any) -> None:
    options = environment.parsed_options
    text = getattr(options, "hookproof_spec", "") if options is not None else ""
    spec = StormSpec.from_json(text)
    runner = environment.runner
    STATE.setup(spec, sender=not isinstance(runner, MasterRunner))
    if not isinstance(runner, WorkerRunner):
        gevent.spawn(_control, environment)
        if spec.progress_path:
            gevent.spawn(_progress_loop, environment)


@events.test_stop.add_listener
def _on_test_stop(environment: Environment, **_: Any) -> None:
    if isinstance(environment.runner, MasterRunner) or STATE.flushed or STATE.spec is None:
        return
    STATE.flushed = True
    _flush(environment)


@events.quitting.add_listener
def _on_quitting(environment: Environment, **_: Any) -> None:
    if isinstance(environment.runner, WorkerRunner):
        environment.process_exit_code = 0 if STATE.flushed and STATE.error is None else 1
    else:
        environment.process_exit_code = STATE.exit_code if STATE.exit_code is not None else 1


# ---- the user ----------------------------------------------------------------------------

class StormUser(FastHttpUser):
    """A provider sending signed events at its own pace (see the module docstring)."""

    def __init__(self, environment: Environment) -> None:
        spec = STATE.spec
        if spec is None:
            raise StopUser()
        self.network_timeout = spec.sender_timeout_s
        self.connection_timeout = min(5.0, spec.sender_timeout_s)
        # connections: every sender's group goes out at once (a burst and a wave replay)
        self.concurrency = spec.max_in_flight * (spec.burst + 1)
        super().__init__(environment)
        self.spec = spec
        self.number = STATE.users
        STATE.users += 1
        index = max(0, getattr(environment.runner, "worker_index", 0) or 0)
        process_seed = spec.seed * 1_000_003 + (index + 1) * 7919
        self.seed = process_seed + self.number
        profile = STATE.profile
        assert profile is not None
        self.profile = profile
        book = STATE.story_book(process_seed)
        stream = book.stream(first_copy=1 + self.number % USER_STRIDE, stride=USER_STRIDE)
        self.plan = StormPlan(stream, duplicates=spec.duplicates, burst=spec.burst,
                              reorder_window=spec.reorder_window, wave_window_s=spec.wave_window_s, seed=self.seed)
        self.shape = spec.load_shape()
        self.waves = list(wave_times(spec.duration_s, spec.waves))
        elapsed = STATE.elapsed()
        rate = self.shape.rate_at(elapsed) or spec.rate_per_s
        self.next_s: float | None = max(self.shape.first_send_s(self.number, spec.users),
                                        elapsed + (self.number % spec.users) / rate)
        self.groups = 0
        self.max_groups = math.ceil(2 * self.shape.expected_events() / spec.users) + 10
        self.senders = gevent.pool.Group()
        self.last_signed: tuple[Envelope, int, SignedRequest] | None = None
        self._http: Any = None  # the geventhttpclient client of the target (`_exchange`)
        self._uri = ""
        self._request_event = environment.events.request
        self._type_names: dict[str, str] = {}
        STATE.pools.append(self.senders)

    @task
    def storm(self) -> None:
        """Run the user's senders until the storm ends, then stop the user.

        Each of the `max_in_flight` senders claims the next intended send time, waits
        for it, and releases one group (and a replay): an open model up to that many
        groups in flight, with no greenlet spawned per request.
        """
        for _ in range(self.spec.max_in_flight):
            self.senders.spawn(self._sender)
        self.senders.join()
        raise StopUser()

    def _sender(self) -> None:
        while True:
            group = self._next_group()
            if not group:
                return
            extra = [self.senders.spawn(self._deliver, send) for send in group[1:]]
            self._deliver(group[0])
            if extra:
                gevent.joinall(extra)

    def _next_group(self) -> tuple[Send, ...]:
        """Claim the next send time, wait for it, and draw its group (empty: stop)."""
        if STATE.error is not None or STATE.stopped.is_set() or self.next_s is None or self.groups >= self.max_groups:
            return ()
        due = self.next_s
        if due >= self.spec.duration_s:
            return ()
        self.next_s = self.shape.next_send_s(due, self.spec.users)
        self.groups += 1
        wait = due - STATE.elapsed()
        if wait > 0 and STATE.stopped.wait(timeout=wait):
            return ()
        elapsed = STATE.elapsed()
        if elapsed >= self.spec.duration_s:
            return ()
        while self.waves and elapsed >= self.waves[0]:
            self.waves.pop(0)
            self.plan.start_wave(elapsed)
        group = self.plan.next_group(elapsed)
        replay = self.plan.next_replay()
        return (*group, replay) if replay is not None else group

    def _deliver(self, send: Send) -> None:
        """Attempt `send` until acked, at most `max_attempts` times, and not past the storm."""
        spec = self.spec
        schedule = self.profile.retry_schedule_s
        for number in range(1, spec.max_attempts + 1):
            acked = self._attempt(send, number)
            delay = retry_delay_s(Outcome.ACKED if acked else Outcome.REJECTED, number, schedule_s=schedule,
                                  max_attempts=spec.max_attempts, time_scale=spec.time_scale)
            if delay is None:
                return
            if STATE.elapsed() + delay >= spec.duration_s:
                return
            gevent.sleep(delay)

    def _attempt(self, send: Send, number: int) -> bool:
        """Send one signed attempt and keep what happened. True when it was acked."""
        now = int(time.time())
        envelope = send.envelope
        if envelope is not None:
            # Copies released together (a burst) share one signed request: the same
            # envelope signed at the same second gives the same bytes.
            last = self.last_signed
            if last is not None and last[0] is envelope and last[1] == now:
                request = last[2]
            else:
                request = self.profile.request(envelope, STATE.secrets, now)
                self.last_signed = (envelope, now, request)
            event_id = envelope.event_id
        else:
            built = build_attempt(self.profile, send.event, STATE.secrets, (), now=now, attempt=number, seed=self.seed)
            request, event_id = built.request, built.event_id
        sent_at, t = time.time(), time.perf_counter()
        token = STATE.begin(send, number, event_id, sent_at, t)
        atoms = self._exchange(request)
        latency_ms = (time.perf_counter() - t) * 1000.0
        sent, status, body, over_cap, start, broke, detail, timeout_s, cap = atoms
        if len(body) > RESPONSE_EXCERPT_BYTES:  # the record keeps the excerpt only
            atoms = (sent, status, body[:RESPONSE_EXCERPT_BYTES], over_cap, start, broke, detail, timeout_s, cap)
        STATE.complete(token, (send.event.id, send.delivery_id, send.tags, number, event_id, sent_at, latency_ms,
                               atoms))
        answered = broke is None and not over_cap and status is not None
        failure = None
        if not answered:
            failure = AnswerFailure(f"answered {status} past the read cap" if over_cap else f"no answer: {broke}")
        elif status is not None and status >= 400:
            failure = AnswerFailure(f"answered {status}")
        # Locust's own statistics (console, CSV, `hookproof storm`'s progress) count an
        # answer of 400 or more, or none, as a failure; the history is what the checks read.
        self._request_event.fire(request_type=request.method, name=self._type_name(send.event.type),
                                 response_time=latency_ms, response_length=len(body), exception=failure, context={},
                                 response=None, url=self.spec.target_url, start_time=sent_at)
        return answered and status is not None and self.profile.is_success(status)

    def _type_name(self, world_type: str) -> str:
        """The profile's name of `world_type` (Locust's request name), looked up once."""
        name = self._type_names.get(world_type)
        if name is None:
            name = self._type_names[world_type] = self.profile.provider_type(world_type) or world_type
        return name

    def _exchange(self, request: SignedRequest) -> ObservedAtoms:
        """POST `request` on the user's own connections; what was observed
        (`loadtests.exchange`: at most `READ_CAP_BYTES` of the answer, within the sender
        timeout).

        Straight through the geventhttpclient client the FastHttpUser pooled for the
        target (its connection and network timeouts, `concurrency` connections), not
        Locust's `FastHttpSession.request`: a provider follows no redirects and keeps no
        cookies, the URL is parsed once per user, and the answer is read up to the cap
        (bench/storm_throughput.py: the session's layers cost more than signing).
        """
        if self._http is None:
            url = GeventURL(self.spec.target_url)
            self._http = self.client.client.clientpool.get_client(url)
            self._uri = getattr(url, "quoted_uri", url.request_uri)
        uri = self._uri
        if request.query:
            uri += ("&" if "?" in uri else "?") + urlencode(dict(request.query))
        return exchange(self._http, uri, request, read_cap_bytes=READ_CAP_BYTES, timeout_s=self.spec.sender_timeout_s)


class AnswerFailure(Exception):
    """What Locust's statistics count as a failed request: an answer of 400 or more, or
    one past the read cap (the history records the attempt in full)."""


# ---- worker: hand the records over -------------------------------------------------------

def _flush(environment: Environment) -> None:
    """Wait for in-flight deliveries (bounded), then send attempts and events to the master."""
    spec = STATE.spec
    assert spec is not None
    STATE.stopped.set()
    deadline = time.monotonic() + spec.sender_timeout_s + DRAIN_GRACE_S
    for pool in STATE.pools:
        pool.join(timeout=max(0.0, deadline - time.monotonic()))
    for pool in STATE.pools:
        pool.kill(block=True, timeout=DRAIN_GRACE_S)
    slim = {world_id: event_from_wire(wire) for world_id, wire in STATE.events.items()}
    attempts = [STATE.record(sent, slim) for sent in STATE.sent] + STATE.unfinished()
    STATE.sent = []
    STATE.attempts = attempts
    runner = environment.runner
    assert runner is not None
    wire_events = list(STATE.events.values())
    first = True
    for part in chunked([attempt_to_wire(a) for a in attempts], CHUNK):
        runner.send_message(RECORDS_MESSAGE, {"attempts": list(part), "events": wire_events if first else []})
        first = False
    runner.send_message(DONE_MESSAGE, {"attempts": len(attempts), "events": len(wire_events), "error": STATE.error})


# ---- master: end the storm, check, report -------------------------------------------------

def _control(environment: Environment) -> None:
    """Stop the storm after its duration, gather the records, settle, check and report."""
    from hookproof.loadtests.verdict import finish_storm

    spec = STATE.spec
    assert spec is not None
    runner = environment.runner
    assert runner is not None
    try:
        STATE.phase = "storm"
        early = STATE.stop_early.wait(timeout=max(0.0, spec.duration_s - STATE.elapsed()))
        stopped_at = time.time()
        STATE.phase = "stopping"
        nodes = ([c.id for c in runner.clients.all] if isinstance(runner, MasterRunner) else ["local"])
        runner.stop()
        STATE.phase = "collecting"
        deadline = time.monotonic() + spec.collect_timeout_s
        while not STATE.collector.finished(nodes) and time.monotonic() < deadline:
            gevent.sleep(0.1)
        problems = STATE.collector.problems(nodes)
        if early:
            problems.insert(0, f"interrupted after {STATE.elapsed():.0f} s of {spec.duration_s:.0f} s")
        reason = "; ".join(problems) if problems else None
        if reason:
            log.error("incomplete records: %s", reason)

        def phase(name: str) -> None:
            STATE.phase = name

        outcome = finish_storm(spec, STATE.collector.events(), STATE.collector.attempts(),
                               started_at=STATE.started_at, stopped_at=stopped_at, partial_reason=reason,
                               on_phase=phase)
        STATE.exit_code = outcome.exit_code
        STATE.phase = "done"
    except Exception:  # the master must still exit, with a readable reason
        log.error("the storm's end failed:\n%s", traceback.format_exc())
        STATE.exit_code = 1
        STATE.phase = "failed"
    finally:
        _write_progress(environment)
        runner.quit()


def _progress_loop(environment: Environment) -> None:
    while STATE.phase not in ("done", "failed"):
        _write_progress(environment)
        gevent.sleep(PROGRESS_INTERVAL_S)


def _write_progress(environment: Environment) -> None:
    """Rewrite the progress file atomically (phase, elapsed seconds, requests, rate)."""
    spec = STATE.spec
    if spec is None or not spec.progress_path:
        return
    runner = environment.runner
    total = runner.stats.total if runner is not None else None
    workers = len(runner.clients.all) if isinstance(runner, MasterRunner) else 1
    data = {
        "phase": STATE.phase, "elapsed_s": round(STATE.elapsed(), 2), "duration_s": spec.duration_s,
        "requests": total.num_requests if total else 0, "failures": total.num_failures if total else 0,
        "rps": round(total.current_rps, 1) if total else 0.0, "workers": workers, "exit_code": STATE.exit_code,
    }
    path = Path(spec.progress_path)
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("cannot write the progress file %s: %s", path, exc)
