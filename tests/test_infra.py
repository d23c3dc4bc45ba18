"""The test infrastructure itself: the PostgreSQL fixture and the CI-aware service rule."""

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.support import free_port, require_service

pytest_plugins = ["pytester"]


@pytest.mark.postgres
def test_postgres_url_supports_create_insert_select(postgres_url: str) -> None:
    engine = sa.create_engine(postgres_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE IF EXISTS infra_probe"))
            conn.execute(sa.text("CREATE TABLE infra_probe (business_key text PRIMARY KEY, amount int)"))
            conn.execute(
                sa.text("INSERT INTO infra_probe VALUES (:k, :a)"),
                [{"k": f"renewal:in_{i}", "a": i} for i in range(3)],
            )
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT business_key FROM infra_probe ORDER BY amount")).all()
            database = conn.execute(sa.text("SELECT current_database()")).scalar_one()
    finally:
        engine.dispose()
    assert [r.business_key for r in rows] == ["renewal:in_0", "renewal:in_1", "renewal:in_2"]
    assert database == "hookproof"


def test_require_service_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        require_service("frobd", "not installed")


@pytest.mark.parametrize("ci", [None, "false", "1"])
def test_require_service_skips_outside_ci(monkeypatch: pytest.MonkeyPatch, ci: str | None) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match="frobd is not available: not installed"):
        require_service("frobd", "not installed")


def test_free_port_is_bindable() -> None:
    import socket

    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
    assert 1024 <= port <= 65535


def test_free_port_never_gives_two_threads_the_same_port() -> None:
    """Receivers are started from thread pools (the storm batches): two threads asking at once
    must get two ports, or one storm's deliveries reach the other's receiver (a wrong secret:
    every delivery refused 401)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    barrier = threading.Barrier(8)

    def ask(_: int) -> list[int]:
        barrier.wait()
        return [free_port() for _ in range(25)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        ports = [p for batch in pool.map(ask, range(8)) for p in batch]
    assert len(ports) == len(set(ports)) == 200


@pytest.mark.parametrize("workers", [("", "gw0", "gw1"), ("gw0", "gw1", "gw2", "gw3")])
def test_free_port_gives_each_xdist_worker_its_own_ports(monkeypatch: pytest.MonkeyPatch,
                                                         workers: tuple[str, ...]) -> None:
    from tests.support import _ephemeral_range, _port_block

    blocks = []
    for worker in workers:
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        first, last = _port_block()
        ports = [free_port() for _ in range(5)]
        assert len(set(ports)) == 5
        low, high = _ephemeral_range()
        if last < low or first > high:  # the band is clear of the kernel's ephemeral ports
            assert all(first <= port <= last for port in ports)
        blocks.append(range(first, last + 1))
    assert all(not set(a) & set(b) for i, a in enumerate(blocks) for b in blocks[i + 1:])


def test_every_serial_module_exists() -> None:
    from pathlib import Path

    from tests.conftest import SERIAL_MODULES

    root = Path(__file__).resolve().parent.parent
    assert [m for m in SERIAL_MODULES if not (root / m.partition("::")[0]).is_file()] == []
    tests = [m.partition("::") for m in SERIAL_MODULES if "::" in m]
    assert [f"{path}::{name}" for path, _, name in tests
            if f"def {name}(" not in (root / path).read_text(encoding="utf-8")] == []


def test_the_two_passes_of_ci_test_split_the_suite_on_the_serial_marker() -> None:
    import shlex
    from pathlib import Path

    script = (Path(__file__).resolve().parent.parent / ".ci" / "test").read_text(encoding="utf-8")
    passes = [shlex.split(line)[3:] for line in script.splitlines() if line.startswith("python -m pytest")]
    assert passes == [["-n", "$workers", "--dist", "loadfile", "--no-loadscope-reorder", "-p", "no:benchmark",
                       "-m", "not serial", "--durations=20", "$@"], ["-m", "serial", "--durations=20", "$@"]]


def test_the_durations_table_names_existing_test_files_longest_first() -> None:
    from tests.durations import ROOT, load

    table = load()
    assert table and [name for name in table if not (ROOT / name).is_file() or not name.startswith("tests/")] == []
    assert list(table.values()) == sorted(table.values(), reverse=True)


def test_the_parallel_pass_starts_whole_files_longest_first(tmp_path: Path) -> None:
    """Files the table knows by their seconds, the others at `DEFAULT_TEST_S` a test; ties in
    collection order; a file's tests keep their order."""
    from types import SimpleNamespace

    from tests.durations import longest_first

    names = ["a.py::one", "a.py::two", "b.py::one", "c.py::one", "c.py::two", "c.py::three", "d.py::one"]
    items: list[Any] = [SimpleNamespace(path=tmp_path / n.split("::")[0], name=n) for n in names]
    longest_first(items, tmp_path, {"a.py": 1.5, "b.py": 30.0, "d.py": 1.4})  # c.py: 3 x 0.5 s
    assert [item.name for item in items] == ["b.py::one", "a.py::one", "a.py::two", "c.py::one", "c.py::two",
                                             "c.py::three", "d.py::one"]


def test_the_predicted_end_plays_xdists_loadfile_hand_out() -> None:
    """Each worker starts with one file and takes the next once two or fewer of its tests are left:
    a one-test file makes its worker take a second file at once (xdist's `_reschedule`)."""
    from tests.durations import schedule

    # big's worker takes y at once and runs it after big; x's takes z when two of x's tests are left
    assert schedule([("big", 30.0, 1), ("x", 10.0, 10), ("y", 10.0, 10), ("z", 10.0, 10)], workers=2) == [40.0, 20.0]
    assert schedule([("x", 10.0, 10), ("y", 10.0, 10), ("z", 10.0, 10), ("big", 30.0, 1)], workers=2) == [20.0, 40.0]
    # a heavy file handed out last ends the pass late; first, the short ones fill in beside it
    assert schedule([("a", 20.0, 10), ("b", 20.0, 10), ("c", 20.0, 10), ("big", 50.0, 20)], workers=2) == [40.0, 70.0]
    assert schedule([("big", 50.0, 20), ("a", 20.0, 10), ("b", 20.0, 10), ("c", 20.0, 10)], workers=2) == [50.0, 60.0]
    assert schedule([("a", 6.0, 3), ("b", 6.0, 3), ("c", 6.0, 3)], workers=1) == [18.0]


def test_recorded_durations_merge_into_the_table_per_file(tmp_path: Path) -> None:
    """The files a run measured replace their rows (tests marked serial left out); rows of files
    gone go; the rest stay."""
    from types import SimpleNamespace

    from tests.durations import Recorder, load, write

    for name in ("tests/a.py", "tests/b.py", "tests/c.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    table = tmp_path / "durations.json"
    write(table, {"tests/a.py": 5.0, "tests/b.py": 7.0, "tests/gone.py": 9.0})
    recorder = Recorder(table, tmp_path)
    for nodeid, seconds, keywords in [("tests/a.py::t1", 1.25, {}), ("tests/a.py::t1", 0.5, {}),
                                      ("tests/a.py::t2", 2.0, {}), ("tests/c.py::t", 3.0, {}),
                                      ("tests/b.py::s", 60.0, {"serial": 1})]:
        recorder.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, duration=seconds, keywords=keywords))
    before = table.read_text(encoding="utf-8")
    for exitstatus, stopped in [(pytest.ExitCode.INTERRUPTED, False), (pytest.ExitCode.TESTS_FAILED, "exiting")]:
        recorder.pytest_sessionfinish(SimpleNamespace(shouldstop=stopped, shouldfail=False), exitstatus)
        assert table.read_text(encoding="utf-8") == before  # a run cut short measured part of a file
    recorder.pytest_sessionfinish(SimpleNamespace(shouldstop=False, shouldfail=False), pytest.ExitCode.TESTS_FAILED)
    assert load(table) == {"tests/b.py": 7.0, "tests/a.py": 3.8, "tests/c.py": 3.0}


def _attempt(delivery: str, number: int, sent_at: float, answered_at: float) -> dict[str, object]:
    return {"delivery_id": delivery, "attempt": number, "sent_at": sent_at, "answered_at": answered_at}


def test_attempts_unbounded_names_each_limit_a_run_ignored() -> None:
    """The hostile suites' behavioural bound: each attempt within its sender timeout, each retry
    within its delay, the run's end within its last answer, each plus `LATE_S`."""
    from tests.hostile.harness import attempts_unbounded
    from tests.support import LATE_S

    kept = [_attempt("d1", 1, 100.0, 100.3), _attempt("d1", 2, 100.3 + 0.6 + LATE_S, 101.2 + LATE_S),
            _attempt("d2", 1, 100.0, 100.0 + 0.3 + LATE_S)]
    assert attempts_unbounded(kept, sender_timeout_s=0.3, delays_s=[0.6], ended_at=101.2 + 2 * LATE_S) == []
    ignored = [_attempt("d1", 2, 200.0, 320.0), _attempt("d1", 1, 100.0, 100.3), _attempt("d1", 3, 380.5, 380.8)]
    assert attempts_unbounded(ignored, sender_timeout_s=0.3, delays_s=[0.6, 0.6], ended_at=400.0) == [
        "d1 attempt 2 took 120.0 s (sender timeout 0.3 s + 10 s)",
        "d1 attempt 2 came 99.7 s after the one before (retry delay 0.6 s + 10 s)",
        "d1 attempt 3 came 60.5 s after the one before (retry delay 0.6 s + 10 s)",
        "the run ended 19.2 s after its last answer (+10 s allowed)"]
    assert attempts_unbounded([], sender_timeout_s=0.3, delays_s=[], ended_at=1e9) == []


def test_run_side_by_side_keeps_each_run_s_result_and_error_to_itself() -> None:
    import threading

    from tests.support import run_side_by_side

    started = threading.Barrier(3, timeout=30)  # all three are under way at once

    def run(key: str) -> str:
        started.wait()
        if key == "b":
            raise ValueError("b broke")
        return key.upper()

    futures = run_side_by_side(["a", "b", "c"], run, workers=3)
    assert list(futures) == ["a", "b", "c"] and all(f.done() for f in futures.values())
    assert (futures["a"].result(), futures["c"].result()) == ("A", "C")
    with pytest.raises(ValueError, match="b broke"):
        futures["b"].result()


SELECTION_MODULE = '''
import pytest

from tests.support import run_side_by_side, selected_params, selected_tests

SEEN = []


@pytest.fixture(scope="module")
def by_name(request):
    SEEN.append(("params", selected_params(request, "name")))
    return run_side_by_side(selected_params(request, "name"), str.upper, workers=2)


@pytest.fixture(scope="module")
def by_test(request):
    SEEN.append(("tests", selected_tests(request)))
    return selected_tests(request)


@pytest.mark.parametrize("name", ["x", "y", "z"])
def test_param(by_name, name):
    assert by_name[name].result() == name.upper()


def test_plain_one(by_test, request):
    assert request.node.name in by_test


def test_plain_two(by_test, request):
    assert request.node.name in by_test


def test_without_the_fixtures():
    pass


def test_zz_seen():
    assert SEEN == EXPECTED
'''


@pytest.mark.parametrize(("selected", "expected", "passed"), [
    ((), [("params", ["x", "y", "z"]), ("tests", ["test_plain_one", "test_plain_two"])], 7),
    (("test_param[y]", "test_plain_two", "test_zz_seen"), [("params", ["y"]), ("tests", ["test_plain_two"])], 3),
])
def test_a_side_by_side_fixture_runs_only_the_selected_cases(pytester: pytest.Pytester, selected: tuple[str, ...],
                                                             expected: list[object], passed: int) -> None:
    import sys
    from pathlib import Path

    pytester.makepyfile(test_selection=SELECTION_MODULE + f"\nEXPECTED = {expected!r}\n")
    pytester.syspathinsert(str(Path(__file__).resolve().parent.parent))
    sys.modules.pop("test_selection", None)
    # no:benchmark: pytest-benchmark, where installed, warns in an xdist worker's inner run (an error here)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:locust", "-p", "no:benchmark", "-q",
                                          *(f"test_selection.py::{test}" for test in selected))
    result.assert_outcomes(passed=passed)
