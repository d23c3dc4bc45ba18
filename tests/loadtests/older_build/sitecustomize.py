"""Makes a Python process an older build of hookproof's storm, for the storm-worker tests: on
this directory's PYTHONPATH, `hookproof.loadtests.spec` loads with another `PROTOCOL` (as a
build whose storm spec or messages differ says, under the same version string)."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any, Sequence

TARGET = "hookproof.loadtests.spec"


class _OlderBuild(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if fullname != TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        assert spec is not None and spec.loader is not None
        load = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            load(module)
            module.PROTOCOL -= 1  # type: ignore[attr-defined]

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


sys.meta_path.insert(0, _OlderBuild())
