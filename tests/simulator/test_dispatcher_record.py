"""What the dispatcher sends and records, pinned byte for byte for one seed.

A raw HTTP/1.1 server on 127.0.0.1 keeps every request exactly as it came off the wire
(request line, header names in their case and order, body) and answers from a script:
a 409, a 500, a dropped answer, a streamed body, a body past the read cap, bytes that
are not HTTP, a close without an answer. With the clock injected, the wire bytes and
the history file's rows (every column but the measured `answered_at` and
`latency_ms`) must equal the golden file, whatever the dispatcher's internals.
Set ``HOOKPROOF_UPDATE_GOLDEN=1`` to rewrite it (only for a deliberate change of what
is sent or recorded).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
from pathlib import Path

from hookproof.simulator.delivery import Dispatcher, History, Target
from hookproof.simulator.faults import FaultPlan, Mutation, schedule
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import World, emit_events, events_of_type, new_world

GOLDEN = Path(__file__).with_name("golden") / "dispatcher_record.json"
NOW = 1_790_000_000.25
START_US = 1_780_000_000_000_000
#: Answers by the request's number (1-based, over the whole run); the rest get a 200.
SCRIPT: dict[int, bytes] = {
    2: b"HTTP/1.1 409 Conflict\r\nConnection: close\r\nContent-Length: 4\r\n\r\nbusy",
    3: b"HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\nContent-Length: 5\r\n\r\noops!",
    5: b"HTTP/1.1 200 OK\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
    7: b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 300\r\n\r\n" + b"x" * 300,
    9: b"SSH-2.0-OpenSSH_9.6\r\n",
    11: b"",
    13: b"HTTP/1.1 302 Found\r\nConnection: close\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n",
}
OK = b'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{"received":true}'


class WireRecorder:
    """Keeps each request's bytes; answers the `SCRIPT`, one request per connection (each
    answer says ``Connection: close``, so no request meets a connection closed while idle)."""

    def __init__(self) -> None:
        self.requests: list[bytes] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next((int(h.split(b":", 1)[1]) for h in head.split(b"\r\n")
                           if h.lower().startswith(b"content-length:")), 0)
            body = await reader.readexactly(length)
            self.requests.append(head + body)
            answer = SCRIPT.get(len(self.requests), OK)
            if answer:
                writer.write(answer)
                await writer.drain()
        finally:
            writer.close()


def _request_record(raw: bytes, port: int) -> dict[str, str]:
    head, body = raw.split(b"\r\n\r\n", 1)
    return {"head": head.decode("latin-1").replace(f":{port}", ":PORT"),
            "body_sha256": hashlib.sha256(body).hexdigest()}


def _rows(path: Path) -> list[list[object]]:
    db = sqlite3.connect(str(path))
    try:
        columns = [c[1] for c in db.execute("PRAGMA table_info(attempts)") if c[1] not in ("answered_at", "latency_ms")]
        return [list(r) for r in db.execute(f"SELECT {', '.join(columns)} FROM attempts ORDER BY idx")]
    finally:
        db.close()


def _run(tmp_path: Path) -> dict[str, object]:
    recorder = WireRecorder()
    stripe = get_profile("stripe")
    mercadopago = get_profile("mercadopago")
    events = events_of_type(World(11, start_us=START_US), "payment_intent.succeeded", 3)
    # every event type of a customer's life, at an API version before basil and at the latest
    lives = [World(12, start_us=START_US, api_version=version).lifecycle() for version in ("2024-06-20", None)]
    mp_events = emit_events(new_world("mercadopago", 11, start_us=START_US), "payment.created")[:1]
    plans = [
        FaultPlan(copies=2),
        FaultPlan(drop_responses=1),
        FaultPlan(mutations=(Mutation.RESERIALIZE, Mutation.ROTATION), mutate="all"),
        FaultPlan(mutations=(Mutation.STALE_TIMESTAMP,), mutate="first"),
        FaultPlan(mutations=(Mutation.FORGED,), mutate="first"),
        FaultPlan(mutations=(Mutation.MISSING_SIGNATURE, Mutation.LIVEMODE_MISMATCH), mutate="first"),
        FaultPlan(mutations=(Mutation.FOREIGN_ACCOUNT, Mutation.FUTURE_TIMESTAMP), mutate="first"),
    ]

    async def go(port: int) -> None:
        url = f"http://127.0.0.1:{port}/webhooks?team=a"
        with History(tmp_path / "history.sqlite") as history:
            async with Dispatcher(Target(url=url), stripe, ["whsec_pinned_one", "whsec_pinned_two"], history,
                                  clock=lambda: NOW, read_cap_bytes=64, max_attempts=3, seed=5,
                                  scenario="pinned") as d:
                for plan in plans:
                    await d.run(schedule(events[:2], plan))
                await d.run(schedule(events[2:], FaultPlan(copies=3, concurrency=3)))
                for life in lives:
                    await d.run(schedule(life, FaultPlan()))
            async with Dispatcher(Target(url=url), mercadopago, [mercadopago.generate_secret(3)], history,
                                  clock=lambda: NOW, max_attempts=2, scenario="mp") as d:
                await d.run(schedule(mp_events, FaultPlan(copies=2)))

    async def main() -> int:
        server = await asyncio.start_server(recorder.handle, "127.0.0.1", 0)
        port = int(server.sockets[0].getsockname()[1])
        async with server:
            await go(port)
        return port

    port = asyncio.run(main())
    return {"rows": _rows(tmp_path / "history.sqlite"),
            "requests": [_request_record(r, port) for r in recorder.requests]}


def test_the_wire_bytes_and_the_history_rows_stay_the_same_for_one_seed(tmp_path: Path) -> None:
    got = json.loads(json.dumps(_run(tmp_path)))
    if os.environ.get("HOOKPROOF_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1) + "\n")
    want = json.loads(GOLDEN.read_text())
    assert len(got["requests"]) == len(want["requests"])
    for i, (g, w) in enumerate(zip(got["requests"], want["requests"])):
        assert g == w, f"request {i + 1} differs"
    assert len(got["rows"]) == len(want["rows"])
    for i, (g, w) in enumerate(zip(got["rows"], want["rows"])):
        assert g == w, f"history row {i} differs"
