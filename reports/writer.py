"""Write a run's four reports into a directory, each file replaced atomically."""

from __future__ import annotations

import os
import pathlib
import tempfile
from typing import Callable, TextIO

from hookproof.reports.errors import ReportWriteError
from hookproof.reports.html import render_html
from hookproof.reports.json_report import iter_json
from hookproof.reports.junit import write_junit
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

    Each format is rendered into a temporary file in `out_dir`, one after the other
    (report.json piece by piece, `iter_json`; junit.xml as it is serialized,
    `write_junit`; each other text freed once written), and
    only when all four are written are they renamed over the old ones: a reader never
    sees a half-written report, and a format that fails to render replaces nothing.
    Returns format name -> path (keys of `REPORT_FILES`).

    Raises:
        ReportWriteError: `out_dir` or a file in it cannot be written.
    """
    writers: dict[str, Callable[[RunReport, TextIO], object]] = {
        "json": _write_json,
        "junit": write_junit,
        "markdown": lambda r, f: f.write(render_markdown(r)),
        "html": lambda r, f: f.write(render_html(r)),
    }
    directory = pathlib.Path(out_dir)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportWriteError(f"cannot create the report directory {directory}: {exc}", file=directory) from exc
    written: dict[str, str] = {}
    try:
        for name, write in writers.items():
            written[name] = _write_temporary(directory / REPORT_FILES[name], lambda f: write(report, f))
        paths = {}
        for name, tmp in list(written.items()):
            path = directory / REPORT_FILES[name]
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise ReportWriteError(f"cannot write {path}: {exc}", file=path) from exc
            del written[name]
            paths[name] = path
        return paths
    finally:
        for tmp in written.values():
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _write_json(report: RunReport, out: TextIO) -> None:
    """report.json piece by piece (`iter_json`), then its last newline."""
    out.writelines(iter_json(report))
    out.write("\n")


def _write_temporary(path: pathlib.Path, write: Callable[[TextIO], object]) -> str:
    """Have `write` write into a temporary sibling of `path` (UTF-8; what is not Unicode,
    e.g. a lone surrogate from undecodable bytes a receiver sent, becomes "?"), synced and
    readable by all; returns its path, for the caller to rename over `path`."""
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace", newline="\n") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
    except BaseException as exc:  # a renderer's error too: no temporary file left behind
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if isinstance(exc, OSError):
            raise ReportWriteError(f"cannot write {path}: {exc}", file=path) from exc
        raise
    return tmp
