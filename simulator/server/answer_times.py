"""How long the provider server took to answer the receiver: its own handling time per
request, and the round trip a probe measures from outside.

A receiver that fetches what an event names (Mercado Pago's thin notifications, a Paddle or
Stripe receiver reading the subscription) waits for hookproof's provider API while it handles
a delivery, so a slow API shows up as the receiver's slow acknowledgements and timeouts. The
server times each request it handles (`surface_of` its path; the app's outermost layer, from
the request reaching the app to its last body byte handed to the server), in a histogram of bounded size
(`AnswerTimes`: log-spaced buckets, 5 % wide, from 0.1 ms to 100 s); what the requests waited
before the app saw them (a busy event loop, the socket's queue) only a client sees, which is
what `probe_round_trips` measures. Both are read once a storm ends (`hookproof storm`'s note).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

#: Histogram range (seconds) and bucket ratio: a value is kept within 5 % of itself.
LOWEST_S = 1e-4
HIGHEST_S = 100.0
RATIO = 1.05
BUCKETS = int(math.ceil(math.log(HIGHEST_S / LOWEST_S, RATIO))) + 1
#: Surfaces timed: paths of the effect sink; the rest but hookproof's own (``/_hookproof``) is the API.
SINK_PREFIX = "/sink"
INTERNAL_PREFIX = "/_hookproof"


@dataclass(frozen=True, slots=True)
class Spread:
    """A sample's count and its percentiles, in seconds (each within 5 % of the true value)."""

    count: int
    p50_s: float
    p95_s: float
    max_s: float


class AnswerTimes:
    """Durations (seconds) per surface (``"api"``, ``"sink"``, ``"probe"``) in log buckets;
    memory bounded (`BUCKETS` counters per surface) however many are recorded. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buckets: dict[str, list[int]] = {}
        self._max: dict[str, float] = {}

    def record(self, surface: str, seconds: float) -> None:
        """Count one duration of `surface` (negative taken as 0; beyond `HIGHEST_S` in the last bucket)."""
        index = 0 if seconds <= LOWEST_S else min(BUCKETS - 1, int(math.log(seconds / LOWEST_S, RATIO)) + 1)
        with self._lock:
            buckets = self._buckets.get(surface)
            if buckets is None:
                buckets = self._buckets[surface] = [0] * BUCKETS
            buckets[index] += 1
            if seconds > self._max.get(surface, 0.0):
                self._max[surface] = seconds

    def spread(self, surface: str) -> Spread | None:
        """`surface`'s count, p50, p95 (each bucket's upper edge, capped by the maximum) and
        maximum; None when nothing was recorded."""
        with self._lock:
            buckets = list(self._buckets.get(surface, ()))
            highest = self._max.get(surface, 0.0)
        count = sum(buckets)
        if not count:
            return None

        def at(share: float) -> float:
            rank, seen = math.ceil(share * count), 0
            for index, n in enumerate(buckets):
                seen += n
                if seen >= rank:
                    return min(highest, LOWEST_S * RATIO ** index)
            return highest  # pragma: no cover (the ranks are at most count)

        return Spread(count, at(0.50), at(0.95), highest)


def surface_of(method: str, path: str) -> str | None:
    """The surface a request is timed under: ``"sink"`` (a receiver applying an effect: a
    ``POST`` under ``/sink``), ``"api"``, or None: hookproof's own routes (``/_hookproof``:
    switches, the probe) and the observer's reads and resets of the sink, not timed."""
    if path.startswith(INTERNAL_PREFIX):
        return None
    if path.startswith(SINK_PREFIX):
        return "sink" if method == "POST" else None
    return "api"


class RoundTripProbe:
    """A thread asking the provider server for a cheap answer every `interval_s` while a
    storm runs, each round trip (seconds, from before the request to the answer read) recorded
    as surface ``"probe"`` of `times`: what a request waits for the server, which its own
    handling time does not show. A timed-out probe counts its timeout. Start with `start`,
    end with `stop` (joins within a probe's timeout)."""

    def __init__(self, base_url: str, times: AnswerTimes, *, interval_s: float = 0.5,
                 timeout_s: float = 10.0) -> None:
        self.url = base_url.rstrip("/") + INTERNAL_PREFIX + "/probe"
        self.times = times
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hookproof-api-probe", daemon=True)

    def start(self) -> "RoundTripProbe":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(self.timeout_s + 1.0)

    def __enter__(self) -> "RoundTripProbe":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        import httpx

        with httpx.Client(timeout=self.timeout_s, trust_env=False) as client:
            while not self._stop.wait(self.interval_s):
                started = time.perf_counter()
                try:
                    client.get(self.url).read()
                except httpx.TimeoutException:
                    self.times.record("probe", self.timeout_s)
                    continue
                except httpx.HTTPError:
                    continue  # the server stopped: nothing to measure
                self.times.record("probe", time.perf_counter() - started)


#: A probe's median round trip above which the note says requests waited for the server (seconds).
SLOW_PROBE_S = 0.25


def answer_times_note(times: AnswerTimes) -> str | None:
    """The storm's note on the provider server, or None when the receiver never called it:
    how many requests the API (and the sink) answered, their handling time, and a probe's round
    trips; when the probe's p95 is over `SLOW_PROBE_S`, that the receiver's waits for it are in
    its ack latencies. E.g. ``provider API: 1,204 requests answered, handled in p50 2.1 ms, p95
    6.0 ms, max 9.3 ms; a probe's round trip to it: p50 1.9 s, p95 3.1 s, max 3.4 s (slow: ...)``."""
    surfaces = [(name, times.spread(key)) for name, key in (("provider API", "api"), ("effect sink", "sink"))]
    called = [(name, spread) for name, spread in surfaces if spread is not None]
    if not called:
        return None
    parts = [f"{name}: {spread.count:,} request{'' if spread.count == 1 else 's'} answered, handled in p50 {_ms(spread.p50_s)}, p95 "
             f"{_ms(spread.p95_s)}, max {_ms(spread.max_s)}" for name, spread in called]
    note = "; ".join(parts)
    probe = times.spread("probe")
    if probe is None:
        return note
    note += (f"; a probe's round trip to it: p50 {_ms(probe.p50_s)}, p95 {_ms(probe.p95_s)}, "
             f"max {_ms(probe.max_s)}")
    if probe.p95_s > SLOW_PROBE_S:
        note += (" (slow: requests waited for hookproof's provider server, which shares this machine's CPUs; a "
                 "receiver calling it while it handles a delivery waits too, and its ack latencies and timeouts "
                 "include that wait)")
    return note


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.1f} s"


__all__ = ["AnswerTimes", "RoundTripProbe", "SLOW_PROBE_S", "Spread", "answer_times_note", "surface_of"]
