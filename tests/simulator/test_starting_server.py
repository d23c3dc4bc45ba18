"""The provider server started in the background (`StartingServer`): its port is bound at
once, a request sent before the app is built waits in the socket's queue and is answered,
and a start that fails raises in the caller's thread, at `ready()`."""

from __future__ import annotations

import socket
import threading

import httpx
import pytest

from hookproof.simulator.server import ServerState
from hookproof.simulator.server.runner import StartingServer
from hookproof.simulator.server.state import DEFAULT_API_KEY
from hookproof.simulator.serving import ListenError
from hookproof.simulator.world import World


def test_a_request_sent_while_the_app_is_built_is_answered() -> None:
    world = World(3)
    world.lifecycle()
    customer = world.objects("customer")[0]
    state = ServerState([world])
    answers: list[httpx.Response] = []
    with StartingServer(state) as server:
        assert server.api_base == server.sink_url == f"http://127.0.0.1:{server.port}"
        # The request goes out before ready(): it waits in the listening socket's queue.
        early = threading.Thread(target=lambda: answers.append(httpx.get(
            f"{server.api_base}/v1/customers/{customer}", timeout=30.0,
            headers={"Authorization": f"Bearer {DEFAULT_API_KEY}"})))
        early.start()
        handle = server.ready()
        early.join(60.0)
        assert handle.state is state and handle.port == server.port
        assert [(a.status_code, a.json()["id"]) for a in answers] == [(200, customer)]
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", server.port), timeout=1.0):
        pass  # stopped on leaving: nothing listens


def test_a_port_that_cannot_be_had_fails_at_once() -> None:
    with StartingServer(ServerState()) as first:
        with pytest.raises(ListenError, match=f"cannot listen on 127.0.0.1:{first.port}: address already in use"):
            StartingServer(ServerState(), port=first.port)
        first.ready()


class _NoSink:
    """Not a provider state: the app cannot be built over it."""


def test_a_start_that_fails_raises_at_ready() -> None:
    server = StartingServer(_NoSink())  # type: ignore[arg-type]
    with pytest.raises(AttributeError, match="sink"):
        server.ready()
    server.stop()  # the socket was closed with the error; stopping again is harmless
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", server.port), timeout=1.0):
        pass
