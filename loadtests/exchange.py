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
  the connection is open (the client's connection timeout bounds that);
- at most `read_cap_bytes` of the body; a longer answer is abandoned and its
  connection closed;
- a pooled connection the receiver closed while it was idle is not charged to the
  receiver: when the request on a reused connection fails with a close or a reset
  before one byte of an answer came, it is sent once more on a fresh connection (as
  the dispatcher's transport does); a connection whose answer said
  ``Connection: close`` is never reused (geventhttpclient closes it).

geventhttpclient's transport errors are translated here, at this one boundary. Imports
gevent and geventhttpclient, never Locust, and does not monkey-patch anything.
"""

from __future__ import annotations

import errno
import weakref
from typing import Any

import gevent
import gevent.socket
from geventhttpclient.client import HTTPClient
from geventhttpclient.response import HTTPConnectionClosed, HTTPParseError, HTTPSocketPoolResponse

from hookproof.simulator.delivery.attempt_core import ANSWER_START_BYTES, Broke, Observed
from hookproof.simulator.profiles.base import SignedRequest

#: `Observed`'s fields as atoms: request sent, status, body, over the cap, answer start,
#: `Broke` value or None, detail, sender timeout (s), read cap (bytes).
ObservedAtoms = tuple[bool, "int | None", bytes, bool, bytes, "str | None", "str | None", float, int]

#: Errnos of a write or read that met a connection the receiver had closed.
_GONE_ERRNOS = frozenset({errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED})

#: Sockets that have carried a request (a socket in it, taken from the pool, is reused).
_USED: weakref.WeakSet[Any] = weakref.WeakSet()


class _Expired(Exception):
    """The attempt's deadline passed (raised by a `gevent.Timeout`)."""


class _Seen:
    """What came off the wire for one exchange: the answer's first bytes, and whether the
    receiver closed the connection (a read returned nothing)."""

    __slots__ = ("eof", "start")

    def __init__(self) -> None:
        self.start = bytearray()
        self.eof = False


class _Response(HTTPSocketPoolResponse):
    """geventhttpclient's pooled response, noting what came off the wire (`_Seen`) before
    its parser reads it."""

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


def observed(atoms: ObservedAtoms) -> Observed:
    """The attempt core's `Observed` of `exchange`'s atoms."""
    sent, status, body, over_cap, start, broke, detail, timeout_s, cap = atoms
    return Observed(sent, status, body, over_cap=over_cap, answer_start=start,
                    broke=Broke(broke) if broke is not None else None, detail=detail, timeout_s=timeout_s,
                    read_cap_bytes=cap)


def exchange(client: HTTPClient, uri: str, request: SignedRequest, *, read_cap_bytes: int,
             timeout_s: float) -> ObservedAtoms:
    """POST `request` to `uri` (path and query) on `client`'s pool; what was observed.

    Never raises for what the receiver or the network does; only programmer errors
    (a header geventhttpclient refuses to write: ValueError) escape.
    """
    head = client._build_request(request.method, uri, body=request.body, headers=request.headers, chunked=False)
    data = head.encode("latin-1") + request.body
    pool = client._connection_pool
    seen = _Seen()

    def broke(kind: Broke, *, sent: bool = True, detail: str | None = None) -> ObservedAtoms:
        return (sent, None, b"", False, bytes(seen.start), kind.value, detail, timeout_s, read_cap_bytes)

    for fresh in (False, True):
        try:
            sock = _fresh_socket(pool) if fresh else pool.get_socket()
        except ConnectionRefusedError:
            return broke(Broke.REFUSED, sent=False)
        except (TimeoutError, gevent.Timeout):
            return broke(Broke.CONNECT_TIMEOUT, sent=False)
        except ConnectionResetError:
            return broke(Broke.RESET, sent=False)
        except OSError as exc:
            return broke(Broke.CONNECT_FAILED, sent=False, detail=exc.strerror or type(exc).__name__)
        reused = sock in _USED
        _USED.add(sock)
        seen = _Seen()
        timer = gevent.Timeout(timeout_s, _Expired)
        timer.start()
        try:
            try:
                sock.sendall(data)
            except OSError as exc:
                pool.release_socket(sock)
                if reused and not fresh and exc.errno in _GONE_ERRNOS:
                    continue
                return broke(Broke.RESET if exc.errno == errno.ECONNRESET else Broke.CLOSED, sent=False)
            try:
                response = _Response(sock, pool, seen, block_size=client.block_size, method=request.method,
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
            timer.close()
    raise AssertionError("unreachable")  # pragma: no cover


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


def _fresh_socket(pool: Any) -> Any:
    """A new connection from `pool`, never a pooled one (the pool's own accounting kept)."""
    pool._semaphore.acquire()
    try:
        return pool._create_socket()
    except BaseException:
        pool._semaphore.release()
        raise


__all__ = ["ObservedAtoms", "exchange", "observed"]
