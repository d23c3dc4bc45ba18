"""State-machine steps per second of `hookproof explore` against `inbox_sync`.

Three rows: in process (the FastAPI app through httpx's ASGI transport, one event loop,
a fresh SQLite file every 20 examples); the bare loop (the very requests the in-process
search sent, recorded as they went out: the same signed bytes, in the same order,
bursts released together, to fresh apps of the same receiver recycled the same way,
through the same transport on one event loop, with no Hypothesis, no world, no checks and
no observer); and over HTTP (the same receiver served by uvicorn on 127.0.0.1 in its own
process, observed through ``GET /hookproof/observe``). The bare loop's steps/s is the
search's step count over the bare loop's time: the rate explore would reach if its only
cost were delivering; ``explore / bare`` is the share of it explore keeps.

A step is one rule (a world change, a delivery, a redelivery, a fault); every example
also pays its teardown (deliver what is pending, settle, final checks), which is
included in the wall time. Each row shows wall and CPU seconds (CPU of every thread of
this process, the receiver's worker threads included) and the load average; ``explore /
bare loop`` is given for both (the CPU ratio moves less on a loaded machine). Under the
in-process row, one line splits explore's main-thread CPU per example (the receiver's
worker threads are not in it): example set-up (the receiver's app when the pool recycles
it, the world, the dispatcher), world operations, steps and teardown (mostly delivering:
signing, dispatcher, httpx, the app's routing), observer reads, checks, and the rest:
Hypothesis's own machinery and the rules' glue; and the settle's sleeps per example (wall:
the quick settle window, waited for when the app may still be working; a quiet in-process
app showing the whole picture is settled by that read). A short untimed search runs first,
so that the rows compare warm processes (the start-up line says what it cost). Under the
bare loop, Hypothesis alone: a machine with the search's rules (names, arguments, the
``initialize`` rule), every rule enabled and doing nothing, run with explore's settings and
seed, its main-thread CPU per example, and the bare loop's steps/s were that added to each
example (explore's ceiling while it uses Hypothesis as it does). The
receivers' SQLite files are on the memory-backed filesystem when the machine has one:
on disk, inbox_sync's one or two fsyncs per request (about 4 ms each here) would be most
of both rows.

Run: ``python bench/explore_steps.py [EXAMPLES] [--in-process]`` (default 100 examples per
row; ``--in-process`` skips the HTTP row; about 30 s).
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import httpx
from bench_args import parser, positive_int

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples.receivers.pool import ReceiverPool  # noqa: E402
from hookproof.scenarios import session as session_module  # noqa: E402
from hookproof.scenarios.observers import HttpObserver  # noqa: E402
from hookproof.scenarios.statemachine import explore, machine_for, shared_target  # noqa: E402
from hookproof.scenarios.world_ops import WORLD_OPS  # noqa: E402
from hookproof.simulator.delivery import Target  # noqa: E402
from hookproof.simulator.profiles import get_profile  # noqa: E402
from hookproof.simulator.server.state import ServerState  # noqa: E402

SECRET = "whsec_hookproof_bench_only"
#: Where the receivers' SQLite files live: memory-backed when the machine has /dev/shm, so
#: the figures measure explore rather than the disk's fsync (inbox_sync commits once or
#: twice per request, about 4 ms each on this machine's disk; explore and the bare loop
#: pay it alike).
DB_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None


_SCRATCH: list[tempfile.TemporaryDirectory[str]] = []


def scratch() -> str:
    """A directory for receivers' databases, removed when the bench ends."""
    _SCRATCH.append(tempfile.TemporaryDirectory(prefix="hookproof-bench-", dir=DB_DIR))
    return _SCRATCH[-1].name


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}"


def row(label: str, examples: int, steps: int, seconds: float, cpu_s: float, extra: str = "") -> None:
    print(f"{label:<12} {examples:>5} examples {steps:>6} steps {seconds:6.1f} s "
          f"{steps / seconds:7.0f} steps/s {examples / seconds:6.1f} examples/s  cpu {cpu_s:5.1f} s  {load()}{extra}",
          flush=True)


# ---- what the in-process search sent --------------------------------------------------------

@dataclass
class Sent:
    """One request as it went out: which app it went to, and its bytes."""

    app: int  # the app's order of first use
    method: str
    url: str
    headers: list[tuple[bytes, bytes]]
    body: bytes


@dataclass
class Recording:
    """The requests of a search in batches: a batch's requests were in flight together."""

    batches: list[list[Sent]] = field(default_factory=list)
    apps: dict[int, int] = field(default_factory=dict)
    inflight: int = 0

    @property
    def requests(self) -> int:
        return sum(len(b) for b in self.batches)


@contextmanager
def recording() -> Iterator[Recording]:
    """Record every request sent through httpx's ASGI transport (the bytes are read from the
    request the transport was given; nothing else is changed)."""
    rec = Recording()
    original = httpx.ASGITransport.handle_async_request

    async def handle(self: httpx.ASGITransport, request: httpx.Request) -> httpx.Response:
        app = rec.apps.setdefault(id(self.app), len(rec.apps))
        sent = Sent(app, request.method, str(request.url), list(request.headers.raw), request.content)
        if rec.inflight == 0 or not rec.batches:
            rec.batches.append([sent])
        else:
            rec.batches[-1].append(sent)
        rec.inflight += 1
        try:
            return await original(self, request)
        finally:
            rec.inflight -= 1

    httpx.ASGITransport.handle_async_request = handle  # type: ignore[method-assign]
    try:
        yield rec
    finally:
        httpx.ASGITransport.handle_async_request = original  # type: ignore[method-assign]


# ---- where explore's own time goes -----------------------------------------------------------

#: Session methods timed for the breakdown: (attribute, part). A part's time is the method's
#: own, its nested timed calls left out, so the parts add up.
TIMED: tuple[tuple[str, str], ...] = (
    ("__init__", "example set-up"), ("apply", "steps"), ("safety", "steps"), ("finish", "teardown"),
    ("close", "teardown"), ("observe", "observer reads"), ("_check", "checks"),
)


@dataclass
class Breakdown:
    """Main-thread CPU seconds per part of the search, and the settle's sleeps (wall)."""

    cpu: dict[str, float] = field(default_factory=dict)
    slept_s: float = 0.0


def _swap(owner: Any, name: str, value: Any) -> None:
    """Set `owner.name` on a class, or on a frozen dataclass instance (`WorldOps`)."""
    if isinstance(owner, type):
        setattr(owner, name, value)
    else:
        object.__setattr__(owner, name, value)


@contextmanager
def breakdown() -> Iterator[Breakdown]:
    """Time `TIMED` Session methods, the world's operations (every world kind's `WorldOps`)
    and the settle's sleeps on the main thread (`time.thread_time`: the receiver's worker
    threads are not in it). "steps" and "teardown" are then mostly delivering: signing,
    the dispatcher, httpx and the app's routing on the event loop."""
    out = Breakdown()
    stack: list[float] = []  # CPU of nested timed calls, per level
    originals: list[tuple[Any, str, Any]] = []

    def timed(cls: Any, name: str, part: str) -> None:
        original = getattr(cls, name)

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            stack.append(0.0)
            try:
                return original(*args, **kwargs)
            finally:
                spent = time.thread_time() - start
                nested = stack.pop()
                out.cpu[part] = out.cpu.get(part, 0.0) + spent - nested
                if stack:
                    stack[-1] += spent
        originals.append((cls, name, original))
        _swap(cls, name, wrapper)

    for name, part in TIMED:
        timed(session_module.Session, name, part)
    for ops in WORLD_OPS.values():  # frozen dataclasses: their functions are swapped in place
        timed(ops, "apply", "world operations")
        timed(ops, "legal", "world operations")
    real_settle = session_module.settle

    def sleep(seconds: float) -> None:
        started = time.monotonic()
        time.sleep(seconds)
        out.slept_s += time.monotonic() - started

    def settle(*args: Any, **kwargs: Any) -> Any:  # the teardown's settle (`observers.settle`), its sleeps timed
        return real_settle(*args, sleep=sleep, **kwargs)

    session_module.settle = settle  # type: ignore[assignment]
    try:
        yield out
    finally:
        session_module.settle = real_settle  # type: ignore[assignment]
        for cls, name, original in reversed(originals):
            _swap(cls, name, original)


def print_breakdown(b: Breakdown, total_cpu_s: float, examples: int) -> None:
    """One line: explore's main-thread CPU per example by part, the rest (Hypothesis's own
    machinery and the rule glue), and the settle's sleeps per example."""
    ours = sum(b.cpu.values())
    parts = dict(b.cpu)
    parts["Hypothesis and glue"] = max(0.0, total_cpu_s - ours)
    shown = ", ".join(f"{k} {1000 * v / examples:.2f}" for k, v in parts.items())
    print(f"main-thread CPU per example (ms): {shown}; settle sleeps {1000 * b.slept_s / examples:.2f} ms wall",
          flush=True)


def bare_loop(rec: Recording, state: ServerState) -> tuple[float, float]:
    """Send `rec`'s requests again to fresh apps of the receiver, through httpx's ASGI
    transport called directly (as the dispatcher calls it) on one event loop (a batch's
    requests together); (wall, CPU) seconds taken, apps' start-up included (the search
    pays it too)."""
    pool = ReceiverPool("inbox_sync", scratch(), secrets=(SECRET,),
                        provider_state=state, recycle_every=1)
    transports: dict[int, httpx.ASGITransport] = {}

    async def send(transport: httpx.ASGITransport, s: Sent) -> None:
        # the transport called directly, as the dispatcher calls it for in-process apps
        response = await transport.handle_async_request(httpx.Request(s.method, s.url, headers=s.headers,
                                                                      content=s.body))
        await response.aread()

    async def run() -> None:
        for batch in rec.batches:
            for s in batch:
                if s.app not in transports:
                    app = pool.open().target.app
                    transports[s.app] = httpx.ASGITransport(app=app, raise_app_exceptions=False)
            if len(batch) == 1:
                await send(transports[batch[0].app], batch[0])
            else:
                await asyncio.gather(*(send(transports[s.app], s) for s in batch))
        for transport in transports.values():
            await transport.aclose()

    started, cpu = time.monotonic(), time.process_time()
    try:
        asyncio.run(run())
        return time.monotonic() - started, time.process_time() - cpu
    finally:
        pool.close()


def hypothesis_alone(target: Any, examples: int) -> tuple[int, int, float]:
    """Hypothesis's own cost with explore's rules: a machine with the rules of `target`'s
    search (their names and argument strategies, the `initialize` rule first), every rule
    enabled and doing nothing, run as explore runs its machine (same settings, seed 1):
    the rule draws, the swarm flags and the engine's bookkeeping per example, with no
    session, world, delivery or check: what explore pays Hypothesis whatever else it
    cuts (a lower bound: explore's rules are drawn again when a precondition fails).
    (examples, rules run, main-thread CPU seconds)."""
    from hypothesis import HealthCheck, Phase, seed, settings
    from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule, run_state_machine_as_test

    real = machine_for(target, seed=1)
    counts = {"examples": 0, "rules": 0}

    def body(name: str) -> Any:
        def step(self: Any, **_: Any) -> None:
            counts["rules"] += 1
        step.__name__ = name
        return step

    def start(self: Any) -> None:
        RuleBasedStateMachine.__init__(self)
        counts["examples"] += 1

    members: dict[str, Any] = {"__init__": start}
    state = real.setup_state()
    for r in state.initializers:
        members[r.function.__name__] = initialize(**r.arguments)(body(r.function.__name__))
    for r in state.rules:
        f = rule(**r.arguments)(body(r.function.__name__))
        members[r.function.__name__] = precondition(lambda self: True)(f) if r.preconditions else f
    machine = type("NullMachine", (RuleBasedStateMachine,), members)
    config = settings(max_examples=examples, stateful_step_count=10, deadline=None, derandomize=False,
                      suppress_health_check=list(HealthCheck), report_multiple_bugs=False, database=None,
                      phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
    cpu = time.thread_time()
    run_state_machine_as_test(seed(1)(machine), settings=config)
    return counts["examples"], counts["rules"], time.thread_time() - cpu


#: Examples of the untimed search that runs first (see `warm_up`).
WARM_UP_EXAMPLES = 5


def warm_up() -> None:
    """A short search, untimed, before the timed rows: a process pays its imports (Hypothesis,
    Faker, numpy, FastAPI, stripe: about 1 s of CPU), the first app's routes and its first
    SQLAlchemy statements once. Timed, they fell on the search alone (the bare loop runs
    after it, in a warm process); the line printed says what they cost."""
    state = ServerState()
    pool = ReceiverPool("inbox_sync", scratch(), secrets=(SECRET,), provider_state=state)
    started, cpu = time.monotonic(), time.process_time()
    try:
        explore(pool.target(), max_examples=WARM_UP_EXAMPLES, seed=2, provider_state=state)
    finally:
        pool.close()
    print(f"start-up     (untimed, once per process: imports, the first app) {time.monotonic() - started:5.1f} s  "
          f"cpu {time.process_time() - cpu:4.1f} s  {load()}", flush=True)


def in_process(n: int) -> None:
    warm_up()
    state = ServerState()
    pool = ReceiverPool("inbox_sync", scratch(), secrets=(SECRET,),
                        provider_state=state)
    try:
        with recording() as rec, breakdown() as parts:
            cpu, main_cpu = time.process_time(), time.thread_time()
            r = explore(pool.target(), max_examples=n, seed=1, provider_state=state)
            cpu, main_cpu = time.process_time() - cpu, time.thread_time() - main_cpu
    finally:
        pool.close()
    assert r.failure is None, r.failure.summary() if r.failure else ""
    row("in-process", r.examples, r.steps, r.duration_s, cpu, f"  {rec.requests} requests")
    print_breakdown(parts, main_cpu, r.examples)
    bare_s, bare_cpu = bare_loop(rec, ServerState())
    row("bare loop", r.examples, r.steps, bare_s, bare_cpu, f"  {rec.requests} requests in {len(rec.batches)} batches")
    print(f"explore / bare loop: {bare_s / r.duration_s:.2f} (CPU {bare_cpu / cpu:.2f})", flush=True)
    null_examples, null_rules, null_cpu = hypothesis_alone(pool.target(), n)
    per_example = null_cpu / max(1, null_examples)
    print(f"hypothesis alone (explore's rules, each enabled, doing nothing): {null_examples} examples "
          f"{null_rules} rules run, main-thread CPU {1000 * per_example:.2f} ms per example; the bare loop "
          f"plus that per example: {r.steps / (bare_s + per_example * r.examples):.0f} steps/s  {load()}", flush=True)


def over_http(n: int) -> None:
    port = free_port()
    db = Path(scratch()) / "inbox_sync.db"
    proc = subprocess.Popen([sys.executable, "-m", "examples.receivers.inbox_sync", "--port", str(port),
                             "--db", f"sqlite:///{db}", "--secret", SECRET],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("the receiver did not start")
            time.sleep(0.1)
        observer = HttpObserver(f"{base}/hookproof/observe")
        target = shared_target(Target(url=f"{base}/webhooks"), observer.observe, get_profile("stripe"), (SECRET,),
                               in_process=False)
        cpu = time.process_time()
        r = explore(target, max_examples=n, seed=1, provider_state=ServerState())
        cpu = time.process_time() - cpu
        observer.close()
        assert r.failure is None, r.failure.summary() if r.failure else ""
        row("http", r.examples, r.steps, r.duration_s, cpu)
    finally:
        proc.terminate()
        proc.wait(10)


def main(argv: list[str]) -> None:
    cli = parser(__doc__)
    cli.add_argument("examples", nargs="?", type=positive_int, default=100, help="examples per row (default 100)")
    cli.add_argument("--in-process", action="store_true", help="skip the HTTP row")
    args = cli.parse_args(argv)
    count = args.examples
    try:
        in_process(count)
        if not args.in_process:
            over_http(count)
    finally:
        for d in _SCRATCH:
            d.cleanup()


if __name__ == "__main__":
    main(sys.argv[1:])
