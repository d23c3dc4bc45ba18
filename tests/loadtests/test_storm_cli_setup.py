"""`hookproof storm` and `storm-worker` before the storm: Locust missing is one line before
anything starts, a worker waits for its master visibly and for a bounded time, and a
master waiting for workers on other machines listens on 127.0.0.1 unless told otherwise.

Every command runs in a subprocess: Locust (and gevent's monkey-patching) never enters
the pytest process.
"""

from __future__ import annotations

import re
import socket
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from hookproof.commands.storm import LOCUST_MISSING
from hookproof.commands.storm_worker import wait_for_master
from tests.hostile.harness import run_hookproof
from tests.loadtests.test_storm_command import SECRET, _config
from tests.support import free_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_locust(tmp_path: Path) -> dict[str, str]:
    """An environment in which ``import locust`` fails, as without the load extra."""
    shim = tmp_path / "shim" / "locust"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text('raise ImportError("No module named \'locust\'")\n', encoding="utf-8")
    return {"PYTHONPATH": f"{shim.parent}:{ROOT}", "HOOKPROOF_TEST_SECRET": SECRET}


def test_a_storm_without_locust_says_how_to_install_it_before_starting_anything(
        tmp_path: Path, no_locust: dict[str, str]) -> None:
    config = _config(tmp_path, "inbox_sync")
    run = run_hookproof("storm", "-c", str(config), "--out", str(tmp_path / "out"), "--duration", "5s",
                        env=no_locust, timeout_s=60)
    assert (run.returncode, run.stdout) == (2, ""), run
    assert run.stderr.splitlines() == [f"hookproof: {LOCUST_MISSING} (ImportError: No module named 'locust')"]
    assert LOCUST_MISSING == ("storms need Locust, which hookproof installs with its load extra: "
                              "pip install 'hookproof[load]'")
    assert not (tmp_path / "out").exists() and not (tmp_path / "inbox_sync.sqlite").exists()  # nothing started


def test_a_storm_worker_without_locust_says_the_same(no_locust: dict[str, str]) -> None:
    run = run_hookproof("storm-worker", "--master-host", "127.0.0.1", env=no_locust, timeout_s=60)
    assert (run.returncode, run.stdout) == (2, ""), run
    assert run.stderr.splitlines() == [f"hookproof: {LOCUST_MISSING} (ImportError: No module named 'locust')"]


def test_a_worker_with_no_master_says_where_it_waits_beats_and_gives_up(tmp_path: Path) -> None:
    port = free_port()
    run = run_hookproof("storm-worker", "--master-host", "127.0.0.1", "--master-port", str(port),
                        "--master-timeout", "3s", env={"HOOKPROOF_HEARTBEAT_S": "1"}, timeout_s=60)
    assert (run.returncode, run.stdout) == (1, ""), run
    lines = run.stderr.splitlines()
    where = f"127.0.0.1:{port}"
    assert lines[0] == f"storm-worker: waiting for the master at {where} (up to 3 s, --master-timeout)"
    beats = lines[1:-1]
    assert len(beats) >= 2 and all(re.fullmatch(rf"storm-worker: waiting for the master at {re.escape(where)}, "
                                                r"[0-9]+ s", b) for b in beats), lines
    assert lines[-1] == (f"hookproof: no master listened at {where} within 3 s (--master-timeout): start "
                         "'hookproof storm --workers-expected N --master-bind-host ADDRESS' there first, ADDRESS "
                         "being one this machine reaches it at")
    assert run.elapsed_s < 20


def test_a_running_worker_beats_until_it_is_stopped(tmp_path: Path) -> None:
    """Once its master's port accepts, the worker runs Locust and says every few seconds that it
    still runs (here the port is a plain socket that never speaks Locust's protocol; SIGTERM ends it)."""
    import signal

    with socket.socket() as master:
        master.bind(("127.0.0.1", 0))
        master.listen(8)
        port = master.getsockname()[1]

        def stop_later(proc: subprocess.Popen[bytes]) -> None:
            time.sleep(8)
            proc.send_signal(signal.SIGTERM)

        run = run_hookproof("storm-worker", "--master-host", "127.0.0.1", "--master-port", str(port),
                            env={"HOOKPROOF_HEARTBEAT_S": "1"}, timeout_s=60, during=stop_later)
    where = f"127.0.0.1:{port}"
    assert run.returncode == 143, run
    lines = [line for line in run.stderr.splitlines() if line.startswith("storm-worker: ")]
    assert lines[:2] == [f"storm-worker: waiting for the master at {where} (up to 300 s, --master-timeout)",
                         f"storm-worker: the master at {where} is up; starting the worker"], run
    beats = lines[2:]
    assert len(beats) >= 3 and all(re.fullmatch(rf"storm-worker: the worker runs for the master at "
                                                rf"{re.escape(where)}, [0-9]+ s", b) for b in beats), run


def test_a_worker_whose_master_goes_silent_stops_at_its_max_duration() -> None:
    """A master that accepts the worker's connection and then says nothing (a plain socket, never
    Locust's protocol): the worker runs Locust, beats, and at --max-duration stops its Locust
    child, says why in one line and exits 1, not waiting on Locust's own heartbeat timeout."""
    with socket.socket() as master:
        master.bind(("127.0.0.1", 0))
        master.listen(8)
        port = master.getsockname()[1]
        children: list[psutil.Process] = []

        def watch(proc: subprocess.Popen[bytes]) -> None:  # the Locust worker the command starts
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not children:
                try:
                    children.extend(psutil.Process(proc.pid).children(recursive=True))
                except psutil.NoSuchProcess:
                    return
                time.sleep(0.1)

        run = run_hookproof("storm-worker", "--master-host", "127.0.0.1", "--master-port", str(port),
                            "--max-duration", "6s", env={"HOOKPROOF_HEARTBEAT_S": "1"}, timeout_s=60, during=watch)
    where = f"127.0.0.1:{port}"
    assert (run.returncode, run.stdout, run.killed) == (1, "", False), run
    lines = run.stderr.splitlines()
    assert [line for line in lines if line.startswith("storm-worker: ")][:2] == [
        f"storm-worker: waiting for the master at {where} (up to 300 s, --master-timeout)",
        f"storm-worker: the master at {where} is up; starting the worker"], run
    assert lines[-1] == (f"hookproof: the storm worker stopped at its --max-duration (6 s): the master at {where} had "
                         "not ended its storm by then (a longer storm needs a longer --max-duration; a silent master "
                         "is ended here)"), run
    assert children and not any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children), children


def test_a_worker_s_max_duration_bounds_its_wait_for_the_master_too() -> None:
    port = free_port()
    run = run_hookproof("storm-worker", "--master-host", "127.0.0.1", "--master-port", str(port),
                        "--max-duration", "2s", timeout_s=60)
    assert (run.returncode, run.stderr.splitlines()[-1]) == (
        1, f"hookproof: the storm worker stopped at its --max-duration (2 s): no master listened at 127.0.0.1:{port} "
           "by then"), run


def test_a_worker_with_a_bad_master_timeout_or_host_is_one_line() -> None:
    run = run_hookproof("storm-worker", "--master-host", "127.0.0.1", "--master-timeout", "soon", timeout_s=60)
    assert (run.returncode, run.stderr.splitlines()) == (
        2, ["hookproof: --master-timeout: cannot read 'soon' (use e.g. 60s, 2m, 1h30m)"])
    run = run_hookproof("storm-worker", "--master-host", "127.0.0.1", "--max-duration", "later", timeout_s=60)
    assert (run.returncode, run.stderr.splitlines()) == (
        2, ["hookproof: --max-duration: cannot read 'later' (use e.g. 60s, 2m, 1h30m)"])
    run = run_hookproof("storm-worker", "--master-host", "no-such-host.invalid", "--master-timeout", "2s",
                        timeout_s=60)
    assert run.returncode == 2 and run.stderr.splitlines()[-1] == \
        "hookproof: --master-host: cannot resolve 'no-such-host.invalid'"


def test_waiting_for_a_master_ends_once_its_port_accepts() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        beats: list[float] = []
        started = time.monotonic()
        assert wait_for_master("127.0.0.1", listener.getsockname()[1], 10.0, beats.append, interval_s=1.0)
        assert time.monotonic() - started < 5 and beats == []


def _listening(pid: int, port: int) -> str | None:
    """The address a process of `pid`'s tree listens on at `port`, if any."""
    try:
        procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return None
    for proc in procs:
        try:
            for conn in proc.net_connections(kind="tcp"):
                if conn.status == psutil.CONN_LISTEN and conn.laddr.port == port:
                    return str(conn.laddr.ip)
        except psutil.Error:
            continue
    return None


def test_a_master_for_other_machines_listens_on_loopback_unless_told(tmp_path: Path) -> None:
    config = _config(tmp_path, "inbox_sync")
    port = free_port()
    seen: list[str] = []

    def watch(proc: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and not seen:
            address = _listening(proc.pid, port)
            if address is not None:
                seen.append(address)
            time.sleep(0.1)

    run = run_hookproof("storm", "-c", str(config), "--out", str(tmp_path / "out"), "--duration", "5s",
                        "--workers-expected", "1", "--master-bind-port", str(port), "--workers-timeout", "4s",
                        env={"HOOKPROOF_TEST_SECRET": SECRET}, during=watch, timeout_s=180)
    assert seen == ["127.0.0.1"], run
    assert (f"waiting 4 s for 1 worker(s); workers started already (docker compose's) connect on their own; "
            "otherwise the master listens on 127.0.0.1 only, so run them on this machine (for "
            "workers on other machines, give --master-bind-host this machine's address); run:\n"
            f"  hookproof storm-worker --master-host 127.0.0.1 --master-port {port}\n") in run.stderr
    assert run.returncode == 2 and run.stderr.splitlines()[-1].startswith(
        "hookproof: only 0 of 1 worker(s) connected within 4 s (--workers-timeout); Locust logs in "), run


def test_a_master_that_gives_up_on_its_workers_says_how_many_connected(tmp_path: Path) -> None:
    config = _config(tmp_path, "inbox_sync")
    port = free_port()
    workers: list[subprocess.Popen[bytes]] = []

    def one_worker(proc: subprocess.Popen[bytes]) -> None:
        # one of the two expected workers connects (it waits for the master's port itself)
        workers.append(subprocess.Popen(["hookproof", "storm-worker", "--master-host", "127.0.0.1",
                                         "--master-port", str(port), "--master-timeout", "60s"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    try:
        run = run_hookproof("storm", "-c", str(config), "--out", str(tmp_path / "out"), "--duration", "5s",
                            "--workers-expected", "2", "--master-bind-port", str(port), "--workers-timeout", "25s",
                            env={"HOOKPROOF_TEST_SECRET": SECRET}, during=one_worker, timeout_s=180)
    finally:
        for worker in workers:
            worker.kill()
            worker.wait(30)
    assert run.returncode == 2 and run.stderr.splitlines()[-1].startswith(
        "hookproof: only 1 of 2 worker(s) connected within 25 s (--workers-timeout); Locust logs in "), run


def test_the_help_says_how_to_expose_the_master() -> None:
    run = run_hookproof("storm", "--help", env={"COLUMNS": "300"}, timeout_s=60)
    text = " ".join(run.stdout.split())
    assert "default: 127.0.0.1, so only workers on this machine can connect" in text
    assert "give this machine's address on a private network (or 0.0.0.0 for every interface)" in text
