"""A storm across machines: a Locust master, two `hookproof storm-worker`s and the receiver,
each on its own network, as a real cluster.

The test builds the cluster from network namespaces (``ip netns``, Debian's iproute2;
root only): a namespace holding a bridge, the receiver's namespace and the master's,
each joined to the bridge by a veth pair, and the workers in the root namespace, joined
by a third pair. The addresses are those of `SUBNET`, a private /24 that exists only
inside this machine's namespaces while the test runs: the only non-loopback addresses
any test sends to. Everything is torn down in ``finally``: the processes, then the
namespaces (which removes the veth pairs with them).

It asserts that the distributed storm's verdict, its per-worker totals and its checks
are those of a local storm (``--workers 2``) on the same seed, and that a loopback
target is refused when the workers cannot reach it. Under CI=true a machine that cannot
make namespaces fails the test (`tests.support.require_service`).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

from hookproof.simulator.delivery.history import load_history
from tests.support import free_port, require_service

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_storm_cluster_tests_only_0123"
#: The test subnet: private, and only ever configured inside the namespaces this test makes.
SUBNET = "10.231.7"
RECEIVER_IP, MASTER_IP, WORKERS_IP = f"{SUBNET}.2", f"{SUBNET}.3", f"{SUBNET}.4"
SEED = 4242
#: A storm whose per-worker totals do not depend on timing: every user's last intended
#: send is well before the end (4 users, 8 events/s: one send per user every 0.5 s), no
#: redelivery wave (its replays depend on when it starts), all users spawned at once.
STORM = ("--users", "4", "--spawn-rate", "100", "--rate", "8", "--duration", "6s", "--waves", "0",
         "--duplicates", "0.3", "--burst", "3")
ENV = {**os.environ, "HOOKPROOF_TEST_SECRET": SECRET, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
ENV.pop("HOOKPROOF_STORM_SECRETS", None)


def _ip(*args: str) -> None:
    """Run ``ip args``; raise CalledProcessError with its stderr."""
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=30)


class Cluster:
    """Three namespaces on a bridge (see the module docstring); `exec` prefixes a command
    to run it inside one of them."""

    def __init__(self) -> None:
        tag = secrets.token_hex(3)
        self.net, self.receiver, self.master = f"hpnet-{tag}", f"hprcv-{tag}", f"hpmst-{tag}"
        self.root_if = f"hpw{tag}"
        self.made: list[str] = []

    def up(self) -> None:
        for ns in (self.net, self.receiver, self.master):
            _ip("netns", "add", ns)
            self.made.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", self.net, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.net, "link", "set", "br0", "up")
        for i, (ns, addr) in enumerate(((self.receiver, RECEIVER_IP), (self.master, MASTER_IP))):
            _ip("link", "add", f"eth{i}", "netns", ns, "type", "veth", "peer", "name", f"port{i}", "netns", self.net)
            _ip("-n", self.net, "link", "set", f"port{i}", "master", "br0", "up")
            _ip("-n", ns, "addr", "add", f"{addr}/24", "dev", f"eth{i}")
            _ip("-n", ns, "link", "set", f"eth{i}", "up")
        # the workers' side: the root namespace, by a pair whose peer lives in the bridge's
        # namespace (deleting that namespace deletes the pair)
        _ip("link", "add", self.root_if, "type", "veth", "peer", "name", "port9", "netns", self.net)
        _ip("-n", self.net, "link", "set", "port9", "master", "br0", "up")
        _ip("addr", "add", f"{WORKERS_IP}/24", "dev", self.root_if)
        _ip("link", "set", self.root_if, "up")

    def down(self) -> None:
        for ns in reversed(self.made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        subprocess.run(["ip", "link", "del", self.root_if], capture_output=True, timeout=30)  # gone already, normally

    def exec(self, ns: str) -> list[str]:
        return ["ip", "netns", "exec", ns]


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    if sys.platform != "linux" or shutil.which("ip") is None:
        require_service("network namespaces", "the 'ip' command (Debian's iproute2) is not installed")
    if os.geteuid() != 0:
        require_service("network namespaces", "making them needs root")
    c = Cluster()
    try:
        try:
            c.up()
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            detail = getattr(exc, "stderr", "") or str(exc)
            require_service("network namespaces", f"'ip' could not build the test network: {detail.strip()}")
        yield c
    finally:
        c.down()


@contextmanager
def _process(argv: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Run `argv` (output in `log`); SIGTERM, then SIGKILL, when done."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, cwd=str(ROOT), env=ENV, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        try:
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def _receiver(prefix: list[str], host: str, port: int, db: Path, log: Path) -> Any:
    return _process([*prefix, sys.executable, "-m", "examples.receivers.inbox_sync", "--host", host, "--port",
                     str(port), "--db", f"sqlite:///{db}", "--secret", SECRET], log)


def _wait_healthy(prefix: list[str], url: str) -> None:
    """Poll `url` from the namespace of `prefix` until it answers 200 (at most 60 s)."""
    probe = ("import sys, urllib.request\n"
             "try:\n"
             f"    sys.exit(0 if urllib.request.urlopen({url!r}, timeout=2).status == 200 else 1)\n"
             "except OSError:\n"
             "    sys.exit(1)\n")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if prefix:
            ok = subprocess.run([*prefix, sys.executable, "-c", probe], capture_output=True, timeout=30).returncode == 0
        else:
            try:
                ok = urllib.request.urlopen(url, timeout=2).status == 200
            except OSError:
                ok = False
        if ok:
            return
        time.sleep(0.3)
    raise AssertionError(f"the receiver at {url} did not become healthy within 60 s")


def _config(tmp_path: Path, name: str, url: str, db: Path) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text("\n".join([
        "[target]", f'url = "{url}"', 'profile = "stripe"', 'secret = "env:HOOKPROOF_TEST_SECRET"', "",
        "[run]", f"seed = {SEED}", "",
        "[observer]", 'kind = "sql"', f'url = "sqlite:///{db}"',
        'effects = "SELECT business_key, amount FROM effects"',
        'state = "SELECT object_id, status, version FROM subscription_states"', "",
        "[settle]", "window_s = 0.5", "deadline_s = 30", "",
    ]), encoding="utf-8")
    return path


def _summary(out: Path) -> dict[str, Any]:
    """What must match between two storms on one seed: verdict, checks, totals."""
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (scenario,) = report["scenarios"]
    checks = {c["check_id"]: (c["verdict"], sorted(f["check_id"] for f in c["findings"] if f["severity"] == "finding"))
              for c in scenario["checks"]}
    latency = next(c["stats"] for c in scenario["checks"] if c["check_id"] == "ack_latency")
    history = load_history(out / "history.sqlite")
    try:
        workers = [(w["index"], w["attempts"]) for w in history.meta()["storm_workers"]]  # type: ignore[union-attr]
        attempts = len(history)
    finally:
        history.close()
    return {"verdict": report["verdict"], "partial": report["partial"], "checks": checks, "workers": workers,
            "sent": latency["sent"], "events": latency["events"], "attempts": attempts}


@pytest.mark.slow
def test_a_storm_across_namespaces_matches_a_local_storm(cluster: Cluster, tmp_path: Path) -> None:
    """The local storm runs beside the distributed one (each with its own receiver, port and
    database): its totals do not depend on timing (`STORM`), and two storms of 8 events/s
    leave the machine mostly idle."""
    local_port = free_port()
    local_db = tmp_path / "local.sqlite"
    local_out = tmp_path / "local-out"
    local_config = _config(tmp_path, "local", f"http://127.0.0.1:{local_port}/webhooks", local_db)

    def local_storm() -> subprocess.CompletedProcess[str]:
        with _receiver([], "127.0.0.1", local_port, local_db, tmp_path / "local-rcv.log"):
            _wait_healthy([], f"http://127.0.0.1:{local_port}/healthz")
            return subprocess.run([sys.executable, "-m", "hookproof", "storm", "--config", str(local_config), "--out",
                                   str(local_out), "--workers", "2", *STORM], cwd=str(ROOT), env=ENV,
                                  capture_output=True, text=True, timeout=300)

    with ThreadPoolExecutor(max_workers=1) as pool:
        local_run = pool.submit(local_storm)
        distributed = _distributed_storm(cluster, tmp_path)
        result = local_run.result()
    assert result.returncode == 0, result.stdout + result.stderr
    local = _summary(local_out)

    assert distributed == local
    assert distributed["verdict"] == "pass" and not distributed["partial"]
    assert [i for i, _ in distributed["workers"]] == [0, 1] and all(n > 0 for _, n in distributed["workers"])
    assert sum(n for _, n in distributed["workers"]) == distributed["attempts"] == distributed["sent"]


def _distributed_storm(cluster: Cluster, tmp_path: Path) -> dict[str, Any]:
    """The storm across the namespaces, checked as it ends; its `_summary`."""
    port = free_port()
    db = tmp_path / "cluster.sqlite"
    out = tmp_path / "cluster-out"
    config = _config(tmp_path, "cluster", f"http://{RECEIVER_IP}:{port}/webhooks", db)
    worker = [sys.executable, "-m", "hookproof", "storm-worker", "--master-host", MASTER_IP, "--master-port", "5557"]
    with ExitStack() as stack:
        stack.enter_context(_receiver(cluster.exec(cluster.receiver), RECEIVER_IP, port, db, tmp_path / "rcv.log"))
        _wait_healthy([], f"http://{RECEIVER_IP}:{port}/healthz")
        master = stack.enter_context(_process(
            [*cluster.exec(cluster.master), sys.executable, "-m", "hookproof", "storm", "--config", str(config),
             "--out", str(out), "--allow-remote", "--workers-expected", "2", "--master-bind-host", MASTER_IP,
             "--workers-timeout", "90s", *STORM], tmp_path / "master.log"))
        workers = [stack.enter_context(_process(worker, tmp_path / f"worker{i}.log")) for i in range(2)]
        master.wait(300)
        codes = [w.wait(60) for w in workers]
    master_log = (tmp_path / "master.log").read_text(errors="replace")
    assert master.returncode == 0, master_log
    assert codes == [0, 0], [(tmp_path / f"worker{i}.log").read_text(errors="replace")[-2000:] for i in range(2)]
    assert f"hookproof storm-worker --master-host {MASTER_IP} --master-port 5557" in master_log
    for log in [tmp_path / "master.log", *tmp_path.glob("worker*.log"), *(out / "locust").glob("*.log")]:
        assert SECRET not in log.read_text(encoding="utf-8", errors="replace")
    return _summary(out)


@pytest.mark.slow
def test_a_loopback_target_the_workers_cannot_reach_is_refused(cluster: Cluster, tmp_path: Path) -> None:
    """The master's receiver listens on the master's own loopback: the workers (another
    network) cannot reach it, say so, and the storm is refused in one line, exit 2."""
    port = free_port()
    db = tmp_path / "loop.sqlite"
    out = tmp_path / "out"
    config = _config(tmp_path, "loop", f"http://127.0.0.1:{port}/webhooks", db)
    in_master = cluster.exec(cluster.master)
    worker = [sys.executable, "-m", "hookproof", "storm-worker", "--master-host", MASTER_IP]
    with ExitStack() as stack:
        stack.enter_context(_receiver(in_master, "127.0.0.1", port, db, tmp_path / "rcv.log"))
        _wait_healthy(in_master, f"http://127.0.0.1:{port}/healthz")
        master = stack.enter_context(_process(
            [*in_master, sys.executable, "-m", "hookproof", "storm", "--config", str(config), "--out", str(out),
             "--workers-expected", "2", "--master-bind-host", MASTER_IP, "--workers-timeout", "90s", *STORM],
            tmp_path / "master.log"))
        workers = [stack.enter_context(_process(worker, tmp_path / f"worker{i}.log")) for i in range(2)]
        master.wait(300)
        codes = [w.wait(60) for w in workers]
    master_log = (tmp_path / "master.log").read_text(errors="replace")
    assert master.returncode == 2, master_log
    refusal = [line for line in master_log.splitlines() if line.startswith("hookproof: storm refused:")]
    assert len(refusal) == 1 and "cannot reach the target" in refusal[0] and f"127.0.0.1:{port}" in refusal[0]
    assert codes == [1, 1]
    assert not (out / "report.json").exists()
