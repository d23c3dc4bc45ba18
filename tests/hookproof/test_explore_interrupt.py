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

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples" / "pytest_project"


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_explore_writes_a_partial_report(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "hookproof", "explore", "--max-examples", "100000", "--out", str(out)],
                            cwd=PROJECT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(6)  # well into the search
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signum, stdout + stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] is True and report["verdict"] == "unknown"
    assert "interrupted" in stdout
