"""How long each test file takes in the parallel pass, and the order the pass starts them in.

`.ci/test`'s parallel pass hands whole files to three pytest-xdist workers (`--dist loadfile`),
a file to whichever worker is about to run out. xdist starts the files in the order of the
workers' collection when `--no-loadscope-reorder` is given (else the files with the most
tests first, whatever they cost), so `tests/conftest.py` orders the collection, on each
worker, by the seconds `durations.json` (beside this file) gives each file, longest first:
the heavy files of one to three tests start early instead of leaving one worker running
alone at the end. Within a file the tests keep their order.

The table holds, per file, the seconds its tests not marked `serial` took on one worker
(set-up, call and teardown together). Regenerate it with the pass itself (or any part of it:
the files measured replace their own rows; rows of files that no longer exist go)::

    python -m pytest -n 3 --dist loadfile --no-loadscope-reorder -p no:benchmark -m "not serial" \\
        --record-durations tests/durations.json

A file the table does not know yet is counted as `DEFAULT_TEST_S` per test. ``python -m
tests.durations`` prints the pass's predicted end: xdist's loadfile scheduling played over
the table, the sum of seconds per worker, in the table's order and in xdist's own.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

TABLE = Path(__file__).with_name("durations.json")
ROOT = Path(__file__).resolve().parents[1]
#: Seconds a test of a file the table does not know is counted as.
DEFAULT_TEST_S = 0.5


def load(path: Path = TABLE) -> dict[str, float]:
    """The table's seconds per file (``tests/...py``); empty when there is none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return {str(name): float(seconds) for name, seconds in data["files"].items()}


def estimate(table: dict[str, float], counts: Counter[str]) -> dict[str, float]:
    """Seconds per collected file: the table's, or `DEFAULT_TEST_S` per test."""
    return {name: table.get(name, DEFAULT_TEST_S * count) for name, count in counts.items()}


def module_of(item: pytest.Item, root: Path) -> str:
    return item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else str(item.path)


def longest_first(items: list[pytest.Item], root: Path, table: dict[str, float]) -> None:
    """Reorder `items` in place: whole files, longest first (ties in collection order); each
    file's tests keep their order."""
    modules = [module_of(item, root) for item in items]
    seconds = estimate(table, Counter(modules))
    first = {name: index for index, name in reversed(list(enumerate(modules)))}
    order = sorted(range(len(items)), key=lambda i: (-seconds[modules[i]], first[modules[i]], i))
    items[:] = [items[i] for i in order]


class Recorder:
    """Sums, per file, the seconds of its tests not marked `serial` (every phase), and merges
    them into the table at the session's end, unless the session was cut short. Registered on the
    controller alone (under xdist the workers' reports reach it)."""

    def __init__(self, path: Path, root: Path) -> None:
        self.path = path
        self.root = root
        self.seconds: dict[str, float] = {}

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if "serial" in report.keywords:
            return
        module = report.nodeid.split("::", 1)[0]
        self.seconds[module] = self.seconds.get(module, 0.0) + report.duration

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        # a run cut short (Ctrl-C, -x, --maxfail) measured part of a file: its row would lie
        if not self.seconds or exitstatus == pytest.ExitCode.INTERRUPTED or session.shouldstop or session.shouldfail:
            return
        table = load(self.path)
        table.update(self.seconds)
        write(self.path, {name: s for name, s in table.items() if (self.root / name).is_file()})


def write(path: Path, table: dict[str, float]) -> None:
    rows = dict(sorted(((name, round(s, 1)) for name, s in table.items()), key=lambda row: (-row[1], row[0])))
    path.write_text(json.dumps({"about": "seconds per test file in .ci/test's parallel pass, on one worker "
                                         "(tests/durations.py says how to regenerate it)",
                                "files": rows}, indent=1) + "\n", encoding="utf-8")


def schedule(files: Sequence[tuple[str, float, int]], workers: int = 3) -> list[float]:
    """Each worker's seconds when xdist's loadfile scheduler hands out `files` (name, seconds,
    tests) in this order: each worker starts with one file, and takes the next whenever two or
    fewer of its tests are left to run (xdist's `LoadScopeScheduling._reschedule`), at the
    start too."""
    queue = list(files)
    # per worker: the (end time, tests) of each file it was handed, and when it is busy until
    ends: list[float] = [0.0] * workers
    pending: list[list[tuple[float, int]]] = [[] for _ in range(workers)]

    def hand(w: int) -> None:
        name, seconds, tests = queue.pop(0)
        pending[w].append((seconds, max(1, tests)))

    for w in range(workers):
        if queue:
            hand(w)
    for w in range(workers):
        if queue and sum(t for _, t in pending[w]) <= 2:
            hand(w)
    # Play the run test by test: a worker's next test is its oldest file's next one, each
    # test of a file taking an equal share of the file's seconds.
    while any(pending):
        w = min((w for w in range(workers) if pending[w]), key=lambda w: ends[w])
        seconds, tests = pending[w][0]
        ends[w] += seconds / tests
        pending[w][0] = (seconds - seconds / tests, tests - 1)
        if pending[w][0][1] == 0:
            pending[w].pop(0)
        if queue and sum(t for _, t in pending[w]) <= 2:
            hand(w)
    return ends


def collected_counts(args: Iterable[str] = ()) -> Counter[str]:
    """Tests per file of the parallel pass (`pytest --collect-only -m "not serial"`)."""
    import subprocess

    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not serial",
                          "-p", "no:cacheprovider", *args], cwd=ROOT, capture_output=True, text=True).stdout
    return Counter(line.split("::", 1)[0] for line in out.splitlines() if "::" in line)


def predict(counts: Counter[str], table: dict[str, float], workers: int = 3) -> dict[str, list[float]]:
    """Each worker's predicted seconds with the table's order and with xdist's own (most tests
    first, `--loadscope-reorder`)."""
    seconds = estimate(table, counts)
    names = list(counts)  # collection order
    ours = sorted(names, key=lambda n: (-seconds[n], names.index(n)))
    theirs = sorted(names, key=lambda n: -counts[n])
    return {order: schedule([(n, seconds[n], counts[n]) for n in files], workers)
            for order, files in (("longest first", ours), ("most tests first", theirs))}


def main(argv: Sequence[str]) -> int:
    counts = collected_counts(argv)
    for order, ends in predict(counts, load()).items():
        print(f"{order}: workers end at " + ", ".join(f"{e / 60:.1f} min" for e in ends)
              + f"; the pass at {max(ends) / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
