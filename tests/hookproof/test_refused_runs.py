"""A refused run leaves the results as they were: no new run folder, ``latest`` unmoved.

Every command with a refusal path (a usage or config error, exit 2) runs in a folder that
already holds a run under ``hookproof-reports/``; afterwards the folder's listing and the
``latest`` link are what they were. certify, explore and a storm refused once its receiver
should answer find the error after their run folder was made (`hookproof.rundirs.withdraw`
hands it back); a storm of a user's catalog is refused before it makes one; send, replay
and report make none.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hookproof.rundirs import LATEST, claim_out, new_run_dir, withdraw
from tests.hookproof.test_bad_input import GOOD_OBSERVER, GOOD_TARGET, run_in_process
from tests.hookproof.test_catalog_config import DOC_CONFIG, document

EARLIER = "certify-20200101T000000Z"


def _results(root: Path) -> tuple[list[str], str | None]:
    names = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    return names, (os.readlink(root / LATEST) if (root / LATEST).is_symlink() else None)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder holding one earlier run, `latest` pointing at it, and a config whose
    receiver is not running (nothing listens on port 9)."""
    run = tmp_path / "hookproof-reports" / EARLIER
    run.mkdir(parents=True)
    (run / "report.json").write_text("{}", encoding="utf-8")
    (tmp_path / "hookproof-reports" / LATEST).symlink_to(EARLIER, target_is_directory=True)
    (tmp_path / "hookproof.toml").write_text(GOOD_TARGET + GOOD_OBSERVER, encoding="utf-8")
    (tmp_path / "catalog.toml").write_text(DOC_CONFIG, encoding="utf-8")
    (tmp_path / "webhooks.yaml").write_text(document('{$ref: "#/components/schemas/Order"}'), encoding="utf-8")
    return tmp_path


CASES = {
    "certify": ("certify", "--seed", "1"),
    "explore": ("explore", "--seed", "1", "--max-examples", "2"),
    "storm-catalog": ("storm", "-c", "catalog.toml", "--duration", "2s"),
    "storm-unreachable": ("storm", "--duration", "2s", "--users", "1"),
    "send": ("send", "--url", "http://127.0.0.1:9/webhooks", "--secret", "env:HOOKPROOF_TEST_NO_SUCH_SECRET"),
    "replay": ("replay", "no-such-schedule.json"),
    "report": ("report", "--history", "no-such-history.sqlite"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_refused_run_leaves_the_results_as_they_were(project: Path, case: str) -> None:
    before = _results(project / "hookproof-reports")
    run = run_in_process(*CASES[case], cwd=project)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1, run
    assert "Traceback" not in run.stderr
    assert _results(project / "hookproof-reports") == before == ([EARLIER, f"{EARLIER}/report.json", LATEST], EARLIER)


def test_withdraw_hands_back_only_a_folder_of_a_refused_run(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    first = new_run_dir("certify", root, at_s=0)
    (first / "report.json").write_text("{}", encoding="utf-8")
    refused = new_run_dir("storm", root, at_s=60)
    assert os.readlink(root / LATEST) == refused.name
    assert withdraw(refused) and not refused.exists() and os.readlink(root / LATEST) == first.name
    assert not withdraw(first)  # already handed back or never made here: nothing happens
    kept = new_run_dir("certify", root, at_s=120)
    (kept / "report.json").write_text("{}", encoding="utf-8")
    assert not withdraw(kept) and kept.is_dir() and os.readlink(root / LATEST) == kept.name  # it wrote results
    fresh = tmp_path / "fresh"
    assert withdraw(new_run_dir("explore", fresh, at_s=0)) and not fresh.exists()  # its root was made for it alone
    out = tmp_path / "ci"
    assert withdraw(claim_out(out, "certify")) and not out.exists()
    out.mkdir()
    claim_out(out, "certify")
    assert withdraw(claim_out(out, "certify")) and (out / ".hookproof-run").read_text(encoding="utf-8") == "certify\n"


def test_withdraw_keeps_a_demo_folder_whose_first_receiver_was_certified(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    demo = new_run_dir("demo", root, at_s=0)
    (demo / "inbox_sync").mkdir()
    (demo / "inbox_sync" / "report.json").write_text("{}", encoding="utf-8")
    (demo / "check_then_insert").mkdir()  # the second receiver failed to start: nothing in it
    assert not withdraw(demo) and (demo / "inbox_sync" / "report.json").is_file()
    assert os.readlink(root / LATEST) == demo.name
    empty = new_run_dir("demo", root, at_s=60)
    (empty / "inbox_sync").mkdir()
    assert withdraw(empty) and not empty.exists() and os.readlink(root / LATEST) == demo.name
