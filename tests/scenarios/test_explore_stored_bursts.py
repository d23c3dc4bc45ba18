"""explore races two later updates of an object whose state the receiver stored (`burst_stored`).

`burst_states` releases two never-sent events of one object, usually before its creation was
delivered: the row does not exist, and a receiver whose first write is an atomic insert (the
unique constraint that serialises two Django workers creating one row) handles them one after
the other. `unlocked_state_check --option stored_only=1` is that receiver: only a stored row
is read, compared and, 30 ms later, written without a lock. The `burst_stored` rule (on a
target whose observer reads states, `ExploreTarget.stored_bursts`) delivers the object's
creation first when none is stored, then races the newer update and the last older one in
another state and second, as a `burst_related` step.

Measured in process (a loaded 2-core machine), max_examples 100: with the rule a search
found the stored-only gap at each of seeds 1-3 (after 29-558 examples run, 15-152 s);
without it, at seed 1 only after 521 examples (180 s: a `burst_states` pair whose creation
an earlier burst had delivered) and at seed 2 not at all. The replay of the four-step
schedule below fails it in most replays; racing the same two updates before the creation
was stored never did.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Mapping

import pytest

from examples.receivers.pool import ReceiverPool
from hookproof.scenarios.statemachine import (
    Step,
    _stored_pairs,
    explore,
    format_steps,
    machine_for,
    provider_api,
    replay,
)
from hookproof.simulator.server.state import ServerState
from tests.scenarios.test_explore_state_bursts import subscription_updates

RECEIVER = "unlocked_state_check"
STORED_ONLY = {"stored_only": 1.0}


#: A subscription (#1 created, then updated: active) stored, its renewal failing (updated:
#: past_due), and its two updates released together, the newer first (NEWER, OLDER: their numbers).
NEWER, OLDER = subscription_updates([Step("emit", action="subscribe"), Step("emit", action="fail_renewal", object=0)])
STORED_BURST = [Step("emit", action="subscribe"), Step("deliver", event=1), Step("emit", action="fail_renewal", object=0),
                Step("burst_related", events=(NEWER, OLDER))]
#: The same two updates raced before the creation was delivered (`burst_states`' schedule).
UNSTORED_BURST = [STORED_BURST[0], STORED_BURST[2], STORED_BURST[3]]


def _pool(name: str, directory: Path, options: Mapping[str, float] | None = None) -> ReceiverPool:
    directory.mkdir(parents=True, exist_ok=True)
    pool = ReceiverPool("inbox_sync", directory, options=options)
    if name != "inbox_sync":
        pool.module, pool.name = importlib.import_module(f"tests.scenarios.{name}"), name
    return pool


def _replay(name: str, directory: Path, steps: list[Step], **options: float) -> set[str] | None:
    pool = _pool(name, directory, options)
    try:
        found = replay(pool.target(stored_bursts=True), steps, 5, provider_state=ServerState())
    finally:
        pool.close()
    return None if found is None else {f.check_id for f in found.findings}


def test_the_rule_exists_only_where_the_observer_reads_states(tmp_path: Path) -> None:
    pool = _pool("inbox_sync", tmp_path)
    try:
        assert not hasattr(machine_for(pool.target()), "burst_stored")  # every other search draws as before
        assert hasattr(machine_for(pool.target(stored_bursts=True)), "burst_stored")
    finally:
        pool.close()


def test_explore_options_race_stored_objects_where_the_config_reads_states(tmp_path: Path) -> None:
    from examples.receivers import config as receiver_config
    from hookproof.commands.explore import explore_options

    cfg = receiver_config("inbox_sync", tmp_path, "whsec_" + "0" * 32, seed=1)
    assert cfg.observed.state_kinds and explore_options(cfg)["stored_bursts"] is True
    blind = cfg.model_copy(update={"observer": cfg.observed.model_copy(update={"state": None, "states": {}})})
    assert blind.observed.state_kinds == frozenset() and explore_options(blind)["stored_bursts"] is False


def test_the_rule_pairs_a_stored_object_s_two_later_states(tmp_path: Path) -> None:
    pool = _pool("inbox_sync", tmp_path)
    state = ServerState()
    try:
        with provider_api(state):
            session = machine_for(pool.target(stored_bursts=True), seed=5, provider_state=state)().session
            try:
                session.apply(STORED_BURST[0])
                session.apply(STORED_BURST[2])
                assert _stored_pairs(session) == []  # nothing stored yet: burst_states' business
                session.apply(STORED_BURST[1])
                assert _stored_pairs(session) == [(NEWER, OLDER)]
                assert (session.events[OLDER].status, session.events[NEWER].status) == ("active", "past_due")
                assert session.events[OLDER].created != session.events[NEWER].created
                session.apply(STORED_BURST[3])
                assert _stored_pairs(session) == []  # both sent
            finally:
                session.close()
    finally:
        pool.close()


@pytest.mark.slow
def test_racing_a_stored_object_finds_the_gap_that_racing_a_new_one_misses(tmp_path: Path) -> None:
    stored = [_replay(RECEIVER, tmp_path / f"s{n}", STORED_BURST, **STORED_ONLY) for n in range(6)]
    assert {"stale"} in stored, stored
    assert all(f in (None, {"stale"}) for f in stored), stored
    assert [_replay(RECEIVER, tmp_path / f"u{n}", UNSTORED_BURST, **STORED_ONLY) for n in range(3)] == [None] * 3
    assert _replay(RECEIVER, tmp_path / "locked", STORED_BURST, locked=1) is None
    assert _replay("inbox_sync", tmp_path / "inbox", STORED_BURST) is None


@pytest.mark.slow
def test_a_search_finds_the_stored_only_gap(tmp_path: Path) -> None:
    results = []
    for seed in (3, 1):
        pool = _pool(RECEIVER, tmp_path / str(seed), STORED_ONLY)
        try:
            result = explore(pool.target(stored_bursts=True), max_examples=100, seed=seed,
                             provider_state=ServerState())
        finally:
            pool.close()
        results.append(result)
        if result.failure is not None:
            break
    failure = results[-1].failure
    assert failure is not None, [(r.seed, r.examples) for r in results]
    lines = "\n".join(format_steps(failure.steps, failure.event_types))
    assert {(f.check_id, f.key[:4]) for f in failure.findings} == {("stale", "sub_")}, lines
    assert any(s.op == "burst_related" for s in failure.steps), lines


@pytest.mark.slow
@pytest.mark.parametrize(("name", "options"), [(RECEIVER, {"locked": 1.0}), ("inbox_sync", {})])
def test_the_locked_twin_and_a_conditional_upsert_survive_the_search(
        tmp_path: Path, name: str, options: dict[str, float]) -> None:
    pool = _pool(name, tmp_path, options)
    try:
        result = explore(pool.target(stored_bursts=True), max_examples=100, seed=3, provider_state=ServerState())
    finally:
        pool.close()
    assert result.failure is None, "\n".join(format_steps(result.failure.steps, result.failure.event_types)) \
        if result.failure else ""
    assert result.error is None and result.acked > 0
