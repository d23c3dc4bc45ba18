"""HTTP/2 single-packet bursts (``h2-single-packet``) and the h2c probe.

HTTP/2 over cleartext with prior knowledge (h2c), one connection. Every stream gets its
HEADERS and all of its body except the last byte. After ``gate_wait_s``, TCP_NODELAY is
switched off, a PING is written (it leaves at once and makes Nagle hold what follows),
then every stream's final DATA frame (END_STREAM) is written in one write, so they travel
in a single TCP packet. Bursts bigger than the server's SETTINGS_MAX_CONCURRENT_STREAMS
are split into several packets, released one after the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

from hookproof.simulator.delivery.attempt_core import Broke
from hookproof.simulator.delivery.race_io import (
    _READ_CHUNK,
    Gate,
    RaceResponse,
    _close,
    _connect_error,
    _open,
    _Outcome,
    _parse_url,
    _Prepared,
    _set_nodelay,
    _Target,
    _write_now,
    gate_open,
)

#: Opaque data of the warming PING of the single-packet release.
_PING_DATA = b"hkproof!"

# (host, port) -> answer of the h2c probe; only definite answers are cached.
_H2C_CACHE: dict[tuple[str, int], bool] = {}


class _H2Gone(Exception):
    """The HTTP/2 connection can carry nothing more; ``broke`` and ``detail`` say why."""

    def __init__(self, broke: Broke, detail: str | None = None) -> None:
        super().__init__(broke.value if detail is None else f"{broke.value}: {detail}")
        self.broke = broke
        self.detail = detail


@dataclass
class _H2Stream:
    prepared: _Prepared
    outcome: _Outcome
    stream_id: int = 0


class _H2Session:
    """One prior-knowledge h2c client connection driven by the ``h2`` state machine."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 read_cap: int) -> None:
        self.reader = reader
        self.writer = writer
        self.read_cap = read_cap
        config = h2.config.H2Configuration(client_side=True, header_encoding=None)
        self.conn = h2.connection.H2Connection(config=config)
        codes = h2.settings.SettingCodes
        self.conn.local_settings = h2.settings.Settings(
            client=True,
            initial_values={
                codes.MAX_CONCURRENT_STREAMS: 100,
                codes.MAX_HEADER_LIST_SIZE: self.conn.DEFAULT_MAX_HEADER_LIST_SIZE,
                codes.ENABLE_PUSH: 0,
            },
        )
        self.streams: dict[int, _H2Stream] = {}
        self.got_settings = False
        self.head = bytearray()  # the first 9 bytes from the server: a SETTINGS frame header

    def flush(self) -> None:
        """Hand pending frames to the transport (no await)."""
        data = self.conn.data_to_send()
        if data and not _write_now(self.writer, data):
            raise _H2Gone(Broke.CLOSED)

    async def start(self) -> None:
        """Send the preface and SETTINGS; read until the server's SETTINGS arrive.

        Raises:
            _H2Gone: the server closed, reset, or answered with something that is not h2.
        """
        self.conn.initiate_connection()
        self.flush()
        while not self.got_settings:
            await self.pump()

    async def pump(self) -> None:
        """Read one chunk, feed it to h2, apply the events, flush replies.

        Raises:
            _H2Gone: EOF, reset, or bytes that are not valid HTTP/2.
        """
        try:
            data = await self.reader.read(_READ_CHUNK)
        except ConnectionResetError:
            raise _H2Gone(Broke.RESET) from None
        except OSError as exc:
            raise _H2Gone(Broke.OTHER, exc.strerror or type(exc).__name__) from None
        if not data:
            raise _H2Gone(Broke.CLOSED)
        if len(self.head) < 9:
            self.head += data[: 9 - len(self.head)]
            if not _could_be_settings_header(bytes(self.head)):
                what = "it answered in HTTP/1" if self.head.startswith(b"HTTP/"[: len(self.head)]) \
                    else "its first bytes are not an HTTP/2 SETTINGS frame"
                raise _H2Gone(Broke.NOT_H2C, what)
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError as exc:
            detail = type(exc).__name__ + (f": {exc}" if str(exc) else "")
            if not self.got_settings:
                raise _H2Gone(Broke.NOT_H2C, detail) from None
            raise _H2Gone(Broke.INVALID, detail) from None
        for event in events:
            self._apply(event)
        with contextlib.suppress(_H2Gone):
            self.flush()

    def _apply(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.RemoteSettingsChanged):
            self.got_settings = True
            return
        if isinstance(event, h2.events.ConnectionTerminated):
            code = _code_name(event.error_code)
            last = event.last_stream_id
            for sid, st in self.streams.items():
                if not st.outcome.done and (last is None or sid > last):
                    st.outcome.finish(Broke.GOAWAY, code)
            raise _H2Gone(Broke.CLOSED, f"GOAWAY {code}")
        stream_id: int | None = getattr(event, "stream_id", None)
        found = self.streams.get(stream_id) if stream_id else None
        if found is None:
            return
        st = found
        out = st.outcome
        if isinstance(event, h2.events.ResponseReceived):
            for name, value in event.headers:
                if name == b":status":
                    try:
                        out.status = int(value)
                    except ValueError:
                        out.finish(Broke.INVALID, "a :status that is not a number")
        elif isinstance(event, h2.events.InformationalResponseReceived):
            pass
        elif isinstance(event, h2.events.DataReceived):
            self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            if out.done:
                return
            room = self.read_cap - len(out.body)
            if len(event.data) > room:
                out.body += event.data[:room]
                out.truncated = True
                out.finish()
                with contextlib.suppress(h2.exceptions.ProtocolError):
                    self.conn.reset_stream(event.stream_id, h2.errors.ErrorCodes.CANCEL)
            else:
                out.body += event.data
        elif isinstance(event, h2.events.StreamEnded):
            if out.status is None:
                out.finish(Broke.INVALID, "the stream ended without a status")
            else:
                out.finish()
        elif isinstance(event, h2.events.StreamReset):
            out.finish(Broke.STREAM_RESET, _code_name(event.error_code))

    def cancel(self, st: _H2Stream) -> None:
        """Reset a stream that is still open on our side (RST_STREAM CANCEL), if any."""
        if not st.stream_id:
            return
        with contextlib.suppress(h2.exceptions.ProtocolError, KeyError):
            self.conn.reset_stream(st.stream_id, h2.errors.ErrorCodes.CANCEL)

    async def send_body(self, st: _H2Stream, data: bytes, deadline: float) -> None:
        """Send ``data`` on a stream (no END_STREAM), waiting for flow-control credit.

        Raises:
            _H2Gone, TimeoutError: the connection died, or no credit came before ``deadline``.
        """
        sid = st.stream_id
        view = memoryview(data)
        while view:
            if st.outcome.done:  # reset or answered early: stop sending
                return
            room = min(self.conn.local_flow_control_window(sid),
                       self.conn.max_outbound_frame_size, len(view))
            if room <= 0:
                self.flush()
                async with asyncio.timeout_at(deadline):
                    await self.pump()
                continue
            self.conn.send_data(sid, bytes(view[:room]))
            view = view[room:]

    async def ensure_credit(self, finals: list[tuple[_H2Stream, bytes]], deadline: float) -> None:
        """Wait until every withheld final frame fits the flow-control windows."""

        def short() -> bool:
            need = sum(len(b) for st, b in finals if not st.outcome.done)
            if need > self.conn.outbound_flow_control_window:
                return True
            return any(
                len(b) > self.conn.local_flow_control_window(st.stream_id)
                for st, b in finals
                if not st.outcome.done
            )

        while short():
            self.flush()
            async with asyncio.timeout_at(deadline):
                await self.pump()


def _could_be_settings_header(head: bytes) -> bool:
    """True while ``head`` (up to 9 bytes) can still be the header of a SETTINGS frame.

    A server's connection preface is a SETTINGS frame: type 0x4, stream 0, a length that is
    a multiple of 6 and at most 16,384 (RFC 9113 §3.4, §6.5).
    """
    if len(head) >= 3:
        length = int.from_bytes(head[:3], "big")
        if length % 6 or length > 16384:
            return False
    if len(head) >= 4 and head[3] != 0x4:
        return False
    if len(head) >= 9 and int.from_bytes(head[5:9], "big") & 0x7FFFFFFF:
        return False
    return True


def _code_name(code: object) -> str:
    try:
        return h2.errors.ErrorCodes(int(code)).name  # type: ignore[call-overload]
    except (ValueError, TypeError):
        return f"error code {code}"


async def _h2_packet(
    sess: _H2Session,
    batch: list[_H2Stream],
    *,
    timeout_s: float,
    gate_wait_s: float,
    gate: Gate | None = None,
) -> None:
    """Pre-send one packet's worth of streams, release them together (after `gate_wait_s` and
    `gate`), read the answers.

    Raises:
        _H2Gone: the connection died; unfinished streams must be failed by the caller.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    _set_nodelay(sess.writer, True)
    finals: list[tuple[_H2Stream, bytes]] = []
    try:
        for st in batch:
            body = st.prepared.body
            try:
                st.stream_id = sess.conn.get_next_available_stream_id()
                sess.streams[st.stream_id] = st
                sess.conn.send_headers(st.stream_id, st.prepared.h2_headers, end_stream=False)
                await sess.send_body(st, body[:-1], deadline)
            except h2.exceptions.ProtocolError as exc:
                # e.g. a header HTTP/2 forbids, or the server reset the stream meanwhile.
                st.outcome.finish(Broke.OTHER, type(exc).__name__)
                continue
            finals.append((st, body[-1:]))
        sess.flush()
        async with asyncio.timeout_at(deadline):
            await sess.writer.drain()
        await sess.ensure_credit(finals, deadline)
    except TimeoutError:
        for st in batch:
            st.outcome.finish(Broke.TIMEOUT)
        raise _H2Gone(Broke.TIMEOUT) from None
    except (ConnectionError, OSError):
        raise _H2Gone(Broke.CLOSED) from None

    await gate_open(gate_wait_s, gate)

    # The release: Nagle on, a PING that leaves at once, then every final frame in one write.
    _set_nodelay(sess.writer, False)
    sess.conn.ping(_PING_DATA)
    sess.flush()
    releasing: list[_H2Stream] = []
    for st, last in finals:
        if st.outcome.done:  # answered or reset before the release: never fully sent
            sess.cancel(st)
            continue
        try:
            sess.conn.send_data(st.stream_id, last, end_stream=True)
        except h2.exceptions.StreamClosedError:
            st.outcome.finish(Broke.STREAM_RESET)
            continue
        releasing.append(st)
    data = sess.conn.data_to_send()
    if releasing and _write_now(sess.writer, data):
        now = time.time()
        for st in releasing:
            st.outcome.request_sent = True
            st.outcome.sent_at = now
    elif releasing:
        raise _H2Gone(Broke.CLOSED)

    deadline = loop.time() + timeout_s
    try:
        async with asyncio.timeout_at(deadline):
            with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                await sess.writer.drain()
            while any(not st.outcome.done for st in batch):
                await sess.pump()
    except TimeoutError:
        for st in batch:
            if not st.outcome.done:
                st.outcome.finish(Broke.TIMEOUT)
                sess.cancel(st)  # frees its slot for the next packet
        with contextlib.suppress(_H2Gone):
            sess.flush()


async def h2_burst(
    tgt: _Target,
    prepared: Sequence[_Prepared],
    *,
    timeout_s: float,
    read_cap: int,
    gate_wait_s: float,
    gate: Gate | None = None,
) -> list[RaceResponse]:
    """Run a single-packet HTTP/2 burst over one prior-knowledge h2c connection; its first
    packet's release waits for `gate` too (`race.race`)."""
    loop = asyncio.get_running_loop()
    streams = [_H2Stream(p, _Outcome()) for p in prepared]
    writer: asyncio.StreamWriter | None = None
    clean = False
    try:
        deadline = loop.time() + timeout_s
        try:
            reader, writer = await _open(tgt, deadline)
        except (OSError, TimeoutError) as exc:
            for st in streams:
                st.outcome.finish(*_connect_error(exc))
            return [st.outcome.freeze(timeout_s=timeout_s, read_cap=read_cap) for st in streams]
        sess = _H2Session(reader, writer, read_cap)
        try:
            try:
                async with asyncio.timeout_at(deadline):
                    await sess.start()
            except TimeoutError:
                raise _H2Gone(Broke.NOT_H2C, "no SETTINGS frame before the timeout") from None
            except _H2Gone as gone:
                if gone.broke is not Broke.NOT_H2C:
                    raise _H2Gone(Broke.NOT_H2C, f"the connection ended: {gone.broke.value}") from None
                raise
            pending = list(streams)
            while pending:
                limit = sess.conn.remote_settings.max_concurrent_streams
                room = max(1, limit - sess.conn.open_outbound_streams)
                batch, pending = pending[:room], pending[room:]
                await _h2_packet(sess, batch, timeout_s=timeout_s, gate_wait_s=gate_wait_s,
                                 gate=gate if len(pending) + len(batch) == len(streams) else None)
            clean = True
            with contextlib.suppress(h2.exceptions.ProtocolError, _H2Gone):
                sess.conn.close_connection()
                sess.flush()
        except _H2Gone as gone:
            for st in streams:
                st.outcome.finish(gone.broke, gone.detail)  # a no-op for the streams already done
    finally:
        await _close(writer, abort=not clean)
    return [st.outcome.freeze(timeout_s=timeout_s, read_cap=read_cap) for st in streams]


# --------------------------------------------------------------------------- the h2c probe


def clear_h2c_cache() -> None:
    """Forget every cached :func:`speaks_h2c` answer."""
    _H2C_CACHE.clear()


async def speaks_h2c(url: str, timeout_s: float) -> bool:
    """Tell whether the server behind ``url`` speaks HTTP/2 cleartext with prior knowledge.

    Opens one connection, sends the HTTP/2 preface and SETTINGS, and answers True when a
    valid SETTINGS frame comes back within ``timeout_s`` seconds. Definite answers are
    cached per host:port (see :func:`clear_h2c_cache`); a refused or timed-out probe
    returns False and is not cached.

    Raises:
        TargetError (ValueError): not an ``http://`` URL.
        ValueError: ``timeout_s`` is not positive.
    """
    tgt = _parse_url(url)
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s!r}")
    cached = _H2C_CACHE.get(tgt.key)
    if cached is not None:
        return cached
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    writer: asyncio.StreamWriter | None = None
    answer: bool | None = None
    try:
        reader, writer = await _open(tgt, deadline)
        sess = _H2Session(reader, writer, 0)
        async with asyncio.timeout_at(deadline):
            await sess.start()
        answer = True
        with contextlib.suppress(h2.exceptions.ProtocolError, _H2Gone):
            sess.conn.close_connection()
            sess.flush()
    except _H2Gone as gone:
        # Definitely not h2 when the server sent bytes h2 rejects, or closed on our preface.
        answer = False if gone.broke in (Broke.NOT_H2C, Broke.CLOSED) else None
    except (OSError, TimeoutError):
        answer = None
    finally:
        await _close(writer, abort=answer is not True)
    if answer is not None:
        _H2C_CACHE[tgt.key] = answer
    return bool(answer)
