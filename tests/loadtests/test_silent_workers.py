"""When the storm's master stops waiting for a worker's closing message: only once every worker
still owing one has gone unheard for `collect.SILENT_AFTER_S` seconds in a row (pure)."""

from __future__ import annotations

from hookproof.loadtests.collect import silent_workers


def test_a_worker_is_silent_only_after_the_whole_grace_unheard() -> None:
    since: dict[str, float] = {}
    assert silent_workers(["a", "b"], {"a"}, 100.0, since, after_s=15.0) == []
    assert since == {"b": 100.0}
    assert silent_workers(["a", "b"], {"a"}, 114.9, since, after_s=15.0) == []
    assert silent_workers(["a", "b"], {"a"}, 115.0, since, after_s=15.0) == ["b"]

def test_a_heartbeat_heard_again_starts_the_grace_over() -> None:
    since: dict[str, float] = {}
    silent_workers(["b"], set(), 100.0, since, after_s=15.0)
    assert silent_workers(["b"], {"b"}, 110.0, since, after_s=15.0) == [] and since == {}
    assert silent_workers(["b"], set(), 111.0, since, after_s=15.0) == []
    assert silent_workers(["b"], set(), 125.9, since, after_s=15.0) == []
    assert silent_workers(["b"], set(), 126.0, since, after_s=15.0) == ["b"]

def test_a_worker_that_closed_is_forgotten() -> None:
    since: dict[str, float] = {}
    silent_workers(["a", "b"], set(), 100.0, since, after_s=15.0)
    assert silent_workers(["a"], set(), 120.0, since, after_s=15.0) == ["a"] and set(since) == {"a"}
