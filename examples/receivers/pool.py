"""Reference receivers in process, for the state machine: a pool of fresh ones on SQLite.

Used by the tests and bench/ to explore the reference receivers without sockets.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from examples.receivers import SINK, load
from hookproof.receivers.config import ReceiverConfig
from hookproof.receivers.core import Receiver
from hookproof.receivers.web import receiver_of
from hookproof.scenarios.observations import Effect, ObjectState, Observation
from hookproof.scenarios.observers import SinkObserver, observation_from_data
from hookproof.scenarios.statemachine import PROVIDER_API_BASE, ExploreTarget, Prepared
from hookproof.simulator.delivery import Target
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server.state import DEFAULT_API_KEY

#: Reference receivers that apply in the background after answering: seconds of stability
#: they get to catch up before an observation counts as settled.
BACKGROUND_RECEIVERS: Mapping[str, float] = {"inbox_queue": 0.5, "ack_before_persist": 0.5}



class RowValues:
    """The `Effect` and `ObjectState` of every row a receiver's reads returned so far, by row:
    explore reads after every step, and a receiver the pool shares between examples returns
    every earlier example's rows again at each read (unchanged: each example has its own
    ids), where building them anew was most of the read. The values are frozen, so reads
    share them."""

    def __init__(self) -> None:
        self.effects: dict[tuple[str, int | None], Effect] = {}
        self.states: dict[tuple[str, str, int], ObjectState] = {}

    def effect(self, row: tuple[str, int | None]) -> Effect:
        made = self.effects.get(row)
        if made is None:
            made = self.effects[row] = Effect(row[0], row[1])
        return made

    def state(self, row: tuple[str, str, int]) -> ObjectState:
        made = self.states.get(row)
        if made is None:
            made = self.states[row] = ObjectState(row[0], row[1], row[2])
        return made


def observation_of(receiver: Receiver, rows: RowValues | None = None) -> Observation:
    """What the receiver's observer read shows now, as the ``python`` observer reads its
    ``observe()`` (`observation_from_data`). A receiver that keeps the shared tables'
    ``observe`` is read from its store's rows directly: they are typed by the schema, so
    the checks the python observer makes of a user's dicts cannot fail there. `rows`: the
    values of the rows earlier reads of this receiver returned, taken from there and kept
    there (None: every row built)."""
    if type(receiver).observe is Receiver.observe:
        effect_rows, state_rows = receiver.store.observe_rows()
        rows = rows if rows is not None else RowValues()
        return Observation(time.time(), tuple(map(rows.effect, effect_rows)), tuple(map(rows.state, state_rows)))
    return observation_from_data(receiver.observe(), time.time(), observer="python")


class ReceiverPool:
    """Fresh reference receivers on SQLite, each reused for `recycle_every` examples.

    A fresh database keeps each observation small (the observer reads every row);
    reusing one for a few examples keeps the start-up cost (~30 ms) off most examples.
    """

    def __init__(self, name: str, directory: str | os.PathLike[str] | None = None, *, recycle_every: int = 20,
                 secrets: Sequence[str] = ("whsec_hookproof_explore",), options: Mapping[str, float] | None = None,
                 profile: str = "stripe", provider_state: Any = None) -> None:
        self.module = load(name)
        self.name = name
        self.directory = Path(directory) if directory is not None else Path(tempfile.mkdtemp(prefix="hookproof-explore-"))
        self.recycle_every = max(1, recycle_every)
        self.secrets = tuple(secrets)
        self.options = dict(options or {})
        self.profile = profile
        #: receivers whose effects are calls to the effect sink are observed there
        self.provider_state = provider_state if name in SINK else None
        if name in SINK and provider_state is None:
            raise ValueError(f"{name} performs its effects through the sink: pass the provider_state")
        self._count = itertools.count()
        self._current: tuple[Any, Prepared] | None = None
        self._uses = 0

    def open(self) -> Prepared:
        """The receiver for the next example (a new one every `recycle_every` examples)."""
        if self._current is None or self._uses >= self.recycle_every:
            self.close()
            self._current = self._make()
            self._uses = 0
        self._uses += 1
        return self._current[1]

    def _make(self) -> tuple[Any, Prepared]:
        path = self.directory / f"{self.name}-{next(self._count)}.db"
        config = ReceiverConfig(db_url=f"sqlite:///{path}", profile=self.profile, secrets=self.secrets,
                                api_base=PROVIDER_API_BASE, api_key=DEFAULT_API_KEY,
                                sink_url=PROVIDER_API_BASE, options=self.options)
        app = self.module.create_app(config)
        receiver = receiver_of(app)
        rows = RowValues()  # this receiver's, dropped with it
        if self.provider_state is None:
            return receiver, Prepared(Target(app=app), lambda: observation_of(receiver, rows))
        sink = SinkObserver(self.provider_state.sink)

        def observe() -> Observation:
            states = observation_of(receiver, rows).states
            return Observation(time.time(), sink.observe().effects, states)

        return receiver, Prepared(Target(app=app), observe)

    def close(self) -> None:
        """Stop the current receiver (its worker, its engine)."""
        if self._current is not None:
            self._current[0].close()
            self._current = None

    def target(self, **options: Any) -> ExploreTarget:
        """This pool as an ExploreTarget."""
        if self.name in BACKGROUND_RECEIVERS:
            options.setdefault("settle_window_s", BACKGROUND_RECEIVERS[self.name])
        return ExploreTarget(profile=get_profile(self.profile), secrets=self.secrets, open=self.open,
                             describe=f"in-process reference receiver {self.name}", **options)


__all__ = ["BACKGROUND_RECEIVERS", "ReceiverPool", "RowValues", "observation_of"]
