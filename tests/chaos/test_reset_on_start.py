"""A chaos scenario's lost findings name a restart that resets the receiver's database.

`tests.chaos.resets_on_start` commits before it answers, but its start command empties its
database, as a development start script recreating its schema does; chaos restarts run the
start command again. Under `crash-after-ack` its effects were committed, then deleted by the
restart: the ``lost`` findings must name that (a restart whose start command resets the
database), beside a receiver acknowledging before its commit, which alone would send its team
looking for a bug it does not have.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookproof.certify import certify
from tests.chaos.rig import chaos_config


@pytest.mark.slow
def test_effects_deleted_by_a_restart_are_said_to_be_gone(tmp_path: Path) -> None:
    db_dir = tmp_path / "db"
    db_dir.mkdir()
    config = chaos_config("inbox_sync", db_dir)
    process = config.target.process
    assert process is not None
    command = process.command.replace("-m examples.receivers.inbox_sync ", "-m tests.chaos.resets_on_start ")
    assert command != process.command
    config = config.model_copy(update={"target": config.target.model_copy(
        update={"process": process.model_copy(update={"command": command})})})
    report = certify(config, scenarios=["crash-after-ack"], out_dir=tmp_path / "out", chaos=True).report
    (scenario,) = report.scenarios
    assert scenario.verdict == "fail", scenario.reason
    lost = [f.message for f in scenario.findings if f.check_id == "lost"]
    assert lost, [f.message for f in scenario.findings]
    # no read came between the commit and the kill, so nothing tells committed-then-deleted from never
    # committed: both are named, the restart's first
    words = re.compile(r"acknowledged \d+ time\(s\) but not applied by the end of settling; the receiver answered "
                       r"200 \"\{\"received\":true\}\" and nothing was applied by the end(, after evt_\w+ \([a-z_.]+\), an "
                       r"earlier event of the same object, was acknowledged)?: this scenario restarted the receiver, which loses what a receiver "
                       r"answering before its work commits had not committed, and every committed row when its start "
                       r"command resets its database \(each restart runs it again\) or its storage is not kept; .*")
    assert all(words.fullmatch(m) for m in lost), lost
