"""Extra CLI commands, one module each, registered on the Typer app by `register_all`.

A module here defines ``register(app: typer.Typer) -> None`` and keeps its heavy imports
inside the command function, so `hookproof --help` stays fast.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer


def register_all(app: typer.Typer) -> None:
    """Register every command module of this package on `app`, in name order."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)
