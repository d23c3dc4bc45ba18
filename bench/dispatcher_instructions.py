"""Instructions per request of the dispatcher and of raw aiohttp, counted by valgrind.

On a shared machine the wall and CPU figures of `dispatcher_throughput.py` move by a
third between runs with the load; instruction counts do not. Each sender runs the
throughput bench's setup (null receiver, 32 connections, the same signed Stripe events
into a SQLite history) under ``valgrind --tool=cachegrind --cache-sim=no`` twice, with
N1 and N2 requests out of the same world, and the difference of the two totals over
N2 - N1 is its instructions per request (start-up and world building cancel out).
Printed per sender: instructions per request, and raw aiohttp's over its own.
Caveats: valgrind hides SHA-NI, so HMAC counts more there than on the CPU; cache
misses (the world's cold objects) count nothing. About 5 minutes.
Run: ``python bench/dispatcher_instructions.py [N1 N2]`` (300 1300); needs valgrind.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import dispatcher_throughput as bench  # noqa: E402
import null_receiver  # noqa: E402
from bench_args import parser, positive_int  # noqa: E402

from hookproof.simulator.delivery import Dispatcher, History, Target  # noqa: E402
from hookproof.simulator.profiles import get_profile  # noqa: E402

SENDERS = {"raw aiohttp (fixed body)": "raw", "Dispatcher, signed + history SQLite WAL": "sqlite"}


async def _one(sender: str, n: int, world_n: int) -> None:
    """Send `n` requests with `sender` (the first `n` deliveries of a `world_n` world)."""
    server, url = null_receiver.start(cpu=1)
    try:
        todo = bench.deliveries(world_n)[:n]
        if sender == "raw":
            await bench.raw_aiohttp(url, n, b'{"id":"evt_x","object":"event"}' * 20)
            return
        with tempfile.TemporaryDirectory() as tmp:
            history = History(Path(tmp) / "history.sqlite")
            profile = get_profile("stripe")
            async with Dispatcher(Target(url=url), profile, ["whsec_bench"], history, retries=False) as d:
                async def one(i: int) -> None:
                    await d.deliver(todo[i])
                await bench._pool(n, one, sender)
            history.close()
    finally:
        server.terminate()
        server.wait(5)


def _instructions(sender: str, n: int, world_n: int) -> int:
    """Instructions valgrind counted in a process sending `n` requests with `sender`."""
    out = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         sys.executable, __file__, "--one", sender, str(n), str(world_n)],
        capture_output=True, text=True, timeout=1800, check=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output: {out.stderr[-500:]}")
    return int(found.group(1).replace(",", ""))


def main(n1: int, n2: int) -> None:
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    load = os.getloadavg()
    per: dict[str, float] = {}
    for name, sender in SENDERS.items():
        per[name] = (_instructions(sender, n2, n2) - _instructions(sender, n1, n2)) / (n2 - n1)
    print(f"requests: {n1} and {n2} under valgrind; load {load[0]:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end (instruction counts do not depend on it)")
    raw = per["raw aiohttp (fixed body)"]
    print(f"{'sender':<44}{'instructions/req':>18}{'aiohttp / it':>14}")
    for name, count in per.items():
        print(f"{name:<44}{count:>18,.0f}{raw / count:>14.2f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--one"]:
        asyncio.run(_one(args[1], int(args[2]), int(args[3])))
    else:
        cli = parser(__doc__)
        cli.add_argument("n1", nargs="?", type=positive_int, default=300, help="requests of the first run (300)")
        cli.add_argument("n2", nargs="?", type=positive_int, default=1300, help="requests of the second run (1300)")
        parsed = cli.parse_args(args)
        if parsed.n2 <= parsed.n1:
            cli.error(f"n2 ({parsed.n2}) must be above n1 ({parsed.n1})")
        main(parsed.n1, parsed.n2)
