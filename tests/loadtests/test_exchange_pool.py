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
