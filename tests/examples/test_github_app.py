"""The Node GitHub App receivers (examples/receivers/node) against hookproof, over real HTTP.

`github_app.js` is written from GitHub's docs and @octokit/webhooks (`verifyAndReceive`,
dedupe by X-GitHub-Delivery in the effect's SQLite transaction); `github_app_no_dedupe.js`,
`github_app_blind_overwrite.js`, `github_app_by_number.js` and `github_app_ack_first.js` (under chaos) are its
broken twins. `hookproof send --profile github`
reaches the correct one and is accepted and handled; `certify` passes it on the whole catalog and fails the twin with
`duplicated` for the App's own business keys, the blind overwrite with `stale`, the App ordering the payload's
state by `updated_at` with `stale` and `regressed` (an issue labeled, commented on and closed in one second, the
comment delivered last), and the claim by event, action and number with `stale` (an issue closed again) and
`lost` (a second comment) (the GitHub detection matrix, `MATRIX`). The correct App stores the issue or pull
request the REST API serves (the provider API), fetched under a per-object lock.
Needs node and ``npm ci`` in examples/receivers/node (CI runs it): skipped locally
without them, a failure under CI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import httpx
import pytest

from hookproof.certify import certify
from hookproof.config import Config, ObserverConfig, RunConfig, SettleConfig, StartConfig, TargetConfig
from hookproof.reports.model import RunReport
from hookproof.send import SendOptions, latest_per_object, send, send_world_seed
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState, run_server
from hookproof.simulator.server.state import DEFAULT_API_KEY
from hookproof.simulator.world import GITHUB_CHECK_TYPES, GITHUB_EVENT_TYPES, GitHubWorld, emit_events
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


def start(node: str, script: str, db: Path, api_base: str) -> tuple[subprocess.Popen[str], str]:
    """Start `script` on a free port, reading issues and pull requests from the provider API at
    `api_base`; returns the process and its webhook URL once it listens."""
    port = free_port()
    env = {**os.environ, "PORT": str(port), "DATABASE": str(db), "WEBHOOK_SECRET": SECRET,
           "HOOKPROOF_API_BASE": api_base, "HOOKPROOF_API_KEY": DEFAULT_API_KEY}
    proc = subprocess.Popen([node, script], cwd=NODE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the readiness line, printed once the socket listens
    if "listening on" not in line:
        proc.kill()
        raise AssertionError(f"{script} did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc, f"http://127.0.0.1:{port}/webhooks"


#: The seeds of the worlds the sends below come from: issues.opened of seed 5, then each
#: event type's story from seed 100 + its index (`test_send_accepts_every_event_type`).
SENT = [(5, "issues.opened"), *((100 + i, t) for i, t in enumerate(GITHUB_EVENT_TYPES))]


@pytest.fixture
def app(node: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """github_app.js, its REST API the provider API serving the worlds the sends come from (the
    same seed names the same repository and numbers, so the issue it fetches is the one sent)."""
    worlds = []
    for seed, event_type in SENT:
        world = GitHubWorld(send_world_seed(seed, event_type))  # the world `send --seed` tells
        emit_events(world, event_type)
        worlds.append(world)
    db = tmp_path / "github_app.sqlite"
    with run_server(ServerState(worlds)) as api:
        proc, url = start(node, "github_app.js", db, api.url)
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
    event = emit_events(GitHubWorld(send_world_seed(5, "issues.opened")), "issues.opened")[0]  # send's world
    assert {a["event_id"] for a in attempts} == {event.id}
    assert rows(db, "SELECT business_key, delivery_id FROM effects") == [(event.business_key, event.id)]
    assert rows(db, "SELECT object_id, status FROM states") == [(event.object_id, "open")]


def test_send_accepts_every_event_type(app: tuple[str, Path]) -> None:
    url, db = app
    profile = get_profile("github")
    expected: list[str] = []
    for i, event_type in enumerate(GITHUB_EVENT_TYPES + GITHUB_CHECK_TYPES):  # the checks' too: a CI App's
        attempts = send(SendOptions(profile=profile, url=url, event=event_type, seed=100 + i), [SECRET])
        # the world `send --seed` tells (a push's CI: two runs)
        made = latest_per_object(emit_events(GitHubWorld(send_world_seed(100 + i, event_type)), event_type))
        assert [(a.event_type, a.status) for a in attempts] == [(event_type, 200)] * len(made)
        expected += [e.business_key for e in made if e.business_key]
    def untimed(key: str) -> str:  # a suite re-run's key ends in its updated_at, the send's own clock
        return re.sub(r":\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", ":<time>", key)

    assert sorted(untimed(k) for (k,) in rows(db, "SELECT business_key FROM effects")) == sorted(
        untimed(k) for k in expected)


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


def _chaos_config(script: str, tmp_path: Path) -> Config:
    """`github_app`'s config with `script` run under [target.process] (chaos can kill it)."""
    from hookproof.config import ChaosConfig, ProcessTargetConfig

    port = free_port()
    db = tmp_path / "app.sqlite"
    cfg = config("github_app", tmp_path)
    process = ProcessTargetConfig(command=f"env PORT={{port}} node {script}", cwd=str(NODE_DIR),
                                  health_path="/healthz", env={"DATABASE": str(db), "WEBHOOK_SECRET": SECRET})
    return cfg.model_copy(update={
        "target": cfg.target.model_copy(update={"url": f"http://127.0.0.1:{port}/webhooks", "start": None,
                                                "process": process}),
        "observer": cfg.observer.model_copy(update={"url": f"sqlite:///{db}"}), "chaos": ChaosConfig()})


@pytest.mark.slow
def test_an_app_acknowledging_before_it_applies_loses_its_work_when_killed_after_the_answer(
        node: str, tmp_path: Path) -> None:
    """`github_app_ack_first.js` answers 200 and applies 200 ms later from memory. Killed right
    after its last 2xx, the work is gone, and GitHub (or a team redelivering its failed
    deliveries by hand) never sends an acknowledged delivery again: `lost`, and "Persists before
    acknowledging" fails. It passed before: the hand redelivery sent every event again,
    acknowledged ones too, and the restarted twin applied those copies."""
    report = certify(_chaos_config("github_app_ack_first.js", tmp_path), scenarios=["crash-after-ack"],
                     out_dir=tmp_path / "out", chaos=True).report
    (scenario,) = report.scenarios
    assert scenario.verdict == "fail", scenario
    assert {f.check_id for f in scenario.findings} == {"lost"}
    sent = Counter(a.event_id for a in scenario.attempts)
    assert sent and set(sent.values()) == {1}, sent  # every event acknowledged once, none sent again
    assert {i.id: i.verdict for i in report.checklist}["persists-before-ack"] == "fail"


def test_the_app_stores_the_issue_the_rest_api_serves_not_a_same_second_payload(node: str, tmp_path: Path) -> None:
    """An issue labeled, commented on and closed in one second (one ``updated_at``), the comment
    delivered after the close: github_app.js fetches the issue and keeps ``closed``; its twin
    ordering the payloads by ``updated_at`` (>=) takes the late comment's ``open``."""
    world = GitHubWorld(11)
    opened, labeled, commented, closed = world.same_second_story()
    assert labeled.extra["payload"]["issue"]["updated_at"] == commented.extra["payload"]["issue"]["updated_at"] \
        == closed.extra["payload"]["issue"]["updated_at"]
    profile = get_profile("github")
    stored = {}
    with run_server(ServerState([world])) as api:
        for script in ("github_app.js", "github_app_updated_at.js"):
            db = tmp_path / f"{script}.sqlite"
            proc, url = start(node, script, db, api.url)
            try:
                for event in (opened, labeled, closed, commented):
                    request = profile.request(profile.envelope(event), [SECRET], 0)
                    answer = httpx.post(url, content=request.body, headers=dict(request.headers), timeout=10)
                    assert answer.status_code == 200, answer.text
            finally:
                proc.terminate()
                proc.wait(timeout=10)
            stored[script] = rows(db, "SELECT object_id, status FROM states")
    assert stored == {"github_app.js": [(closed.object_id, "closed")],
                      "github_app_updated_at.js": [(closed.object_id, "open")]}


#: A comment counter per issue, as README's "A count is a counter too" declares one.
COMMENT_COUNTERS = {"issue_comment.created": {"key": "{repository.full_name}#{issue.number}", "amount": 1},
                    "issue_comment.deleted": {"key": "{repository.full_name}#{issue.number}", "amount": 1, "sign": -1}}


def test_a_comment_counter_moves_once_per_comment_and_per_deletion() -> None:
    """A comment created, edited and deleted: up one, nothing, down one, on its issue's key."""
    from hookproof.config_model import CounterConfig
    from hookproof.scenarios.business_keys import counter_truth

    cfg = config("github_app", Path("/nonexistent"))
    mapping = cfg.model_copy(update={"counters": {t: CounterConfig(**c) for t, c in COMMENT_COUNTERS.items()}
                                     }).key_mapping()
    assert mapping is not None
    world = GitHubWorld(3)
    issue = world.open_issue()
    world.comment(issue)
    second = world.comment(issue)
    world.edit_comment(second)
    world.delete_comment(second)
    assert [mapping.counter_of(e) for e in world.events[1:]] == [
        (issue, 1), (issue, 1), None, (issue, -1)]

    class Valid:
        def __init__(self, event_id: str) -> None:
            self.event_id, self.valid, self.delivery_id = event_id, True, f"dlv_{event_id}_0"

    history = [Valid(e.id) for e in world.events for _ in range(2)]  # every event delivered twice
    assert counter_truth(world.events, history, mapping) == {issue: 1}  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "failed"), [
    ("github_app", {}),
    ("github_app_delete_every_delivery", {"duplicate-sequential": ["counter"], "mass-redelivery": ["counter"]}),
])
def test_a_comment_count_is_certified_with_its_deletions(node: str, tmp_path: Path, name: str,
                                                         failed: dict[str, list[str]]) -> None:
    """Each issue's comment count: one up per comment, one down per deleted comment. The App
    counting in the delivery's claim passes; its twin taking a deletion off on every delivery
    counts a redelivered deletion again (`counter`)."""
    from hookproof.config_model import CounterConfig

    cfg = config(name, tmp_path)
    assert cfg.observer is not None
    cfg = cfg.model_copy(update={
        "counters": {t: CounterConfig(**c) for t, c in COMMENT_COUNTERS.items()},
        "observer": cfg.observer.model_copy(update={
            "counter": "SELECT object_id AS key, comments AS amount FROM comment_counts"})})
    report = certify(cfg, scenarios=["duplicate-sequential", "mass-redelivery"], out_dir=tmp_path / "report").report
    got = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios if s.verdict != "pass"}
    assert got == failed
    for scenario in report.scenarios:
        counter = next(c for c in scenario.checks if c.check_id == "counter")
        assert counter.stats.get("counters", 0) >= 1, counter.stats


@pytest.mark.slow
def test_an_app_fetching_after_it_answers_loses_a_failed_fetch_and_passes_fetch_overtaken(
        node: str, tmp_path: Path) -> None:
    """`github_app_ack_first.js` answers at once and handles each delivery 200 ms later, fetching
    the issue under its per-object lock. In `provider-api-transient` an issue's first fetch fails
    after the App answered 200: the delivery shows as successful at GitHub, so a team redelivering
    its failed deliveries by hand never sends it again, and the App's work on it is ``lost`` (the
    issue's ``comment:``, the pull request's ``ci:``) and its state never stored (``stale``, the
    object missing). The scenario used to redeliver every event, answered or not, and the twin
    passed.

    That scenario fell short, so `fetch-overtaken` then settles on the window alone (0.3 s). The
    labeled issue's fetch comes after that delivery was answered, so the provider API's held
    answer (up to `HOLD_MAX_S`) is taken while no delivery is in flight and the close waits behind
    it on the lock: the scenario read the receiver while that answer was still on its way and
    reported the issue ``stale`` (open, not closed), with no note; alone it passed. Its reads now
    wait for the held answer to go out (`simulator.server.holds.after_phases`)."""
    cfg = config("github_app_ack_first", tmp_path).model_copy(update={"settle": SettleConfig()})
    scenarios = ["provider-api-transient", "fetch-overtaken"]
    report = certify(cfg, scenarios=scenarios, out_dir=tmp_path / "report", overlap=1).report
    got = {s.id: (s.verdict, sorted({f.check_id for f in s.findings})) for s in report.scenarios}
    assert got == {"provider-api-transient": ("fail", ["lost", "stale"]), "fetch-overtaken": ("pass", [])}, got
    transient = {s.id: s for s in report.scenarios}["provider-api-transient"]
    lost = {str(f.key).split(":")[0] for f in transient.findings if f.check_id == "lost"}
    assert lost == {"comment", "ci"}, transient.findings
