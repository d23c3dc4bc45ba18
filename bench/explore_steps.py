"""State-machine steps per second of `hookproof explore` against `inbox_sync`.

Two rows: in process (the FastAPI app through httpx's ASGI transport, one event loop,
a fresh SQLite file every 20 examples) and over HTTP (the same receiver served by
uvicorn on 127.0.0.1 in its own process, observed through ``GET /hookproof/observe``).
A step is one rule (a world change, a delivery, a redelivery, a fault); every example
also pays its teardown (deliver what is pending, settle, final checks), which is
included in the wall time.

Run: ``python bench/explore_steps.py [EXAMPLES]`` (default 100 per row; about 30 s).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from examples.receivers.pool import ReceiverPool
from hookproof.scenarios.observers import HttpObserver
from hookproof.scenarios.statemachine import explore, shared_target
from hookproof.simulator.delivery import Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server.state import ServerState

SECRET = "whsec_hookproof_bench_only"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def row(label: str, examples: int, steps: int, seconds: float) -> None:
    print(f"{label:<12} {examples:>5} examples {steps:>6} steps {seconds:6.1f} s "
          f"{steps / seconds:7.0f} steps/s {examples / seconds:6.1f} examples/s")


def in_process(n: int) -> None:
    state = ServerState()
    pool = ReceiverPool("inbox_sync", secrets=(SECRET,), provider_state=state)
    try:
        r = explore(pool.target(), max_examples=n, seed=1, provider_state=state)
    finally:
        pool.close()
    assert r.failure is None, r.failure.summary() if r.failure else ""
    row("in-process", r.examples, r.steps, r.duration_s)


def over_http(n: int) -> None:
    port = free_port()
    db = Path(tempfile.mkdtemp(prefix="hookproof-bench-")) / "inbox_sync.db"
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
        r = explore(target, max_examples=n, seed=1, provider_state=ServerState())
        observer.close()
        assert r.failure is None, r.failure.summary() if r.failure else ""
        row("http", r.examples, r.steps, r.duration_s)
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    in_process(count)
    over_http(count)
