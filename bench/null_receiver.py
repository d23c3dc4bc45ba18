"""A null HTTP/1.1 receiver for benchmarks: reads each request, answers 200 at once.

Run: ``python bench/null_receiver.py PORT [CPU]`` (pins itself to CPU when given).

An asyncio protocol that only frames requests (head up to the blank line, then
``Content-Length`` bytes of body; keep-alive and pipelining) and answers each with a
fixed 200. It does none of a server's other work, so on one core it answers several
times faster than any sender here sends (an h11 receiver answered about 4,600
requests/s and capped bare Locust and the storm alike, hiding the senders' costs).
Chunked bodies are not framed: the senders benchmarked here send ``Content-Length``.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import subprocess
import sys
import time

from bench_args import parser

_ANSWER = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-type: text/plain\r\n\r\nok"
_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)", re.IGNORECASE)
#: Bytes of buffered head at most before the connection is dropped (no blank line came).
_MAX_HEAD = 64 * 1024


class _Null(asyncio.Protocol):
    def __init__(self) -> None:
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer + data if self.buffer else data
        answers = 0
        start = 0
        while True:
            end = buffer.find(b"\r\n\r\n", start)
            if end < 0:
                break
            found = _LENGTH.search(buffer, start, end + 2)
            size = end + 4 + (int(found.group(1)) if found else 0)
            if size > len(buffer):
                break
            answers += 1
            start = size
        self.buffer = buffer[start:]
        assert self.transport is not None
        if answers:
            self.transport.write(_ANSWER * answers)
        if len(self.buffer) > _MAX_HEAD and self.buffer.find(b"\r\n\r\n") < 0:
            self.transport.close()


async def _serve(port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(_Null, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


#: Seconds `start` waits for the child to accept a connection.
START_WAIT_S = 30.0


def start(cpu: int | None = None) -> tuple["subprocess.Popen[bytes]", str]:
    """This receiver in a child process on a free 127.0.0.1 port (pinned to `cpu` when
    given), once it accepts connections: (the process, its URL ``http://127.0.0.1:PORT/webhooks``).
    The caller stops it (``terminate``, ``wait``). Raises RuntimeError when it does not
    accept within `START_WAIT_S` seconds (the child is stopped first)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    extra = [] if cpu is None else [str(cpu)]
    server = subprocess.Popen([sys.executable, os.path.abspath(__file__), str(port), *extra])
    deadline = time.monotonic() + START_WAIT_S
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server, f"http://127.0.0.1:{port}/webhooks"
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.terminate()
                server.wait(5)
                raise RuntimeError(f"the null receiver did not accept on port {port} within {START_WAIT_S:g} s") from None
            time.sleep(0.1)


if __name__ == "__main__":
    cli = parser(__doc__)
    cli.add_argument("port", type=int, help="TCP port on 127.0.0.1")
    cli.add_argument("cpu", nargs="?", type=int, help="pin this process to this CPU")
    args = cli.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    asyncio.run(_serve(args.port))
