"""The storm's Locust user: a provider sending signed events at its own pace.

Each `StormUser` runs `max_in_flight` senders that pace themselves on the spec's load
shape (an open model), draw groups from a `StormPlan`, sign every attempt with the
profile at its send time, send it (`loadtests.exchange`), retry on the profile's
schedule (the attempt core's decision, scaled), and keep what each attempt observed
in the process's `STATE`. Imported only in Locust's processes.
"""

from __future__ import annotations

import math
import time
from typing import Any
from urllib.parse import urlencode

import gevent
import gevent.event
import gevent.pool
from geventhttpclient.url import URL as GeventURL
from locust import FastHttpUser, task
from locust.env import Environment
from locust.exception import StopUser

from hookproof.loadtests.copiers import Copier, release
from hookproof.loadtests.exchange import ObservedAtoms, exchange
from hookproof.loadtests.plan import Send, StormPlan, largest_group
from hookproof.loadtests.shape import Pacer, wave_times
from hookproof.loadtests.storm_state import LAG_NOTED_S, STATE
from hookproof.simulator.delivery.attempt_core import READ_CAP_BYTES, Broke, retry_delay_s
from hookproof.simulator.delivery.history import RESPONSE_EXCERPT_BYTES, Outcome
from hookproof.simulator.delivery.mutations import envelope_of
from hookproof.simulator.profiles.base import Envelope, SignedRequest

#: `Broke.TIMEOUT`'s value, read once (an enum member's attribute is a descriptor call).
_TIMEOUT = Broke.TIMEOUT.value


class StormUser(FastHttpUser):
    """A provider sending signed events at its own pace (see the module docstring)."""

    def __init__(self, environment: Environment) -> None:
        spec = STATE.spec
        if spec is None:  # a worker that refused the storm: the user ends at once, sending nothing
            super().__init__(environment)
            return
        self.network_timeout = spec.sender_timeout_s
        self.connection_timeout = min(5.0, spec.sender_timeout_s)
        # connections: every sender's group goes out at once (a related burst with its state
        # change, or a burst, and a wave replay): no send waits for another's connection
        self.concurrency = spec.max_in_flight * largest_group(spec.burst)
        super().__init__(environment)
        self.spec = spec
        self.number = STATE.users
        STATE.users += 1
        process_seed = STATE.process_seed(getattr(environment.runner, "worker_index", 0) or 0)
        self.seed = process_seed + self.number
        profile = STATE.profile
        assert profile is not None
        self.profile = profile
        book = STATE.story_book(process_seed)
        first_copy, stride = STATE.copies(self.number)
        stream = book.stream(first_copy=first_copy, stride=stride)
        self.plan = StormPlan(stream, duplicates=spec.duplicates, burst=spec.burst,
                              reorder_window=spec.reorder_window, wave_window_s=spec.wave_window_s,
                              wave_events=spec.wave_events, related=spec.related,
                              older_redelivery=spec.older_redelivery, late=spec.late,
                              api_transient=spec.api_transient, seed=self.seed, replayed=profile.replayed)
        self.shape = spec.load_shape()
        self.waves = list(wave_times(spec.duration_s, spec.waves))
        elapsed = STATE.elapsed()
        rate = self.shape.rate_at(elapsed) or spec.rate_per_s
        # paced in events: a group of several new events (a related burst) takes as many turns
        self.pacer = Pacer(self.shape, spec.users, max(self.shape.first_send_s(self.number, spec.users),
                                                       elapsed + (self.number % spec.users) / rate))
        self.groups = 0
        self.max_groups = math.ceil(2 * self.shape.expected_events() / spec.users) + 10
        self.senders = gevent.pool.Group()
        self.last_signed: tuple[Envelope, int, SignedRequest] | None = None
        self._http: Any = None  # the geventhttpclient client of the target (`_exchange`)
        self._uri = ""
        self._request_event = environment.events.request
        self._stats = environment.stats
        # the runner's listener of Locust's request event when it is the only one (it
        # logs to `environment.stats`, `runner_logs_only`): the user then logs there itself
        self._runner_listener = environment.events.request._handlers[0] if runner_logs_only(environment) else None
        STATE.pools.append(self.senders)

    @task
    def storm(self) -> None:
        """Run the user's senders until the storm ends, then stop the user (none before the
        storm's go: ``STATE.go``).

        Each of the `max_in_flight` senders claims the next intended send time, waits
        for it, and releases one group (and a replay): an open model up to that many
        groups in flight, with no greenlet spawned per request.
        """
        # nothing is sent before the master heard every worker ready and said go (a refused storm
        # sends nothing); a storm stopped meanwhile ends the user
        if STATE.spec is None:
            raise StopUser()
        gevent.wait([STATE.go, STATE.stopped], count=1)
        if not STATE.go.is_set():
            raise StopUser()
        for _ in range(self.spec.max_in_flight):
            self.senders.spawn(self._sender)
        self.senders.join()
        raise StopUser()

    def _sender(self) -> None:
        """Release groups until the storm ends (`copiers.release`: the first send of each
        from this greenlet, the others from copiers it keeps, all at once)."""
        copiers: list[Copier[Send]] = []
        try:
            while True:
                group = self._next_group()
                if not group:
                    return
                release(group, self._deliver, copiers, self.senders)
        finally:
            for copier in copiers:
                copier.stop()

    def _next_group(self) -> tuple[Send, ...]:
        """Claim the next send time, wait for it, and draw its group (empty: stop). A turn whose
        event an earlier group carried already (a related burst of several new events) draws
        none (`Pacer.due_now`): it releases the next wave replay alone, or waits for the next."""
        while True:
            if STATE.error is not None or STATE.stopped.is_set() or self.groups >= self.max_groups:
                return ()
            due = self.pacer.claim()
            if due is None:
                return ()
            wait = due - STATE.elapsed()
            if wait > 0 and STATE.stopped.wait(timeout=wait):
                return ()
            elapsed = STATE.elapsed()
            if elapsed >= self.spec.duration_s:
                return ()
            while self.waves and elapsed >= self.waves[0]:
                self.waves.pop(0)
                self.plan.start_wave(elapsed)
            group: tuple[Send, ...] = ()
            if self.pacer.due_now():
                self.groups += 1
                group = drawn = self.plan.next_group(elapsed)
                while drawn and not any(send.copy == 1 for send in drawn):  # a copy, a redelivery: on top
                    drawn = self.plan.next_group(elapsed)
                    group = (*group, *drawn)
                self.pacer.drew(sum(send.copy == 1 for send in group))  # the events sent for the first time
                if not group:
                    return ()
            replay = self.plan.next_replay()
            if replay is not None:
                return (*group, replay)
            if group:
                return group

    def _deliver(self, send: Send) -> None:
        """Attempt `send` until acked, at most `max_attempts` times, each retry after its
        compressed delay, also once the load shape ended (the drain, `storm_worker.flush`);
        a retry that would go out past the drain's end is cut (`StormProcess.cut_short`).
        While it waits for a retry, the retry is owed (`StormProcess.owe`): one still owed
        when the drain's end stops the senders is cut too."""
        spec = self.spec
        attempt = self._attempt
        for number in range(1, spec.max_attempts + 1):
            event_id = attempt(send, number)
            if event_id is None:
                return  # acked: the delivery stops (`retry_delay_s` of an ack is None)
            delay = retry_delay_s(Outcome.REJECTED, number, schedule_s=self.profile.retry_schedule_s,
                                  max_attempts=spec.max_attempts, time_scale=spec.time_scale)
            if delay is None:
                return
            if STATE.draining_past(delay):
                STATE.cut_short(send, number, event_id)
                return
            token = STATE.owe(send, number, event_id)
            gevent.sleep(delay)
            STATE.paid(token)  # not when the drain's end kills the sender: then it stays owed (cut)

    def _attempt(self, send: Send, number: int) -> str | None:
        """Send one signed attempt and keep what happened. None when it was acked, else the
        event id it carried."""
        # signed once a connection is had (`_signed`, called by `exchange`), as a provider signs
        # when it sends: a user whose connections are all busy waits for one, and a request signed
        # before that wait reached a receiver with a 5 s tolerance (Paddle's SDK) already stale
        envelope = send.envelope if send.envelope is not None else envelope_of(self.profile, send.event)
        event_id = envelope.event_id
        sent_at, t = time.time(), time.perf_counter()
        token = STATE.begin(send, number, event_id, sent_at, t)
        wire = [t]
        atoms = self._exchange(envelope, wire)
        end = time.perf_counter()
        sent, status, body, over_cap, start, broke, detail, timeout_s, cap = atoms
        # What the receiver controls: from when the request went on the wire (the wait for
        # a connection before it is the sender's own) to when the answer came, i.e. less
        # the time the sender's loop was noted late meanwhile (an answer that came waited
        # that long to be read). The send time is when the request went on the wire.
        load = STATE.sender
        on_wire = wire[0]
        load.waited(on_wire - t)
        lag = load.lag_within(on_wire, end) if end - on_wire >= LAG_NOTED_S else 0.0
        latency_ms = max(0.0, end - on_wire - lag) * 1000.0
        sent_at += on_wire - t
        if broke == _TIMEOUT and sent:
            if lag < timeout_s / 2:
                load.timed_out += 1
            else:
                load.timed_out_lagged += 1
        if len(body) > RESPONSE_EXCERPT_BYTES:  # the record keeps the excerpt only
            atoms = (sent, status, body[:RESPONSE_EXCERPT_BYTES], over_cap, start, broke, detail, timeout_s, cap)
        STATE.complete(token, (send.event.id, send.delivery_id, send.tags, number, event_id, sent_at, latency_ms,
                               atoms))
        answered = broke is None and not over_cap and status is not None
        failure = None
        if not answered:
            failure = AnswerFailure(f"answered {status} past the read cap" if over_cap else f"{NO_ANSWER}{broke}")
        elif status is not None and status >= 400:
            failure = AnswerFailure(f"answered {status}")
        # Locust's own statistics (console, CSV, `hookproof storm`'s progress) count an
        # answer of 400 or more, or none, as a failure; the history is what the checks read.
        name = STATE.type_name(send.event.type)
        handlers = self._request_event._handlers
        if len(handlers) == 1 and handlers[0] is self._runner_listener:
            # the runner's own listener alone: what it does, without the event's dispatch
            stats = self._stats
            # a float, as the runner's listener passes the event's response time on (Locust hints an int)
            stats.log_request(METHOD, name, latency_ms, len(body))  # type: ignore[arg-type]
            if failure is not None:
                stats.log_error(METHOD, name, failure)
        else:
            self._request_event.fire(request_type=METHOD, name=name, response_time=latency_ms,
                                     response_length=len(body), exception=failure, context={}, response=None,
                                     url=self.spec.target_url, start_time=sent_at)
        return None if answered and status is not None and self.profile.is_success(status) else event_id

    def _signed(self, envelope: Envelope) -> SignedRequest:
        """`envelope` signed now (unix seconds). Copies released together (a burst) share one
        signed request: the same envelope signed at the same second gives the same bytes."""
        now = int(time.time())
        last = self.last_signed
        if last is not None and last[0] is envelope and last[1] == now:
            return last[2]
        request = self.profile.request(envelope, STATE.secrets, now)
        self.last_signed = (envelope, now, request)
        return request

    def _exchange(self, envelope: Envelope, wire: list[float]) -> ObservedAtoms:
        """POST `envelope`, signed once a connection is had (`_signed`), on the user's own
        connections; what was observed (`loadtests.exchange`: at most `READ_CAP_BYTES` of the
        answer, within the sender timeout; ``wire[0]``: when the request went on the wire).

        Straight through the geventhttpclient client the FastHttpUser pooled for the
        target (its connection and network timeouts, `concurrency` connections), not
        Locust's `FastHttpSession.request`: a provider follows no redirects and keeps no
        cookies, the URL is parsed once per user, and the answer is read up to the cap
        (bench/storm_throughput.py: the session's layers cost more than signing).
        """
        if self._http is None:
            url = GeventURL(self.spec.target_url)
            self._http = self.client.client.clientpool.get_client(url)
            # geventhttpclient's own User-Agent (python/gevent-http-client-…) is not the provider's:
            # only a profile's is sent, as certify and send send it
            self._http.default_headers.discard("User-Agent")
            self._uri = getattr(url, "quoted_uri", url.request_uri)
        uri = self._uri
        if envelope.query:
            uri += ("&" if "?" in uri else "?") + urlencode(dict(envelope.query))
        return exchange(self._http, uri, lambda: self._signed(envelope), read_cap_bytes=READ_CAP_BYTES,
                        timeout_s=self.spec.sender_timeout_s, wire=wire)


def runner_logs_only(environment: Environment) -> bool:
    """True when the only listener of `environment`'s request event is the runner's own
    (`locust.runners.Runner`'s ``on_request``: `RequestStats.log_request`, then
    `log_error` for an exception), so logging to `environment.stats` directly records
    exactly what firing the event would. A user checks the listeners again per attempt:
    with another listener added later it fires the event."""
    handlers = environment.events.request._handlers
    return (len(handlers) == 1 and getattr(handlers[0], "__qualname__", "") == "Runner.__init__.<locals>.on_request"
            and environment.stats is not None)


#: The method of every delivery (`SignedRequest.method`: providers POST), as Locust's statistics name it.
METHOD = "POST"

#: How an attempt that got no answer (a timeout, a connection cut) starts its `AnswerFailure`,
#: which the progress line counts apart (`storm_master.unanswered`).
NO_ANSWER = "no answer: "


class AnswerFailure(Exception):
    """What Locust's statistics count as a failed request: an answer of 400 or more, or
    one past the read cap (the history records the attempt in full)."""
