"""Mercado Pago's API for the payments world: payments and merchant orders, from the same truth.

Routes (Mercado Pago API reference, "Get payment" ``GET /v1/payments/{id}`` and "Get
merchant order" ``GET /merchant_orders/{id}``; the paths the official ``mercadopago``
SDK 3.6.0 calls, ``sdk.payment().get(id)`` and ``sdk.merchant_order().get(id)``):

- ``GET /v1/payments/{id}``: the payment (numeric ``id``, ``status``, ``status_detail``,
  ``refunds``, ``transaction_amount_refunded``…), as `MercadoPagoWorld` holds it.
- ``GET /merchant_orders/{id}``: the merchant order with its ``payments`` summary.

Each object is served at the version the provider has when the deliveries so far were
sent (`simulator.server.clock`), from the served `MercadoPagoWorld`s, newest first.

Auth: ``Authorization: Bearer <access token>``, the token being one of the server's API
keys; none or another answers 401 ``unauthorized``. Errors are Mercado Pago's
``{"message", "error", "status", "cause": [{"code", "description", "data"}]}`` (404
``not_found`` with cause 2000 for a payment, as the API answers an unknown id). The
object is served only to a token of the account that owns it: a payment of another seller
(the account a ``foreign-account`` scenario invents, `ServerState.add_world`) is answered
404 ``not_found`` to the endpoint's token, as the real API answers a token whose account
cannot see the payment: ``{"message": "Payment not found", "error": "not_found", "status":
404, "cause": [{"code": 2000, "description": "Payment not found", "data": null}]}``
(quoted in mercadopago/sdk-dotnet#78 and in discovery-tecnologia/dsc-mercado-livre#45, a
seller reading a payment of another account; "Payment not found" to a token that cannot see
the payment in mercadopago/sdk-php#174, #187 and mercadopago/sdk-nodejs#131). A payment of
the other mode (a ``test-mode-to-live`` scenario's, `mutations.other_mode_owner`) is answered
the same to the endpoint's token: the test notification URL is used "along with your test
credentials", the production one with the productive credentials, each reading its own mode's
payments (mercadopago.com.br/developers/en/docs/your-integrations/notifications/webhooks). The
switches (`simulator.server.state`, keyed by the object id) apply as to every provider:
404 not yet visible, an error status, slow, stale (the previous version), and 429
``too_many_requests`` with ``Retry-After``. Answers carry ``x-request-id``.
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
from hookproof.simulator.server.served import served_log
from hookproof.simulator.server.state import ServerState, bearer_token
from hookproof.simulator.world.mercadopago import MercadoPagoWorld

#: The object types this API serves (what a receiver can fetch; `scenarios.world_plans`).
SERVED_TYPES: frozenset[str] = frozenset({"payment", "merchant_order"})

_NOT_FOUND = {"payment": ("Payment not found", 2000), "merchant_order": ("Merchant order not found", 404)}


def mercadopago_error(status: int, error: str, message: str, *, cause_code: int | None = None,
                      headers: dict[str, str] | None = None) -> JSONResponse:
    """An error in Mercado Pago's shape."""
    body = {"message": message, "error": error, "status": status,
            "cause": [{"code": cause_code if cause_code is not None else status, "description": message,
                       "data": None}]}
    return JSONResponse(body, status_code=status, headers={"x-request-id": str(uuid.uuid4()), **(headers or {})})


def find(state: ServerState, object_type: str, object_id: str, *, stale: bool,
         token: str | None = None) -> dict[str, Any] | None:
    """The `object_type` (``payment`` or ``merchant_order``) with id `object_id` at the
    served version (the one before it when `stale`), among the worlds access token `token`'s
    account owns (`ServerState.worlds_for`; None: every served world), or None."""
    worlds = state.iter_worlds_newest_first() if token is None else state.worlds_for(token)
    return clock.find_served(worlds, MercadoPagoWorld, object_type, object_id, stale=stale)


def mercadopago_router(state: ServerState) -> APIRouter:
    """The Mercado Pago routes over `state`'s served worlds (see the module docstring)."""
    router = APIRouter(tags=["mercadopago"])

    async def answer(request: Request, object_type: str, object_id: str) -> JSONResponse:
        token = bearer_token(request.headers.get("authorization", ""))
        if not state.accepts(token):
            return mercadopago_error(401, "unauthorized", "invalid access token")
        decision = state.switches.decide(object_id)
        if decision.retry_after_s is not None:
            return mercadopago_error(429, "too_many_requests", "Too many requests",
                                     headers={"Retry-After": str(decision.retry_after_s)})
        if decision.slow_s > 0:
            await asyncio.sleep(decision.slow_s)
        if decision.status is not None:
            return mercadopago_error(decision.status, "internal_error", "Internal server error")
        with state.lock:
            found = None if decision.not_found else find(state, object_type, object_id, stale=decision.stale,
                                                         token=token)
            if found is None and not decision.not_found and find(state, object_type, object_id, stale=False) is not None:
                state.note_refused_foreign(object_id)  # another account's: the receiver asked and was refused
        if found is None:
            message, code = _NOT_FOUND[object_type]
            return mercadopago_error(404, "not_found", message, cause_code=code)
        served_log(state).add(object_id, found.get("status"))  # what the receiver decides on (scenarios.fetched_states)
        await answer_late(state.holds, object_id)  # read on arrival, answered late (`fetch-overtaken`)
        return JSONResponse(found, headers={"x-request-id": str(uuid.uuid4())})

    @router.get("/v1/payments/{payment_id}", operation_id="mercadopago_get_payment", responses=PROVIDER_ERRORS)
    async def get_payment(request: Request, payment_id: str) -> JSONResponse:
        """A payment of the payments world (Mercado Pago's ``GET /v1/payments/{id}``)."""
        return await answer(request, "payment", payment_id)

    @router.get("/merchant_orders/{order_id}", operation_id="mercadopago_get_merchant_order", responses=PROVIDER_ERRORS)
    async def get_merchant_order(request: Request, order_id: str) -> JSONResponse:
        """A merchant order of the payments world (Mercado Pago's ``GET /merchant_orders/{id}``)."""
        return await answer(request, "merchant_order", order_id)

    return router
