"""Write a run's four reports into a directory, each file replaced atomically."""

from __future__ import annotations

import os
import pathlib
import tempfile

from hookproof.reports.errors import ReportWriteError
from hookproof.reports.html import render_html
from hookproof.reports.json_report import render_json
from hookproof.reports.junit import render_junit
from hookproof.reports.markdown import render_markdown
from hookproof.reports.model import RunReport

#: Format name -> file name, as `write_reports` writes them.
REPORT_FILES = {
    "json": "report.json",
    "junit": "junit.xml",
    "markdown": "summary.md",
    "html": "report.html",
}


def write_reports(report: RunReport, out_dir: str | os.PathLike[str]) -> dict[str, pathlib.Path]:
    """Render every format and write it into `out_dir` (created if missing).

    Everything is rendered before anything is written; each file is written to a
    temporary file in `out_dir` and renamed over the old one, so a reader never sees a
    half-written report. Returns format name -> path (keys of `REPORT_FILES`).

    Raises:
        ReportWriteError: `out_dir` or a file in it cannot be written.
    """
    renderers = {"json": render_json, "junit": render_junit, "markdown": render_markdown, "html": render_html}
    texts = {name: render(report) for name, render in renderers.items()}
    directory = pathlib.Path(out_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportWriteError(f"cannot create the report directory {directory}: {exc}", file=directory) from exc
    paths = {}
    for name, text in texts.items():
        paths[name] = _write_atomic(directory / REPORT_FILES[name], text)
    return paths


def _write_atomic(path: pathlib.Path, text: str) -> pathlib.Path:
    """Write `text` (UTF-8; what is not Unicode, e.g. a lone surrogate from undecodable
    bytes a receiver sent, becomes "?") to `path` through a temporary sibling and a rename."""
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise ReportWriteError(f"cannot write {path}: {exc}", file=path) from exc
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return path
