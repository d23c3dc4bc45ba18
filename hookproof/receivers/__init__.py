"""The shared core of the reference receivers: verification per profile, business keys,
tables, the request pipeline, framework adapters and the CLI."""

from hookproof.receivers.business import Effect, StateChange, effect_of, handles, state_of
from hookproof.receivers.cli import run_cli
from hookproof.receivers.config import ReceiverConfig
from hookproof.receivers.core import OK, Receiver, Reply
from hookproof.receivers.db import EFFECTS_QUERY, STATE_QUERY, TRANSIENT_DB_ERRORS, Store
from hookproof.receivers.profiles import VERIFIERS, SignatureError, WebhookEvent, get_verifier
from hookproof.receivers.web import fastapi_app, flask_app, make_app, receiver_of

__all__ = [
    "EFFECTS_QUERY",
    "Effect",
    "OK",
    "ReceiverConfig",
    "Receiver",
    "Reply",
    "STATE_QUERY",
    "SignatureError",
    "StateChange",
    "Store",
    "TRANSIENT_DB_ERRORS",
    "VERIFIERS",
    "WebhookEvent",
    "effect_of",
    "fastapi_app",
    "flask_app",
    "get_verifier",
    "handles",
    "make_app",
    "receiver_of",
    "run_cli",
    "state_of",
]
