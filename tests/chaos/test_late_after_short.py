"""A late effect is not charged to a later chaos scenario once an earlier one fell short.

`tests.chaos.late_apply` persists each event, answers 200 and applies it about 0.5 s later
(a queue worker with a delay): correct, only late. With ``lose_first=1`` it keeps the effect
of the first event it ever received from the truth, so `crash-after-ack` (its first event)
falls short and the run knows the receiver keeps something from the truth. Settling the
later chaos scenarios on the window alone then judged `pause-past-timeout` before its
effects were applied and reported them ``lost`` there, a scenario whose freeze loses
nothing. Chaos scenarios settle on evidence whatever an earlier scenario did: the one lost
effect is charged to `crash-after-ack`, and `pause-past-timeout` passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config_model import SettleConfig
from tests.chaos.rig import chaos_config

SCENARIOS = ["crash-after-ack", "pause-past-timeout"]


def _certify(tmp_path: Path, *options: str) -> tuple[dict[str, tuple[str, list[tuple[str, str]]]], str | None]:
    """scenario id -> (verdict, its findings' checks and keys), and the business key of the first
    event the receiver was sent (`crash-after-ack`'s first attempt)."""
    db_dir = tmp_path / "db"
    db_dir.mkdir()
    config = chaos_config("inbox_queue", db_dir)
    process = config.target.process
    assert process is not None
    command = process.command.replace("-m examples.receivers.inbox_queue ", "-m tests.chaos.late_apply ")
    assert command != process.command
    command = " ".join([command, *(f"--option {o}" for o in options)])
    # the defaults, as a team's run has them: a 0.3 s window, below the receiver's 0.5 s lag
    config = config.model_copy(update={"settle": SettleConfig(), "target": config.target.model_copy(
        update={"process": process.model_copy(update={"command": command})})})
    report = certify(config, scenarios=SCENARIOS, out_dir=tmp_path / "out", chaos=True).report
    first = report.scenarios[0].attempts[0].business_key if report.scenarios[0].attempts else None
    return {s.id: (s.verdict, sorted((f.check_id, f.key) for f in s.findings)) for s in report.scenarios}, first


@pytest.mark.slow
def test_a_late_receiver_passes_every_chaos_scenario(tmp_path: Path) -> None:
    got, _ = _certify(tmp_path)
    assert got == {"crash-after-ack": ("pass", []), "pause-past-timeout": ("pass", [])}, got


@pytest.mark.slow
def test_after_a_scenario_fell_short_a_late_effect_is_not_lost_in_the_next(tmp_path: Path) -> None:
    got, first = _certify(tmp_path, "lose_first=1")
    assert got["crash-after-ack"] == ("fail", [("lost", first)]), (first, got)  # the first event's effect, alone
    assert got["pause-past-timeout"] == ("pass", []), got
