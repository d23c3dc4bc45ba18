"""A race burst that follows a read between phases is pre-sent while that read settles and
released once it has (`Runner._deliver`'s `between_read`, `race.race`'s `gate`).

`concurrent-updates-stored-object` stores eight subscriptions, reads the receiver, then races
each one's two updates, one burst per phase with a read after each. Every burst's connections
are opened and written (but the final bytes) once the read before it shows everything
expected, and released only after that read has settled: no attempt of a burst is sent before
the read ends, so the reads between phases see what they saw before (a correct receiver
passes; the unlocked twin still fails, `test_stored_update_bursts`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

import hookproof.simulator.delivery.race as race_module
from hookproof.certify import certify
from hookproof.demo import receiver_config
from hookproof.scenarios.catalog import STORED_UPDATE_BURSTS
from hookproof.scenarios.runner import Runner

SCENARIO = "concurrent-updates-stored-object"
SECRET = "whsec_burst_presend_" + "0" * 20


def test_each_burst_is_pre_sent_during_the_read_before_it_and_released_after(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[tuple[float, float]] = []  # (start, end) of each settle, unix seconds
    presends: list[float] = []  # when each burst began connecting and writing
    settle, real_race = Runner._settle, race_module.race

    def timed_settle(self: Runner, *args: Any, **kwargs: Any) -> Any:
        started = time.time()
        try:
            return settle(self, *args, **kwargs)
        finally:
            reads.append((started, time.time()))

    async def timed_race(*args: Any, **kwargs: Any) -> Any:
        presends.append(time.time())
        return await real_race(*args, **kwargs)

    monkeypatch.setattr(Runner, "_settle", timed_settle)
    monkeypatch.setattr(race_module, "race", timed_race)
    config = receiver_config("inbox_sync", tmp_path, SECRET, seed=5)
    report = certify(config, scenarios=[SCENARIO], out_dir=tmp_path / "report").report

    (scenario,) = report.scenarios
    assert (scenario.verdict, list(scenario.findings)) == ("pass", [])
    stored = len(scenario.attempts) - 2 * STORED_UPDATE_BURSTS
    bursts = [scenario.attempts[stored + 2 * k: stored + 2 * k + 2] for k in range(STORED_UPDATE_BURSTS)]
    # a read after the stored phase and after every burst but the last, then the final settle
    assert len(reads) == STORED_UPDATE_BURSTS + 1
    assert len(presends) == STORED_UPDATE_BURSTS
    for k, burst in enumerate(bursts):
        read_start, read_end = reads[k]  # the read after the phase before this burst
        assert read_start <= presends[k] < read_end, (k, reads[k], presends[k])
        assert all(a.sent_at >= read_end for a in burst), (k, read_end, [a.sent_at for a in burst])
        assert len({a.event_id for a in burst}) == 2
