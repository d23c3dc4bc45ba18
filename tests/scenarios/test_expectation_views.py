"""`KeyColumns.key_of_events`: per event, the first expected key (in order) listing it,
built from flat columns, against a loop over the keys one by one."""

from __future__ import annotations

import random

import numpy as np

from hookproof.scenarios.expectation_views import KeyColumns


def _columns(n_keys: int, first_event: list[int], multi: dict[int, list[int]], order: list[int],
             valid: list[bool]) -> KeyColumns:
    none = np.zeros(n_keys, np.bool_)
    return KeyColumns({}, [], {}, [], np.array(order, np.int64), np.array(valid, np.bool_),
                      np.array(first_event, np.int64), multi, np.full(n_keys, np.nan), none,
                      np.full(n_keys, -1, np.int64), [], np.zeros(n_keys, np.int64), none, {}, [])


def _by_loop(columns: KeyColumns, n_events: int) -> list[int]:
    """Each expected key in order, its events (several, or its first): the first to list an event wins."""
    out = [-1] * n_events
    for code in columns.expected_order.tolist():
        for event in columns.multi.get(code, [int(columns.first_event[code])]):
            if out[event] < 0:
                out[event] = code
    return out


def test_key_of_events_gives_each_event_the_first_expected_key_listing_it() -> None:
    # key 3 is not expected (its events are not its to give); key 1 lists event 0 after key 2 does;
    # a key with several events gives those, not its first event (2) again
    columns = _columns(5, [0, 0, 2, 4, 5], {1: [1, 0], 2: [3, 0], 3: [4, 6]}, [2, 1, 3, 0, 4],
                       [True, True, True, False, True])
    assert columns.key_of_events(8).tolist() == [2, 1, -1, 2, -1, 4, -1, -1] == _by_loop(columns, 8)
    assert _columns(2, [0, 1], {}, [1, 0], [True, True]).key_of_events(3).tolist() == [0, 1, -1]


def test_key_of_events_matches_the_loop_on_random_keys() -> None:
    rng = random.Random(7)
    for _ in range(50):
        n_keys, n_events = rng.randint(1, 40), rng.randint(1, 60)
        first_event = [rng.randrange(n_events) for _ in range(n_keys)]
        multi = {code: [rng.randrange(n_events) for _ in range(rng.randint(2, 4))]
                 for code in rng.sample(range(n_keys), rng.randint(0, n_keys))}
        order = rng.sample(range(n_keys), n_keys)
        valid = [rng.random() < 0.8 for _ in range(n_keys)]
        columns = _columns(n_keys, first_event, multi, order, valid)
        assert columns.key_of_events(n_events).tolist() == _by_loop(columns, n_events)


def test_several_events_as_columns_read_as_the_dict_of_lists() -> None:
    """`SeveralEvents.of` pairs (key code, event code) in listed order: the same mapping as
    the dict of lists the pairs make (each key's events in their order), lookups of codes
    it lacks included, and `key_of_events` over it gives what it gives over the dict."""
    from hookproof.scenarios.expectation_views import SeveralEvents

    rng = random.Random(11)
    for _ in range(50):
        n_keys, n_events = rng.randint(1, 40), rng.randint(1, 60)
        pairs = [(rng.randrange(n_keys), rng.randrange(n_events)) for _ in range(rng.randint(0, 90))]
        want: dict[int, list[int]] = {}
        for code, event in pairs:
            want.setdefault(code, []).append(event)
        several = SeveralEvents.of(np.array([c for c, _ in pairs], np.int64), np.array([e for _, e in pairs], np.int64))
        assert dict(several) == want and list(several) == sorted(want) and len(several) == len(want)
        assert all(several.get(code) == want.get(code) and (code in several) == (code in want)
                   for code in range(-1, n_keys + 2))
        assert several.get(n_keys + 5, "none") == "none" and "x" not in several
        first_event = [rng.randrange(n_events) for _ in range(n_keys)]
        order = rng.sample(range(n_keys), n_keys)
        valid = [rng.random() < 0.8 for _ in range(n_keys)]
        as_dict = _columns(n_keys, first_event, want, order, valid)
        as_columns = _columns(n_keys, first_event, several, order, valid)  # type: ignore[arg-type]
        assert as_columns.key_of_events(n_events).tolist() == as_dict.key_of_events(n_events).tolist() \
            == _by_loop(as_dict, n_events)
