"""The locally built receivers image runs the project, with host networking."""

import pytest

pytestmark = pytest.mark.docker


def test_receivers_image_imports_the_project(docker_client, receivers_image: str) -> None:
    output = docker_client.containers.run(
        receivers_image,
        ["python", "-c", "import hookproof.simulator, examples.receivers.inbox_sync, httpx; print('ok')"],
        network_mode="host",
        remove=True,
        stdout=True,
        stderr=True,
    )
    assert output.decode() == "ok\n"
