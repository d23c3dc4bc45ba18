"""Fake people and products for the worlds: Faker draws, deterministic from a world's seed.

Building a Faker instance costs tens of milliseconds (it loads its locale's providers), and
the state machine builds a world for every example, so one instance per locale serves every
world in the process. Each burst of draws reseeds it from (the world's seed, the number of
the burst), under a lock, so a world's names depend on its seed alone, whatever other worlds
(other threads, other examples) draw in between.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

from faker import Faker

_INSTANCES: dict[str, Faker] = {}
_LOCK = threading.Lock()


class FakeData:
    """One world's source of fake data: ``with fake("en_US") as fk: fk.name()``."""

    def __init__(self, seed: int) -> None:
        self._seed = seed
        self._bursts = 0

    @contextmanager
    def __call__(self, locale: str = "en_US") -> Iterator[Faker]:
        """The locale's shared Faker, reseeded for this world's next burst of draws; hold it
        only for the draws (the lock keeps other worlds out meanwhile)."""
        with _LOCK:
            instance = _INSTANCES.get(locale)
            if instance is None:
                instance = _INSTANCES[locale] = Faker(locale)
            self._bursts += 1
            instance.seed_instance(self._seed * 7919 + self._bursts)
            yield instance
