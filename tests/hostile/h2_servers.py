"""Hostile answers spoken in HTTP/2 over cleartext (h2c, prior knowledge), on 127.0.0.1.

The same answers as `servers.py` where HTTP/2 can express them: a server speaking the
`h2` library's state machine answers each request stream, once its END_STREAM came, in
the way its behaviour says (a whole answer, none, a head and no body, a cut body, a TCP
reset or close). For the attempt-core table: the HTTP/2 single-packet transport must
grade each like the HTTP/1.1 transports grade their twin.

    with h2_hostile_server("reset-mid-answer") as server:
        await race(server.url, requests, mode="h2-single-packet", timeout_s=0.5)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

import h2.config
import h2.connection
import h2.events

from tests.hostile.servers import MAX_LIFETIME_S, Connection, Handler, HostileServer

#: Bytes of the body of ``huge-body`` (past the table's read cap, within h2's first window).
H2_BIG_BODY_BYTES = 5000

Answer = Callable[["_Session", int], Awaitable[bool]]  # True: keep serving the connection


@dataclass
class _Session:
    c: Connection
    conn: h2.connection.H2Connection

    async def flush(self) -> bool:
        return await self.c.write(self.conn.data_to_send())

    async def answer(self, stream_id: int, status: int, body: bytes = b"", *, end: bool = True,
                     headers: tuple[tuple[str, str], ...] = ()) -> bool:
        self.conn.send_headers(stream_id, [(":status", str(status)), ("content-type", "application/json"), *headers],
                               end_stream=end and not body)
        if body:
            self.conn.send_data(stream_id, body, end_stream=end)
        return await self.flush()


async def _ok(s: _Session, sid: int) -> bool:
    return await s.answer(sid, 200, b'{"received":1}\n')


async def _server_error(s: _Session, sid: int) -> bool:
    return await s.answer(sid, 500, b"boom")


async def _redirect(s: _Session, sid: int) -> bool:
    return await s.answer(sid, 307, headers=(("location", f"http://127.0.0.1:{s.c.server.port}/webhooks"),))


async def _huge(s: _Session, sid: int) -> bool:
    return await s.answer(sid, 200, b"y" * H2_BIG_BODY_BYTES)


async def _silent(s: _Session, sid: int) -> bool:
    await s.c.hold()
    return False


async def _stall_after_headers(s: _Session, sid: int) -> bool:
    await s.answer(sid, 200, end=False, headers=(("content-length", "1000"),))
    await s.c.hold()
    return False


async def _cut(s: _Session, sid: int, reset: bool) -> bool:
    await s.answer(sid, 200, b'{"recei', end=False, headers=(("content-length", "100"),))
    await asyncio.sleep(0.05)
    if reset:
        s.c.reset()
    else:
        s.c.writer.close()
    return False


async def _reset_mid(s: _Session, sid: int) -> bool:
    return await _cut(s, sid, True)


async def _close_mid(s: _Session, sid: int) -> bool:
    return await _cut(s, sid, False)


async def _reset_after_request(s: _Session, sid: int) -> bool:
    await asyncio.sleep(0.05)
    s.c.reset()
    return False


async def _close_after_request(s: _Session, sid: int) -> bool:
    await asyncio.sleep(0.05)
    s.c.writer.close()
    return False


#: behaviour -> how each request stream is answered (names shared with `servers.py`).
H2_BEHAVIOURS: dict[str, Answer] = {
    "answer-ok": _ok,
    "server-error": _server_error,
    "redirect-loop": _redirect,
    "huge-body": _huge,
    "silent": _silent,
    "stall-after-headers": _stall_after_headers,
    "reset-mid-answer": _reset_mid,
    "close-mid-answer": _close_mid,
    "reset-after-request": _reset_after_request,
    "close-after-request": _close_after_request,
}


def _serving(answer: Answer) -> Handler:
    async def handle(c: Connection) -> None:
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding=None))
        conn.initiate_connection()
        session = _Session(c, conn)
        if not await session.flush():
            return
        async with asyncio.timeout(MAX_LIFETIME_S):
            while data := await c.reader.read(65536):
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.StreamEnded):
                        c.server.requests += 1
                        if not await answer(session, event.stream_id):
                            return
                if not await session.flush():
                    return
    return handle


class H2HostileServer(HostileServer):
    """One behaviour of `H2_BEHAVIOURS`, served in h2c on 127.0.0.1 from a background thread."""

    def handler(self) -> Handler:
        return _serving(H2_BEHAVIOURS[self.behaviour])


@contextlib.contextmanager
def h2_hostile_server(behaviour: str) -> Iterator[H2HostileServer]:
    """Serve `behaviour` (a key of `H2_BEHAVIOURS`) in h2c for the duration of the block."""
    server = H2HostileServer(behaviour)
    server.start()
    try:
        yield server
    finally:
        server.close()
