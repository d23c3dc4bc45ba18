"""Load shapes: the storm's offered rate as a pure function of elapsed seconds.

A webhook provider is an open system: it sends on its own schedule whatever the
receiver's latency. So a storm's shape is a *rate* (events per second, all users
together), not a number of users, and each Locust user paces itself against the
*intended* send times this module computes (`LoadShape.next_send_s`): a slow receiver
never lowers the offered load.

Kinds (all end at `duration_s`; after it the rate is 0 and no send is due):

- ``steady``: `rate_per_s` from the first second.
- ``ramp``: 0 → `rate_per_s` linearly over `ramp_s`, then held.
- ``spike``: `rate_per_s`, times `spike_factor` during ``[spike_at_s, spike_at_s + spike_s)``.
- ``soak``: a short ramp (`ramp_s`) to `rate_per_s`, held for a long `duration_s`.

Pure: no clock, no I/O; unit-tested without a Locust runner.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Iterator, Literal, Sequence

ShapeKind = Literal["steady", "ramp", "spike", "soak"]
SHAPE_KINDS: tuple[str, ...] = ("steady", "ramp", "spike", "soak")

@dataclass(frozen=True)
class LoadShape:
    """The offered rate over time.

    Attributes:
        kind: see the module docstring.
        rate_per_s: the plateau rate, events per second over all users (> 0).
        duration_s: length of the storm in seconds (> 0).
        ramp_s: seconds of the linear ramp (``ramp`` and ``soak``).
        spike_at_s / spike_s: start and length of the spike, seconds (``spike``).
        spike_factor: the spike's multiple of `rate_per_s` (``spike``).

    Raises:
        ValueError: a negative or zero rate or duration, an unknown kind, a spike
            factor below 1.
    """

    kind: ShapeKind
    rate_per_s: float
    duration_s: float
    ramp_s: float = 0.0
    spike_at_s: float = 0.0
    spike_s: float = 0.0
    spike_factor: float = 1.0

    def __post_init__(self) -> None:
        if self.kind not in SHAPE_KINDS:
            raise ValueError(f"unknown load shape {self.kind!r} (known: {', '.join(SHAPE_KINDS)})")
        if not (self.rate_per_s > 0 and math.isfinite(self.rate_per_s)):
            raise ValueError(f"rate_per_s must be a positive number, got {self.rate_per_s!r}")
        if not (self.duration_s > 0 and math.isfinite(self.duration_s)):
            raise ValueError(f"duration_s must be a positive number, got {self.duration_s!r}")
        if self.ramp_s < 0 or self.spike_s < 0 or self.spike_at_s < 0:
            raise ValueError("ramp_s, spike_at_s and spike_s must be >= 0")
        if self.spike_factor < 1:
            raise ValueError(f"spike_factor must be >= 1, got {self.spike_factor!r}")

    def rate_at(self, elapsed_s: float) -> float:
        """Offered events per second at `elapsed_s` seconds into the storm (0 outside it)."""
        if elapsed_s < 0 or elapsed_s >= self.duration_s:
            return 0.0
        if self.kind in ("ramp", "soak") and elapsed_s < self.ramp_s:
            return self.rate_per_s * elapsed_s / self.ramp_s
        if self.kind == "spike" and self.spike_at_s <= elapsed_s < self.spike_at_s + self.spike_s:
            return self.rate_per_s * self.spike_factor
        return self.rate_per_s

    def expected_events(self, until_s: float | None = None) -> float:
        """Events offered in ``[0, until_s)`` (default: the whole storm): the exact integral."""
        end = min(self.duration_s, self.duration_s if until_s is None else max(0.0, until_s))
        if self.kind in ("ramp", "soak") and self.ramp_s > 0:
            ramp_end = min(end, self.ramp_s)
            total = self.rate_per_s * ramp_end * ramp_end / (2 * self.ramp_s)
            return total + self.rate_per_s * max(0.0, end - self.ramp_s)
        total = self.rate_per_s * end
        if self.kind == "spike":
            overlap = max(0.0, min(end, self.spike_at_s + self.spike_s) - self.spike_at_s)
            total += self.rate_per_s * (self.spike_factor - 1) * overlap
        return total

    @cached_property
    def _total_events(self) -> float:
        """`expected_events()`, worked out once (every user's next send time asks for it)."""
        return self.expected_events()

    def time_at(self, events: float) -> float | None:
        """The elapsed seconds when `events` events have been offered (the inverse of
        `expected_events`), or None when the storm offers fewer. Bisection, 1 µs."""
        if events <= 0:
            return 0.0
        if events > self._total_events:
            return None
        if self.kind == "steady":
            return events / self.rate_per_s
        lo, hi = 0.0, self.duration_s
        while hi - lo > 1e-6:
            mid = (lo + hi) / 2
            if self.expected_events(mid) < events:
                lo = mid
            else:
                hi = mid
        return hi

    def next_send_s(self, elapsed_s: float, users: int) -> float | None:
        """The intended time (elapsed seconds) of a user's next send after one at `elapsed_s`.

        Each of `users` users sends every `users`-th event of the shape: the next send is
        when the shape has offered `users` more events, so together the users offer
        exactly `rate_at` (a ramp's slow start included). None when the storm is over.
        """
        if users < 1:
            raise ValueError(f"users must be >= 1, got {users}")
        nxt = self.time_at(self.expected_events(max(0.0, elapsed_s)) + users)
        return nxt if nxt is not None and nxt < self.duration_s else None

    def first_send_s(self, user_index: int, users: int) -> float:
        """When user `user_index` (0-based) of `users` first sends: user i takes the
        shape's events i, i + users, i + 2 users..., so users interleave."""
        t = self.time_at(user_index % users + 0.5)
        return t if t is not None else self.duration_s


class Pacer:
    """One user's intended send times, counted in events (`--rate` is events per second).

    `claim` gives the user's next turn (one event of the shape's: `LoadShape.next_send_s`);
    once it is due, `due_now` says whether it sends: False while earlier groups carried more
    new events than they took turns (a related burst: 2 to 5 events in one turn), so each of
    those events takes a turn of the user's; `drew(n)` says the group released carried `n`
    events sent for the first time. Copies, redeliveries and wave replays come on top, as
    retries do. Over a storm the users offer `LoadShape.rate_at` events per second, whatever
    the groups carry (a user's last group may carry a few past the storm's last turn), and the
    turns can be claimed ahead (a user's senders each wait for one).

    Args:
        shape: the storm's load shape.
        users: the users sharing it.
        start_s: the user's first send time (elapsed seconds).
    """

    __slots__ = ("shape", "users", "next_s", "_owed")

    def __init__(self, shape: LoadShape, users: int, start_s: float) -> None:
        self.shape = shape
        self.users = users
        self.next_s: float | None = start_s
        self._owed = 0  # turns that groups' extra new events took already

    def claim(self) -> float | None:
        """The next turn's time (elapsed seconds), or None when the storm is over."""
        due = self.next_s
        if due is None or due >= self.shape.duration_s:
            return None
        self.next_s = self.shape.next_send_s(due, self.users)
        return due

    def due_now(self) -> bool:
        """Whether the turn now due sends a group: False when an earlier group took it."""
        if self._owed > 0:
            self._owed -= 1
            return False
        return True

    def drew(self, events: int) -> None:
        """The group released at this turn carried `events` events sent for the first time."""
        self._owed += max(0, events - 1)


def send_times(shape: LoadShape, users: int, user_index: int = 0, *, max_sends: int = 10_000_000) -> Iterator[float]:
    """Intended send times (elapsed seconds) of one user, at most `max_sends` of them."""
    t: float | None = shape.first_send_s(user_index, users)
    count = 0
    while t is not None and t < shape.duration_s and count < max_sends:
        yield t
        count += 1
        t = shape.next_send_s(t, users)


def make_shape(kind: str, rate_per_s: float, duration_s: float) -> LoadShape:
    """A shape of `kind` with sensible proportions for a storm of `duration_s` seconds.

    ``ramp`` ramps over the first third; ``spike`` triples the rate for the middle
    fifth (from 40 % of the duration); ``soak`` ramps over 10 % (at most 60 s).
    Raises ValueError for an unknown kind or a bad rate or duration.
    """
    if kind == "ramp":
        return LoadShape("ramp", rate_per_s, duration_s, ramp_s=duration_s / 3)
    if kind == "spike":
        return LoadShape("spike", rate_per_s, duration_s, spike_at_s=0.4 * duration_s, spike_s=0.2 * duration_s,
                         spike_factor=3.0)
    if kind == "soak":
        return LoadShape("soak", rate_per_s, duration_s, ramp_s=min(60.0, 0.1 * duration_s))
    if kind == "steady":
        return LoadShape("steady", rate_per_s, duration_s)
    raise ValueError(f"unknown load shape {kind!r} (known: {', '.join(SHAPE_KINDS)})")


def wave_times(duration_s: float, waves: int) -> Sequence[float]:
    """When mass-redelivery waves start: `waves` instants evenly inside the storm."""
    if waves < 0:
        raise ValueError(f"waves must be >= 0, got {waves}")
    return tuple(duration_s * (i + 1) / (waves + 1) for i in range(waves))


__all__ = ["LoadShape", "SHAPE_KINDS", "ShapeKind", "make_shape", "send_times", "wave_times"]
