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
        """Serve the provider API and the effect sink over one Stripe billing world (from --seed).

        The API answers in Stripe's shape (GET /v1/customers/{id}, /v1/subscriptions/{id},
        /v1/events/{id}, their lists, expand) to the key it prints. Mercado Pago's, Paddle's,
        Shopify's and GitHub's routes answer too, but hold no objects here: their worlds are
        served while certify, explore and storm run, and by send --serve-api.
        """
        from hookproof.simulator.errors import SimulatorError
        from hookproof.simulator.server.runner import serve as run_serve

        try:
            run_serve(port, host, seed)
        except SimulatorError as exc:
            raise fail(str(exc)) from None
