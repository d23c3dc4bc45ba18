"""Race hit rate of simulator.delivery.race: how often a burst of copies double-applies.

A receiver with a racy check-then-act dedupe (``if key not in seen: <window>; seen.add(key);
apply``) runs in its own process, pinned to CPU 1, on uvicorn (HTTP/1.1) and on hypercorn
(HTTP/1.1 + h2c). The client (pinned to CPU 0) sends R bursts of N identical POSTs, each
burst with a fresh key, with the modes ``plain`` (N concurrent ordinary requests),
``h1-last-byte`` and ``h2-single-packet`` (hypercorn only). Two windows: one event-loop
yield (``await asyncio.sleep(0)``) and 0.2 ms (``await asyncio.sleep(0.0002)``).

Printed per row: bursts with a double apply (the race hit rate), mean copies applied per
burst (1.0 is a correct dedupe; N is every copy winning), and wall-clock ms per burst
(the gated modes include the 100 ms pre-send wait). Loopback only, bounded: every burst
has a 5 s timeout; the whole run takes well under a minute.

Reading the numbers: on loopback with the receiver pinned to its own CPU, the receiver
wakes on the first final byte of an HTTP/1.1 last-byte burst and works through the copies
while the client is still writing the other final bytes (one syscall per connection), so
with a one-yield window last-byte sync can do worse than plain requests (whose arrival
keeps the receiver busy and batches them). The single HTTP/2 packet has no such spread.

Run: ``python bench/race_hit_rate.py [R] [N] [--no-pin]`` (defaults 30 and 20; ``--no-pin``
leaves both processes to the scheduler instead of pinning them to CPUs 0 and 1).
The same file is the receiver: ``python bench/race_hit_rate.py --serve uvicorn|hypercorn PORT``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hookproof.simulator.delivery.race import RaceRequest, race, speaks_h2c  # noqa: E402

WINDOWS: dict[str, float] = {"yield": 0.0, "0.2ms": 0.0002}
BURST_TIMEOUT_S = 5.0
WARMUP_BURSTS = 3
PIN = "--no-pin" not in sys.argv
BODY = json.dumps({"id": "evt_bench", "type": "invoice.paid",
                   "data": {"object": {"id": "in_123", "amount_paid": 1200}}}).encode()


# --------------------------------------------------------------------------- the receiver


class CheckThenActReceiver:
    """ASGI app: ``POST /hook?key=K&window=yield|0.2ms`` answers ``{"applied": bool}``."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict]],
                       send: Callable[[dict], Awaitable[None]]) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            more = message.get("more_body", False)
        query = parse_qs(scope["query_string"].decode())
        key = query.get("key", [""])[0]
        window = WINDOWS.get(query.get("window", ["yield"])[0], 0.0)
        applied = False
        if key and key not in self.seen:  # check
            await asyncio.sleep(window)  # the race window
            self.seen.add(key)  # act
            applied = True
        body = b'{"applied":true}' if applied else b'{"applied":false}'
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def _pin(cpu: int) -> None:
    """Pin this process to one CPU when the machine has several (Linux only)."""
    if PIN and hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {cpu})


def _serve(server: str, port: int) -> None:
    """Run the receiver on 127.0.0.1:port until killed (the child process)."""
    _pin(1)
    app = CheckThenActReceiver()
    if server == "uvicorn":
        import uvicorn

        uvicorn.run(app, host="127.0.0.1", port=port, lifespan="off", log_level="error",
                    access_log=False)
    else:
        from hypercorn.asyncio import serve
        from hypercorn.config import Config

        config = Config()
        config.bind = [f"127.0.0.1:{port}"]
        config.accesslog = None
        config.errorlog = None
        asyncio.run(serve(app, config))


# --------------------------------------------------------------------------- the client


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_receiver(server: str) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    argv = [sys.executable, __file__, "--serve", server, str(port)]
    proc = subprocess.Popen(argv + ([] if PIN else ["--no-pin"]))
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"the {server} receiver did not start")


@dataclass
class Row:
    mode: str
    server: str
    window: str
    hits: int
    bursts: int
    mean_applied: float
    ms_per_burst: float
    errors: int


async def _row(url: str, server: str, mode: str, window: str, bursts: int, copies: int) -> Row:
    hits = applied_total = errors = 0
    elapsed = 0.0
    for i in range(WARMUP_BURSTS + bursts):
        key = uuid.uuid4().hex
        req = RaceRequest("POST", f"/hook?key={key}&window={window}",
                          {"Content-Type": "application/json"}, BODY)
        t0 = time.perf_counter()
        responses = await race(url, [req] * copies, mode=mode,  # type: ignore[arg-type]
                               timeout_s=BURST_TIMEOUT_S)
        dt = time.perf_counter() - t0
        if i < WARMUP_BURSTS:
            continue
        elapsed += dt
        applied = 0
        for r in responses:
            if r.status == 200 and r.error is None:
                applied += bool(json.loads(r.body)["applied"])
            else:
                errors += 1
        applied_total += applied
        hits += applied > 1
    return Row(mode, server, window, hits, bursts, applied_total / bursts,
               1000 * elapsed / bursts, errors)


async def _main(bursts: int, copies: int) -> list[Row]:
    _pin(0)
    rows: list[Row] = []
    for server, modes in (("uvicorn", ("plain", "h1-last-byte")),
                          ("hypercorn", ("plain", "h1-last-byte", "h2-single-packet"))):
        proc, url = _start_receiver(server)
        try:
            h2c = await speaks_h2c(url, 2.0)
            print(f"{server}: speaks h2c = {h2c}", file=sys.stderr)
            for window in WINDOWS:
                for mode in modes:
                    rows.append(await _row(url, server, mode, window, bursts, copies))
        finally:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return rows


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--no-pin"]
    if len(args) == 3 and args[0] == "--serve":
        _serve(args[1], int(args[2]))
        return
    bursts = int(args[0]) if len(args) > 0 else 30
    copies = int(args[1]) if len(args) > 1 else 20
    t0 = time.monotonic()
    rows = asyncio.run(_main(bursts, copies))
    where = "client on CPU 0, receiver on CPU 1" if PIN else "not pinned"
    print(f"race hit rate: {bursts} bursts of {copies} copies per row, loopback, {where}")
    print(f"{'mode':<17} {'server':<10} {'window':<7} {'double-apply bursts':>20} "
          f"{'mean applied':>13} {'ms/burst':>9} {'errors':>7}")
    for r in rows:
        rate = f"{r.hits}/{r.bursts} ({100 * r.hits / r.bursts:.0f}%)"
        print(f"{r.mode:<17} {r.server:<10} {r.window:<7} {rate:>20} "
              f"{r.mean_applied:>13.1f} {r.ms_per_burst:>9.1f} {r.errors:>7}")
    print(f"total {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    main()
