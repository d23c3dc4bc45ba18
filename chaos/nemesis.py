"""The nemesis: every fault operation on one receiver, recorded, and one heal for all.

A `Nemesis` owns a receiver (process or container, made by a factory for a port), a
`FaultProxy` in front of it and the `Replicas` that may join it. Chaos scenarios reach
the receiver through `target` (the proxy). Each operation is recorded in the history
as a `FaultOp` (Jepsen's nemesis process) under the current `scenario` label.

`heal()` undoes whatever is in force, in a fixed order: cancel scheduled faults, remove
the proxy's toxics and taps, stop extra replicas, resume a paused receiver, start a
killed one. It runs every step even when one fails and raises `HealError` at the end.
Healing a healthy receiver changes nothing (the no-op fault is the identity).
"""

from __future__ import annotations

import shlex
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from hookproof.chaos.errors import ChaosError, HealError
from hookproof.chaos.process import ReceiverLog, ReceiverProcess
from hookproof.chaos.proxy import FaultProxy, LimitData, Toxic
from hookproof.chaos.replicas import Controllable, ReceiverFactory, Replicas
from hookproof.simulator.delivery import FaultOp, History, Target
from hookproof.simulator.serving import PortRange

#: Seconds a heal waits for scheduled faults (a pending restart) to finish.
TIMER_JOIN_S = 60.0


class Nemesis:
    """Fault operations against one receiver behind a fault proxy.

    Args:
        make: builds the receiver for a port (`process_factory`, `docker_factory`).
        port: the receiver's own port.
        history: where operations are recorded (None: not recorded).
        path: the webhook path on the receiver.
        backend: ``"process"`` or ``"docker"`` (reported).
        seed: drives the proxy's toxicity and jitter.
        ports: where the proxy's and the replicas' ports come from (``[chaos] ports``; None:
            any free port).
    """

    def __init__(self, make: ReceiverFactory, port: int, *, history: History | None = None, path: str = "/webhooks",
                 backend: str = "process", seed: int = 0, ports: PortRange | None = None) -> None:
        self.make = make
        self.port = port
        self.history = history
        self.path = path
        self.backend = backend
        self.receiver: Controllable = make(port)
        self.proxy = FaultProxy(("127.0.0.1", port), seed=seed, listen_port=ports.take() if ports else 0)
        self.replicas = Replicas(make, proxy=self.proxy, primary=self.receiver,
                                 **({"ports": ports.take} if ports else {}))
        self.scenario = ""
        self.errors: list[str] = []
        self._lock = threading.RLock()
        self._timers: list[threading.Thread] = []
        self._timers_lock = threading.Lock()  # later() runs on delivery threads while heal() runs
        self._cancel = threading.Event()
        #: the longest the receiver took from a start to healthy, in seconds (0.0 before the
        #: first start): a retry schedule compressed during chaos spans more than a restart
        #: (`scenarios.runner.Runner.scaled_time_scale`)
        self.longest_start_s = 0.0

    def __repr__(self) -> str:
        return f"Nemesis({self.backend}, port={self.port}, proxy={self.proxy.port})"

    # ---- lifecycle ---------------------------------------------------------------
    @property
    def target(self) -> Target:
        """Where chaos scenarios deliver: the proxy in front of the receiver."""
        return Target(url=self.proxy.url(self.path))

    def start(self) -> "Nemesis":
        """Start the proxy and the receiver (waits healthy)."""
        self.proxy.start()
        try:
            with self._lock:
                self._start()
                self._record("start")
        except BaseException:
            self.proxy.stop()
            raise
        return self

    def close(self) -> None:
        """Heal, then stop the receiver, its replicas and the proxy (every step runs)."""
        failures: list[str] = []
        for step in (self.heal, self.replicas.stop, self.receiver.stop, self.proxy.stop):
            try:
                step()
            except Exception as exc:  # keep tearing down; report at the end
                failures.append(f"{getattr(step, '__name__', step)}: {exc}")
        self._record("stop")
        if failures:
            raise HealError(failures)

    def __enter__(self) -> "Nemesis":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        """Start the receiver, wait healthy, and keep the longest start in `longest_start_s`."""
        t0 = time.monotonic()
        self.receiver.start()
        self.longest_start_s = max(self.longest_start_s, time.monotonic() - t0)

    # ---- recording ---------------------------------------------------------------
    def _record(self, op: str, detail: str = "") -> None:
        if self.history is not None:
            self.history.record_op(FaultOp(op=op, target=f"{self.backend}:{self.port}", at=time.time(),
                                           detail=detail, scenario=self.scenario))

    # ---- faults ------------------------------------------------------------------
    def kill(self, detail: str = "") -> None:
        """SIGKILL the receiver (no restart)."""
        with self._lock:
            self._record("kill", detail)
            self.receiver.kill()

    def ensure_running(self) -> None:
        """Start the receiver when it is not running (a supervisor's restart)."""
        with self._lock:
            if self.receiver.paused:
                self.resume()
            if not self.receiver.running():
                self._start()
                self._record("start", "after a kill")

    def restart(self) -> None:
        """Kill, start again, wait healthy."""
        with self._lock:
            self._record("restart")
            self.receiver.kill()
            self._start()

    def pause(self) -> None:
        """Freeze the receiver (SIGSTOP / cgroup freezer)."""
        with self._lock:
            self._record("pause")
            self.receiver.pause()

    def resume(self) -> None:
        """Unfreeze the receiver."""
        with self._lock:
            if self.receiver.paused:
                self._record("resume")
                self.receiver.resume()

    def kill_after_ack(self, after: int = 1, *, restart: bool = True) -> None:
        """Kill the receiver right after it has written its `after`-th complete 2xx
        answer from now, before the provider reads that answer's last bytes; with
        `restart`, start it again at once in the background (a supervisor's restart;
        `wait_scheduled` waits for it)."""
        self._record("arm", f"kill after the next {after} 2xx answer(s)")
        seen = [0]

        def on_answer(status: int) -> None:
            seen[0] += 1
            if seen[0] == after:
                self.kill(f"right after its 2xx answer number {after} ({status})")
                if restart:
                    self.later(0.0, self.ensure_running, "restart")

        self.proxy.on_response(on_answer, times=after)

    def add_toxic(self, toxic: Toxic) -> str:
        """Add a proxy toxic (see chaos.proxy)."""
        self._record("toxic", repr(toxic))
        return self.proxy.add_toxic(toxic)

    def drop_answers(self, after_bytes: int = 12, *, connections: int | None = 1) -> str:
        """Cut the next `connections` connections once `after_bytes` bytes of the answer
        have passed (Toxiproxy's downstream ``limit_data``)."""
        return self.add_toxic(LimitData(stream="downstream", bytes=after_bytes, connections=connections))

    def scale(self, count: int) -> None:
        """Run `count` replicas behind the proxy (round-robin per connection)."""
        with self._lock:
            self._record("scale", f"{count} replicas")
            self.replicas.scale(count)

    def later(self, delay_s: float, action: Callable[[], None], label: str) -> None:
        """Run `action` in a thread after `delay_s` unless a heal comes first."""
        def run() -> None:
            if self._cancel.wait(delay_s):
                return
            try:
                action()
            except Exception as exc:  # a scheduled fault that failed is reported by the next heal
                self.errors.append(f"{label}: {exc}")

        thread = threading.Thread(target=run, name=f"nemesis-{label}", daemon=True)
        with self._timers_lock:  # started and listed together: heal never joins an unstarted thread
            thread.start()
            self._timers.append(thread)

    def resume_after(self, delay_s: float) -> None:
        """Resume the receiver `delay_s` seconds from now."""
        self.later(delay_s, self.resume, "resume")

    def crash_restart_after(self, delay_s: float) -> None:
        """`delay_s` from now: SIGKILL the receiver and start it again (a crash and a
        supervisor's restart)."""
        def crash() -> None:
            self.kill(f"at +{delay_s:.3f} s")
            self.ensure_running()

        self.later(delay_s, crash, "crash")

    def wait_scheduled(self, timeout_s: float = TIMER_JOIN_S) -> None:
        """Wait for the scheduled faults to have happened (bounded)."""
        deadline = time.monotonic() + timeout_s
        with self._timers_lock:
            timers = list(self._timers)
        for t in timers:
            t.join(max(0.0, deadline - time.monotonic()))

    # ---- heal --------------------------------------------------------------------
    def heal(self) -> None:
        """Undo every fault in force; raises HealError naming the steps that failed."""
        failures = list(self.errors)
        self.errors.clear()
        self._cancel.set()
        try:
            self.wait_scheduled()
        finally:
            with self._timers_lock:
                self._timers = [t for t in self._timers if t.is_alive()]
                self._cancel.clear()
        if self._timers:
            failures.append("a scheduled fault did not finish in time")
        steps: Sequence[tuple[str, Callable[[], None]]] = (
            ("proxy", self.proxy.reset),
            ("replicas", lambda: self.replicas.scale(1)),
            ("receiver", self.ensure_running),
        )
        for name, step in steps:
            try:
                step()
            except (ChaosError, OSError, TimeoutError) as exc:
                failures.append(f"{name}: {exc}")
        self._record("heal", "; ".join(failures))
        if failures:
            raise HealError(failures)


def _fill(template: str | Sequence[str], port: int) -> list[str]:
    argv = shlex.split(template) if isinstance(template, str) else list(template)
    return [a.replace("{port}", str(port)) for a in argv]


def _with_port(env: Mapping[str, str] | None, port: int) -> dict[str, str]:
    """`env` with ``PORT`` the receiver's `port` (hookproof's value wins: a replica's port is its own)."""
    return {**(env or {}), "PORT": str(port)}


def process_factory(command: str | Sequence[str], *, health_path: str | None = "/healthz",
                    env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
                    startup_timeout_s: float = 30.0, masked: Sequence[str] = (),
                    log: ReceiverLog | None = None) -> ReceiverFactory:
    """Receivers as local processes: `command` with ``{port}`` filled in and ``PORT`` set to
    the same port in the environment (over `env`'s: each copy listens on its own); their
    output goes to `log` (the run's, kept in its report folder) when given."""
    def make(port: int) -> Controllable:
        health = f"http://127.0.0.1:{port}{health_path}" if health_path else None
        return ReceiverProcess(_fill(command, port), env=_with_port(env, port), cwd=str(cwd) if cwd else None, health_url=health,
                               port=port, startup_timeout_s=startup_timeout_s, masked=masked, log=log)
    return make


def docker_factory(client: Any, image: str, command: str | Sequence[str], *, health_path: str | None = "/healthz",
                   volumes: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None,
                   startup_timeout_s: float = 60.0, masked: Sequence[str] = ()) -> ReceiverFactory:
    """Receivers as containers of `image` on the host network: `command` with ``{port}``
    filled in, ``PORT`` set to it in the container's environment."""
    from hookproof.chaos.docker import ReceiverContainer

    def make(port: int) -> Controllable:
        health = f"http://127.0.0.1:{port}{health_path}" if health_path else None
        return ReceiverContainer(client, image, _fill(command, port), port=port, health_url=health, volumes=volumes,
                                 env=_with_port(env, port), startup_timeout_s=startup_timeout_s, masked=masked)
    return make


__all__ = ["Nemesis", "docker_factory", "process_factory"]
