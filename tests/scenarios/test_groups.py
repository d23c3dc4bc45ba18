"""`scenarios.groups`: positions grouped by name, held as columns, are the dict of lists they replace."""

from __future__ import annotations

import random
from array import array

import pytest

from hookproof.scenarios.groups import NO_GROUP, group_positions


def naive(names: list[str], group_of: list[int]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for pos, code in enumerate(group_of):
        if code != NO_GROUP:
            out.setdefault(names[code], []).append(pos)
    return out


@pytest.mark.parametrize("shape", ["runs", "shuffled", "in order", "with none", "empty"])
def test_groups_hold_every_position_of_each_name_in_history_order(shape: str) -> None:
    rnd = random.Random(shape)
    n_groups = 0 if shape == "empty" else 40
    if shape == "in order":
        group_of = [code for code in range(n_groups) for _ in range(rnd.randint(1, 4))]
    elif shape == "runs":
        group_of = [code for code in range(n_groups) for _ in range(rnd.randint(1, 4))]
        group_of = group_of[5:] + group_of[:5]
    else:
        group_of = [rnd.randrange(n_groups) for _ in range(300)] if n_groups else []
    if shape == "with none":
        group_of = [NO_GROUP if rnd.random() < 0.3 else code for code in group_of]
    # codes in order of first position, as the scan assigns them
    first = list(dict.fromkeys(c for c in group_of if c != NO_GROUP))
    renumber = {old: new for new, old in enumerate(first)}
    group_of = [renumber.get(c, NO_GROUP) for c in group_of]
    names = [f"evt_{i}" for i in range(len(first))]
    groups = group_positions({name: i for i, name in enumerate(names)}, array("q", group_of))
    want = naive(names, group_of)
    assert {name: list(positions) for name, positions in groups.items()} == want
    assert list(groups) == list(want)
    assert dict(groups.sizes()) == {name: len(p) for name, p in want.items()}
    assert groups.get("evt_absent") is None and groups.size_of("evt_absent") == 0
    assert all(groups.size_of(name) == len(p) for name, p in want.items())
    import numpy as np

    # the scan's int32 columns (`HistoryScan.event_of`, `key_of`) group as the same codes in int64
    as_int32 = group_positions({name: i for i, name in enumerate(names)}, np.array(group_of, np.int32))
    assert [c.tolist() for c in as_int32.columns()] == [c.tolist() for c in groups.columns()]
