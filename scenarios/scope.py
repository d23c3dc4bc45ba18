"""The part of a receiver's observation about one world, for worlds of a million events.

`scenarios.business_keys.scoped` keeps the effects, states and counters of one world
(a scenario's, an example's, a storm's) from sets of strings it copies on each read.
A storm's world has a million business keys and object ids: `Scope` holds them as
UTF-8 bytes (`scenarios.id_codes.IdCodes`, about the id's length plus 24 bytes each,
where a string in a set costs some 100) and keeps an observation's part with a few
numpy passes per read, without copying the sets. `Scope.observation` gives exactly what
`scoped` gives for the same object ids, keys and counters; when every row is kept, the
observation's own tuples are kept (no copy per read); effect rows held as columns
(`scenarios.observations.EffectRows`) are read a step of keys at a time and stay columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import compress, islice
from operator import attrgetter
from typing import TYPE_CHECKING, Iterable, Sequence

from hookproof.scenarios.id_codes import IdCodes
from hookproof.scenarios.observations import EffectRows, Observation
from hookproof.simulator.events import Event

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Events read per step while a scope is built, held decoded at once: a storm's are decoded
#: from its spool on each pass, and 8192 of them (some 10 MB of small objects) left as many
#: of Python's 1 MiB arenas each pinned by a few objects that outlived the step, resident
#: through the checks.
CHUNK = 1024
_KEY = attrgetter("business_key")
_OBJECT = attrgetter("object_id")


def _named(key: str) -> str:
    """What a key names second (``refund:<payment>:…`` → the payment; a key without a
    colon names itself), as `scenarios.business_keys.scoped` reads it."""
    parts = key.split(":")
    return parts[1] if len(parts) > 1 else key


def _last(key: str) -> str:
    """What a key names last (``payment:platform:pi_1`` → pi_1), as `scoped` also reads it."""
    return key.rsplit(":", 1)[-1]


@dataclass
class Scope:
    """One world's object ids, business keys and counter keys (see the module docstring).

    Attributes:
        objects: the world's object ids, coded (`IdCodes`).
        keys: the business keys its events carry, coded.
        counters: the counter keys its events move (a team's `[counters]`; few).
    """

    objects: IdCodes = field(default_factory=IdCodes)
    keys: IdCodes = field(default_factory=IdCodes)
    counters: frozenset[str] = frozenset()

    @classmethod
    def of_events(cls, events: Iterable[Event], counters: Iterable[str] = ()) -> Scope:
        """The scope of `events` (read once, `CHUNK` at a time: a storm's stream from disk):
        their object ids and their business keys (None and empty keys left out)."""
        scope = cls(counters=frozenset(counters))
        it = iter(events)
        while chunk := list(islice(it, CHUNK)):
            scope.objects.code_all(list(map(_OBJECT, chunk)))
            scope.keys.code_all([k for k in map(_KEY, chunk) if k])
        scope.objects.trim()
        scope.keys.trim()
        return scope

    def _names_object(self, keys: Sequence[str]) -> "npt.NDArray[np.bool_]":
        """Per key of `keys`, whether what it names second or last is one of the world's objects."""
        named = self.objects.code_all(list(map(_named, keys)), add=False) >= 0
        rest = (~named).nonzero()[0]
        if rest.size:
            named[rest] = self.objects.code_all([_last(keys[i]) for i in rest.tolist()], add=False) >= 0
        return named

    def _kept(self, keys: list[str]) -> "npt.NDArray[np.bool_]":
        """Per key of `keys`, whether an effect row of it is about this world."""
        kept = self.keys.code_all(keys, add=False) >= 0
        rest = (~kept).nonzero()[0]
        if rest.size:
            kept[rest] = self._names_object([keys[i] for i in rest.tolist()])
        return kept

    def observation(self, obs: Observation) -> Observation:
        """The part of `obs` about this world, as `scenarios.business_keys.scoped(obs,
        objects, keys, counters)`: effects whose key is one of `keys` or names one of
        `objects` second or last, states of `objects`, counters under `counters` or naming an
        object; the declared state kinds stay. Rows keep their order; a tuple all of whose
        rows are kept is `obs`'s own. Pure; O(rows) in numpy, a Python step per row only to
        read its key."""
        effects = obs.effects
        if isinstance(effects, EffectRows):  # a step of keys at a time: no string per row kept
            import numpy as np

            kept = np.concatenate([self._kept(keys) for keys in effects.key_chunks()]) if effects \
                else np.zeros(0, np.bool_)
            if not kept.all():
                effects = effects.compress(kept.tolist())
        elif effects:
            kept = self._kept(list(map(_KEY, effects)))
            if not kept.all():
                effects = tuple(compress(effects, kept.tolist()))
        states = obs.states
        if states:
            seen = self.objects.code_all(list(map(_OBJECT, states)), add=False) >= 0
            if not seen.all():
                states = tuple(compress(states, seen.tolist()))
        counters = obs.counters
        if counters is not None:
            names = list(counters)
            own = self._names_object(names) if names else ()
            counters = {k: counters[k] for k, named in zip(names, own) if k in self.counters or named}
        if effects is obs.effects and states is obs.states and counters == obs.counters and counters is None:
            return obs
        return replace(obs, effects=effects, states=states, counters=counters)


__all__: Sequence[str] = ["CHUNK", "Scope"]
