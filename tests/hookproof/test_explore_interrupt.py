"""SIGINT or SIGTERM during `hookproof explore`: it stops, writes a partial report, exits 128+N."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import run_interrupted

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples" / "pytest_project"


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_explore_writes_a_partial_report(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def searching(proc: subprocess.Popen[str]) -> None:
        time.sleep(6)  # well into the search
        assert proc.poll() is None, proc.communicate()

    result = run_interrupted([sys.executable, "-m", "hookproof", "explore", "--max-examples", "100000", "--out",
                              str(out)], signum, cwd=PROJECT, env=env, under_way=searching, timeout_s=30)
    assert result.returncode == 128 + signum, result.stdout + result.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] is True and report["verdict"] == "unknown"
    # the run's own target, profile and seed (run.seed of the example project), not placeholders
    assert (report["target"], report["profile"], report["seed"]) == ("in-process ASGI app FastAPI", "stripe", 7)
    assert "interrupted" in result.stdout
