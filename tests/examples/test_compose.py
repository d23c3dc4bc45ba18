"""examples/compose/storm.yml: a storm master and N workers from the hookproof image.

The file's structure (both services on the host network, from the image the chaos tests
build, the master's port and host the workers' too), every hookproof command and flag it
uses (parsed by the CLI as `tests/test_ci_templates.py` parses the CI templates), the
usage its header and the README show; and, marked slow, the real thing: `docker-compose`
starts two workers, runs the master (which waits for both) against a correct receiver on
the host's loopback, the storm passes and both workers exit 0.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from tests.support import TOOL_IMAGE, free_port, require_service
from tests.test_ci_templates import check_command

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "examples" / "compose" / "storm.yml"
IMAGE = TOOL_IMAGE
SECRET = "whsec_compose_test_0123456789abcdef"
#: The user the master runs as in the slow test (HOOKPROOF_USER): not root, as the README asks.
USER = "1000:1000"
#: `${NAME:-default}` in the file: compose's interpolation with a default.
DEFAULTED = re.compile(r"\$\{(\w+):-([^}]*)\}")


def _services() -> dict[str, Any]:
    doc = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return doc["services"]


def _with_defaults(words: list[str], env: dict[str, str] | None = None) -> list[str]:
    """`words` as compose would pass them: each `${NAME:-default}` from `env`, else its default."""
    env = env or {}
    return [DEFAULTED.sub(lambda m: env.get(m.group(1), m.group(2)), str(w)) for w in words]


def _flag(words: list[str], name: str) -> str:
    return words[words.index(name) + 1]


def test_a_master_and_workers_from_the_image_on_the_host_network() -> None:
    services = _services()
    assert set(services) == {"master", "worker"}
    for service in services.values():
        assert service["image"] == "${HOOKPROOF_IMAGE:-hookproof/hookproof:latest}"  # build_base.sh's tag
        assert _with_defaults([service["image"]], {"HOOKPROOF_IMAGE": IMAGE}) == [IMAGE]
        assert service["network_mode"] == "host"
        assert "ports" not in service  # host networking: nothing to publish
    master, worker = services["master"], services["worker"]
    assert master["working_dir"] == "/project" and master["volumes"] == ["${PWD}:/project"]
    assert master["environment"] == ["WEBHOOK_SECRET"]  # the secret comes from the shell, never the file
    assert "environment" not in worker and "volumes" not in worker  # workers need no config and no secret
    m, w = master["command"], worker["command"]
    assert m[0] == "storm" and w[0] == "storm-worker"
    assert _flag(m, "--master-bind-host") == _flag(w, "--master-host") == "127.0.0.1"
    assert _flag(m, "--master-bind-port") == _flag(w, "--master-port") == "${MASTER_PORT:-5557}"
    assert _flag(m, "--workers-expected") == "${WORKERS:-2}"
    assert _flag(m, "--out") == "storm-report"  # under working_dir: the paths it prints exist on the host too
    assert master["user"] == "${HOOKPROOF_USER:-0:0}" and "user" not in worker  # only the master writes files


@pytest.mark.parametrize("service", ["master", "worker"])
def test_every_command_and_flag_exists(service: str) -> None:
    check_command(_with_defaults(_services()[service]["command"]))


def _usage(text: str) -> list[list[str]]:
    """The docker-compose lines of `text` (comment or Markdown), as words."""
    lines = [re.sub(r"^#\s*", "", line).strip() for line in text.splitlines()]
    found = []
    for line in lines:
        words = shlex.split(line) if "docker-compose" in line else []
        if words:
            found.append(words[words.index("docker-compose"):])
    return found


def test_the_header_and_the_readme_show_the_same_usage() -> None:
    header = _usage(COMPOSE.read_text(encoding="utf-8"))
    readme = _usage((ROOT / "README.md").read_text(encoding="utf-8"))
    assert header and header == readme
    assert [w[w.index("-f") + 1] for w in header] == ["storm.yml"] * len(header)  # the copy next to hookproof.toml
    assert [w[w.index("-p") + 1] for w in header] == ["storm-$(id -un)"] * len(header)  # a project of one's own
    up, run, down = header
    assert up[-4:] == ["-d", "--scale", "worker=2", "worker"] and run[-3:] == ["run", "--rm", "master"]
    assert down[-1] == "down"


def test_the_readme_shows_the_whole_file_for_users_without_a_clone() -> None:
    """pip users have no examples/ folder: the README's ``storm.yml`` block is the file itself."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```yaml storm\.yml\n(.*?)```", readme, flags=re.S)
    assert yaml.safe_load(block) == yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    text = COMPOSE.read_text(encoding="utf-8")
    assert block == text[text.index("services:"):]


@pytest.fixture()
def receiver(tmp_path: Path) -> Iterator[int]:
    """inbox_sync (correct) on the host's loopback, its effects in tmp_path/receiver.db."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "hookproof.receivers.inbox_sync", "--port", str(port),
                             "--db", f"sqlite:///{tmp_path / 'receiver.db'}", "--secret", SECRET],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, umask=0)
    assert proc.stdout is not None
    assert "listening on" in proc.stdout.readline()
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.docker
@pytest.mark.slow
def test_compose_runs_a_storm_against_a_loopback_receiver(docker_client: Any, receiver: int, tmp_path: Path) -> None:
    import docker

    compose = shutil.which("docker-compose")
    if compose is None:
        require_service("docker-compose", "install Debian's docker-compose (.ci/run does)")
    try:
        docker_client.images.get(IMAGE)
    except docker.errors.ImageNotFound:
        require_service(IMAGE, "image not built; run chaos/images/build_base.sh as root")
    (tmp_path / "hookproof.toml").write_text(f"""
[target]
url = "http://127.0.0.1:{receiver}/webhooks"
profile = "stripe"
secret = "env:WEBHOOK_SECRET"

[observer]
kind = "sql"
url = "sqlite:///receiver.db"
effects = "SELECT business_key, amount FROM effects"
state = "SELECT object_id, status, version FROM subscription_states"

[settle]
window_s = 0.2
""", encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PWD": str(tmp_path), "WEBHOOK_SECRET": SECRET,
           "WORKERS": "2", "USERS": "4", "DURATION": "8s", "MASTER_PORT": str(free_port()),
           "HOOKPROOF_IMAGE": IMAGE, "HOOKPROOF_USER": USER}
    tmp_path.chmod(0o777)  # the folder a user owns: the master writes its report there as that user
    base = [compose, "-f", str(COMPOSE), "-p", f"hookproof{receiver}"]
    up, run, _ = _usage(COMPOSE.read_text(encoding="utf-8"))
    try:
        started = subprocess.run([*base, *up[5:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert started.returncode == 0, started.stderr
        master = subprocess.run([*base, *run[5:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert master.returncode == 0, master.stdout[-3000:] + master.stderr[-3000:]
        workers = subprocess.run([*base, "ps", "-q", "worker"], cwd=tmp_path, env=env, capture_output=True,
                                 text=True, timeout=60).stdout.split()
        assert len(workers) == 2
        codes = [docker_client.containers.get(c).attrs["State"]["ExitCode"] for c in workers]
        assert codes == [0, 0]
    finally:
        subprocess.run([*base, "down"], cwd=tmp_path, env=env, capture_output=True, timeout=120)
    report = json.loads((tmp_path / "storm-report" / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "pass" and [s["id"] for s in report["scenarios"]] == ["storm"]
    assert (tmp_path / "storm-report" / "report.json").stat().st_uid == 1000  # HOOKPROOF_USER's, not root's
    assert "storm-report/report.json" in master.stdout and "/project/" not in master.stdout
    assert "waiting 60 s for 2 worker(s)" in master.stdout + master.stderr
    assert re.search(r"storm: [1-9]\d* attempts", master.stdout), master.stdout[-2000:]
    assert SECRET not in master.stdout + master.stderr + json.dumps(report)
