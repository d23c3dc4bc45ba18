"""`hookproof report --history` with nothing to re-render says where it looked and what to
pass: the demo's runs (in their own folder) by name, and that explore runs keep no history."""

from __future__ import annotations

from pathlib import Path

from tests.hookproof.test_bad_input import run_in_process


def _one_line(*args: str, cwd: Path) -> str:
    run = run_in_process(*args, cwd=cwd)
    assert run.returncode == 2 and run.stdout == "", run
    (line,) = run.stderr.strip().splitlines()
    return line


def test_after_the_demo_it_names_the_demo_s_runs(tmp_path: Path) -> None:
    for name in ("inbox_sync", "check_then_insert"):
        (tmp_path / "hookproof-demo" / name).mkdir(parents=True)
        (tmp_path / "hookproof-demo" / name / "history.sqlite").write_bytes(b"")
    demo_hint = ("the demo's runs are in their own folder: pass --history hookproof-demo/check_then_insert "
                 "or --history hookproof-demo/inbox_sync")
    assert _one_line("report", "--history", cwd=tmp_path) == (
        f"hookproof: --history: no hookproof-reports/ folder here (runs write there); {demo_hint}")
    (tmp_path / "hookproof-reports" / "explore-20261203T065301Z").mkdir(parents=True)
    explore_hint = ("its 1 explore run(s) keep none: explore writes report.json and, after a finding, "
                    "failing-schedule.json for 'hookproof replay'")
    for args in (("report", "--history"), ("report",)):
        assert _one_line(*args, cwd=tmp_path) == (
            f"hookproof: --history: no run under hookproof-reports/ has a history; {explore_hint}; {demo_hint}")


def test_without_any_run_it_says_what_to_run_or_pass(tmp_path: Path) -> None:
    assert _one_line("report", "--history", cwd=tmp_path) == (
        "hookproof: --history: no hookproof-reports/ folder here (runs write there); run 'hookproof certify' "
        "first, or pass --history with a history.sqlite or a run folder")
    assert _one_line("report", "--history", "elsewhere", cwd=tmp_path) == (
        "hookproof: --history: no history file at elsewhere")


def test_the_run_may_be_given_as_an_argument_as_with_history(tmp_path: Path) -> None:
    """``hookproof report hookproof-reports/latest`` was refused ("unexpected extra argument"):
    a folder or history given as the argument means what ``--history`` does; both at once is
    one line naming each."""
    assert _one_line("report", "elsewhere", cwd=tmp_path) == "hookproof: --history: no history file at elsewhere"
    assert _one_line("report", "one", "--history", "two", cwd=tmp_path) == (
        "hookproof: give the run once: one as the argument, or --history two")
