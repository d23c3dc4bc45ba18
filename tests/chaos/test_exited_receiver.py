"""A receiver hookproof started that exits mid-run is named as exited, with its exit code.

`tests.chaos.exits_after_first` answers its first request, then its process exits with code 3
(a server whose workers failed to boot). Every later attempt is refused a connection; certify
calls the receiver down after the next scenario (every attempt of it refused), and its note says the process hookproof started
under ``[target.process]`` exited and with which code, not only that it stopped answering.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.certify import certify
from tests.chaos.rig import chaos_config


@pytest.mark.slow
def test_a_started_receiver_that_exited_is_named_with_its_exit_code(tmp_path: Path) -> None:
    db_dir = tmp_path / "db"
    db_dir.mkdir()
    config = chaos_config("inbox_sync", db_dir)
    process = config.target.process
    assert process is not None
    command = process.command.replace("-m examples.receivers.inbox_sync ", "-m tests.chaos.exits_after_first ")
    assert command != process.command
    config = config.model_copy(update={"target": config.target.model_copy(
        update={"process": process.model_copy(update={"command": command})})})
    report = certify(config, scenarios=["duplicate-sequential", "reorder", "stale-after-newer"],
                     out_dir=tmp_path / "out", overlap=1).report
    down = [n for n in report.notes if n.startswith("the receiver stopped answering in reorder (")]
    assert len(down) == 1, report.notes
    assert down[0].endswith(": the receiver hookproof started exited with code 3 (its output: receiver.log); the 1 "
                            "scenario(s) after it were not run (--keep-going runs them anyway)"), down[0]
