"""The pass's record of each event's first attempt in a chunk (`history_scan._first_of`):
the positions and the chunk indexes a sort by event gives, on chunks of events in runs,
interleaved, repeated across chunks, some with a first already and none left to record."""

from __future__ import annotations

import numpy as np
import pytest

from hookproof.scenarios.history_scan import _first_of


def _by_sort(first: np.ndarray, ev: np.ndarray, at: np.ndarray, offset: int) -> np.ndarray:
    """The same record made plainly: each event's first index among `at` by a sort."""
    if not at.size:
        return at
    codes, where = np.unique(ev[at], return_index=True)
    fresh = first[codes] < 0
    at = at[where[fresh]]
    first[codes[fresh]] = at + offset
    return np.sort(at)


@pytest.mark.parametrize("seed", range(40))
def test_first_of_records_what_a_sort_by_event_records(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 600))
    kind = seed % 4
    if kind == 0:  # each event's attempts together (copies, retries)
        ev = np.repeat(np.arange(n), rng.integers(1, 5, n))[:n]
    elif kind == 1:  # interleaved, few events
        ev = rng.integers(0, max(1, n // 7), n)
    elif kind == 2:  # interleaved, many events
        ev = rng.integers(0, 4 * n, n)
    else:  # one event
        ev = np.zeros(n, np.int64)
    ev = ev.astype(np.int64)
    at = np.flatnonzero(rng.random(n) < rng.choice([0.0, 0.3, 1.0]))
    first = np.full(4 * n + 1, -1, np.int32)
    known = rng.integers(0, 4 * n + 1, int(rng.integers(0, n + 1)))  # events given a first by an earlier chunk
    first[known] = rng.integers(0, 1000, known.size)
    offset = int(rng.integers(0, 2**30))
    plain = first.copy()
    recorded = _first_of(first, ev, at, offset)
    expected = _by_sort(plain, ev, at, offset)
    assert recorded.tolist() == expected.tolist()
    assert first.tolist() == plain.tolist()
    assert _first_of(first, ev, at, offset).size == 0  # a second time: nothing left to record
