"""The bench scripts' command lines: each answers --help, and refuses a bad argument in one line.

The scripts are run as `python bench/<name>.py`, in a process of their own, as `bench/all.py`
runs them; nothing is measured (argparse exits before the bench starts).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if p.name != "bench_args.py")

#: (script, arguments argparse must refuse, what the one line says)
BAD: list[tuple[str, list[str], str]] = [
    ("all.py", ["--fast"], "unrecognized arguments: --fast"),
    ("catalog_wall_time.py", ["0"], "argument runs: must be at least 1: '0'"),
    ("checks_scaling.py", ["--sizes", "ten"], "argument --sizes: not a whole number: 'ten'"),
    ("dispatcher_throughput.py", ["3000", "x"], "argument rounds: not a whole number: 'x'"),
    ("dispatcher_instructions.py", ["300", "300"], "n2 (300) must be above n1 (300)"),
    ("explore_steps.py", ["-5"], "argument examples: must be at least 1: '-5'"),
    ("null_receiver.py", [], "the following arguments are required: port"),
    ("race_hit_rate.py", ["50", "20", "7"], "unrecognized arguments: 7"),
    ("race_hit_rate.py", ["--serve", "nginx", "80"], "--serve takes uvicorn|hypercorn and a port, not nginx 80"),
    ("storm_memory.py", ["--help-me"], "unrecognized arguments: --help-me"),
    ("storm_memory.py", ["--rate", "fast", "1000"], "argument --rate: not a number: 'fast'"),
    ("storm_throughput.py", ["10", "0"], "argument users: must be at least 1: '0'"),
    ("storm_throughput.py", ["3"],
     "argument seconds: at least 6, for a steady window after the spawn and before the end (got 3)"),
]


def _run(script: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True,
                          timeout=120, cwd=BENCH.parent)


def test_every_script_is_listed() -> None:
    assert {s for s, _, _ in BAD} == set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_prints_usage_and_the_docstring(script: str) -> None:
    proc = _run(script, ["--help"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"usage: {script} ")
    assert proc.stderr == ""


@pytest.mark.parametrize(("script", "args", "says"), BAD)
def test_a_bad_argument_is_one_line(script: str, args: list[str], says: str) -> None:
    proc = _run(script, args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"{script}: error: {says} (see --help)\n"
