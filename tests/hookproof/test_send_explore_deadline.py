"""`hookproof send` and `hookproof explore` stop at their whole-run deadline (--max-duration,
certify's mechanism): against a real receiver that never answers, the run returns with what
it did so far and one line saying why, and exits 1 as certify does at its deadline."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.hostile.harness import run_hookproof
from tests.hostile.servers import hostile_server
from tests.hostile.test_certify import write_config

SECRET = "whsec_deadline_send_secret"
#: The subprocess bound: start-up, the deadline and writing the report, on a loaded machine.
BOUND_S = 120.0


def test_send_stops_at_its_deadline_and_says_why(tmp_path: Path) -> None:
    """Every attempt waits 600 s for an answer that never comes: the deadline ends the run."""
    with hostile_server("silent") as server:
        run = run_hookproof("send", "--url", server.url, "--secret", SECRET, "--sender-timeout", "600",
                            "--copies", "2", "--max-duration", "2s", timeout_s=BOUND_S)
        requests = server.requests
    assert not run.killed and run.returncode == 1, run
    assert run.stderr.strip().splitlines()[-1] == (
        "send stopped: the run reached its maximum duration (2 s, --max-duration); no attempt was started "
        "after that; 0 attempt(s) finished before it, 0 acknowledged; exit 1"), run
    assert "Stripe deliveries to" in run.stdout, run  # the (empty) table of what was sent
    assert requests == 1  # copies go one after the other: the second never started


def test_send_json_lists_the_attempts_finished_before_the_deadline(tmp_path: Path) -> None:
    """Short sender timeouts: some attempts finish (timed out) before the deadline; each is in
    --json's output and counted in the reason line."""
    with hostile_server("silent") as server:
        run = run_hookproof("send", "--url", server.url, "--secret", SECRET, "--sender-timeout", "0.5",
                            "--max-duration", "3s", "--json", timeout_s=BOUND_S)
    assert not run.killed and run.returncode == 1, run
    attempts = json.loads(run.stdout)
    assert attempts and all(a["outcome"] == "timeout" and a["completion"] == "unknown" for a in attempts)
    assert [a["attempt"] for a in attempts] == list(range(1, len(attempts) + 1))
    assert run.stderr.strip().splitlines()[-1] == (
        "send stopped: the run reached its maximum duration (3 s, --max-duration); no attempt was started "
        f"after that; {len(attempts)} attempt(s) finished before it, 0 acknowledged; exit 1"), run


def test_a_bad_send_max_duration_is_one_line() -> None:
    run = run_hookproof("send", "--url", "http://127.0.0.1:9/x", "--secret", SECRET, "--max-duration", "soon",
                        timeout_s=60)
    assert run.returncode == 2 and run.stderr.strip() == (
        "hookproof: --max-duration: cannot read 'soon' (use e.g. 60s, 2m, 1h30m)"), run


def test_explore_stops_at_its_deadline_with_a_partial_report(tmp_path: Path) -> None:
    """explore against a receiver that accepts connections and never answers: the search is
    stopped at --max-duration and the partial report (the interrupted path's) says why."""
    with hostile_server("silent") as server:
        config = write_config(tmp_path, server.url)
        text = config.read_text(encoding="utf-8")
        config.write_text(re.sub(r"sender_timeout_s = .*", "sender_timeout_s = 600", text), encoding="utf-8")
        run = run_hookproof("explore", "--config", str(config), "--out", str(tmp_path / "out"),
                            "--max-duration", "4s", "--max-examples", "5", "--repeats", "1", timeout_s=BOUND_S)
    assert not run.killed and run.returncode == 1, run
    note = ("stopped: the run reached its maximum duration (4 s, --max-duration or run.max_duration_s); "
            "the search stopped there")
    assert f"explore {note}" in run.stdout, run
    assert f"explore stopped; partial report: {tmp_path / 'out' / 'report.json'}" in run.stdout, run
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] is True and report["verdict"] == "unknown"
    assert report["notes"] == [note]
    assert [(s["id"], s["verdict"], s["reason"]) for s in report["scenarios"]] == [
        ("explore-state-machine", "unknown", note)]
    assert note.replace("_", "\\_") in (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")


def test_explore_takes_its_default_deadline_from_the_config(tmp_path: Path) -> None:
    """No flag: run.max_duration_s bounds the search."""
    with hostile_server("silent") as server:
        config = write_config(tmp_path, server.url)
        text = config.read_text(encoding="utf-8")
        text = re.sub(r"sender_timeout_s = .*", "sender_timeout_s = 600\nmax_duration_s = 3", text)
        config.write_text(text, encoding="utf-8")
        run = run_hookproof("explore", "--config", str(config), "--out", str(tmp_path / "out"),
                            "--max-examples", "5", "--repeats", "1", timeout_s=BOUND_S)
    assert not run.killed and run.returncode == 1, run
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["notes"] == ["stopped: the run reached its maximum duration (3 s, --max-duration or "
                               "run.max_duration_s); the search stopped there"]
