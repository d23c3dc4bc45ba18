"""Fixtures for container-level chaos tests."""

from __future__ import annotations

import pytest

from tests.support import RECEIVERS_IMAGE, require_service


@pytest.fixture(scope="session")
def receivers_image(docker_client) -> str:
    """The locally built image with the project installed (chaos/images/build_base.sh)."""
    import docker

    try:
        docker_client.images.get(RECEIVERS_IMAGE)
    except docker.errors.ImageNotFound:
        require_service(RECEIVERS_IMAGE, "image not built; run chaos/images/build_base.sh as root")
    return RECEIVERS_IMAGE
