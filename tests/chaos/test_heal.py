"""Every fault heals, even when the scenario fails midway: no stopped process, no
paused container, no replica left behind; and the proxy's toxics work and heal."""

from __future__ import annotations

import socket
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from hookproof.chaos.nemesis import Nemesis, docker_factory, process_factory
from hookproof.chaos.proxy import FaultProxy, LimitData, Timeout
from hookproof.scenarios.catalog import ChaosContext, Phase, Plan, Scenario
from hookproof.scenarios.chaos import ChaosSettings
from hookproof.scenarios.observations import Observation
from hookproof.scenarios.runner import Runner
from hookproof.simulator.delivery import History, Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.serving import free_port
from tests.chaos.rig import REPO, SECRET


class Boom(Exception):
    """Raised by a scenario after it has paused the receiver."""


def _pause_then_raise(c: ChaosContext) -> None:
    c.nemesis.scale(2)
    c.nemesis.pause()
    c.nemesis.drop_answers(0, connections=None)
    raise Boom("the scenario failed after pausing")


BROKEN = Scenario("broken-after-pause", "pauses, then fails", "test", ("lost",), (),
                  lambda ctx, w: Plan(w, (Phase((), before=_pause_then_raise),)), tier="chaos")


def _runner(nemesis: Nemesis, history: History) -> Runner:
    return Runner(target=Target(url=f"http://127.0.0.1:{nemesis.port}/webhooks"), profile=get_profile("stripe"),
                  secrets=[SECRET], observe=lambda: Observation(0.0, (), ()), history=history, nemesis=nemesis,
                  chaos_settings=ChaosSettings())


def _proc_state(pid: int) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("State:"):
            return line.split()[1]
    return "?"


def _command(db: str) -> list[str]:
    return [sys.executable, "-m", "examples.receivers.inbox_sync", "--port", "{port}", "--db", db, "--secret", SECRET]


def test_a_failing_scenario_still_heals_a_paused_process(tmp_path: Path) -> None:
    history = History()
    make = process_factory(_command(f"sqlite:///{tmp_path / 'r.db'}"), cwd=REPO)
    with Nemesis(make, free_port(), history=history) as nemesis:
        report = _runner(nemesis, history).run_one(BROKEN, 0)
        assert report.verdict == "error" and "Boom" in (report.reason or "")
        pid = nemesis.receiver.pid  # type: ignore[attr-defined]
        assert nemesis.receiver.running() and not nemesis.receiver.paused
        assert _proc_state(pid) in ("S", "R")  # not T (stopped)
        assert nemesis.replicas.extra == [] and nemesis.proxy.toxics == []
        assert httpx.get(nemesis.proxy.url("/healthz"), timeout=5).status_code == 200
        ops = [o.op for o in history.ops("broken-after-pause")]
        assert ops[:3] == ["scale", "pause", "toxic"] and ops[-1] == "heal" and "resume" in ops
    assert not nemesis.receiver.running()
    assert not Path(f"/proc/{pid}").exists() or _proc_state(pid) == "Z"


def test_kill_and_restart_are_recorded_and_clean(tmp_path: Path) -> None:
    history = History()
    make = process_factory(_command(f"sqlite:///{tmp_path / 'r.db'}"), cwd=REPO)
    with Nemesis(make, free_port(), history=history) as nemesis:
        first = nemesis.receiver.pid  # type: ignore[attr-defined]
        nemesis.kill()
        assert not nemesis.receiver.running()
        nemesis.heal()
        assert nemesis.receiver.running() and nemesis.receiver.pid != first  # type: ignore[attr-defined]
    assert [o.op for o in history.ops()] == ["start", "kill", "start", "heal", "heal", "stop"]  # close() heals too


@pytest.mark.docker
def test_a_failing_scenario_still_heals_a_paused_container(tmp_path: Path, docker_client: Any,
                                                          receivers_image: str) -> None:
    history = History()
    command = _command("sqlite:////data/r.db")
    command[0] = "python"
    make = docker_factory(docker_client, receivers_image, command, volumes={str(tmp_path): "/data"})
    with Nemesis(make, free_port(), history=history, backend="docker") as nemesis:
        name = nemesis.receiver.name  # type: ignore[attr-defined]
        report = _runner(nemesis, history).run_one(BROKEN, 0)
        assert report.verdict == "error"
        assert docker_client.containers.get(name).status == "running"
        assert nemesis.replicas.extra == []
        assert httpx.get(nemesis.proxy.url("/healthz"), timeout=5).status_code == 200
    assert docker_client.containers.list(all=True, filters={"name": name}) == []


def _echo_server() -> tuple[socket.socket, int]:
    server = socket.create_server(("127.0.0.1", 0))
    return server, server.getsockname()[1]


def test_proxy_black_hole_and_cut_answer_then_heal(tmp_path: Path) -> None:
    history = History()
    make = process_factory(_command(f"sqlite:///{tmp_path / 'r.db'}"), cwd=REPO)
    with Nemesis(make, free_port(), history=history) as nemesis:
        url = nemesis.proxy.url("/healthz")
        nemesis.add_toxic(Timeout(stream="upstream", timeout_ms=0))
        with pytest.raises(httpx.ReadTimeout):
            httpx.get(url, timeout=0.3)
        nemesis.heal()
        assert httpx.get(url, timeout=5).status_code == 200
        nemesis.drop_answers(12, connections=1)
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.get(url, timeout=5)
        assert httpx.get(url, timeout=5).status_code == 200  # the toxic was for one connection


def test_proxy_round_robin_and_answer_tap() -> None:
    seen: list[int] = []
    with FaultProxy(("127.0.0.1", 1)) as proxy:
        servers = [_echo_server() for _ in range(2)]
        try:
            proxy.set_upstreams([("127.0.0.1", port) for _, port in servers])
            proxy.on_response(seen.append, times=None)
            for i in range(2):
                client = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
                conn, _ = servers[i][0].accept()  # round-robin: connection i reaches server i
                conn.settimeout(5)
                client.sendall(b"GET / HTTP/1.1\r\n\r\n")
                assert conn.recv(100).startswith(b"GET")
                conn.sendall(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
                assert client.recv(100).startswith(b"HTTP/1.1 204")
                client.close()
                conn.close()
        finally:
            for s, _ in servers:
                s.close()
    assert seen == [204, 204]
    with pytest.raises(ValueError):
        LimitData(stream="sideways")  # type: ignore[arg-type]


def test_a_fault_scheduled_while_healing_never_breaks_the_heal(tmp_path: Path) -> None:
    """`later()` runs on delivery threads (crash-after-ack arms from the attempt that is
    acknowledged) while the scenario's heal joins the scheduled threads: a thread listed
    before it was started made heal raise "cannot join thread before it is started"."""
    history = History()
    make = process_factory(_command(f"sqlite:///{tmp_path / 'r.db'}"), cwd=REPO)
    with Nemesis(make, free_port(), history=history) as nemesis:
        fired: list[int] = []
        for i in range(200):
            arm = threading.Thread(target=nemesis.later, args=(0.0, lambda i=i: fired.append(i), "noop"))
            arm.start()
            nemesis.heal()  # raises HealError or RuntimeError on the race
            arm.join(5)
        nemesis.wait_scheduled()
        assert nemesis.errors == []
