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
