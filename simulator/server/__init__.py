"""The provider server: Stripe-shaped API of the world's truth, and the idempotent effect sink."""

from hookproof.simulator.server.app import ConnectionDropped, create_app, openapi_schema
from hookproof.simulator.server.runner import run_server
from hookproof.simulator.server.sink import EffectSink, SinkFault, SinkRecord
from hookproof.simulator.server.state import DEFAULT_API_KEY, Decision, ServerState, Switch, Switches
from hookproof.simulator.serving import ServerHandle, serve_app

__all__ = [
    "ConnectionDropped",
    "DEFAULT_API_KEY",
    "Decision",
    "EffectSink",
    "ServerHandle",
    "ServerState",
    "SinkFault",
    "SinkRecord",
    "Switch",
    "Switches",
    "create_app",
    "openapi_schema",
    "run_server",
    "serve_app",
]
