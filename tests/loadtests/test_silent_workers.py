"""When the storm's master stops waiting for a worker's closing message: only once every worker
still owing one has gone unheard for `collect.SILENT_AFTER_S` seconds in a row (pure)."""

from __future__ import annotations

from pathlib import Path

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


def test_a_storm_whose_master_lost_its_workers_says_so_from_the_master_s_log(tmp_path: Path) -> None:
    """A new user's storm on a loaded machine sent nothing and said only that no worker sent: the
    reason, its one worker's heartbeats missed, was in the master's log alone. The note quotes it."""
    from hookproof.commands.storm import workers_lost_note

    log = tmp_path / "locust-master.log"
    assert workers_lost_note(log) is None  # no log
    log.write_text("[2026-12-07 01:20:00,001] host/INFO/locust.main: Starting Locust 2.32\n"
                   "[2026-12-07 01:20:01,002] host/INFO/locust.runners: host_7f3a (index 0) reported as ready. "
                   "1 workers connected.\n", encoding="utf-8")
    assert workers_lost_note(log) is None  # none went missing
    with log.open("a", encoding="utf-8") as f:
        f.write("[2026-12-07 01:20:09,003] host/INFO/locust.runners: Worker host_7f3a failed to send heartbeat, "
                "setting state to missing.\n"
                "[2026-12-07 01:20:09,004] host/INFO/locust.runners: The last worker went missing, stopping test.\n")
    assert workers_lost_note(log) == (
        "Locust's master lost 1 worker(s) mid-storm: their heartbeats stopped (a worker too busy to answer in time, "
        "on a loaded machine, or gone), and Locust stops the test when the last one goes missing (\"The last worker "
        "went missing, stopping test.\", locust/locust-master.log): the storm sent less than it was asked to")
