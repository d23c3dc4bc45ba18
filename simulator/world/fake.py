"""Fake people and products for the worlds: Faker draws, deterministic from a world's seed.

Building a Faker instance costs tens of milliseconds (it loads its locale's providers), and
the state machine builds a world for every example, so one instance per locale serves every
world in the process. Each burst of draws reseeds it from (the world's seed, the number of
the burst), under a lock, so a world's names depend on its seed alone, whatever other worlds
(other threads, other examples) draw in between.

The state machine also builds the same seed's world again for every example, so a burst's
draws are remembered: the same call after the same reseed and the same earlier calls of the
burst returns what it returned the first time, without drawing (a customer's name, email and
address cost about half a millisecond). A call not seen before reseeds the instance, replays
the burst's earlier calls and draws, so every value is the one Faker itself draws.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, Iterator

from faker import Faker

_INSTANCES: dict[str, Faker] = {}
_LOCK = threading.Lock()
#: Draws remembered: (locale, reseed, the burst's calls so far, this call) -> its value.
_DRAWS: dict[tuple[Any, ...], Any] = {}
#: Entries at most; past it the memory starts again empty (a storm draws from many seeds).
DRAWS_MAX = 4096
#: Values kept: immutable ones only (a list handed out twice could be changed by its first taker).
_IMMUTABLE = (str, int, float, bool, Decimal)
_MISS = object()

Call = tuple[str, tuple[Any, ...], tuple[tuple[str, Any], ...]]


class _Burst:
    """One burst of draws on a shared instance (used as the Faker it wraps: ``fk.name()``)."""

    def __init__(self, instance: Faker, locale: str, reseed: int) -> None:
        self._instance = instance
        self._key: tuple[Any, ...] = (locale, reseed)
        self._reseed = reseed
        self._calls: list[Call] = []
        self._synced = False  # the instance's state is the one after `_calls`, drawn live

    def _live(self, call: Call) -> Any:
        if not self._synced:
            self._instance.seed_instance(self._reseed)
            for name, args, kwargs in self._calls:
                getattr(self._instance, name)(*args, **dict(kwargs))
            self._synced = True
        name, args, kwargs = call
        return getattr(self._instance, name)(*args, **dict(kwargs))

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._instance, name)
        if not callable(attr):
            return attr

        def draw(*args: Any, **kwargs: Any) -> Any:
            call: Call = (name, args, tuple(sorted(kwargs.items())))
            key = (*self._key, call)
            try:
                value = _DRAWS.get(key, _MISS)
            except TypeError:  # an unhashable argument: drawn live, not remembered
                key, value = (), _MISS
            if value is _MISS:
                value = self._live(call)
                if key and isinstance(value, _IMMUTABLE):
                    if len(_DRAWS) >= DRAWS_MAX:
                        _DRAWS.clear()
                    _DRAWS[key] = value
            else:
                self._synced = False
            self._calls.append(call)
            self._key = key or (*self._key, call)
            return value

        return draw


class FakeData:
    """One world's source of fake data: ``with fake("en_US") as fk: fk.name()``."""

    def __init__(self, seed: int) -> None:
        self._seed = seed
        self._bursts = 0

    @contextmanager
    def __call__(self, locale: str = "en_US") -> Iterator[Any]:
        """The locale's shared Faker, reseeded for this world's next burst of draws (what it
        yields answers Faker's calls); hold it only for the draws (the lock keeps other
        worlds out meanwhile)."""
        with _LOCK:
            instance = _INSTANCES.get(locale)
            if instance is None:
                instance = _INSTANCES[locale] = Faker(locale)
            self._bursts += 1
            yield _Burst(instance, locale, self._seed * 7919 + self._bursts)


__all__ = ["DRAWS_MAX", "FakeData"]
