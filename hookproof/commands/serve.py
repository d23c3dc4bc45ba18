"""``hookproof serve``: the provider API and the effect sink in the foreground."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from hookproof.terminal import (
    fail,
)

if TYPE_CHECKING:
    pass


def register(app: typer.Typer) -> None:
    """Add ``hookproof serve`` to `app`."""

    @app.command()
    def serve(
        port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: any free port).")] = 12111,
        host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
        seed: Annotated[int, typer.Option("--seed", help="World seed.")] = 0,
    ) -> None:
        """Serve the provider API (Stripe and Mercado Pago shapes) and the effect sink."""
        from hookproof.simulator.errors import SimulatorError
        from hookproof.simulator.server.runner import serve as run_serve

        try:
            run_serve(port, host, seed)
        except SimulatorError as exc:
            raise fail(str(exc)) from None
