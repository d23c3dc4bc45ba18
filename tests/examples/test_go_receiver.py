"""The Go `net/http` receiver (examples/receivers/go) against hookproof, over real HTTP.

`stripe_receiver` is Go's standard library only: Stripe's signature checked by hand as
Stripe's docs describe it (HMAC-SHA256 over ``t.payload``, 300 s tolerance, constant-time
compare), the event id claimed inside the effect's transaction (one mutex over claim,
effect and state), effects served to hookproof's ``http`` observer. Its twin,
built with ``-tags nodedupe``, never asks whether an event was processed. `certify` passes
the correct one on the whole catalog with zero findings and fails the twin with
`duplicated` for its own business keys (the detection matrix's ``go_receivers``).

The binaries are built here, into a temporary folder (GOPATH there too, no module download:
GOPROXY=off); they are never committed. Go's build cache (content-addressed, safe to share
between processes) lives with the test venvs (`tests.venvs.cache_root`), so a rerun on the
same machine does not compile net/http again (~35 s on a loaded 2-core machine); a fresh
machine builds everything, as before. Needs Debian's golang-go: skipped
locally without it, a failure under CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import httpx
import pytest

from hookproof.certify import certify
from hookproof.config import Config, ObserverConfig, RunConfig, SettleConfig, StartConfig, TargetConfig
from hookproof.demo import DEMO_ACCOUNT
from hookproof.reports.model import RunReport
from hookproof.send import SendOptions, send, send_world_seed
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import emit_events, new_world
from tests.support import free_port, require_service, run_side_by_side, selected_params
from tests.venvs import cache_root

GO_DIR = Path(__file__).resolve().parents[2] / "examples" / "receivers" / "go"
SECRET = "whsec_go_receiver_0123456789abcdef"
SEED = 4242
#: receiver -> scenario id -> the checks with findings, from the detection matrix's ``go_receivers``.
_ROWS = json.loads((Path(__file__).parents[1] / "scenarios" / "detection_matrix.json").read_text())["go_receivers"]
MATRIX: dict[str, dict[str, list[str]]] = {name: row["failures"] for name, row in _ROWS.items() if name != "_about"}
TAGS = {"stripe_receiver": "", "stripe_receiver_no_dedupe": "nodedupe"}


@pytest.fixture(scope="module")
def binaries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each receiver built with `go build` into a temporary folder."""
    go = shutil.which("go")
    if go is None:
        require_service("go", "install Debian's golang-go (.ci/run does)")
    out = tmp_path_factory.mktemp("go")
    env = {**os.environ, "GOCACHE": str(cache_root() / "go-build"), "GOPATH": str(out / "gopath"), "GOPROXY": "off",
           "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
    built = {}
    for name, tags in TAGS.items():
        binary = out / name
        done = subprocess.run([str(go), "build", *(["-tags", tags] if tags else []), "-o", str(binary), "."],
                              cwd=GO_DIR, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        built[name] = binary
    return built


def config(binary: Path, out: Path) -> Config:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    return Config(
        target=TargetConfig(
            url=f"{base}/webhooks", profile="stripe", secret=SECRET, account=DEMO_ACCOUNT, connect=True,
            start=StartConfig(command=str(binary), health_url=f"{base}/healthz", startup_timeout_s=30,
                              env={"PORT": str(port), "WEBHOOK_SECRET": "{secret}", "WEBHOOK_ACCOUNT": DEMO_ACCOUNT})),
        observer=ObserverConfig(kind="http", url=f"{base}/hookproof/observe"),
        run=RunConfig(seed=SEED), settle=SettleConfig(window_s=0.15))


def test_matrix_names_the_go_receivers() -> None:
    assert set(MATRIX) == set(TAGS)
    assert {row["profile"] for name, row in _ROWS.items() if name != "_about"} == {"stripe"}
    assert MATRIX["stripe_receiver"] == {}
    twin = MATRIX["stripe_receiver_no_dedupe"]
    assert twin and all("duplicated" in checks for checks in twin.values())


@pytest.fixture
def running(binaries: dict[str, Path]) -> Iterator[tuple[str, str]]:
    port = free_port()
    env = {"PATH": "/usr/bin:/bin", "PORT": str(port), "WEBHOOK_SECRET": SECRET}
    proc = subprocess.Popen([str(binaries["stripe_receiver"])], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == f"listening on http://127.0.0.1:{port}/webhooks", line
    try:
        yield f"http://127.0.0.1:{port}/webhooks", f"http://127.0.0.1:{port}/hookproof/observe"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_send_is_accepted_once_and_a_forgery_refused(running: tuple[str, str]) -> None:
    url, observe = running
    profile = get_profile("stripe")
    attempts = send(SendOptions(profile=profile, url=url, event="payment_intent.succeeded", seed=5, copies=2),
                    [SECRET])
    assert [(a.status, a.completion.value) for a in attempts] == [(200, "ok"), (200, "ok")]
    (event,) = emit_events(new_world(profile.world, send_world_seed(5, "payment_intent.succeeded")),
                           "payment_intent.succeeded")  # the world `send --seed 5` tells
    forged = send(SendOptions(profile=profile, url=url, event="invoice.paid", seed=6), ["whsec_not_the_secret"])
    # Stripe retries a 400 on its schedule: every attempt is refused
    assert [(a.status, a.completion.value) for a in forged] == [(400, "fail")] * (1 + len(profile.retry_schedule_s))
    assert httpx.get(observe, timeout=5).json() == {
        "effects": [{"business_key": event.business_key, "amount": event.amount}], "states": []}


#: Seconds the first matrix case may take: its fixture certifies every selected receiver.
MATRIX_TIMEOUT_S = 900


@pytest.fixture(scope="module")
def matrix_reports(binaries: dict[str, Path], request: pytest.FixtureRequest,
                   tmp_path_factory: pytest.TempPathFactory) -> dict[str, Future[RunReport]]:
    """Each selected receiver certified over the whole catalog, side by side (each run mostly
    waits on its receiver process and its settle reads): receiver -> its report (or its error)."""
    out = tmp_path_factory.mktemp("go-matrix")

    def one(name: str) -> RunReport:
        (out / name).mkdir()
        return certify(config(binaries[name], out / name), out_dir=out / name / "report").report

    return run_side_by_side(selected_params(request, "name"), one, workers=len(TAGS))


@pytest.mark.slow
@pytest.mark.timeout(MATRIX_TIMEOUT_S)
@pytest.mark.parametrize("name", sorted(TAGS))
def test_go_receiver_fails_exactly_what_its_fault_predicts(matrix_reports: dict[str, Future[RunReport]],
                                                          name: str) -> None:
    report = matrix_reports[name].result()
    assert not report.partial
    assert not [s.id for s in report.scenarios if s.verdict == "error"], [s.reason for s in report.scenarios]
    failed = {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios
              if s.verdict not in ("pass", "not_applicable")}
    expected = dict(MATRIX[name])
    timeout = next(s for s in report.scenarios if s.id == "sender-timeout")
    # The Go receivers answer within the scenario's 1 ms sender timeout on a quiet machine;
    # the timeout fault is certain all the same: the first attempt's answer is lost.
    assert [a.outcome for a in timeout.attempts if a.attempt == 1] == ["timeout"] * len(
        {a.event_id for a in timeout.attempts})
    assert failed == expected
    ran = {s.id for s in report.scenarios if s.verdict != "not_applicable"}
    assert {"duplicate-sequential", "duplicate-concurrent", "reorder", "stale-after-newer", "forged-signature",
            "stale-timestamp", "secret-rotation", "test-mode-to-live", "unknown-event-type"} <= ran
    assert "foreign-account" not in ran  # Stripe never sends an endpoint an event of an account it does not serve
