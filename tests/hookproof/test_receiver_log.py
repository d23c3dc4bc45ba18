"""The receiver's own log is kept with the reports, secrets masked, size-capped, and each 5xx
finding quotes what the receiver wrote during its scenario.

A real `certify` (a subprocess) starts `examples.receivers.unknown_type_500` through
``[target.process]``: it answers 500 with a Python traceback on its stderr to event types
it has no handler for. The start command first prints the signing secret and the provider
API key (literal and base64), as a careless receiver's start-up logging would, then (a
Python debug line) the key bytes a Standard Webhooks verifier decodes the secret to, in
every form a program prints bytes (`PRINT_KEY`).
"""

from __future__ import annotations

import base64
import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from hookproof.chaos.process import KEEP_BYTES, ReceiverLog, mask_secrets
from hookproof.receiver_log import ScenarioMarks, link_receiver_log
from hookproof.reports import load_json, render_json, render_markdown
from hookproof.reports.html import render_html
from hookproof.reports.model import LogExcerpt
from tests.hostile.harness import ROOT, CliRun, run_hookproof
from tests.hostile.test_secrets import leaks
from tests.reports.sample import sample_report

SECRET = "whsec_LOGCANARY0123456789abcdef0123456789"
API_KEY = "sk_test_LOGCANARY_apikey_0123456789"
#: A receiver's debug line: the secret's key bytes (decoded as the official Standard
#: Webhooks library does) printed as hex, HEX, base64 (standard, URL-safe, unpadded), bytes
#: and bytearray reprs, a byte list, Node's Buffer; and the secret's own UTF-8 bytes in hex.
PRINT_KEY = """\
import base64, os
from standardwebhooks.webhooks import Webhook
secret = os.environ["HOOKPROOF_SECRET"]
raw = Webhook(secret)._whsecret
print("decoded key:", raw.hex(), raw.hex().upper(), base64.b64encode(raw).decode(),
      base64.urlsafe_b64encode(raw).decode().rstrip("="), repr(raw), repr(bytearray(raw)), list(raw),
      "<Buffer " + raw.hex(" ") + ">", secret.encode().hex(), flush=True)
"""
#: What the kept log must show of that line.
PRINTED_MASKED = "decoded key: *** *** *** *** b'***' bytearray(b'***') [***] <Buffer ***> ***"
#: The line of Python's traceback a KeyError on a missing handler ends with.
#: The types `examples.receivers.unknown_type_500` has a handler for.
TRACEBACK_LINE = "KeyError: 'payment_method.automatically_updated'"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliRun, Path]:
    root = tmp_path_factory.mktemp("receiver-log")
    db = root / "receiver.sqlite"
    b64 = base64.b64encode(SECRET.encode()).decode()
    (root / "print_key.py").write_text(PRINT_KEY, encoding="utf-8")
    start = (f"bash -c 'echo starting with secret $HOOKPROOF_SECRET {b64} and key $HOOKPROOF_API_KEY; "
             f"{sys.executable} {root / 'print_key.py'}; "
             f"exec {sys.executable} -m examples.receivers.unknown_type_500 --port {{port}} --db sqlite:///{db}'")
    config = root / "hookproof.toml"
    config.write_text(f"""
[target]
url = "http://127.0.0.1:{{port}}/webhooks"
profile = "stripe"
secret = "env:LOG_CANARY_SECRET"
# an endpoint enabled for every type (no enabled_events): duplicate-concurrent sends only
# effectful events, which it handles; unknown-event-type sends one it has no handler for

[target.process]
cwd = "{ROOT}"
command = "{start}"
health_path = "/healthz"

[provider]
api_key = "{API_KEY}"

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key, amount FROM effects"
state = "SELECT object_id, status, version FROM subscription_states"

[settle]
window_s = 0.2

[run]
seed = 5
scenarios = ["duplicate-concurrent", "unknown-event-type"]
""", encoding="utf-8")
    done = run_hookproof("certify", "--config", str(config), "--out", str(root / "out"), timeout_s=240,
                         env={"LOG_CANARY_SECRET": SECRET})
    return done, root / "out"


def _leaks(data: bytes) -> list[bytes]:
    return leaks(data, SECRET) + leaks(data, API_KEY)


@pytest.mark.slow
def test_the_log_is_kept_and_each_5xx_finding_quotes_its_traceback(run: tuple[CliRun, Path]) -> None:
    done, out = run
    assert done.returncode == 1, done
    kept = (out / "receiver.log").read_text(encoding="utf-8")
    assert TRACEBACK_LINE in kept and "Traceback (most recent call last)" in kept
    assert "starting with secret *** *** and key ***" in kept  # masked where it was printed
    assert PRINTED_MASKED in kept  # the decoded key bytes too, in every form
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["receiver_log"] == "receiver.log"
    by_id = {s["id"]: s for s in report["scenarios"]}
    assert [s for s in by_id] == ["duplicate-concurrent", "unknown-event-type"]
    assert by_id["duplicate-concurrent"]["verdict"] == "pass"
    server_errors = [f for c in by_id["unknown-event-type"]["checks"] if c["check_id"] == "no_server_error"
                     for f in c["findings"]]
    assert len(server_errors) == 1
    (finding,) = server_errors
    assert finding["log"]["path"] == "receiver.log"
    tail = finding["log"]["tail"]
    assert TRACEBACK_LINE in tail and len(tail.splitlines()) == 40
    assert "starting with secret" not in tail  # that was the start, before this scenario
    # every other finding carries no log
    assert all(f["log"] is None for s in report["scenarios"] for c in s["checks"] for f in c["findings"]
               if c["check_id"] != "no_server_error")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "([receiver log](receiver.log), tail below)" in summary
    assert "### Receiver log" in summary and TRACEBACK_LINE in summary.split("### Receiver log", 1)[1]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert '<a href="receiver.log">receiver.log</a>' in html and "KeyError: &#39;payment_method.automatically_updated&#39;" in html


@pytest.mark.slow
def test_a_re_render_in_place_keeps_the_log_and_every_quoted_tail(run: tuple[CliRun, Path], tmp_path: Path) -> None:
    """`hookproof report --history RUN` without --out rewrites the run's own reports: they
    must hold exactly what the run wrote (the log named, each 5xx finding's tail), not the
    report as it stood before the log was kept."""
    _, out = run
    copy = tmp_path / "run"
    copy.mkdir()
    for path in out.iterdir():
        if path.is_file():
            (copy / path.name).write_bytes(path.read_bytes())
    before = {name: (copy / name).read_bytes() for name in ("report.json", "summary.md", "junit.xml")}
    assert b'"tail": "' in before["report.json"]
    done = run_hookproof("report", "--history", str(copy), timeout_s=120)
    assert done.returncode == 0, done
    assert json.loads((copy / "report.json").read_bytes()) == json.loads(before["report.json"])
    assert (copy / "summary.md").read_bytes() == before["summary.md"]
    assert (copy / "junit.xml").read_bytes() == before["junit.xml"]
    assert not list(copy.glob("history.sqlite-*"))  # reading left no -wal or -shm behind


@pytest.mark.slow
def test_no_file_of_the_run_holds_the_secret_or_the_api_key(run: tuple[CliRun, Path]) -> None:
    done, out = run
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert "receiver.log" in {p.name for p in files}
    for path in files:
        assert not _leaks(path.read_bytes()), f"{path.name} holds a secret"
    assert not _leaks(done.stdout.encode()) and not _leaks(done.stderr.encode()), done


def test_the_kept_log_is_capped_to_its_newest_bytes(tmp_path: Path) -> None:
    log = ReceiverLog(masked=[SECRET])
    with log.open() as f:
        for i in range(KEEP_BYTES // 50 + 1000):
            f.write(f"line {i:08d} {SECRET} {'x' * 20}\n".encode())
    assert log.keep(tmp_path / "receiver.log")
    text = (tmp_path / "receiver.log").read_text(encoding="utf-8")
    first, second, *_ = text.splitlines()
    assert first.startswith("[hookproof: the first ") and first.endswith(" byte(s) of the receiver's output are not kept]")
    assert second.startswith("line ") and second.endswith(" *** " + "x" * 20)
    assert text.splitlines()[-1] == f"line {KEEP_BYTES // 50 + 999:08d} *** {'x' * 20}"
    assert len(text.encode()) <= KEEP_BYTES + 200 and not _leaks(text.encode())
    log.close()
    assert not log.path.exists()


def test_an_empty_log_is_not_kept(tmp_path: Path) -> None:
    log = ReceiverLog()
    assert not log.keep(tmp_path / "receiver.log") and not (tmp_path / "receiver.log").exists()
    log.close()


def test_scenario_tails_split_the_log_at_each_scenario(tmp_path: Path) -> None:
    log = ReceiverLog(masked=[SECRET])
    marks = ScenarioMarks(log)
    with log.open() as f:
        marks.mark("a")
        f.write(b"a1\na2\n")
        marks.mark("b")
        marks.mark("c")
        f.write(f"c1 {SECRET}\n".encode())
    assert marks.tails() == {"a": "a1\na2", "b": "", "c": "c1 ***"}
    log.close()


def test_masking_covers_every_form_the_secret_tests_look_for() -> None:
    from tests.hostile.test_secrets import forms

    raw = SECRET.removeprefix("whsec_").encode()
    text = " ".join([SECRET, raw.decode(), raw.hex(), raw.hex().upper(), base64.b64encode(raw).decode(),
                     base64.urlsafe_b64encode(SECRET.encode()).decode().rstrip("="),
                     *(f.decode() for f in forms(SECRET))])
    masked = mask_secrets(text, [SECRET])
    assert not leaks(masked.encode(), SECRET) and set(masked.split()) == {"***"}


def test_reports_render_a_linked_finding() -> None:
    """The renderers read the log excerpt back from report.json, and a receiver's backticks
    cannot close the Markdown block nor its markup reach the HTML."""
    report = sample_report()
    failing = next(s for s in report.scenarios if s.findings)
    as_5xx = replace(failing, checks=tuple(replace(c, check_id="no_server_error") if c.findings else c
                                           for c in failing.checks))
    report = replace(report, scenarios=tuple(as_5xx if s is failing else s for s in report.scenarios))
    linked = link_receiver_log(report, {failing.id: "```\n<b>boom</b>"})
    again = load_json(render_json(linked))
    assert again == linked and again.receiver_log == "receiver.log"
    assert {f.log for f in again.scenario(failing.id).findings} == {LogExcerpt("receiver.log", "```\n<b>boom</b>")}
    assert "````text\n```\n<b>boom</b>\n````" in render_markdown(again)
    html = render_html(again)
    assert "&lt;b&gt;boom&lt;/b&gt;" in html and "<b>boom</b>" not in html


# ---- explore and storm keep it the same way ---------------------------------------------

def _config(root: Path, section: str, receiver: str) -> Path:
    """`receiver` started by `section` (``target.process`` or ``target.start``), its start
    command printing the signing secret (literal and base64) and the provider API key."""
    from tests.support import free_port

    db = root / "receiver.sqlite"
    b64 = base64.b64encode(SECRET.encode()).decode()
    (root / "print_key.py").write_text(PRINT_KEY, encoding="utf-8")
    port = "{port}" if section == "target.process" else str(free_port())  # a process's replicas get theirs
    start = (f"bash -c 'echo starting with secret $HOOKPROOF_SECRET {b64} and key $HOOKPROOF_API_KEY; "
             f"{sys.executable} {root / 'print_key.py'}; exec {sys.executable} -m examples.receivers.{receiver} --port {port} --db sqlite:///{db}'")
    health = 'health_path = "/healthz"' if section == "target.process" else f'health_url = "http://127.0.0.1:{port}/healthz"'
    config = root / "hookproof.toml"
    config.write_text(f"""
[target]
url = "http://127.0.0.1:{port}/webhooks"
profile = "stripe"
secret = "env:LOG_CANARY_SECRET"

[{section}]
cwd = "{ROOT}"
command = "{start}"
{health}

[provider]
api_key = "{API_KEY}"

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key, amount FROM effects"
state = "SELECT object_id, status, version FROM subscription_states"

[settle]
window_s = 0.2
""", encoding="utf-8")
    return config


def _kept_and_clean(out: Path, done: CliRun) -> str:
    kept = (out / "receiver.log").read_text(encoding="utf-8")
    assert "starting with secret *** *** and key ***" in kept, kept[:2000]
    assert PRINTED_MASKED in kept, kept[:2000]
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        assert not _leaks(path.read_bytes()), f"{path.name} holds a secret"
    assert not _leaks(done.stdout.encode()) and not _leaks(done.stderr.encode()), done
    return kept


@pytest.mark.slow
def test_explore_keeps_the_receiver_s_log_without_its_secrets(tmp_path: Path) -> None:
    """explore starts the receiver through ``[target.process]``: its log is kept as certify's."""
    out = tmp_path / "out"
    done = run_hookproof("explore", "--config", str(_config(tmp_path, "target.process", "unknown_type_500")), "--out", str(out),
                         "--max-examples", "3", "--seed", "5", "--repeats", "1", timeout_s=240,
                         env={"LOG_CANARY_SECRET": SECRET})
    assert done.returncode in (0, 1), done
    _kept_and_clean(out, done)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["receiver_log"] == "receiver.log"


@pytest.mark.slow
def test_a_storm_keeps_the_receiver_s_log_without_its_secrets_and_quotes_it_in_5xx_findings(tmp_path: Path) -> None:
    """A storm starts the receiver through ``[target.start]``; get_or_create_racy answers 500
    to related bursts, and those findings quote the log's tail."""
    out = tmp_path / "out"
    done = run_hookproof("storm", "--config", str(_config(tmp_path, "target.start", "get_or_create_racy")),
                         "--out", str(out), "--duration", "8s", "--users", "2", "--rate", "10", "--related", "0.5",
                         "--duplicates", "0", timeout_s=240, env={"LOG_CANARY_SECRET": SECRET})
    assert done.returncode == 1, done
    kept = _kept_and_clean(out, done)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["receiver_log"] == "receiver.log"
    (storm,) = report["scenarios"]
    server_errors = [f for c in storm["checks"] if c["check_id"] == "no_server_error" for f in c["findings"]]
    assert server_errors and all(f["log"] == {"path": "receiver.log", "tail": f["log"]["tail"]} for f in server_errors)
    assert server_errors[0]["log"]["tail"] and server_errors[0]["log"]["tail"] in kept
