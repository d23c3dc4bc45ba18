"""Race hit rate of simulator.delivery.race: how often a burst of copies double-applies.

A receiver with a racy check-then-act dedupe (``if key not in seen: <window>; seen.add(key);
apply``) runs in its own process, pinned to CPU 1, on uvicorn (HTTP/1.1) and on hypercorn
(HTTP/1.1 + h2c). The client (pinned to CPU 0) sends R bursts of N identical POSTs, each
burst with a fresh key, with the modes ``plain`` (N concurrent ordinary requests),
``h1-last-byte`` and ``h2-single-packet`` (hypercorn only). Two windows: one event-loop
yield (``await asyncio.sleep(0)``) and 0.2 ms (``await asyncio.sleep(0.0002)``).

Printed per row: bursts with a double apply (the race hit rate) and its 95% interval
(Wilson score: at a true rate of 99%, a row of 30 bursts reads 28/30 or fewer about one
time in thirty, and 28/30 is compatible with any rate from 79% to 98%), mean copies
applied per burst (1.0 is a correct dedupe; N is every copy winning), then where the final bytes met
the server, measured in the receiver process: every socket read of its event loop is
stamped with ``time.perf_counter_ns()`` (CLOCK_MONOTONIC, shared by both processes) and
with the number of the event-loop wakeup it belongs to, and each answer carries the stamp
of the read that completed its request. ``spread`` is the time from the first to the last
such read in a burst (median over bursts; ``worst`` the largest), ``p50`` the median
copy's read time after the first, ``1st wk`` how many copies were completed in the
server's first wakeup of the burst (median, and ``min`` the fewest), ``release`` the
client's own time from its first to its last final-byte send (``RaceResponse.sent_at``),
then wall-clock ms per burst (the gated modes include the 100 ms pre-send wait), errors,
and for every missed burst its ``1st wk`` and, after a slash, how many socket reads that
wakeup made in all (the burst's connections it read, final bytes or not): ``1/1`` is a
server that woke on one copy's final bytes alone (it had caught up with the client);
``1/8`` a wakeup that read 8 connections and found the final bytes on only one of them
(it began while the client was still sending, and reached the other copies before their
final bytes). Loopback only, bounded: every burst has a 5 s
timeout; the whole run takes well under a minute. The load average is printed with the
figures: the machine is shared, and a loaded client CPU stretches the release.

Reading the numbers: with a one-yield window a copy wins only when another copy passes
the check before the first one acts, which on these asyncio servers means: the event-loop
wakeup that completes the first copy must complete a second one too (a copy completed
one wakeup later checks after the first copy's act). A miss therefore shows as ``1``
in the last column: the server woke on one final byte and read it alone while the client
was still sending the others (each send is a syscall that also runs the loopback receive
path, about 10 us). The single HTTP/2 packet completes every stream in one read.

Run: ``python bench/race_hit_rate.py [R] [N] [--no-pin]`` (defaults 30 and 20; ``--no-pin``
leaves both processes to the scheduler instead of pinning them to CPUs 0 and 1).
The same file is the receiver: ``python bench/race_hit_rate.py --serve uvicorn|hypercorn PORT``.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs

from bench_args import parser, positive_int

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
        rx_ns, wakeup = _FINAL_READ.get(_peer(scope.get("client")), (0, 0))
        reads = _WAKEUP_READS.get(wakeup, 0)
        applied = False
        if key and key not in self.seen:  # check
            await asyncio.sleep(window)  # the race window
            self.seen.add(key)  # act
            applied = True
        body = json.dumps({"applied": applied, "rx_ns": rx_ns, "wakeup": wakeup, "reads": reads}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


#: (host, port) of a client -> (perf_counter_ns, event-loop wakeup number) of the latest read
#: from its connection: when the handler runs, the read that completed its request.
_FINAL_READ: dict[tuple[str, int], tuple[int, int]] = {}
_WAKEUPS = [0]
#: Event-loop wakeup number -> socket reads it made (the latest `_WAKEUPS_KEPT` wakeups).
_WAKEUP_READS: dict[int, int] = {}
_WAKEUPS_KEPT = 4096


def _peer(address: Any) -> tuple[str, int]:
    return (str(address[0]), int(address[1])) if address else ("", 0)


def _instrument_reads() -> None:
    """Stamp every socket read of the server's event loop (the receiver process only).

    Both servers run on asyncio's selector loop, so every read of a request's bytes goes
    through ``_SelectorSocketTransport._read_ready__data_received``; each one is stamped
    with ``time.perf_counter_ns()`` (CLOCK_MONOTONIC, the same clock in every process)
    taken before the ``recv``, and with the number of the event-loop wakeup (a ``select``
    that returned ready sockets) it belongs to. Reads in the same wakeup are handed to the
    server's protocol code in one loop iteration: the final bytes of two copies are read
    in the same wakeup when they arrived before the server looked.
    """
    import selectors
    from asyncio import selector_events

    base_select = selectors.EpollSelector.select

    def select(self: selectors.EpollSelector, timeout: float | None = None) -> Any:
        ready = base_select(self, timeout)
        if ready:
            _WAKEUPS[0] += 1
            _WAKEUP_READS.pop(_WAKEUPS[0] - _WAKEUPS_KEPT, None)
        return ready

    transport = selector_events._SelectorSocketTransport  # type: ignore[attr-defined]
    base_read = transport._read_ready__data_received

    def read(self: Any) -> None:
        t_ns = time.perf_counter_ns()
        base_read(self)
        _FINAL_READ[_peer(self._extra.get("peername"))] = (t_ns, _WAKEUPS[0])
        _WAKEUP_READS[_WAKEUPS[0]] = _WAKEUP_READS.get(_WAKEUPS[0], 0) + 1

    selectors.EpollSelector.select = select  # type: ignore[method-assign,assignment]
    transport._read_ready__data_received = read


def _pin(cpu: int) -> None:
    """Pin this process to one CPU when the machine has several (Linux only)."""
    if PIN and hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {cpu})


def _serve(server: str, port: int) -> None:
    """Run the receiver on 127.0.0.1:port until killed (the child process)."""
    _pin(1)
    _instrument_reads()
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


def wilson(hits: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a rate of ``hits`` in ``n`` trials.

    Returns:
        (low, high), fractions in [0, 1].

    Raises:
        ValueError: ``n`` below 1, or ``hits`` outside 0..n.
    """
    if n < 1 or not 0 <= hits <= n:
        raise ValueError(f"need 0 <= hits <= n and n >= 1, got {hits} of {n}")
    z = 1.959963984540054  # the normal distribution's 97.5th percentile
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


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
class Burst:
    """One burst as the server saw it: times in microseconds, relative to its first final read."""

    applied: int
    errors: int
    spread_us: float  # last - first read of a request's final bytes at the server
    p50_us: float  # median read time of the final bytes
    first_wakeup: int  # final bytes read in the server's first event-loop wakeup of the burst
    first_wakeup_reads: int  # socket reads that wakeup made in all
    release_us: float  # client side: first to last final-byte send (time.time of each send)


@dataclass
class Row:
    mode: str
    server: str
    window: str
    bursts: list[Burst]
    ms_per_burst: float

    @property
    def hits(self) -> int:
        return sum(b.applied > 1 for b in self.bursts)

    @property
    def errors(self) -> int:
        return sum(b.errors for b in self.bursts)

    @property
    def mean_applied(self) -> float:
        return statistics.fmean(b.applied for b in self.bursts)

    def line(self) -> str:
        n = len(self.bursts)
        rate = f"{self.hits}/{n} ({100 * self.hits / n:.0f}%)"
        low, high = wilson(self.hits, n)
        interval = f"{100 * low:.0f}-{100 * high:.0f}%"
        spread = [b.spread_us for b in self.bursts]
        first = [b.first_wakeup for b in self.bursts]
        misses = ",".join(f"{b.first_wakeup}/{b.first_wakeup_reads}" for b in self.bursts if b.applied <= 1) or "-"
        return (f"{self.mode:<17} {self.server:<10} {self.window:<7} {rate:>13} {interval:>8} "
                f"{self.mean_applied:>7.1f} {statistics.median(spread):>8.0f} {max(spread):>7.0f} "
                f"{statistics.median(b.p50_us for b in self.bursts):>7.0f} "
                f"{statistics.median(first):>6.0f} {min(first):>4} "
                f"{statistics.median(b.release_us for b in self.bursts):>8.0f} "
                f"{self.ms_per_burst:>8.1f} {self.errors:>6}  {misses}")


HEADER = (f"{'mode':<17} {'server':<10} {'window':<7} {'double-apply':>13} {'95% CI':>8} {'applied':>7} "
          f"{'spread':>8} {'worst':>7} {'p50':>7} {'1st wk':>6} {'min':>4} {'release':>8} "
          f"{'ms/burst':>8} {'errors':>6}  1st wakeup of the misses/its reads")


def _burst_stats(responses: list[Any]) -> Burst:
    applied = errors = 0
    reads: list[tuple[int, int, int]] = []  # per answered copy: rx_ns, wakeup, the wakeup's reads
    for r in responses:
        if r.status == 200 and r.error is None:
            answer = json.loads(r.body)
            applied += bool(answer["applied"])
            reads.append((answer["rx_ns"], answer["wakeup"], answer["reads"]))
        else:
            errors += 1
    sent = [r.sent_at for r in responses if r.request_sent]
    release_us = 1e6 * (max(sent) - min(sent)) if sent else 0.0
    if not reads:
        return Burst(applied, errors, 0.0, 0.0, 0, 0, release_us)
    first_ns = min(t for t, _, _ in reads)
    offsets = [(t - first_ns) / 1000 for t, _, _ in reads]
    first_wakeup, first_reads = min((w, n) for _, w, n in reads)
    return Burst(applied, errors, max(offsets), statistics.median(offsets),
                 sum(w == first_wakeup for _, w, _ in reads), first_reads, release_us)


async def _row(url: str, server: str, mode: str, window: str, bursts: int, copies: int) -> Row:
    kept: list[Burst] = []
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
        kept.append(_burst_stats(responses))
    return Row(mode, server, window, kept, 1000 * elapsed / bursts)


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
    global PIN
    cli = parser(__doc__)
    cli.add_argument("bursts", nargs="?", type=positive_int, default=30, help="bursts per row (default 30)")
    cli.add_argument("copies", nargs="?", type=positive_int, default=20, help="copies per burst (default 20)")
    cli.add_argument("--no-pin", action="store_true", help="leave both processes to the scheduler")
    cli.add_argument("--serve", nargs=2, metavar=("SERVER", "PORT"), help="be the receiver (uvicorn|hypercorn)")
    args = cli.parse_args()
    PIN = not args.no_pin
    if args.serve:
        server, port = args.serve
        if server not in ("uvicorn", "hypercorn") or not port.isdigit():
            cli.error(f"--serve takes uvicorn|hypercorn and a port, not {server} {port}")
        _serve(server, int(port))
        return
    bursts, copies = args.bursts, args.copies
    t0 = time.monotonic()
    load_before = os.getloadavg()
    rows = asyncio.run(_main(bursts, copies))
    load_after = os.getloadavg()
    where = "client on CPU 0, receiver on CPU 1" if PIN else "not pinned"
    print(f"race hit rate: {bursts} bursts of {copies} copies per row, loopback, {where}")
    print("spread, worst, p50: us from the first to the last (worst burst: the largest; p50: the median copy) read "
          "of a copy's final bytes at the server, median over bursts; 1st wk, min: final bytes the server read in "
          "its first event-loop wakeup (median, fewest); release: us from the client's first to its last final-byte "
          "send")
    print(HEADER)
    for r in rows:
        print(r.line())
    print(f"total {time.monotonic() - t0:.1f} s; load average {load_before[0]:.1f} before, "
          f"{load_after[0]:.1f} after ({os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
