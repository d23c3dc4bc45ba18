"""Run folders: one per run, a `latest` link, another command's results never overwritten,
and the newest history found by the UTC time in the folder names."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.errors import UsageError
from hookproof.rundirs import MARKER, claim_out, latest_history, new_run_dir

AT = 1796160000.0  # 2026-12-01T21:20:00Z


def test_each_run_gets_its_own_folder_and_latest_follows(tmp_path: Path) -> None:
    first = new_run_dir("certify", tmp_path, at_s=AT)
    again = new_run_dir("certify", tmp_path, at_s=AT)  # the same second
    explore = new_run_dir("explore", tmp_path, at_s=AT + 61)
    assert [first.name, again.name, explore.name] == ["certify-20261201T212000Z", "certify-20261201T212000Z-2",
                                                      "explore-20261201T212101Z"]
    assert (tmp_path / "latest").resolve() == explore.resolve()
    assert (first / MARKER).read_text(encoding="utf-8") == "certify\n"


def test_the_newest_history_is_found_by_the_time_in_the_name(tmp_path: Path) -> None:
    old = new_run_dir("certify", tmp_path, at_s=AT)
    new = new_run_dir("storm", tmp_path, at_s=AT + 3600)
    newest_without = new_run_dir("explore", tmp_path, at_s=AT + 7200)  # explore writes no history
    assert latest_history(tmp_path) is None
    (old / "history.sqlite").write_bytes(b"")
    (new / "history.sqlite").write_bytes(b"")
    assert latest_history(tmp_path) == new / "history.sqlite"
    assert newest_without.is_dir() and latest_history(tmp_path / "nothing-here") is None


def test_a_folder_named_otherwise_is_dated_by_its_history(tmp_path: Path) -> None:
    """A trial's ``--out hookproof-reports/ci-twin`` was taken for the newest run (its name sorted
    after every time) while ``latest`` named a newer storm's: a folder without a time in its name
    is dated by when its history was written."""
    import os

    named = tmp_path / "ci-twin"
    named.mkdir()
    (named / "history.sqlite").write_bytes(b"")
    os.utime(named / "history.sqlite", (AT, AT))
    storm = new_run_dir("storm", tmp_path, at_s=AT + 3600)
    (storm / "history.sqlite").write_bytes(b"")
    again = new_run_dir("storm", tmp_path, at_s=AT + 3600)  # the same second: storm-<time>-2
    assert again.name.endswith("-2")
    (again / "history.sqlite").write_bytes(b"")
    assert latest_history(tmp_path) == again / "history.sqlite"  # the later of one second
    os.utime(named / "history.sqlite", (AT + 7200, AT + 7200))  # certify --out ci-twin ran after them
    assert latest_history(tmp_path) == named / "history.sqlite"


def test_out_is_refused_when_it_holds_another_command_s_results(tmp_path: Path) -> None:
    out = tmp_path / "ci"
    claim_out(out, "certify")
    (out / "history.sqlite").write_bytes(b"certify's")
    claim_out(out, "certify")  # the same command may write there again
    with pytest.raises(UsageError, match="holds the results of a certify run"):
        claim_out(out, "explore")
    claim_out(out, "explore", force=True)
    assert (out / MARKER).read_text(encoding="utf-8") == "explore\n"
    with pytest.raises(UsageError, match="holds the results of an explore run"):  # its article, as spoken
        claim_out(out, "storm")
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "report.json").write_text("{}", encoding="utf-8")
    with pytest.raises(UsageError, match="holds the results of an earlier run"):
        claim_out(bare, "certify")
