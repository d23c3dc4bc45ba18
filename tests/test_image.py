"""The container image (the top-level Dockerfile): `docker run … hookproof certify` against a
receiver on the host network, for teams whose receiver is not written in Python."""

from __future__ import annotations

import json
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from tests.support import TOOL_IMAGE, free_port, require_service

SECRET = "whsec_image_test_0123456789abcdef"
#: The user the README's `--user "$(id -u):$(id -g)"` stands for here: not root.
USER = "1000:1000"

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CONFIG = """\
[target]
url = "http://127.0.0.1:{port}/webhooks"
profile = "stripe"
secret = "env:WEBHOOK_SECRET"

[observer]
kind = "sql"
url = "sqlite:///receiver.db"
effects = "SELECT business_key, amount FROM effects"
state = "SELECT object_id, status, version FROM subscription_states"

[settle]
window_s = 0.2
"""


@pytest.fixture(scope="module")
def tool_image(docker_client: object) -> str:
    import docker

    try:
        docker_client.images.get(TOOL_IMAGE)  # type: ignore[attr-defined]
    except docker.errors.ImageNotFound:
        require_service(TOOL_IMAGE, "image not built; run chaos/images/build_base.sh as root")
    return TOOL_IMAGE


@pytest.fixture()
def receiver(tmp_path: Path) -> Iterator[int]:
    """inbox_sync on the host, keeping its effects in tmp_path/receiver.db."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "hookproof.receivers.inbox_sync", "--port", str(port),
                             "--db", f"sqlite:///{tmp_path / 'receiver.db'}", "--secret", SECRET],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, umask=0)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the receiver did not start") from None
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def readme_docker_command(folder: Path) -> list[str]:
    """The README's `docker run … certify` line, run in `folder`."""
    text = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    line = next(line for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)
                for line in block.splitlines() if line.startswith("docker run"))
    return [word.replace("$PWD", str(folder)).replace("$(id -u):$(id -g)", USER) for word in shlex.split(line)]


def test_the_image_certifies_a_receiver_on_the_host_network(tool_image: str, receiver: int, tmp_path: Path) -> None:
    (tmp_path / "hookproof.toml").write_text(CONFIG.format(port=receiver))
    argv = readme_docker_command(tmp_path)
    assert argv[-2:] == ["hookproof/hookproof", "certify"] and f"{tmp_path}:/project" in argv
    assert argv[argv.index("--user") + 1] == USER
    tmp_path.chmod(0o777)  # the folder a user owns (the receiver's files are made with umask 0)
    argv[-2] = tool_image
    run = subprocess.run([*argv, "duplicate-sequential", "reorder", "--out", "/project/out"],
                         env={"WEBHOOK_SECRET": SECRET, "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"] == "pass"
    assert (tmp_path / "out" / "report.json").stat().st_uid == 1000  # the user's, not root's
    assert sorted(s["id"] for s in report["scenarios"]) == ["duplicate-sequential", "reorder"]
    assert SECRET not in run.stdout + run.stderr + (tmp_path / "out" / "report.json").read_text()


def test_the_image_runs_every_command(tool_image: str) -> None:
    run = subprocess.run(["docker", "run", "--rm", tool_image, "--help"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    for command in ("certify", "explore", "storm", "send", "replay", "report"):
        assert command in run.stdout


DOCKER_CONFIG = """\
[target]
url = "http://127.0.0.1:{port}/webhooks"
profile = "stripe"
secret = "env:WEBHOOK_SECRET"

[target.docker]
image = "{image}"
command = "python -m examples.receivers.inbox_sync --port {{port}} --db sqlite:////data/receiver.db --secret {secret}"
volumes = {{ "." = "/data" }}

[observer]
kind = "sql"
url = "sqlite:///receiver.db"
effects = "SELECT business_key, amount FROM effects"
state = "SELECT object_id, status, version FROM subscription_states"

[settle]
window_s = 0.5

[chaos]
events = 3
kill_trials = 2
"""


def test_the_image_starts_a_docker_target_through_the_mounted_socket(tool_image: str, tmp_path: Path) -> None:
    """The image has the chaos extra (the docker SDK): with the daemon's socket mounted and the
    folder at its own path, `[target.docker]` starts the receiver's container and `--chaos`
    kills and restarts it. Before, the image's hookproof died with ModuleNotFoundError."""
    from tests.support import RECEIVERS_IMAGE

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    (line,) = [line for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)
               for line in block.splitlines() if line.startswith("docker run") and "docker.sock" in line]
    socket_group = str(Path("/var/run/docker.sock").stat().st_gid)
    # root: the receiver's container writes its SQLite file (and WAL) as root, which the observer then opens
    argv = [word.replace("$PWD", str(tmp_path)).replace("$(id -u):$(id -g)", "0:0")
            .replace("$(stat -c %g /var/run/docker.sock)", socket_group) for word in shlex.split(line)]
    assert argv[-3:] == ["hookproof/hookproof", "certify", "--chaos"], argv
    assert "/var/run/docker.sock:/var/run/docker.sock" in argv and f"{tmp_path}:{tmp_path}" in argv
    (tmp_path / "hookproof.toml").write_text(DOCKER_CONFIG.format(port=free_port(), image=RECEIVERS_IMAGE,
                                                                  secret=SECRET))
    argv[-3] = tool_image
    run = subprocess.run([*argv, "duplicate-sequential", "kill-during-processing", "--out", "out"],
                         env={"WEBHOOK_SECRET": SECRET, "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert {s["id"]: s["verdict"] for s in report["scenarios"]} == {"duplicate-sequential": "pass",
                                                                     "kill-during-processing": "pass"}
