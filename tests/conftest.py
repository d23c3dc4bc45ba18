"""Session services shared by the whole suite: PostgreSQL, docker, Chromium.

Every service fixture goes through ``require_service``: when the service is missing the
test is skipped locally and fails under ``CI=true`` (see tests/README.md).
"""

from __future__ import annotations

import ast
import os
import shutil
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import durations
from tests.support import PostgresServer, find_postgres_bin, require_service


def _serialise_ast_parse() -> None:
    """pytest rewrites the assertions of every module the hookproof distribution holds (it
    provides a pytest11 plugin) with `ast.parse` as each is first imported, and several are first
    imported in threads (the provider server's, side-by-side runs). Before CPython 3.11.8,
    `ast.parse` in two threads at once can raise "SystemError: AST constructor recursion depth
    mismatch" (python/cpython gh-106905): one lock keeps the parses apart."""
    if sys.version_info >= (3, 11, 8):
        return
    parse = ast.parse
    lock = threading.Lock()

    def parse_alone(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return parse(*args, **kwargs)

    ast.parse = parse_alone


_serialise_ast_parse()


@pytest.fixture(autouse=True)
def _fresh_zoo_apps() -> Iterator[None]:
    """Each test starts with fresh zoo apps: a run reusing an earlier test's seed would find the
    keys that test stored in the shared database (tests/hookproof/zoo_apps.py)."""
    yield
    zoo_apps = sys.modules.get("tests.hookproof.zoo_apps")
    if zoo_apps is not None:
        zoo_apps.reset()

# A test that uses one of these fixtures gets the matching marker, so `-m "not docker"`
# deselects it even if its module forgot `pytestmark`.
SERVICE_MARKERS = {"postgres_url": "postgres", "docker_client": "docker", "chromium_path": "chromium"}

#: Modules (``path``) and tests (``path::name``, every parameter) that get the `serial` marker:
#: CI (.ci/test) runs them alone, in one process, after the rest of the suite ran on two
#: workers. Their checks depend on how fast the machine answers (achieved storm rates, race
#: hit windows, elapsed-time bounds, deadlines and interrupts timed against a run, a sender
#: timeout a loaded machine nears) or they use machine-wide resources (network namespaces).
#: Every docker test is serial as well (one daemon, containers on the host network).
SERIAL_MODULES: dict[str, str] = {
    "tests/hookproof/test_explore_interrupt.py": "interrupts a search while it runs",
    "tests/hookproof/test_run_limits.py": "run deadlines and heartbeats",
    "tests/hookproof/test_send_explore_deadline.py": "run deadlines",
    "tests/hookproof/test_usability.py::test_send_interrupted_says_so_in_one_line": "interrupts a send",
    "tests/hookproof/test_usability.py::test_certify_on_a_terminal_shows_the_scenario_and_the_attempts_so_far":
        "a run deadline",
    "tests/hostile/test_interrupt.py": "interrupts runs against hostile servers",
    "tests/scenarios/test_observers.py::test_settle_over_http_stable_and_moving": "an elapsed-time bound",
    "tests/simulator/test_dispatcher.py::test_sender_timeout_gives_unknown_and_a_retry": "an elapsed-time bound",
    "tests/chaos/test_matrix.py": "the chaos matrix kills and pauses receivers mid-burst",
    "tests/chaos/test_unfired.py": "a kill armed after the burst's answers",
    "tests/hostile/test_certify.py": "a dozen certify runs side by side, each bounded by its sender timeout",
    "tests/hostile/test_send.py": "a dozen send runs side by side, each bounded by its sender timeout",
    "tests/test_bench_storm_throughput.py": "a request's signing time against its arrival, Locust pinned to CPU 0",
    "tests/loadtests/test_storm_cluster.py": "network namespaces and veth pairs",
    "tests/loadtests/test_storm_command.py": "checks depend on the achieved rate; interrupted storms",
    "tests/loadtests/test_storm_worker_lifecycle.py": "workers stopped, killed and joining at set times in a storm",
    "tests/loadtests/test_storm_patterns.py": "storms near the sender's timeout on a loaded machine",
    "tests/loadtests/test_storm_team_keys.py": "storms near the sender's timeout on a loaded machine",
    "tests/loadtests/test_storm_worlds.py": "storms near the sender's timeout on a loaded machine",
    "tests/simulator/test_race.py": "race bursts and an elapsed-time bound",
    "tests/scenarios/test_detection_matrix.py": "a racy receiver's 5xx needs its burst's race to hit",
    "tests/scenarios/test_overlap.py::test_a_receiver_that_applies_after_answering_is_waited_for_beside_other_scenarios":
        "a queue's backlog settles within the settle window",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-durations", metavar="TABLE", default=None,
                     help="merge each test file's seconds (tests not marked serial) into TABLE, "
                          "tests/durations.json: the parallel pass's order (tests/durations.py)")


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C handled as Python's default (KeyboardInterrupt), however the session was started.

    A shell starts a background job (``pytest &``, ``nohup``) with SIGINT ignored, and a process
    inherits that across exec: the deadline and interrupt tests then saw no interruption at all,
    in pytest itself and in every hookproof process it starts (ten failures in tests/hookproof
    alone). A Python handler is reset to the default at exec, so restoring Python's own handler
    here gives the children the disposition a terminal gives them.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        _restore_terminal_size(workerinput.get(_TERMINAL_SIZE_INPUT, {}))
    elif config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_HandTerminalSize(), "hookproof-terminal-size")
    table = config.getoption("record_durations")
    if table is not None and workerinput is None:
        config.pluginmanager.register(durations.Recorder(Path(table).resolve(), config.rootpath),
                                      "hookproof-record-durations")


#: The terminal size variables a pytest-xdist worker is handed from its controller.
_TERMINAL_SIZE = ("COLUMNS", "LINES")
_TERMINAL_SIZE_INPUT = "hookproof_terminal_size"


class _HandTerminalSize:
    """Hands the controller's COLUMNS and LINES (set or not) to each pytest-xdist worker.

    A worker starts with COLUMNS=80 and LINES=24 in its environment whatever its controller had
    (the interpreter it is started in sets them), so every console off a terminal drew its
    tables 80 columns wide under `.ci/test` and at hookproof's own width in one process: the
    tests reading a report's console lines failed only on workers."""

    @pytest.hookimpl
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[_TERMINAL_SIZE_INPUT] = {name: os.environ.get(name) for name in _TERMINAL_SIZE}


def _restore_terminal_size(controller: dict[str, str | None]) -> None:
    for name in _TERMINAL_SIZE:
        value = controller.get(name)
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Service and `serial` markers; on a pytest-xdist worker, the files longest first
    (`tests/durations.py`: with `--no-loadscope-reorder`, xdist hands them out in this order)."""
    root = config.rootpath
    for item in items:
        for fixture, marker in SERVICE_MARKERS.items():
            if fixture in getattr(item, "fixturenames", ()) and item.get_closest_marker(marker) is None:
                item.add_marker(marker)
        module = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        test = f"{module}::{item.name.partition('[')[0]}"
        if (module in SERIAL_MODULES or test in SERIAL_MODULES or item.get_closest_marker("docker") is not None) \
                and item.get_closest_marker("serial") is None:
            item.add_marker("serial")
    if getattr(config, "workerinput", None) is not None:
        durations.longest_first(items, root, durations.load())


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """SQLAlchemy URL of a throwaway PostgreSQL database, alive for the whole session."""
    bindir = find_postgres_bin()
    if bindir is None:
        require_service("PostgreSQL", "initdb/pg_ctl not found (apt-get install postgresql)")
    try:
        server = PostgresServer(bindir)
    except (KeyError, RuntimeError) as exc:
        error = f"cannot run the server here: {exc}"
    else:
        error = None
    if error is not None:
        require_service("PostgreSQL", error)
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def docker_client() -> Iterator[object]:
    """A docker SDK client connected to a live daemon."""
    try:
        import docker
    except ImportError:
        require_service("docker", "the docker SDK is not installed (pip install -e '.[chaos]')")
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except docker.errors.DockerException as exc:
        error = f"the daemon is unreachable: {exc}"
    else:
        error = None
    if error is not None:
        require_service("docker", error)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Path of a Chromium binary for headless rendering (as root it needs --no-sandbox)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    require_service("Chromium", "no chromium binary on PATH (apt-get install chromium)")
