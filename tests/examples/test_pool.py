"""The in-process pool's observer reads a reference receiver as the ``python`` observer reads
its ``observe()``: `observation_of` builds the observation from the store's rows directly,
and it equals `observation_from_data` over the receiver's dicts (the read's time aside)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from examples.receivers.pool import ReceiverPool, RowValues, observation_of
from hookproof.receivers import receiver_of
from hookproof.scenarios.observers import observation_from_data
from hookproof.scenarios.statemachine import explore
from hookproof.simulator.server.state import ServerState


def test_the_pools_observation_is_the_python_observers(tmp_path: Path) -> None:
    pool = ReceiverPool("inbox_sync", tmp_path, secrets=("whsec_hookproof_pool_test",))
    try:
        result = explore(pool.target(), max_examples=8, seed=3, provider_state=ServerState())
        assert result.failure is None and result.acked > 0
        receiver = receiver_of(pool.open().target.app)
        direct = observation_of(receiver)
        through_dicts = observation_from_data(receiver.observe(), direct.at, observer="python")
        assert direct.effects and direct.states
        assert direct == through_dicts
        assert replace(pool.open().observe(), at=direct.at) == direct
        rows = RowValues()
        first, again = observation_of(receiver, rows), observation_of(receiver, rows)
        assert replace(first, at=direct.at) == replace(again, at=direct.at) == direct
        assert all(a is b for a, b in zip(first.effects + first.states, again.effects + again.states))
        assert len(rows.effects) == len(direct.effects) and len(rows.states) == len(direct.states)
    finally:
        pool.close()
