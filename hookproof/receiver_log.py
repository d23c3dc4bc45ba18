"""The receiver's own log, kept with a run's reports and quoted by its 5xx findings.

A receiver hookproof starts (``[target.start]`` or ``[target.process]``) writes its
output into the run's `chaos.process.ReceiverLog`; certify marks where each scenario
began, keeps the newest `chaos.process.KEEP_BYTES` as ``receiver.log`` in the report
folder (every secret hookproof knows masked) and gives each ``no_server_error`` finding
the last lines its scenario wrote (`LogExcerpt`): the traceback behind a 500. explore and
storm keep it the same way (`keep_receiver_log`, `link_receiver_log`), and store the linked
report in the run's history (`store_linked_report`), so that `hookproof report` re-renders
the run with everything its reports had.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Mapping, Sequence

from hookproof.chaos.process import ReceiverLog
from hookproof.reports.model import CheckView, LogExcerpt, RunReport, ScenarioReport

#: The kept log's name in the report folder.
RECEIVER_LOG_FILE = "receiver.log"
#: The checks whose findings quote the log (a 5xx answer).
LOGGED_CHECKS = frozenset({"no_server_error"})


class ScenarioMarks:
    """Where each scenario's output begins in the run's log (`mark` at each scenario's start)."""

    def __init__(self, log: ReceiverLog) -> None:
        self.log = log
        self.starts: dict[str, int] = {}

    def mark(self, scenario_id: str) -> None:
        """Scenario `scenario_id` starts now."""
        self.starts[scenario_id] = self.log.mark()

    def tails(self) -> dict[str, str]:
        """scenario id -> the last lines (masked) the receiver wrote during it; "" for none."""
        order = sorted(self.starts.items(), key=lambda item: item[1])
        ends = [start for _, start in order[1:]] + [self.log.mark()]
        return {sid: self.log.tail(start, end) if end > start else "" for (sid, start), end in zip(order, ends)}


def keep_receiver_log(log: ReceiverLog | None, marks: ScenarioMarks | None, out_dir: Path) -> dict[str, str] | None:
    """Once the receivers stopped: keep `log` as ``receiver.log`` in `out_dir` (every secret
    it knows masked, the newest `chaos.process.KEEP_BYTES`) and close it. Returns each marked
    scenario's tail (`ScenarioMarks.tails`; {} without marks), or None when there is no log
    or nothing could be kept."""
    if log is None:
        return None
    try:
        if not log.keep(out_dir / RECEIVER_LOG_FILE):
            return None
        return marks.tails() if marks is not None else {}
    finally:
        log.close()


def link_receiver_log(report: RunReport, tails: Mapping[str, str], path: str = RECEIVER_LOG_FILE) -> RunReport:
    """`report` naming the kept log (`RunReport.receiver_log`, relative to the report folder),
    each finding of `LOGGED_CHECKS` carrying its scenario's tail from `tails` (`FindingView.log`;
    empty when the receiver wrote nothing during that scenario)."""
    return replace(report, receiver_log=path,
                   scenarios=tuple(_linked(s, tails.get(s.id, ""), path) for s in report.scenarios))


def store_linked_report(history_path: Path, report: RunReport) -> None:
    """Store `report` (as report.json holds it: the kept log named, findings quoting it) as the
    saved report of the closed history at `history_path` (its findings a row each,
    `scenarios.saved_report.store_report`), committed at once, so a re-render (`hookproof report`)
    keeps what the written reports had. Raises sqlite3.Error when the file is not a writable history."""
    from hookproof.scenarios.saved_report import store_report
    from hookproof.simulator.delivery.history import HistoryFile

    saved = HistoryFile(history_path)
    try:
        store_report(saved, report)
    finally:
        saved.close()


def _linked(scenario: ScenarioReport, tail: str, path: str) -> ScenarioReport:
    if not any(c.check_id in LOGGED_CHECKS and c.findings for c in scenario.checks):
        return scenario
    excerpt = LogExcerpt(path=path, tail=tail)
    checks: Sequence[CheckView] = tuple(
        replace(c, findings=tuple(replace(f, log=excerpt) for f in c.findings)) if c.check_id in LOGGED_CHECKS else c
        for c in scenario.checks)
    return replace(scenario, checks=tuple(checks))
