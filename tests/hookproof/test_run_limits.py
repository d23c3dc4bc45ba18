"""Runs that are never silent and never unbounded, against the hostile servers of tests/hostile/:
a receiver that stopped answering is called down after one scenario, a whole-run deadline
stops the run with a partial report saying why, a heartbeat line shows off a terminal,
and scenario ids are accepted as arguments."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.harness import CliRun, run_hookproof
from tests.hostile.servers import hostile_server
from tests.hostile.test_certify import SENDER_TIMEOUT_S, write_config

THREE = ["duplicate-sequential", "duplicate-concurrent", "reorder"]
#: The provider's retry delays here, scaled: Stripe's ten retries span 0.29 s instead of the hostile
#: suite's 2.9 s per delivery. What these tests check (who is called down, the notes, the count and
#: order of retries) does not depend on the spacing, only the wall time does.
TIME_SCALE = 1e-06


def _fast(text: str) -> str:
    """A hostile-suite config (tests/hostile/test_certify.py) at this module's `TIME_SCALE`."""
    assert "time_scale = 1e-05" in text
    return text.replace("time_scale = 1e-05", f"time_scale = {TIME_SCALE:g}")


#: The sender timeout for a receiver that resets every connection at once: the hostile suite's
#: 0.3 s let a loaded 2-core machine turn a prompt reset into a timeout (the reset came later),
#: and the called-down note counts the two apart. A prompt receiver never waits it out.
PROMPT_SENDER_TIMEOUT_S = 10


def _certify(tmp_path: Path, behaviour: str, *args: str, scenarios: list[str] = THREE,
             env: dict[str, str] | None = None, sender_timeout_s: float | None = None,
             ) -> tuple[CliRun, dict[str, Any]]:
    with hostile_server(behaviour) as server:
        config = write_config(tmp_path, server.url)
        text = _fast(config.read_text(encoding="utf-8"))
        if sender_timeout_s is not None:
            assert f"sender_timeout_s = {SENDER_TIMEOUT_S}\n" in text
            text = text.replace(f"sender_timeout_s = {SENDER_TIMEOUT_S}\n", f"sender_timeout_s = {sender_timeout_s}\n")
        config.write_text(re.sub(r"scenarios = .*", f"scenarios = {json.dumps(scenarios)}", text), encoding="utf-8")
        run = run_hookproof("certify", "--config", str(config), "--out", str(tmp_path / "out"), *args,
                            timeout_s=240, env=env)
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    return run, report


#: --max-duration of the deadline tests: past start-up (a few seconds on a loaded 2-core machine)
#: and far short of the run (a silent receiver with --keep-going takes minutes).
MAX_DURATION_S = 8


def _notes(report: dict[str, Any]) -> list[str]:
    """The report's notes but the reachability probe's (kept when an attempt could not connect)."""
    return [n for n in report["notes"] if not n.startswith("reachability:")]


def test_a_receiver_that_stopped_answering_is_called_down_after_one_scenario(tmp_path: Path) -> None:
    run, report = _certify(tmp_path, "close-before-reading", sender_timeout_s=PROMPT_SENDER_TIMEOUT_S)
    assert run.returncode == 1, run
    first, *rest = report["scenarios"]
    assert first["id"] == "duplicate-sequential" and first["attempts"]
    assert all(a["outcome"] == "connection_error" for a in first["attempts"] if a["valid"])
    assert [(s["id"], s["verdict"], s["attempts"], s["reason"]) for s in rest] == [
        (sid, "unknown", [], "not run: the receiver stopped answering in duplicate-sequential") for sid in THREE[1:]]
    valid = sum(a["valid"] for a in first["attempts"])
    note = (f"the receiver stopped answering in duplicate-sequential (all {valid} valid attempt(s) failed: "
            f"0 timed out, {valid} could not connect); the 2 scenario(s) after it were not run "
            "(--keep-going runs them anyway)")
    assert _notes(report) == [note] and report["verdict"] == "fail" and report["partial"] is False
    assert "note: the receiver stopped answering in duplicate-sequential" in run.stdout, run
    assert re.search(r"\(\+\d+ more finding\(s\) in this scenario\)", run.stdout), run
    summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "stopped answering" in summary
    assert "stopped answering in duplicate-sequential" in (tmp_path / "out" / "report.html").read_text("utf-8")


def test_keep_going_runs_every_scenario(tmp_path: Path) -> None:
    run, report = _certify(tmp_path, "close-before-reading", "--keep-going", sender_timeout_s=PROMPT_SENDER_TIMEOUT_S)
    assert run.returncode == 1, run
    assert [s["id"] for s in report["scenarios"]] == THREE
    assert all(s["attempts"] for s in report["scenarios"]) and _notes(report) == []


def test_a_correct_receiver_is_never_called_down(tmp_path: Path) -> None:
    """answer-ok acknowledges everything (it applies nothing, so the checks fail): never 'down'."""
    run, report = _certify(tmp_path, "answer-ok")
    assert [s["id"] for s in report["scenarios"]] == THREE
    assert _notes(report) == [] and all(s["attempts"] for s in report["scenarios"]), run


def test_the_whole_run_stops_at_max_duration_with_a_partial_report(tmp_path: Path) -> None:
    """A silent receiver with --keep-going would take minutes; --max-duration stops it."""
    run, report = _certify(tmp_path, "silent", "--max-duration", f"{MAX_DURATION_S}s", "--keep-going")
    assert run.returncode == 1, run
    assert report["partial"] is True and report["verdict"] != "pass"
    assert _notes(report) == [f"stopped: the run reached its maximum duration ({MAX_DURATION_S} s, --max-duration or "
                               "run.max_duration_s); the scenarios after that did not run"]
    # every scenario is listed: those the deadline cut short or kept from starting are unknown, saying why
    assert [s["id"] for s in report["scenarios"]] == THREE
    unfinished = [s for s in report["scenarios"]
                  if s["reason"].startswith("not finished: the run reached its maximum duration")]
    assert unfinished and all(s["verdict"] == "unknown" and not s["attempts"] for s in unfinished), report
    # the scenario the deadline cut short says what its attempts came to: the receiver stopped answering
    cut = [s["reason"] for s in unfinished if s["reason"] != "not finished: the run reached its maximum duration"]
    assert cut and all(re.fullmatch(r"not finished: the run reached its maximum duration \((\d+) attempt\(s\) so far; "
                                    r"all \1 valid attempt\(s\) failed: \1 timed out, 0 could not connect: the "
                                    r"receiver stopped answering\)", reason) for reason in cut), cut
    assert (tmp_path / "out" / "history.sqlite").is_file() and (tmp_path / "out" / "report.html").is_file()
    assert "verdict: FAIL (partial run)" in run.stdout or "verdict: UNKNOWN (partial run)" in run.stdout, run


def test_a_deadline_during_start_up_writes_a_partial_report_and_stops_the_receiver(tmp_path: Path) -> None:
    """A receiver whose start command never becomes healthy: the deadline lands during start-up."""
    marker = tmp_path / "receiver.pid"
    start = f"python -c \"import os, time; open({str(marker)!r}, 'w').write(str(os.getpid())); time.sleep(120)\""
    (tmp_path / "hookproof.toml").write_text(f"""
[target]
url = "http://127.0.0.1:1/webhooks"
secret = "whsec_{'s' * 32}"

[target.start]
command = {json.dumps(start)}
health_url = "http://127.0.0.1:1/healthz"
startup_timeout_s = 100

[observer]
kind = "sink"
""", encoding="utf-8")
    run = run_hookproof("certify", "--config", str(tmp_path / "hookproof.toml"), "--out", str(tmp_path / "out"),
                        "--max-duration", "3s", timeout_s=120)
    assert run.returncode == 1, run
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert (report["partial"], report["verdict"], report["scenarios"]) == (True, "unknown", [])
    assert _notes(report) == ["stopped: the run reached its maximum duration (3 s, --max-duration or "
                              "run.max_duration_s); it was still starting (the provider API, the receiver, the "
                              "seed): no scenario ran"]
    assert "verdict: UNKNOWN (partial run)" in run.stdout, run
    pid = int(marker.read_text(encoding="utf-8"))
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_off_a_terminal_a_heartbeat_line_says_where_the_run_is(tmp_path: Path) -> None:
    run, _ = _certify(tmp_path, "silent", "--max-duration", f"{MAX_DURATION_S}s", env={"HOOKPROOF_HEARTBEAT_S": "0.5"})
    beats = re.findall(r"^certify: 0/3 scenario\(s\) done, running duplicate-sequential, \d+ attempt\(s\) so far, \d+ s$",
                       run.stderr, flags=re.M)
    assert beats, run


@pytest.mark.parametrize("args", [("reorder",), ("-s", "reorder")])
def test_scenario_ids_are_arguments_as_well_as_options(tmp_path: Path, args: tuple[str, ...]) -> None:
    run, report = _certify(tmp_path, "answer-ok", *args)
    assert "unexpected extra argument" not in run.stderr, run
    assert [s["id"] for s in report["scenarios"]] == ["reorder"]


def test_a_bad_max_duration_is_one_line(tmp_path: Path) -> None:
    run = run_hookproof("certify", "--config", str(tmp_path / "none.toml"), "--max-duration", "soon", timeout_s=60)
    assert run.returncode == 2
    assert run.stderr.strip() == "hookproof: --max-duration: cannot read 'soon' (use e.g. 60s, 2m, 1h30m)"


# ---- the reachability probe ---------------------------------------------------------------

def test_a_receiver_hookproof_did_not_start_is_probed_and_the_report_says_so(tmp_path: Path) -> None:
    from hookproof.certify import PROBE_NOTE

    run, report = _certify(tmp_path, "one-then-refuse", scenarios=["reorder"])
    port = re.search(r"127\.0\.0\.1:(\d+)", report["target"])
    assert port is not None, report["target"]
    note = PROBE_NOTE.format(where=f"127.0.0.1:{port.group(1)}")
    assert note in report["notes"], run
    # its deliveries were refused a connection: the probe may be why, so the console says so too
    assert any(a["outcome"] == "connection_error" for s in report["scenarios"] for a in s["attempts"])
    assert f"note: {note}" in run.stdout, run
    for name in ("summary.md", "report.html"):  # every report says it, as the console does
        assert "reachability: before the first scenario" in (tmp_path / "out" / name).read_text(encoding="utf-8")


def test_the_probe_of_a_receiver_that_answers_is_in_no_report(tmp_path: Path) -> None:
    """A new user read the probe's note, printed on every run against a URL, as noise: a
    receiver that answered every connection has nothing to learn from it, on the console or
    in any report file (summary.md, report.html, report.json and the history's saved report)."""
    run, report = _certify(tmp_path, "answer-ok", scenarios=["reorder"])
    assert not any(a["outcome"] == "connection_error" for s in report["scenarios"] for a in s["attempts"])
    assert not any("reachability" in n for n in report["notes"]), report["notes"]
    assert "reachability" not in run.stdout + run.stderr, run
    for name in ("summary.md", "report.html", "junit.xml"):
        assert "reachability" not in (tmp_path / "out" / name).read_text(encoding="utf-8"), name


def test_a_receiver_hookproof_starts_is_not_probed(tmp_path: Path) -> None:
    """A `[target.start]` receiver is waited for until ready; the probe would use up the only
    connection of a receiver that serves one, so none is made (nothing listens here: no error)."""
    from hookproof.certify import check_reachable
    from hookproof.config import parse_config
    from tests.support import free_port

    port = free_port()
    text = (f'[target]\nurl = "http://127.0.0.1:{port}/webhooks"\nprofile = "stripe"\nsecret = "whsec_x"\n'
            f'[target.start]\ncommand = "python -m some.receiver --port {port}"\n'
            '[observer]\nkind = "sql"\nurl = "sqlite:///r.db"\neffects = "SELECT business_key FROM effects"\n')
    assert check_reachable(parse_config(text, str(tmp_path / "hookproof.toml"))) is None
    without_start = text.split("[target.start]")[0] + "[observer]" + text.split("[observer]")[1]
    with pytest.raises(Exception, match="nothing listens there"):
        check_reachable(parse_config(without_start, str(tmp_path / "hookproof.toml")))


# ---- retry-schedule compression for a receiver that rejects valid events ----------------

def test_a_receiver_rejecting_valid_events_gets_a_compressed_schedule_same_count_and_order(tmp_path: Path) -> None:
    from hookproof.simulator.profiles import get_profile

    with hostile_server("server-error") as server:
        config = write_config(tmp_path, server.url)
        text = _fast(config.read_text(encoding="utf-8")) + "retry_budget_s = 0.05\n"
        config.write_text(re.sub(r"scenarios = .*", 'scenarios = ["duplicate-sequential", "reorder"]', text),
                          encoding="utf-8")
        run = run_hookproof("certify", "--config", str(config), "--out", str(tmp_path / "out"), timeout_s=240)
    assert run.returncode == 1, run
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    retries = len(get_profile("stripe").retry_schedule_s)
    span = sum(get_profile("stripe").retry_schedule_s) * TIME_SCALE
    scaled = 0.05 / sum(get_profile("stripe").retry_schedule_s)
    notes = _notes(report)
    assert len(notes) == 1 and re.fullmatch(
        re.escape("retry schedule compressed from reorder on, because the receiver rejected valid events in "
                  f"duplicate-sequential: each delivery keeps the provider's {retries} retries in order; a scenario's "
                  "deliveries sent one after another share 0.05 s (run.retry_budget_s), each spread over the budget / "
                  f"their number but at least 0.05 s, instead of {span:.3g} s (time scale {TIME_SCALE:.3g}); "
                  "deliveries x span per scenario: reorder ")
        + r"\d+" + re.escape(f" x 0.05 s (the floor) (time scale {scaled:.3g})"), notes[0]), run
    reorder = report["scenarios"][1]
    by_delivery: dict[str, list[int]] = {}
    for a in reorder["attempts"]:
        by_delivery.setdefault(a["delivery_id"], []).append(a["attempt"])
    assert by_delivery and all(tries == list(range(1, retries + 2)) for tries in by_delivery.values()), by_delivery


#: A receiver that answers 400 to everything, on the port given as its first argument.
REJECTS_ALL = """import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Rejects(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(400)
        self.send_header("Content-Length", "3")
        self.end_headers()
        self.wfile.write(b"bad")

    do_GET = do_POST

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Rejects).serve_forever()
"""


@pytest.mark.slow
def test_chaos_scenarios_after_a_rejecting_catalog_get_the_compressed_schedule(tmp_path: Path) -> None:
    """certify --chaos runs the catalog side by side, then each chaos scenario alone: once the
    catalog saw valid events rejected, the chaos scenarios' deliveries (Stripe's schedule over
    26 s each at their time scale) are compressed as in a sequential run, and the note says so."""
    import sys

    from hookproof.scenarios.chaos import CHAOS_CATALOG
    from tests.hostile.harness import empty_effects_db

    (tmp_path / "rejects.py").write_text(REJECTS_ALL, encoding="utf-8")
    db = empty_effects_db(tmp_path / "observed.sqlite")
    config = tmp_path / "hookproof.toml"
    config.write_text(f"""[target]
url = "http://127.0.0.1:{{port}}/webhooks"
profile = "stripe"
secret = "whsec_rejects_all"

[target.process]
command = "{sys.executable} rejects.py {{port}}"

[observer]
kind = "sql"
url = "{db}"
effects = "SELECT business_key FROM effects"

[run]
scenarios = ["duplicate-sequential", "reorder"]
retry_budget_s = 1
""", encoding="utf-8")  # the catalog's schedule (0.29 s at its time scale) fits the budget: it runs side by side
    # --keep-going: a receiver refusing every delivery with 400 would stop the run after its first scenario
    run = run_hookproof("certify", "--config", str(config), "--chaos", "--keep-going", "--out", str(tmp_path / "out"),
                        "--max-duration", "150s", timeout_s=240, cwd=tmp_path)
    assert run.returncode == 1, run
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    first_chaos = list(CHAOS_CATALOG)[0]
    compressed = [n for n in _notes(report) if n.startswith("retry schedule compressed")]
    assert compressed and compressed[0].startswith(
        f"retry schedule compressed from {first_chaos} on, because the receiver rejected valid events in "
        "duplicate-sequential: "), report["notes"]
    assert len(compressed) == 1 and (
        "each spread over the budget / their number but at least 1 s, instead of 28.7 s (time scale 0.0001); "
        f"deliveries x span per scenario: {first_chaos} ") in compressed[0]
    per_scenario = compressed[0].split("deliveries x span per scenario: ")[1].split(", ")
    assert len(per_scenario) == len(CHAOS_CATALOG), per_scenario  # each chaos scenario: its deliveries, 1 s each
    # each 1 s (the floor), or twice the receiver's longest start when that is longer (a start
    # under load): a kill's restart never outlasts a chaos delivery's retries
    assert all(re.fullmatch(r"[a-z-]+ \d+ x 1 s \(the floor\) \(time scale 3\.49e-06\)", e)
               or re.fullmatch(r"[a-z-]+ \d+ x [\d.]+ s \(twice the receiver's start plus 1 s\) \(time scale [\d.e-]+\)", e)
               for e in per_scenario), per_scenario
    assert report["partial"] is False, report["notes"]  # every chaos scenario ended within the limit
