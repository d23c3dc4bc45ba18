"""`hookproof demo`: each run in a folder of its own, and one whole-run deadline over both
receivers (the one running when it passes gets a partial report, the next is not run)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.hostile.harness import run_hookproof

#: The subprocess bound: start-up, the deadline and the partial report, on a loaded machine.
BOUND_S = 180.0
#: What the partial report's note says was left undone: the scenarios, or (a slow start) all of them.
UNDONE = r"(the scenarios after that did not run|it was still starting \(the provider API, the receiver, the seed\): no scenario ran)"


@pytest.mark.slow
def test_each_demo_run_keeps_its_own_folder_and_stops_at_its_deadline(tmp_path: Path) -> None:
    runs = [run_hookproof("demo", "--max-duration", "3s", timeout_s=BOUND_S, cwd=tmp_path) for _ in range(2)]
    for run in runs:
        assert not run.killed and run.returncode == 1, run
        assert re.fullmatch(r"demo stopped: the run reached its maximum duration \(3 s, --max-duration\); " + UNDONE
                            + r"; not run: check_then_insert; exit 1", run.stdout.strip().splitlines()[-1]), run
    reports = tmp_path / "hookproof-reports"
    folders = sorted(p for p in reports.iterdir() if p.name.startswith("demo-"))
    assert len(folders) == 2, folders
    assert (reports / "latest").resolve() == max(folders, key=lambda p: p.stat().st_mtime).resolve()
    for folder in folders:
        report = json.loads((folder / "inbox_sync" / "report.json").read_text(encoding="utf-8"))
        assert report["partial"] is True
        assert any(n.startswith("stopped: the run reached its maximum duration (3 s, --max-duration)")
                   for n in report["notes"]), report["notes"]
        assert not (folder / "check_then_insert").exists()


def test_demo_out_refuses_another_command_s_results(tmp_path: Path) -> None:
    out = tmp_path / "ci"
    out.mkdir()
    (out / ".hookproof-run").write_text("certify\n", encoding="utf-8")
    run = run_hookproof("demo", "--out", str(out), timeout_s=60, cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.strip().splitlines() == [
        f"hookproof: --out: {out} holds the results of a certify run; choose another folder, leave --out out "
        "(each run then gets its own folder under hookproof-reports/) or pass --force to overwrite them"], run


def test_a_bad_demo_max_duration_is_one_line(tmp_path: Path) -> None:
    run = run_hookproof("demo", "--max-duration", "soon", timeout_s=60, cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.strip() == (
        "hookproof: --max-duration: cannot read 'soon' (use e.g. 60s, 2m, 1h30m)"), run
    assert not (tmp_path / "hookproof-reports").exists()


@pytest.mark.slow
def test_on_a_terminal_the_demo_shows_the_scenarios_done(tmp_path: Path) -> None:
    from tests.hostile.harness import on_a_terminal

    code, text = on_a_terminal(["demo", "--max-duration", "6s"], tmp_path, timeout_s=BOUND_S)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "\n")  # the redrawn line, without colours
    assert code == 1, shown[-3000:]
    assert re.search(r"^demo inbox_sync: \d+/\d+ scenario\(s\) done, ", shown, flags=re.M), shown[-3000:]
