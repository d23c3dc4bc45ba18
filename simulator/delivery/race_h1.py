"""HTTP/1.1 bursts: last-byte sync (``h1-last-byte``) and plain concurrent requests (``plain``).

One TCP connection per copy (TCP_NODELAY). With the gate, every request is written except
its last two bytes; after ``gate_wait_s`` the release writes, with no await in between,
the penultimate byte of the first connection, then after a pause of `_WAKE_PAUSE_S`
(busy, 50 us) those of the others in order, then the final byte of every connection in
the reverse order (`_h1_release`). Answers are read with h11; the answer's
first bytes are kept as they came (`_Outcome.received`) for the attempt core.

Why two bytes, and why reversed (measured with ``bench/race_hit_rate.py``, which stamps
the receiver's reads): each final byte costs the client one send syscall (about 10 us on
loopback, where the syscall also runs the receive path), so 20 final bytes take about
0.2 ms to leave. An idle event-loop server wakes on the first one and completes that copy
alone, and a copy completed one loop wakeup later checks after the first copy acted: a
one-yield check-then-act window is missed (in every missed burst of the bench, the
server's first wakeup completed exactly one copy). The penultimate bytes wake the server
first and keep it reading the burst's own connections, in about the order they were sent,
while the final bytes land; sent in the reverse order, the connections the server reads
last in a pass already hold their final byte, so the pass that completes the first copy
completes several. Every byte is the request's own: the receiver gets the same request,
in smaller segments.

What else was measured (one-yield window, 20 copies per burst, the variants taking
turns burst by burst). With both processes at real-time priority, standing for a quiet
machine, 300 bursts per row: this release hit 297/300 on uvicorn and 298/300 on
hypercorn; the final bytes in the same order as the penultimate ones 234/300 and
289/300; three withheld bytes (two rounds before the final one) 298/300 and 295/300.
At load 19 to 41, no priority: this release 597/600 over both servers; the same bytes
written with `os.write` from pre-built lists, the garbage collector off and no clock
read between writes, 599/600 (its release takes as long: the send syscall, about
6.5 us, is the cost). At load 5, 100 bursts per row: a 50 us pause between the two
rounds, or the release made from the receiver's CPU, did no better.

Why the pause after the first penultimate byte (the bench's receiver with every socket
read logged, next to the client's own send times): in the misses left, the server woke
while the penultimate bytes were still going out and took the first two or five sockets
in one wakeup. Its first read after the gate's idle wait is slow (75 to 200 us under
load), so it read the last of those sockets after its final byte had come, and that copy
completed alone: the others of its wakeup still lacked theirs (sent last, in the reverse
order). After the pause the server has woken on the first connection's byte alone, which
cannot complete a request, and spends that slow first read on it while the rest of the
release lands. Variants taking turns burst by burst, 20 copies, one-yield window: at
load 4 to 5, 300 bursts per row, uvicorn 280/300 without the pause, 290 with 15 us, 294
with 30 us, 298 with 50 us, hypercorn 299, 298, 297, 297 (80 us: uvicorn 296, hypercorn
294: a server that has finished the first read before the others come is woken again
by them); both processes at real-time priority, 200 bursts per row, uvicorn 177/200
without, 178 with 30 us, 200 with 50 us, hypercorn 192, 190, 193 (its misses there are a
wakeup of five sockets taken early in the penultimate round).

What a faster or uninterrupted release does (none kept; one-yield window, 20 copies,
the variants taking turns burst by burst, client on CPU 0 and receiver on CPU 1 unless
said, totals over uvicorn and hypercorn). The release thread at real-time priority
(SCHED_FIFO, for the release only): load 4.7 to 4.9, 394/400 as without it, 394/400;
not pinned, load 5.6 to 9.8, 300/300 against 299/300; beside three busy loops (load 10),
239/240 against 238/240; beside two loopback ping-pong pairs (load 5 to 12), 236/240 both.
The sends from pre-built lists of `socket.send` bound methods, the garbage collector off,
no clock read between them, with and without that priority, at load 3.8 to 5.7: 397/400
and 398/400 against 398/400. The first final bytes in ascending order (the last two
connections' final bytes first in the penultimates' order, then the others reversed; or
the last three), load 5.4 to 9.4: 791/800 and 790/800 against 789/800. The release takes
100 to 130 us at the median in every variant and its priority does not shorten it; the
misses left, about one burst in a hundred, are mostly a wakeup of 2 to 12 sockets that
completed one, more rarely a wakeup on one socket alone, and no variant made either
rarer. Which copy such a wakeup completed (400 bursts per server at load 2 to 5, six
misses each; copies numbered from 0 in the order their penultimate bytes went): copy 1,
5, 7 (four times), 9 (twice), 10 or 12, in a wakeup of 2, 6, 7 or 8, 9, 10 or 12 reads,
and copy 19 alone once. So the server had taken the burst's first connections in one
pass, slow enough that the last of them had its final byte (sent 7 to 18 final bytes
into the release) by the time the pass read it, and the 9 to 19 copies behind it
completed one wakeup later.

Measured against those misses and not kept: the last third's final bytes first, in the
reverse order (19 down to 13 of 20), then the first two thirds' in order (0 up to 12),
so that the connection such a pass reads just before its last one gets its final byte
one send before the last one's, not after. Variants taking turns burst by burst,
one-yield window, 20 copies, load 1.9 to 3.6: hypercorn's misses went from 17 to 6 in 700 bursts (the wakeups that completed copy 7 or
8 alone were gone), uvicorn's from 9 to 11 in 900; `bench/race_hit_rate.py` read uvicorn
at 24/30 in one run of two with it (six wakeups of 10 sockets that completed one), and
with 8 copies (every miss, either way, a wakeup on one connection alone) it did 491/500
against 494/500.
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
    Gate,
    RaceResponse,
    _close,
    _connect_error,
    _open,
    _Outcome,
    _Prepared,
    _presend_error,
    _Reader,
    _Target,
    _write_now,
    gate_open,
)

#: Bytes of each request withheld until the release: the penultimate and the final byte.
_WITHHELD = 2
#: Seconds the release waits after the first penultimate byte (busy, no await), so that the
#: server wakes on that byte alone (measured: see the module docstring).
_WAKE_PAUSE_S = 50e-6


@dataclass
class _H1Conn:
    prepared: _Prepared
    outcome: _Outcome
    reader: _Reader | None = None
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
    head, c.tail = (raw[:-_WITHHELD], raw[-_WITHHELD:]) if split else (raw, b"")
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


def _h1_release(conns: Sequence[_H1Conn]) -> None:
    """Write the withheld bytes of every connection: penultimate bytes in order, then final
    bytes in the reverse order (no await: nothing else runs in between), with a pause of
    `_WAKE_PAUSE_S` after the first penultimate byte when there are several connections
    (the server wakes on that byte alone; see the module docstring).

    A connection whose write fails is finished as closed (the request was not fully sent).
    A receiver that has already answered or closed before its request was complete gets
    its withheld bytes in one write: its kernel would answer a first write with a reset,
    the second write would fail, and the answer it gave would be lost to the attempt core.
    """
    early = [c.reader is not None and c.reader.heard for c in conns]
    pause = len(conns) > 1
    for c, heard in zip(conns, early):
        if not heard:
            _h1_write(c, c.tail[:-1], final=False)
            if pause:
                _spin(_WAKE_PAUSE_S)
                pause = False
    for c, heard in zip(reversed(conns), reversed(early)):
        _h1_write(c, c.tail if heard else c.tail[-1:], final=True)


def _spin(seconds: float) -> None:
    """Wait `seconds` without yielding to the event loop or sleeping (a timer or a sleep
    would take far longer than the tens of microseconds asked)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _h1_write(c: _H1Conn, data: bytes, *, final: bool) -> None:
    """Write part of the withheld tail now; the final part marks the request as sent."""
    if c.outcome.done or c.writer is None:
        return
    if data and not _write_now(c.writer, data):
        c.outcome.finish(Broke.CLOSED)
        return
    if final:
        c.outcome.request_sent = True
        c.outcome.sent_at = time.time()


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
    gate: Gate | None = None,
) -> list[RaceResponse]:
    """Run an HTTP/1.1 burst: last-byte sync when ``gated``, else plain concurrent requests;
    the release (plain: the sending) waits for `gate` too (`race.race`)."""
    loop = asyncio.get_running_loop()
    conns = [_H1Conn(p, _Outcome()) for p in prepared]
    try:
        deadline = loop.time() + timeout_s
        if gated:
            await asyncio.gather(*(_h1_presend(c, tgt, deadline, True) for c in conns))
            if any(not c.outcome.done for c in conns):
                await gate_open(gate_wait_s, gate)
            _h1_release(conns)
            await asyncio.gather(*(_h1_read(c, timeout_s, read_cap) for c in conns))
        else:
            if gate is not None:
                await gate()
                deadline = loop.time() + timeout_s  # connecting starts now: the gate's wait is not its

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
