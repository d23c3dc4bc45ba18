"""Run a receiver in a container and fault it: kill, pause/unpause, restart, logs.

The same operations as `chaos.process.ReceiverProcess`, through the docker SDK. The
container uses the host network (the daemon here runs without a bridge), so the
receiver listens on 127.0.0.1 like a process would, and a bind-mounted host directory
lets the host's SQL observer read its SQLite file.

`kill` sends SIGKILL to the container's init process from the host (the daemon's own
kill takes ~100 ms, long enough for a receiver to finish what the fault must
interrupt), then lets docker confirm. `pause` uses the cgroup freezer (the frozen
process cannot see it). Every docker exception is translated to `ContainerError` in
`_call`, the one boundary with the SDK. Exiting the context manager always unpauses
and removes the container.
"""

from __future__ import annotations

import functools
import os
import signal
import time
import uuid
from typing import Any, Callable, Mapping, Sequence, TypeVar

from hookproof.chaos.errors import ContainerError, ProcessError
from hookproof.chaos.process import wait_healthy
from hookproof.simulator.secret_forms import Masker

T = TypeVar("T")

#: Label on every container hookproof starts (to find leftovers).
LABEL = "org.hookproof.chaos"


def _call(operation: str, name: str, fn: Callable[[], T]) -> T:
    """Run one SDK call; docker and transport errors become ContainerError."""
    import docker.errors
    import requests.exceptions

    try:
        return fn()
    except docker.errors.ImageNotFound as exc:
        raise ContainerError(f"{operation} {name}: image not found ({exc.explanation})", operation=operation,
                             container=name) from exc
    except docker.errors.NotFound as exc:
        raise ContainerError(f"{operation} {name}: no such container ({exc.explanation})", operation=operation,
                             container=name) from exc
    except docker.errors.APIError as exc:
        raise ContainerError(f"{operation} {name}: the daemon refused: {exc.explanation or exc}",
                             operation=operation, container=name) from exc
    except docker.errors.DockerException as exc:
        raise ContainerError(f"{operation} {name}: {exc}", operation=operation, container=name) from exc
    except requests.exceptions.RequestException as exc:
        raise ContainerError(f"{operation} {name}: the daemon did not answer: {exc}", operation=operation,
                             container=name) from exc


class ReceiverContainer:
    """A receiver running in a container with host networking.

    Args:
        client: a docker SDK client (``docker.from_env()``).
        image: the image (e.g. ``hookproof/receivers:latest``).
        command: the argv to run inside it.
        port: the port the receiver listens on (host network).
        health_url: a URL answering 2xx when ready (default: the port accepts).
        volumes: host directory -> directory in the container (read-write).
        env: environment variables.
        startup_timeout_s: seconds to wait for health after each start.
        masked: strings to mask in messages (secrets in the command).
        name: container name (default: ``hookproof-<random>``).
    """

    def __init__(self, client: Any, image: str, command: Sequence[str], *, port: int | None = None,
                 health_url: str | None = None, volumes: Mapping[str, str] | None = None,
                 env: Mapping[str, str] | None = None, startup_timeout_s: float = 30.0, masked: Sequence[str] = (),
                 name: str | None = None) -> None:
        self.client = client
        self.image = image
        self.command = list(command)
        self.port = port
        self.health_url = health_url
        self.volumes = dict(volumes or {})
        self.env = dict(env or {})
        self.startup_timeout_s = startup_timeout_s
        self.name = name or f"hookproof-{uuid.uuid4().hex[:10]}"
        self._mask = Masker(masked)
        self._container: Any = None
        self.paused = False

    def __repr__(self) -> str:
        return f"ReceiverContainer({self.name!r}, image={self.image!r}, port={self.port})"

    def describe(self) -> str:
        """Image and command with secrets masked."""
        text = f"{self.image} {' '.join(self.command)}"
        return f"container {self.name}: {self._mask(text)}"

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the container's output (empty when unavailable)."""
        if self._container is None:
            return ""
        try:
            text = self._container.logs(tail=lines).decode("utf-8", "replace")
        except Exception:  # logs are diagnostics: never mask the real error with a logging one
            return ""
        return self._mask(text)

    def _status(self) -> str:
        if self._container is None:
            return "absent"
        try:
            _call("inspect", self.name, self._container.reload)
        except ContainerError:
            return "absent"
        return str(self._container.status)

    def running(self) -> bool:
        """True while the container runs (paused counts as running)."""
        return self._status() in ("running", "paused")

    def start(self) -> None:
        """Run (or start again after a kill) and wait healthy. Raises ContainerError."""
        if self._container is None:
            volumes = {host: {"bind": inside, "mode": "rw"} for host, inside in self.volumes.items()}
            self._container = _call("run", self.name, lambda: self.client.containers.run(
                self.image, self.command, detach=True, network_mode="host", volumes=volumes,
                environment=self.env, name=self.name, labels={LABEL: "1"}))
        else:
            _call("start", self.name, self._container.start)
        self.paused = False
        try:
            wait_healthy(health_url=self.health_url, port=self.port, timeout_s=self.startup_timeout_s,
                         alive=lambda: self._status() in ("running", "created", "restarting"))
        except (TimeoutError, ProcessError) as exc:
            tail = self.log_tail()
            self.remove()
            raise ContainerError(f"the receiver did not become healthy: {exc}: {self.describe()}",
                                 operation="start", container=self.name, log_tail=tail) from None

    def _host_pid(self) -> int | None:
        try:
            _call("inspect", self.name, self._container.reload)
        except ContainerError:
            return None
        pid = int(self._container.attrs.get("State", {}).get("Pid") or 0)
        return pid or None

    def kill(self) -> None:
        """SIGKILL the receiver now and wait (bounded) until docker sees it exited."""
        if self._container is None:
            return
        if self.paused:
            self.resume()  # a frozen task still dies on SIGKILL, but docker refuses to kill a paused container
        pid = self._host_pid()
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pid = None
        if pid is None and self._status() == "running":
            _call("kill", self.name, self._container.kill)
        deadline = time.monotonic() + 10.0
        while self._status() in ("running", "restarting") and time.monotonic() < deadline:
            time.sleep(0.01)

    def pause(self) -> None:
        """Freeze the container (cgroup freezer)."""
        if self._container is not None and not self.paused:
            _call("pause", self.name, self._container.pause)
            self.paused = True

    def resume(self) -> None:
        """Unfreeze the container."""
        if self._container is not None and self._status() == "paused":
            _call("unpause", self.name, self._container.unpause)
        self.paused = False

    def restart(self) -> None:
        """Kill, then start again and wait healthy."""
        self.kill()
        self.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Heal (unpause), stop and remove the container. Safe to call twice."""
        if self._container is None:
            return
        try:
            if self._status() == "paused":
                _call("unpause", self.name, self._container.unpause)
            self.paused = False
            if self._status() == "running":
                _call("stop", self.name, lambda: self._container.stop(timeout=int(timeout_s)))
        finally:
            self.remove()

    def remove(self) -> None:
        """Remove the container (forced); no-op when gone."""
        container, self._container = self._container, None
        self.paused = False
        if container is not None:
            try:
                _call("remove", self.name, lambda: container.remove(force=True))
            except ContainerError as exc:
                if "no such container" not in str(exc):
                    raise

    def __enter__(self) -> "ReceiverContainer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def remove_leftovers(client: Any) -> list[str]:
    """Remove every container hookproof labelled (after a hard crash); returns their names."""
    names = []
    for c in _call("list", "leftovers", lambda: client.containers.list(all=True, filters={"label": LABEL})):
        names.append(c.name)
        _call("remove", c.name, functools.partial(c.remove, force=True))
    return names


__all__ = ["LABEL", "ReceiverContainer", "remove_leftovers"]
