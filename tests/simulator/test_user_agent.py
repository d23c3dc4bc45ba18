"""Every sender sends a profile's own User-Agent, or none, never its HTTP library's.

Captured by a real HTTP server on 127.0.0.1: `hookproof send` (the dispatcher certify, explore
and replay deliver with), the dispatcher's byte-synchronised bursts, and the httpx client
`make_client` builds, for a profile with a documented User-Agent (Paddle: ``Paddle``, the
string developer.paddle.com/webhooks/about/respond-to-webhooks has a WAF match; Mercado Pago:
``MercadoPago WebHook v1.0 <type>``, as receivers' published logs show it; Svix: ``Svix-Webhooks/<version>
(sender-…; +https://www.svix.com/http-sender/)``, its server's worker and receivers' logs) and one without
(Standard Webhooks); an in-process app is handed the same. aiohttp (``Python/3.x
aiohttp/…``) and httpx (``python-httpx/…``) add their own unless told not to.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from hookproof.send import SendOptions, send
from hookproof.simulator.delivery import Dispatcher, History, Target
from hookproof.simulator.delivery.transports import make_client
from hookproof.simulator.faults import FaultPlan, schedule
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import emit_events, new_world

#: profile -> the User-Agent values one request carries (none: the profile documents none).
AGENTS = {"paddle": ["Paddle"], "mercadopago": ["MercadoPago WebHook v1.0 payment"], "standard-webhooks": [],
          "svix": ["Svix-Webhooks/1.81.0 (sender-9YMgn; +https://www.svix.com/http-sender/)"]}


class Captured(ThreadingHTTPServer):
    requests: list[list[tuple[str, str]]]


class _Handler(BaseHTTPRequestHandler):
    server: Captured

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.requests.append(list(self.headers.items()))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def captured() -> Iterator[tuple[Captured, str]]:
    server = Captured(("127.0.0.1", 0), _Handler)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, f"http://127.0.0.1:{server.server_address[1]}/webhooks"
    finally:
        server.shutdown()
        server.server_close()


def _agents(headers: list[tuple[str, str]]) -> list[str]:
    return [value for name, value in headers if name.lower() == "user-agent"]


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_send_and_a_dispatcher_burst_carry_the_profile_s_user_agent_alone(captured: tuple[Captured, str],
                                                                          name: str) -> None:
    server, url = captured
    profile = get_profile(name)
    secret = profile.generate_secret(5)
    attempts = send(SendOptions(profile=profile, url=url, seed=5), [secret])
    assert [a.status for a in attempts] == [200]
    sent = len(server.requests)
    assert sent == 1

    history = History()
    events = emit_events(new_world(profile.world, 6), profile.default_event)

    async def burst() -> None:
        async with Dispatcher(Target(url=url), profile, [secret], history) as d:
            await d.run(schedule(events, FaultPlan()))  # one attempt, as certify sends it
            await d.run(schedule(events, FaultPlan(copies=2, concurrency=2)), race=True)  # byte-synchronised

    asyncio.run(burst())
    assert len(server.requests) == sent + 3
    assert [_agents(h) for h in server.requests] == [AGENTS[name]] * 4


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_an_httpx_client_and_an_in_process_app_get_the_profile_s_user_agent_alone(
        captured: tuple[Captured, str], name: str) -> None:
    server, url = captured
    _, seen = through_a_client_and_an_app(url, name)
    assert [_agents(h) for h in [*server.requests, *seen]] == [AGENTS[name]] * 2


def through_a_client_and_an_app(url: str, name: str) -> tuple[Any, list[list[tuple[str, str]]]]:
    """Profile `name`'s signed request for its default event, posted through hookproof's httpx
    client to `url` (a capture server) and to an in-process ASGI app: the request, and the
    headers the app received (the capture server keeps its own)."""
    profile = get_profile(name)
    (event,) = emit_events(new_world(profile.world, 7), profile.default_event)
    request = profile.request(profile.envelope(event), [profile.generate_secret(7)], 1_790_000_000)
    seen: list[list[tuple[str, str]]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append([(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]])
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def post(target: Target, to: str) -> int:
        async with make_client(target) as client:
            answer: httpx.Response = await client.post(to, content=request.body, headers=dict(request.headers))
            return answer.status_code

    assert asyncio.run(post(Target(url=url), url)) == 200
    assert asyncio.run(post(Target(app=app), "/webhooks")) == 200
    return request, seen
