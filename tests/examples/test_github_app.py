"""The Node GitHub App receivers (examples/receivers/node) against hookproof, over real HTTP.

`github_app.js` is written from GitHub's docs and @octokit/webhooks (`verifyAndReceive`,
dedupe by X-GitHub-Delivery in the effect's SQLite transaction); `github_app_no_dedupe.js`,
`github_app_blind_overwrite.js` and `github_app_by_number.js` are its broken twins. `hookproof send --profile github`
reaches the correct one and is accepted and handled; `certify` passes it on the whole catalog and fails the twin with
`duplicated` for the App's own business keys, the blind overwrite with `stale`, and the claim by event, action and
number with `stale` (an issue closed again) and `lost` (a second comment) (the GitHub detection matrix, `MATRIX`).
Needs node and ``npm ci`` in examples/receivers/node (CI runs it): skipped locally
without them, a failure under CI.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest

from hookproof.certify import certify
from hookproof.config import Config, ObserverConfig, RunConfig, SettleConfig, StartConfig, TargetConfig
from hookproof.reports.model import RunReport
from hookproof.send import SendOptions, send
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import GITHUB_EVENT_TYPES, GitHubWorld, emit_events
from tests.support import free_port, require_service, run_side_by_side, selected_params

NODE_DIR = Path(__file__).resolve().parents[2] / "examples" / "receivers" / "node"
SECRET = "gh_webhook_secret_0123456789abcdef"
SEED = 4242

#: GitHub's detection matrix: receiver -> scenario id -> the checks with findings (full
#: catalog, github profile, seed 4242), from the detection matrix's ``github_receivers``.
#: Scenarios not listed pass or do not apply.
_ROWS = json.loads((Path(__file__).parents[1] / "scenarios" / "detection_matrix.json").read_text())["github_receivers"]
MATRIX: dict[str, dict[str, list[str]]] = {name: row["failures"] for name, row in _ROWS.items() if name != "_about"}


@pytest.fixture(scope="module")
def node() -> str:
    node = shutil.which("node")
    if node is None:
        require_service("node", "node is not installed")
    for package in ("@octokit/webhooks", "better-sqlite3"):
        if not (NODE_DIR / "node_modules" / package).is_dir():
            require_service(package, "run `npm ci` in examples/receivers/node first")
    return node  # type: ignore[return-value]


def start(node: str, script: str, db: Path) -> tuple[subprocess.Popen[str], str]:
    """Start `script` on a free port; returns the process and its webhook URL once it listens."""
    port = free_port()
    env = {**os.environ, "PORT": str(port), "DATABASE": str(db), "WEBHOOK_SECRET": SECRET}
    proc = subprocess.Popen([node, script], cwd=NODE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the readiness line, printed once the socket listens
    if "listening on" not in line:
        proc.kill()
        raise AssertionError(f"{script} did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc, f"http://127.0.0.1:{port}/webhooks"


@pytest.fixture
def app(node: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    db = tmp_path / "github_app.sqlite"
    proc, url = start(node, "github_app.js", db)
    try:
        yield url, db
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def rows(db: Path, query: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute(query))


def test_send_issues_opened_is_accepted_and_handled(app: tuple[str, Path]) -> None:
    url, db = app
    done = subprocess.run(
        [sys.executable, "-m", "hookproof", "send", "--profile", "github", "--event", "issues.opened", "--url", url,
         "--secret", SECRET, "--seed", "5", "--copies", "2", "--json"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    attempts = json.loads(done.stdout)
    assert [(a["event_type"], a["status"], a["completion"]) for a in attempts] == [("issues.opened", 200, "ok")] * 2
    event = emit_events(GitHubWorld(5), "issues.opened")[0]  # the same seed gives the same world
    assert {a["event_id"] for a in attempts} == {event.id}
    assert rows(db, "SELECT business_key, delivery_id FROM effects") == [(event.business_key, event.id)]
    assert rows(db, "SELECT object_id, status FROM states") == [(event.object_id, "open")]


def test_send_accepts_every_event_type(app: tuple[str, Path]) -> None:
    url, db = app
    profile = get_profile("github")
    expected: list[str] = []
    for i, event_type in enumerate(GITHUB_EVENT_TYPES):
        attempts = send(SendOptions(profile=profile, url=url, event=event_type, seed=100 + i), [SECRET])
        assert [(a.event_type, a.status) for a in attempts] == [(event_type, 200)]
        expected += [k for k in [e.business_key for e in emit_events(GitHubWorld(100 + i), event_type)] if k]
    assert sorted(k for (k,) in rows(db, "SELECT business_key FROM effects")) == sorted(expected)


def test_a_forged_delivery_is_refused_and_has_no_effect(app: tuple[str, Path]) -> None:
    url, db = app
    attempts = send(SendOptions(profile=get_profile("github"), url=url, event="issues.opened", seed=3), ["not-the-secret"])
    assert [(a.status, a.completion.value) for a in attempts] == [(400, "fail")]
    assert rows(db, "SELECT COUNT(*) FROM effects") == [(0,)]


def config(name: str, out: Path) -> Config:
    port = free_port()
    db = out / f"{name}.sqlite"
    return Config(
        target=TargetConfig(
            url=f"http://127.0.0.1:{port}/webhooks", profile="github", secret=SECRET,
            start=StartConfig(command=f"node {name}.js", health_url=f"http://127.0.0.1:{port}/healthz",
                              startup_timeout_s=30, cwd=str(NODE_DIR),
                              env={"PORT": str(port), "DATABASE": str(db), "WEBHOOK_SECRET": SECRET})),
        observer=ObserverConfig(kind="sql", url=f"sqlite:///{db}", effects="SELECT business_key FROM effects",
                                states={kind: f"SELECT object_id, status FROM states WHERE kind = '{kind}'"
                                        for kind in ("issue", "pull_request")}),
        run=RunConfig(seed=SEED), settle=SettleConfig(window_s=0.15))


def own_duplicated_keys(report: RunReport, profile: str) -> set[str]:
    """The keys of `report`'s `duplicated` findings; each must be one of `profile`'s own
    business-key kinds (``comment:``, ``fulfil:``, ``license:`` … of that provider's world)."""
    from hookproof.commands.events import example_keys

    kinds = {key.split(":")[0] for keys in example_keys(profile).values() for key in keys}
    found = {str(f.key) for s in report.scenarios for f in s.findings if f.check_id == "duplicated"}
    assert {key.split(":")[0] for key in found} <= kinds, (profile, sorted(found), sorted(kinds))
    return found

#: Seconds the first matrix case may take: its fixture certifies every selected receiver.
MATRIX_TIMEOUT_S = 900


@pytest.fixture(scope="module")
def matrix_reports(node: str, request: pytest.FixtureRequest,
                   tmp_path_factory: pytest.TempPathFactory) -> dict[str, Future[RunReport]]:
    """Each selected receiver certified over the whole catalog, side by side (each run mostly
    waits on its receiver process and its settle reads): receiver -> its report (or its error)."""
    out = tmp_path_factory.mktemp("github-matrix")

    def one(name: str) -> RunReport:
        (out / name).mkdir()
        return certify(config(name, out / name), out_dir=out / name / "report").report

    return run_side_by_side(selected_params(request, "name"), one, workers=len(MATRIX))


@pytest.mark.slow
@pytest.mark.timeout(MATRIX_TIMEOUT_S)
@pytest.mark.parametrize("name", sorted(MATRIX))
def test_github_receiver_fails_exactly_what_its_fault_predicts(matrix_reports: dict[str, Future[RunReport]],
                                                               name: str) -> None:
    report = matrix_reports[name].result()
    assert not report.partial
    assert not [s.id for s in report.scenarios if s.verdict == "error"], [s.reason for s in report.scenarios]
    failed = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios
              if s.verdict not in ("pass", "not_applicable")}
    assert failed == MATRIX[name]
    duplicated = own_duplicated_keys(report, "github")
    assert bool(duplicated) == any("duplicated" in checks for checks in MATRIX[name].values())
    ran = {s.id for s in report.scenarios if s.verdict != "not_applicable"}
    assert {"duplicate-sequential", "reorder", "stale-after-newer", "distinct-events-same-object",
            "unknown-event-type", "oversized-payload", "forged-signature"} <= ran


@pytest.mark.slow
def test_a_github_app_serving_every_installation_is_not_held_to_foreign_account(node: str, tmp_path: Path) -> None:
    """GitHub sends an app's webhook every installation's events, under the app's one secret:
    the app written from GitHub's docs applies them all, and `target.account` (an installation
    id) does not make another installation's delivery foreign."""
    cfg = config("github_app", tmp_path)
    cfg = cfg.model_copy(update={"target": cfg.target.model_copy(update={"account": "31337"})})
    report = certify(cfg, scenarios=["foreign-account", "duplicate-sequential"], out_dir=tmp_path / "out").report
    verdicts = {s.id: (s.verdict, sorted({f.check_id for f in s.findings})) for s in report.scenarios}
    assert verdicts == {"foreign-account": ("not_applicable", []), "duplicate-sequential": ("pass", [])}, verdicts
    reason = next(s.reason for s in report.scenarios if s.id == "foreign-account")
    assert reason == get_profile("github").foreign_account_valid


@pytest.mark.parametrize(("name", "expected"), [
    ("github_app", ("pass", [])),
    ("github_app_body_limit", ("fail", [
        ("lost", "finding"),
        ("valid_not_rejected", "finding:1 valid push event(s) of over 3 MiB refused 1 time(s) with 400; the receiver "
                               "answered \"payload too large\"; " + str(get_profile("github").size_cap))]))])
def test_a_push_of_several_megabytes_is_applied_and_refusing_it_is_a_finding(
        node: str, tmp_path: Path, name: str, expected: tuple[str, list[tuple[str, str]]]) -> None:
    """oversized-payload sends a push of some 1,900 commits (over 3 MiB, under GitHub's 25 MB cap): the App
    written from GitHub's docs (a 25 MB limit) applies it; its twin refusing bodies over 2.5 MB with 400
    (Django's default DATA_UPLOAD_MAX_MEMORY_SIZE) loses it for good, GitHub never retrying."""
    report = certify(config(name, tmp_path), scenarios=["oversized-payload"], out_dir=tmp_path / "out").report
    (scenario,) = report.scenarios
    found = sorted((f.check_id, f.severity + (":" + f.message if f.check_id == "valid_not_rejected" else ""))
                   for f in scenario.findings)
    assert (scenario.verdict, found) == expected, [f.message for f in scenario.findings]


@pytest.mark.slow
def test_a_github_app_under_chaos_is_redelivered_by_hand_and_passes(node: str, tmp_path: Path) -> None:
    """GitHub never retries by itself: an event whose only attempt a kill, a pause or a cut
    answer cut off is redelivered by hand once the App is back, as its team would, and the App
    written from GitHub's docs (one transaction per delivery) passes every chaos scenario that
    applies. Before, `kill-during-processing` found `lost` on events never acknowledged."""
    from hookproof.config import ChaosConfig, ProcessTargetConfig

    port = free_port()
    db = tmp_path / "app.sqlite"
    cfg = config("github_app", tmp_path)
    process = ProcessTargetConfig(command="env PORT={port} node github_app.js", cwd=str(NODE_DIR),
                                  health_path="/healthz", env={"DATABASE": str(db), "WEBHOOK_SECRET": SECRET})
    cfg = cfg.model_copy(update={
        "target": cfg.target.model_copy(update={"url": f"http://127.0.0.1:{port}/webhooks", "start": None,
                                                "process": process}),
        "observer": cfg.observer.model_copy(update={"url": f"sqlite:///{db}"}),
        "chaos": ChaosConfig(kill_window_s=0.0)})  # each kill as its trial's first delivery goes out
    scenarios = ["kill-during-processing", "pause-past-timeout", "network-drop-response", "crash-after-ack"]
    report = certify(cfg, scenarios=scenarios, out_dir=tmp_path / "out", chaos=True).report
    verdicts = {s.id: (s.verdict, [f.message for f in s.findings]) for s in report.scenarios}
    assert verdicts == {s: ("pass", []) for s in scenarios}, verdicts
    sent = {s.id: s for s in report.scenarios}["kill-during-processing"]
    assert sent.reason is None
