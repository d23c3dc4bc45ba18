"""Storm throughput: signed events per second, next to bare Locust posting pre-signed bodies.

One Locust process pinned to CPU 0, the null receiver (bench/null_receiver.py) pinned
to CPU 1, loopback, the same users and duration for both runs:

- bare: a FastHttpUser posting pre-signed Stripe requests in a closed loop (no wait):
  the storm's own events (a `StoryBook` stream), signed once before the run, through
  Locust's `FastHttpSession` (``self.client.post``), as a Locust test is written;
- bare on the storm's HTTP path: the same requests through the geventhttpclient
  client the user pooled for the target, as the storm sends (no session layer: no
  redirects, no cookies, the answer read up to a cap, Locust's request event fired
  by hand);
- bare on the storm's HTTP path, signed as each is sent: the same user, each request
  signed by the Stripe profile at the second it goes out, as the storm signs (a load test
  of a receiver that verifies signatures must sign as it sends: Stripe's tolerance is 5
  minutes, Paddle's SDK's 5 s), with nothing drawn or recorded;
- storm: ``loadtests/locustfile.py`` at an offered rate far above what one process can
  send (so it runs flat out), with its defaults (20 % duplicates as bursts of 4, a
  reorder window of 8, one redelivery wave): every attempt drawn from the world's
  stories, signed by the profile at its send time and recorded like the dispatcher's
  history. One group in flight per user (``max_in_flight=1``), as bare has one request
  in flight per user: both load the receiver alike, so the ratio compares the
  senders' work, not how deep the receiver's queue is (at 64 groups per user both
  sides slow down from the concurrency alone).

The ratio storm/bare is what a load tester gets from hookproof's storm next to a plain
Locust test; storm/(bare on the storm's HTTP path) is the cost of the signing and
bookkeeping alone; storm/(bare signing on its path) the cost of the drawing from the
world's stories and the recording alone (the bare user signs every request, the storm
once per burst: its copies share one signed request; that user runs under the storm's
garbage-collector settings). The receiver answers several times faster than either sender
(bench/null_receiver.py), so requests/s measures the senders. The storm's checks then run against an observer that sees nothing (the null receiver
applies nothing), so its verdict is irrelevant here; only the send rate is read.
Then the storm and the bare user on its path again, side by side: both at once on CPU 0,
so both meet the same machine (on a shared, loaded machine the figures of two runs one
after the other move by a fifth or more from run to run); their CPU µs per request and
its ratio are printed; then the same with the bare user signing on its path (each bare
user's requests written before both start). Then the storm alone once more, its parts
timed inside the live Locust process (`live_parts`: CPU µs per attempt by part, and the rest: the HTTP
exchange, gevent's loop, the user's glue). Last, the storm's own work without HTTP
(`bookkeeping`), in this process, as CPU µs per attempt by part: where the storm's cost
over bare on its path goes.
Run: ``python bench/storm_throughput.py [SECONDS] [USERS]``.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench_args import parser, positive_int
from null_receiver import start as start_null_receiver

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SECRET = "whsec_bench_storm_0123456789"
#: Distinct pre-signed requests the bare user cycles through.
BARE_BODIES = 4000

BARE_LOCUSTFILE = '''
import json, os, time
from geventhttpclient.url import URL
from locust import FastHttpUser, task

_REQS = [(r["body"].encode(), r["headers"]) for r in json.load(open(os.environ["BENCH_REQUESTS"]))]
_DIRECT = os.environ.get("BENCH_DIRECT") == "1"
_SIGNED = os.environ.get("BENCH_SIGN") == "1"
if _SIGNED:  # each request signed as it is sent, as the storm signs (and any test of a verifying receiver must)
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.profiles.base import new_envelope

    _PROFILE, _SECRETS = get_profile("stripe"), [os.environ["BENCH_SECRET"]]
    _ENVELOPES = [new_envelope(r["event_id"], r["type"], body, headers, {}) for (body, headers), r
                  in zip(_REQS, json.load(open(os.environ["BENCH_REQUESTS"])))]
    # the storm's collector settings (`StormProcess.story_book`: what is loaded is never
    # collected again, the young objects of sending seldom), so that this user and the storm
    # differ in the drawing and recording alone
    import gc
    from hookproof.loadtests.storm_state import GC_YOUNG_THRESHOLD

    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD)
    # importing hookproof may take seconds on a loaded machine, in which gevent's loop kept its
    # time: Locust's run time (`-t`, counted from the loop's time) would start before the import
    import gevent

    gevent.get_hub().loop.update_now()


class Bare(FastHttpUser):
    concurrency = 64

    def on_start(self):
        self.i = 0
        url = URL(self.host)
        self.http = self.client.client.clientpool.get_client(url)
        self.uri = url.request_uri

    @task
    def post(self):
        if _SIGNED:
            request = _PROFILE.request(_ENVELOPES[self.i % len(_ENVELOPES)], _SECRETS, int(time.time()))
            body, headers = request.body, request.headers
        else:
            body, headers = _REQS[self.i % len(_REQS)]
        self.i += 1
        if not _DIRECT:
            self.client.post(self.host, data=body, headers=headers, name="bare")
            return
        # the storm's own HTTP path: the pooled client, the answer read up to a cap,
        # Locust's request event fired by hand
        sent_at, t = time.time(), time.perf_counter()
        response = self.http.request("POST", self.uri, body=body, headers=headers)
        try:
            answer = response.read(65537)
        finally:
            response.release()
        self.environment.events.request.fire(
            request_type="POST", name="bare", response_time=(time.perf_counter() - t) * 1000.0,
            response_length=len(answer), exception=None, context={}, response=None, url=self.host,
            start_time=sent_at)
'''


#: The storm's locustfile with its parts timed in the live process (`live_parts`): each
#: part's own CPU (`time.thread_time` around calls that never yield to gevent: a pooled
#: connection only when one is idle and free to take, no wait or connect) over a steady
#: window, per attempt sent; what is left is the HTTP exchange (its head and its pooled
#: connection shown apart; the connections opened or waited for), gevent's loop and the
#: user's own glue.
PARTS_LOCUSTFILE = '''
import functools, json, os, time
import gevent, gevent.pool
from locust import events
from locust.event import EventHook
from locust.stats import RequestStats
from hookproof.loadtests.locustfile import *  # the storm's listeners and user
from hookproof.loadtests.locustfile import StormUser
from hookproof.loadtests import copiers, exchange, plan, storm_user, storm_worker
from hookproof.loadtests.storm_state import STATE, StormProcess
from hookproof.simulator.profiles import get_profile

_clock, _spent, _on, _inside = time.thread_time, {}, [False], []


def _timed(owner, name, part, may_yield=None):
    """Time `part` around `owner.name`; `may_yield(args)`: whether a call might yield to
    gevent (another greenlet's CPU would be counted), then it is left untimed."""
    f = getattr(owner, name)

    @functools.wraps(f)
    def timed(*a, **k):
        if not _on[0] or _inside or (may_yield is not None and may_yield(a)):  # a part calling itself is timed once
            return f(*a, **k)
        _inside.append(part)
        t = _clock()
        try:
            return f(*a, **k)
        finally:
            _spent[part] = _spent.get(part, 0.0) + _clock() - t
            _inside.pop()
    setattr(owner, name, timed)


def _pool_may_yield(a):
    """A pooled connection's wait: every connection taken (the semaphore waits) or none idle
    (a new one is opened); an idle one found dead opens one too (rare, timed)."""
    pool = a[0]
    return pool._semaphore.locked() or pool._socket_queue.empty()


for owner, name, part in ((plan.StormPlan, "next_group", "draw"), (plan.StormPlan, "next_replay", "draw"),
                          (plan.StormPlan, "start_wave", "draw"), (StormProcess, "begin", "keep"),
                          (StormProcess, "complete", "keep"), (storm_worker, "ship", "rows and spool"),
                          (EventHook, "fire", "Locust's request event"),
                          (RequestStats, "log_request", "Locust's request event"),
                          (RequestStats, "log_error", "Locust's request event"), (gevent.pool.Group, "spawn", "greenlets"),
                          (copiers.Copier, "give", "greenlets"), (copiers.Pending, "one_done", "greenlets"),
                          (storm_user, "retry_delay_s", "retry decision"), (exchange, "request_head", "exchange: head"),
                          (type(get_profile("stripe")), "request", "sign")):
    _timed(owner, name, part)
_timed(exchange, "_pooled_socket", "exchange: pooled connection", _pool_may_yield)


def _window():
    gevent.sleep(STATE.spec.duration_s * 0.25)
    n0, c0 = STATE.shipped + len(STATE.sent), time.process_time()
    _on[0] = True
    gevent.sleep(STATE.spec.duration_s * 0.5)
    _on[0] = False
    n, cpu = STATE.shipped + len(STATE.sent) - n0, time.process_time() - c0
    with open(os.environ["BENCH_PARTS"], "w") as out:
        json.dump({"attempts": n, "cpu_s": cpu, "parts": _spent}, out)


@events.test_start.add_listener
def _start(**_):
    gevent.spawn(_window)


'''


def no_effects() -> dict[str, list[Any]]:
    """The bench's observer: the null receiver applies nothing."""
    return {"effects": [], "states": []}


def _pinned(cpu: int) -> Any:
    return lambda: os.sched_setaffinity(0, {cpu})


class CpuSampler:
    """Samples a process's CPU seconds (user + system, from /proc) every 0.1 s, with the time."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.samples: list[tuple[float, float]] = []  # (unix seconds, CPU seconds)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        while not self._stop.wait(0.1):
            try:
                with open(f"/proc/{self.pid}/stat", encoding="ascii") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                return
            self.samples.append((time.time(), (int(fields[11]) + int(fields[12])) / tick))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def cpu_at(self, t: float) -> float:
        """CPU seconds used by unix time `t` (the last sample at or before it)."""
        before = [cpu for at, cpu in self.samples if at <= t]
        return before[-1] if before else 0.0


def _locust(locustfile: Path, url: str, users: int, seconds: int, env: dict[str, str], extra: list[str],
            log: Path) -> CpuSampler:
    cmd = [sys.executable, "-m", "locust", "-f", str(locustfile), "--headless", "-u", str(users), "-r", str(users),
           "--host", url, "--only-summary", *extra]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_pinned(0))
        sampler = CpuSampler(proc.pid)
        try:
            proc.wait(timeout=seconds + 600)
        finally:
            sampler.stop()
            if proc.poll() is None:
                proc.kill()
    return sampler


#: Fewest seconds per sender: the steady window (`_window`) needs a few whole buckets.
MIN_SECONDS = 6


def _window(start: float, seconds: int) -> tuple[float, float]:
    """The steady part of a run that started at unix time `start`: spawn and end left out."""
    return start + 2.0, start + seconds - 1.0


def _cpu_us(cpu: CpuSampler, start: float, end: float, requests: float) -> float:
    """CPU µs per request between unix times `start` and `end`; NaN (printed as such, never
    a ratio of 0) when the window saw no request or no CPU sample (a run too short for its
    load: a loaded machine starts Locust late and samples it seldom)."""
    used = cpu.cpu_at(end) - cpu.cpu_at(start)
    if requests <= 0 or used <= 0.0:
        return math.nan
    return used / requests * 1e6


def bare_requests(tmp: Path, *, signed: bool = False) -> Path:
    """Write the bare user's requests (`BARE_BODIES` of the storm's Stripe events, a
    `StoryBook` stream) to a file in `tmp`, each signed now (with `signed`: its envelope's
    headers alone, the user signs it as it sends it); returns its path."""
    import itertools

    from hookproof.loadtests.stories import StoryBook
    from hookproof.simulator.profiles import get_profile
    from hookproof.simulator.world import World

    profile = get_profile("stripe")
    book = StoryBook(World(1), profile, lambda e: profile.provider_type(e.type) is not None
                     and (e.business_key is not None or e.stateful))
    now = int(time.time())
    requests = [(item.envelope, profile.request(item.envelope, [SECRET], now))
                for item in itertools.islice(book.stream(), BARE_BODIES) if item.envelope is not None]
    path = tmp / ("bare_signing_requests.json" if signed else "bare_requests.json")
    path.write_text(json.dumps([{"body": r.body.decode(), "headers": dict(e.headers if signed else r.headers),
                                 "event_id": e.event_id, "type": e.type} for e, r in requests]),
                    encoding="utf-8")
    return path


def bare_rate(url: str, users: int, seconds: int, tmp: Path, *, direct: bool = False, signed: bool = False,
              requests: Path | None = None) -> tuple[float, float]:
    """A bare user's run: (req/s over the run, CPU µs per request over its steady window).
    `direct`: on the storm's HTTP path; `signed`: each request signed as it is sent (the
    storm's profile, the time of sending), not once before the run; `requests`: the file
    `bare_requests` wrote (with the same `signed`), else it is written first."""
    path = requests if requests is not None else bare_requests(tmp, signed=signed)
    env = {**os.environ, "BENCH_REQUESTS": str(path), "BENCH_DIRECT": "1" if direct else "0",
           "BENCH_SIGN": "1" if signed else "0", "BENCH_SECRET": SECRET}
    path = tmp / "bare_locustfile.py"
    path.write_text(BARE_LOCUSTFILE, encoding="utf-8")
    stats = tmp / "bare"
    cpu = _locust(path, url, users, seconds, env, ["-t", f"{seconds}s", "--csv", str(stats), "--csv-full-history"],
                  tmp / "bare.log")
    with open(f"{stats}_stats.csv", encoding="utf-8") as f:
        rows = [line.split(",") for line in f.read().splitlines()]
    header, total = rows[0], next(r for r in rows if r[1].strip('"') == "Aggregated")
    rate = float(total[header.index('"Requests/s"')] if '"Requests/s"' in header else total[header.index("Requests/s")])
    with open(f"{stats}_stats_history.csv", encoding="utf-8") as f:
        history = [line.split(",") for line in f.read().splitlines()]
    count = history[0].index("Total Request Count")
    points = [(float(r[0]), int(r[count])) for r in history[1:] if r[3] == "Aggregated"]
    t1, t2 = _window(points[0][0], seconds) if points else (0.0, 0.0)
    inside = [p for p in points if t1 <= p[0] <= t2]
    requests = inside[-1][1] - inside[0][1] if len(inside) >= 2 else 0
    return rate, _cpu_us(cpu, inside[0][0] if inside else 0.0, inside[-1][0] if inside else 0.0, requests)


def storm_rate(url: str, users: int, seconds: int, tmp: Path,
               locustfile: Path = ROOT / "loadtests" / "locustfile.py") -> tuple[float, float, float]:
    from hookproof.loadtests.spec import SECRETS_ENV, SPEC_ENV, StormSpec, secrets_to_env

    out = tmp / "storm"
    spec = StormSpec(target_url=url, users=users, rate_per_s=100_000.0, duration_s=float(seconds),
                     observer={"kind": "python", "callable": "storm_throughput:no_effects"}, out_dir=str(out),
                     settle_window_s=0.1, settle_deadline_s=5.0, max_in_flight=1)
    spec_path = tmp / "spec.json"
    spec_path.write_text(spec.to_json(), encoding="utf-8")
    env = {**os.environ, SPEC_ENV: str(spec_path), SECRETS_ENV: secrets_to_env([SECRET]),
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "bench")])}
    cpu = _locust(locustfile, url, users, seconds, env, [], tmp / "storm.log")
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    stats = next(c for c in report["scenarios"][0]["checks"] if c["check_id"] == "ack_latency")["stats"]
    started = float(report["started_at"])
    t1, t2 = _window(started, seconds)
    bucket = float(stats["throughput"]["bucket_s"])
    requests = sum(sent * bucket for t, sent, _ in stats["throughput"]["series"] if t1 <= started + t and
                   started + t + bucket <= t2)
    inside = [started + t for t, _, _ in stats["throughput"]["series"] if t1 <= started + t and
              started + t + bucket <= t2]
    cpu_us = _cpu_us(cpu, inside[0] if inside else 0.0, inside[-1] + bucket if inside else 0.0, requests)
    return float(stats["sent_per_s"]), float(stats["events"]) / seconds, cpu_us


def side_by_side(url: str, users: int, seconds: int, tmp: Path, *,
                 signed: bool = False) -> tuple[tuple[float, float], tuple[float, float]]:
    """The storm and the bare user on its HTTP path (with `signed`: that user signing each
    request as it sends it) at once, both on CPU 0 (the null receiver on CPU 1): ((storm
    req/s, CPU µs/req), (bare req/s, CPU µs/req)), each CPU figure over its own steady
    window. Both meet the same machine at the same time, so their CPU ratio does not move
    with the load the way two runs one after the other do; their req/s are whole-run
    figures whose start and end phases overlap the other's steady part, not a ratio to read."""
    results: dict[str, tuple[float, ...]] = {}

    def run(name: str, work: Any) -> None:
        sub = tmp / name
        sub.mkdir()
        results[name] = work(sub)

    requests = bare_requests(tmp, signed=signed)  # written first: both Locust processes then start together
    threads = [threading.Thread(target=run, args=("storm", lambda d: storm_rate(url, users, seconds, d))),
               threading.Thread(target=run, args=("bare", lambda d: bare_rate(url, users, seconds, d, direct=True,
                                                                               signed=signed, requests=requests)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    storm, bare = results["storm"], results["bare"]
    return (storm[0], storm[2]), (bare[0], bare[1])


#: Parts of a live storm attempt `live_parts` times, in the order printed.
LIVE_PARTS = ("draw", "sign", "keep", "rows and spool", "Locust's request event", "greenlets", "retry decision",
              "exchange: head", "exchange: pooled connection")


def live_parts(url: str, users: int, seconds: int, tmp: Path) -> tuple[float, dict[str, float]]:
    """The storm run as `storm_rate` runs it, its parts timed in the live Locust process
    (`PARTS_LOCUSTFILE`) over the middle half of the run: (CPU µs per attempt of the
    whole process, {part: CPU µs per attempt}); the rest (the HTTP exchange's sending,
    parsing and reading, gevent's loop, the user's glue) is the first minus the sum.
    Each timed call adds two clock reads (about 0.1 µs each) to its part."""
    path = tmp / "storm_parts_locustfile.py"
    path.write_text(PARTS_LOCUSTFILE, encoding="utf-8")
    parts_path = tmp / "parts.json"
    os.environ["BENCH_PARTS"] = str(parts_path)
    try:
        storm_rate(url, users, seconds, tmp, locustfile=path)
    finally:
        del os.environ["BENCH_PARTS"]
    found = json.loads(parts_path.read_text(encoding="utf-8"))
    n = max(int(found["attempts"]), 1)
    return float(found["cpu_s"]) / n * 1e6, {p: float(found["parts"].get(p, 0.0)) / n * 1e6 for p in LIVE_PARTS}


#: Parts of a storm attempt's own work, as `bookkeeping` times them.
PARTS = ("draw", "sign", "keep", "row", "spool")


def bookkeeping(attempts: int = 30_000) -> dict[str, float]:
    """CPU µs per attempt of the storm's own work without HTTP, by part, in this process:
    drawing groups from a user's plan over its story book with the spec's defaults
    (`draw`), signing as the user does, a burst's copies sharing one signed request in the
    same second (`sign`), the process's in-flight bookkeeping (`keep`: `STATE.begin` and
    `complete`), the history rows of each chunk (`row`: `STATE.row`) and their spooling
    as the master appends a chunk (`spool`: `Spool.add`). Every answer is a 200."""
    from hookproof.loadtests.plan import StormPlan
    from hookproof.loadtests.spec import StormSpec
    from hookproof.loadtests.spool import Spool
    from hookproof.loadtests.storm_state import STATE
    from hookproof.loadtests.storm_worker import CHUNK

    spec = StormSpec(target_url="http://127.0.0.1:9/webhooks", users=1, rate_per_s=1.0, duration_s=1.0,
                     out_dir="unused")
    STATE.setup(spec, sender=False)
    STATE.secrets = [SECRET]
    profile = STATE.profile
    assert profile is not None
    book = STATE.story_book(STATE.process_seed(0))
    plan = StormPlan(book.stream(first_copy=1, stride=1 << 16), duplicates=spec.duplicates, burst=spec.burst,
                     reorder_window=spec.reorder_window, wave_window_s=spec.wave_window_s,
                     wave_events=spec.wave_events, related=spec.related, older_redelivery=spec.older_redelivery,
                     late=spec.late, api_transient=spec.api_transient, seed=1)
    atoms = (True, 200, b"", False, b"HTTP/1.1 200 OK\r\n", None, None, spec.sender_timeout_s, 65536)
    spent = dict.fromkeys(PARTS, 0.0)
    clock = time.process_time
    last: Any = None
    done = 0
    with tempfile.TemporaryDirectory() as d:
        spool = Spool(Path(d) / "history.sqlite")
        while done < attempts:
            t0 = clock()
            group = plan.next_group(done / 1000.0)
            t1 = clock()
            spent["draw"] += t1 - t0
            for send in group:
                t0 = clock()
                now = int(time.time())
                envelope = send.envelope
                assert envelope is not None
                if last is not None and last[0] is envelope and last[1] == now:
                    request = last[2]
                else:
                    request = profile.request(envelope, STATE.secrets, now)
                    last = (envelope, now, request)
                t1 = clock()
                sent_at, t = time.time(), time.perf_counter()
                token = STATE.begin(send, 1, envelope.event_id, sent_at, t)
                STATE.complete(token, (send.event.id, send.delivery_id, send.tags, 1, envelope.event_id, sent_at,
                                       (time.perf_counter() - t) * 1000.0, atoms))
                t2 = clock()
                spent["sign"] += t1 - t0
                spent["keep"] += t2 - t1
                done += 1
                del request
            if len(STATE.sent) >= CHUNK or done >= attempts:
                t0 = clock()
                sent, STATE.sent = STATE.sent, []
                events, STATE.events = STATE.events, {}
                rows = [STATE.row(s, events) for s in sent]
                wire = [events[n] for n in {s[0] for s in sent}]
                t1 = clock()
                spool.add((), wire, rows=rows)
                spent["row"] += t1 - t0
                spent["spool"] += clock() - t1
        spool.close()
    return {part: seconds / done * 1e6 for part, seconds in spent.items()}


def main(seconds: int, users: int) -> None:
    server, url = start_null_receiver(cpu=1)
    try:
        load_before = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            bare, bare_cpu = bare_rate(url, users, seconds, tmp)
            direct, direct_cpu = bare_rate(url, users, seconds, tmp, direct=True)
            signed, signed_cpu = bare_rate(url, users, seconds, tmp, direct=True, signed=True)
            storm, events, storm_cpu = storm_rate(url, users, seconds, tmp)
        print(f"{seconds} s, {users} users, one Locust process on CPU 0, null receiver on CPU 1; load average "
              f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} CPUs")
        print(f"{'sender':<58}{'req/s':>10}{'vs bare':>10}{'CPU µs/req':>12}{'vs bare':>10}")
        print(f"{'bare FastHttpUser, pre-signed bodies':<58}{bare:>10.0f}{1.0:>10.2f}{bare_cpu:>12.1f}{1.0:>10.2f}")
        print(f"{'bare, on the storm`s HTTP path (pooled client, no session)':<58}{direct:>10.0f}"
              f"{direct / bare:>10.2f}{direct_cpu:>12.1f}{bare_cpu / direct_cpu:>10.2f}")
        print(f"{'bare on the storm`s path, signed as each is sent':<58}{signed:>10.0f}"
              f"{signed / bare:>10.2f}{signed_cpu:>12.1f}{bare_cpu / signed_cpu:>10.2f}")
        print(f"{'storm: signed attempts (world, profile, history records)':<58}{storm:>10.0f}{storm / bare:>10.2f}"
              f"{storm_cpu:>12.1f}{bare_cpu / storm_cpu:>10.2f}")
        print(f"{'storm: distinct events':<58}{events:>10.0f}")
        print(f"storm vs bare on its own HTTP path: {storm / direct:.2f} req/s, {direct_cpu / storm_cpu:.2f} CPU"
              " (the signing and bookkeeping alone)")
        print(f"storm vs bare signing on its path: {storm / signed:.2f} req/s, {signed_cpu / storm_cpu:.2f} CPU"
              " (the drawing and recording alone)")
        load_before = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as d:
            (storm, storm_cpu), (direct, direct_cpu) = side_by_side(url, users, seconds, Path(d))
        print(f"side by side, both on CPU 0 at once (load {load_before:.1f} before, {os.getloadavg()[0]:.1f} after): "
              f"storm {storm_cpu:.1f} CPU µs/req, bare on its path {direct_cpu:.1f}; storm vs bare on its path "
              f"{direct_cpu / storm_cpu:.2f} CPU (req/s are not compared here: each run's start and end "
              "phases overlap the other's steady part)")
        load_before = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as d:
            (storm, storm_cpu), (signed, signed_cpu) = side_by_side(url, users, seconds, Path(d), signed=True)
        print(f"side by side with the bare user signing, both on CPU 0 at once (load {load_before:.1f} before, "
              f"{os.getloadavg()[0]:.1f} after): storm {storm_cpu:.1f} CPU µs/req, bare signing on its path "
              f"{signed_cpu:.1f}; storm vs bare signing on its path {signed_cpu / storm_cpu:.2f} CPU")
        load_before = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as d:
            whole, live = live_parts(url, users, seconds, Path(d))
        print(f"live storm alone, CPU µs per attempt by part over the middle half of the run (load {load_before:.1f}"
              f" before, {os.getloadavg()[0]:.1f} after): " + ", ".join(f"{p} {live[p]:.1f}" for p in LIVE_PARTS)
              + f"; the rest (HTTP exchange, gevent's loop, glue) {whole - sum(live.values()):.1f}; total {whole:.1f}")
        parts = bookkeeping()
        print(f"storm's own work without HTTP, CPU µs per attempt (load {os.getloadavg()[0]:.1f}): "
              + ", ".join(f"{p} {parts[p]:.1f}" for p in PARTS) + f"; total {sum(parts.values()):.1f}")
        print("req/s is what each sustains (the receiver answers several times faster than any sender here);"
              " CPU µs/req is the sender's own cost per request over the steady window.")
    finally:
        server.terminate()
        server.wait(5)


if __name__ == "__main__":
    cli = parser(__doc__)
    cli.add_argument("seconds", nargs="?", type=positive_int, default=15, help="seconds per sender (default 15)")
    cli.add_argument("users", nargs="?", type=positive_int, default=20, help="Locust users (default 20)")
    args = cli.parse_args()
    if args.seconds < MIN_SECONDS:
        cli.error(f"argument seconds: at least {MIN_SECONDS}, for a steady window after the spawn and before the end"
                  f" (got {args.seconds})")
    main(args.seconds, args.users)
