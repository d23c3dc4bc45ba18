"""Session services shared by the whole suite: PostgreSQL, docker, Chromium.

Every service fixture goes through ``require_service``: when the service is missing the
test is skipped locally and fails under ``CI=true`` (see tests/README.md).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.support import PostgresServer, find_postgres_bin, require_service

# A test that uses one of these fixtures gets the matching marker, so `-m "not docker"`
# deselects it even if its module forgot `pytestmark`.
SERVICE_MARKERS = {"postgres_url": "postgres", "docker_client": "docker", "chromium_path": "chromium"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, marker in SERVICE_MARKERS.items():
            if fixture in getattr(item, "fixturenames", ()) and item.get_closest_marker(marker) is None:
                item.add_marker(marker)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """SQLAlchemy URL of a throwaway PostgreSQL database, alive for the whole session."""
    bindir = find_postgres_bin()
    if bindir is None:
        require_service("PostgreSQL", "initdb/pg_ctl not found (apt-get install postgresql)")
    try:
        server = PostgresServer(bindir)
    except (KeyError, RuntimeError) as exc:
        error = f"cannot run the server here: {exc}"
    else:
        error = None
    if error is not None:
        require_service("PostgreSQL", error)
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(scope="session")
def docker_client() -> Iterator[object]:
    """A docker SDK client connected to a live daemon."""
    try:
        import docker
    except ImportError:
        require_service("docker", "the docker SDK is not installed (pip install -e '.[chaos]')")
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except docker.errors.DockerException as exc:
        error = f"the daemon is unreachable: {exc}"
    else:
        error = None
    if error is not None:
        require_service("docker", error)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Path of a Chromium binary for headless rendering (as root it needs --no-sandbox)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    require_service("Chromium", "no chromium binary on PATH (apt-get install chromium)")
