"""chaos/images/build_base.sh tags the images it builds as it is told.

It always tagged ``hookproof/base:latest``, ``hookproof/receivers:latest`` and
``hookproof/hookproof:latest``, overwriting the images others on a shared docker daemon
use. The tags now come from HOOKPROOF_BASE_IMAGE, HOOKPROOF_RECEIVERS_IMAGE and
HOOKPROOF_IMAGE (those defaults), and both images are built FROM the base tag given.
Run here with stand-ins for ``docker`` and ``id`` (no daemon, no root) and a cached rootfs,
so what the script asks docker for is what is checked."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "chaos" / "images" / "build_base.sh"


def _docker_calls(tmp_path: Path, **tags: str) -> list[list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "docker.log"
    (bin_dir / "docker").write_text(f'#!/bin/sh\nprintf "%s\\t" "$@" >> "{log}"\necho >> "{log}"\n', encoding="utf-8")
    (bin_dir / "id").write_text("#!/bin/sh\necho 0\n", encoding="utf-8")
    for stub in bin_dir.iterdir():
        stub.chmod(0o755)
    cache = tmp_path / "cache"
    cache.mkdir()
    key = hashlib.sha256(b"bookworm|python3 python3-venv").hexdigest()[:12]
    (cache / f"rootfs-bookworm-minbase-{key}.tar").write_bytes(b"a cached rootfs")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOOKPROOF_")}
    env.update(PATH=f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}", HOOKPROOF_CACHE_DIR=str(cache), **tags)
    run = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return [line.rstrip("\t").split("\t") for line in log.read_text(encoding="utf-8").splitlines() if line]


def _built(calls: list[list[str]]) -> list[tuple[str, str, str]]:
    """(tag, dockerfile, base build-arg) of each docker build."""
    builds = []
    for c in calls:
        if c[0] == "build":
            base = next(a for a in c if a.startswith("BASE_IMAGE="))
            builds.append((c[c.index("-t") + 1], Path(c[c.index("-f") + 1]).name, base))
    return builds


@pytest.mark.parametrize("tags", [{}, {"HOOKPROOF_BASE_IMAGE": "me/base:t1", "HOOKPROOF_RECEIVERS_IMAGE": "me/receivers:t1",
                                       "HOOKPROOF_IMAGE": "me/hookproof:t1"}], ids=["defaults", "given"])
def test_build_base_tags_the_images_as_told(tmp_path: Path, tags: dict[str, str]) -> None:
    calls = _docker_calls(tmp_path, **tags)
    base = tags.get("HOOKPROOF_BASE_IMAGE", "hookproof/base:latest")
    imported = [c for c in calls if c[0] == "import"]
    assert len(imported) == 1 and imported[0][-1] == base
    assert _built(calls) == [
        (tags.get("HOOKPROOF_RECEIVERS_IMAGE", "hookproof/receivers:latest"), "receivers.Dockerfile", f"BASE_IMAGE={base}"),
        (tags.get("HOOKPROOF_IMAGE", "hookproof/hookproof:latest"), "Dockerfile", f"BASE_IMAGE={base}"),
    ]
    if tags:  # nothing another user's default tags name was touched
        assert not any(w.startswith("hookproof/") for c in calls for w in c), calls


def test_both_dockerfiles_build_from_the_base_tag_given() -> None:
    for dockerfile in (ROOT / "Dockerfile", ROOT / "chaos" / "images" / "receivers.Dockerfile"):
        lines = dockerfile.read_text(encoding="utf-8").splitlines()
        assert "ARG BASE_IMAGE=hookproof/base:latest" in lines and "FROM ${BASE_IMAGE}" in lines, dockerfile
