"""HTTP/1.1 bursts: last-byte sync (``h1-last-byte``) and plain concurrent requests (``plain``).

One TCP connection per copy (TCP_NODELAY). With the gate, every request is written except
its final byte; after ``gate_wait_s`` the final bytes are written back to back, so the
server can complete all requests in the same instant. Answers are read with h11; the
answer's first bytes are kept as they came (`_Outcome.received`) for the attempt core.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass

import h11

from hookproof.simulator.delivery.attempt_core import Broke
from hookproof.simulator.delivery.race_io import (
    _READ_CHUNK,
    RaceResponse,
    _close,
    _connect_error,
    _open,
    _Outcome,
    _Prepared,
    _presend_error,
    _Target,
    _write_now,
)


@dataclass
class _H1Conn:
    prepared: _Prepared
    outcome: _Outcome
    reader: asyncio.StreamReader | None = None
    writer: asyncio.StreamWriter | None = None
    tail: bytes = b""


async def _h1_presend(c: _H1Conn, tgt: _Target, deadline: float, split: bool) -> None:
    """Connect and write the request, all but the final byte when ``split``."""
    try:
        c.reader, c.writer = await _open(tgt, deadline)
    except (OSError, TimeoutError) as exc:
        c.outcome.finish(*_connect_error(exc))
        return
    raw = c.prepared.h1_bytes
    head, c.tail = (raw[:-1], raw[-1:]) if split else (raw, b"")
    try:
        async with asyncio.timeout_at(deadline):
            c.writer.write(head)
            await c.writer.drain()
    except (OSError, TimeoutError) as exc:
        c.outcome.finish(_presend_error(exc))
        return
    if not split:
        c.outcome.request_sent = True
        c.outcome.sent_at = time.time()


def _h1_release(c: _H1Conn) -> None:
    """Write the withheld final byte (no await: callers loop over all connections)."""
    if c.outcome.done or c.writer is None:
        return
    if _write_now(c.writer, c.tail):
        c.outcome.request_sent = True
        c.outcome.sent_at = time.time()
    else:
        c.outcome.finish(Broke.CLOSED)


async def _h1_read(c: _H1Conn, timeout_s: float, read_cap: int) -> None:
    """Finish sending (drain), then read one response with h11 within ``timeout_s``."""
    out = c.outcome
    if out.done or c.reader is None or c.writer is None:
        return
    conn = h11.Connection(h11.CLIENT)
    # Put h11 in the state "our request was sent" so it accepts the response.
    conn.send(h11.Request(method=c.prepared.method, target=c.prepared.target,
                          headers=[("Host", "x"), ("Content-Length", "0")]))
    conn.send(h11.EndOfMessage())
    got_eof = False
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    try:
        async with asyncio.timeout_at(deadline):
            with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                # The last byte is tiny; a failed drain means the peer went away after the
                # byte was handed to the kernel. Reading below reports what happened.
                await c.writer.drain()
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    data = await c.reader.read(_READ_CHUNK)
                    if data:
                        out.received(data)
                    else:
                        got_eof = True
                    conn.receive_data(data)
                    continue
                if isinstance(event, h11.Response):
                    out.status = event.status_code
                elif isinstance(event, h11.InformationalResponse):
                    continue
                elif isinstance(event, h11.Data):
                    room = read_cap - len(out.body)
                    if len(event.data) > room:
                        out.body += event.data[:room]
                        out.truncated = True
                        out.finish()
                        return
                    out.body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    out.finish()
                    return
                elif isinstance(event, h11.ConnectionClosed):
                    out.finish(Broke.CLOSED)
                    return
    except TimeoutError:
        out.finish(Broke.TIMEOUT)
    except ConnectionResetError:
        out.finish(Broke.RESET)
    except OSError as exc:
        out.finish(Broke.OTHER, exc.strerror or type(exc).__name__)
    except h11.RemoteProtocolError:
        out.finish(Broke.CLOSED if got_eof else Broke.INVALID)


async def h1_burst(
    tgt: _Target,
    prepared: Sequence[_Prepared],
    *,
    gated: bool,
    timeout_s: float,
    read_cap: int,
    gate_wait_s: float,
) -> list[RaceResponse]:
    """Run an HTTP/1.1 burst: last-byte sync when ``gated``, else plain concurrent requests."""
    loop = asyncio.get_running_loop()
    conns = [_H1Conn(p, _Outcome()) for p in prepared]
    try:
        deadline = loop.time() + timeout_s
        if gated:
            await asyncio.gather(*(_h1_presend(c, tgt, deadline, True) for c in conns))
            if any(not c.outcome.done for c in conns):
                await asyncio.sleep(gate_wait_s)
            for c in conns:  # the release: back to back, no await in between
                _h1_release(c)
            await asyncio.gather(*(_h1_read(c, timeout_s, read_cap) for c in conns))
        else:

            async def one(c: _H1Conn) -> None:
                await _h1_presend(c, tgt, deadline, False)
                await _h1_read(c, timeout_s, read_cap)

            await asyncio.gather(*(one(c) for c in conns))
    finally:
        await asyncio.gather(
            *(_close(c.writer, abort=c.outcome.truncated or c.outcome.broke is not None)
              for c in conns),
            return_exceptions=True,
        )
    return [c.outcome.freeze(timeout_s=timeout_s, read_cap=read_cap) for c in conns]
