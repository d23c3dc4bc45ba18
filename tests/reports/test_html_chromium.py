"""report.html in headless Chromium: it opens offline and shows the verdicts and a timeline."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hookproof.reports import RunReport, render_html

pytestmark = pytest.mark.chromium

TIMEOUT_S = 90


def _chromium(chromium_path: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [chromium_path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)


@pytest.fixture
def html_file(run_report: RunReport, tmp_path: Path) -> Path:
    path = tmp_path / "report.html"
    path.write_text(render_html(run_report), encoding="utf-8")
    return path


def test_dom_has_verdicts_and_timeline(chromium_path: str, html_file: Path, tmp_path: Path) -> None:
    proc = _chromium(chromium_path, tmp_path / "profile", "--dump-dom", html_file.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert '<table id="verdicts">' in dom
    assert '<svg class="timeline"' in dom
    assert dom.count('class="badge v-fail"') >= 2
    assert "license:pay_2002" in dom


def test_screenshot(chromium_path: str, html_file: Path, tmp_path: Path) -> None:
    png = tmp_path / "report.png"
    proc = _chromium(chromium_path, tmp_path / "profile", f"--screenshot={png}", "--window-size=1280,2000",
                     html_file.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert png.is_file(), proc.stderr[-2000:]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 10_000
