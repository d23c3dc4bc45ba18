"""The storm exchange's pooled connections (`loadtests.exchange._pooled_socket`): one the
receiver left bytes on, closed or reset while it was idle is not reused; the next
attempt goes out on a fresh connection and is answered.

Run in a subprocess (`tests.hostile.storm_exchange`: gevent never enters pytest).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest

from tests.hostile.harness import ROOT, child_env
from tests.hostile.servers import Connection, HostileServer

pytestmark = pytest.mark.timeout(120)

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
#: What the receiver does to a connection after answering its first request, while it is
#: idle: bytes nobody asked for (a reused connection would read them as the next answer),
#: an end of file, a reset.
IDLE = ("stray-bytes", "close", "reset")


class _AfterTheFirstAnswer(HostileServer):
    """Answers a connection's first request 200, then (0.1 s later, while the client
    waits) does `behaviour` to it; every other connection is answered 200 throughout."""

    def handler(self) -> Any:
        async def handle(c: Connection) -> None:
            first_connection = self.connections == 1
            while await c.read_request():
                if not await c.write(OK):
                    return
                if first_connection:
                    await asyncio.sleep(0.1)
                    if self.behaviour == "stray-bytes":
                        await c.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                        await c.hold(2.0)
                    elif self.behaviour == "reset":
                        c.reset()
                    return  # close: the connection ends (FIN)
        return handle


@pytest.mark.parametrize("behaviour", IDLE)
def test_a_pooled_connection_spoiled_while_idle_is_not_reused(behaviour: str) -> None:
    server = _AfterTheFirstAnswer(behaviour).start()
    try:
        run = subprocess.run([sys.executable, "-m", "tests.hostile.storm_exchange", "--pause", "0.5", "--attempts",
                              "2", "5", "65536", server.url], capture_output=True, text=True, timeout=90, cwd=ROOT,
                             env=child_env())
    finally:
        server.close()
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [{"completion": "ok", "reason": None, "status": 200}] * 2
    assert (server.connections, server.requests) == (2, 2)


#: Writes requests with `exchange._send_all` on a connected socket pair under gevent, the
#: writer's buffer small, a greenlet reading the other end slowly: prints what arrived and
#: how the writes went (a partial first `send` then the rest, and with a timeout `sendall`).
_SEND_ALL = r"""
import json, socket, sys
from gevent import monkey; monkey.patch_all()
import gevent
from hookproof.loadtests import exchange

def trial(limit, size):
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    a.settimeout(limit)
    data = bytes(i % 251 for i in range(size))
    got = bytearray()
    def read():
        while len(got) < size:
            gevent.sleep(0.001)
            got.extend(b.recv(8192))
    reader = gevent.spawn(read)
    calls = []

    class Spy:  # the socket, its writes noted
        def send(self, d):
            calls.append(("send", len(d)))
            return a.send(d)

        def sendall(self, d):
            calls.append(("sendall", len(d)))
            return a.sendall(d)

    exchange._send_all(Spy(), data, limit)
    reader.join(timeout=20)
    return {"whole": bytes(got) == data, "calls": [c[0] for c in calls], "first": calls[0][1], "size": size}

print(json.dumps([trial(None, 1 << 20), trial(None, 2000), trial(30.0, 1 << 20)]))
"""


def test_a_request_is_written_whole_by_one_send_and_the_rest_by_sendall() -> None:
    """`exchange._send_all`: on a socket without a timeout of its own, one `send`, then
    `sendall` for what it left when the buffer had no room for it all (every byte arrives,
    in order); a small request goes out in one `send` alone; on a socket with a timeout,
    `sendall` alone."""
    run = subprocess.run([sys.executable, "-c", _SEND_ALL], capture_output=True, text=True, timeout=90, cwd=ROOT,
                         env=child_env())
    assert run.returncode == 0, run.stderr
    big, small, timed = json.loads(run.stdout)
    assert big["whole"] and big["calls"] == ["send", "sendall"] and big["first"] == 1 << 20
    assert small["whole"] and small["calls"] == ["send"]
    assert timed["whole"] and timed["calls"] == ["sendall"] and timed["first"] == 1 << 20


#: Reads answers with the exchange's `_Response` and with geventhttpclient's own pooled
#: response, from a socket that hands them over `step` bytes at a time; prints, for each,
#: (status, body, should close, header fields indexed).
_FRAMING = r"""
import json
from gevent import monkey; monkey.patch_all()
from geventhttpclient.response import HTTPSocketPoolResponse
from hookproof.loadtests import exchange

ANSWERS = {
    "fields, keep-alive": b"HTTP/1.1 200 OK\r\nDate: Sat, 05 Dec 2026 19:00:00 GMT\r\nServer: uvicorn\r\n"
                          b"Content-Length: 14\r\nContent-Type: application/json\r\nX-Request-Id: 12345\r\n"
                          b"Connection: keep-alive\r\n\r\n{\"received\":1}",
    "connection close": b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy",
    "interim first": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
    "chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
    "no length, http/1.0": b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end",
}


class Pool:
    def return_socket(self, sock): pass
    def release_socket(self, sock): pass


class Sock:
    def __init__(self, data, step):
        self.data, self.step = data, step
    def recv(self, n):
        piece, self.data = self.data[:min(n, self.step)], self.data[min(n, self.step):]
        return piece


out = {}
for name, answer in ANSWERS.items():
    for step in (1, 7, 1 << 16):
        for kind, make in (("storm", lambda s: exchange._Response(s, Pool(), exchange._Seen(), method="POST")),
                           ("client", lambda s: HTTPSocketPoolResponse(s, Pool(), method="POST"))):
            r = make(Sock(answer, step))
            out[f"{name} / {step} / {kind}"] = [r.status_code, r.read(65537).decode(), r.should_close(),
                                               len(list(r.items()))]
print(json.dumps(out))
"""


def test_the_exchange_s_response_frames_answers_as_the_client_s_without_indexing_their_fields() -> None:
    """`exchange._Response` keeps no header index, and reads every answer as geventhttpclient's
    own response does: the same status, body and connection reuse, header fields or not,
    kept alive or closed, after an interim answer, chunked, to the end of the connection,
    whole or a byte at a time."""
    run = subprocess.run([sys.executable, "-c", _FRAMING], capture_output=True, text=True, timeout=90, cwd=ROOT,
                         env=child_env())
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    storm = {k.rsplit(" / ", 1)[0]: v for k, v in out.items() if k.endswith(" / storm")}
    client = {k.rsplit(" / ", 1)[0]: v for k, v in out.items() if k.endswith(" / client")}
    assert len(storm) == len(client) == 15
    for key, (status, body, close, fields) in storm.items():
        assert [status, body, close] == client[key][:3], key
        assert fields == 0 and client[key][3] > 0 or key.startswith("interim"), key
    assert storm["fields, keep-alive / 1"] == [200, '{"received":1}', False, 0]
    assert storm["connection close / 7"] == [503, "busy", True, 0]
    assert storm["interim first / 65536"][:2] == [201, "ok"]
    assert storm["chunked / 1"][:2] == [200, "abcde"]
    assert storm["no length, http/1.0 / 7"][:3] == [200, "until the end", True]


#: Two attempts on a pool of one connection, the receiver (a gevent server in the same process)
#: answering the first after 1 s: prints when each request was signed, when the first answer was
#: written, and both statuses.
_SIGNED_WHEN_SENT = r"""
import json, time
from gevent import monkey; monkey.patch_all()
import gevent
from gevent.server import StreamServer
from geventhttpclient.client import HTTPClient
from geventhttpclient.url import URL
from hookproof.loadtests.exchange import exchange
from hookproof.simulator.profiles.base import new_signed_request

answered = []

def handle(sock, _):
    data = b""
    while True:
        while b"\r\n\r\n" not in data:
            more = sock.recv(65536)
            if not more:
                return
            data += more
        head, _, data = data.partition(b"\r\n\r\n")
        length = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
        while len(data) < length:
            data += sock.recv(65536)
        data = data[length:]
        if not answered:
            gevent.sleep(1.0)
        answered.append(time.perf_counter())
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")

server = StreamServer(("127.0.0.1", 0), handle)
server.start()
client = HTTPClient.from_url(URL(f"http://127.0.0.1:{server.server_port}/"), concurrency=1, connection_timeout=5,
                             network_timeout=10)
signed = {}

def attempt(n):
    def sign():
        signed[n] = time.perf_counter()
        return new_signed_request({"Content-Type": "application/json"}, b"{}", {})
    return exchange(client, "/webhooks", sign, read_cap_bytes=65536, timeout_s=10.0)[1]

first = gevent.spawn(attempt, 1)
gevent.sleep(0.2)  # the first holds the only connection
second = gevent.spawn(attempt, 2)
gevent.joinall([first, second], timeout=30)
print(json.dumps({"statuses": [first.value, second.value], "first_answer": answered[0], "signed": signed}))
"""


def test_an_attempt_waiting_for_a_connection_is_signed_when_it_has_one() -> None:
    """A storm user whose connections are all busy waits for one. Signed before that wait, a
    request reached a receiver with a 5 s tolerance (Paddle's Node SDK) already stale, and a
    correct receiver's refusals were `valid_not_rejected` findings: a provider signs when it
    sends. The second attempt is signed after the first one's answer freed the connection."""
    run = subprocess.run([sys.executable, "-c", _SIGNED_WHEN_SENT], capture_output=True, text=True, timeout=90,
                         cwd=ROOT, env=child_env())
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["statuses"] == [200, 200]
    assert got["signed"]["1"] < got["first_answer"] <= got["signed"]["2"], got
