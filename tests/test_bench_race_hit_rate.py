"""The race bench's interval: the 95% Wilson score interval it prints next to each hit rate,
and the bench table (`bench/all.py`) quoting it.

The bench is a script (`bench/race_hit_rate.py`); this imports it from its folder, as
`python bench/race_hit_rate.py` would, and measures nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import race_hit_rate  # noqa: E402


@pytest.mark.parametrize(("hits", "n", "low", "high"), [
    (28, 30, 0.786765, 0.981523),  # a 93% row: compatible with 95% and with 98%
    (29, 30, 0.833296, 0.994091),
    (30, 30, 0.886487, 1.0),
    (0, 30, 0.0, 0.113513),
    (394, 400, 0.967665, 0.993108),
])
def test_the_interval_is_the_wilson_score_interval_at_95_percent(hits: int, n: int, low: float,
                                                                  high: float) -> None:
    assert race_hit_rate.wilson(hits, n) == pytest.approx((low, high), abs=1e-6)


@pytest.mark.parametrize(("hits", "n"), [(0, 0), (31, 30), (-1, 30)])
def test_an_impossible_count_is_refused(hits: int, n: int) -> None:
    with pytest.raises(ValueError, match=f"need 0 <= hits <= n and n >= 1, got {hits} of {n}"):
        race_hit_rate.wilson(hits, n)


def test_a_row_prints_its_interval_after_its_rate() -> None:
    burst = race_hit_rate.Burst(applied=2, errors=0, spread_us=10.0, p50_us=5.0, first_wakeup=2,
                                first_wakeup_reads=2, release_us=100.0)
    miss = race_hit_rate.Burst(applied=1, errors=0, spread_us=10.0, p50_us=5.0, first_wakeup=1,
                               first_wakeup_reads=7, release_us=100.0)
    row = race_hit_rate.Row("h1-last-byte", "uvicorn", "yield", [burst] * 28 + [miss] * 2, 120.0)
    line = row.line()
    assert line.startswith("h1-last-byte      uvicorn    yield     28/30 (93%)   79-98%     1.9 ")
    assert line.endswith("  1/7,1/7")
    assert race_hit_rate.HEADER.startswith(
        "mode              server     window   double-apply   95% CI applied ")


def test_the_bench_table_quotes_each_row_with_its_interval() -> None:
    import all as bench_all

    race = "\n".join([
        "h1-last-byte      uvicorn    yield     28/30 (93%)   79-98%    15.6      596     928 ...",
        "h1-last-byte      hypercorn  yield    30/30 (100%)  89-100%    17.1      163    4021 ...",
    ])
    rows = {figure: measured for figure, _, measured in bench_all.summary({"race_hit_rate.py": race})}
    assert rows["race: HTTP/1.1 last-byte hit rate"] == (
        "uvicorn yield: 28/30 (93%), 95% CI 79-98%; hypercorn yield: 30/30 (100%), 95% CI 89-100%")
