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


# ---- layout: measured element boxes at common desktop widths (no pixels compared) -------

MEASURE = """<script>
(() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.right, r.height]; };
  const tables = [...document.querySelectorAll("table.attempts")].map((t) => ({
    frame: box(t.parentElement),
    columns: [...t.querySelectorAll("thead th")].map((th) => [th.textContent, ...box(th)]),
    rows: [...t.querySelectorAll("tbody tr")].map((tr) => box(tr)[2]),
  }));
  document.body.setAttribute("data-layout", JSON.stringify({
    inner: window.innerWidth, client: document.documentElement.clientWidth,
    scroll: document.documentElement.scrollWidth, tables }));
})();
</script></body>"""


def realistic_report() -> RunReport:
    """The sample run with real-length ids, several faults and the longest plain-words reasons."""
    from dataclasses import replace

    from tests.reports.sample import sample_report

    run = sample_report()
    reason = ("a status line came and then the headers stopped; the sender timeout of 20 s passed before the "
              "answer finished")
    scenarios = []
    for s in run.scenarios:
        attempts = tuple(replace(a, event_id=f"evt_1PqR7sT2uV3wX4yZ5aB6cD7e{a.index}",
                                 delivery_id=f"dlv_evt_1PqR7sT2uV3wX4yZ5aB6cD7e{a.index}_{a.attempt}",
                                 event_type="customer.subscription.updated",
                                 faults=("copies=3", "concurrent", "sender-timeout=20"),
                                 error=reason if a.outcome != "acked" else None) for a in s.attempts)
        scenarios.append(replace(s, attempts=attempts))
    return replace(run, scenarios=tuple(scenarios))


@pytest.mark.parametrize("width", [1280, 1920])
def test_no_page_overflow_and_every_attempts_column_visible(chromium_path: str, tmp_path: Path, width: int) -> None:
    import html
    import json
    import re

    page = render_html(realistic_report()).replace("</body>", MEASURE, 1)
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    proc = _chromium(chromium_path, tmp_path / "profile", f"--window-size={width},1000", "--dump-dom", path.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = re.search(r'data-layout="([^"]*)"', proc.stdout)
    assert found, proc.stdout[:2000]
    layout = json.loads(html.unescape(found.group(1)))
    assert layout["inner"] == width
    assert layout["scroll"] <= layout["client"], layout  # no horizontal page overflow
    assert layout["tables"], "the report draws no attempts table"
    for table in layout["tables"]:
        left, right, _ = table["frame"]
        assert [c[0] for c in table["columns"]] == ["#", "Delivery", "Try", "Event", "Sent", "Latency", "Status",
                                                   "Outcome", "Completion", "Faults"]
        hidden = [c[0] for c in table["columns"] if c[1] < left - 0.5 or c[2] > right + 0.5]
        assert not hidden, (hidden, table)
        assert max(table["rows"]) < 100, (table["rows"], table["columns"])  # a long reason has its own row: no tall gaps
