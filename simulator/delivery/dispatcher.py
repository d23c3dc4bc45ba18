"""The at-least-once dispatcher: runs a schedule, retries per the profile, records history.

One code path for URLs and in-process ASGI/WSGI apps: httpx's API is the seam. URL
attempts go straight to the own transport's engine (`AiohttpTransport.open`, the one
under its httpx API; the client layer and the httpx request and response objects add
nothing a provider needs), or as `httpx.Request`s to another client's transport;
in-process ones through an httpx client on httpx's own ASGI/WSGI transports. Every
attempt to a URL is bounded in time and size: at most `connect_timeout_s` to open the
connection, then at most the sender timeout for the whole answer, status line, headers
and body together, as a provider waits: a receiver that drips its answer byte by byte is
cut off like one that never answers. At most `read_cap_bytes` of the body are read: an
answer whose body goes past the cap (a flood, an endless stream) is abandoned and
recorded as `unknown`, never as acknowledged. Redirects are not followed (a provider
does not) and are recorded as rejections. What each attempt observed is graded by the
attempt core (`attempt_core.grade`), as the race transport's and the storm's attempts
are. 2xx (the profile's success) stops retries; everything else, 409 included, is
retried on the profile's schedule scaled by `time_scale`, while signature timestamps
stay real wall-clock time.
"""

from __future__ import annotations

import asyncio
import errno
import math
import time
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, AsyncIterable, Callable, Mapping, Sequence

import httpx
from yarl import URL

from hookproof.simulator.delivery.aiohttp_transport import (
    ANSWER_START,
    MAPPED_ERRORS,
    AiohttpTransport,
    WireExchange,
    httpx_error,
)
from hookproof.simulator.delivery.attempt_core import READ_CAP_BYTES, Broke, Observed, grade, retry_delay_s
from hookproof.simulator.delivery.deadlines import Deadline, Deadlines
from hookproof.simulator.delivery.history import Attempt, Completion, History, Outcome
from hookproof.simulator.delivery.mutations import build_attempt, envelope_of
from hookproof.simulator.delivery.transports import Target, in_process_request, in_process_transport, make_client
from hookproof.simulator.faults import REPLAY_TAG, Delivery, Mutation, Schedule, is_valid
from hookproof.simulator.profiles.base import Envelope, Profile, SignedRequest
from hookproof.simulator.secret_forms import masker_for

if TYPE_CHECKING:
    from hookproof.simulator.delivery.race_io import Gate

_ACKED = Outcome.ACKED
#: Default time factor: a 3-day retry schedule runs in about 3 seconds.
TIME_SCALE = 1e-5
#: Signed headers a dispatcher keeps at most for reuse within one second (`Dispatcher._signed_headers`).
SIGNED_KEPT = 16384


@dataclass
class DeliveryResult:
    """The attempts of one delivery, in order."""

    delivery: Delivery
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def acked(self) -> bool:
        return any(a.outcome is Outcome.ACKED for a in self.attempts)


class Dispatcher:
    """Delivers schedules to a target, at least once, recording every attempt.

    Args:
        target: where to deliver.
        profile: signs and envelopes; gives the retry schedule and sender timeout.
        secrets: the receiver's secrets (never recorded anywhere: every form of each is masked
            in the answer excerpts and reasons the history keeps, `simulator.secret_forms`).
        history: where attempts are recorded.
        time_scale: factor applied to the profile's retry delays (1.0 = real time).
        max_attempts: attempts per delivery at most (default: 1 + the schedule's length).
        retries: False to make one attempt per delivery.
        connect_timeout_s: seconds to open a connection.
        sender_timeout_s: seconds to wait for each answer, instead of the profile's
            (None: the profile's). An injected timeout fault still wins.
        read_cap_bytes: bytes of each answer read at most.
        scenario: label recorded with each attempt.
        clock: wall clock in unix seconds (signature timestamps and history times).
        client: an httpx client to use instead of making one (not closed by `aclose`).
    """

    def __init__(
        self,
        target: Target,
        profile: Profile,
        secrets: Sequence[str],
        history: History,
        *,
        time_scale: float = TIME_SCALE,
        max_attempts: int | None = None,
        retries: bool = True,
        connect_timeout_s: float = 5.0,
        sender_timeout_s: float | None = None,
        read_cap_bytes: int = READ_CAP_BYTES,
        scenario: str = "",
        clock: Callable[[], float] = time.time,
        client: httpx.AsyncClient | None = None,
        seed: int = 0,
    ) -> None:
        self.target = target
        self.profile = profile
        self._secrets = tuple(secrets)
        self._mask = masker_for(self._secrets)  # a receiver's answer may quote a secret: never recorded
        self.history = history
        self.time_scale = time_scale
        self.max_attempts = max_attempts if max_attempts is not None else 1 + len(profile.retry_schedule_s)
        if not retries:
            self.max_attempts = 1
        self.connect_timeout_s = connect_timeout_s
        if sender_timeout_s is not None and not 0 < sender_timeout_s < math.inf:
            raise ValueError(f"sender_timeout_s must be > 0 seconds and finite, got {sender_timeout_s!r}")
        self.sender_timeout_s = sender_timeout_s
        self.read_cap_bytes = read_cap_bytes
        self.scenario = scenario
        self.clock = clock
        self.seed = seed
        self._own_client = client is None
        # URL targets are sent straight through the transport (httpx's transport API):
        # the client layer adds nothing a provider needs (no redirects, cookies, auth)
        # and would cost a quarter of the throughput (bench/dispatcher_throughput.py).
        self._transport = AiohttpTransport() if client is None and target.app is None else None
        self._url = httpx.URL(target.endpoint) if self._transport is not None else None
        self._wire_url = URL(str(self._url)) if self._url is not None else None
        # httpx's ``timeout`` extension for the own transport: opening or acquiring a
        # connection has the connect timeout (aiohttp counts pool waits as connecting);
        # reads and writes have none of their own, the attempt's deadline bounds the
        # whole answer (a per-read timer re-armed on every read cost 5% of throughput).
        self._timeout_extension: dict[str, float | None] = {
            "connect": connect_timeout_s, "read": None, "write": None, "pool": connect_timeout_s}
        self._client_timeout = (self._transport.client_timeout(self._timeout_extension)
                                if self._transport is not None else None)
        self._event_types: dict[str, str] = {}
        #: The headers signed in the second `_signed_at`, per event id, and the envelope each signed
        #: (`_signed_headers`; two dicts, not a pair per event kept for the second).
        self._signed: dict[str, list[tuple[str, str]]] = {}
        self._signed_envelopes: dict[str, Envelope] = {}
        self._signed_at = -1
        # In-process apps are sent to through their transport directly (`in_process_request`:
        # the request the client would build, without its send path); a given client is used as it is.
        self._in_process = in_process_transport(target.app) if client is None and target.app is not None else None
        self._in_process_url = httpx.URL(target.endpoint) if self._in_process is not None else None
        # An in-process app sent to through its transport needs no client of its own: only the
        # default headers a client would send (`in_process_request`), the same for every
        # client, taken from one made once (a client per dispatcher was a tenth of an explore
        # example's set-up). Closing such a client closed only the transport, which holds nothing.
        self.client = client if client is not None or self._transport is not None or self._in_process is not None \
            else make_client(target, connect_timeout_s=connect_timeout_s)
        self._defaults = _header_defaults() if self.client is None and self._in_process is not None else None
        self._background: set[asyncio.Task[object]] = set()
        self._deadlines = Deadlines()

    def __repr__(self) -> str:  # never shows the secrets
        return f"Dispatcher(target={self.target.describe()!r}, profile={self.profile.name!r})"

    async def __aenter__(self) -> "Dispatcher":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self, *, drain_s: float = 5.0) -> None:
        """Wait (at most `drain_s`) for in-process requests the provider gave up on, then close."""
        if self._background:
            await asyncio.wait(self._background, timeout=drain_s)
            for t in self._background:
                t.cancel()
        if self._own_client and self.client is not None:
            await self.client.aclose()
        if self._transport is not None:
            await self._transport.aclose()
        self._deadlines.close()

    async def run(self, schedule: Schedule, *, race: bool = False, deadline_s: float | None = None,
                  gate: Gate | None = None) -> list[DeliveryResult]:
        """Run every step in order; a step's deliveries are released together.

        With `race`, a burst's first attempts to a URL go out byte-synchronised
        (`simulator.delivery.race`: HTTP/2 single packet when the target speaks h2c,
        HTTP/1.1 last-byte sync otherwise); otherwise as concurrent requests. Retries
        then follow the schedule one by one. Stops starting new steps after
        `deadline_s` seconds. `gate` holds the first step: a raced burst is pre-sent and
        released once `gate()` is done (`race.race`), any other step sent after it.
        """
        results: list[DeliveryResult] = []
        started = time.monotonic()
        for step in schedule.steps:
            if deadline_s is not None and time.monotonic() - started > deadline_s:
                break
            if step.wait_s:
                await asyncio.sleep(step.wait_s)
            raced = step.burst and race and not self.target.in_process
            if gate is not None and not raced:
                await gate()
            if raced:
                results.extend(await self._race(step.deliveries, gate))
            elif step.burst:
                results.extend(await asyncio.gather(*(self.deliver(d) for d in step.deliveries)))
            else:
                results.append(await self.deliver(step.deliveries[0]))
            gate = None
        return results

    async def deliver(self, delivery: Delivery, *, result: DeliveryResult | None = None) -> DeliveryResult:
        """Attempt `delivery` until acked or the retry schedule is exhausted.

        With `result`, continue a delivery whose first attempts were already made.
        """
        if result is None:  # made once the first attempt is recorded: nothing more in flight meanwhile
            result = DeliveryResult(delivery, [await self.attempt(delivery, 1)])
        attempts = result.attempts
        number = len(attempts)
        while True:
            if attempts:
                outcome = attempts[-1].outcome
                if outcome is _ACKED:  # what `retry_delay_s` decides first
                    return result
                delay = retry_delay_s(outcome, number, schedule_s=self.profile.retry_schedule_s,
                                      max_attempts=self.max_attempts, time_scale=self.time_scale)
                if delay is None:
                    return result
                await asyncio.sleep(delay)
            number += 1
            attempts.append(await self.attempt(delivery, number))

    async def _race(self, deliveries: Sequence[Delivery], gate: Gate | None = None) -> list[DeliveryResult]:
        from hookproof.simulator.delivery.race import RaceRequest, race

        now = self.clock()
        built = [build_attempt(self.profile, d.event, self._secrets, d.mutations(1), now=int(now), attempt=1,
                               seed=self.seed) for d in deliveries]
        timeout_s = deliveries[0].timeout_for(1) or self.attempt_timeout_s(1)
        requests = [RaceRequest("POST", _path_query(self.target.endpoint, b.request.query), dict(b.request.headers),
                                b.request.body) for b in built]
        t0 = time.perf_counter()
        answers = await race(self.target.endpoint, requests, timeout_s=timeout_s, read_cap_bytes=self.read_cap_bytes,
                             gate=gate)
        results = []
        for d, b, r in zip(deliveries, built, answers):
            latency_ms = (r.answered_at - r.sent_at) * 1000.0 if r.status is not None else (time.perf_counter() - t0) * 1000
            record = self._record(d, 1, b.event_id, b.mutations, r.observed, r.sent_at, latency_ms)
            results.append(DeliveryResult(d, [record]))
        return list(await asyncio.gather(*(self.deliver(r.delivery, result=r) for r in results)))

    async def attempt(self, delivery: Delivery, number: int) -> Attempt:
        """Send one attempt of `delivery` and record it.

        An attempt without mutations to a URL goes the short way: the event's envelope
        (rendered once per event object, `envelope_of`) with its headers signed now
        (`Profile.request_headers`, the pairs `Profile.request` would give) is handed to
        the own transport as it is, with no request object around it; the same bytes
        go out and the same record is kept as on the general way (`build_attempt`).
        """
        event = delivery.event
        mutations = delivery.mutations_first if number == 1 else delivery.mutations_retry
        now = self.clock()
        injected = None if delivery.sender_timeout_s is None else delivery.timeout_for(number)
        timeout_s = injected or (self.sender_timeout_s if self.sender_timeout_s is not None
                                 else self.profile.attempt_timeout_s(number))  # `attempt_timeout_s`
        if not mutations and self._transport is not None:
            envelope = envelope_of(self.profile, event)
            headers = self._signed_headers(envelope, int(now))
            if headers is not None:  # else the general way (httpx's error for non-ASCII)
                event_id = envelope.event_id
                t0 = time.perf_counter()
                answer = await self._send_bounded(None, timeout_s, "POST", headers, envelope.body, envelope.query)
                return self._finish(delivery, number, event_id, (), answer, injected, now, t0)
        built = build_attempt(self.profile, event, self._secrets, mutations, now=int(now), attempt=number, seed=self.seed)
        t0 = time.perf_counter()
        if not self.target.in_process:
            request = built.request
            headers = _wire_headers(request.headers) if self._transport is not None else None
            answer = await self._send_bounded(request, timeout_s, request.method, headers, request.body, request.query)
        elif injected is not None:
            answer = await self._send_in_process(built.request, self.attempt_timeout_s(number))
        else:
            answer = await self._send_in_process(built.request, timeout_s)
        return self._finish(delivery, number, built.event_id, built.mutations, answer, injected, now, t0)

    def _finish(self, delivery: Delivery, number: int, event_id: str, mutations: tuple[Mutation, ...],
                answer: Observed, injected: float | None, now: float, t0: float) -> Attempt:
        """Record attempt `number` of `delivery` sent at `now` (`t0` on the perf counter)
        that observed `answer`, under an injected timeout `injected` (or None)."""
        if (injected is not None and (self.target.in_process or number <= delivery.timeouts)
                and answer.broke is None and answer.status is not None):
            # A timeout fault (the first `timeouts` attempts) is certain: a receiver that
            # answered within it (a fast one on loopback, or in process) still loses its
            # answer, the provider has given up. `timeouts=0` is a sender-timeout setting.
            answer = Observed(True, broke=Broke.TIMEOUT, timeout_s=injected)
        latency_ms = (time.perf_counter() - t0) * 1000.0
        return self._record(delivery, number, event_id, mutations, answer, now, latency_ms)

    def _signed_headers(self, envelope: Envelope, timestamp: int) -> list[tuple[str, str]] | None:
        """``profile.request_headers(envelope, secrets, timestamp)`` when they are ASCII
        strings (`_ascii_pairs`: what the own transport sends), else None (the general way).

        Made once per envelope and second: the headers are a function of those three
        alone (the signature of the same body at the same timestamp under the same
        secrets), so the copies of one event sent in one second (a burst of duplicates, a
        redelivery close behind) reuse the checked headers of the first, the same bytes.
        Only the current second's are kept, `SIGNED_KEPT` at most (a clock that stands still)."""
        signed = self._signed
        if timestamp != self._signed_at or len(signed) >= SIGNED_KEPT:
            signed.clear()
            self._signed_envelopes.clear()
            self._signed_at = timestamp
        event_id = envelope.event_id
        if self._signed_envelopes.get(event_id) is envelope:
            return signed[event_id]
        headers = self.profile.request_headers(envelope, self._secrets, timestamp)
        if headers is None or not _ascii_pairs(headers):
            return None
        signed[event_id] = headers
        self._signed_envelopes[event_id] = envelope
        return headers

    def attempt_timeout_s(self, number: int) -> float:
        """The sender timeout of attempt `number`: the run's, else the profile's."""
        return self.sender_timeout_s if self.sender_timeout_s is not None else self.profile.attempt_timeout_s(number)

    def _record(self, delivery: Delivery, number: int, event_id: str, mutations: tuple[Mutation, ...],
                answer: Observed, sent_at: float, latency_ms: float) -> Attempt:
        event = delivery.event
        graded = grade(answer, self.profile)
        outcome, completion = graded.outcome, graded.completion
        tags = delivery.tags
        if event.extra and REPLAY_TAG not in tags and self.profile.replay_of(event):  # a new delivery entity
            tags = (*tags, REPLAY_TAG)
        if number <= delivery.drop_responses and graded.status is not None:
            outcome, completion = Outcome.DROPPED, Completion.UNKNOWN
            if "drop-response" not in tags:
                tags = (*tags, "drop-response")
        valid = is_valid(mutations, self.profile) if mutations else True
        event_type = self._event_types.get(event.type) or self._event_type(event.type)
        excerpt, reason = graded.excerpt, graded.reason
        # every field in order, built at its index with its row (`History.record_new`)
        return self.history.record_new(
            event_id, delivery.delivery_id, number, event.business_key, event.object_id, event.version,
            event_type, tags if type(tags) is tuple else tuple(tags), valid, sent_at, sent_at + latency_ms / 1000.0,
            graded.status, outcome, completion, round(latency_ms, 3), self._mask(excerpt) if excerpt else excerpt,
            self._mask(reason) if reason else None, event.amount,
            self.scenario,
        )

    def _event_type(self, stripe_type: str) -> str:
        """The profile's name for `stripe_type` (or `stripe_type` itself), looked up once."""
        name = self._event_types.get(stripe_type)
        if name is None:
            name = self._event_types[stripe_type] = self.profile.provider_type(stripe_type) or stripe_type
        return name

    async def _send_in_process(self, request: SignedRequest, timeout_s: float) -> Observed:
        """One exchange with an in-process app, which keeps running after the provider
        gives up, as a real server would.

        The exchange runs as its own task; the attempt waits for it on one future that
        either its end or a timer at `timeout_s` seconds resolves (what
        ``wait_for(shield(task), timeout_s)`` does, without shield's and wait_for's own
        futures, callbacks and loop turns). An answer that came by the time the wait ends
        is taken; otherwise the attempt timed out and the exchange is kept, unfinished, in
        `_background` (`aclose` waits for it). A cancelled attempt leaves the exchange
        running, as `shield` did."""
        loop = asyncio.get_running_loop()
        task = loop.create_task(self._exchange(request, timeout_s, _Exchange()))
        waiter: asyncio.Future[None] = loop.create_future()
        task.add_done_callback(partial(_wake, waiter))
        timer = loop.call_later(timeout_s, _wake, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
        if task.done():
            return task.result()
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return Observed(True, broke=Broke.TIMEOUT, timeout_s=timeout_s)

    async def _send_bounded(self, request: SignedRequest | None, timeout_s: float, method: str,
                            headers: list[tuple[str, str]] | None, body: bytes, query: Mapping[str, str]) -> Observed:
        """One exchange over the network under one deadline: `connect_timeout_s` until the
        connection is open, then the sender timeout from that moment, covering the status
        line, headers and the whole body.

        With `headers` (ASCII pairs, in order), the `method` request of `body` goes to the
        target URL (`query` appended) through the own transport's engine
        (`AiohttpTransport.open`) and is read here, without an `httpx.Request` and an
        `httpx.Response` around it (`request` may be None then); aiohttp's errors are
        raised as the transport raises them (`httpx_error`, chained), so each one is
        graded as through httpx. Without `headers`, `request` goes through httpx's
        transport API (`_exchange`). The own transport bounds getting a connection with
        the connect timeout and reports the moment it is open
        (`_Exchange.connected_now`; the ``trace`` extension through httpx's API), so the
        deadline is armed then, once. Another client's transport may not report it:
        there the deadline starts armed at the connect timeout plus the answer's.
        """
        exchange = _Exchange(timeout_s)
        first = None
        if self._transport is None:
            first = asyncio.get_running_loop().time() + self.connect_timeout_s + timeout_s
        try:
            with Deadline(self._deadlines, first) as deadline:  # `Deadlines.at`
                exchange.deadline = deadline
                if headers is None:
                    assert request is not None
                    return await self._exchange(request, timeout_s, exchange)
                transport, url, cap = self._transport, self._wire_url, self.read_cap_bytes
                assert transport is not None and url is not None and self._client_timeout is not None
                if query:
                    url = transport.wire_url(self._url.copy_merge_params(query))  # type: ignore[union-attr]
                try:
                    try:
                        response = await transport.open(method, url, headers, body, self._client_timeout,
                                                        exchange=exchange)
                        content = response.content
                        if content.is_eof():  # the whole body came with the head: the connection goes back at once
                            try:
                                return self._answer(response.status, content.read_nowait())
                            finally:
                                response.release()
                        exchange.status = response.status
                    except MAPPED_ERRORS as exc:
                        raise httpx_error(exc) from exc
                    try:
                        read = exchange.body
                        try:
                            while chunk := await content.readany():
                                read += chunk
                                if len(read) > cap:
                                    break
                        except MAPPED_ERRORS as exc:
                            raise httpx_error(exc) from exc
                        return self._answer(response.status, read)
                    finally:
                        response.release()
                        await response.wait_for_close()
                except Exception as exc:  # the one boundary where transport errors are translated
                    return translate_error(exc, start=bytes(exchange.start), status=exchange.status,
                                           body=bytes(exchange.body[:cap]), timeout_s=timeout_s)
        except TimeoutError:
            if exchange.status is not None:
                return Observed(True, exchange.status, bytes(exchange.body), broke=Broke.TIMEOUT, timeout_s=timeout_s)
            if not exchange.connected and self._own_client:
                return Observed(False, broke=Broke.CONNECT_TIMEOUT, detail=f"{self.connect_timeout_s:g}")
            return Observed(True, answer_start=bytes(exchange.start), broke=Broke.TIMEOUT, timeout_s=timeout_s)

    async def _exchange(self, request: SignedRequest, timeout_s: float, exchange: "_Exchange") -> Observed:
        try:
            if self._transport is not None:  # headers httpx refuses: its error, as before
                response = await self._transport.handle_async_request(self._outgoing(request, exchange))
                stream = response.stream
                if isinstance(stream, httpx.SyncByteStream):  # the body came whole: nothing to release
                    return self._answer(response.status_code, b"".join(stream))
                try:
                    return await self._read(response, stream, exchange)
                finally:
                    await response.aclose()
            if self._in_process is not None and self._in_process_url is not None:
                url = (self._in_process_url.copy_merge_params(request.query) if request.query
                       else self._in_process_url)
                defaults = self._defaults if self._defaults is not None else self.client
                assert defaults is not None
                response = await self._in_process.handle_async_request(in_process_request(
                    defaults, request.method, url, request.headers, request.body, {"trace": exchange.on_trace}))
                try:
                    return await self._read(response, response.stream, exchange)  # type: ignore[arg-type]
                finally:
                    await response.aclose()
            assert self.client is not None
            timeout = httpx.Timeout(timeout_s, connect=self.connect_timeout_s, pool=self.connect_timeout_s)
            async with self.client.stream(
                request.method, self.target.endpoint, params=dict(request.query) or None, headers=dict(request.headers),
                content=request.body, timeout=timeout, extensions={"trace": exchange.on_trace},
            ) as response:
                return await self._read(response, response.aiter_raw(), exchange)
        except Exception as exc:  # the one boundary where transport errors are translated
            return translate_error(exc, start=bytes(exchange.start), status=exchange.status,
                                   body=bytes(exchange.body[:self.read_cap_bytes]), timeout_s=timeout_s)

    def _outgoing(self, request: SignedRequest, exchange: "_Exchange") -> httpx.Request:
        """`request` as an `httpx.Request` for the own transport: the URL parsed once per
        dispatcher (the profile's query appended to the target URL's own), the body as a
        stream so httpx adds nothing; ``Host`` and ``Content-Length`` come from the URL and
        the body on the wire, as with httpx."""
        assert self._url is not None
        url = self._url.copy_merge_params(request.query) if request.query else self._url
        return httpx.Request(request.method, url, headers=request.headers, stream=httpx.ByteStream(request.body),
                             extensions={"timeout": self._timeout_extension, "trace": exchange.on_trace,
                                         ANSWER_START: exchange.start})

    async def _read(self, response: httpx.Response, chunks: AsyncIterable[bytes], exchange: "_Exchange") -> Observed:
        """The answer's status and at most `read_cap_bytes` of its body (`chunks`)."""
        exchange.status = response.status_code
        body = exchange.body
        async for chunk in chunks:
            body += chunk
            if len(body) > self.read_cap_bytes:
                break
        return self._answer(response.status_code, body)

    def _answer(self, status: int, body: bytes | bytearray) -> Observed:
        """`status` with `body`; a body past the read cap is abandoned (cut to the cap)."""
        cap = self.read_cap_bytes
        if len(body) > cap:
            return Observed(True, status, bytes(body[:cap]), over_cap=True, read_cap_bytes=cap)
        return Observed(True, status, bytes(body))


_DEFAULTS: list[httpx.AsyncClient] = []


def _header_defaults() -> httpx.AsyncClient:
    """A client whose only use is its default headers (`in_process_request` reads them):
    made once, never sent through (its transport is never opened)."""
    if not _DEFAULTS:
        _DEFAULTS.append(make_client(Target(app=_no_app)))
    return _DEFAULTS[0]


async def _no_app(scope: object, receive: object, send: object) -> None:
    """The app of `_header_defaults`'s client: never called."""
    raise RuntimeError("the header defaults' client is never sent through")


def _wake(waiter: "asyncio.Future[None]", *_: object) -> None:
    """Resolve `waiter` unless it is done (the exchange's end and its timer both call this)."""
    if not waiter.done():
        waiter.set_result(None)


class _Exchange(WireExchange):
    """One exchange's deadline and progress: whether its connection is open, the first
    bytes of the answer (filled by the own transport, which sees the exchange as its
    `WireExchange`), the status line, and the body bytes read so far."""

    __slots__ = ("body", "budget_s", "connected", "deadline", "status")
    start: bytearray  # always one here

    def __init__(self, budget_s: float | None = None) -> None:
        self.start = bytearray()
        self.trace = None
        self.request = None
        self.reused = False
        self.answered = False
        self.budget_s = budget_s
        self.deadline: Deadline | None = None
        self.connected = False
        self.status: int | None = None
        self.body = bytearray()

    async def on_trace(self, event: str, info: Mapping[str, object]) -> None:
        """httpx's ``trace`` extension: once the request has its connection, the deadline
        becomes `budget_s` from now."""
        if event.endswith("send_request_headers.started"):
            self.connected_now()

    def connected_now(self) -> None:
        """The request has its connection (the first time it is called): the deadline
        becomes `budget_s` from now."""
        if not self.connected:
            self.connected = True
            if self.deadline is not None and self.budget_s is not None:
                self.deadline.reschedule(asyncio.get_running_loop().time() + self.budget_s)


def translate_error(exc: BaseException, *, start: bytes = b"", status: int | None = None, body: bytes = b"",
                    timeout_s: float | None = None) -> Observed:
    """What an exchange that raised `exc` (an httpx/aiohttp exception) observed.

    `start` is the answer's first bytes, `status` and `body` what was read of the answer
    before `exc` (the status once its head came), `timeout_s` the sender timeout. Looks through the exception's cause
    chain (the own transport raises httpx's exceptions from aiohttp's; another client's
    transport may map them loosely, e.g. a reset to `httpx.ConnectTimeout`), most
    specific first. Connection refused, DNS failure and connect timeouts are known not
    to have reached the handler (`request_sent=False`); everything after the connection
    was open is treated as possibly delivered. Plain words come from `attempt_core.grade`.
    """
    import aiohttp
    from aiohttp import http_exceptions

    chain = _chain(exc)

    def find(*types: type[BaseException]) -> BaseException | None:
        return next((e for e in chain if isinstance(e, types)), None)

    def sent(broke: Broke, detail: str | None = None) -> Observed:
        return Observed(True, status, body, answer_start=start, broke=broke, detail=detail, timeout_s=timeout_s)

    if (connector := find(aiohttp.ClientConnectorError)) is not None or isinstance(exc, httpx.ConnectError):
        cause = connector or exc
        os_error = getattr(cause, "os_error", None)
        if isinstance(os_error, ConnectionRefusedError) or find(ConnectionRefusedError) is not None:
            return Observed(False, broke=Broke.REFUSED)
        if isinstance(os_error, ConnectionResetError) or getattr(os_error, "errno", None) == errno.ECONNRESET:
            return Observed(False, broke=Broke.RESET)
        reason = getattr(os_error, "strerror", None) or _short(cause)
        return Observed(False, broke=Broke.CONNECT_FAILED, detail=reason)
    if find(aiohttp.ConnectionTimeoutError) is not None or (
            isinstance(exc, httpx.ConnectTimeout) and find(aiohttp.ClientConnectionError) is None):
        return Observed(False, broke=Broke.CONNECT_TIMEOUT)
    if find(aiohttp.ServerDisconnectedError) is not None:
        return sent(Broke.CLOSED)
    if (payload := find(aiohttp.ClientPayloadError)) is not None:
        reset = find(ConnectionResetError) is not None or "reset" in str(payload).lower()
        return sent(Broke.RESET if reset else Broke.CLOSED)
    if find(aiohttp.ClientResponseError, http_exceptions.HttpProcessingError) is not None:
        return sent(Broke.INVALID)
    if find(ConnectionResetError) is not None:
        return sent(Broke.RESET)
    if isinstance(exc, httpx.TimeoutException) or find(TimeoutError, aiohttp.ServerTimeoutError) is not None:
        return sent(Broke.TIMEOUT)
    if (broken := find(aiohttp.ClientOSError, aiohttp.ClientConnectionError, ConnectionError, OSError)) is not None:
        if getattr(broken, "errno", None) == errno.ECONNRESET:
            return sent(Broke.RESET)
        if getattr(broken, "errno", None) == errno.EPIPE or isinstance(broken, BrokenPipeError):
            return sent(Broke.CLOSED)
        return sent(Broke.OTHER, _short(broken))
    cause = exc.__cause__ or exc
    return sent(Broke.OTHER, f"{type(cause).__name__}: {_short(cause)}")


def _wire_headers(headers: Mapping[str, str]) -> list[tuple[str, str]] | None:
    """`headers` as the own transport sends them (names in their case, in order), or None
    when one is not an ASCII string: httpx's route refuses those with its own error."""
    items = list(headers.items())
    for name, value in items:
        if type(name) is not str or type(value) is not str or not (name.isascii() and value.isascii()):
            return None
    return items


def _ascii_pairs(headers: list[tuple[str, str]]) -> bool:
    """True when every name and value in `headers` is an ASCII string (what the own
    transport sends; see `_wire_headers`): joined in one string, checked at once."""
    try:
        return "".join(map("".join, headers)).isascii()
    except TypeError:  # a name or value that is not a string
        return False


def _chain(exc: BaseException, depth: int = 6) -> list[BaseException]:
    """`exc` and its causes/contexts, nearest first (bounded; cycles stop it)."""
    out: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(out) < depth and current not in out:
        out.append(current)
        current = current.__cause__ or current.__context__
    return out


def _short(exc: object) -> str:
    """One line of at most 160 characters: the first line of the message, whitespace
    collapsed, and "?" for what is not Unicode (a receiver's undecodable bytes quoted by
    a lenient HTTP parser)."""
    text = (str(exc) or type(exc).__name__).encode("utf-8", "replace").decode("utf-8")
    first = " ".join(text.strip().splitlines()[0].split()) if text.strip() else type(exc).__name__
    first = first.rstrip(":")
    return first if len(first) <= 160 else first[:157] + "..."


def _path_query(url: str, query: Mapping[str, str]) -> str:
    """The path and query of `url` with `query` appended (for raw race requests)."""
    from urllib.parse import urlencode, urlsplit

    parts = urlsplit(url)
    path = parts.path or "/"
    q = "&".join(filter(None, [parts.query, urlencode(dict(query)) if query else ""]))
    return f"{path}?{q}" if q else path
