"""The dispatcher against a real uvicorn receiver on 127.0.0.1: exact attempt counts."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from dataclasses import replace

import pytest
import stripe
from fastapi import FastAPI, Request, Response

from hookproof.simulator.delivery import Completion, Dispatcher, History, Outcome, Target
from hookproof.simulator.faults import FaultPlan, Mutation, schedule
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.serving import serve_app
from hookproof.simulator.world import World, emit_events, events_of_type, new_world

SECRET = "whsec_dispatcher_test_secret"


class CountingReceiver:
    """Verifies with stripe's SDK; counts requests per event id; scripted slow/409 answers."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.rejected = 0
        self.slow_first_s = 0.0
        self.conflict_first = False
        self.lock = threading.Lock()
        self.app = FastAPI()
        self.app.post("/webhooks")(self.handle)

    async def handle(self, request: Request) -> Response:
        body = await request.body()
        try:
            event = stripe.Webhook.construct_event(body, request.headers.get("stripe-signature", ""), SECRET)
        except (stripe.SignatureVerificationError, ValueError):
            with self.lock:
                self.rejected += 1
            return Response(status_code=400)
        with self.lock:
            self.requests[event["id"]] += 1
            n = self.requests[event["id"]]
        if n == 1 and self.slow_first_s:
            await asyncio.sleep(self.slow_first_s)
        if n == 1 and self.conflict_first:
            return Response(status_code=409)
        return Response(status_code=200, content=b'{"received":true}', media_type="application/json")


@pytest.fixture
def receiver():
    r = CountingReceiver()
    with serve_app(r.app) as served:
        r.url = served.url + "/webhooks"  # type: ignore[attr-defined]
        yield r


def _events(n: int = 1):
    return events_of_type(World(11), "payment_intent.succeeded", n)


def _run(url: str, events, plan: FaultPlan, **kw) -> History:
    history = History()

    async def go() -> None:
        async with Dispatcher(Target(url=url), get_profile("stripe"), [SECRET], history, **kw) as d:
            await d.run(schedule(events, plan))

    asyncio.run(go())
    return history


def test_copies_are_delivered_one_after_another(receiver) -> None:
    events = _events(2)
    history = _run(receiver.url, events, FaultPlan(copies=3))
    assert dict(receiver.requests) == {e.id: 3 for e in events}
    assert [a.outcome for a in history] == [Outcome.ACKED] * 6
    assert [a.delivery_id.rsplit("_", 1)[1] for a in history] == ["1", "2", "3"] * 2


def test_concurrent_copies_all_arrive(receiver) -> None:
    events = _events(1)
    history = _run(receiver.url, events, FaultPlan(copies=8, concurrency=8))
    assert receiver.requests[events[0].id] == 8
    assert len(history) == 8 and all(a.completion is Completion.OK for a in history)


def test_dropped_responses_are_retried_until_acked(receiver) -> None:
    events = _events(1)
    history = _run(receiver.url, events, FaultPlan(drop_responses=2))
    assert receiver.requests[events[0].id] == 3
    assert [(a.attempt, a.outcome, a.completion) for a in history] == [
        (1, Outcome.DROPPED, Completion.UNKNOWN),
        (2, Outcome.DROPPED, Completion.UNKNOWN),
        (3, Outcome.ACKED, Completion.OK),
    ]
    assert all("drop-response" in a.faults for a in history)


def test_sender_timeout_gives_unknown_and_a_retry(receiver) -> None:
    receiver.slow_first_s = 1.0
    events = _events(1)
    started = time.monotonic()
    history = _run(receiver.url, events, FaultPlan(sender_timeout_s=0.3))
    assert time.monotonic() - started < 5
    assert [(a.attempt, a.outcome, a.completion) for a in history] == [
        (1, Outcome.TIMEOUT, Completion.UNKNOWN),
        (2, Outcome.ACKED, Completion.OK),
    ]
    assert receiver.requests[events[0].id] == 2


def test_conflict_is_retried_like_any_non_2xx(receiver) -> None:
    receiver.conflict_first = True
    events = _events(1)
    history = _run(receiver.url, events, FaultPlan())
    assert [(a.status, a.outcome) for a in history] == [(409, Outcome.REJECTED), (200, Outcome.ACKED)]


@pytest.mark.parametrize("mutation", [Mutation.FORGED, Mutation.MISSING_SIGNATURE, Mutation.WRONG_SECRET,
                                      Mutation.STALE_TIMESTAMP])
def test_invalid_signatures_are_rejected_and_retried_to_the_schedule(receiver, mutation: Mutation) -> None:
    events = _events(1)
    history = _run(receiver.url, events, FaultPlan(mutations=(mutation,)), max_attempts=3)
    assert receiver.rejected == 3 and not receiver.requests
    assert [(a.status, a.completion, a.valid) for a in history] == [(400, Completion.FAIL, False)] * 3


@pytest.mark.parametrize("mutation", [Mutation.FUTURE_TIMESTAMP, Mutation.ROTATION, Mutation.RESERIALIZE])
def test_valid_variants_are_accepted_by_the_official_verifier(receiver, mutation: Mutation) -> None:
    events = _events(1)
    history = _run(receiver.url, events, FaultPlan(mutations=(mutation,)))
    assert [(a.status, a.valid) for a in history] == [(200, True)]


def test_refused_connection_is_fail_and_exhausts_the_schedule() -> None:
    from hookproof.simulator.serving import free_port

    events = _events(1)
    history = _run(f"http://127.0.0.1:{free_port()}/webhooks", events, FaultPlan(), max_attempts=4)
    assert [(a.outcome, a.completion) for a in history] == [(Outcome.CONNECTION_ERROR, Completion.FAIL)] * 4
    assert history.attempts()[0].error == "connection refused: nothing listens there"


def test_in_process_asgi_and_real_http_take_the_same_path(receiver) -> None:
    events = _events(1)
    history = History()

    async def go() -> None:
        async with Dispatcher(Target(app=receiver.app), get_profile("stripe"), [SECRET], history) as d:
            await d.run(schedule(events, FaultPlan(copies=2, concurrency=2)))

    asyncio.run(go())
    assert receiver.requests[events[0].id] == 2
    assert [a.status for a in history] == [200, 200]


def test_history_on_disk_is_readable_after_close(tmp_path, receiver) -> None:
    from hookproof.simulator.delivery import load_history

    events = _events(2)
    path = tmp_path / "history.sqlite"
    history = History(path)

    async def go() -> None:
        async with Dispatcher(Target(url=receiver.url), get_profile("stripe"), [SECRET], history, scenario="s1") as d:
            await d.run(schedule(events, FaultPlan(copies=2)))

    asyncio.run(go())
    history.set_meta("profile", "stripe")
    history.close()
    reread = load_history(path)
    assert [a.event_id for a in reread] == [e.id for e in events for _ in range(2)]
    assert reread.meta() == {"profile": "stripe"}
    assert all(a.scenario == "s1" for a in reread)
    reread.close()


def test_race_burst_releases_every_copy_and_records_each(receiver) -> None:
    events = _events(1)
    history = History()

    async def go() -> None:
        async with Dispatcher(Target(url=receiver.url), get_profile("stripe"), [SECRET], history) as d:
            await d.run(schedule(events, FaultPlan(copies=6, concurrency=6)), race=True)

    asyncio.run(go())
    assert receiver.requests[events[0].id] == 6
    assert [(a.attempt, a.status, a.completion) for a in history] == [(1, 200, Completion.OK)] * 6
    assert len({a.delivery_id for a in history}) == 6


def test_a_profiles_query_is_appended_to_the_target_urls_own() -> None:
    lines: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        lines.append(head.split(b"\r\n", 1)[0])
        length = next(int(h.split(b":", 1)[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
        await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    async def go() -> History:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        profile = get_profile("mercadopago")
        history = History()
        async with server, Dispatcher(Target(url=f"http://127.0.0.1:{port}/webhooks?token=abc"), profile,
                                      [profile.generate_secret(1)], history) as d:
            await d.run(schedule(emit_events(new_world("mercadopago", 11), "payment.created"), FaultPlan()))
        return history

    history = asyncio.run(go())
    assert [a.status for a in history] == [200]
    path = lines[0].split(b" ")[1]
    assert path.startswith(b"/webhooks?token=abc&") and b"type=payment" in path and b"data.id=" in path


class _SlowApp:
    """An in-process ASGI app answering 200 after `delay_s`, noting when each request ended."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.finished: list[float] = []

    async def __call__(self, scope, receive, send) -> None:
        while (await receive()).get("more_body"):
            pass
        await asyncio.sleep(self.delay_s)
        self.finished.append(time.monotonic())
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})


def _one_in_process(app: _SlowApp, timeout_s: float, history: History, *, cancel_after_s: float | None = None,
                    linger_s: float = 0.0):
    """One attempt to `app` with the sender timeout `timeout_s` (cancelled after
    `cancel_after_s`, when given); (the attempt, or None when cancelled; when it returned;
    when the dispatcher had closed, `linger_s` seconds after that)."""
    event = _events(1)[0]
    delivery = schedule([event], FaultPlan()).steps[0].deliveries[0]

    async def go():
        d = Dispatcher(Target(app=app), get_profile("stripe"), [SECRET], history, sender_timeout_s=timeout_s)
        task = asyncio.ensure_future(d.attempt(delivery, 1))
        if cancel_after_s is not None:
            await asyncio.sleep(cancel_after_s)
            task.cancel()
        try:
            attempt = await task
        except asyncio.CancelledError:
            attempt = None
        returned = time.monotonic()
        await asyncio.sleep(linger_s)
        await d.aclose(drain_s=5.0)
        return attempt, returned, time.monotonic()

    return asyncio.run(go())


def test_an_in_process_answer_in_time_is_acked() -> None:
    app = _SlowApp(0.01)
    attempt, _, _ = _one_in_process(app, 2.0, History())
    assert attempt is not None
    assert (attempt.outcome, attempt.completion, attempt.status) == (Outcome.ACKED, Completion.OK, 200)
    assert len(app.finished) == 1


def test_an_in_process_app_keeps_running_after_the_sender_gives_up() -> None:
    """The attempt ends at the sender timeout as an unknown timeout; the app's request runs
    on to its end, and closing the dispatcher waits for it, as a real server would."""
    app = _SlowApp(0.3)
    history = History()
    attempt, returned, closed = _one_in_process(app, 0.05, history)
    assert attempt is not None
    assert (attempt.outcome, attempt.completion, attempt.status) == (Outcome.TIMEOUT, Completion.UNKNOWN, None)
    assert len(app.finished) == 1 and returned < app.finished[0] <= closed
    assert len(history) == 1


def test_a_cancelled_in_process_attempt_leaves_the_app_running() -> None:
    """Cancelling the attempt (an interrupted step) does not cancel the app's request: it
    runs on to its end on the loop, and nothing is recorded for the attempt."""
    app = _SlowApp(0.1)
    history = History()
    attempt, returned, _ = _one_in_process(app, 5.0, history, cancel_after_s=0.02, linger_s=0.5)
    assert attempt is None and len(history) == 0
    assert len(app.finished) == 1 and app.finished[0] > returned


class _HeadRecorder:
    """A raw HTTP/1.1 server on 127.0.0.1 keeping each request's head, answering 200."""

    def __init__(self) -> None:
        self.heads: list[bytes] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        self.heads.append(head)
        length = next(int(h.split(b":", 1)[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length"))
        await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    def deliver(self, profile, events) -> History:  # type: ignore[no-untyped-def]
        async def go() -> History:
            server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
            port = server.sockets[0].getsockname()[1]
            history = History()
            async with server, Dispatcher(Target(url=f"http://127.0.0.1:{port}/webhooks"), profile, [SECRET],
                                          history, max_attempts=2) as d:
                await d.run(schedule(events, FaultPlan()))
            return history

        return asyncio.run(go())


def test_a_profile_making_its_requests_otherwise_is_sent_its_own_request() -> None:
    stripe = type(get_profile("stripe"))

    class Stamped(stripe):  # type: ignore[misc, valid-type]
        def request(self, envelope, secrets, timestamp):  # type: ignore[no-untyped-def]
            made = super().request(envelope, secrets, timestamp)
            return replace(made, headers={**made.headers, "X-Stamp": "1"})

        def request_headers(self, envelope, secrets, timestamp):  # type: ignore[no-untyped-def]
            return None  # as `Profile.request_headers` says of a profile whose `request` is its own

    recorder = _HeadRecorder()
    history = recorder.deliver(Stamped(), _events(1))
    assert [(a.attempt, a.status, a.completion) for a in history] == [(1, 200, Completion.OK)]
    assert len(recorder.heads) == 1 and b"\r\nX-Stamp: 1\r\n" in recorder.heads[0]
    assert b"\r\nStripe-Signature: t=" in recorder.heads[0]


def test_a_header_that_is_not_ascii_takes_httpxs_route_and_its_error() -> None:
    stripe = type(get_profile("stripe"))

    class Noted(stripe):  # type: ignore[misc, valid-type]
        def envelope(self, event):  # type: ignore[no-untyped-def]
            made = super().envelope(event)
            return replace(made, headers={**made.headers, "X-Note": "caf\u00e9"})

    recorder = _HeadRecorder()
    history = recorder.deliver(Noted(), _events(1))
    assert recorder.heads == []  # httpx refuses the header: nothing is sent
    assert [(a.attempt, a.status, a.outcome, a.completion) for a in history] == [
        (1, None, Outcome.CONNECTION_ERROR, Completion.UNKNOWN), (2, None, Outcome.CONNECTION_ERROR, Completion.UNKNOWN)]
    assert all(a.error and "UnicodeEncodeError" in a.error for a in history)


def test_copies_signed_in_one_second_carry_that_seconds_signature(monkeypatch: pytest.MonkeyPatch) -> None:
    """The signed headers reused within a second are the ones signing at that second
    gives; the next second signs anew, and a full store of them starts over (the same bytes)."""
    import hookproof.simulator.delivery.dispatcher as dispatcher_module

    heads: list[dict[str, str]] = []
    bodies: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                break
            fields = dict(line.split(": ", 1) for line in head.decode().split("\r\n")[1:] if line)
            heads.append(fields)
            bodies.append(await reader.readexactly(int(fields["Content-Length"])))
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
        writer.close()

    now = [1_700_000_000.25]
    event, other = _events(2)
    monkeypatch.setattr(dispatcher_module, "SIGNED_KEPT", 2)
    kept: list[int] = []

    async def go() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server, Dispatcher(Target(url=f"http://127.0.0.1:{port}/webhooks"), get_profile("stripe"), [SECRET],
                                      History(), clock=lambda: now[0]) as d:
            deliveries = schedule([event, event, other], FaultPlan()).deliveries()
            for delivery in deliveries:
                await d.attempt(delivery, 1)
            now[0] += 1.0
            for delivery in (deliveries[0], deliveries[0], deliveries[2], deliveries[0]):
                await d.attempt(delivery, 1)
                kept.append(len(d._signed))

    asyncio.run(go())
    signatures = [h["Stripe-Signature"] for h in heads]
    for head, body in zip(heads, bodies):
        stripe.Webhook.construct_event(body, head["Stripe-Signature"], SECRET, tolerance=None)
    assert signatures[0] == signatures[1] and signatures[0].startswith("t=1700000000,")
    assert signatures[2] != signatures[0] and signatures[2].startswith("t=1700000000,")
    assert signatures[3] == signatures[4] == signatures[6] != signatures[0]
    assert signatures[3].startswith("t=1700000001,") and signatures[5].startswith("t=1700000001,")
    assert bodies[0] == bodies[1] == bodies[3] == bodies[4] == bodies[6]
    assert kept == [1, 1, 2, 1]  # the store of two full: started over, the event signed anew
