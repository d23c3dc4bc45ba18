"""A correct receiver that restarts slowly passes kill-during-processing after refusals.

A Django receiver certified with --chaos failed kill-during-processing 2 runs in 3 with
``lost: ... never applied and never acknowledged``: its correct 413 to oversized-payload's
3 MB body counted as "rejected valid events", so the chaos scenarios' retry schedules were
compressed to about 2 s a delivery, shorter than its restart (migrate + gunicorn, ~4 s),
and a killed event's retries ran out while it restarted. Now a refusal the scenario
accepts (`simulator.faults.REFUSABLE`) compresses nothing, and where a real rejection
does compress, a chaos delivery's schedule spans at least twice the receiver's longest
start (`Runner.restart_outlast_s`). (oversized-payload no longer applies under Stripe, which
sends no body of several megabytes; the fixture's 413 stays for providers that do.)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config import (
    ChaosConfig,
    Config,
    ObserverConfig,
    ProcessTargetConfig,
    RunConfig,
    SettleConfig,
    TargetConfig,
)
from hookproof.simulator.serving import free_port
from tests.chaos.rig import REPO, SECRET, outcomes

#: The receiver sleeps this long before it listens: longer than the 2 s floor of a compressed schedule.
START_DELAY_S = 3.0


def _config(db_dir: Path, refuse_unknown: bool, time_scale: float = 1e-4) -> Config:
    db = db_dir / "slow.sqlite"
    command = (f"{sys.executable} -m tests.chaos.slow_start_refuses_big --port {{port}} --db sqlite:///{db} "
               f"--secret {SECRET}")
    env = {"START_DELAY_S": str(START_DELAY_S), "REFUSE_UNKNOWN": "1" if refuse_unknown else "0"}
    return Config(
        target=TargetConfig(url=f"http://127.0.0.1:{free_port()}/webhooks", secret=SECRET,
                            process=ProcessTargetConfig(command=command, cwd=str(REPO), env=env)),
        observer=ObserverConfig(kind="sql", url=f"sqlite:///{db}", effects="SELECT business_key, amount FROM effects"),
        run=RunConfig(seed=7, scenarios=None), settle=SettleConfig(window_s=0.8, deadline_s=10.0),
        chaos=ChaosConfig(events=3, kill_trials=2, replicas=3, time_scale=time_scale),
    )


@pytest.mark.slow
def test_without_a_refusal_nothing_is_compressed_and_the_slow_restart_passes(tmp_path: Path) -> None:
    result = certify(_config(tmp_path, refuse_unknown=False), scenarios=["kill-during-processing"],
                     out_dir=tmp_path / "out", chaos=True)
    assert outcomes(result) == {"kill-during-processing": "pass"}, result.report.notes
    assert not [n for n in result.report.notes if n.startswith("retry schedule compressed")], result.report.notes


@pytest.mark.slow
def test_a_real_rejection_compresses_but_never_below_the_receivers_restart(tmp_path: Path) -> None:
    result = certify(_config(tmp_path, refuse_unknown=True),
                     scenarios=["unknown-event-type", "kill-during-processing"],
                     out_dir=tmp_path / "out", chaos=True)
    assert outcomes(result) == {"unknown-event-type": "fail:valid_not_rejected",
                                "kill-during-processing": "pass"}, result.report.notes
    compressed = [n for n in result.report.notes if n.startswith("retry schedule compressed")]
    assert len(compressed) == 1 and "because the receiver rejected valid events in unknown-event-type" in compressed[0]
    assert "kill-during-processing" in compressed[0] and "(twice the receiver's start plus 1 s)" in compressed[0]


@pytest.mark.slow
def test_a_schedule_shorter_than_the_restart_is_stretched_without_any_rejection(tmp_path: Path) -> None:
    """A correct Django receiver whose cold restart (12 s) outlasted Svix's 27 h compressed to
    10 s failed kill-during-processing ``lost``: only a schedule compressed after a rejection
    was held to twice the receiver's start. Here Stripe's 3 days at time scale 1e-5 span
    2.9 s, less than the receiver's 3 s start: the schedule now spans twice its start."""
    result = certify(_config(tmp_path, refuse_unknown=False, time_scale=1e-5), scenarios=["kill-during-processing"],
                     out_dir=tmp_path / "out", chaos=True)
    assert outcomes(result) == {"kill-during-processing": "pass"}, result.report.notes
    stretched = [n for n in result.report.notes if n.startswith("retry schedules stretched to twice the receiver's "
                                                                 "longest start plus 1 s")]
    assert len(stretched) == 1 and re.search(r": kill-during-processing from [\d.]+ s to [\d.]+ s \(time scale [\d.e-]+\)$",
                                             stretched[0]), result.report.notes
    assert not [n for n in result.report.notes if n.startswith("retry schedule compressed")], result.report.notes
