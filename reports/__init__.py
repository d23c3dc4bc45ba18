"""Reports: one neutral run model (`reports.model`) and pure renderers of it.

- `render_json` / `load_json`: report.json, versioned (`reports/schema.md`), `iter_json` in pieces, `finding_json`
  one finding (as a history's row keeps it, read back by `finding_of`); `report_document`: its document as JSON
  values, each scenario's part (`scenario_document`) reusable;
- `render_junit`: junit.xml for CI test views (`write_junit` straight to a file);
- `render_markdown`: summary.md for CI step summaries and PR comments;
- `render_html`: report.html, one self-contained page with timelines;
- `write_reports`: all four into a directory, each file replaced atomically.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: public name -> the submodule that defines it (imported on first access, PEP 562)
_EXPORTS: dict[str, str] = {
    "AttemptView": "hookproof.reports.model",
    "CheckView": "hookproof.reports.model",
    "ChecklistItem": "hookproof.reports.model",
    "EffectPoint": "hookproof.reports.model",
    "Evidence": "hookproof.reports.model",
    "FindingView": "hookproof.reports.model",
    "REPORT_FILES": "hookproof.reports.writer",
    "ReportError": "hookproof.reports.errors",
    "ReportFormatError": "hookproof.reports.errors",
    "ReportWriteError": "hookproof.reports.errors",
    "RunReport": "hookproof.reports.model",
    "SCHEMA_VERSION": "hookproof.reports.model",
    "ScenarioReport": "hookproof.reports.model",
    "SchemaVersionError": "hookproof.reports.errors",
    "finding_json": "hookproof.reports.json_report",
    "finding_of": "hookproof.reports.json_report",
    "iter_json": "hookproof.reports.json_report",
    "load_json": "hookproof.reports.json_report",
    "render_html": "hookproof.reports.html",
    "render_json": "hookproof.reports.json_report",
    "render_junit": "hookproof.reports.junit",
    "render_markdown": "hookproof.reports.markdown",
    "report_document": "hookproof.reports.json_report",
    "scenario_document": "hookproof.reports.json_report",
    "write_junit": "hookproof.reports.junit",
    "write_reports": "hookproof.reports.writer",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from hookproof.reports.errors import ReportError, ReportFormatError, ReportWriteError, SchemaVersionError
    from hookproof.reports.html import render_html
    from hookproof.reports.json_report import (
        finding_json,
        finding_of,
        iter_json,
        load_json,
        render_json,
        report_document,
        scenario_document,
    )
    from hookproof.reports.junit import render_junit, write_junit
    from hookproof.reports.markdown import render_markdown
    from hookproof.reports.model import (
        SCHEMA_VERSION,
        AttemptView,
        ChecklistItem,
        CheckView,
        EffectPoint,
        Evidence,
        FindingView,
        RunReport,
        ScenarioReport,
    )
    from hookproof.reports.writer import REPORT_FILES, write_reports

__all__ = [
    "AttemptView",
    "CheckView",
    "ChecklistItem",
    "EffectPoint",
    "Evidence",
    "FindingView",
    "REPORT_FILES",
    "ReportError",
    "ReportFormatError",
    "ReportWriteError",
    "RunReport",
    "SCHEMA_VERSION",
    "ScenarioReport",
    "SchemaVersionError",
    "finding_json",
    "finding_of",
    "iter_json",
    "load_json",
    "render_html",
    "render_json",
    "render_junit",
    "render_markdown",
    "report_document",
    "scenario_document",
    "write_junit",
    "write_reports",
]
