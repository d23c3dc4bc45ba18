"""The provider server: a Stripe-shaped API of the world's truth, plus the effect sink.

Routes (all JSON):

- ``GET /v1/<resource>/{id}`` for every resource in `simulator.world.RESOURCES`
  (``customers``, ``checkout/sessions``, ``events`` …), ``GET /v1/<resource>`` lists
  (``limit``, ``starting_after``, ``ending_before``, ``customer``, ``subscription``,
  ``status``; ``type`` on events), the sub-lists ``/v1/invoices/{id}/lines``,
  ``/v1/charges/{id}/refunds``, ``/v1/checkout/sessions/{id}/line_items`` and
  ``/v1/products/{id}/features``, ``GET /v1/account`` and ``GET /v1/accounts/{id}``;
  ``expand[]=`` (or ``expand[0]=``, as the stripe SDK sends it) on all of them. Answers
  are rendered at the ``Stripe-Version`` header's API version (else the world's).
- ``POST /v1/subscriptions/{id}`` (``cancel_at_period_end``) and ``DELETE
  /v1/subscriptions/{id}`` change a subscription in the world holding it (`CHANGES`, rules in
  `simulator.server.writes`), its events emitted as the world's.
- ``POST /v1/customers``, ``/v1/checkout/sessions``, ``/v1/subscriptions``,
  ``/v1/refunds`` (form-encoded, as the SDKs send them): the object enters the newest
  served world (rules in `simulator.server.writes`); an ``Idempotency-Key`` replays the
  first answer for the same parameters. Auth: ``Authorization: Bearer <key>`` or Basic with the key as the
  user name; errors in Stripe's shape ``{"error": {"type", "message", "code", "param"}}``
  (401 ``invalid_request_error``; 404 ``resource_missing``; 400 bad parameters; 429
  ``rate_limit`` with ``Retry-After``; 5xx ``api_error``).
- Mercado Pago's ``GET /v1/payments/{id}`` and ``GET /merchant_orders/{id}`` over the payments
  world (`simulator.server.mercadopago`); Paddle's ``GET /transactions/{id}`` and
  ``GET /subscriptions/{id}`` over the Paddle world (`simulator.server.paddle`); GitHub's
  REST routes over the repository world (`simulator.server.github`).
- ``POST /sink/effects`` or ``POST /sink/<any path>`` (the receiver's own downstream
  paths, recorded with the effect; body ``{"business_key", "amount"?, "detail"?}``,
  optional ``Idempotency-Key`` header), ``GET /sink/effects`` (``{"effects": [...], "counts":
  {...}}``), ``DELETE /sink/effects``: the effect sink, rules in `simulator.server.sink`.
- Every refused provider-API request (400 or more; not the sink's nor the admin's) is kept
  in the server's refusal log (`simulator.server.refusals`: method, path, status, error
  code; never a key), so a report can say why a fetching receiver failed.
- Admin, left out of the OpenAPI schema: ``GET/POST/DELETE /_hookproof/switches`` and
  ``POST /_hookproof/sink/faults`` (bodies: `SwitchIn`, `SinkFaultIn`), ``GET /_hookproof/probe``
  (204 at once, a round trip's probe).
- Every answer of the API and the sink is timed into the server's `answer_times`
  (`simulator.server.answer_times`), the admin's not.

Switches (stale, 404, 5xx, slow, 429) are described in `simulator.server.state`; a held
fetch (an object read on arrival, its answer held a moment) in `simulator.server.holds`.

Dropping a connection after applying an effect: the sink's handler marks its answer;
the app's outermost ASGI layer sees the mark on ``http.response.start``, sends nothing,
and aborts the socket through uvicorn's transport (the ``send`` callable uvicorn hands
to the app is bound to its request cycle, which holds the transport). The client sees
the connection closed or reset with no answer. Under a server without a reachable
transport (e.g. httpx's ``ASGITransport``) the app raises `ConnectionDropped` instead,
which the in-process client sees as the request's error.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import re
import threading
import time
import uuid
import warnings
from dataclasses import dataclass
from typing import Annotated, Any, Awaitable, Callable, Literal, MutableMapping

from fastapi import FastAPI, Header, Query, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from hookproof.simulator.server import writes
from hookproof.simulator.server.answer_times import surface_of
from hookproof.simulator.server.forms import FormError, decode, decode_body
from hookproof.simulator.server.holds import answer_late
from hookproof.simulator.server.models import (
    EffectIn,
    EffectListing,
    EffectOut,
    SinkFaultIn,
    StripeErrorBody,
    StripeList,
    StripeObject,
    SwitchIn,
)
from hookproof.simulator.server.provider import (
    SUBLISTS,
    AccountAccessError,
    Catalog,
    ExpandError,
    ListParamError,
    expand,
    list_page,
)
from hookproof.simulator.server.refusals import BODY_CAP_BYTES, error_code, is_provider_api, refusal_log
from hookproof.simulator.server.sink import (
    DEFAULT_PATH,
    MAX_IDEMPOTENCY_KEY_CHARS,
    Admission,
    SavedAnswer,
    fingerprint,
    sink_path,
)
from hookproof.simulator.server.state import Decision, ServerState, Switch
from hookproof.simulator.wording import a_or_an
from hookproof.simulator.world import RESOURCES, World

#: ``POST /v1/<path>`` -> (the write, the object type it creates).
WRITES: dict[str, tuple[Callable[[World, Any], str], str]] = {
    "customers": (writes.create_customer, "customer"),
    "products": (writes.create_product, "product"),
    "checkout/sessions": (writes.create_checkout_session, "checkout.session"),
    "subscriptions": (writes.create_subscription, "subscription"),
    "payment_intents": (writes.create_payment_intent, "payment_intent"),
    "refunds": (writes.create_refund, "refund"),
}
#: ``(method, /v1/<path>/{id})`` -> (the change, the object type it changes): Stripe's
#: ``POST /v1/subscriptions/{id}`` (update) and ``DELETE /v1/subscriptions/{id}`` (cancel).
CHANGES: dict[tuple[str, str], tuple[Callable[[World, str, Any], str], str]] = {
    ("POST", "subscriptions"): (writes.update_subscription, "subscription"),
    ("DELETE", "subscriptions"): (writes.cancel_subscription, "subscription"),
}
_VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}(\.[a-z]+)?$")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: Response header by which a handler asks the outer layer to drop the connection.
DROP_HEADER = b"x-hookproof-drop"
_EXPAND_KEY = re.compile(r"^expand(\[\d*\])?$")
_bearer = HTTPBearer(auto_error=False, description="the API key (Basic auth with the key as user also works)")
#: Documents bearer auth in the OpenAPI schema; the handlers check the key themselves.
_security: Any = Security(_bearer)

_STRIPE_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": StripeErrorBody, "description": "invalid parameters (Stripe error shape)"},
    401: {"model": StripeErrorBody, "description": "missing or invalid API key"},
    404: {"model": StripeErrorBody, "description": "resource_missing"},
    429: {"model": StripeErrorBody, "description": "rate limited (Retry-After)"},
    500: {"model": StripeErrorBody, "description": "injected api_error"},
    503: {"model": StripeErrorBody, "description": "injected api_error"},
}
class ConnectionDropped(ConnectionResetError):
    """The sink dropped the connection after applying (raised only without a transport)."""


class HookproofApp(FastAPI):
    """FastAPI with an outermost layer that can drop a connection instead of answering."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        dropped = False
        aborted = False
        refused: list[Any] = []  # [status, body so far] of a provider-API answer of 400 or more
        surface = surface_of(scope.get("method", ""), scope.get("path", ""))
        started = time.perf_counter()

        async def guarded_send(message: Message) -> None:
            nonlocal dropped, aborted
            if dropped:
                return
            if surface is not None and message["type"] == "http.response.body" and not message.get("more_body"):
                self._answered(surface, time.perf_counter() - started)
            if message["type"] == "http.response.start" and any(
                k.lower() == DROP_HEADER for k, _ in message.get("headers", ())
            ):
                dropped = True
                aborted = await _abort_connection(send, receive)
                return
            if message["type"] == "http.response.start" and message.get("status", 200) >= 400 \
                    and is_provider_api(scope.get("path", "")):
                refused[:] = [int(message["status"]), b""]
            elif message["type"] == "http.response.body" and refused:
                refused[1] = (refused[1] + message.get("body", b""))[:BODY_CAP_BYTES]
                if not message.get("more_body", False):
                    self._refused(scope, refused[0], refused[1])
                    refused.clear()
            await send(message)

        await super().__call__(scope, receive, guarded_send)
        if dropped and not aborted:
            raise ConnectionDropped("the effect sink applied the effect and dropped the connection")

    def _answered(self, surface: str, seconds: float) -> None:
        """Time one answer of the API or the sink (`answer_times.AnswerTimes`, the server's `answer_times`)."""
        state = getattr(self.state, "hookproof", None)
        if state is not None:
            state.answer_times.record(surface, seconds)

    def _refused(self, scope: Scope, status: int, body: bytes) -> None:
        """Record a refused provider-API request in the server's refusal log (method, path
        without its query, status, error code: never a key)."""
        state = getattr(self.state, "hookproof", None)
        if state is not None:
            refusal_log(state).add(str(scope.get("method", "")), str(scope.get("path", "")), status, error_code(body),
                                   str(scope.get(REFUSAL_HINT, "")))


async def _abort_connection(send: Send, receive: Receive, wait_s: float = 1.0) -> bool:
    """Abort the socket under uvicorn's request cycle; False when it cannot be reached."""
    cycle = getattr(send, "__self__", None)
    transport = getattr(cycle, "transport", None)
    if transport is None or not hasattr(transport, "abort"):
        return False
    transport.abort()
    try:  # let uvicorn see the disconnect, so it does not answer 500 for us
        await asyncio.wait_for(receive(), timeout=wait_s)
    except (asyncio.TimeoutError, OSError, RuntimeError):
        pass
    return True


# ---- error bodies -------------------------------------------------------------------

def _request_id() -> str:
    return "req_" + uuid.uuid4().hex[:14]


def stripe_error(status: int, message: str, *, type_: str = "invalid_request_error", code: str | None = None,
                 param: str | None = None, headers: dict[str, str] | None = None) -> JSONResponse:
    """A Stripe-shaped error response."""
    error: dict[str, Any] = {"type": type_, "message": message}
    if code is not None:
        error["code"] = code
    if param is not None:
        error["param"] = param
    return JSONResponse({"error": error}, status_code=status, headers={"Request-Id": _request_id(), **(headers or {})})


def _api_key(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() == "bearer":
        return credentials.strip() or None
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(credentials.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return decoded.partition(":")[0] or None
    return None


def _mask(key: str) -> str:
    return key[:8] + "*" * max(0, len(key) - 12) + key[-4:] if len(key) > 12 else "*" * len(key)


def _auth_error(state: ServerState, request: Request) -> JSONResponse | None:
    key = _api_key(request)
    if state.accepts(key):
        return None
    headers = {"WWW-Authenticate": 'Bearer realm="hookproof"'}
    if key is None:
        return stripe_error(401, "You did not provide an API key. Send it as 'Authorization: Bearer <key>' "
                                 "or as the user name of Basic auth.", headers=headers)
    return stripe_error(401, f"Invalid API Key provided: {_mask(key)}", code="api_key_invalid", headers=headers)


async def _apply_switch(decision: Decision) -> JSONResponse | None:
    if decision.retry_after_s is not None:
        headers = {"Retry-After": str(decision.retry_after_s)}
        return stripe_error(429, "Too many requests hit the API too quickly.", code="rate_limit", headers=headers)
    if decision.slow_s > 0:
        await asyncio.sleep(decision.slow_s)
    if decision.status is not None:
        type_ = "api_error" if decision.status >= 500 else "invalid_request_error"
        return stripe_error(decision.status, "An injected error occurred (hookproof switch).", type_=type_)
    return None


def _expand_params(request: Request) -> list[str]:
    return [v for k, v in request.query_params.multi_items() if _EXPAND_KEY.match(k)]


def _page(request: Request, catalog: Catalog, items: Any, url: str, limit: int | None, starting_after: str | None,
          ending_before: str | None) -> dict[str, Any] | JSONResponse:
    """One page of a Stripe list at `url`, its ``expand[]`` applied; or Stripe's 400 for a bad
    cursor, limit or expansion (docs.stripe.com/api/pagination, /api/expanding_objects)."""
    try:
        page = list_page(items, url, limit=limit, starting_after=starting_after, ending_before=ending_before)
        expand(page, _expand_params(request), catalog.render, catalog.include)
    except ListParamError as exc:
        return stripe_error(400, str(exc), param=exc.param)
    except ExpandError as exc:
        return stripe_error(400, str(exc), param="expand")
    return page


class VersionError(ValueError):
    """A ``Stripe-Version`` header that is not an API version."""


def _api_version(state: ServerState, request: Request) -> str | None:
    """The request's ``Stripe-Version`` (None: the world's), noted for the run's report when
    hookproof does not model it (`ServerState.note_api_version`). Raises VersionError."""
    value = request.headers.get("stripe-version", "").strip()
    if not value:
        return None
    if not _VERSION.match(value):
        raise VersionError(f"Invalid Stripe API version: {value[:40]}")
    state.note_api_version(value)
    return value


@dataclass(frozen=True)
class _Admitted:
    """A Stripe API request past its preamble: its API version (None: the world's), its
    form-encoded parameters (None where the route takes none) and whether its object's switch
    serves the object stale."""

    version: str | None
    params: Any = None
    stale: bool = False


async def _admit(state: ServerState, request: Request, object_id: str | None, *, missing: str | None = None,
                 params: Literal["body", "query"] | None = None) -> _Admitted | JSONResponse:
    """Every Stripe route's preamble, in Stripe's order: the API key (401), the switch set for
    `object_id` (429, an injected status, a delay; with `missing`, the object type a not-found
    switch answers 404 for), the ``Stripe-Version`` header (400) and, with `params`, the form
    parameters from the body or the query string (400 naming the parameter). Returns the
    refusal's answer or what the handler reads."""
    denied = _auth_error(state, request)
    if denied is not None:
        return denied
    decision = state.switches.decide(object_id)
    switched = await _apply_switch(decision)
    if switched is not None:
        return switched
    if missing is not None and object_id is not None and decision.not_found:
        return _not_found(missing, object_id)
    try:
        version = _api_version(state, request)
        if params == "body":
            return _Admitted(version, decode_body(await request.body()), decision.stale)
        query = decode(request.query_params.multi_items()) if params == "query" else None
        return _Admitted(version, query, decision.stale)
    except VersionError as exc:
        return stripe_error(400, str(exc), param="Stripe-Version")
    except FormError as exc:
        return stripe_error(400, str(exc), param=exc.param)


def _catalog(state: ServerState, request: Request, version: str | None,
             object_id: str | None = None) -> Catalog | JSONResponse:
    """The served worlds as the request's key and account see them: only the worlds of the
    key's account (`ServerState.worlds_for`: never another account's, a ``foreign-account``
    scenario's), as its ``Stripe-Account`` header scopes them; or Stripe's 403 for an
    account this platform has no access to (a request for `object_id` of another account's
    world, as a receiver passing the event's ``account`` sends, noted as refused:
    `_note_foreign`). The caller holds the lock."""
    header = request.headers.get("stripe-account")
    worlds = list(reversed(list(state.worlds_for(_api_key(request)))))  # oldest first, as `Catalog` reads them
    try:
        return Catalog(worlds, version, stripe_account=header.strip() if header is not None else None)
    except AccountAccessError as exc:
        if object_id is not None:
            _note_foreign(state, request, object_id)
        return stripe_error(403, str(exc))


def _not_found(object_type: str, object_id: str) -> JSONResponse:
    """Stripe's 404 ``resource_missing`` (``No such customer: 'cus_…'``, param ``id``), as its
    API answers an id the key's account cannot see, another account's included."""
    return stripe_error(404, f"No such {object_type}: '{object_id}'", code="resource_missing", param="id")


def _written(catalog: Catalog, object_id: str, object_type: str, params: Any,
             resolve: Callable[[str], dict[str, Any] | None]) -> dict[str, Any] | JSONResponse:
    """`object_id` as rendered after a write (create, update, cancel), expanded as the
    request's ``expand`` asks (`resolve`: an id to its object); a 400 naming ``expand`` when a
    path cannot be expanded."""
    obj: dict[str, Any] = catalog.render(object_id, object_type) or {}
    expanded = params.get("expand", [])
    try:
        expand(obj, expanded if isinstance(expanded, list) else [expanded], resolve, catalog.include)
    except ExpandError as exc:
        return stripe_error(400, str(exc), param="expand")
    return obj


#: The request scope's entry where a handler leaves the refusal log a hint the answer does
#: not give (`refusals.Refusal.hint`).
REFUSAL_HINT = "hookproof.refusal_hint"


def _hidden(state: ServerState, request: Request, object_type: str, object_id: str,
            catalog: Catalog | None = None) -> JSONResponse:
    """`_not_found` for an id the request's key could not read; when a world of another
    account holds it (`ServerState.worlds_for` hides it from the key), noted as refused to
    the receiver (`ServerState.note_refused_foreign`): it fetched, and was told it cannot
    see it. When a connected account of the `catalog` holds it, the refusal log is told which
    (Stripe's answer, like Stripe's, names none). The caller holds the lock."""
    _note_foreign(state, request, object_id)
    holder = catalog.other_account_of(object_id) if catalog is not None else None
    if holder is not None:
        named = request.headers.get("stripe-account")
        request.scope[REFUSAL_HINT] = (f"it is connected account {holder}'s, and the request named "
                                       + ("no Stripe-Account" if named is None else "another Stripe-Account"))
    return _not_found(object_type, object_id)


def _note_foreign(state: ServerState, request: Request, object_id: str) -> None:
    """When a world of another account than the request's key's holds `object_id`, note it
    refused to the receiver (`ServerState.note_refused_foreign`). The caller holds the lock."""
    own = {id(w) for w in state.worlds_for(_api_key(request))}
    if any(isinstance(w, World) and id(w) not in own and w.has(object_id) for w in state.worlds):
        state.note_refused_foreign(object_id)


# ---- the app ------------------------------------------------------------------------

#: FastAPI builds pydantic schemas while routes are added, and pydantic's schema building
#: is not thread-safe: two runs starting servers at once (threads) must not interleave.
_BUILD_LOCK = threading.Lock()

#: pydantic >= 2.12 warns that an optional query parameter's alias has no effect when FastAPI
#: rebuilds the parameter's type; FastAPI silences it inside ``warnings.catch_warnings()``,
#: which is not thread-safe: another thread leaving its own ``catch_warnings`` meanwhile
#: restores filters without FastAPI's, and the warning escapes (seen in about one app build of
#: twenty while other threads work). It says nothing about the app: ignored for the process.
IGNORED_FIELD_WARNING = r"The '\w+' attribute with value .* was provided to the `Field\(\)` function"
warnings.filterwarnings("ignore", message=IGNORED_FIELD_WARNING, category=UserWarning)


def create_app(state: ServerState) -> FastAPI:
    """The provider API and effect sink over `state` (see the module docstring)."""
    with _BUILD_LOCK:
        return _create_app(state)


def _create_app(state: ServerState) -> FastAPI:
    app = HookproofApp(
        title="hookproof provider simulator",
        version="1",
        description="Stripe-shaped provider API over the simulator's worlds, the GitHub, Mercado Pago, Paddle and "
                    "Shopify APIs over theirs, "
                    "and an idempotent effect sink.",
    )
    app.state.hookproof = state

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "header", "path")]
        param = ".".join(loc) or None
        message = f"{first.get('msg', 'invalid request')}" + (f": {param}" if param else "")
        status = 422 if request.url.path.startswith("/sink") or request.url.path.startswith("/_hookproof") else 400
        return stripe_error(status, message, param=param)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Framework errors (a body that is not JSON, an unknown path or method) in the same
        # error shape as every documented answer, headers (e.g. Allow) kept.
        message = exc.detail if isinstance(exc.detail, str) else "invalid request"
        if exc.status_code == 404 and request.url.path.startswith("/v1/"):
            # Stripe's answer to a route it has no such resource at (one hookproof does not serve)
            message = (f"Unrecognized request URL ({request.method}: {request.url.path}). Please see "
                       "https://stripe.com/docs or we can help at https://support.stripe.com/.")
        answer = stripe_error(exc.status_code, message)
        for name, value in (exc.headers or {}).items():
            answer.headers[name] = value
        return answer

    def resolver(catalog: Catalog) -> Callable[[str], dict[str, Any] | None]:
        return lambda object_id: catalog.render(object_id)

    def retrieve(object_type: str) -> Callable[..., Awaitable[JSONResponse]]:
        async def handler(
            request: Request,
            id: str,
            expand_: Annotated[list[str], Query(alias="expand[]")] = [],  # noqa: B006 (FastAPI copies)
            _key: Any = _security,
        ) -> JSONResponse:
            admitted = await _admit(state, request, id, missing=object_type)
            if isinstance(admitted, JSONResponse):
                return admitted
            with state.lock:
                catalog = _catalog(state, request, admitted.version, id)
                if isinstance(catalog, JSONResponse):
                    return catalog
                obj = catalog.render(id, object_type, stale=admitted.stale)
                if obj is None:
                    return _hidden(state, request, object_type, id, catalog)
                try:
                    expand(obj, _expand_params(request), resolver(catalog), catalog.include)
                except ExpandError as exc:
                    return stripe_error(400, str(exc), param="expand")
            if object_type == "event":
                state.served.add_event(id)  # a refused run's headline says the receiver fetched its events
            else:  # what a fetching receiver decided on (scenarios.fetched_states)
                state.served.add(id, obj.get("status"))
            await answer_late(state.holds, id)  # read on arrival, answered late (`simulator.server.holds`)
            return JSONResponse(obj, headers={"Request-Id": _request_id()})

        return handler

    def listing(path: str, object_type: str) -> Callable[..., Awaitable[JSONResponse]]:
        async def handler(
            request: Request,
            limit: Annotated[int | None, Query(ge=1, le=100)] = None,
            starting_after: str | None = None,
            ending_before: str | None = None,
            customer: str | None = None,
            subscription: str | None = None,
            status: str | None = None,
            type: str | None = None,
            expand_: Annotated[list[str], Query(alias="expand[]")] = [],  # noqa: B006
            _key: Any = _security,
        ) -> JSONResponse:
            admitted = await _admit(state, request, None)
            if isinstance(admitted, JSONResponse):
                return admitted
            with state.lock:
                catalog = _catalog(state, request, admitted.version)
                if isinstance(catalog, JSONResponse):
                    return catalog
                items = catalog.items(object_type, customer=customer, event_type=type, subscription=subscription,
                                      status=status)
                page = _page(request, catalog, items, f"/v1/{path}", limit, starting_after, ending_before)
            return page if isinstance(page, JSONResponse) else JSONResponse(page, headers={"Request-Id": _request_id()})

        return handler

    async def account_answer(request: Request, account_id: str | None) -> JSONResponse:
        denied = _auth_error(state, request)
        if denied is not None:
            return denied
        switched = await _apply_switch(state.switches.decide(account_id))
        if switched is not None:
            return switched
        with state.lock:
            catalog = _catalog(state, request, None)
            if isinstance(catalog, JSONResponse):
                return catalog
            account = catalog.account(account_id)
        if account is None:
            if account_id is not None:
                return _not_found("account", account_id)
            return stripe_error(404, "No account is served", code="resource_missing")
        return JSONResponse(dict(account), headers={"Request-Id": _request_id()})

    @app.get("/v1/account", response_model=StripeObject, responses=_STRIPE_ERRORS, operation_id="retrieve_account",
             tags=["stripe"])
    async def get_account(request: Request, _key: Any = _security) -> JSONResponse:
        """The Stripe Account of the newest served world."""
        return await account_answer(request, None)

    @app.get("/v1/accounts/{id}", response_model=StripeObject, responses=_STRIPE_ERRORS,
             operation_id="retrieve_accounts", tags=["stripe"])
    async def get_account_by_id(request: Request, id: str, _key: Any = _security) -> JSONResponse:
        """The Stripe Account `id` (a served world's account)."""
        return await account_answer(request, id)

    replays: dict[str, tuple[str, dict[str, Any]]] = {}  # Idempotency-Key -> (params fingerprint, answer)

    def creator(path: str, write: Callable[[World, Any], str], object_type: str) -> Callable[..., Awaitable[JSONResponse]]:
        async def handler(request: Request, _key: Any = _security) -> JSONResponse:
            admitted = await _admit(state, request, None, params="body")
            if isinstance(admitted, JSONResponse):
                return admitted
            version, params = admitted.version, admitted.params
            key = request.headers.get("idempotency-key")
            print_ = fingerprint({"path": path, "params": params})
            with state.lock:
                if key is not None and key in replays:
                    first, answer = replays[key]
                    if first != print_:
                        return stripe_error(400, f"Keys for idempotent requests can only be used with the same "
                                                 f"parameters they were first used with; '{key[:40]}' was not.",
                                            type_="idempotency_error", param="Idempotency-Key")
                    return JSONResponse(answer, headers={"Request-Id": _request_id(), "Idempotent-Replayed": "true"})
                catalog = _catalog(state, request, version)
                if isinstance(catalog, JSONResponse):
                    return catalog
                world = catalog.newest()
                if world is None:
                    return stripe_error(400, "No world is served to create objects in" + (
                        ": this run's objects belong to a connected account; send its id as the Stripe-Account header."
                        if catalog.connected_accounts() else "."))
                try:
                    object_id = write(world, params)
                except writes.ParamError as exc:
                    return stripe_error(400, str(exc), param=exc.param)
                obj = _written(catalog, object_id, object_type, params, resolver(catalog))
                if isinstance(obj, JSONResponse):
                    return obj
                if key is not None:
                    replays[key] = (print_, obj)
            return JSONResponse(obj, headers={"Request-Id": _request_id()})

        return handler

    for path, (write, object_type) in WRITES.items():
        app.add_api_route(f"/v1/{path}", creator(path, write, object_type), methods=["POST"],
                          response_model=StripeObject, responses=_STRIPE_ERRORS,
                          operation_id=f"create_{path.replace('/', '_')}", tags=["stripe"],
                          summary=f"Create {a_or_an(object_type)} in the newest served world")

    def changer(write: Callable[[World, str, Any], str], object_type: str,
                in_query: bool) -> Callable[..., Awaitable[JSONResponse]]:
        """A handler changing one existing object in the world holding it (`CHANGES`): its
        parameters form-encoded in the body, or for a DELETE in the query string, as the SDKs
        send them."""
        async def handler(request: Request, id: str, _key: Any = _security) -> JSONResponse:
            admitted = await _admit(state, request, id, params="query" if in_query else "body")
            if isinstance(admitted, JSONResponse):
                return admitted
            params = admitted.params
            with state.lock:
                catalog = _catalog(state, request, admitted.version, id)
                if isinstance(catalog, JSONResponse):
                    return catalog
                world = catalog.world_of(id)
                if world is None or world.object_type(id) != object_type:
                    return _hidden(state, request, object_type, id, catalog)
                try:
                    write(world, id, params)
                except writes.ParamError as exc:
                    return stripe_error(400, str(exc), param=exc.param)
                obj = _written(catalog, id, object_type, params, resolver(catalog))
                if isinstance(obj, JSONResponse):
                    return obj
            return JSONResponse(obj, headers={"Request-Id": _request_id()})

        return handler

    for (method, path), (write_one, object_type) in CHANGES.items():
        verb = "update" if method == "POST" else "cancel"
        app.add_api_route(f"/v1/{path}/{{id}}", changer(write_one, object_type, method == "DELETE"), methods=[method],
                          response_model=StripeObject, responses=_STRIPE_ERRORS,
                          operation_id=f"{verb}_{path.replace('/', '_')}", tags=["stripe"],
                          summary=f"{verb.capitalize()} {a_or_an(object_type)} in the world holding it")

    def sublist(path: str, child: str, parent_type: str) -> Callable[..., Awaitable[JSONResponse]]:
        async def handler(
            request: Request,
            id: str,
            limit: Annotated[int | None, Query(ge=1, le=100)] = None,
            starting_after: str | None = None,
            ending_before: str | None = None,
            _key: Any = _security,
        ) -> JSONResponse:
            admitted = await _admit(state, request, id)
            if isinstance(admitted, JSONResponse):
                return admitted
            with state.lock:
                catalog = _catalog(state, request, admitted.version, id)
                if isinstance(catalog, JSONResponse):
                    return catalog
                items = catalog.children(id, parent_type, child)
                if items is None:
                    return _hidden(state, request, parent_type, id, catalog)
                page = _page(request, catalog, items, f"/v1/{path}/{id}/{child}", limit, starting_after, ending_before)
            return page if isinstance(page, JSONResponse) else JSONResponse(page, headers={"Request-Id": _request_id()})

        return handler

    for (path, child), parent_type in SUBLISTS.items():
        app.add_api_route(f"/v1/{path}/{{id}}/{child}", sublist(path, child, parent_type), methods=["GET"],
                          response_model=StripeList, responses=_STRIPE_ERRORS,
                          operation_id=f"list_{path.replace('/', '_')}_{child}", tags=["stripe"],
                          summary=f"List {a_or_an(parent_type)}'s {child}")

    for path, object_type in RESOURCES.items():
        op = path.replace("/", "_")
        app.add_api_route(f"/v1/{path}", listing(path, object_type), methods=["GET"], response_model=StripeList,
                          responses=_STRIPE_ERRORS, operation_id=f"list_{op}", tags=["stripe"],
                          summary=f"List {object_type} objects")
        app.add_api_route(f"/v1/{path}/{{id}}", retrieve(object_type), methods=["GET"], response_model=StripeObject,
                          responses=_STRIPE_ERRORS, operation_id=f"retrieve_{op}", tags=["stripe"],
                          summary=f"Retrieve {a_or_an(object_type)}")

    from hookproof.simulator.server.github import github_router  # GitHub's REST API over the repository world
    from hookproof.simulator.server.mercadopago import mercadopago_router  # Mercado Pago's API
    from hookproof.simulator.server.paddle import paddle_router  # Paddle Billing's API
    from hookproof.simulator.server.shopify import shopify_router  # Shopify's Admin REST API

    app.include_router(github_router(state))
    app.include_router(mercadopago_router(state))
    app.include_router(paddle_router(state))
    app.include_router(shopify_router(state))
    _sink_routes(app, state)
    _admin_routes(app, state)
    return app


def _sink_routes(app: FastAPI, state: ServerState) -> None:
    sink = state.sink
    errors: dict[int | str, dict[str, Any]] = {
        400: {"model": StripeErrorBody, "description": "Idempotency-Key too long"},
        409: {"model": StripeErrorBody, "description": "a request with this Idempotency-Key is in flight"},
        422: {"model": StripeErrorBody, "description": "invalid body, or the key was used with other parameters"},
        503: {"model": StripeErrorBody, "description": "injected failure before applying"},
    }

    @app.post("/sink/effects", response_model=EffectOut, responses=errors, operation_id="apply_effect", tags=["sink"])
    async def post_effect(
        payload: EffectIn,
        idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
    ) -> JSONResponse:
        """Apply one effect, with Stripe's Idempotency-Key semantics (see simulator.server.sink)."""
        return await apply_at(DEFAULT_PATH, payload, idempotency_key)

    missing: dict[int | str, dict[str, Any]] = {
        404: {"model": StripeErrorBody, "description": "a path that leaves the sink's base or names nothing"}}

    @app.post("/sink/{path:path}", response_model=EffectOut, responses={**errors, **missing},
              operation_id="apply_effect_at",
              tags=["sink"])
    async def post_effect_at(
        path: str,
        payload: EffectIn,
        idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
    ) -> JSONResponse:
        """Apply one effect called on the receiver's own downstream path (``/sink/licenses``,
        ``/sink/v1/refunds``), recorded with that path; same rules as ``/sink/effects``."""
        try:
            called = sink_path(path)
        except ValueError as exc:
            return stripe_error(404, str(exc), code="resource_missing")
        return await apply_at(called, payload, idempotency_key)

    async def apply_at(path: str, payload: EffectIn, idempotency_key: str | None) -> JSONResponse:
        key = idempotency_key
        if key is not None and not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY_CHARS:
            return stripe_error(400, f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY_CHARS} characters",
                                param="Idempotency-Key")
        params = {**payload.model_dump(mode="json"), "path": path}  # one key on two paths is a mismatch
        echo = {"Idempotency-Key": key} if key is not None else {}
        if key is not None:
            admission, saved = sink.admit(key, fingerprint(params))
            if admission is Admission.REPLAY and saved is not None:
                return JSONResponse(dict(saved.body), status_code=saved.status,
                                    headers={**echo, "Idempotent-Replayed": "true"})
            if admission is Admission.MISMATCH:
                return stripe_error(422, f"Keys for idempotent requests can only be used with the same parameters "
                                         f"they were first used with; '{key}' was used with others.",
                                    type_="idempotency_error", param="Idempotency-Key", headers=echo)
            if admission is Admission.IN_FLIGHT:
                return stripe_error(409, f"A request with Idempotency-Key '{key}' is still being processed; "
                                         f"retry later.", type_="idempotency_error", code="idempotency_key_in_use",
                                    headers=echo)
        saved_answer = False
        try:
            step = sink.take_fault(payload.business_key)
            if step.fail_status is not None:
                return stripe_error(step.fail_status, "The effect sink is unavailable (injected); nothing was applied.",
                                    type_="api_error", headers=echo)
            if step.delay_s > 0:
                await asyncio.sleep(step.delay_s)
            record = sink.apply(payload.business_key, amount=payload.amount, idempotency_key=key, detail=payload.detail,
                                path=path)
            body = {"id": record.id, "object": "effect", "business_key": record.business_key, "amount": record.amount,
                    "detail": record.detail, "idempotency_key": key, "created": record.at, "path": record.path}
            if key is not None:
                sink.finish(key, SavedAnswer(200, body))
                saved_answer = True
            headers = dict(echo)
            if step.drop:
                headers[DROP_HEADER.decode()] = "1"
            return JSONResponse(body, headers=headers)
        finally:
            if key is not None and not saved_answer:
                sink.abandon(key)

    @app.get("/sink/effects", response_model=EffectListing, operation_id="list_effects", tags=["sink"])
    async def get_effects() -> JSONResponse:
        """Every applied effect, in order, and the count per business key."""
        return JSONResponse(sink.listing())

    @app.delete("/sink/effects", include_in_schema=False)
    async def delete_effects() -> JSONResponse:
        """Forget every effect, idempotency key and fault."""
        return JSONResponse({"deleted": sink.clear()})


def _switch_rows(state: ServerState) -> dict[str, Any]:
    return {"switches": [{"object_id": oid, "stale": s.stale, "not_found": s.not_found, "status": s.status,
                          "slow_s": s.slow_s, "rate_limit_per_s": s.rate_limit_per_s, "times": s.times,
                          "remaining": left} for oid, s, left in state.switches.items()]}


def _admin_routes(app: FastAPI, state: ServerState) -> None:
    @app.get("/_hookproof/probe", include_in_schema=False)
    async def probe() -> Response:
        return Response(status_code=204)  # a round trip's probe (`answer_times.RoundTripProbe`)

    @app.get("/_hookproof/switches", include_in_schema=False)
    async def list_switches() -> JSONResponse:
        return JSONResponse(_switch_rows(state))

    @app.post("/_hookproof/switches", include_in_schema=False)
    async def set_switch(body: SwitchIn) -> JSONResponse:
        fields = body.model_dump(exclude={"object_id"})
        try:
            state.switches.set(body.object_id, Switch(**fields))
        except ValueError as exc:
            return stripe_error(400, str(exc))
        return JSONResponse(_switch_rows(state))

    @app.delete("/_hookproof/switches", include_in_schema=False)
    async def clear_switches(object_id: str | None = None) -> JSONResponse:
        if object_id is None:
            state.switches.clear(everything=True)
        else:
            state.switches.clear(object_id)
        return JSONResponse(_switch_rows(state))

    @app.post("/_hookproof/sink/faults", include_in_schema=False)
    async def arm_sink_fault(body: SinkFaultIn) -> JSONResponse:
        try:
            state.sink.fault(body.business_key, fail_times=body.fail_times, fail_status=body.fail_status,
                             drop_times=body.drop_times, delay_s=body.delay_s)
        except ValueError as exc:
            return stripe_error(400, str(exc))
        return JSONResponse({"faults": {k: vars(f) for k, f in state.sink.faults().items()}})


def openapi_schema() -> dict[str, Any]:
    """The server's OpenAPI document (FastAPI's), for fuzzing with Schemathesis."""
    return create_app(ServerState()).openapi()
