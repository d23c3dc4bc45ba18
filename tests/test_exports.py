"""Each package's `__all__` is sorted, resolves, and lists every public class and function
defined in the package's own modules that the package exposes."""

from __future__ import annotations

import importlib
import inspect

import pytest

PACKAGES = ["hookproof.simulator", "hookproof.simulator.profiles", "hookproof.simulator.world",
            "hookproof.simulator.delivery", "hookproof.simulator.server", "hookproof.scenarios", "hookproof.reports"]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=str), f"{name}.__all__ is not sorted"
    for attr in exported:
        assert hasattr(module, attr), f"{name}.__all__ names {attr!r}, which does not exist"


@pytest.mark.parametrize("name", PACKAGES)
def test_all_lists_every_public_member(name: str) -> None:
    module = importlib.import_module(name)
    lazy = getattr(module, "_EXPORTS", None)
    if lazy is not None:  # a PEP 562 package: what it can hand out is what __all__ lists
        assert set(lazy) == set(module.__all__), f"{name}: _EXPORTS and __all__ differ"
        return
    root = ".".join(name.split(".")[:2])  # hookproof.simulator for hookproof.simulator.profiles
    public = {
        attr for attr, value in vars(module).items()
        if not attr.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and ".".join(getattr(value, "__module__", "").split(".")[:2]) == root
    }
    missing = public - set(module.__all__)
    assert not missing, f"{name} exposes {sorted(missing)} without listing them in __all__"
