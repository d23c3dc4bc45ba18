"""The package's public API: a sorted, complete `__all__` (as in httpx)."""

from __future__ import annotations

import types

from hookproof import reports


def test_all_is_sorted_and_complete() -> None:
    public = {name for name, value in vars(reports).items()
              if not name.startswith("_") and not isinstance(value, types.ModuleType) and name != "annotations"}
    assert reports.__all__ == sorted(reports.__all__)
    assert set(reports.__all__) == public
