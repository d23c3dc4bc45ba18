"""Framework adapters: a `Receiver` as a FastAPI (ASGI) or Flask (WSGI) app.

Routes: ``POST /webhooks`` (the endpoint), ``GET /hookproof/observe`` (test-only: effects
and states for hookproof's ``http`` observer), ``GET /healthz``. The receiver object is
reachable as ``app.state.receiver`` (FastAPI) or ``app.extensions["receiver"]`` (Flask).
"""

# No `from __future__ import annotations` here: FastAPI resolves the handlers' annotations
# (``request: Request``) at definition time, and they are imported inside the factory.
from typing import Any

from hookproof.receivers.core import Receiver


def fastapi_app(receiver: Receiver) -> Any:
    """A FastAPI app around `receiver`; handlers run in the thread pool (blocking DB code)."""
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse
    from starlette.concurrency import run_in_threadpool

    app = FastAPI(title=f"hookproof example receiver: {receiver.name}", openapi_url=None)
    app.state.receiver = receiver

    @app.post("/webhooks")
    async def webhooks(request: Request) -> JSONResponse:
        body = await request.body()  # the raw bytes: signatures cover them exactly
        headers = {k.lower(): v for k, v in request.headers.items()}
        reply = await run_in_threadpool(receiver.handle, body, headers)
        return JSONResponse(dict(reply.body), status_code=reply.status)

    @app.get("/hookproof/observe")
    async def observe() -> JSONResponse:
        return JSONResponse(await run_in_threadpool(receiver.observe))

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok", "receiver": receiver.name}

    return app


def flask_app(receiver: Receiver) -> Any:
    """A Flask app around `receiver` (serve it with a threaded server)."""
    from flask import Flask, jsonify, request

    app = Flask(f"receiver_{receiver.name}")
    app.extensions["receiver"] = receiver

    @app.post("/webhooks")
    def webhooks() -> Any:
        body = request.get_data(cache=False)  # the raw bytes, before any form/JSON parsing
        headers = {k.lower(): v for k, v in request.headers.items()}
        reply = receiver.handle(body, headers)
        return jsonify(dict(reply.body)), reply.status

    @app.get("/hookproof/observe")
    def observe() -> Any:
        return jsonify(receiver.observe())

    @app.get("/healthz")
    def healthz() -> Any:
        return jsonify({"status": "ok", "receiver": receiver.name})

    return app


def make_app(receiver: Receiver) -> Any:
    """The app for `receiver.framework`."""
    return flask_app(receiver) if receiver.framework == "flask" else fastapi_app(receiver)


def receiver_of(app: Any) -> Receiver:
    """The `Receiver` behind an app made here."""
    if hasattr(app, "extensions") and "receiver" in getattr(app, "extensions", {}):
        return app.extensions["receiver"]
    return app.state.receiver
