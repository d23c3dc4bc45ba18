"""`Scope`: a world's part of an observation, coded; exactly what `business_keys.scoped` keeps."""

from __future__ import annotations

import pytest

from hookproof.scenarios.business_keys import scoped
from hookproof.scenarios.id_codes import IdCodes
from hookproof.scenarios.observations import Effect, ObjectState, Observation
from hookproof.scenarios.scope import Scope
from hookproof.simulator.world import World

OBJECTS = ("ch_1", "in_1", "cus_1", "sub_1")
KEYS = ("pay/pi_1", "in_1@renewal", "")
COUNTERS = frozenset({"balance/cus_1"})

OBS = Observation(
    at=1.0,
    effects=(Effect("pay/pi_1"), Effect("in_1@renewal"), Effect("refund:ch_1:re_1"), Effect("pay/pi_other"),
             Effect("refund:ch_other:re_2"), Effect("sub_1"), Effect("renewal:in_1", 5, "idem-1"), Effect("pay/pi_1"),
             Effect(""), Effect("nul\x00"), Effect("\ud800:in_1")),
    states=(ObjectState("in_1", "paid"), ObjectState("in_other", "paid"), ObjectState("sub_1", "active", 3)),
    state_kinds=frozenset({"invoice"}),
    counters={"balance/cus_1": 5, "cus_1": 7, "balance/cus_other": 9, "x:cus_1:y": 1},
)


def _scope(small: int | None) -> Scope:
    scope = Scope(IdCodes(small), IdCodes(small), COUNTERS)
    scope.objects.code_all(list(OBJECTS))
    scope.keys.code_all([k for k in KEYS if k])
    return scope


@pytest.mark.parametrize("small", [None, 0], ids=["dict", "columns"])
def test_a_scope_keeps_what_scoped_keeps(small: int | None) -> None:
    mine = _scope(small).observation(OBS)
    assert mine == scoped(OBS, OBJECTS, [k for k in KEYS if k], COUNTERS)
    assert [e.business_key for e in mine.effects] == ["pay/pi_1", "in_1@renewal", "refund:ch_1:re_1", "sub_1",
                                                      "renewal:in_1", "pay/pi_1", "\ud800:in_1"]
    assert [s.object_id for s in mine.states] == ["in_1", "sub_1"]
    assert mine.counters == {"balance/cus_1": 5, "cus_1": 7, "x:cus_1:y": 1}
    assert mine.state_kinds == frozenset({"invoice"}) and mine.at == 1.0


@pytest.mark.parametrize("small", [None, 0], ids=["dict", "columns"])
def test_another_world_s_rows_are_dropped(small: int | None) -> None:
    other = Observation(2.0, (Effect("pay/pi_9"), Effect("refund:ch_9:re_1")), (ObjectState("in_9", "paid"),),
                        counters={"balance/cus_9": 1})
    mine = _scope(small).observation(other)
    assert mine.effects == () and mine.states == () and mine.counters == {}
    assert mine == scoped(other, OBJECTS, [k for k in KEYS if k], COUNTERS)


def test_an_observation_wholly_in_scope_keeps_its_own_rows() -> None:
    obs = Observation(3.0, (Effect("pay/pi_1"), Effect("refund:ch_1:re_1")), (ObjectState("in_1", "paid"),))
    mine = _scope(0).observation(obs)
    assert mine.effects is obs.effects and mine.states is obs.states and mine == obs


def test_a_scope_of_a_world_s_events_is_their_objects_and_keys() -> None:
    events = World(5).lifecycle()
    scope = Scope.of_events(iter(events), ["balance/x"])
    assert set(scope.objects) == {e.object_id for e in events}
    assert set(scope.keys) == {e.business_key for e in events if e.business_key}
    assert scope.counters == frozenset({"balance/x"})
    obs = Observation(1.0, tuple(Effect(e.business_key) for e in events if e.business_key) + (Effect("gone:x"),))
    assert scope.observation(obs) == scoped(obs, {e.object_id for e in events},
                                            {e.business_key for e in events if e.business_key}, ["balance/x"])
