"""Wall time of the full scenario catalog against the correct `inbox_sync` receiver.

Starts the receiver as a process on 127.0.0.1 with a SQLite file and runs `hookproof
certify` (in-process API) over the whole catalog in two modes taking turns: side by side as
certify runs them (`hookproof.certify.OVERLAP_BOUND`, `scenarios.overlap`), RUNS times, and
scenarios one after another (`overlap=1`), S times (``--sequential S``). Prints per
scenario its median duration and what it waits for (deliveries, settle reads) in the
sequential mode, its overlap class, and per mode the median total and each run's total
(receiver start and stop included), with the machine's load average after each run. The
figure is the overlapped median (goal: <= 8 s). Every run must pass.
Run: ``python bench/catalog_wall_time.py [RUNS] [--sequential S]`` (defaults 3 and 1).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_args import parser, positive_int

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hookproof.certify import OVERLAP_BOUND, certify  # noqa: E402
from hookproof.demo import receiver_config  # noqa: E402
from hookproof.reports import RunReport  # noqa: E402
from hookproof.scenarios.catalog import CATALOG  # noqa: E402


def _load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _where(report: RunReport, total_s: float) -> str:
    """Where an overlapped run's wall time went: receiver and provider API start and stop plus
    the reports (the total less the scenarios' run), then per overlap class (the first
    scenario on its own) the span from its first attempt sent to its last answered, in
    seconds from the start of the first scenario, and when the last scenario ended."""
    run_s = report.finished_at - report.started_at
    spans: dict[str, list[float]] = {}
    for n, s in enumerate(report.scenarios):
        label = "first" if n == 0 else (CATALOG[s.id].overlap.value if s.id in CATALOG else "-")
        spans.setdefault(label, []).extend(t - report.started_at for a in s.attempts for t in (a.sent_at, a.answered_at))
    parts = [f"{label} {min(ts):.2f}-{max(ts):.2f}" for label, ts in sorted(spans.items(), key=lambda kv: min(kv[1] or [0.0]))
             if ts]
    return f"start, stop and reports {total_s - run_s:.2f}; " + "; ".join(parts) + f"; last scenario ends {run_s:.2f}"


def main(runs: int, sequential: int = 1) -> None:
    totals: dict[int, list[float]] = {1: [], OVERLAP_BOUND: []}
    per: dict[str, list[float]] = {}
    waits: dict[str, list[tuple[float, float]]] = {}
    loads: list[str] = []
    where: list[tuple[float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(max(runs, sequential)):
            for overlap in [n for n, k in ((1, sequential), (OVERLAP_BOUND, runs)) if i < k]:
                config = receiver_config("inbox_sync", Path(tmp), "whsec_bench_catalog_0123456789", seed=100 + i)
                t0 = time.perf_counter()
                report = certify(config, out_dir=Path(tmp) / f"run{i}-{overlap}", overlap=overlap).report
                totals[overlap].append(time.perf_counter() - t0)
                loads.append(f"{'overlapped' if overlap != 1 else 'one by one'} {totals[overlap][-1]:.2f} s, {_load()}")
                assert report.verdict == "pass", (overlap, report.verdict)
                if overlap != 1:
                    where.append((totals[overlap][-1], _where(report, totals[overlap][-1])))
                    continue
                for s in report.scenarios:
                    per.setdefault(s.id, []).append(s.duration_s)
                    sent = [a.sent_at for a in s.attempts]
                    ends = [a.answered_at for a in s.attempts]
                    deliver_s = max(ends) - min(sent) if sent else 0.0
                    waits.setdefault(s.id, []).append((deliver_s, max(0.0, s.duration_s - deliver_s)))
    print(f"full catalog against inbox_sync, {runs} run(s) overlapped, {sequential} one after another, "
          "receiver start and stop included")
    print(f"{'scenario (one after another)':<32}{'overlap':>9}{'median s':>10}{'delivering':>12}{'the rest':>10}")
    for sid, values in per.items():
        kind = CATALOG[sid].overlap.value if sid in CATALOG else "-"
        deliver = statistics.median(d for d, _ in waits[sid])
        rest = statistics.median(r for _, r in waits[sid])
        print(f"{sid:<32}{kind:>9}{statistics.median(values):>10.2f}{deliver:>12.2f}{rest:>10.2f}")
    seq, over = statistics.median(totals[1]), statistics.median(totals[OVERLAP_BOUND])
    print(f"{'TOTAL one after another':<32}{'':>9}{seq:>10.2f}")
    print(f"{'TOTAL (wall, median)':<32}{'':>9}{over:>10.2f}   overlapped, {OVERLAP_BOUND} at a time at most, "
          f"median of {len(totals[OVERLAP_BOUND])}; goal <= 8 s")
    print(f"overlapped / one after another: {over / seq:.2f}")
    print("runs in order: " + "; ".join(loads))
    median_run = sorted(where)[(len(where) - 1) // 2]
    print(f"the overlapped run of {median_run[0]:.2f} s, s from the first scenario's start (attempts, first sent to "
          f"last answered): {median_run[1]}")


if __name__ == "__main__":
    cli = parser(__doc__)
    cli.add_argument("runs", nargs="?", type=positive_int, default=3, help="overlapped runs (default 3)")
    cli.add_argument("--sequential", type=positive_int, default=1, metavar="S",
                     help="runs one after another, for the per-scenario table (default 1)")
    args = cli.parse_args()
    main(args.runs, args.sequential)
