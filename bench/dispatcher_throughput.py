"""Dispatcher throughput against raw aiohttp, on the same setup.

Client pinned to CPU 0, a null receiver (bench/null_receiver.py) pinned to CPU 1,
32 connections, loopback. Measures requests/s of: raw aiohttp posting a fixed body;
httpx with its default transport; and hookproof's Dispatcher sending signed Stripe
events recorded into a History (in memory and in SQLite WAL on disk). The senders take
turns, ROUNDS times, so load from elsewhere on the machine hits each of them alike.
Each sender's clock starts on a collected heap: the garbage of the setup (the world
the dispatcher's events come from) is collected first, for every sender alike, so a
full collection of it is not charged to whichever sender runs next; the collections a
sender causes itself (of the attempts it keeps) still count, and are shown.
Printed per sender: its best requests/s and lowest client CPU microseconds per
request; "vs aiohttp", the median over rounds of its requests/s over raw aiohttp's in
the same round; "CPU vs aiohttp", raw aiohttp's CPU per request over its own (the
least disturbed by other processes); "GC 0/1/2", the garbage collections per
generation during its timed rounds, in all; and the machine's load.
Run: ``python bench/dispatcher_throughput.py [N] [ROUNDS]``.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Awaitable, Callable

import aiohttp
import httpx
from bench_args import parser, positive_int
from null_receiver import start as start_null_receiver

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hookproof.simulator.delivery import Dispatcher, History, Target  # noqa: E402
from hookproof.simulator.faults import Delivery  # noqa: E402
from hookproof.simulator.profiles import get_profile  # noqa: E402
from hookproof.simulator.world import World  # noqa: E402

CONNECTIONS = 32
RAW = "raw aiohttp (fixed body)"
HTTPX = "httpx default transport (fixed body)"
IN_MEMORY = "Dispatcher, signed + history in memory"
SQLITE = "Dispatcher, signed + history SQLite WAL"
#: Requests the (slow) default httpx transport sends at most.
HTTPX_REQUESTS = 2000

Rate = tuple[float, float]  # requests/s, client CPU microseconds per request
#: Garbage collections per generation during the timed rounds, per sender (`_pool` adds).
COLLECTIONS: dict[str, list[int]] = {}


async def _pool(n: int, fn: Callable[[int], Awaitable[None]], name: str = "") -> Rate:
    counter = iter(range(n))

    async def worker() -> None:
        for i in counter:
            await fn(i)

    gc.collect()
    before = [g["collections"] for g in gc.get_stats()]
    t0, cpu0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(CONNECTIONS)))
    rate = n / (time.perf_counter() - t0), (time.process_time() - cpu0) / n * 1e6
    counts = COLLECTIONS.setdefault(name, [0, 0, 0])
    for generation, stats in enumerate(gc.get_stats()):
        counts[generation] += stats["collections"] - before[generation]
    return rate


async def raw_aiohttp(url: str, n: int, body: bytes) -> Rate:
    conn = aiohttp.TCPConnector(limit=CONNECTIONS)
    async with aiohttp.ClientSession(connector=conn) as s:
        async def one(i: int) -> None:
            async with s.post(url, data=body, headers={"content-type": "application/json"}) as r:
                await r.read()
        return await _pool(n, one, RAW)


async def default_httpx(url: str, n: int, body: bytes) -> Rate:
    limits = httpx.Limits(max_connections=CONNECTIONS)
    async with httpx.AsyncClient(limits=limits) as c:
        async def one(i: int) -> None:
            await c.post(url, content=body, headers={"content-type": "application/json"})
        return await _pool(n, one, HTTPX)


def deliveries(n: int) -> list[Delivery]:
    """`n` deliveries of successful payments (each event delivered twice, far apart)."""
    world = World(7)
    cus = world.create_customer()
    customer = world.event(cus).object_id
    for _ in range(max(1, n // 2)):
        world.pay(customer)
    events = [e for e in world.events if e.type == "payment_intent.succeeded"][:n]
    while len(events) < n:
        events += events[: n - len(events)]
    return [Delivery(f"dlv_{i}", e, 1) for i, e in enumerate(events)]


async def dispatcher(url: str, n: int, history: History, name: str) -> Rate:
    todo = deliveries(n)  # fresh event objects: no envelope rendered in an earlier run is reused
    profile = get_profile("stripe")
    async with Dispatcher(Target(url=url), profile, ["whsec_bench"], history, retries=False) as d:
        async def one(i: int) -> None:
            await d.deliver(todo[i])
        rate = await _pool(len(todo), one, name)
    assert len(history) == len(todo), len(history)
    return rate


async def main(n: int, rounds: int) -> None:
    server, url = start_null_receiver(cpu=1)
    try:
        os.sched_setaffinity(0, {0})
        body = b'{"id":"evt_x","object":"event"}' * 20
        await raw_aiohttp(url, 500, body)  # warm-up
        COLLECTIONS.clear()
        runs: dict[str, list[Rate]] = {}
        load = os.getloadavg()
        for round_no in range(rounds):
            runs.setdefault(RAW, []).append(await raw_aiohttp(url, n, body))
            if round_no == 0:
                runs[HTTPX] = [await default_httpx(url, min(n, HTTPX_REQUESTS), body)]
            runs.setdefault(IN_MEMORY, []).append(await dispatcher(url, n, History(), IN_MEMORY))
            with tempfile.TemporaryDirectory() as tmp:
                disk_history = History(Path(tmp) / "history.sqlite")
                runs.setdefault(SQLITE, []).append(await dispatcher(url, n, disk_history, SQLITE))
                disk_history.close()
        raw = runs[RAW]
        raw_cpu = min(cpu for _, cpu in raw)
        print(f"requests: {n}, connections: {CONNECTIONS}, client on CPU 0, null receiver on CPU 1, "
              f"{rounds} rounds; load {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
        print(f"{'sender':<44}{'req/s':>8}{'CPU us/req':>12}{'vs aiohttp':>12}{'CPU vs aiohttp':>16}"
              f"{'GC 0/1/2':>12}")
        for name, rates in runs.items():
            ratio = statistics.median(rate / raw_rate for (rate, _), (raw_rate, _) in zip(rates, raw))
            cpu = min(c for _, c in rates)
            collections = "/".join(str(c) for c in COLLECTIONS.get(name, [0, 0, 0]))
            print(f"{name:<44}{max(r for r, _ in rates):>8.0f}{cpu:>12.1f}{ratio:>12.2f}{raw_cpu / cpu:>16.2f}"
                  f"{collections:>12}")
    finally:
        server.terminate()
        server.wait(5)


if __name__ == "__main__":
    cli = parser(__doc__)
    cli.add_argument("n", nargs="?", type=positive_int, default=10000, help="requests per sender per round (default 10000)")
    cli.add_argument("rounds", nargs="?", type=positive_int, default=3, help="rounds (default 3)")
    args = cli.parse_args()
    asyncio.run(main(args.n, args.rounds))
