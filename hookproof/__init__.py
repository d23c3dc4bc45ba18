"""hookproof: certify webhook receivers before go-live.

One installed namespace: the front door (CLI, config, pytest plugin) lives here, the
provider simulator in `hookproof.simulator`, scenarios and checks in
`hookproof.scenarios`, chaos in `hookproof.chaos`, storms in `hookproof.loadtests`, and
report renderers in `hookproof.reports`. Importing this package imports nothing else.
"""

from __future__ import annotations

from typing import Any

__all__ = ["__version__"]


def __getattr__(name: str) -> Any:
    """``__version__``, read from the installed distribution's metadata on first use."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("hookproof")
        except PackageNotFoundError:  # a source tree that was never installed
            value = "0+unknown"
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module 'hookproof' has no attribute {name!r}")
