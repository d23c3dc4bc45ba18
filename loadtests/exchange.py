"""One storm attempt over geventhttpclient: what it observed, for the attempt core.

`exchange` POSTs a signed request on a geventhttpclient `HTTPClient`'s pooled
connections (the client a Locust ``FastHttpUser`` pools for its host) and returns what
it observed as a tuple of atoms (`ObservedAtoms`: the garbage collector untracks it,
and a storm keeps hundreds of thousands), which `observed` turns into the attempt
core's `Observed`, graded like every other sender's attempt
(`simulator.delivery.attempt_core.grade`).

It runs the exchange itself on the client's connection pool rather than through
`HTTPClient.request`, to keep what the core needs and a provider does:

- the answer's first bytes, as they came off the wire, before the parser reads them;
- one deadline of `timeout_s` for sending the request and reading the whole answer
  (a receiver that drips its answer is cut off like one that never answers), after
  the connection is open (the client's connection timeout bounds that), so it never
  runs out while the attempt waits for a connection; an expiry the loop delivers after
  its attempt ended is dropped, and one it delivers early waits out the rest (`_Deadline`);
- when the request went on the wire (`wire`), from which the storm counts the latency;
- the host resolved once per pool (`_resolved_once`), not on every new connection;
- at most `read_cap_bytes` of the body; a longer answer is abandoned and its
  connection closed;
- a pooled connection the receiver closed while it was idle is not charged to the
  receiver: when the request on a reused connection fails with a close or a reset
  before one byte of an answer came, it is sent once more on a fresh connection (as
  the dispatcher's transport does); a connection whose answer said
  ``Connection: close`` is never reused (geventhttpclient closes it).

A connection's own per-read timeout (the client's network timeout, which gevent arms as
a timer around every wait of a send or a read) is taken off while the attempt's deadline
is no longer than it: the deadline, started before the first write, would end the
attempt first, and the timer per wait costs a few µs per attempt.

It also writes the request's head itself (`_Heads`: the bytes `HTTPClient._build_request`
writes, header for header, without building a case-insensitive `Headers` per request)
and checks a pooled connection's liveness with one `poll` that does not wait instead of
geventhttpclient's `select` (the same test: an idle keep-alive connection has nothing to
read).

geventhttpclient's transport errors are translated here, at this one boundary. Imports
gevent and geventhttpclient, never Locust, and does not monkey-patch anything.
"""

from __future__ import annotations

import errno
import select
from time import perf_counter
from typing import Any, Callable, Mapping

import gevent
import gevent.monkey
import gevent.queue
import gevent.socket
from geventhttpclient import client as _gc
from geventhttpclient.client import HTTPClient
from geventhttpclient.response import HTTPConnectionClosed, HTTPParseError, HTTPSocketPoolResponse

from hookproof.simulator.delivery.attempt_core import ANSWER_START_BYTES, Broke, Observed
from hookproof.simulator.profiles.base import SignedRequest

#: `Observed`'s fields as atoms: request sent, status, body, over the cap, answer start,
#: `Broke` value or None, detail, sender timeout (s), read cap (bytes).
ObservedAtoms = tuple[bool, "int | None", bytes, bool, bytes, "str | None", "str | None", float, int]

#: Errnos of a write or read that met a connection the receiver had closed.
_GONE_ERRNOS = frozenset({errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED})

#: The liveness test of a pooled connection: the standard library's `select.poll` (not
#: gevent's cooperative one, which Locust's monkey-patching puts in its place), asked
#: without waiting whether the connection is readable: an idle keep-alive connection is
#: not; one with bytes, an end of file, a reset or an error is (POLLHUP and POLLERR are
#: reported whatever is asked). A third of a non-blocking `recv` peek's cost, whose
#: answer for a live connection was a raised BlockingIOError.
_poll: Any = gevent.monkey.get_original("select", "poll")
_getcurrent = gevent.getcurrent
_POLLIN = select.POLLIN


#: Layouts a client keeps (one per method, target and header names; a storm has a few).
_LAYOUTS_KEPT = 64
#: A layout not worked out yet (`_Heads.head`; None is one the client builds).
_UNSEEN: Any = object()


class _Heads:
    """The request heads one client writes, byte for byte as `HTTPClient._build_request`
    writes them (its default headers first, then the request's, case-insensitively
    replaced in place, then ``Host`` and ``Content-Length`` when missing), with its
    checks of the method, target, field names and values (ValueError), for a plain
    HTTP/1.1 client without a proxy. The order and the fixed lines are worked out once
    per method, target and header names (a layout: one %-template of the whole head, its
    fixed lines checked once, and its slots in order: a request header's ``"Field: "`` and
    its key in the request's headers, its value checked on each request unless it is the
    very string checked last time under that field; or None for the body's
    ``Content-Length``); each request then only formats its values into the template (a
    fifth less time than joining the pieces per request). `head` returns None for what it does not cover (a value that is not a
    string, ``Transfer-Encoding``, a target not starting with ``/``): the client builds
    those."""

    __slots__ = ("base", "checked", "host", "layouts")

    def __init__(self, client: HTTPClient) -> None:
        self.base: dict[str, Any] = dict(dict.items(client.default_headers))  # lower name -> raw entry
        host = client.host
        if ":" in host and host[0] != "[" and host[-1] != "]":
            host = "[" + host + "]"
        if client.port not in (80, 443):
            host += _gc.HOST_PORT_SEP + str(client.port)
        self.host = host
        self.layouts: dict[tuple[str, str, tuple[str, ...], bool], tuple[str, tuple[Any, ...]] | None] = {}
        # "Field: " -> the last value written under it, checked: a template's fixed header
        # values (the same string objects on every request) are checked once, not per request
        self.checked: dict[str, str] = {}

    @staticmethod
    def of(client: HTTPClient) -> "_Heads | None":
        """The heads of `client`, kept on it; None for a client they do not cover."""
        heads = client.__dict__.get("_hookproof_heads", False)
        if heads is False:
            covered = client.version == client.HTTP_11 and not client.use_proxy
            heads = client.__dict__["_hookproof_heads"] = _Heads(client) if covered else None
        return heads

    def head(self, method: str, uri: str, headers: Mapping[str, str], body: bytes) -> str | None:
        key = (method, uri, tuple(headers), not body)
        layout = self.layouts.get(key, _UNSEEN)
        if layout is _UNSEEN:
            layout = self._layout(method, uri, headers, body)
            if len(self.layouts) >= _LAYOUTS_KEPT:
                self.layouts.clear()
            self.layouts[key] = layout
        if layout is None:
            return None
        text, slots = layout
        checked = self.checked
        values: list[Any] = []
        for slot in slots:
            if slot is None:
                values.append(len(body))
                continue
            value = headers[slot[1]]
            if type(value) is not str:
                return None
            if checked.get(slot[0]) is not value:  # the very string checked last time passes again
                if not _gc._FIELD_VALUE_RE.fullmatch(value):
                    raise ValueError(f"invalid value for header field {slot[0][:-2]!r}: {value!r}")
                checked[slot[0]] = value
            values.append(value)
        return text % tuple(values)

    def _layout(self, method: str, uri: str, headers: Mapping[str, str],
                body: bytes) -> tuple[str, tuple[Any, ...]] | None:
        """The layout of the heads of (method, uri, these header names, a body or not): a
        %-template and its slots in order (a request header's ``("Field: ", key)``, None for
        the body's length), or None when the client builds them. Raises ValueError as the client does for a bad
        method, target or field name (and for a bad fixed value)."""
        if not uri.startswith(_gc.SLASH) or uri.startswith("//"):
            return None
        if not _gc._TOKEN_RE.fullmatch(method):
            raise ValueError(f"invalid HTTP method {method!r}")
        if not _gc._REQUEST_TARGET_RE.fullmatch(uri):
            raise ValueError(f"invalid request URI {uri!r}")
        fields: dict[str, Any] = {}  # lower name -> raw entry, or (field, key in headers)
        for lower, entry in self.base.items():
            fields[lower] = ("raw", entry)
        for field, value in headers.items():
            if type(value) is not str:
                return None
            fields[field.lower()] = ("request", (field, field))
        if "transfer-encoding" in fields:
            return None
        if "host" not in fields:
            fields["host"] = ("raw", (_gc.HEADER_HOST, self.host))
        length = "content-length" not in fields and bool(body)
        if "content-length" not in fields and not body and method.upper() in _gc._BODY_CARRYING_METHODS:
            fields["content-length"] = ("raw", (_gc.HEADER_CONTENT_LENGTH, "0"))
        pieces: list[Any] = [f"{method} {uri} {_gc.HTTPClient.HTTP_11}\r\n"]
        for kind, entry in fields.values():
            lines = (entry,) if kind == "request" or type(entry) is tuple else entry
            for field, value in lines:
                if not isinstance(field, str) or not _gc._TOKEN_RE.fullmatch(field):
                    raise ValueError(f"invalid header field name {field!r}")
                if kind == "request":
                    pieces.append((f"{field}: ", value))  # value: the key of its value in the headers
                    continue
                if isinstance(value, str) and not _gc._FIELD_VALUE_RE.fullmatch(value):
                    raise ValueError(f"invalid value for header field {field!r}: {value!r}")
                pieces.append(f"{field}: {value}\r\n")
        if length:
            pieces.append(None)
        pieces.append("\r\n")
        # one %-template: the fixed lines written as is (a "%" in them doubled), each
        # request header's value a %s and the body's length a %d, in order
        text: list[str] = []
        slots: list[Any] = []
        for piece in pieces:
            if type(piece) is str:
                text.append(piece.replace("%", "%%"))
            elif piece is None:
                text.append(f"{_gc.HEADER_CONTENT_LENGTH}: %d\r\n")
                slots.append(None)
            else:
                text.append(piece[0].replace("%", "%%") + "%s\r\n")
                slots.append(piece)
        return "".join(text), tuple(slots)


def request_head(client: HTTPClient, method: str, uri: str, headers: Mapping[str, str], body: bytes) -> str:
    """The head (request line, header lines, blank line) `client` writes for this request:
    `HTTPClient._build_request`'s text. Raises ValueError as it does."""
    heads = _Heads.of(client)
    head = heads.head(method, uri, headers, body) if heads is not None else None
    if head is None:
        head = client._build_request(method, uri, body=body, headers=headers, chunked=False)
    return head


def _pooled_socket(pool: Any) -> tuple[Any, bool]:
    """A connection from `pool` (`ConnectionPool.get_socket`: a pooled one still alive,
    else a new one), the liveness of a pooled one tested by a poll that does not wait:
    alive when nothing is readable (a closed one reads EOF, a dirty one has bytes); and
    whether it was pooled, i.e. reused: a connection enters the pool only when an answer
    on it was read whole (`HTTPSocketPoolResponse.release`), so it has carried a request."""
    pool._semaphore.acquire()
    if pool._closed:
        raise RuntimeError("connection pool closed")
    queue = pool._socket_queue
    while not queue.empty():
        try:
            sock = queue.get(block=False)
        except gevent.queue.Empty:
            break
        raw = getattr(sock, "_sock", None)
        if raw is None:  # not a gevent socket of this kind: the pool's own test
            if pool._is_socket_alive(sock):
                return sock, True
        elif sock.fileno() >= 0:
            poller = _poll()
            poller.register(sock.fileno(), _POLLIN)
            if not poller.poll(0):
                return sock, True
        try:
            sock.close()
        except OSError:
            pass
    try:
        return _created(pool), False
    except BaseException:
        pool._semaphore.release()
        raise


class _Expired(Exception):
    """The attempt's deadline passed (raised by a `_Deadline`)."""


class _Deadline(gevent.Timeout):
    """A `gevent.Timeout` that throws only while its attempt is on (`armed`, set by
    `_deadline`, cleared by `_stopped`) and only once its seconds have passed by
    `time.perf_counter` (`until`). Both were seen to fail on a worker whose loop stalled
    1.5 s at a time, with a sender timeout of 2 s (tests/loadtests/test_storm_sender_load.py):
    an expiry queued in a lagging loop's turn was thrown into the greenlet's next attempt
    after the answer had ended the one it belonged to, and a deadline started just after
    a stall fired 16 ms later. Either "timed out" an attempt a few ms after its request
    went on the wire. An early expiry waits out the rest on a timer of its own (`rest`)."""

    armed = False
    until = 0.0
    rest: Any = None

    def _on_expiration(self, prev_greenlet: Any, ex: Any) -> None:
        if not self.armed:
            return
        left = self.until - perf_counter()
        if left > 0.0:
            if self.rest is not None:
                self.rest.close()
            rest = self.rest = gevent.get_hub().loop.timer(left)
            rest.start(self._on_expiration, prev_greenlet, ex, update=True)
            return
        self.armed = False
        prev_greenlet.throw(ex)

    def disarm(self) -> None:
        """End the attempt's deadline: no expiry is thrown any more."""
        self.armed = False
        if self.rest is not None:
            self.rest.stop()


#: Stopped attempt deadlines a client keeps for its next attempts (at most its pool's size in use at once).
_DEADLINES_KEPT = 256


def _deadline(client: HTTPClient, timeout_s: float) -> _Deadline:
    """A started deadline of `timeout_s` seconds for the current greenlet, raising
    `_Expired`: one the client's attempts stopped before (`_stopped`) when there is one,
    else a new one. Reusing its loop timer costs a third of making one (a `gevent.Timeout`
    allocates a libev timer), with the same behaviour: `start` reads the loop's clock anew
    and aims at the greenlet that starts it."""
    idle = client.__dict__.get("_hookproof_deadlines")
    if idle is None:
        idle = client.__dict__["_hookproof_deadlines"] = {}
    kept = idle.get(timeout_s)
    timer = kept.pop() if kept else _Deadline(timeout_s, _Expired)
    # `gevent.Timeout.start` without its Python-level checks, which a kept deadline (stopped)
    # and a new one (never started) pass: the same libev start, aimed at this greenlet,
    # throwing `_Expired`, the loop's clock updated first
    timer.timer.start(timer._on_expiration, _getcurrent(), _Expired, update=True)
    timer.until = perf_counter() + timeout_s
    timer.armed = True
    return timer


def _stopped(client: HTTPClient, timeout_s: float, timer: _Deadline) -> None:
    """Stop `timer` (`_deadline`'s) and keep it for the client's next attempt, unless it
    fired: then it is closed, never reused. The loop may still be inside the callback that
    threw `_Expired` into this greenlet, and a timer restarted from there was measured to
    lose its deadline (the next attempt ran into the per-read timeout instead:
    tests/loadtests/test_exchange_deadlines.py). Disarmed first: an expiry the loop has
    queued and not yet delivered is dropped (`_Deadline`)."""
    timer.disarm()
    if not timer.timer.active:
        if timer.rest is not None:
            timer.rest.close()
            timer.rest = None
        timer.close()
        return
    timer.timer.stop()  # `gevent.Timeout.cancel` of a timeout that is not one-shot
    kept = client.__dict__["_hookproof_deadlines"].setdefault(timeout_s, [])
    if len(kept) < _DEADLINES_KEPT:
        kept.append(timer)
    else:
        timer.close()


class _Seen:
    """What came off the wire for one exchange: the answer's first bytes, and whether the
    receiver closed the connection (a read returned nothing)."""

    __slots__ = ("eof", "start")

    def __init__(self) -> None:
        self.start = bytearray()
        self.eof = False


#: What an exchange saw before it had a connection: nothing (never given to a response).
_NOTHING_SEEN = _Seen()


class _Response(HTTPSocketPoolResponse):
    """geventhttpclient's pooled response, noting what came off the wire (`_Seen`) before
    its parser reads it, and keeping no index of the answer's header fields: an attempt
    reads its status, its body and the bytes that came (the attempt core grades those),
    never a header by name, and the parser (llhttp) frames the body and tells whether the
    connection is kept alive by itself. The fields' callbacks do nothing, so its header
    accessors (`get`, `items`, `content_length`…) find none; a response indexed header by
    header cost 1.5 µs per field (a case-insensitive `Headers` entry)."""

    def __init__(self, sock: Any, pool: Any, seen: _Seen, **kw: Any) -> None:
        self._seen = seen
        super().__init__(sock, pool, **kw)

    def feed(self, data: str | bytes) -> None:
        seen = self._seen
        if not data:
            seen.eof = True
        elif len(seen.start) < ANSWER_START_BYTES and isinstance(data, bytes):
            seen.start += data[:ANSWER_START_BYTES - len(seen.start)]
        super().feed(data)

    def _on_header_field(self, string: str) -> None:
        pass

    def _on_header_value(self, string: str) -> None:
        pass


def observed(atoms: ObservedAtoms) -> Observed:
    """The attempt core's `Observed` of `exchange`'s atoms."""
    sent, status, body, over_cap, start, broke, detail, timeout_s, cap = atoms
    return Observed(sent, status, body, over_cap=over_cap, answer_start=start,
                    broke=Broke(broke) if broke is not None else None, detail=detail, timeout_s=timeout_s,
                    read_cap_bytes=cap)


def exchange(client: HTTPClient, uri: str, request: SignedRequest | Callable[[], SignedRequest], *,
             read_cap_bytes: int, timeout_s: float, wire: list[float] | None = None) -> ObservedAtoms:
    """POST `request` to `uri` (path and query) on `client`'s pool; what was observed.
    A callable `request` is called once a connection is had, before the first byte is written:
    a provider signs a delivery when it sends it, not before waiting for a connection.

    `wire`, when given, gets ``wire[0]`` set to the `time.perf_counter` at which the
    request's first byte was handed to the connection (after the connection was had:
    from the pool, or resolved and opened; the last such moment when a reused connection
    the receiver had closed is replaced); it is left as is when nothing was written. An
    attempt's latency counts from there: what comes before is the sender's own delay.

    Never raises for what the receiver or the network does; only programmer errors
    (a header geventhttpclient refuses to write: ValueError) escape.
    """
    made: SignedRequest | None = None if callable(request) else request
    data = b""
    pool = client._connection_pool
    seen = _NOTHING_SEEN  # until a connection is had (then each try's own)

    def broke(kind: Broke, *, sent: bool = True, detail: str | None = None) -> ObservedAtoms:
        return (sent, None, b"", False, bytes(seen.start), kind.value, detail, timeout_s, read_cap_bytes)

    for fresh in (False, True):
        try:
            sock, reused = (_fresh_socket(pool), False) if fresh else _pooled_socket(pool)
        except ConnectionRefusedError:
            return broke(Broke.REFUSED, sent=False)
        except (TimeoutError, gevent.Timeout):
            return broke(Broke.CONNECT_TIMEOUT, sent=False)
        except ConnectionResetError:
            return broke(Broke.RESET, sent=False)
        except OSError as exc:
            return broke(Broke.CONNECT_FAILED, sent=False, detail=exc.strerror or type(exc).__name__)
        seen = _Seen()
        limit = sock.gettimeout()
        if limit is not None and limit >= timeout_s:
            # the attempt's deadline (`timeout_s`, started once the connection is had, before
            # any write or read) ends it first: the socket's own timeout (the client's network
            # timeout), a timer armed around every wait, could never fire
            sock.settimeout(None)
            limit = None
        if made is None:  # signed now that a connection is had
            assert callable(request)
            made = request()
        if not data:
            data = request_head(client, made.method, uri, made.headers, made.body).encode("latin-1") + made.body
        timer = _deadline(client, timeout_s)
        if wire is not None:
            wire[0] = perf_counter()
        try:
            try:
                _send_all(sock, data, limit)
            except OSError as exc:
                pool.release_socket(sock)
                if reused and not fresh and exc.errno in _GONE_ERRNOS:
                    continue
                return broke(Broke.RESET if exc.errno == errno.ECONNRESET else Broke.CLOSED, sent=False)
            try:
                response = _Response(sock, pool, seen, block_size=client.block_size, method=made.method,
                                     headers_type=client.headers_type)
            except HTTPConnectionClosed as exc:  # not one byte came; the response released the socket
                if reused and not fresh and not seen.start:
                    continue
                return broke(Broke.RESET if isinstance(exc.__context__, ConnectionResetError) else Broke.CLOSED)
            except HTTPParseError:
                return broke(Broke.CLOSED if seen.eof else Broke.INVALID)
            return _read(response, timeout_s, read_cap_bytes, seen)
        except _Expired:
            return broke(Broke.TIMEOUT)
        except TimeoutError:  # the client's per-read network timeout
            return broke(Broke.TIMEOUT)
        except ConnectionResetError:
            return broke(Broke.RESET)
        except OSError as exc:
            return broke(Broke.OTHER, detail=exc.strerror or type(exc).__name__)
        finally:
            _stopped(client, timeout_s, timer)
    raise AssertionError("unreachable")  # pragma: no cover


def _send_all(sock: Any, data: bytes, limit: float | None) -> None:
    """Write all of `data` to `sock`, as its `sendall` does. On a socket without a timeout
    of its own (`limit` None: the attempt's deadline bounds the write) one `send` first,
    which writes a request whole whenever the connection's buffer has room for it (nearly
    always: a storm's requests are a few kB), then `sendall` for what it left: gevent's
    `sendall` asks the kernel for the socket's buffer size and cuts the data into chunks on
    every call (1.9 against 3.3 µs per 4 kB request, a loopback socket pair, gevent 26).
    With a timeout, `sendall` alone (its timeout is for the whole write)."""
    if limit is None:
        sent = sock.send(data)
        if sent < len(data):
            sock.sendall(memoryview(data)[sent:])
        return
    sock.sendall(data)


def _read(response: _Response, timeout_s: float, cap: int, seen: _Seen) -> ObservedAtoms:
    """The status and at most `cap` bytes of the body (the caller's deadline runs)."""
    status = response.status_code
    start = bytes(seen.start)
    try:
        body = bytes(response.read(cap + 1))
        if len(body) > cap:
            return (True, status, body[:cap], True, start, None, None, timeout_s, cap)
        return (True, status, body, False, start, None, None, timeout_s, cap)
    except (_Expired, TimeoutError):
        kind: Broke = Broke.TIMEOUT
    except ConnectionResetError:
        kind = Broke.RESET
    except HTTPParseError:
        kind = Broke.CLOSED if seen.eof else Broke.INVALID
    except OSError:
        kind = Broke.CLOSED
    finally:
        response.release()  # back to the pool, or closed when the body was not read whole
    return (True, status, b"", False, start, kind.value, None, timeout_s, cap)


def _created(pool: Any) -> Any:
    """A new connection of `pool` (`ConnectionPool._create_socket`), its host's addresses
    resolved once per pool (`_resolved_once`)."""
    _resolved_once(pool)
    return pool._create_socket()


def _resolved_once(pool: Any) -> None:
    """Have `pool` resolve its host once and reuse the addresses for every connection it
    opens. geventhttpclient resolves on each new connection, through gevent's resolver:
    a thread pool of 10, which a busy sender's loop serves late. Measured on a storm of
    10 users on one loaded worker: resolving ``127.0.0.1`` took p99 7.6 s, and 9 in 10
    attempts opened a connection, so most of an attempt's time went there."""
    if "_resolve" in pool.__dict__:
        return
    resolve = pool._resolve
    addresses: list[Any] = []

    def once() -> Any:
        if not addresses:
            addresses.extend(resolve())
        return list(addresses)

    pool._resolve = once


def _fresh_socket(pool: Any) -> Any:
    """A new connection from `pool`, never a pooled one (the pool's own accounting kept)."""
    pool._semaphore.acquire()
    try:
        return _created(pool)
    except BaseException:
        pool._semaphore.release()
        raise


__all__ = ["ObservedAtoms", "exchange", "observed", "request_head"]
