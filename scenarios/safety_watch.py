"""What explore's safety checks could find, followed one observation at a time.

`hookproof explore` runs the safety checks (``duplicated``, ``regressed``) after every
step over every observation of the example so far; each run makes one pass over the
history and builds the checks' index, a few hundred microseconds even for a handful of
attempts. `SafetyWatch` reads each observation once, as it is taken, and says when
neither check can find anything (`SafetyWatch.clear`); the checks then need not run. When
it cannot say so, the checks run in full, exactly as before, and name what they find.

`clear` is True only when all of these hold for the observations added so far:

- no observation shows a business key more than once (``duplicated`` finds a key only
  when some observation shows it at least twice);
- every state carries a version, so ``regressed`` never maps a status to a version
  through the provider's truth (which grows with the world) and compares versions only;
- their times (`Observation.at`) never went down, so ``regressed``'s walk in time order
  (a stable sort) is the order they were added in;
- along that walk, no object's version is ever lower than the highest seen before for
  it (``regressed`` finds an object only then).

Each condition only adds to what the checks themselves require for a finding, so
``clear`` never hides one (``tests/scenarios/test_safety_watch.py`` compares it with the
checks over random observation sequences). O(effects + states) per observation.
"""

from __future__ import annotations

from collections import _count_elements  # type: ignore[attr-defined]
from operator import attrgetter
from typing import Sequence

from hookproof.scenarios.observations import Observation

#: The checks whose findings `SafetyWatch.clear` rules out.
WATCHED: frozenset[str] = frozenset({"duplicated", "regressed"})

_BUSINESS_KEY = attrgetter("business_key")


class SafetyWatch:
    """The safety checks' possible findings over observations added in order (`add`)."""

    __slots__ = ("_high", "_last", "_last_at", "_seen", "_tripped")

    def __init__(self) -> None:
        self._high: dict[str, int] = {}  # per object, the highest version seen
        self._last_at = float("-inf")
        self._seen = 0  # observations added
        self._last: Observation | None = None
        self._tripped = False  # a condition failed: the checks must run from now on

    def add(self, obs: Observation) -> None:
        """Take in the next observation (the one the checks will see last)."""
        self._seen += 1
        self._last = obs
        if self._tripped:
            return
        if not obs.at >= self._last_at:  # went down (or is not a number)
            self._tripped = True
            return
        self._last_at = obs.at
        counts: dict[str, int] = {}
        _count_elements(counts, map(_BUSINESS_KEY, obs.effects))
        if len(counts) != len(obs.effects):  # some key has two rows or more
            self._tripped = True
            return
        high = self._high
        for state in obs.states:
            version = state.version
            if version is None:
                self._tripped = True
                return
            prev = high.get(state.object_id)
            if prev is None or version > prev:
                high[state.object_id] = version
            elif version < prev:
                self._tripped = True
                return

    def clear(self, observations: Sequence[Observation]) -> bool:
        """True when ``duplicated`` and ``regressed`` over `observations` can find nothing;
        `observations` must be exactly those added (else False: the checks decide)."""
        return (not self._tripped and self._seen == len(observations)
                and (not observations or observations[-1] is self._last))


__all__ = ["WATCHED", "SafetyWatch"]
