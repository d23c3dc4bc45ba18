"""Wall time of the full scenario catalog against the correct `inbox_sync` receiver.

Starts the receiver as a process on 127.0.0.1 with a SQLite file, runs
`hookproof certify` (in-process API) over the whole catalog R times, and prints the
total and per-scenario wall times. Target: under 60 s on 2 cores.
Run: ``python bench/catalog_wall_time.py [RUNS]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hookproof.certify import certify  # noqa: E402
from hookproof.demo import receiver_config  # noqa: E402


def main(runs: int) -> None:
    totals: list[float] = []
    per: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            config = receiver_config("inbox_sync", Path(tmp), "whsec_bench_catalog_0123456789", seed=100 + i)
            t0 = time.perf_counter()
            report = certify(config, out_dir=Path(tmp) / f"run{i}").report
            totals.append(time.perf_counter() - t0)
            assert report.verdict == "pass", report.verdict
            for s in report.scenarios:
                per.setdefault(s.id, []).append(s.duration_s)
    print(f"full catalog against inbox_sync, {runs} run(s), receiver start and stop included")
    print(f"{'scenario':<30}{'median s':>10}")
    for sid, values in per.items():
        print(f"{sid:<30}{statistics.median(values):>10.2f}")
    print(f"{'TOTAL (wall, median)':<30}{statistics.median(totals):>10.2f}   target < 60 s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
