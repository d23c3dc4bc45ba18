"""Paddle Billing's API for the Paddle world: transactions, subscriptions, customers and their
addresses, from the same truth.

Routes (developer.paddle.com/api-reference, "Get a transaction" ``GET /transactions/{id}``,
"Get a subscription" ``GET /subscriptions/{id}``, "Get a customer" ``GET /customers/{id}`` and
"Get an address for a customer" ``GET /customers/{customer_id}/addresses/{address_id}``, an
address of another customer being not found): the entity as the notifications
carry it, wrapped as Paddle answers, ``{"data": <entity>, "meta": {"request_id": <uuid>}}``.
Each object is served at the version the provider has when the deliveries so far were
sent (`simulator.server.clock`), from the served `PaddleWorld`s, newest first.

Auth: ``Authorization: Bearer <API key>``, the key being one of the server's API keys;
none answers 401 ``authentication_missing``, another 403 ``invalid_token`` ("Invalid or revoked API key.":
developer.paddle.com/errors/shared/invalid_token; ``forbidden`` is a valid key's missing permission). Errors are
Paddle's ``{"error": {"type", "code", "detail", "documentation_url"}, "meta":
{"request_id"}}`` (404 ``entity_not_found``). The switches (`simulator.server.state`,
keyed by the object id) apply as to every provider: 404 not yet visible, an error status
(``internal_error``), slow, stale (the previous version), and 429 ``too_many_requests``
with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from hookproof.simulator.server import clock
from hookproof.simulator.server.holds import answer_late
from hookproof.simulator.server.models import PROVIDER_ERRORS
from hookproof.simulator.server.state import ServerState, bearer_token
from hookproof.simulator.world.paddle import PaddleWorld

#: The object types this API serves (what a receiver can fetch; `scenarios.world_plans`).
SERVED_TYPES: frozenset[str] = frozenset({"transaction", "subscription", "customer", "address"})
#: The served types whose state a receiver keeps by fetching the entity on any of its events
#: (`scenarios.world_plans`: `provider-api-transient` fails the fetch of two subscriptions' last).
STATE_TYPES: frozenset[str] = frozenset({"subscription"})

_DOCS = "https://developer.paddle.com/errors/shared/{code}"


def paddle_error(status: int, code: str, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """An error in Paddle's shape."""
    type_ = "api_error" if status >= 500 else "request_error"
    body = {"error": {"type": type_, "code": code, "detail": detail, "documentation_url": _DOCS.format(code=code)},
            "meta": {"request_id": str(uuid.uuid4())}}
    return JSONResponse(body, status_code=status, headers=headers)


def find(state: ServerState, object_type: str, object_id: str, *, stale: bool) -> dict[str, Any] | None:
    """The `object_type` (one of `SERVED_TYPES`) with id `object_id` at the
    served version (the one before it when `stale`), or None."""
    return clock.find_served(state.iter_worlds_newest_first(), PaddleWorld, object_type, object_id, stale=stale)


def paddle_router(state: ServerState) -> APIRouter:
    """The Paddle Billing routes over `state`'s served worlds (see the module docstring)."""
    router = APIRouter(tags=["paddle"])

    async def answer(request: Request, object_type: str, object_id: str,
                     customer_id: str | None = None) -> JSONResponse:
        token = bearer_token(request.headers.get("authorization", ""))
        if token is None:
            return paddle_error(401, "authentication_missing", "Authentication header missing")
        if not state.accepts(token):
            return paddle_error(403, "invalid_token", "Invalid or revoked API key.")
        decision = state.switches.decide(object_id)
        if decision.retry_after_s is not None:
            return paddle_error(429, "too_many_requests", "IP address exceeded the allowed rate limit.",
                                {"Retry-After": str(decision.retry_after_s)})
        if decision.slow_s > 0:
            await asyncio.sleep(decision.slow_s)
        if decision.status is not None:
            return paddle_error(decision.status, "internal_error", "An internal error occurred (hookproof switch).")
        with state.lock:
            found = None if decision.not_found else find(state, object_type, object_id, stale=decision.stale)
        if found is None or (customer_id is not None and found.get("customer_id") != customer_id):
            return paddle_error(404, "entity_not_found", f"Entity {object_id} not found")
        state.served.add(object_id, found.get("status"))  # what a fetching receiver decided on
        await answer_late(state.holds, object_id)  # read on arrival, answered late (`fetch-overtaken`)
        return JSONResponse({"data": found, "meta": {"request_id": str(uuid.uuid4())}})

    @router.get("/transactions/{transaction_id}", operation_id="paddle_get_transaction", responses=PROVIDER_ERRORS)
    async def get_transaction(request: Request, transaction_id: str) -> JSONResponse:
        """A transaction of the Paddle world."""
        return await answer(request, "transaction", transaction_id)

    @router.get("/subscriptions/{subscription_id}", operation_id="paddle_get_subscription", responses=PROVIDER_ERRORS)
    async def get_subscription(request: Request, subscription_id: str) -> JSONResponse:
        """A subscription of the Paddle world."""
        return await answer(request, "subscription", subscription_id)

    @router.get("/customers/{customer_id}", operation_id="paddle_get_customer", responses=PROVIDER_ERRORS)
    async def get_customer(request: Request, customer_id: str) -> JSONResponse:
        """A customer of the Paddle world."""
        return await answer(request, "customer", customer_id)

    @router.get("/customers/{customer_id}/addresses/{address_id}", operation_id="paddle_get_address",
                responses=PROVIDER_ERRORS)
    async def get_address(request: Request, customer_id: str, address_id: str) -> JSONResponse:
        """An address of a customer of the Paddle world."""
        return await answer(request, "address", address_id, customer_id)

    return router
