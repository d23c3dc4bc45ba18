"""summary.md: a short GitHub-flavoured Markdown summary for CI step summaries and PR comments.

The verdict line first, then the scenarios, the findings, the advisories, the go-live
checklist and why some scenarios did not apply. Every value from the run is escaped for table cells
(pipes, angle brackets, newlines), so a hostile receiver's text cannot break the layout.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from hookproof.reports._format import (
    attempt_refs,
    key_labels,
    one_line,
    plural,
    root_cause_first_of,
    seconds,
    utc,
    verdict_label,
)
from hookproof.reports.model import FailedElsewhere, RunReport, ScenarioReport

__all__ = ["render_markdown"]


def render_markdown(report: RunReport) -> str:
    """The report as Markdown text (ends with a newline)."""
    parts = [_header(report), _scenarios(report)]
    findings = _findings(report)
    if findings:
        parts.append(findings)
    advisories = _advisories(report)
    if advisories:
        parts.append(advisories)
    logs = _receiver_logs(report)
    if logs:
        parts.append(logs)
    if report.checklist:
        parts.append(_checklist(report))
    not_applicable = _not_applicable(report)
    if not_applicable:
        parts.append(not_applicable)
    return "\n\n".join(parts) + "\n"


def _header(report: RunReport) -> str:
    counts: dict[str, int] = {}
    for s in report.scenarios:
        counts[s.verdict] = counts.get(s.verdict, 0) + 1
    tally = ", ".join(f"{n} {verdict_label(v)}" for v, n in counts.items())
    lines = [
        f"## hookproof: {verdict_label(report.verdict)}" + (" (partial run)" if report.partial else ""),
        "",
        f"{_code(report.target)} · profile {_code(report.profile)}"
        + (f" · config {_code(report.config)}" if report.config else "") + f" · {_cell(report.environment)} mode"
        f" · seed {report.seed} · {utc(report.started_at)} · {seconds(report.duration_s)}",
        "",
        f"{plural(len(report.scenarios), 'scenario')}: {tally or 'none ran'}.",
        *(f"\n> {_cell(note)}" for note in report.notes),
    ]
    return "\n".join(lines)


def _scenarios(report: RunReport) -> str:
    rows = [
        (f"{_code(s.id)} {_cell(s.title)}", verdict_label(s.verdict), str(s.finding_count),
         _duration(s))
        for s in report.scenarios
    ]
    return "### Scenarios\n\n" + _table(("Scenario", "Verdict", "Findings", "Duration"), rows)


def _duration(scenario: ScenarioReport) -> str:
    if scenario.verdict == "not_applicable":
        return "-"
    return seconds(scenario.duration_s) + ("" if scenario.settled else " (not settled)")


#: Findings of one check in one scenario listed in the summary; the rest are counted in one row
#: (report.json and report.html list them all): a step summary stays readable, and within
#: GitHub's 1 MiB limit, when one fault hits hundreds of keys.
FINDINGS_PER_CHECK = 10


def _findings(report: RunReport) -> str:
    rows = []
    for s in report.scenarios:
        label = key_labels(s.attempts)
        shown: dict[str, int] = {}
        for f in root_cause_first_of(s):
            shown[f.check_id] = shown.get(f.check_id, 0) + 1
            if shown[f.check_id] > FINDINGS_PER_CHECK:
                continue
            rows.append((_code(s.id), _code(f.check_id), _keyed(f.key, label(f.key)),
                         _cell(f.message) + (f" (attempts {attempt_refs(f.attempts)})" if f.attempts else "")
                         + (f" ([receiver log]({_link(f.log.path)}), tail below)" if f.log is not None else "")))
        for check_id, count in shown.items():
            if count > FINDINGS_PER_CHECK:
                rows.append((_code(s.id), _code(check_id), "",
                             f"and {count - FINDINGS_PER_CHECK} more {_code(check_id)} finding(s) of this scenario "
                             "(report.json and report.html list every one)"))
    rows += [
        (_code(s.id), _code(c.check_id), "", f"UNKNOWN: {_cell(c.detail or 'no verdict')}")
        for s in report.scenarios if s.verdict != "not_applicable"  # its reason says why, under Not applicable
        for c in s.checks if c.verdict == "unknown"
    ]
    if not rows:
        return ""
    return "### Findings\n\n" + _table(("Scenario", "Check", "Key", "Message"), rows)


def _advisories(report: RunReport) -> str:
    """What the checks advise without failing (a receiver stricter than the provider's own
    verifier), at most `FINDINGS_PER_CHECK` per check of a scenario, the rest counted."""
    rows = []
    for s in report.scenarios:
        if not s.advisory_count:  # counted once: a storm's findings are not read again for none
            continue
        label = key_labels(s.attempts)
        shown: dict[str, int] = {}
        for a in s.iter_findings("advisory"):
            shown[a.check_id] = shown.get(a.check_id, 0) + 1
            if shown[a.check_id] <= FINDINGS_PER_CHECK:
                rows.append((_code(s.id), _code(a.check_id), _keyed(a.key, label(a.key)), _cell(a.message)))
        rows += [(_code(s.id), _code(check_id), "", f"and {count - FINDINGS_PER_CHECK} more advisory(ies) of this "
                  "scenario (report.json and report.html list every one)")
                 for check_id, count in shown.items() if count > FINDINGS_PER_CHECK]
    if not rows:
        return ""
    return ("### Advisories\n\nNot failures: what the checks advise, apart from the verdict.\n\n"
            + _table(("Scenario", "Check", "Key", "Message"), rows))


def _keyed(key: str, label: str) -> str:
    """A finding's key in its cell: a business key as it is, an object's id after the
    provider's noun for it (``order `467561329779` ``)."""
    return _code(key) if label == "Business key" else f"{label.lower()} {_code(key)}"


def _receiver_logs(report: RunReport) -> str:
    """The receiver's log tail of each scenario with a 5xx finding, in a fenced block
    longer than any run of backticks in it (a receiver's text cannot close it)."""
    blocks = []
    for s in report.scenarios:
        log = s.finding_log
        if log is None:
            continue
        tail = log.tail or "(the receiver wrote nothing during this scenario)"
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", tail)), default=0))
        blocks.append(f"{_code(s.id)}: the last lines of [{_cell(log.path)}]({_link(log.path)})\n\n"
                      f"{fence}text\n{tail}\n{fence}")
    if not blocks:
        return ""
    return "### Receiver log\n\n" + "\n\n".join(blocks)


def _link(path: str) -> str:
    """A relative link target: spaces and parentheses escaped."""
    return path.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def _checklist(report: RunReport) -> str:
    rows = []
    for item in report.checklist:
        evidence = []
        for sid in item.scenarios:
            scenario = report.scenario(sid)
            verdict = item.evidence_verdict(sid) or (scenario.verdict if scenario else None)
            label = verdict_label(verdict) if verdict else "not run"
            elsewhere = report.failed_elsewhere(item, sid)
            if elsewhere is not None:
                label = _failed_elsewhere(label if verdict != "pass" else None, elsewhere)
            evidence.append(f"{_code(sid)} {label}")
        rows.append((_cell(item.title), verdict_label(item.verdict), ", ".join(evidence) or "none"))
    return "### Go-live checklist\n\n" + _table(("Item", "Verdict", "Evidence"), rows)


def _failed_elsewhere(label: str | None, elsewhere: FailedElsewhere) -> str:
    """``no finding here; failed on `counter` (Survives duplicate deliveries)``: a scenario
    that failed on another item's checks is never shown passing."""
    here = f"{label} here" if label else "no finding here"
    on = ", ".join(_code(c) for c in elsewhere.checks) or "another check"
    items = f" ({_cell('; '.join(elsewhere.items))})" if elsewhere.items else ""
    return f"{here}; failed on {on}{items}"


def _not_applicable(report: RunReport) -> str:
    skipped: Sequence[ScenarioReport] = [s for s in report.scenarios if s.verdict == "not_applicable"]
    if not skipped:
        return ""
    lines = [f"- {_code(s.id)}: {_cell(s.reason or 'no reason given')}" for s in skipped]
    return "### Not applicable\n\n" + "\n".join(lines)


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _cell(text: str) -> str:
    """`text` safe inside a table cell or a line: one line, no HTML, no column breaks."""
    text = one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("_", "\\_") \
        .replace("`", "\\`").replace("[", "\\[").replace("]", "\\]")


def _code(text: str) -> str:
    """`text` as inline code, safe inside a table cell."""
    text = one_line(text).replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"
