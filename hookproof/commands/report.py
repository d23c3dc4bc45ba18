"""`hookproof report [FILE|DIR | --history FILE|DIR] [--out DIR]`: re-render the reports of a saved run.

Without a value (or without ``--history``) it re-renders the newest run under
``hookproof-reports/`` that has a history; a run folder stands for its history.sqlite,
and a folder of run folders for the newest of them that has one. With none, one line says
where it looked and what to pass instead (the demo's runs, which are in a folder of their
own; explore runs keep no history).

`certify` stores the run's report (report.json's document) in the history's meta after
every scenario (`scenarios.report_views.REPORT_META_KEY`), a storm at its end with each
finding a row of its own (`scenarios.saved_report`), so the history alone is enough to
write report.json, junit.xml, summary.md and report.html again, also for a run that was
interrupted or killed before it wrote them (the report then says it is partial). A storm's
findings are rendered from their rows a view at a time (`saved_report.stored_report`), never
held together (a failing storm of a million attempts has ~850,000). Once the
receiver's log is linked, the report as written is stored again
(`hookproof.receiver_log.store_linked_report`), so a re-render in place holds the same;
a history saved without it is not rendered over reports that quote the log (use ``--out``).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Annotated, Optional

import typer


def register(app: typer.Typer) -> None:
    """Add the `report` command to `app`."""
    app.command("report")(report)


def report(
    folder: Annotated[Optional[Path], typer.Argument(help="The same as --history: a history.sqlite or a run folder.", show_default=False)] = None,
    history: Annotated[Optional[Path], typer.Option("--history", help="A history.sqlite written by 'hookproof certify' or 'hookproof storm', or a run folder (default: the newest run under hookproof-reports/ with a history).", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Report directory (default: the history's directory).")] = None,
) -> None:
    """Re-render the reports (JSON, JUnit XML, Markdown, HTML) from a saved history."""
    from hookproof.reports import ReportError, load_json, write_reports
    from hookproof.rundirs import DEFAULT_ROOT
    from hookproof.scenarios.report_views import REPORT_META_KEY
    from hookproof.scenarios.saved_report import APART_VERSION, stored_report
    from hookproof.terminal import console, fail

    if folder is not None and history is not None:
        raise fail(f"give the run once: {folder} as the argument, or --history {history}")
    given = history if history is not None else folder
    history = find_history(given if given is not None else DEFAULT_ROOT)
    if history is None:
        raise fail(f"--history: {no_history(given)}")
    stored = None
    try:
        # the report without its findings when they are rows: rendered from those rows, a view at a time
        # (`saved_report.stored_report`; a failing storm of a million attempts has ~850,000)
        meta, attempts = read_saved(history, REPORT_META_KEY, findings=False)
        document = meta.get(REPORT_META_KEY)
        if isinstance(document, dict) and document.get("schema_version") == APART_VERSION:
            stored = stored_report(history, immutable=not _being_written(history))
    except ReportError as exc:
        raise fail(f"--history: {exc}") from None
    except (sqlite3.Error, ValueError) as exc:
        raise fail(f"--history: {history} is not a readable hookproof history ({type(exc).__name__})") from None
    if not isinstance(document, dict):
        raise fail(f"--history: {history} holds no report (it was not written by 'hookproof certify' or "
                   f"'hookproof storm', or the run stopped before its first scenario finished; {attempts} "
                   "attempt(s) recorded)")
    if out is None and (lost := _would_lose(document, history.parent)):
        raise fail(f"--history: re-rendering {history.parent} in place would drop {lost} from its reports (the history "
                   "was saved before they were added); pass --out DIR to render it elsewhere")
    try:
        run = stored if stored is not None else load_json(json.dumps(document))
        paths = write_reports(run, out if out is not None else history.parent)
    except ReportError as exc:
        raise fail(f"--history: {exc}") from None
    state = "partial run" if run.partial else "complete run"
    console.print(f"verdict: {run.verdict.upper()} ({state}, {len(run.scenarios)} scenario(s), "
                  f"{attempts} attempt(s) in the history)", markup=False)
    for name, path in paths.items():
        console.print(f"  {name}: {path}", markup=False)
    raise typer.Exit(0)


#: Where `hookproof demo` writes its receivers' runs (one folder each, with a history).
DEMO_FOLDERS = ("hookproof-demo",)


def no_history(given: Path | None) -> str:
    """Why there is nothing to re-render at `given` (None or the default folder: the newest
    run under it), saying where it looked and what to pass: the demo's runs (in their own
    folder), and that explore runs keep no history."""
    from hookproof.rundirs import DEFAULT_ROOT

    looked = given if given is not None else DEFAULT_ROOT
    default = looked == DEFAULT_ROOT
    said = (f"no run under {looked}/ has a history" if default and looked.is_dir() else
            f"no {looked}/ folder here (runs write there)" if default else
            f"no history file at {looked}" + (" (nor in a run folder under it)" if looked.is_dir() else ""))
    hints = []
    explores = sorted(p.name for p in looked.glob("explore-*") if p.is_dir()) if looked.is_dir() else []
    if explores:
        hints.append(f"its {len(explores)} explore run(s) keep none: explore writes report.json and, "
                     "after a finding, failing-schedule.json for 'hookproof replay'")
    demos = [d / name for d in map(Path, DEMO_FOLDERS) for name in _demo_runs(d)]
    demos += [d for run in sorted(DEFAULT_ROOT.glob("demo-*"))[-1:] for d in (run / name for name in _demo_runs(run))]
    if demos:
        hints.append("the demo's runs are in their own folder: pass --history " + " or --history ".join(map(str, demos)))
    elif default:
        hints.append("run 'hookproof certify' first, or pass --history with a history.sqlite or a run folder")
    return said + ("; " + "; ".join(hints) if hints else "")


def _demo_runs(folder: Path) -> list[str]:
    """The receivers of a demo's folder that have a history, by name."""
    try:
        return sorted(p.name for p in folder.iterdir() if (p / "history.sqlite").is_file())
    except OSError:
        return []


def _would_lose(document: dict[str, object], folder: Path) -> str | None:
    """What the report.json in `folder` holds that `document` (the history's saved report)
    does not: the receiver's log a run linked after its history was saved (histories of
    older versions); None when nothing would be lost."""
    try:
        written = json.loads((folder / "report.json").read_bytes())
    except (OSError, ValueError):
        return None
    if isinstance(written, dict) and written.get("receiver_log") and not document.get("receiver_log"):
        return f"the receiver's log ({written['receiver_log']}) and the tails its 5xx findings quote"
    return None


def find_history(path: Path) -> Path | None:
    """The history `path` stands for: itself (a file), the history.sqlite of a run folder,
    or that of the newest run under a folder of runs (`hookproof.rundirs.latest_history`); None if none."""
    from hookproof.rundirs import latest_history

    if path.is_file():
        return path
    if (path / "history.sqlite").is_file():
        return path / "history.sqlite"
    return latest_history(path) if path.is_dir() else None


def _being_written(path: Path) -> bool:
    """Whether a writer may hold the history at `path` open: a ``-wal`` is beside it (one no
    writer holds has none, and is read as immutable: a read-only connection leaves no ``-wal``
    and ``-shm`` of its own behind, which it could not remove)."""
    return path.with_name(path.name + "-wal").exists()


def read_saved(path: Path, key: str, *, findings: bool = True) -> tuple[dict[str, object], int]:
    """({meta key: value} holding only `key` if present, attempt count) of a history, opened read-only.

    The report (`key` `REPORT_META_KEY`) is report.json's document whichever form the history
    keeps it in (`scenarios.saved_report.saved_document`: a storm's findings read back from
    their rows); with `findings` False, the meta value as stored (a report saved apart from its
    findings without them, ``schema_version`` `saved_report.APART_VERSION`). Raises
    sqlite3.Error when the file is not an SQLite history, ValueError for bad JSON or findings'
    rows that do not fit their report.
    """
    from hookproof.scenarios.report_views import REPORT_META_KEY
    from hookproof.scenarios.saved_report import saved_document

    writing = _being_written(path)
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro{'' if writing else '&immutable=1'}", uri=True,
                         timeout=5.0)
    try:
        if key == REPORT_META_KEY and findings:  # either form a history keeps it in, as report.json's document
            document = saved_document(db)
        else:
            row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
            document = json.loads(row[0]) if row else None
        (attempts,) = db.execute("SELECT COUNT(*) FROM attempts").fetchone()
    finally:
        db.close()
    return ({key: document} if document is not None else {}), int(attempts)
