"""``[chaos] ports``: on a machine or CI runner that assigns a run its ports, the fault
proxy, every replica and the receiver's own ``{port}`` stay inside the range."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from hookproof.chaos.nemesis import Nemesis, process_factory
from hookproof.config import load_config
from hookproof.errors import ConfigError
from hookproof.simulator.serving import ListenError, PortRange
from tests.support import free_port

#: Listens on the port it is given until killed (a receiver that only accepts connections).
LISTENER = ("import socket, sys, time; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
            "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); time.sleep(120)")


def _free_block(size: int, start: int = 20000) -> int:
    """The first port of `size` consecutive ports free now from `start` (above the usual
    ephemeral churn)."""
    for first in range(start, start + 10000, size):
        try:
            socks = []
            for port in range(first, first + size):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
        return first
    raise RuntimeError("no free block of ports")


def test_a_range_hands_out_each_free_port_once_and_says_when_it_is_spent() -> None:
    first = _free_block(4)
    busy = socket.socket()
    busy.bind(("127.0.0.1", first + 1))
    try:
        ports = PortRange(first, first + 3, exclude={first + 2})
        assert [ports.take(), ports.take()] == [first, first + 3]  # first+1 is bound, first+2 excluded
        with pytest.raises(ListenError) as caught:
            ports.take()
        assert str(caught.value) == (f"no free port left in {first}-{first + 3} ([chaos] ports): widen the range or "
                                     "free some of its ports")
    finally:
        busy.close()


def test_the_proxy_and_every_replica_listen_inside_the_range() -> None:
    first = _free_block(6)
    receiver = free_port()
    make = process_factory([sys.executable, "-c", LISTENER, "{port}"], health_path=None, startup_timeout_s=20)
    ports = PortRange(first, first + 5, exclude={receiver})
    with Nemesis(make, receiver, ports=ports) as nemesis:
        nemesis.replicas.scale(3)
        used = [nemesis.proxy.port, *(r.port for r in nemesis.replicas.extra)]
        assert len(set(used)) == 3 and all(first <= p <= first + 5 for p in used), used
        nemesis.replicas.scale(1)


def _config(tmp_path: Path, ports: str) -> Path:
    path = tmp_path / "hookproof.toml"
    path.write_text('[target]\nurl = "http://127.0.0.1:{port}/webhooks"\nsecret = "whsec_x"\n'
                    '[target.process]\ncommand = "python -m app --port {port}"\n'
                    '[observer]\nkind = "sql"\nurl = "sqlite:///x.db"\neffects = "SELECT business_key FROM effects"\n'
                    f"[chaos]\nreplicas = 3\nports = {ports}\n", encoding="utf-8")
    return path


def test_a_range_too_small_or_out_of_bounds_is_one_config_error(tmp_path: Path) -> None:
    """A range of 3 was refused as "hold 3 port(s); chaos needs ... 3 in all" even for a run
    without --chaos, which takes 2. A range is refused only when it holds fewer ports than
    the run takes, naming how many and what for; one holding exactly as many is accepted."""
    from hookproof.certify import check_chaos

    path = _config(tmp_path, "[18150, 18150]")
    with pytest.raises(ConfigError) as small:
        load_config(path)
    assert str(small.value) == (
        f"{path}:12: chaos.ports: ports 18150-18150 hold 1 port(s); this run needs 2: 1 for the receiver's {{port}} "
        "in target.url, 1 for the provider API and effect sink ([provider] port names none) (widen the range)")
    plain = load_config(_config(tmp_path, "[18150, 18151]"))  # exactly the 2 a run without --chaos takes
    assert plain.chaos.ports == (18150, 18151)
    check_chaos(plain, False)
    with pytest.raises(ConfigError) as chaos:
        check_chaos(load_config(_config(tmp_path, "[18150, 18153]")), True)
    assert (chaos.value.field, chaos.value.message) == ("chaos.ports", (
        "ports 18150-18153 hold 4 port(s); this run with --chaos needs 5: 1 for the receiver's {port} in "
        "target.url, 1 for the provider API and effect sink ([provider] port names none), 1 for the fault proxy, "
        "2 for the replicas beyond the first ([chaos] replicas = 3) (widen the range)"))
    check_chaos(load_config(_config(tmp_path, "[18150, 18154]")), True)  # exactly the 5 --chaos takes
    with pytest.raises(ConfigError) as low:
        load_config(_config(tmp_path, "[80, 90]"))
    assert "1024 <= first <= last <= 65535" in str(low.value)
    config = load_config(_config(tmp_path, "[18150, 18199]"))
    assert config.chaos.ports == (18150, 18199)


def test_the_receiver_s_own_port_comes_from_the_range(tmp_path: Path) -> None:
    from hookproof.certify import with_port

    first = _free_block(5)
    config = with_port(load_config(_config(tmp_path, f"[{first}, {first + 4}]")))
    assert config.target.url == f"http://127.0.0.1:{first}/webhooks"


def test_the_receiver_never_gets_the_provider_api_s_port_named_inside_the_range(tmp_path: Path) -> None:
    """A user naming `[provider] port` inside `[chaos] ports` had it handed to the receiver
    as `{port}` (the provider API binds it only after the receiver's port is picked): the run
    was refused as if another run held the port. The receiver's port now skips it (the fault
    proxy's and the replicas' ports follow the same rule)."""
    from hookproof.certify import with_port

    first = _free_block(5, start=25000)
    config = load_config(_config(tmp_path, f"[{first}, {first + 4}]"))
    pinned = config.model_copy(update={"provider": config.provider.model_copy(update={"port": first})})
    assert with_port(pinned).target.url == f"http://127.0.0.1:{first + 1}/webhooks"


def test_the_provider_api_listens_inside_the_range_unless_its_port_is_set(tmp_path: Path) -> None:
    """A user given ports 19400-19499 found the provider API and effect sink on any free port
    (`[provider] port = 0`) outside them. With `[chaos] ports` it now takes one of the range,
    never the receiver's (taken but not bound yet); `[provider] port` still wins."""
    import httpx

    from hookproof.certify import provider_server, with_port

    first = _free_block(5, start=30000)
    config = with_port(load_config(_config(tmp_path, f"[{first}, {first + 4}]")))
    with provider_server(config) as server:
        port = int(server.api_base.rsplit(":", 1)[1].split("/")[0])
        server.ready()
        assert httpx.get(f"{server.api_base}/v1/customers/cus_none", timeout=10).status_code == 401
    assert first < port <= first + 4 and f":{port}/" not in config.target.url
    fixed = free_port()
    pinned = config.model_copy(update={"provider": config.provider.model_copy(update={"port": fixed})})
    with provider_server(pinned) as server:
        assert server.api_base.startswith(f"http://127.0.0.1:{fixed}")


#: Takes the first port of the range in a process of its own and holds it (a concurrent run).
_OTHER_RUN = ("import sys, time; from hookproof.simulator.serving import PortRange; "
              "print(PortRange(int(sys.argv[1]), int(sys.argv[1]) + 3).take(), flush=True); time.sleep(60)")


def test_two_runs_given_one_range_never_take_the_same_port() -> None:
    """Two certify runs started 2 s apart with one `[chaos] ports` range both took its first
    port: the second run's receiver could not bind, and the first run's receiver answered the
    second run's health check and deliveries (its results printed as the second's). A port
    another hookproof process took is now skipped while that process lives."""
    import subprocess

    first = _free_block(4, start=40000)  # ports no other test of this process took (it holds those)
    other = subprocess.Popen([sys.executable, "-c", _OTHER_RUN, str(first)], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None and int(other.stdout.readline()) == first  # taken, not yet bound
        assert PortRange(first, first + 3).take() == first + 1
    finally:
        other.kill()
        other.wait()


def test_a_receiver_whose_port_already_answers_is_refused_before_it_starts(tmp_path: Path) -> None:
    """Whatever listens on the receiver's port before it starts (another run's receiver, one
    left running) would be certified in its place: the start is refused, naming the port."""
    from hookproof.chaos.errors import ProcessError
    from hookproof.chaos.process import ReceiverProcess

    port = free_port()
    busy = socket.socket()
    busy.bind(("127.0.0.1", port))
    busy.listen()
    try:
        receiver = ReceiverProcess([sys.executable, "-c", LISTENER, str(port)], port=port, startup_timeout_s=10)
        with pytest.raises(ProcessError) as caught:
            receiver.start()
        assert str(caught.value).startswith(f"port {port} already has a listener before the receiver started")
        assert receiver.pid is None  # nothing was started
        receiver.close()
    finally:
        busy.close()
