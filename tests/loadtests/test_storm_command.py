"""`hookproof storm`: refusals (fast) and real storms against reference receivers (slow).

The storms run ``python -m hookproof storm`` in a subprocess, which runs Locust in its
own processes: Locust (and gevent's monkey-patching) never enters the pytest process.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from hookproof.commands.storm import build_spec, parse_duration
from hookproof.config import load_config
from hookproof.errors import UsageError
from hookproof.loadtests.spec import StormSpec
from hookproof.simulator.delivery import History, Target
from hookproof.simulator.delivery.history import HistoryFile
from tests.hostile.servers import hostile_server
from tests.support import free_port, run_interrupted

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_storm_tests_only_0123456789"


def _config(tmp_path: Path, receiver: str | None, url: str | None = None) -> Path:
    port = free_port()
    db = tmp_path / f"{receiver or 'none'}.sqlite"
    lines = ["[target]", f'url = "{url or f"http://127.0.0.1:{port}/webhooks"}"', 'profile = "stripe"',
             'secret = "env:HOOKPROOF_TEST_SECRET"', ""]
    if receiver:
        lines += ["[target.start]",
                  f'command = "{sys.executable} -m examples.receivers.{receiver} --port {port} '
                  f'--db sqlite:///{db} --secret {SECRET}"',
                  f'health_url = "http://127.0.0.1:{port}/healthz"', f'cwd = "{ROOT}"', "startup_timeout_s = 60", ""]
    lines += ["[observer]", 'kind = "sql"', f'url = "sqlite:///{db}"',
              'effects = "SELECT business_key, amount FROM effects"',
              'state = "SELECT object_id, status, version FROM subscription_states"', "",
              "[settle]", "window_s = 0.5", "deadline_s = 30", ""]
    path = tmp_path / "hookproof.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _storm(config: Path, out: Path, *args: str, timeout_s: float = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOOKPROOF_TEST_SECRET": SECRET, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "hookproof", "storm", "--config", str(config), "--out", str(out), *args],
                          cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=timeout_s)


@pytest.mark.parametrize(("text", "seconds"), [("60s", 60.0), ("90", 90.0), ("2m", 120.0), ("1h30m", 5400.0),
                                               ("1m30s", 90.0), ("0.5s", 0.5)])
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "0s", "-5s", "1d"])
def test_parse_duration_refuses(text: str) -> None:
    with pytest.raises(UsageError, match="--duration"):
        parse_duration(text)


@pytest.mark.parametrize(("url", "loopback"), [
    ("http://127.0.0.1:8000/webhooks", True), ("http://localhost/x", True), ("http://[::1]:80/", True),
    ("http://127.5.0.1/", True), ("http://10.0.0.5/webhooks", False), ("https://example.com/hooks", False),
])
def test_is_loopback(url: str, loopback: bool) -> None:
    assert Target(url=url).is_loopback() is loopback


def test_a_remote_target_needs_allow_remote(tmp_path: Path) -> None:
    config = _config(tmp_path, None, url="https://receiver.example.com/webhooks")
    result = _storm(config, tmp_path / "out", "--duration", "5s", timeout_s=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines == ["hookproof: target.url: https://receiver.example.com/webhooks is not a loopback address; storm "
                     "sends a load of duplicates, bursts and redelivery waves, so a remote receiver needs --allow-remote"]
    assert not (tmp_path / "out" / "report.json").exists()


@pytest.mark.slow
def test_state_fields_are_left_out_with_a_note_and_a_correct_receiver_passes(tmp_path: Path) -> None:
    """A storm's truth is statuses: the config certify reads a subscription's price with
    (``[observer.state_fields]``) storms too, comparing statuses only, and the report and the
    console say which declared fields were not compared."""
    config = _config(tmp_path, "inbox_sync")
    config.write_text(config.read_text(encoding="utf-8").replace(
        "[settle]", '[observer.state_fields]\nsubscription = { price = "data.object.items.data.0.price.id" }\n\n[settle]'),
        encoding="utf-8")
    result = _storm(config, tmp_path / "out", "--duration", "3s", "--users", "4", "--rate", "40", "--seed", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    note = ("[observer.state_fields] not compared (subscription: price): a storm compares each object's status only; "
            "certify and explore compare the declared fields too")
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "pass" and report["notes"].count(note) == 1, report["notes"]
    assert note in " ".join(result.stdout.split()), result.stdout
    assert report["config"] == str(config)  # which of a team's configs made the run


def test_a_receiver_that_is_not_running_is_a_config_error_not_a_finding(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOKPROOF_TEST_SECRET", SECRET)
    config = _config(tmp_path, None)  # a free port: nothing listens there
    port = urlsplit(load_config(config).target.url or "").port
    result = _storm(config, tmp_path / "out", "--duration", "2s", timeout_s=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    line = (f"hookproof: target.url: cannot reach 127.0.0.1:{port} (nothing listens there); "
            "start the receiver or fix the URL")
    assert result.stderr.strip().splitlines() == [line]
    assert not (tmp_path / "out" / "report.json").exists()
    assert not (tmp_path / "out" / "locust").exists(), "Locust was started"


@pytest.mark.parametrize("flag", ["--rate", "--spawn-rate"])
def test_an_endless_rate_is_a_usage_error(tmp_path: Path, flag: str) -> None:
    result = _storm(_config(tmp_path, None), tmp_path / "out", flag, "inf", timeout_s=60)
    assert result.returncode == 2 and flag in result.stderr


def test_a_bad_duration_is_a_usage_error(tmp_path: Path) -> None:
    result = _storm(_config(tmp_path, None), tmp_path / "out", "--duration", "soon", timeout_s=60)
    assert result.returncode == 2 and "--duration" in result.stderr


def test_max_in_flight_reaches_the_spec_and_zero_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOKPROOF_TEST_SECRET", SECRET)
    spec = build_spec(load_config(_config(tmp_path, None)), users=2, rate=10.0, duration_s=5.0, shape="steady",
                      duplicates=0.2, burst=4, reorder_window=8, waves=1, out=tmp_path / "out", sink_url=None,
                      progress_path=None, max_in_flight=3)
    assert spec.max_in_flight == 3
    result = _storm(_config(tmp_path, None), tmp_path / "out", "--max-in-flight", "0", timeout_s=60)
    assert result.returncode == 2 and "--max-in-flight" in result.stderr


@pytest.mark.parametrize(("args", "line"), [
    (("--workers", "2", "--workers-expected", "2"),
     "hookproof: --workers-expected (workers on other machines) and --workers (local ones) cannot be combined"),
    (("--workers-expected", "1", "--workers-timeout", "soon"),
     "hookproof: --workers-timeout: cannot read 'soon' (use e.g. 60s, 2m, 1h30m)"),
    (("--collect-timeout", "0s",), "hookproof: --collect-timeout: must be more than 0 seconds"),
])
def test_bad_distributed_flags_are_one_line_usage_errors(tmp_path: Path, args: tuple[str, ...], line: str) -> None:
    result = _storm(_config(tmp_path, None), tmp_path / "out", *args, timeout_s=60)
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [line]


def test_the_workers_get_the_spec_without_the_observer_and_the_collect_timeout_reaches_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOKPROOF_TEST_SECRET", SECRET)
    spec = build_spec(load_config(_config(tmp_path, None)), users=2, rate=10.0, duration_s=5.0, shape="steady",
                      duplicates=0.2, burst=4, reorder_window=8, waves=1, out=tmp_path / "out", sink_url=None,
                      progress_path=tmp_path / "p.json", collect_timeout_s=120.0)
    assert spec.collect_timeout_s == 120.0 and spec.observer["kind"] == "sql"
    theirs = StormSpec.from_json(spec.for_workers().to_json())
    assert theirs.observer == {} and theirs.sink_url is None and theirs.progress_path is None
    assert spec.config_file is not None and theirs.config_file is None  # a path of the master's machine
    assert theirs.model_dump(exclude={"observer", "sink_url", "progress_path", "out_dir", "config_file"}) == \
        spec.model_dump(exclude={"observer", "sink_url", "progress_path", "out_dir", "config_file"})
    assert SECRET not in spec.for_workers().to_json()


def test_storm_worker_needs_a_master_host() -> None:
    result = subprocess.run([sys.executable, "-m", "hookproof", "storm-worker"], cwd=str(ROOT), capture_output=True,
                            text=True, timeout=60, env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 2 and "--master-host" in result.stderr
    result = subprocess.run([sys.executable, "-m", "hookproof", "storm-worker", "--master-host", "a b"],
                            cwd=str(ROOT), capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.strip() == "hookproof: --master-host: not a host name or address: 'a b'"


def _checks(out: Path) -> dict[str, tuple[str, set[str]]]:
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (scenario,) = report["scenarios"]
    assert scenario["id"] == "storm"
    return {c["check_id"]: (c["verdict"], {f["check_id"] for f in c["findings"] if f["severity"] == "finding"})
            for c in scenario["checks"]}


STORM = ("--users", "6", "--spawn-rate", "6", "--rate", "60", "--duration", "20s", "--workers", "2",
         "--duplicates", "0.2", "--burst", "4")
#: The same storm, 8 s long, for the twins whose every duplicate can show (no_dedupe applies each
#: copy; check_then_insert races every key, 30 keys applied twice in one 8 s storm): what they are
#: checked for, a key applied twice, is in its first seconds already. The 20 s storm stays for
#: inbox_sync, whose checks count what was sent and the heartbeat lines, and for
#: fulfil_check_then_insert, which races only checkout fulfilments (2 keys applied twice in one
#: 8 s storm: too few to count on).
TWIN_STORM = ("--users", "6", "--spawn-rate", "6", "--rate", "60", "--duration", "8s", "--workers", "2",
              "--duplicates", "0.2", "--burst", "4")


@pytest.mark.slow
def test_storm_inbox_sync_passes_every_check(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _storm(_config(tmp_path, "inbox_sync"), out, *STORM)
    assert result.returncode == 0, result.stdout + result.stderr
    checks = _checks(out)
    assert {c: v for c, (v, _) in checks.items()} == dict.fromkeys(
        ("duplicated", "lost", "unexpected", "valid_not_rejected", "no_server_error", "duplicate_acked",
         "counter", "stale", "regressed", "ack_latency"), "valid")
    latency = json.loads((out / "report.json").read_text())["scenarios"][0]["checks"][-1]["stats"]
    assert latency["sent"] > 20 * 60 * 0.8 and latency["p99_ms"] > 0 and latency["throughput"]["series"]
    assert (out / "history.sqlite").is_file() and (out / "junit.xml").is_file() and (out / "report.html").is_file()
    assert SECRET not in result.stdout + result.stderr
    # Off a terminal, never silent: a heartbeat line every 5 s over the 20 s of sending and the checks.
    assert len(re.findall(r"^storm: \w[^,]*, \d+ s: ", result.stderr, flags=re.M)) >= 4, result.stderr
    assert re.search(r"^storm: .*, \d+ s: \d+ sent, ", result.stderr, flags=re.M), result.stderr
    for log in (out / "locust").glob("*.log"):
        assert SECRET not in log.read_text(encoding="utf-8", errors="replace")
    assert "verdict: PASS" in result.stdout


@pytest.mark.slow
def test_storm_no_dedupe_finds_duplicate_effects(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _storm(_config(tmp_path, "no_dedupe"), out, *TWIN_STORM)
    assert result.returncode == 1, result.stdout + result.stderr
    checks = _checks(out)
    assert checks["duplicated"] == ("invalid", {"duplicated"})
    assert checks["lost"][0] == "valid" and checks["unexpected"][0] == "valid"
    assert "verdict: FAIL" in result.stdout


@pytest.mark.slow
def test_storm_check_then_insert_fails(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _storm(_config(tmp_path, "check_then_insert"), out, *TWIN_STORM)
    assert result.returncode == 1, result.stdout + result.stderr
    checks = _checks(out)
    assert checks["duplicated"] == ("invalid", {"duplicated"})
    assert checks["unexpected"][0] == "valid"


@pytest.mark.slow
def test_storm_sends_checkout_and_finds_a_fulfilment_check_then_insert(tmp_path: Path) -> None:
    """Only this twin's checkout fulfilments race: a storm whose stories had no checkout passed it."""
    out = tmp_path / "out"
    result = _storm(_config(tmp_path, "fulfil_check_then_insert"), out, *STORM)
    assert result.returncode == 1, result.stdout + result.stderr
    checks = _checks(out)
    assert checks["duplicated"] == ("invalid", {"duplicated"})
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (scenario,) = report["scenarios"]
    duplicated = [f["key"] for c in scenario["checks"] if c["check_id"] == "duplicated" for f in c["findings"]
                  if f["severity"] == "finding"]
    assert duplicated and all(key.startswith("fulfillment:cs_") for key in duplicated), duplicated
    sent = {a.event_type for a in HistoryFile(out / "history.sqlite")}
    assert {"checkout.session.completed", "checkout.session.async_payment_succeeded"} <= sent  # the owing ones


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_storm_reports_what_it_sent_and_says_partial(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "out"
    marker = f"HOOKPROOF_TEST_RUN={uuid.uuid4().hex}"  # inherited by this storm's Locust processes only
    env = {**os.environ, "HOOKPROOF_TEST_SECRET": SECRET, "PYTHONPATH": str(ROOT), "COLUMNS": "200",
           "HOOKPROOF_TEST_RUN": marker.split("=", 1)[1]}

    def sending(proc: subprocess.Popen[str]) -> None:
        deadline = time.monotonic() + 60
        while not (out / "locust").is_dir() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(8)  # the storm is sending

    result = run_interrupted([sys.executable, "-m", "hookproof", "storm", "--config",
                              str(_config(tmp_path, "inbox_sync")), "--out", str(out), "--users", "4", "--spawn-rate",
                              "4", "--rate", "40", "--duration", "120s"], signum, cwd=ROOT, env=env,
                             under_way=sending, timeout_s=90)
    assert result.returncode == 128 + signum, result.stdout + result.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] is True
    assert "interrupted after" in (report["scenarios"][0].get("reason") or "")
    assert report["notes"][-1] == (f"stopped by {signal.Signals(signum).name}; the storm ended early: the report "
                                   "holds what was sent")
    assert not _locust_processes(marker), "Locust processes were left running"


def _locust_processes(marker: str) -> list[int]:
    """Pids of running processes started from the storm's locustfile with `marker`
    (``NAME=value``) in their environment: this test's, not another run's on the machine."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if (b"loadtests/locustfile.py" in (proc / "cmdline").read_bytes()
                    and marker.encode() in (proc / "environ").read_bytes().split(b"\0")):
                pids.append(int(proc.name))
        except OSError:  # the process ended meanwhile
            continue
    return pids


def no_effects() -> dict[str, list[object]]:
    """The observer of a receiver that applies nothing (the hostile servers)."""
    return {"effects": [], "states": []}


@pytest.mark.slow
@pytest.mark.parametrize(("behaviour", "error"), [
    ("huge-body", "answered 200 with a body longer than the 65536-byte read cap; the provider abandoned the answer"),
    ("reset-mid-answer", "answered 200 but the connection was reset while the answer's body was being read"),
])
def test_a_storm_records_answers_it_cannot_take_as_unknown(tmp_path: Path, behaviour: str, error: str) -> None:
    """A 50 MB answer is read only up to the read cap; a broken one is not an answer:
    neither is acknowledged, both are recorded as unknown and fail the storm."""
    out = tmp_path / "out"
    with hostile_server(behaviour) as server:
        config = tmp_path / "hookproof.toml"
        config.write_text("\n".join([
            "[target]", f'url = "{server.url}"', 'profile = "stripe"', 'secret = "env:HOOKPROOF_TEST_SECRET"', "",
            "[observer]", 'kind = "python"', f'callable = "{__name__}:no_effects"', "",
            "[settle]", "window_s = 0.2", "deadline_s = 5", ""]), encoding="utf-8")
        result = _storm(config, out, "--users", "1", "--spawn-rate", "1", "--rate", "4", "--duration", "3s",
                        "--duplicates", "0")
    assert result.returncode == 1, result.stdout + result.stderr
    history = History(out / "history.sqlite")
    attempts = history.attempts()
    history.close()
    assert attempts
    assert {(a.status, a.outcome.value, a.completion.value, a.error) for a in attempts} == {
        (None, "connection_error", "unknown", error)}


@pytest.mark.slow
def test_storm_starts_the_receiver_a_process_section_describes(tmp_path: Path) -> None:
    """`[target.process]` with `{port}` in the URL: the storm starts the receiver on a free port, as certify does,
    hands it the secret through `env`, and stops it after."""
    db = tmp_path / "started.sqlite"
    lines = ["[target]", 'url = "http://127.0.0.1:{port}/webhooks"', 'profile = "stripe"',
             'secret = "env:HOOKPROOF_TEST_SECRET"', "",
             "[target.process]", f'command = "{sys.executable} -m examples.receivers.inbox_sync --port {{port}} '
             f'--db sqlite:///{db}"', f'cwd = "{ROOT}"', "startup_timeout_s = 60", "",
             "[target.process.env]", 'WEBHOOK_SECRET = "{secret}"', "",
             "[observer]", 'kind = "sql"', f'url = "sqlite:///{db}"',
             'effects = "SELECT business_key, amount FROM effects"',
             'state = "SELECT object_id, status, version FROM subscription_states"', "",
             "[settle]", "window_s = 0.5", "deadline_s = 30", ""]
    config = tmp_path / "hookproof.toml"
    config.write_text("\n".join(lines), encoding="utf-8")
    out = tmp_path / "out"
    result = _storm(config, out, "--users", "2", "--spawn-rate", "2", "--rate", "20", "--duration", "5s")
    assert result.returncode == 0, result.stdout + result.stderr
    checks = _checks(out)
    assert checks["duplicated"][0] == "valid" and checks["lost"][0] == "valid"
    sent = json.loads((out / "report.json").read_text())["scenarios"][0]["checks"][-1]["stats"]["sent"]
    assert sent > 0
    assert SECRET not in result.stdout + result.stderr
    import sqlite3

    with contextlib.closing(sqlite3.connect(db)) as conn:  # the started receiver applied the storm's effects
        assert conn.execute("SELECT count(*) FROM effects").fetchone()[0] > 0


#: What a storm ended at its --max-duration of 15 s says, in its report's notes and its last line.
STOPPED_AT_15S = ("stopped: the run reached its maximum duration (15 s, --max-duration); the storm ended early: "
                  "the report holds what was sent")


@pytest.mark.slow
def test_a_storm_stops_at_max_duration_and_its_partial_report_says_why(tmp_path: Path) -> None:
    """A 120 s storm under --max-duration 15s: ended early, still checked, its partial report says why, exit 1."""
    out = tmp_path / "out"
    started = time.monotonic()
    result = _storm(_config(tmp_path, "inbox_sync"), out, "--users", "4", "--spawn-rate", "4", "--rate", "40",
                    "--duration", "120s", "--max-duration", "15s", timeout_s=150)
    took_s = time.monotonic() - started
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.strip().splitlines()[-1] == f"storm {STOPPED_AT_15S}; exit 1", result.stdout
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] is True and report["notes"][-1] == STOPPED_AT_15S, report["notes"]
    history = History(out / "history.sqlite")
    sent = history.attempts()
    history.close()
    assert sent, "nothing was sent before the deadline"
    assert took_s < 120, took_s  # the storm's own --duration was never reached


def test_a_bad_storm_max_duration_is_one_line(tmp_path: Path) -> None:
    result = _storm(_config(tmp_path, None), tmp_path / "out", "--max-duration", "soon", timeout_s=60)
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [
        "hookproof: --max-duration: cannot read 'soon' (use e.g. 60s, 2m, 1h30m)"], result.stderr


@pytest.mark.slow
def test_on_a_terminal_a_storm_shows_its_phase_and_what_it_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.hostile.harness import on_a_terminal

    monkeypatch.setenv("HOOKPROOF_TEST_SECRET", SECRET)  # the config's secret, inherited by the storm
    code, text = on_a_terminal(["storm", "--config", str(_config(tmp_path, "inbox_sync")), "--out", str(tmp_path / "out"),
                                "--users", "2", "--spawn-rate", "2", "--rate", "20", "--duration", "6s"], ROOT,
                               timeout_s=240)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "\n")  # the redrawn line, without colours
    assert code == 0, shown[-3000:]
    assert re.search(r"^storm: \w[^\n]*?\b\d+ sent, [\d.]+/s now, \d+ non-2xx, \d+ unanswered, \d+ worker\(s\)", shown, flags=re.M), \
        shown[-3000:]


@pytest.mark.slow
def test_a_storm_every_delivery_of_which_was_refused_with_401_gets_certify_s_headline(tmp_path: Path) -> None:
    """A receiver answering 401 to everything (what one verifying with another secret does):
    the storm's console and report lead with certify's headline, naming the secret's source."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from hookproof.headline import HEADLINE_PREFIX

    class Refusing(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = b'{"error": "invalid hmac"}'
            self.send_response(401)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    out = tmp_path / "out"
    try:
        config = tmp_path / "hookproof.toml"
        config.write_text("\n".join([
            "[target]", f'url = "http://127.0.0.1:{server.server_address[1]}/webhooks"', 'profile = "stripe"',
            'secret = "env:HOOKPROOF_TEST_SECRET"', "",
            "[observer]", 'kind = "python"', f'callable = "{__name__}:no_effects"', "",
            "[settle]", "window_s = 0.2", "deadline_s = 5", ""]), encoding="utf-8")
        result = _storm(config, out, "--users", "1", "--spawn-rate", "1", "--rate", "4", "--duration", "3s",
                        "--duplicates", "0")
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    headline = report["notes"][0]
    assert headline.startswith(f"{HEADLINE_PREFIX}every valid delivery was refused with 401 (")
    assert "(source: env:HOOKPROOF_TEST_SECRET)" in headline and SECRET not in result.stdout + json.dumps(report)
    lines = result.stdout.splitlines()
    assert lines.count(headline) == 1 and lines.index(headline) < next(
        i for i, line in enumerate(lines) if line.startswith("verdict:"))


@pytest.mark.parametrize(("load", "cpus", "said"), [
    ((12.0, 9.3, 4.0), 2, True),  # the trial's storm: load 12 on 2 CPUs, no sender lag
    ((3.9, 3.0, 2.0), 2, False),  # busy, not overloaded
    ((4.0, 1.0, 1.0), 2, True),
    (None, 2, False),  # no load average on this system
    ((12.0, 9.3, 4.0), None, False),
])
def test_an_overloaded_machine_is_said_beside_the_ack_latencies(load: tuple[float, float, float] | None,
                                                                cpus: int | None, said: bool) -> None:
    """The senders kept up (sender-bound did not fire: loop lag 165 ms < 200 ms, connection
    wait 45 ms < 1 s) while the machine ran at load 12 on 2 CPUs and ack_latency failed:
    the storm says the machine was overloaded, with the figures, and judges as measured."""
    import io

    from rich.console import Console

    from hookproof.commands.storm import _print_numbers, host_load_note
    from hookproof.reports.model import CheckView, RunReport, ScenarioReport

    note = host_load_note(load, cpus)
    assert (note is not None) is said
    if note is None:
        return
    one, five, _ = load or (0.0, 0.0, 0.0)
    assert note.startswith(f"the machine was overloaded: load average {one:.1f} (1 min; {five:.1f} over 5 min) on "
                           f"{cpus} CPU(s) at the storm's end;")
    check = CheckView("ack_latency", "invalid", (), {"sent": 894, "events": 800, "sent_per_s": 15, "p50_ms": 9963.1,
                                                     "p95_ms": 18000.0, "p99_ms": 19836.5})
    scenario = ScenarioReport("storm", "Storm", "", "fail", (), checks=(check,))
    report = RunReport("0", "http://127.0.0.1:1/w", "stripe", "test", 1, 0.0, 1.0, "fail", (scenario,), ())
    out = io.StringIO()
    _print_numbers(report, Console(file=out, width=300), note)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("storm: 894 attempts") and lines[1] == f"storm: {note}"


@pytest.mark.parametrize(("series", "duration_s", "note"), [
    # a user's 30 s storm: nothing for 25 s, then 1282 attempts in 4 s (its summary said 42.7/s, a plain pass)
    ([[float(t), 0.0, 0.0] for t in range(25)] + [[25.0, 545.0, 500.0], [26.0, 179.0, 170.0], [27.0, 405.0, 400.0],
                                                  [28.0, 153.0, 150.0], [29.0, 0.0, 0.0], [30.0, 0.0, 0.0]],
     30.0, "the senders sent nothing for the first 25 s of the storm, then 1282 attempt(s) in 4 s (320.5/s): its "
           "average rate and ack latencies describe that burst, not a steady load; the senders' first requests waited "
           "(for a connection to the receiver, the provider API or a CPU: see the sender-bound note and the "
           "machine's load)"),
    ([[0.0, 0.0, 0.0], [1.0, 20.0, 20.0], [2.0, 20.0, 20.0]], 30.0, None),  # a second to start: usual
    ([[float(t), 0.0, 0.0] for t in range(6)] + [[6.0, 9.0, 9.0]] * 30, 36.0, None),  # 6 of 36 s: under a quarter
    ([[0.0, 0.0, 0.0]] * 10, 10.0, None),  # nothing sent at all: the verdict says so
])
def test_a_storm_that_sent_nothing_for_its_first_seconds_says_its_numbers_are_a_burst(
        series: list[list[float]], duration_s: float, note: str | None) -> None:
    from hookproof.commands.storm import late_start_note
    from hookproof.reports.model import CheckView, RunReport, ScenarioReport

    check = CheckView("ack_latency", "valid", (), {"sent": 1282, "throughput": {"bucket_s": 1.0, "series": series}})
    scenario = ScenarioReport("storm", "Storm", "", "pass", (), checks=(check,), duration_s=duration_s)
    report = RunReport("0", "http://127.0.0.1:1/w", "github", "test", 1, 0.0, 1.0, "pass", (scenario,), ())
    assert late_start_note(report) == note


def test_the_progress_rate_is_the_mean_until_locust_has_a_current_one() -> None:
    """A new user's first storm heartbeat read "194 sent, 0.0/s": Locust's current rate is over
    its last seconds and still empty then. The progress file's rate falls back to the mean since
    the start (run where Locust may be imported: a process of its own)."""
    code = ("from types import SimpleNamespace as S\n"
            "from hookproof.loadtests.storm_master import rate_now\n"
            "print(rate_now(S(current_rps=0.0, num_requests=194), 2.0), rate_now(S(current_rps=88.04, "
            "num_requests=900), 10.0), rate_now(S(current_rps=0.0, num_requests=0), 1.0), rate_now(None, 1.0))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["97.0", "88.0", "0.0", "0.0"], done.stderr
