"""write_reports: every format, written atomically into a (new) directory."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from hookproof.reports import (
    REPORT_FILES,
    FindingView,
    ReportError,
    ReportWriteError,
    RunReport,
    load_json,
    render_html,
    render_junit,
    render_markdown,
    write_reports,
)


def test_writes_all_four(run_report: RunReport, tmp_path: Path) -> None:
    out = tmp_path / "a" / "b"
    paths = write_reports(run_report, out)
    assert paths == {name: out / file for name, file in REPORT_FILES.items()}
    assert sorted(p.name for p in out.iterdir()) == sorted(REPORT_FILES.values())  # no temp files left
    assert load_json(paths["json"].read_text(encoding="utf-8")) == run_report
    assert paths["junit"].read_text(encoding="utf-8") == render_junit(run_report)
    assert paths["markdown"].read_text(encoding="utf-8") == render_markdown(run_report)
    assert paths["html"].read_text(encoding="utf-8") == render_html(run_report)


def test_replaces_old_reports(run_report: RunReport, tmp_path: Path) -> None:
    (tmp_path / "summary.md").write_text("old", encoding="utf-8")
    write_reports(run_report, tmp_path)
    assert (tmp_path / "summary.md").read_text(encoding="utf-8") == render_markdown(run_report)


def test_unwritable_directory(run_report: RunReport, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(ReportWriteError) as info:
        write_reports(run_report, blocker / "reports")
    assert isinstance(info.value, ReportError) and info.value.file == blocker / "reports"


def test_unwritable_file_leaves_no_temp(run_report: RunReport, tmp_path: Path) -> None:
    (tmp_path / "report.html").mkdir()  # a directory where the file should go
    with pytest.raises(ReportWriteError) as info:
        write_reports(run_report, tmp_path)
    assert info.value.file == tmp_path / "report.html"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_text_that_is_not_unicode_is_written_replaced(run_report: RunReport, tmp_path: Path) -> None:
    """An error quoting a receiver's undecodable bytes (lone surrogates, as a lenient
    HTTP parser produces) is written with "?" in their place, not a crash."""
    scenarios = list(run_report.scenarios)
    index, scenario = next((i, s) for i, s in enumerate(scenarios) if s.attempts and s.attempts[0].error)
    attempts = (replace(scenario.attempts[0], error="Bad status line \udcff\udcfe"), *scenario.attempts[1:])
    scenarios[index] = replace(scenario, attempts=attempts)
    paths = write_reports(replace(run_report, scenarios=tuple(scenarios)), tmp_path)
    assert "Bad status line ??" in paths["html"].read_text(encoding="utf-8")
    assert load_json(paths["json"].read_text(encoding="utf-8")).scenarios[index].attempts[0].error == (
        "Bad status line ??")


def test_a_format_failing_to_render_replaces_nothing(run_report: RunReport, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """report.json is written piece by piece to its temporary file before the others render;
    a later format that fails still leaves every old report in place and no temporary file."""
    import hookproof.reports.writer as writer

    (tmp_path / "report.json").write_text("old", encoding="utf-8")

    def broken(report: RunReport) -> str:
        raise RuntimeError("cannot render")

    monkeypatch.setattr(writer, "render_html", broken)
    with pytest.raises(RuntimeError, match="cannot render"):
        write_reports(run_report, tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
    assert (tmp_path / "report.json").read_text(encoding="utf-8") == "old"


class OneAtATime(Sequence[FindingView]):
    """A check's findings as a storm's end holds them (rows read back when reached): only read
    in order, never held; counts the passes made over them."""

    passes = 0

    def __init__(self, findings: Sequence[FindingView]) -> None:
        self._findings = tuple(findings)

    def __len__(self) -> int:
        return len(self._findings)

    def __getitem__(self, i: int) -> FindingView:  # type: ignore[override]
        assert i == 0, "read one at a time, in order"
        return self._findings[0]

    def __iter__(self) -> Iterator[FindingView]:
        OneAtATime.passes += 1
        return iter(self._findings)


def test_findings_read_one_at_a_time_render_the_same_files_and_none_is_held(run_report: RunReport,
                                                                           tmp_path: Path) -> None:
    streamed = replace(run_report, scenarios=tuple(
        replace(s, checks=tuple(replace(c, findings=OneAtATime(c.findings)) for c in s.checks))
        for s in run_report.scenarios))
    written = write_reports(run_report, tmp_path / "tuples")
    OneAtATime.passes = 0
    again = write_reports(streamed, tmp_path / "streamed")
    for name, path in written.items():
        assert again[name].read_bytes() == path.read_bytes(), name
    assert OneAtATime.passes > 0
    # no renderer asked for a scenario's findings held together (`ScenarioReport.findings`)
    assert all("findings" not in vars(s) and "advisories" not in vars(s) and "finding_keys" not in vars(s)
               for s in streamed.scenarios)
