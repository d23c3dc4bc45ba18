"""Virtual environments for packages that cannot share hookproof's own (other pins of
stripe, pydantic or Django), built once from a requirements file and reused.

`venv_python(requirements)` returns the Python of a venv holding exactly those
requirements. The wheels are downloaded from PyPI into a wheelhouse (``pip download``,
cached, so a rebuild installs offline) and the venv is built next to it, both under
``$HOOKPROOF_TEST_CACHE`` (default ``~/.cache/hookproof/test-venvs``), keyed by the
requirements' text and this Python's version, never inside the repository. A venv is
used only once its install finished (a marker file), and one file lock per key keeps two
test processes from building it at once (`built_once` keeps files made with a venv,
such as a migrated database, the same way). A failed download or install is a missing
service (`tests.support.require_service`): skipped locally, a failure under ``CI=true``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Sequence

from tests.support import require_service

#: Bounds on building one venv (seconds).
VENV_TIMEOUT_S = 120
INSTALL_TIMEOUT_S = 600


def cache_root() -> Path:
    """Where wheelhouses and venvs are kept (``HOOKPROOF_TEST_CACHE`` or the user's cache)."""
    return Path(os.environ.get("HOOKPROOF_TEST_CACHE") or Path.home() / ".cache" / "hookproof" / "test-venvs")


def venv_python(requirements: Path, name: str) -> Path:
    """The Python of a venv holding `requirements` (built on first use); `name` says what for."""
    text = requirements.read_text(encoding="utf-8")
    key = hashlib.sha256(f"{sys.version_info[:2]}\n{text}".encode()).hexdigest()[:16]
    root = cache_root() / f"{name}-{key}"
    root.mkdir(parents=True, exist_ok=True)
    venv, wheels, done = root / "venv", root / "wheels", root / "installed"
    python = venv / "bin" / "python"
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists() and python.exists():
            return python
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=VENV_TIMEOUT_S)
        for step in (["download", "-q", "-d", str(wheels), "-r", str(requirements)],
                     ["install", "-q", "--no-index", "--find-links", str(wheels), "-r", str(requirements)]):
            run = subprocess.run([str(python), "-m", "pip", *step], capture_output=True, text=True,
                                 timeout=INSTALL_TIMEOUT_S)
            if run.returncode != 0:
                last = (run.stderr.strip().splitlines() or ["pip failed"])[-1]
                require_service(f"{name} from PyPI", f"pip {step[0]}: {last}")
        done.write_text(text, encoding="utf-8")
    return python


def built_once(python: Path, name: str, inputs: Sequence[Path], build: Callable[[Path], None]) -> Path:
    """A file `build(path)` makes with the venv of `python` (a migrated database, say), kept
    beside that venv and rebuilt only when the text of `inputs` changes; returns its path.

    Copy it before changing it: every test of every session gets the same file.
    """
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(inputs))).hexdigest()[:16]
    root = python.parent.parent.parent
    target = root / f"{name}-{digest}"
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            partial = root / f"{name}-{digest}.partial"
            partial.unlink(missing_ok=True)
            build(partial)
            shutil.move(partial, target)
    return target


__all__ = ["built_once", "cache_root", "venv_python"]
