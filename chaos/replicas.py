"""N copies of a receiver behind a round-robin fault proxy, sharing one database.

State a receiver keeps in process memory (a dedupe set, a queue) is per replica: a
retry that lands on another replica does not see it. `Replicas` starts the copies on
free ports (concurrently, so N replicas cost about one start), points the proxy at all
of them, and on `scale(1)`/`stop()` stops the extra ones and points the proxy back at
the first. The first replica may be one the caller owns (`primary`): it is never
stopped here.
"""

from __future__ import annotations

import threading
from typing import Callable, Protocol, Sequence

from hookproof.chaos.proxy import FaultProxy
from hookproof.simulator.serving import free_port


class Controllable(Protocol):
    """What the fault injectors need of a receiver (process or container)."""

    port: int | None
    paused: bool

    def start(self) -> None: ...
    def kill(self) -> None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def stop(self, timeout_s: float = 5.0) -> None: ...
    def running(self) -> bool: ...
    def describe(self) -> str: ...
    def log_tail(self, lines: int = 20) -> str: ...


#: Makes a receiver listening on the given port (not started).
ReceiverFactory = Callable[[int], Controllable]


class Replicas:
    """Replicas of one receiver behind `proxy` (round-robin per connection).

    Args:
        make: builds a receiver for a port.
        proxy: the proxy in front (a new one on a free port when None).
        primary: an already running replica owned by the caller (replica 0).
        ports: where each new replica's port comes from (default: any free port).
    """

    def __init__(self, make: ReceiverFactory, *, proxy: FaultProxy | None = None,
                 primary: Controllable | None = None, ports: Callable[[], int] = free_port) -> None:
        self.make = make
        self.primary = primary
        self._port = ports
        self._own_proxy = proxy is None
        self.proxy = proxy or FaultProxy(("127.0.0.1", primary.port or 0) if primary else ("127.0.0.1", 1))
        self.extra: list[Controllable] = []

    @property
    def members(self) -> list[Controllable]:
        """Every replica, the primary first."""
        return ([self.primary] if self.primary else []) + list(self.extra)

    def scale(self, count: int) -> None:
        """Run `count` replicas in all (starting or stopping extra ones)."""
        if count < 1:
            raise ValueError(f"at least one replica, got {count}")
        want_extra = count - (1 if self.primary else 0)
        while len(self.extra) > want_extra:
            self.extra.pop().stop()
        started = [self.make(self._port()) for _ in range(want_extra - len(self.extra))]
        errors: list[BaseException] = []

        def run(r: Controllable) -> None:
            try:
                r.start()
            except BaseException as exc:  # collected and re-raised in the caller's thread
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(r,), daemon=True) for r in started]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120.0)
        if errors:
            for r in started:
                r.stop()
            raise errors[0]
        self.extra.extend(started)
        self._route()

    def _route(self) -> None:
        ports = [r.port for r in self.members if r.port]
        if ports:
            self.proxy.set_upstreams([("127.0.0.1", p) for p in ports])

    def start(self, count: int) -> "Replicas":
        """Start the proxy (when owned) and `count` replicas."""
        if self._own_proxy:
            self.proxy.start()
        self.scale(count)
        return self

    def stop(self) -> None:
        """Stop every replica started here (and the proxy when owned); route to the primary."""
        failures: list[BaseException] = []
        while self.extra:
            try:
                self.extra.pop().stop()
            except Exception as exc:  # keep stopping the others, report the first
                failures.append(exc)
        if self.primary is not None:
            self._route()
        if self._own_proxy:
            self.proxy.stop()
        if failures:
            raise failures[0]

    def __enter__(self) -> "Replicas":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def describe(self) -> Sequence[str]:
        return [r.describe() for r in self.members]


__all__ = ["Controllable", "ReceiverFactory", "Replicas"]
