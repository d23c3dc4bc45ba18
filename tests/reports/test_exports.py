"""The package's public API: a sorted, complete `__all__` (as in httpx), handed out lazily."""

from __future__ import annotations

import importlib

from hookproof import reports


def test_all_is_sorted_and_complete() -> None:
    assert reports.__all__ == sorted(reports.__all__)
    assert set(reports.__all__) == set(reports._EXPORTS)
    for name, module in reports._EXPORTS.items():
        assert getattr(reports, name) is getattr(importlib.import_module(module), name)
