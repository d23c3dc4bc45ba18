"""Shopify's Admin REST API for the Shopify world: orders and customers, from the same truth.

Routes (shopify.dev/docs/api/admin-rest, "Order" ``GET /admin/api/{version}/orders/{order_id}.json``
and "Customer" ``GET /admin/api/{version}/customers/{customer_id}.json``): the resource as
the webhooks carry it, wrapped as Shopify answers, ``{"order": {...}}`` / ``{"customer":
{...}}``. Each object is served at the version the provider has when the deliveries so far
were sent (`simulator.server.clock`), from the served `ShopifyWorld`s, newest first. Any
``YYYY-MM`` version is answered (Shopify falls forward to a supported one); the answer's
``X-Shopify-API-Version`` header is the world's (2024-10).

Auth: ``X-Shopify-Access-Token: <token>``, the token being one of the server's API keys;
a missing or other token answers 401 ``{"errors": "[API] Invalid API key or access token
(unrecognized login or wrong password)"}``. Errors are Shopify's ``{"errors": <message>}``
(404 ``Not Found``, for every other ``/admin/api/`` path too: refunds, transactions,
``shop.json`` are not served). The switches (`simulator.server.state`, keyed by the object id) apply
as to every provider: 404 not yet visible, an error status, slow, stale (the previous
version), and 429 ``Exceeded 2 calls per second for api client…`` with ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from hookproof.simulator.errors import WorldError
from hookproof.simulator.server import clock
from hookproof.simulator.server.holds import answer_late
from hookproof.simulator.server.models import PROVIDER_ERRORS
from hookproof.simulator.server.state import ServerState
from hookproof.simulator.world.shopify import SHOPIFY_API_VERSION, ShopifyWorld

_VERSION = re.compile(r"\d{4}-\d{2}|unstable")
_UNAUTHORIZED = "[API] Invalid API key or access token (unrecognized login or wrong password)"
_THROTTLED = "Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service."


def _headers() -> dict[str, str]:
    return {"X-Shopify-API-Version": SHOPIFY_API_VERSION, "X-Request-Id": str(uuid.uuid4())}


def shopify_error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """An error in Shopify's REST shape, ``{"errors": message}``."""
    return JSONResponse({"errors": message}, status_code=status, headers={**_headers(), **(headers or {})})


#: Object type -> the type name in its ``admin_graphql_api_id`` (``gid://shopify/Order/…``).
#: The object types this API serves (what a receiver can fetch; `scenarios.world_plans`).
SERVED_TYPES: frozenset[str] = frozenset({"order", "customer"})

_GID_TYPES = {"order": "Order", "customer": "Customer"}


def find(state: ServerState, object_type: str, object_id: str, *, stale: bool) -> dict[str, Any] | None:
    """The `object_type` (``order`` or ``customer``) with id `object_id` at the served version
    (the one before it when `stale`), or None.

    The type is read from the snapshot's ``admin_graphql_api_id``, and a world whose clock
    never moved is served current without asking its version: one read of the object
    (a storm's served world renames the object on every read).
    """
    for world in state.iter_worlds_newest_first():
        if not isinstance(world, ShopifyWorld) or not world.has(object_id):
            continue
        try:
            if stale or clock.horizon(world) is not None:
                found = clock.served_snapshot(world, object_id, stale=stale)
            else:
                found = world.get(object_id)
        except WorldError:
            return None
        if not str(found.get("admin_graphql_api_id", "")).startswith(f"gid://shopify/{_GID_TYPES[object_type]}/"):
            return None
        return found
    return None


def shopify_router(state: ServerState) -> APIRouter:
    """The Shopify Admin REST routes over `state`'s served worlds (see the module docstring)."""
    router = APIRouter(tags=["shopify"])

    async def answer(request: Request, version: str, object_type: str, object_id: str) -> JSONResponse:
        if not state.accepts(request.headers.get("x-shopify-access-token") or None):
            return shopify_error(401, _UNAUTHORIZED)
        if not _VERSION.fullmatch(version):
            return shopify_error(404, "Not Found")
        decision = state.switches.decide(object_id)
        if decision.retry_after_s is not None:
            return shopify_error(429, _THROTTLED, {"Retry-After": str(decision.retry_after_s)})
        if decision.slow_s > 0:
            await asyncio.sleep(decision.slow_s)
        if decision.status is not None:
            return shopify_error(decision.status, "Internal Server Error")
        with state.lock:
            found = None if decision.not_found else find(state, object_type, object_id, stale=decision.stale)
        if found is None:
            return shopify_error(404, "Not Found")
        state.served.add(object_id, found.get("financial_status"))  # what a fetching receiver decided on
        await answer_late(state.holds, object_id)  # read on arrival, answered late (`fetch-overtaken`)
        return JSONResponse({object_type: found}, headers=_headers())

    @router.get("/admin/api/{version}/orders/{order_id}.json", operation_id="shopify_get_order",
                responses=PROVIDER_ERRORS)
    async def get_order(request: Request, version: str, order_id: str) -> JSONResponse:
        """An order of the Shopify world."""
        return await answer(request, version, "order", order_id)

    @router.get("/admin/api/{version}/customers/{customer_id}.json", operation_id="shopify_get_customer",
                responses=PROVIDER_ERRORS)
    async def get_customer(request: Request, version: str, customer_id: str) -> JSONResponse:
        """A customer of the Shopify world."""
        return await answer(request, version, "customer", customer_id)

    @router.api_route("/admin/api/{version}/{rest:path}", methods=["GET", "POST", "PUT", "DELETE"],
                      include_in_schema=False)
    async def unserved(request: Request, version: str, rest: str) -> JSONResponse:
        """Any other Admin REST path (refunds, transactions, ``shop.json``…): not served, answered
        as Shopify answers a path it has no resource at (401 first, as for every route)."""
        if not state.accepts(request.headers.get("x-shopify-access-token") or None):
            return shopify_error(401, _UNAUTHORIZED)
        return shopify_error(404, "Not Found")

    return router
