"""Dispatcher throughput against raw aiohttp, on the same setup.

Client pinned to CPU 0, a null receiver (bench/null_receiver.py) pinned to CPU 1,
32 connections, loopback. Prints requests/s of: raw aiohttp posting a fixed body;
httpx with its default transport; and hookproof's Dispatcher sending signed Stripe
events recorded into a History (in memory and in SQLite WAL on disk), with the ratio
of each to raw aiohttp. Run: ``python bench/dispatcher_throughput.py [N]``.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulator.delivery import Dispatcher, History, Target  # noqa: E402
from simulator.faults import Delivery, Schedule, Step  # noqa: E402
from simulator.profiles import get_profile  # noqa: E402
from simulator.world import World  # noqa: E402

CONNECTIONS = 32


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _pool(n: int, fn) -> float:  # type: ignore[no-untyped-def]
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            await fn(i)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONNECTIONS)))
    return n / (time.perf_counter() - t0)


async def raw_aiohttp(url: str, n: int, body: bytes) -> float:
    conn = aiohttp.TCPConnector(limit=CONNECTIONS)
    async with aiohttp.ClientSession(connector=conn) as s:
        async def one(i: int) -> None:
            async with s.post(url, data=body, headers={"content-type": "application/json"}) as r:
                await r.read()
        return await _pool(n, one)


async def default_httpx(url: str, n: int, body: bytes) -> float:
    limits = httpx.Limits(max_connections=CONNECTIONS)
    async with httpx.AsyncClient(limits=limits) as c:
        async def one(i: int) -> None:
            await c.post(url, content=body, headers={"content-type": "application/json"})
        return await _pool(n, one)


async def dispatcher(url: str, n: int, history: History) -> float:
    world = World(7)
    cus = world.create_customer()
    customer = world.event(cus).object_id
    for _ in range(max(1, n // 2)):
        world.pay(customer)
    events = [e for e in world.events if e.type == "payment_intent.succeeded"][:n]
    while len(events) < n:
        events += events[: n - len(events)]
    profile = get_profile("stripe")
    deliveries = [Delivery(f"dlv_{i}", e, 1) for i, e in enumerate(events)]
    async with Dispatcher(Target(url=url), profile, ["whsec_bench"], history, retries=False) as d:
        async def one(i: int) -> None:
            await d.deliver(deliveries[i])
        rate = await _pool(n, one)
    assert len(history) == n, len(history)
    return rate


async def main(n: int) -> None:
    port = _free_port()
    server = subprocess.Popen([sys.executable, str(Path(__file__).with_name("null_receiver.py")), str(port), "1"])
    try:
        os.sched_setaffinity(0, {0})
        url = f"http://127.0.0.1:{port}/webhooks"
        for _ in range(50):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        body = b'{"id":"evt_x","object":"event"}' * 20
        await raw_aiohttp(url, 500, body)  # warm-up
        raw = await raw_aiohttp(url, n, body)
        hx = await default_httpx(url, min(n, 2000), body)
        mem = await dispatcher(url, n, History())
        with tempfile.TemporaryDirectory() as tmp:
            disk_history = History(Path(tmp) / "history.sqlite")
            disk = await dispatcher(url, n, disk_history)
            disk_history.close()
        print(f"requests: {n}, connections: {CONNECTIONS}, client on CPU 0, null receiver on CPU 1")
        print(f"{'sender':<44}{'req/s':>10}{'vs aiohttp':>12}")
        for name, rate in (
            ("raw aiohttp (fixed body)", raw),
            ("httpx default transport (fixed body)", hx),
            ("Dispatcher, signed + history in memory", mem),
            ("Dispatcher, signed + history SQLite WAL", disk),
        ):
            print(f"{name:<44}{rate:>10.0f}{rate / raw:>12.2f}")
    finally:
        server.terminate()
        server.wait(5)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10000))
