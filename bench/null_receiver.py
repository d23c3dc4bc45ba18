"""A null HTTP/1.1 receiver for benchmarks: reads each request, answers 200 at once.

Run: ``python bench/null_receiver.py PORT [CPU]`` (pins itself to CPU when given).
Raw asyncio with h11 so the receiver is never the bottleneck.
"""

from __future__ import annotations

import asyncio
import os
import sys

import h11

_HEAD = h11.Response(status_code=200, headers=[("content-length", "2"), ("content-type", "text/plain")])
_BODY = h11.Data(data=b"ok")


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    conn = h11.Connection(h11.SERVER)
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await reader.read(65536)
                if not data:
                    return
                conn.receive_data(data)
                continue
            if isinstance(event, h11.EndOfMessage):
                writer.write(conn.send(_HEAD) + conn.send(_BODY) + conn.send(h11.EndOfMessage()))
                conn.start_next_cycle()
            elif isinstance(event, h11.ConnectionClosed):
                return
    except (h11.RemoteProtocolError, ConnectionError):
        return
    finally:
        writer.close()


async def _serve(port: int) -> None:
    server = await asyncio.start_server(_handle, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    if len(sys.argv) > 2:
        os.sched_setaffinity(0, {int(sys.argv[2])})
    asyncio.run(_serve(int(sys.argv[1])))
