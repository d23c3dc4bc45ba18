"""Every benchmark in one command, ending in the table of issue-level figures.

Runs each bench (short settings unless ``--full``) as its own process, shows its output
as it comes, then prints one table: what each figure is, the goal, and what this run
measured, with the machine's load average before and after (the figures are ratios
measured within one run, so a loaded machine moves them less than absolute rates; read
them with the load beside them).

Run: ``python bench/all.py [--full]`` from the repository root (quick: about 5 min).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench_args import parser

HERE = Path(__file__).resolve().parent


@dataclass
class Bench:
    script: str
    quick: list[str]
    full: list[str]


BENCHES = [
    Bench("explore_steps.py", ["60"], ["200"]),
    Bench("checks_scaling.py", ["--sizes", "10000", "100000", "--repeat", "1"],
          ["--sizes", "10000", "100000", "1000000", "--repeat", "1"]),
    Bench("dispatcher_throughput.py", ["3000", "3"], ["10000", "5"]),
    Bench("storm_throughput.py", ["10", "10"], ["15", "20"]),
    Bench("race_hit_rate.py", ["50", "20"], ["100", "20"]),
    Bench("catalog_wall_time.py", ["3"], ["5", "--sequential", "3"]),
]


def run(bench: Bench, full: bool) -> str:
    """Run one bench, echoing its output; returns its stdout (a failed run returns what it printed)."""
    args = bench.full if full and bench.full else bench.quick
    print(f"\n=== {bench.script} {' '.join(args)}", flush=True)
    proc = subprocess.run([sys.executable, str(HERE / bench.script), *args], capture_output=True, text=True,
                          timeout=1800, cwd=HERE.parent)
    print(proc.stdout, end="", flush=True)
    if proc.returncode != 0:
        print(f"({bench.script} exited {proc.returncode}: {proc.stderr.strip().splitlines()[-1:]})", flush=True)
    return proc.stdout


def _find(pattern: str, text: str, group: int = 1) -> str:
    match = re.search(pattern, text, flags=re.M)
    return match.group(group) if match else "n/a"


def summary(out: dict[str, str]) -> list[tuple[str, str, str]]:
    """(figure, goal, measured) rows from the benches' outputs."""
    explore = out.get("explore_steps.py", "")
    dispatcher = out.get("dispatcher_throughput.py", "")
    storm = out.get("storm_throughput.py", "")
    race = out.get("race_hit_rate.py", "")
    checks = out.get("checks_scaling.py", "")
    catalog = out.get("catalog_wall_time.py", "")
    total = _find(r"^total, us/attempt\s+(.*)$", checks)
    baseline = _find(r"^baseline, us/attempt\s+(.*)$", checks)
    ratios = "n/a"
    if total != "n/a" and baseline != "n/a":
        ratios = " / ".join(f"{float(t) / float(b):.1f}x" for t, b in zip(total.split(), baseline.split()))
    h1 = [f"{m.group(1)} {m.group(2)}: {m.group(3)}, 95% CI {m.group(4)}" for m in re.finditer(
        r"^h1-last-byte\s+(\S+)\s+(\S+)\s+(\d+/\d+ \(\d+%\))\s+(\d+-\d+%)", race, flags=re.M)]
    return [
        ("explore in-process steps/s", ">= 500", _find(r"^in-process .*?(\d+) steps/s", explore)),
        ("explore / bare loop (wall, CPU)", ">= 0.5", _find(r"^explore / bare loop: ([\d.]+ \(CPU [\d.]+\))", explore)),
        ("checks: all checks / baseline per attempt (by size)", "<= 6x at 1M", ratios),
        ("dispatcher (SQLite) / raw aiohttp", ">= 0.75",
         _find(r"^dispatcher.*?sqlite.*?\s([\d.]+)\s+[\d.]+(\s+\d+/\d+/\d+)?\s*$", dispatcher.lower())),
        ("storm / bare on the storm's HTTP path", ">= 0.8", _find(r"storm vs bare on its own HTTP path: ([\d.]+)", storm)),
        ("race: HTTP/1.1 last-byte hit rate", ">= 95% per server", "; ".join(h1) or "n/a"),
        ("full catalog against inbox_sync, s", "<= 8", _find(r"^TOTAL \(wall, median\)\s+([\d.]+)", catalog)),
    ]


def main() -> None:
    args = parser(__doc__)
    args.add_argument("--full", action="store_true", help="longer settings (default: quick, about 5 min)")
    full = args.parse_args().full
    load_before = os.getloadavg()
    started = time.monotonic()
    out = {bench.script: run(bench, full) for bench in BENCHES}
    load_after = os.getloadavg()
    print(f"\n=== summary ({'full' if full else 'quick'} settings, {time.monotonic() - started:.0f} s, "
          f"{os.cpu_count()} cores, load average {load_before[0]:.1f} before, {load_after[0]:.1f} after)")
    rows = summary(out)
    width = max(len(r[0]) for r in rows)
    print(f"{'figure':<{width}}  {'goal':<18}  measured")
    for figure, goal, measured in rows:
        print(f"{figure:<{width}}  {goal:<18}  {measured}")


if __name__ == "__main__":
    main()
