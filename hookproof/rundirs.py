"""Where a run's results go: one folder per run, never another run's folder.

Without ``--out``, each run of `certify`, `explore`, `storm` or `demo` writes into a folder of
its own, ``hookproof-reports/<command>-<UTC time>/`` (e.g. ``certify-20261201T214501Z``),
and ``hookproof-reports/latest`` links to the newest one, so no command overwrites or
deletes what another run wrote. With ``--out DIR`` the results go into DIR itself (for
scripts and CI), which is refused when DIR holds the results of another command's run,
unless ``--force``.

Each run folder carries a marker file (`MARKER`) naming the command that wrote it.

A run refused after its folder was made (a config error found once the receiver or the
observer answers) hands it back with `withdraw`: the folder goes, ``latest`` points where it
pointed before, so a refused run leaves the results as they were.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from hookproof.errors import UsageError
from hookproof.simulator.wording import a_or_an

#: Where runs get their own folders when no ``--out`` is given (relative to the working directory).
DEFAULT_ROOT = Path("hookproof-reports")
#: The link to the newest run folder, inside the root.
LATEST = "latest"
#: The marker file naming the command whose results a folder holds.
MARKER = ".hookproof-run"
#: Files whose presence means a folder holds a run's results.
RESULT_FILES = ("report.json", "history.sqlite", "failing-schedule.json")
#: The UTC time format of run folder names (sorts in time order).
TIME_FORMAT = "%Y%m%dT%H%M%SZ"


@dataclass(frozen=True)
class _Made:
    """What to put back if the run of a folder this process made or claimed is refused."""

    new: bool  # a new run folder (else an --out folder claimed)
    latest: str | None = None  # new: where ``latest`` pointed before
    root_existed: bool = True  # new: whether the folder of runs existed
    existed: bool = False  # --out: whether the folder existed
    marker: str | None = None  # --out: its marker before


#: The folders this process made or claimed.
_MADE: dict[Path, _Made] = {}


def run_dir_name(command: str, at_s: float) -> str:
    """``<command>-<UTC time>`` for a run started at `at_s` (seconds since the epoch)."""
    return f"{command}-{time.strftime(TIME_FORMAT, time.gmtime(at_s))}"


def new_run_dir(command: str, root: Path = DEFAULT_ROOT, *, at_s: float | None = None) -> Path:
    """Create this run's own folder under `root` and point ``root/latest`` at it.

    Two runs started in the same second get ``-2``, ``-3``, … suffixes. The link is
    best effort (a file system without symlinks just has no ``latest``).
    Raises OSError when the folder cannot be created.
    """
    root_existed = root.is_dir()
    root.mkdir(parents=True, exist_ok=True)
    base = run_dir_name(command, time.time() if at_s is None else at_s)
    for n in range(1, 1000):
        path = root / (base if n == 1 else f"{base}-{n}")
        try:
            path.mkdir()
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"{root}: too many runs named {base}")
    mark(path, command)
    link = root / LATEST
    before: str | None = None
    with contextlib.suppress(OSError):
        before = os.readlink(link)
    _point_latest(root, path.name)
    _MADE[path] = _Made(new=True, latest=before, root_existed=root_existed)
    return path


def _point_latest(root: Path, name: str) -> None:
    """Point ``root/latest`` at `name` (best effort)."""
    tmp = root / f".{LATEST}.{os.getpid()}"
    with contextlib.suppress(OSError):
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(name, target_is_directory=True)
        os.replace(tmp, root / LATEST)


def _holds_results(path: Path, *, depth: int = 1) -> bool:
    """Whether `path` holds something a refused run must not take away: a report, a
    failing schedule, or a history with attempts (something was sent), in it or, `depth`
    levels down, in a folder of it (the demo's one folder per receiver)."""
    if any((path / name).exists() for name in RESULT_FILES if name != "history.sqlite"):
        return True
    if depth > 0 and path.is_dir() and any(_holds_results(child, depth=depth - 1)
                                           for child in path.iterdir() if child.is_dir()):
        return True
    history = path / "history.sqlite"
    if not history.is_file():
        return False
    try:
        db = sqlite3.connect(f"{history.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
        try:
            (attempts,) = db.execute("SELECT COUNT(*) FROM attempts").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return False  # no table of attempts: nothing was recorded
    return bool(attempts)


def withdraw(path: Path | None) -> bool:
    """Hand back the folder `run_out` made or claimed for a run that was refused before it
    sent anything (a usage or config error): a new run folder is removed and ``latest``
    points where it pointed before (unless another run moved it since); an ``--out`` folder
    is removed if the run created it, else gets its earlier marker back. A folder holding a
    report, a failing schedule or a history with attempts is kept. True when handed back."""
    if path is None or (record := _MADE.pop(path, None)) is None or _holds_results(path):
        return False
    if record.new:
        shutil.rmtree(path, ignore_errors=True)
        link = path.parent / LATEST
        with contextlib.suppress(OSError):
            if os.readlink(link) == path.name:
                if record.latest is None:
                    link.unlink()
                else:
                    _point_latest(path.parent, record.latest)
        if not record.root_existed:
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # only when empty: made for this run alone
        return True
    if not record.existed:
        shutil.rmtree(path, ignore_errors=True)
    elif record.marker is None:
        (path / MARKER).unlink(missing_ok=True)
    else:
        (path / MARKER).write_text(record.marker, encoding="utf-8")
    return True


def mark(path: Path, command: str) -> None:
    """Record in `path` that it holds the results of a `command` run."""
    (path / MARKER).write_text(command + "\n", encoding="utf-8")


def owner(path: Path) -> str | None:
    """The command whose results `path` holds: its marker, else "an earlier run" when it
    holds result files without one, else None (empty or absent)."""
    try:
        return (path / MARKER).read_text(encoding="utf-8").strip() or "an earlier"
    except OSError:
        pass
    return "an earlier" if any((path / name).exists() for name in RESULT_FILES) else None


def claim_out(out: Path, command: str, *, force: bool = False) -> Path:
    """Make ``--out`` DIR this `command` run's folder.

    Raises UsageError naming the folder when it holds another command's results and
    `force` is False (a run of the same command may write there again).
    """
    holder = owner(out)
    if holder is not None and holder != command and not force:
        what = "an earlier run" if holder == "an earlier" else f"{a_or_an(holder)} run"
        raise UsageError(f"--out: {out} holds the results of {what}; choose another folder, leave --out out "
                         "(each run then gets its own folder under hookproof-reports/) or pass --force to "
                         "overwrite them")
    existed = out.is_dir()
    marker: str | None = None
    with contextlib.suppress(OSError):
        marker = (out / MARKER).read_text(encoding="utf-8")
    out.mkdir(parents=True, exist_ok=True)
    mark(out, command)
    _MADE[out] = _Made(new=False, existed=existed, marker=marker)
    return out


def run_out(out: Path | None, command: str, *, force: bool = False) -> Path:
    """This run's report folder: ``--out`` if given (`claim_out`), else a new one (`new_run_dir`)."""
    return new_run_dir(command) if out is None else claim_out(out, command, force=force)


def latest_history(root: Path = DEFAULT_ROOT) -> Path | None:
    """The history.sqlite of the newest run under `root` that has one, or None: by the UTC time
    in the folder's name (`run_dir_name`), or for a folder named otherwise (an ``--out`` under
    it, ``hookproof-reports/ci``) by when its history was last written."""
    found: list[tuple[float, str, Path]] = []
    with contextlib.suppress(OSError):
        for child in root.iterdir():
            history = child / "history.sqlite"
            if child.name != LATEST and not child.is_symlink() and history.is_file():
                found.append((_run_time(child.name, history), child.name, history))
    return max(found)[2] if found else None


def _run_time(name: str, history: Path) -> float:
    """When the run in folder `name` ran, seconds since the epoch: its name's UTC time, else its
    `history`'s modification time."""
    import calendar
    import re

    if (stamp := re.search(r"-(\d{8}T\d{6}Z)(?:-\d+)?$", name)) is not None:  # certify-<time>, or -2 after it
        with contextlib.suppress(ValueError):
            return float(calendar.timegm(time.strptime(stamp[1], TIME_FORMAT)))
    with contextlib.suppress(OSError):
        return history.stat().st_mtime
    return 0.0
