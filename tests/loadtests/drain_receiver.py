"""Mercado Pago's fetching shop (`examples.receivers.mercadopago_fetch`) behind a wrapper
that answers some notifications as a storm's drain tests need.

``DRAIN_MODE`` (environment) says what the wrapper does to the notifications it picks:

- ``slow-refusal``: nothing picked; every 503 the shop answers (a payment the provider API
  could not serve yet) goes out ``DRAIN_DELAY_S`` seconds late, as a Node SDK retrying the
  API call first does. Correct: Mercado Pago retries a refused notification.
- ``hang-first``: the first request about each payment arriving ``DRAIN_FROM_S`` seconds or
  more after the first webhook is answered 503 only after ``DRAIN_DELAY_S`` seconds (past
  the sender timeout: never answered in time), unapplied; later ones go to the shop. Correct.
- ``hang-all``: every request about a payment first heard of ``DRAIN_FROM_S`` seconds or
  more after the first webhook is answered 503 only after ``DRAIN_DELAY_S`` seconds, never
  applied (noted in ``DRAIN_PICKED``). Broken: its every attempt goes unanswered.
- ``refuse-all``: the payments `picked` (every ``DRAIN_EVERY``-th by id), and those first
  heard of ``DRAIN_FROM_S`` seconds or more after the first webhook (with ``DRAIN_FROM_S``
  set), get 503 on every request, never applied. Broken: their effects are lost. Each
  payment picked is written on a line of the file ``DRAIN_PICKED``, when set.
- ``ack-drop``: the same payments get 200 on every request, never applied. Broken.

Run: ``python -m tests.loadtests.drain_receiver`` (the shop's own environment too).
"""

from __future__ import annotations

import asyncio
import os
import time
import zlib
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs

from examples.receivers.mercadopago_fetch import Settings, create_app, serve

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Message, Receive, Send], Awaitable[None]]


def picked(payment_id: str, every: int) -> bool:
    """True for the payments the broken modes refuse or drop: a stable share, by id."""
    return zlib.crc32(payment_id.encode()) % every == 0


class Wrapper:
    """An ASGI app answering the notifications `mode` picks itself, the others by `app`."""

    def __init__(self, app: App, mode: str, *, delay_s: float, from_s: float, every: int,
                 picked_path: str | None = None) -> None:
        self.app, self.mode, self.delay_s, self.from_s, self.every = app, mode, delay_s, from_s, every
        self.picked_path = picked_path
        self.first: float | None = None
        self.seen: set[str] = set()
        self.picked: set[str] = set()

    def pick(self, payment: str, late: bool) -> bool:
        """Whether a broken mode refuses or drops `payment` (`late`: first heard of now, past
        ``from_s``), noted once in the ``DRAIN_PICKED`` file."""
        if payment in self.picked:
            return True
        if not (picked(payment, self.every) or late):
            return False
        self.picked.add(payment)
        if self.picked_path:
            with open(self.picked_path, "a", encoding="utf-8") as f:
                f.write(payment + "\n")
        return True

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != "/webhooks":
            return await self.app(scope, receive, send)
        now = time.monotonic()
        if self.first is None:
            self.first = now
        payment = (parse_qs(scope["query_string"].decode()).get("data.id") or [""])[0]
        late = bool(self.from_s) and now - self.first >= self.from_s and payment not in self.seen
        self.seen.add(payment)
        if self.mode == "hang-all" and payment and (payment in self.picked or late):
            self.pick(payment, True)
            await _drained(receive)
            await asyncio.sleep(self.delay_s)
            return await _answer(send, 503, b'{"error":"too slow"}')
        if self.mode in ("refuse-all", "ack-drop") and payment and self.pick(payment, late):
            await _drained(receive)
            status = 503 if self.mode == "refuse-all" else 200
            return await _answer(send, status, b'{"error":"refused"}' if status == 503 else b'{"ok":true}')
        if self.mode == "hang-first" and payment and late:
            await _drained(receive)
            await asyncio.sleep(self.delay_s)
            return await _answer(send, 503, b'{"error":"too slow"}')
        if self.mode != "slow-refusal":
            return await self.app(scope, receive, send)

        async def late_refusal(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 503:
                await asyncio.sleep(self.delay_s)
            await send(message)

        return await self.app(scope, receive, late_refusal)


async def _drained(receive: Receive) -> None:
    while (await receive()).get("more_body"):
        pass


async def _answer(send: Send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def main() -> None:
    env = os.environ
    app = Wrapper(create_app(Settings.from_env()), env["DRAIN_MODE"], delay_s=float(env.get("DRAIN_DELAY_S", "1.5")),
                  from_s=float(env.get("DRAIN_FROM_S", "0")), every=int(env.get("DRAIN_EVERY", "4")),
                  picked_path=env.get("DRAIN_PICKED"))
    serve(app)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
