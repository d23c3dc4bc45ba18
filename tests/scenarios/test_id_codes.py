"""`IdCodes`: ids coded in order of first sight as a dict codes them, held as bytes."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

from hookproof.scenarios.id_codes import IdCodes


def _dict_codes(chunks: list[list[str]]) -> tuple[dict[str, int], list[list[int]]]:
    codes: dict[str, int] = {}
    out = []
    for chunk in chunks:
        out.append([codes.setdefault(v, len(codes)) for v in chunk])
    return codes, out


def _chunks(rng: random.Random, pool: list[str], sizes: list[int]) -> list[list[str]]:
    return [[rng.choice(pool) for _ in range(n)] for n in sizes]


@pytest.mark.parametrize("small", [0, 1000, IdCodes.SMALL])
def test_codes_match_a_dict_over_chunks_of_repeated_ids(small: int) -> None:
    """As columns from the start (0), moving from a dict to columns on the way (1000), and as a dict."""
    rng = random.Random(7)
    pool = [f"evt_{rng.getrandbits(64):016x}" for _ in range(3000)] + ["", "a", "evt_" + "x" * 90]
    chunks = _chunks(rng, pool, [1, 500, 0, 4096, 7, 2000])
    expected, per_chunk = _dict_codes(chunks)
    table = IdCodes(small)
    got = [table.code_all(chunk).tolist() for chunk in chunks]
    assert got == per_chunk
    assert len(table) == len(expected)
    assert list(table) == list(expected)
    assert list(table.names) == list(expected)
    assert table.names[-1] == list(expected)[-1] and table.names[2:5] == list(expected)[2:5]
    for name, code in expected.items():
        assert table[name] == code and table.get(name) == code and name in table
        assert table.name(code) == name
    assert table.get("evt_missing") is None and "evt_missing" not in table and 3 not in table
    table.trim()
    assert table.code_all(["evt_new", pool[0]]).tolist() == [len(expected), expected[pool[0]]]


@pytest.mark.parametrize("small", [0, 3])
def test_ids_a_column_cannot_hold_are_exact(small: int) -> None:
    odd = ["ends-in-nul\x00", "ends-in-nul", "caf\u00e9", "lone-\ud800", "\x00", "mid\x00dle", "日本"]
    table = IdCodes(small)
    assert table.code_all(odd + odd[::-1]).tolist() == [0, 1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1, 0]
    assert list(table) == odd
    assert [table[name] for name in odd] == list(range(len(odd)))
    assert table.code_all(["ends-in-nul\x00", "new"], add=False).tolist() == [0, -1]
    assert len(table) == len(odd)


class _SameHash(str):
    """A string whose hash collides with every other `_SameHash`'s."""

    def __hash__(self) -> int:
        return 7


def test_colliding_hashes_keep_distinct_codes() -> None:
    a, b, c = _SameHash("evt_a"), _SameHash("evt_b"), _SameHash("evt_c")
    table = IdCodes(0)
    assert table.code_all([a, b]).tolist() == [0, 1]
    assert table.code_all([c, b, a]).tolist() == [2, 1, 0]
    assert [table.get(x) for x in (a, b, c)] == [0, 1, 2]
    assert list(table) == ["evt_a", "evt_b", "evt_c"]
    assert table.code_all([_SameHash("evt_d")], add=False).tolist() == [-1]


def test_new_ids_repeated_in_one_chunk_are_coded_in_order_of_first_sight() -> None:
    """Repeated new ids told apart by hash (equal ids share one), by value when distinct ids
    share a hash, and ids the column cannot hold among them: codes in order of first sight."""
    a, b = _SameHash("evt_a"), _SameHash("evt_b")
    table = IdCodes(0)
    assert table.code_all(["x", "y", "x", "z", "y"]).tolist() == [0, 1, 0, 2, 1]
    assert table.code_all([a, "w", b, a, "x", b, "w"]).tolist() == [3, 4, 5, 3, 0, 5, 4]
    assert table.code_all(["v", "nul\x00", "v", "nul\x00", "nul"]).tolist() == [6, 7, 6, 7, 8]
    assert list(table) == ["x", "y", "z", "evt_a", "w", "evt_b", "v", "nul\x00", "nul"]
    assert [table.get(x) for x in ("x", a, b, "w", "nul\x00", "nul")] == [0, 3, 5, 4, 7, 8]


class _LowBitsCollide(str):
    """Strings whose hashes share their low 32 bits (one first slot) but differ above."""

    def __hash__(self) -> int:
        return (int(self[4:]) << 32) | 5


def test_the_table_grows_and_probes_past_crowded_slots() -> None:
    """Thousands of ids through several growths of the table, with runs of ids meeting at
    one first slot (colliding low bits) and at one whole hash: every id keeps its code,
    found by a chunk and one by one, and an id never added is not found."""
    crowded = [_LowBitsCollide(f"evt_{i}") for i in range(1, 400)]
    same = [_SameHash(f"same_{i}") for i in range(300)]
    plain = [f"evt_{i:x}_{'y' * (i % 40)}" for i in range(20_000)]
    rng = random.Random(11)
    pool = crowded + same + plain
    chunks = _chunks(rng, pool, [5000, 1, 8192, 3000, 8192, 8192])
    chunks.append(pool)  # every id at least once
    expected, per_chunk = _dict_codes(chunks)
    table = IdCodes(0)
    assert [table.code_all(chunk).tolist() for chunk in chunks] == per_chunk
    assert table.code_all(pool, add=False).tolist() == [expected[x] for x in pool]
    assert all(table.get(x) == expected[x] for x in crowded + same + plain[::97])
    absent = [_LowBitsCollide("evt_9999"), _SameHash("same_x"), "evt_absent"]
    assert table.code_all(absent, add=False).tolist() == [-1, -1, -1]
    assert [table.get(x) for x in absent] == [None, None, None]
    assert list(table) == list(expected)


@pytest.mark.parametrize("small", [0, IdCodes.SMALL])
def test_codes_in_looks_odd_names_up_as_get_does(small: int) -> None:
    """`codes_in` over an `IdCodes` (columns or a dict) and over a plain mapping: each
    name's code, -1 for one not there (ids the columns do not hold, a NUL-less twin of
    one ending in NUL, included)."""
    from hookproof.scenarios.id_codes import codes_in

    names = ["obj_a", "obj_b", "ends-in-nul\x00", "lone-\ud800", "caf\u00e9"]
    table = IdCodes(small)
    table.code_all(names)
    asked = ["obj_b", "missing", "lone-\ud800", "obj_a", "caf\u00e9", "ends-in-nul\x00", "ends-in-nul"]
    expected = [1, -1, 3, 0, 4, 2, -1]
    assert codes_in(table, asked).tolist() == expected
    assert codes_in(dict(zip(names, range(5))), asked).tolist() == expected
    assert codes_in(table, []).tolist() == []


def test_the_table_is_at_most_two_thirds_full() -> None:
    """The table's slots: the fewest powers of two (1024 at least) `n` ids fill at most
    2/3 of; grown as ids come, it is never fuller."""
    from hookproof.scenarios.id_codes import _slots_for

    assert [_slots_for(n) for n in (0, 682, 683, 1365, 1366, 5000, 1_083_030)] == \
        [1024, 1024, 2048, 2048, 4096, 8192, 2_097_152]
    table = IdCodes(0)
    for start in range(0, 20_000, 1500):
        table.code_all([f"evt_{i}" for i in range(start, start + 1500)])
        assert 3 * len(table) <= 2 * len(table._slots)
    assert len(table._slots) == 32768 and table.code_all(["evt_19999", "evt_x"], add=False).tolist() == [19999, -1]


@pytest.mark.parametrize(("small", "room"), [(0, 5000), (1000, 5000), (1000, 2000), (0, 1)])
def test_reserved_room_codes_as_a_dict_and_sizes_the_columns_once(small: int, room: int) -> None:
    """`reserve` is a hint: the same codes with room for all (5000), too little (2000, 1: the
    columns then grow as without it), and the columns sized once for what was reserved."""
    rng = random.Random(11)
    pool = [f"evt_{rng.getrandbits(64):016x}" for _ in range(4000)] + ["ends-in-nul\x00", "caf\u00e9"]
    chunks = _chunks(rng, pool, [900, 3000, 4096, 1])
    expected, per_chunk = _dict_codes(chunks)
    table = IdCodes(small)
    table.reserve(room)
    sizes = set()
    got = []
    for chunk in chunks:
        got.append(table.code_all(chunk).tolist())
        if len(table) > small:
            sizes.add((table._held.capacity, len(table._slots)))
    assert got == per_chunk and list(table) == list(expected)
    assert all(table[name] == code for name, code in expected.items())
    if room >= len(expected):  # one size from the first id in the columns on: nothing doubled
        assert sizes == {(room, 8192 if room == 5000 else 1024)}  # the fewest slots 2/3 full at most
    table.trim()
    assert table._held.capacity == len(expected) and table.code_all([pool[3]], add=False).tolist() == [expected[pool[3]]]


@pytest.mark.parametrize("small", [0, 10, IdCodes.SMALL])
def test_codes_in_looks_names_up_as_the_mapping_does(small: int) -> None:
    """`codes_in`: -1 for a name not held, else its code, over an `IdCodes` (as bytes, or a
    dict while small) in chunks past `_STEP`, and over a plain dict; nothing is added."""
    from hookproof.scenarios import id_codes
    from hookproof.scenarios.id_codes import codes_in

    rng = random.Random(3)
    held = [f"renewal:in_{rng.getrandbits(48):012x}" for _ in range(9000)] + ["caf\u00e9", "nul\x00"]
    asked = [rng.choice(held) if rng.random() < 0.7 else f"lost:{i}" for i in range(id_codes._STEP * 2 + 5)]
    asked += ["caf\u00e9", "nul\x00", "nul"]
    table = IdCodes(small)
    table.code_all(held)
    plain = {name: code for code, name in enumerate(held)}
    want = [plain.get(name, -1) for name in asked]
    assert codes_in(table, asked).tolist() == want
    assert codes_in(plain, asked).tolist() == want
    assert codes_in(table, []).tolist() == [] and len(table) == len(held)


@pytest.mark.parametrize("small", [0, IdCodes.SMALL])
def test_codes_mapped_over_another_table_are_a_dict_s_codes(small: int) -> None:
    """`MappedCodes` over a base table (as bytes, or a dict while small) codes ids as a dict
    coding them in order of first sight would: ids the base holds (never held again) and
    ids it does not (an own table beside it: an envelope's own ``msg_…`` id, ids a column
    cannot hold), mixed in one chunk and repeated across chunks; every read (`get`, `name`,
    `names`, `names_at`, `names_of`, iteration, `codes_in`, `base_codes`) agrees with the
    dict, `code_all(add=False)` adds nothing, `take_inverse` hands over the codes by base
    id (made again for the next lookup), and the base is not changed."""
    from hookproof.scenarios.id_codes import MappedCodes, codes_in

    rng = random.Random(5)
    world = [f"evt_{rng.getrandbits(64):016x}" for _ in range(5000)] + ["caf\u00e9", "nul\x00"]
    base = IdCodes(small)
    base.code_all(world)
    base_len, base_names = len(base), list(base)
    foreign = [f"msg_{i:05d}" for i in range(300)] + ["lone-\ud800", "x\x00"]
    pool = world + foreign
    chunks = _chunks(rng, pool, [1, 700, 0, 4096, 3, 2500, 9000])
    chunks.insert(2, foreign[:5] + world[:5] + foreign[:5])  # only unseen ids, both kinds, repeated
    expected, per_chunk = _dict_codes(chunks)
    mapped = MappedCodes(base)
    got = [mapped.code_all(chunk).tolist() for chunk in chunks]
    assert got == per_chunk
    assert len(mapped) == len(expected) and list(mapped) == list(expected) == list(mapped.names)
    for name, code in expected.items():
        assert mapped[name] == code and mapped.get(name) == code and name in mapped and mapped.name(code) == name
    order = list(expected)
    assert mapped.names_at(np.array([5, 0, len(order) - 1, 5])) == [order[5], order[0], order[-1], order[5]]
    assert mapped.names_of(3, 900) == order[3:900] and mapped.names[-1] == order[-1]
    base_of = mapped.base_codes(0, len(mapped)).tolist()
    assert base_of == [base.get(name, -1) for name in order]
    unseen = [w for w in world if w not in expected][:50]
    asked = [*unseen, "msg_none", *order[::37], foreign[0]]
    want = [expected.get(name, -1) for name in asked]
    assert codes_in(mapped, asked).tolist() == want
    assert mapped.code_all(asked, add=False).tolist() == want and len(mapped) == len(expected)
    assert mapped.get("evt_missing") is None and unseen[0] not in mapped and 3 not in mapped
    with pytest.raises(IndexError):
        mapped.name(len(expected))
    inverse = mapped.take_inverse()  # per base id, its code here: the caller's to change
    assert inverse.dtype == np.int32 and inverse.tolist() == [expected.get(name, -1) for name in base_names]
    inverse[:] = -7
    assert all(mapped.get(name) == code for name, code in expected.items())  # made again, not the one handed over
    assert mapped.take_inverse().tolist() == [expected.get(name, -1) for name in base_names]
    mapped.trim()
    assert mapped.code_all([unseen[0], "msg_new", order[0]]).tolist() == [len(expected), len(expected) + 1, 0]
    assert len(base) == base_len and list(base) == base_names  # the base is read, never grown


def test_trim_gives_up_a_table_sized_for_more_ids_than_held() -> None:
    """A table reserved for more ids than came (a world's keys, sized by its events) is made
    anew at `trim` for the ids held: the fewest slots, every id found with its code, odd ids
    too, and ids added after it coded next."""
    from hookproof.scenarios.id_codes import _slots_for

    rng = random.Random(13)
    ids = [f"k:{rng.getrandbits(64):016x}" for _ in range(5000)] + ["nul\x00", "caf\u00e9"]
    table = IdCodes(0)
    table.reserve(200_000)
    assert table.code_all(ids).tolist() == list(range(len(ids)))
    assert len(table._slots) == _slots_for(200_000)
    table.trim()
    assert len(table._slots) == _slots_for(len(ids) - 1) == 8192  # the odd id is not in the table
    assert all(table[name] == code for code, name in enumerate(ids))
    assert table.code_all(["k:new", ids[7]]).tolist() == [len(ids), 7]


@pytest.mark.parametrize("small", [0, 1000, IdCodes.SMALL])
def test_dropped_hashes_code_and_find_the_same_ids(small: int) -> None:
    """`drop_hashes`: lookups by the bytes alone find what they found; ids added afterwards
    (their hashes made again from the ids) get the next codes and are found too."""
    rng = random.Random(11)
    pool = [f"evt_{rng.getrandbits(64):016x}" for _ in range(3000)] + ["", "a", "caf\u00e9", "ends-in-nul\x00"]
    chunks = _chunks(rng, pool, [500, 4096, 2000])
    expected, _ = _dict_codes(chunks)
    table = IdCodes(small)
    for chunk in chunks:
        table.code_all(chunk)
    table.trim()
    table.drop_hashes()
    names = list(expected)
    assert table.code_all(names + ["evt_missing"], add=False).tolist() == list(range(len(names))) + [-1]
    assert all(table.get(name) == code for name, code in expected.items())
    assert table.get("evt_missing") is None and list(table) == names
    fresh = [f"new_{i}" for i in range(3000)]
    assert table.code_all(fresh + [names[0]]).tolist() == list(range(len(names), len(names) + 3000)) + [0]
    table.trim()
    assert all(table.get(name) == code for name, code in expected.items())
    assert table.code_all(fresh, add=False).tolist() == list(range(len(names), len(names) + 3000))


@pytest.mark.parametrize("small", [0, 1000])
def test_ids_held_in_order_are_found_by_bisection_without_a_table(small: int) -> None:
    """`drop_table_if_sorted`: ids held in ascending order of their bytes (a storm's events,
    spooled by id) give up the table and are found by bisecting the column, every read as
    with the table (`get`, `code_all(add=False)`, `codes_in`, a `MappedCodes` over them);
    ids longer than the column's width, prefixes of held ids, the empty id and ids no
    column holds are not found. An id added afterwards makes the table again. Ids out of
    order, ids still a dict or ids the column cannot hold keep the table."""
    from hookproof.scenarios.id_codes import MappedCodes, codes_in

    rng = random.Random(17)
    ids = sorted({f"evt_{rng.getrandbits(40):010x}" + "z" * rng.randrange(3) for _ in range(3000)} | {"caf\u00e9_1"},
                 key=str.encode)
    table = IdCodes(small)
    table.code_all(ids)
    table.trim()
    table.drop_hashes()
    assert table.drop_table_if_sorted() and not len(table._slots) and table.drop_table_if_sorted()
    assert all(table.get(name) == code for code, name in enumerate(ids))
    absent = ["", "evt_", ids[5][:-1], ids[5] + "0", "x" * 40, "caf\u00e9", "lone-\ud800", ids[0] + "\x00", "~"]
    assert all(table.get(name) is None and name not in table for name in absent)
    asked = [*ids[::-13], *absent]
    want = [ids.index(name) if name in ids else -1 for name in asked]
    assert table.code_all(asked, add=False).tolist() == want == codes_in(table, asked).tolist()
    mapped = MappedCodes(table)
    assert mapped.code_all([ids[9], "msg_1", ids[2], ids[9]]).tolist() == [0, 1, 2, 0]
    assert mapped.base_codes(0, 3).tolist() == [9, -1, 2]
    # an id added in order keeps it so (`hold_sorted`'s rule); one out of order makes the table again
    assert table.code_all(["evt_new", ids[3]]).tolist() == [len(ids), 3] and not len(table._slots)
    assert table.code_all(["evt_", ids[4]]).tolist() == [len(ids) + 1, 4] and len(table._slots)
    assert all(table.get(name) == code for code, name in enumerate([*ids, "evt_new", "evt_"]))
    shuffled = IdCodes(small)
    shuffled.code_all([ids[1], ids[0], *ids[2:]])
    assert not shuffled.drop_table_if_sorted() and len(shuffled._slots)
    assert not IdCodes().drop_table_if_sorted()  # a dict while small
    odd = IdCodes(small)
    odd.code_all([*ids, "zz\x00"])
    assert not odd.drop_table_if_sorted()


@pytest.mark.parametrize("small", [0, 1000])
def test_ids_held_sorted_code_as_a_dict_without_table_or_hashes_while_in_order(small: int) -> None:
    """`hold_sorted`: ids coming in ascending order of their bytes (chunks of them, ids seen
    before among them) are coded as a dict codes them, held without a table or hashes and
    found by bisection; the first chunk out of order (an id below the last held, then one
    the column cannot hold) makes the table and the hashes of every id held, and every
    code stays the dict's."""
    rng = random.Random(23)
    ids = sorted({f"evt_{rng.getrandbits(40):010x}" + "z" * rng.randrange(3) for _ in range(4000)}, key=str.encode)
    chunks = [ids[i:i + 700] for i in range(0, 3000, 700)]
    chunks.insert(2, [ids[5], ids[1400], ids[3]])  # only ids held already
    chunks[3] = [chunks[3][0], chunks[3][0], *chunks[3][1:]]  # an id twice in a chunk
    later = [[*ids[3000:3500], ids[10]], ["evt_0", *ids[3500:3600]], [*ids[3600:], "caf\u00e9", "nul\x00"]]
    expected, per_chunk = _dict_codes([*chunks, *later])
    table = IdCodes(small)
    table.hold_sorted()
    got = []
    for chunk in chunks:
        got.append(table.code_all(chunk).tolist())
        if len(table) > small:
            assert not len(table._slots) and table._hash_of is None
    assert all(table.get(name) == code for name, code in expected.items() if code < len(table))
    got.append(table.code_all(later[0]).tolist())  # in order, one held id among them: still no table
    assert not len(table._slots) and table._hash_of is None
    got.append(table.code_all(later[1]).tolist())  # "evt_0" is below the last id held: the table is made
    assert len(table._slots) and table._hash_of is not None
    got.append(table.code_all(later[2]).tolist())
    assert got == per_chunk and list(table) == list(expected)
    assert all(table[name] == code for name, code in expected.items())
    assert table.code_all(["evt_missing", ids[7]], add=False).tolist() == [-1, expected[ids[7]]]


@pytest.mark.parametrize("small", [0, IdCodes.SMALL])
def test_starts_with_answers_as_str_startswith(small: int) -> None:
    """On the ids' bytes (columns), one by one (a dict), ids the column cannot hold, ids
    mapped over another table and its own, prefixes not ASCII, empty or holding NUL."""
    from hookproof.scenarios.id_codes import MappedCodes, starts_with

    ids = ["refund:re_1", "refund", "license:pi_1", "é:refund", "ref\x00", "refund:\ud800", "", "pay/é1",
           "refund:re_1\x00", "x" * 40]
    base = IdCodes(small)
    base.code_all(ids[:6])
    mapped = MappedCodes(base)
    mapped.code_all(["pay/é1", "refund", "forged:refund", "é:refund", "", "refund:re_1\x00"])
    table = IdCodes(small)
    table.code_all(ids)
    for prefixes in [("refund:",), ("refund", "pay/"), ("é:",), ("",), ("ref\x00",), ("\ud800",), ()]:
        for codes in (table, base, mapped, dict(zip(ids, range(len(ids))))):
            assert starts_with(codes, prefixes).tolist() == [name.startswith(prefixes) for name in codes], prefixes


@pytest.mark.parametrize("small", [0, IdCodes.SMALL])
def test_hinted_codes_are_the_codes_whatever_the_hints(small: int) -> None:
    """`IdCodes.codes_hinted` (and `MappedCodes.code_all` with `hint`) give exactly
    `code_all(add=False)`'s codes whether a hint is right, another id's code, -1, out of
    range, or lands on an id the column cannot hold (held as b"") or on the empty id; ids not
    held are -1 and none is added; a mapping coded with hints codes as one without."""
    from hookproof.scenarios.id_codes import MappedCodes

    rng = random.Random(11)
    world = [f"key_{rng.getrandbits(48):012x}" for _ in range(4000)] + ["", "caf\u00e9", "nul\x00", "lone-\ud800"]
    table = IdCodes(small)
    table.code_all(world)
    odd_codes = [table["nul\x00"], table["lone-\ud800"], table[""]]
    asked = world[::3] + ["key_missing", "", "nul\x00", "lone-\ud800", "caf\u00e9", world[5], world[5]]
    want = table.code_all(asked, add=False).tolist()
    right = np.array(want, np.int64)
    hints = {
        "right": right,
        "none": np.full(len(asked), -1, np.int64),
        "shifted": np.roll(right, 1),
        "out of range": right + len(table) + 10,
        "odd slots": np.array([rng.choice(odd_codes) for _ in asked], np.int64),
        "random": np.array([rng.randrange(-2, len(table) + 3) for _ in asked], np.int64),
    }
    for label, hint in hints.items():
        assert table.codes_hinted(asked, hint).tolist() == want, label
    assert len(table) == len(world)
    chunks = _chunks(rng, world + ["msg_a", "msg_b", "x\x00"], [1, 900, 0, 3000, 17])
    plain, hinted = MappedCodes(table), MappedCodes(table)
    for chunk in chunks:
        base_codes = table.code_all(chunk, add=False)
        wrong = np.where(np.arange(len(chunk)) % 3 == 0, base_codes, np.roll(base_codes, 1))
        assert hinted.code_all(chunk, hint=wrong).tolist() == plain.code_all(chunk).tolist()
    assert list(hinted) == list(plain) and len(table) == len(world)


def test_shrink_keeps_the_first_values_in_place_unless_referred_to_elsewhere() -> None:
    """`shrink`: the holder's column keeps its first n values, the same buffer when nothing
    else refers to it; a copy when a view (or another name) holds it, which keeps its values."""
    from hookproof.scenarios.id_codes import shrink

    class Holder:
        column: "np.ndarray"

    holder = Holder()
    holder.column = np.arange(200_000, dtype=np.int64)
    address = holder.column.__array_interface__["data"][0]
    shrink(holder, "column", 5)
    assert holder.column.tolist() == [0, 1, 2, 3, 4] and holder.column.flags.owndata
    if sys.platform == "linux":  # glibc's realloc shrinks a block where it is
        assert holder.column.__array_interface__["data"][0] == address
    holder.column = np.array([b"evt_1", b"evt_22", b"evt_333"], "S7")
    view = holder.column[1:]
    shrink(holder, "column", 2)
    assert holder.column.tolist() == [b"evt_1", b"evt_22"] and view.tolist() == [b"evt_22", b"evt_333"]
    other = holder.column
    shrink(holder, "column", 1)
    assert holder.column.tolist() == [b"evt_1"] and other.tolist() == [b"evt_1", b"evt_22"]


def test_held_bytes_take_the_cheaper_layout_and_read_the_same_in_both() -> None:
    """`HeldBytes`: ids of one length stay at fixed width (no ends, each id its bytes); ids of
    spread lengths move back to back once fixed width costs more than `_SPREAD` times as
    much (each id its bytes plus a 4-byte end), ids held before the move kept; every read
    (`column`, `at`, `equal`, `one`, `decoded`, `decoded_at`, `search`, `ascending`) answers
    as over a numpy ``S`` column of the same ids."""
    from hookproof.scenarios.id_codes import HeldBytes

    rng = random.Random(29)
    same = sorted({f"evt_{rng.getrandbits(60):015x}" for _ in range(3000)})
    spread = [f"key:{rng.getrandbits(20):05x}" + "x" * rng.randrange(40) for _ in range(3000)] + ["", "caf\u00e9"]
    for ids, back_to_back in ((same, False), (same[:1000] + spread, True)):
        held = HeldBytes()
        for start in range(0, len(ids), 700):
            held.append(np.array([name.encode() for name in ids[start:start + 700]], "S"), room=len(ids))
        encoded = [name.encode() for name in ids]
        column = np.array(encoded, "S")
        assert (held.off is not None) == back_to_back and held.n == len(ids)
        held.trim()
        if back_to_back:
            assert held.nbytes == len(held.buf) == sum(map(len, encoded)) and len(held.off) == len(ids) + 1
        else:
            assert len(held.buf) == len(ids) * column.dtype.itemsize and held.capacity == len(ids)
        assert held.column().tolist() == encoded and held.column(5, 40).tolist() == encoded[5:40]
        codes = np.array([rng.randrange(len(ids)) for _ in range(500)])
        assert held.at(codes).tolist() == [encoded[c] for c in codes.tolist()]
        asked = column[np.array([rng.randrange(len(ids)) for _ in range(500)])]
        assert held.equal(codes, asked).tolist() == (column[codes] == asked).tolist()
        assert held.equal(codes, column[codes]).all()
        assert [held.one(c) for c in codes[:20].tolist()] == [encoded[c] for c in codes[:20].tolist()]
        assert held.decoded(0, len(ids)) == ids and held.decoded_at(codes) == [ids[c] for c in codes.tolist()]
        assert held.ascending() == (not back_to_back)
    ordered = sorted(set(spread), key=str.encode)
    held = HeldBytes()
    held.append(np.array([name.encode() for name in ordered], "S"))
    asked = np.array([b"", b"key:", b"key:00000", ordered[7].encode(), ordered[7].encode() + b"x", b"\xff"], "S")
    assert held.off is not None and held.ascending()
    assert held.search(asked).tolist() == np.searchsorted(np.array([n.encode() for n in ordered], "S"), asked).tolist()
