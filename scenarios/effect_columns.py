"""The effect checks' numpy forms that need no key table: object states over the
truth's columns, Idempotency-Keys over the effect rows.

``stale``, ``regressed`` and ``downstream_idempotency`` (`scenarios.effect_checks`) ask
these first, on runs of at least `scenarios.key_table.SMALL` states or effect rows;
each answers for every object or row at once, and says None when the check must walk
them one by one (to name what failed, or because the truth is not the pass's columns).
"""

from __future__ import annotations

from itertools import chain, repeat
from operator import attrgetter, eq, is_, is_not
from typing import TYPE_CHECKING, Mapping, Sequence

from hookproof.scenarios.expectation_views import TruthView
from hookproof.scenarios.id_codes import codes_in
from hookproof.scenarios.observations import Effect, EffectRows, ObjectTruth, Observation

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from hookproof.scenarios.check_index import CheckIndex

_KEY = attrgetter("business_key")
_IDEM = attrgetter("idempotency_key")
_OBJECT_ID, _STATUS, _VERSION = attrgetter("object_id"), attrgetter("status"), attrgetter("version")


def monotonic_counts(truth: Mapping[str, ObjectTruth], observations: Sequence[Observation]) -> tuple[int, int] | None:
    """``regressed`` over a `TruthView` (the pass's columns) in numpy, one observation at
    a time in time order: (objects observed, states left unmapped) when no object's
    version ever went down. None when one did, when `truth` is not a `TruthView`, or when
    an observation shows an object twice: the check then walks the states one by one
    (and names the regressions).

    A state without a version is mapped as `ObjectTruth.version_for` maps it: among the
    object's versions with that status, the earliest at or above the highest version
    seen so far (0 before any), else the latest; none: unmapped."""
    import numpy as np

    if not isinstance(truth, TruthView) or truth.chosen is not None:
        return None
    columns = truth.columns
    n_truth, n_status = len(columns.obj), len(columns.status_names) + 1
    by_start = np.argsort(columns.start, kind="stable")
    lengths = (columns.end - columns.start)[by_start]
    entry_t = np.repeat(by_start, lengths)  # every truth entry's t, and its slot in the columns
    entry_at = np.arange(len(entry_t), dtype=np.int64) + np.repeat(columns.start[by_start] - (np.cumsum(lengths) -
                                                                                              lengths), lengths)
    v = columns.version[entry_at]
    vmin = int(v.min()) if len(v) else 0
    width = (int(v.max()) if len(v) else 0) - vmin + 2
    if n_truth * n_status * width >= 2 ** 62:
        return None
    group = entry_t * n_status + columns.status[entry_at]
    by = np.lexsort((v, group))
    group, v = group[by], v[by]
    # ascending: by (object's truth, status), then version (int32 when the versions fit: widened first)
    composite = group * width + (v.astype(np.int64, copy=False) - vmin)
    n_world = len(columns.object_names)
    others: dict[str, int] = {}  # objects the world never named: the next codes
    status_codes = {name: code for code, name in enumerate(columns.status_names)}
    high = np.zeros(n_world, np.int64)
    has_high = np.zeros(n_world, np.bool_)
    unmapped = 0

    def object_codes(ids: list[str]) -> "npt.NDArray[np.int64]":
        """The objects' codes: the world's, else the next codes past it (`others`)."""
        obj = codes_in(columns.objects, ids)
        for row in np.flatnonzero(obj < 0).tolist():
            obj[row] = others.setdefault(ids[row], n_world + len(others))
        return obj

    last_ids: list[str] = []
    last_obj = np.zeros(0, np.int64)
    for obs in sorted(observations, key=attrgetter("at")):
        states = obs.states
        if not states:
            continue
        ids = list(map(_OBJECT_ID, states))
        n = len(last_ids)
        if n and len(ids) >= n and (ids if len(ids) == n else ids[:n]) == last_ids:
            # the last read's objects first (a read repeated, or one whose rows only grow): only
            # the objects after them are looked up (ids compared in C, by identity first)
            obj = np.concatenate([last_obj, object_codes(ids[n:])]) if len(ids) > n else last_obj
        else:
            obj = object_codes(ids)
        last_ids, last_obj = ids, obj  # read only from here
        if len(others) > len(high) - n_world:
            grown = n_world + len(others) - len(high)
            high = np.concatenate([high, np.zeros(grown, np.int64)])
            has_high = np.concatenate([has_high, np.zeros(grown, np.bool_)])
        if (np.bincount(obj) > 1).any():
            return None  # an object twice in one read
        versions = list(map(_VERSION, states))
        given = np.fromiter(map(is_not, versions, repeat(None)), np.bool_, len(versions))
        version = np.array([x if x is not None else 0 for x in versions], np.int64)
        t = np.full(len(obj), -1, np.int64)
        world = obj < n_world
        t[world] = columns.truth_of[obj[world]]
        ask = ~given & (t >= 0)  # mapped through the truth
        if ask.any():
            status = np.fromiter(map(status_codes.get, map(_STATUS, states), repeat(n_status - 1)), np.int64,
                                 len(states))[ask]
            g = t[ask] * n_status + status
            floor = np.where(has_high[obj[ask]], high[obj[ask]], 0)
            lo, hi = np.searchsorted(group, g, "left"), np.searchsorted(group, g, "right")
            found = lo < hi
            at = np.searchsorted(composite, g * width + (np.clip(floor, vmin, vmin + width - 1) - vmin), "left")
            mapped = np.where(at < hi, v[np.minimum(at, len(v) - 1)], v[np.maximum(hi - 1, 0)])
            unmapped += int((~found).sum())
            version[ask] = mapped
            given[np.flatnonzero(ask)[found]] = True
        rows = np.flatnonzero(given)
        o, ver = obj[rows], version[rows]
        if (has_high[o] & (ver < high[o])).any():
            return None  # a regression: the check names it
        up = ~has_high[o] | (ver > high[o])
        high[o[up]] = ver[up]
        has_high[o] = True
    return int(has_high.sum()), unmapped


def stale_objects(wanted: Mapping[str, ObjectTruth], settled: Observation) -> list[str] | None:
    """The objects of `wanted` (a `TruthView`: the pass's columns) whose state in `settled`
    is missing or differs from the truth's final status or version, in `wanted`'s order,
    compared in numpy; None when `wanted` is not a `TruthView` (the caller compares each)."""
    import numpy as np

    if not isinstance(wanted, TruthView):
        return None
    columns = wanted.columns
    order = wanted.order()
    last = columns.end[order] - 1  # each object's final version
    states = settled.states
    if not states:  # every object missing
        return [columns.object_names[o] for o in columns.obj[order].tolist()]
    obj = codes_in(columns.objects, list(map(_OBJECT_ID, states)))
    status_codes = {name: code for code, name in enumerate(columns.status_names)}
    status = np.fromiter(map(status_codes.get, map(_STATUS, states), repeat(-1)), np.int64, len(states))
    versions = list(map(_VERSION, states))
    has_version = np.fromiter(map(is_not, versions, repeat(None)), np.bool_, len(states))
    version = np.array([v if v is not None else 0 for v in versions], np.int64) if has_version.any() \
        else np.zeros(len(states), np.int64)
    known = obj >= 0
    row_of = np.full(len(columns.object_names), -1, np.int64)
    np.maximum.at(row_of, obj[known], np.flatnonzero(known))  # each object's last state row, as `state_of`
    row = row_of[columns.obj[order]]
    seen = row >= 0
    row0 = np.maximum(row, 0)
    same = seen & (status[row0] == columns.status[last]) & (~has_version[row0] | (version[row0] ==
                                                                                  columns.version[last]))
    names = columns.object_names
    return [names[o] for o in columns.obj[order[~same]].tolist()]


def idempotency_consistent(observations: Sequence[Observation], idx: CheckIndex | None) -> tuple[int, int] | None:
    """(distinct business keys, distinct Idempotency-Keys other than None) over every
    effect of `observations` when each business key was seen with one Idempotency-Key
    only (None counting as one) and no two business keys share one: the
    ``downstream_idempotency`` check then has no finding. None when some key breaks that
    (the check then names them). The keys are read as codes (from `idx`'s table when it
    was built from these observations); the Idempotency-Keys are compared in C, each row's
    with its key's first row's, and counted once in a set."""
    import numpy as np

    reads = _reads_not_repeated(observations)
    effects = list(chain.from_iterable(observations[i].effects for i in reads))
    if not effects:
        return 0, 0
    table = idx.keys if idx is not None and idx.observations is observations else None
    if table is not None:
        k, n = np.concatenate([table.observed_codes[i] for i in reads]), len(table)
    else:
        key_codes = dict.fromkeys(map(_KEY, effects))
        key_codes.update(zip(key_codes, range(len(key_codes))))
        k, n = np.fromiter(map(key_codes.__getitem__, map(_KEY, effects)), np.int64, len(effects)), len(key_codes)
    first = np.full(n, len(k), np.int64)
    np.minimum.at(first, k, np.arange(len(k), dtype=np.int64))  # each key's first row
    idems = list(map(_IDEM, effects))
    # only the rows after their key's first are compared with it (a row equals itself: a
    # run whose keys each show one row, an observer's usual read, compares none)
    later = np.flatnonzero(first[k] != np.arange(len(k), dtype=np.int64))
    if later.size and not all(map(eq, map(idems.__getitem__, later.tolist()),
                                  map(idems.__getitem__, first[k[later]].tolist()))):
        return None  # a key seen with two Idempotency-Keys
    keys_seen = first[first < len(k)]
    distinct = set(idems)
    distinct.discard(None)
    # the keys whose (one) Idempotency-Key is None, counted on their first rows in numpy
    none = np.fromiter(map(is_, idems, repeat(None)), np.bool_, len(idems))
    keyed = len(keys_seen) - int(np.count_nonzero(none[keys_seen]))
    if len(distinct) != keyed:
        return None  # an Idempotency-Key shared by two business keys
    return len(keys_seen), len(distinct)


def _reads_not_repeated(observations: Sequence[Observation]) -> list[int]:
    """Indexes of the observations whose rows are not all in another's: a read is left out
    when it is a kept read's very rows (`scenarios.observers.settle` shares them) or when
    the next read begins with its rows (an observer whose rows only grow; compared as
    `scenarios.key_table` compares them: by identity first, `EffectRows` as columns). The
    (key, Idempotency-Key) pairs of the reads kept are those of every read."""
    kept: list[int] = []
    kept_rows: set[int] = set()  # ids of the kept reads' rows (a read left out for the next one's is not here)
    for i, obs in enumerate(observations):
        effects = obs.effects
        if id(effects) in kept_rows:
            continue
        if i + 1 < len(observations) and _begins_with(observations[i + 1].effects, effects):
            continue
        kept.append(i)
        kept_rows.add(id(effects))
    return kept


def _begins_with(rows: Sequence[Effect], head: Sequence[Effect]) -> bool:
    """Whether `rows` begin with `head`'s rows."""
    if isinstance(rows, EffectRows) and isinstance(head, EffectRows):
        return rows.begins_with(head)
    n = len(head)
    return n <= len(rows) and (rows if n == len(rows) else rows[:n]) == head


__all__: Sequence[str] = ["idempotency_consistent", "monotonic_counts", "stale_objects"]
