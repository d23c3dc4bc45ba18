"""PEP 562 lazy re-exports for package ``__init__`` files.

A package lists its public names and the submodules that define them; a name's module is
imported on first access, so importing a package (or one of its submodules, which imports
the package first) costs nothing for the names it does not use.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping, Sequence


def lazy_exports(package: str, exports: Mapping[str, str],
                 public: Sequence[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for `package`, whose `exports` maps each public name to
    the module defining it. ``__getattr__`` raises AttributeError for any other name."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__
