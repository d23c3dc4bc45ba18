"""A slow but honest receiver, for interrupting a real run: ``python -m tests.hostile.slow_receiver``.

Raw asyncio HTTP/1.1: ``POST`` to any path answers 200 after ``--delay`` seconds (the
body is recorded to ``--record`` as one JSON line, when given); ``GET /healthz`` answers
200 at once. It writes its pid to ``--pidfile`` so a test can check it was stopped.
It applies nothing: an observer of it sees no effects.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
from pathlib import Path


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay_s: float,
                  record: Path | None) -> None:
    with contextlib.suppress(Exception):
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            body = await reader.readexactly(length) if length else b""
            if head.startswith(b"POST"):
                await asyncio.sleep(delay_s)
                if record is not None:
                    with record.open("a", encoding="utf-8") as f:
                        f.write(json.dumps({"body": body.decode("utf-8", "replace")}) + "\n")
            answer = b'{"received":true}'
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                         % (len(answer), answer))
            await writer.drain()
    writer.close()


async def _main(port: int, delay_s: float, record: Path | None) -> None:
    server = await asyncio.start_server(lambda r, w: _handle(r, w, delay_s, record), "127.0.0.1", port)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=0.3)
    parser.add_argument("--pidfile", type=Path)
    parser.add_argument("--record", type=Path)
    args = parser.parse_args()
    if args.pidfile:
        args.pidfile.write_text(str(os.getpid()))
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(args.port, args.delay, args.record))


if __name__ == "__main__":
    main()
