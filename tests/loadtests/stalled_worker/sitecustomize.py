"""A test hook: a storm's Locust worker whose loop stalls again and again.

On ``PYTHONPATH`` with ``HOOKPROOF_TEST_STALL_S`` set, every Locust worker process
(``-m locust ... --worker``) runs a greenlet that, every second, blocks its gevent loop
for that many seconds (libc's ``usleep`` through `ctypes.PyDLL`, which keeps the GIL):
its senders and their reads stop meanwhile, as on a saturated CPU. The greenlet is
spawned when the storm's state module is first imported, after Locust's monkey-patching
(a thread started before it deadlocks the imports). Any other process is left alone.
"""

from __future__ import annotations

import ctypes
import importlib.abc
import importlib.machinery
import os
import sys
from types import ModuleType
from typing import Any, Sequence

_STALL = os.environ.get("HOOKPROOF_TEST_STALL_S")
_MODULE = "hookproof.loadtests.storm_state"


def _stall(seconds: float) -> None:
    import gevent

    holding = ctypes.PyDLL(None).usleep  # keeps the GIL: the loop and the process stop
    while True:
        gevent.sleep(1.0)
        holding(int(seconds * 1_000_000))


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: Any, seconds: float) -> None:
        self.inner, self.seconds = inner, seconds

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        import gevent

        gevent.spawn(_stall, self.seconds)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader, self.seconds)
        return spec


if _STALL and "--worker" in sys.argv and "locust" in " ".join(sys.argv):
    sys.meta_path.insert(0, _Finder(float(_STALL)))
