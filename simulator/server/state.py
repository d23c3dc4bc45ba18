"""What the provider server serves: worlds, API keys, switches and the effect sink.

`ServerState` is shared between the server's thread (uvicorn's event loop) and the
thread that drives a scenario, so every mutable part is guarded by a lock. Worlds
are not thread-safe themselves: code that changes a world while the server serves
it does so under ``with state.lock:`` (the server reads under the same lock).

Switches make the provider API misbehave on purpose, per object id or globally:

- ``stale``: serve the object's previous version (version n-1; version 1 stays 1);
- ``not_found``: answer 404 ``resource_missing`` as if the object did not exist;
- ``status``: answer this 5xx (``api_error``);
- ``slow_s``: wait this many seconds before answering;
- ``rate_limit_per_s``: answer 429 with ``Retry-After`` (whole seconds) past this
  many requests in any sliding one-second window;
- ``times``: the switch heals after affecting this many requests (None: until cleared).

An object's own switch wins over the global one for requests about that object;
list endpoints only see the global switch. For objects too many to switch one by one
(a storm's), `Switches.first_request` installs a rule: the first request about each
object id the rule gives a switch for is answered by that switch, once.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Iterator, Sequence

from hookproof.simulator.server.answer_times import AnswerTimes
from hookproof.simulator.server.holds import HeldFetches
from hookproof.simulator.server.refusals import RefusalLog
from hookproof.simulator.server.served import ServedLog
from hookproof.simulator.server.sink import EffectSink
from hookproof.simulator.world import World

#: The API key a fresh `ServerState` accepts: a test secret key of Stripe's form (``sk_test_`` + 24+ characters).
DEFAULT_API_KEY = "sk_test_51HookproofSimulatorKey000000000000"


@dataclass(frozen=True)
class Switch:
    """One misbehaviour of the provider API (see the module docstring).

    Attributes:
        stale: serve the previous version of the object.
        not_found: answer 404 as if the object did not exist.
        status: a status code (5xx) to answer instead of the object, or None.
        slow_s: seconds to wait before answering.
        rate_limit_per_s: requests allowed per sliding second before 429, or None.
        times: requests the switch affects before it heals, or None (until cleared).
    """

    stale: bool = False
    not_found: bool = False
    status: int | None = None
    slow_s: float = 0.0
    rate_limit_per_s: int | None = None
    times: int | None = None

    def __post_init__(self) -> None:
        if self.status is not None and not 400 <= self.status <= 599:
            raise ValueError(f"switch status must be 4xx or 5xx, not {self.status}")
        if self.slow_s < 0:
            raise ValueError(f"slow_s must be >= 0, not {self.slow_s}")
        if self.rate_limit_per_s is not None and self.rate_limit_per_s < 0:
            raise ValueError(f"rate_limit_per_s must be >= 0, not {self.rate_limit_per_s}")
        if self.times is not None and self.times < 1:
            raise ValueError(f"times must be >= 1 or None, not {self.times}")


@dataclass(frozen=True)
class Decision:
    """What the server does with one provider-API request after the switches.

    Attributes:
        slow_s: seconds to wait first.
        retry_after_s: when not None, answer 429 with this ``Retry-After`` (seconds).
        status: when not None, answer this error status.
        not_found: answer 404.
        stale: serve the previous version.
    """

    slow_s: float = 0.0
    retry_after_s: int | None = None
    status: int | None = None
    not_found: bool = False
    stale: bool = False


@dataclass
class _Slot:
    switch: Switch
    remaining: int | None
    hits: deque[float] = field(default_factory=deque)


class Switches:
    """Thread-safe switch table keyed by object id (None: global).

    Args:
        clock: monotonic seconds, for the rate limiter's window (injectable in tests).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._slots: dict[str | None, _Slot] = {}
        self._first: Callable[[str], Switch | None] | None = None
        self._firsts_seen: set[str] = set()

    def first_request(self, rule: Callable[[str], Switch | None] | None) -> None:
        """Answer the first request about each object id for which `rule` returns a switch
        with that switch (its `status` or `not_found`), then serve that id normally; None
        removes the rule. An object's own installed switch still wins. `rule` must be
        cheap and must not call back into the switches (it runs under their lock)."""
        with self._lock:
            self._first = rule
            self._firsts_seen = set()

    def set(self, object_id: str | None = None, switch: Switch | None = None, **fields: object) -> Switch:
        """Install `switch` (or one built from `fields`) for `object_id` (None: global)."""
        sw = switch if switch is not None else Switch(**fields)  # type: ignore[arg-type]
        if switch is not None and fields:
            sw = replace(switch, **fields)  # type: ignore[arg-type]
        with self._lock:
            self._slots[object_id] = _Slot(sw, sw.times)
        return sw

    def clear(self, object_id: str | None = None, *, everything: bool = False) -> None:
        """Remove the switch of `object_id` (None: the global one), or all of them."""
        with self._lock:
            if everything:
                self._slots.clear()
            else:
                self._slots.pop(object_id, None)

    def get(self, object_id: str | None = None) -> Switch | None:
        """The switch installed for `object_id` (None: global), if any."""
        with self._lock:
            slot = self._slots.get(object_id)
            return slot.switch if slot else None

    def items(self) -> list[tuple[str | None, Switch, int | None]]:
        """Every installed switch as ``(object_id, switch, requests left or None)``."""
        with self._lock:
            return [(k, s.switch, s.remaining) for k, s in self._slots.items()]

    def decide(self, object_id: str | None) -> Decision:
        """Consume the switch that applies to a request about `object_id` (None: a list)."""
        with self._lock:
            if (self._first is not None and object_id is not None and object_id not in self._slots
                    and object_id not in self._firsts_seen):
                first = self._first(object_id)
                if first is not None:
                    self._firsts_seen.add(object_id)
                    return Decision(slow_s=first.slow_s, status=first.status, not_found=first.not_found,
                                    stale=first.stale)
            key: str | None = object_id if object_id in self._slots else None
            slot = self._slots.get(key)
            if slot is None:
                return Decision()
            sw = slot.switch
            retry_after = self._rate_limited(slot) if sw.rate_limit_per_s is not None else None
            if slot.remaining is not None:
                slot.remaining -= 1
                if slot.remaining <= 0:
                    del self._slots[key]
            return Decision(slow_s=sw.slow_s, retry_after_s=retry_after, status=sw.status,
                            not_found=sw.not_found, stale=sw.stale)

    def _rate_limited(self, slot: _Slot) -> int | None:
        now = self._clock()
        hits = slot.hits
        while hits and hits[0] <= now - 1.0:
            hits.popleft()
        limit = slot.switch.rate_limit_per_s or 0
        if len(hits) >= limit:
            oldest = hits[0] if hits else now
            return max(1, math.ceil(oldest + 1.0 - now))
        hits.append(now)
        return None


def bearer_token(authorization: str, schemes: tuple[str, ...] = ("bearer",)) -> str | None:
    """The credentials of an ``Authorization`` header value under one of `schemes` (lower
    case; GitHub's API also takes ``token``), or None."""
    scheme, _, credentials = authorization.partition(" ")
    return credentials.strip() or None if scheme.lower() in schemes else None


class ServerState:
    """Everything the provider server reads, shared across threads.

    Args:
        worlds: the worlds to serve; an id is looked up in each, newest world first.
        api_keys: keys accepted as ``Authorization: Bearer <key>`` or Basic username.
        sink: the effect sink's store (a fresh one by default).

    Attributes:
        lock: re-entrant lock guarding the worlds; hold it while changing a served world.
        switches: the provider API's switch table.
        sink: the effect sink's store.
        refusals: the provider API's refused requests (`refusals.RefusalLog`).
        served: the statuses the provider API served per object (`served.ServedLog`).
        holds: fetches whose answers the provider API holds (`holds.HeldFetches`).
        answer_times: how long the API and the sink took to answer (`answer_times.AnswerTimes`).
    """

    def __init__(
        self,
        worlds: Sequence[World] = (),
        *,
        api_keys: Sequence[str] = (DEFAULT_API_KEY,),
        sink: EffectSink | None = None,
    ) -> None:
        self.lock = threading.RLock()
        self._worlds: list[World] = list(worlds)
        self._api_keys: dict[str, str | None] = dict.fromkeys(api_keys)
        self._owners: dict[int, str] = {}  # id(world) -> the other account owning it (none: the endpoint's)
        self._refused_foreign: set[str] = set()
        self._unmodelled_versions: set[str] = set()
        self.switches = Switches()
        self.sink = sink if sink is not None else EffectSink()
        self.refusals = RefusalLog()
        self.served = ServedLog()
        self.holds = HeldFetches()
        self.answer_times = AnswerTimes()

    # ---- worlds -----------------------------------------------------------------
    def add_world(self, world: World, *, account: str | None = None) -> None:
        """Serve `world` too (its ids win over older worlds' on a clash); with `account`,
        as that other account's (the foreign account a ``foreign-account`` scenario
        invents): only a token of `account` sees its objects (`worlds_for`). Serving a
        world already served only sets its account."""
        with self.lock:
            if not any(w is world for w in self._worlds):
                self._worlds.append(world)
            if account is None:
                self._owners.pop(id(world), None)
            else:
                self._owners[id(world)] = account

    def set_world(self, world: World) -> None:
        """Serve only `world` from now on."""
        with self.lock:
            self._worlds = [world]
            self._owners.clear()

    @property
    def worlds(self) -> list[World]:
        """The served worlds, oldest first (a copy)."""
        with self.lock:
            return list(self._worlds)

    def iter_worlds_newest_first(self) -> Iterator[World]:
        """The served worlds, newest first (a snapshot of the list)."""
        return reversed(self.worlds)

    def worlds_for(self, key: str | None) -> Iterator[World]:
        """The served worlds whose objects API key `key` may read, newest first: those of
        the key's account (`add_api_key`'s `account`; none: the endpoint's own, every key
        a run hands its receiver), never another account's (`add_world`'s `account`)."""
        with self.lock:
            account = self._api_keys.get(key) if key else None
            return reversed([w for w in self._worlds if self._owners.get(id(w)) == account])

    def note_refused_foreign(self, object_id: str) -> None:
        """Remember that the provider API refused `object_id` to a token because another
        account owns it (`worlds_for`): the receiver asked, and was told it cannot see it."""
        with self.lock:
            self._refused_foreign.add(object_id)

    def refused_foreign(self, object_ids: Iterable[str]) -> frozenset[str]:
        """The ids of `object_ids` the provider API refused to a token as another account's
        (`note_refused_foreign`)."""
        with self.lock:
            return frozenset(i for i in object_ids if i in self._refused_foreign)

    def note_api_version(self, version: str) -> None:
        """Remember a request's ``Stripe-Version`` when hookproof does not model it
        (`stripe_versions.unmodelled`): it was served the latest modelled shape."""
        from hookproof.simulator.profiles.stripe_versions import unmodelled

        if unmodelled(version):
            with self.lock:
                if len(self._unmodelled_versions) < 16:  # a run's SDKs pin a few
                    self._unmodelled_versions.add(version)

    def api_version_note(self) -> str | None:
        """The run's one note on the ``Stripe-Version``s requested that hookproof does not model
        (`note_api_version`, `stripe_versions.unmodelled_note`), or None."""
        from hookproof.simulator.profiles.stripe_versions import unmodelled_note

        with self.lock:
            versions = tuple(self._unmodelled_versions)
        return unmodelled_note(versions)

    # ---- keys -------------------------------------------------------------------
    def add_api_key(self, key: str, *, account: str | None = None) -> None:
        """Accept `key` as well: a key of the endpoint's own account, or with `account`, of
        that other account (it reads only that account's worlds, `worlds_for`)."""
        if not key:
            raise ValueError("an API key cannot be empty")
        with self.lock:
            self._api_keys[key] = account

    def set_api_keys(self, keys: Sequence[str]) -> None:
        """Accept exactly `keys`, each of the endpoint's account (an empty sequence rejects
        every request)."""
        with self.lock:
            self._api_keys = dict.fromkeys(keys)

    def accepts(self, key: str | None) -> bool:
        """True when `key` is one of the accepted API keys."""
        if not key:
            return False
        with self.lock:
            return key in self._api_keys

    @property
    def api_keys(self) -> frozenset[str]:
        """The accepted API keys."""
        with self.lock:
            return frozenset(self._api_keys)
