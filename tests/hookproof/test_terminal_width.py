"""Off a terminal (CI logs, a file, a pipe) the commands' consoles are wide enough that no
line of a run's output is broken mid-figure: not the table's title (a line of its own),
not storm's latency line; COLUMNS, when set, still decides."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest

from hookproof import terminal
from hookproof.commands.storm import _print_numbers
from hookproof.reports import load_json
from hookproof.terminal import OFF_TERMINAL_WIDTH, make_console, print_report

GOLDEN = Path(__file__).resolve().parents[1] / "reports" / "golden" / "report.json"
TITLE = "hookproof storm: stripe receiver at http://127.0.0.1:37843/webhooks"


def _storm_report() -> object:
    document = json.loads(GOLDEN.read_text(encoding="utf-8"))
    storm = copy.deepcopy(document["scenarios"][0])
    storm.update(id="storm", title="storm", verdict="pass", reason="")
    storm["checks"] = [{"check_id": "ack_latency", "verdict": "valid", "findings": [], "detail": "",
                        "stats": {"sent": 661, "events": 327, "sent_per_s": 33.05, "acked": 640, "p50_ms": 29.6,
                                  "p95_ms": 57.7, "p99_ms": 88.6}}]
    document["scenarios"] = [storm]
    document["verdict"] = "pass"
    return load_json(json.dumps(document))


def test_off_a_terminal_no_line_is_broken_mid_figure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    out = io.StringIO()
    monkeypatch.setattr(terminal, "console", make_console(file=out))
    report = _storm_report()
    print_report(report, {"json": tmp_path / "report.json"}, TITLE)  # type: ignore[arg-type]
    _print_numbers(report, terminal.console)
    lines = out.getvalue().splitlines()
    assert lines[0] == TITLE  # not wrapped at the table's 42 columns
    assert ("storm: 661 attempts (deliveries, copies and retries) of 327 events at 33.05 attempts/s on average; "
            "ack latency of the 640 acknowledged attempt(s): p50 29.6 ms, p95 57.7 ms, p99 88.6 ms" in lines), lines
    assert make_console(file=io.StringIO()).width == OFF_TERMINAL_WIDTH


def test_the_numbers_line_says_what_each_count_counts() -> None:
    """A storm's line read "1161 attempts (202 events) at 231.92/s; ack p50 0.0 ms" with no
    attempt acknowledged: the latencies are the acknowledged attempts' alone, and it says so."""
    from hookproof.commands.storm import numbers_line

    stats = {"sent": 1161, "events": 202, "sent_per_s": 231.92, "acked": 0, "sender_timeout_ms": 20000.0}
    assert numbers_line(stats) == ("1161 attempts (deliveries, copies and retries) of 202 events at 231.92 attempts/s "
                                   "on average; no attempt was acknowledged, so no ack latency")
    stats.update(acked=9, p50_ms=1.0, p95_ms=2.0, p99_ms=3.0)
    assert numbers_line(stats).endswith("; ack latency of the 9 acknowledged attempt(s): p50 1.0 ms, p95 2.0 ms, "
                                        "p99 3.0 ms")


def test_columns_still_decides_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "50")
    out = io.StringIO()
    narrow = make_console(file=out)
    assert narrow.width == 50
    narrow.print("x " * 40, markup=False)
    assert len(out.getvalue().splitlines()) == 2
