"""The provider server: Stripe-shaped API of the world's truth, and the idempotent effect sink."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hookproof.simulator.lazy import lazy_exports

#: public name -> the module that defines it (imported on first access, PEP 562)
_EXPORTS: dict[str, str] = {
    "ConnectionDropped": "hookproof.simulator.server.app",
    "DEFAULT_API_KEY": "hookproof.simulator.server.state",
    "Decision": "hookproof.simulator.server.state",
    "EffectSink": "hookproof.simulator.server.sink",
    "ServerHandle": "hookproof.simulator.serving",
    "ServerState": "hookproof.simulator.server.state",
    "SinkFault": "hookproof.simulator.server.sink",
    "SinkRecord": "hookproof.simulator.server.sink",
    "Switch": "hookproof.simulator.server.state",
    "Switches": "hookproof.simulator.server.state",
    "create_app": "hookproof.simulator.server.app",
    "openapi_schema": "hookproof.simulator.server.app",
    "run_server": "hookproof.simulator.server.runner",
    "serve_app": "hookproof.simulator.serving",
}

if TYPE_CHECKING:
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
