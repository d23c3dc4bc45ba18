"""A storm drains when its load shape ends: every retry owed is sent before the checks.

Mercado Pago's fetching shop (`tests.loadtests.drain_receiver`) refuses or leaves
unanswered some notifications near the storm's end, correctly (the provider retries them)
or not (it refuses a payment's every notification, or acknowledges it without applying):
the correct ones pass, the broken ones still lose their effects. Slow: each is a real
storm (``python -m hookproof storm``, Locust in its own processes).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hookproof.loadtests.collect import Collector
from hookproof.loadtests.spec import StormSpec
from hookproof.loadtests.spool import Spool
from hookproof.simulator.delivery.history import Attempt, HistoryFile, Outcome
from tests.loadtests.storm_batch import StormBatch, storm_batch
from tests.loadtests.test_storm_worlds import MP_SECRET
from tests.support import free_port

ROOT = Path(__file__).resolve().parents[2]
DURATION_S = 6.0
EVERY = 4
#: Only the pattern under test: no duplicates, bursts, waves or held events.
_PLAIN = ("--duplicates", "0", "--related", "0", "--late", "0", "--older-redelivery", "0", "--waves", "0")

Run = tuple[Path, subprocess.CompletedProcess[str]]


def test_the_drain_lasts_every_attempt_s_timeout_and_the_compressed_delays() -> None:
    """Mercado Pago's schedule (15 min, 15 min, ...) compressed by 1e-5, 3 attempts of 22 s, 2 s of grace."""
    spec = StormSpec(target_url="http://127.0.0.1:9/webhooks", profile="mercadopago", sender_timeout_s=22.0)
    assert spec.drain_s() == pytest.approx(3 * 22.0 + 2 * 900 * 1e-5 + 2.0)
    assert StormSpec(target_url="http://127.0.0.1:9/webhooks", max_attempts=1, sender_timeout_s=5.0).drain_s() == 7.0


def test_the_collector_counts_what_the_draining_workers_still_owe(tmp_path: Path) -> None:
    collector = Collector(Spool(tmp_path / "history.sqlite"))
    collector.add("a", {"owed": 3})
    collector.add("b", {"owed": 2})
    assert collector.owed() == 5 and collector.errors == []
    collector.done("a", {"attempts": 0})
    assert collector.owed() == 2  # a closed worker owes nothing


def _config(tmp_path: Path, mode: str, *, delay_s: float = 1.5, from_s: float = 0.0,
            sender_timeout_s: float | None = None) -> Path:
    port, db = free_port(), tmp_path / "shop.sqlite"
    env = {"PORT": str(port), "DATABASE": str(db), "MP_USER_ID": "123456789", "DRAIN_MODE": mode,
           "DRAIN_DELAY_S": str(delay_s), "DRAIN_FROM_S": str(from_s), "DRAIN_EVERY": str(EVERY),
           "DRAIN_PICKED": str(tmp_path / "picked.txt")}
    lines = ["[target]", f'url = "http://127.0.0.1:{port}/webhooks"', 'profile = "mercadopago"',
             f'secret = "{MP_SECRET}"', 'account = "123456789"', "",
             "[target.start]", f'command = "{sys.executable} -m tests.loadtests.drain_receiver"', f'cwd = "{ROOT}"',
             "env = { " + ", ".join(f'{k} = "{v}"' for k, v in env.items()) + " }",
             f'health_url = "http://127.0.0.1:{port}/healthz"', "startup_timeout_s = 60", "",
             "[observer]", 'kind = "sql"', f'url = "sqlite:///{db}"',
             'effects = "SELECT business_key, amount FROM effects"', "",
             "[observer.states]", 'payment = "SELECT object_id, status FROM payments"', "",
             "[run]", "seed = 11", *([f"sender_timeout_s = {sender_timeout_s}"] if sender_timeout_s else []), "",
             "[settle]", "window_s = 0.5", "deadline_s = 30", ""]
    path = tmp_path / "hookproof.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _storm(mode: str, *args: str, **options: Any) -> Callable[[Path], Run]:
    def run(tmp_path: Path) -> Run:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
        result = subprocess.run([sys.executable, "-m", "hookproof", "storm", "--config",
                                 str(_config(tmp_path, mode, **options)), "--out", str(tmp_path / "out"),
                                 "--duration", f"{DURATION_S:g}s", "--users", "2", "--rate", "8", *_PLAIN, *args],
                                cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=300)
        return tmp_path, result
    return run


STORMS: dict[str, Callable[[Path], Run]] = {
    "test_a_correct_receiver_refusing_first_attempts_up_to_the_storm_s_end_passes/slow":
        _storm("slow-refusal", "--api-transient", "0.5", "--workers", "1"),
    "test_a_receiver_leaving_first_attempts_unanswered_at_the_storm_s_end_loses_nothing/hang":
        _storm("hang-first", delay_s=3.0, from_s=DURATION_S - 2.0, sender_timeout_s=2.0),
    "test_a_receiver_refusing_every_attempt_of_a_payment_still_loses_it/refuse":
        _storm("refuse-all", from_s=DURATION_S - 1.0),
    "test_a_receiver_acknowledging_without_applying_still_loses_it/drop": _storm("ack-drop", from_s=DURATION_S - 1.0),
    "test_a_drain_longer_than_a_minute_ends_with_every_worker_s_records/hang":
        _storm("hang-all", "--workers", "1", delay_s=25.0, from_s=DURATION_S - 1.0, sender_timeout_s=21.0),
}


@pytest.fixture(scope="module")
def storms(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StormBatch[Run]]:
    with storm_batch(request, tmp_path_factory, STORMS) as batch:
        yield batch


def _scenario(run: Run) -> dict[str, Any]:
    tmp_path, result = run
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    (scenario,) = report["scenarios"]
    assert result.returncode == (0 if scenario["verdict"] == "pass" else 1), result.stdout + result.stderr
    return dict(scenario)


def _findings(scenario: dict[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """check id -> its findings' (key, message), for the checks that are not valid."""
    return {c["check_id"]: sorted((f["key"], f["message"]) for f in c["findings"] if f["severity"] == "finding")
            for c in scenario["checks"] if c["verdict"] != "valid"}


def _history(run: Run) -> list[Attempt]:
    history = HistoryFile(run[0] / "out" / "history.sqlite")
    try:
        return list(history)
    finally:
        history.close()


def _started_at(run: Run) -> float:
    return float(json.loads((run[0] / "out" / "report.json").read_text(encoding="utf-8"))["started_at"])


def _deliveries(attempts: list[Attempt]) -> dict[str, list[Attempt]]:
    out: dict[str, list[Attempt]] = {}
    for a in attempts:
        out.setdefault(a.delivery_id, []).append(a)
    return {d: sorted(tried, key=lambda a: a.attempt) for d, tried in out.items()}


@pytest.mark.slow
def test_a_correct_receiver_refusing_first_attempts_up_to_the_storm_s_end_passes(
        storms: StormBatch[Run], request: pytest.FixtureRequest) -> None:
    """The shop answers 503 (1.5 s late) to a notification whose payment the provider API does
    not serve yet, so Mercado Pago retries: those refused in the storm's last 1.5 s get their
    retry after the load ends (from a Locust worker, as a distributed storm sends), and the
    storm passes."""
    run = storms.result(f"{request.node.name}/slow")
    assert _findings(_scenario(run)) == {}, run[1].stdout + run[1].stderr
    end = _started_at(run) + DURATION_S
    deliveries = _deliveries(_history(run))
    refused = [tried for tried in deliveries.values() if tried[0].status == 503]
    assert refused and all(tried[-1].outcome is Outcome.ACKED for tried in refused)
    assert all([a.attempt for a in tried] == list(range(1, len(tried) + 1)) for tried in deliveries.values())
    assert any(tried[1].sent_at > end for tried in refused), "no retry was owed when the load ended"


@pytest.mark.slow
def test_a_receiver_leaving_first_attempts_unanswered_at_the_storm_s_end_loses_nothing(
        storms: StormBatch[Run], request: pytest.FixtureRequest) -> None:
    """The shop leaves a payment's first notification unanswered past the sender timeout (2 s)
    in the storm's last 2 s: the provider retries each, so nothing is lost or stale; only the
    timeouts themselves are a latency finding."""
    run = storms.result(f"{request.node.name}/hang")
    deliveries = _deliveries(_history(run))
    hung = [tried for tried in deliveries.values() if tried[0].status is None]
    assert hung and all(len(tried) == 2 and tried[1].outcome is Outcome.ACKED for tried in hung)
    sent = sum(len(tried) for tried in deliveries.values())
    found = _findings(_scenario(run))
    assert found == {"ack_latency": [("*", f"{len(hung)} of {sent} attempts sent whole got no answer within the "
                                           f"sender timeout 2000 ms (besides them: {sent - len(hung)} acknowledged; "
                                           "an attempt answered with an error, or timed out before it was sent "
                                           "whole, is not counted here) at 8 events/s offered, each unanswered attempt "
                                           "retried on top of them on the storm's compressed retry schedule (a "
                                           "receiver slow at any load fails at every --rate; one that fell behind "
                                           "passes at the rate it sustains)")]}, run[1].stdout + run[1].stderr
    assert any(tried[0].sent_at + 2.0 > _started_at(run) + DURATION_S for tried in hung), "none timed out at the end"


def _picked(run: Run) -> set[str]:
    """The payments the receiver refused or dropped (every `EVERY`-th, and those first heard of
    in the storm's last second)."""
    return set((run[0] / "picked.txt").read_text(encoding="utf-8").split())


def _lost_payments(run: Run) -> tuple[set[str], set[str]]:
    """(the keys, the payments) of the picked payments' valid deliveries."""
    chosen = _picked(run)
    attempts = [a for a in _history(run) if a.valid and a.object_id in chosen]
    return {a.business_key for a in attempts if a.business_key}, {a.object_id for a in attempts}


def _last_second(run: Run) -> list[list[Attempt]]:
    """The deliveries about a picked payment whose first attempt went out in the storm's last second."""
    end, chosen = _started_at(run) + DURATION_S, _picked(run)
    return [tried for tried in _deliveries(_history(run)).values()
            if tried[0].object_id in chosen and tried[0].sent_at > end - 1.0]


@pytest.mark.slow
def test_a_receiver_refusing_every_attempt_of_a_payment_still_loses_it(
        storms: StormBatch[Run], request: pytest.FixtureRequest) -> None:
    """Every notification of a picked payment is refused on each of its 3 attempts, those sent
    in the storm's last second included: lost, and the payment missing."""
    run = storms.result(f"{request.node.name}/refuse")
    keys, payments = _lost_payments(run)
    found = _findings(_scenario(run))
    assert set(found) == {"lost", "stale", "no_server_error"}, found
    assert {k for k, _ in found["lost"]} == keys and keys
    assert all(m.startswith("never applied and never acknowledged: every valid delivery went unanswered or was "
                            "refused (503") for _, m in found["lost"]), found["lost"]
    assert found["stale"] == sorted((p, "object missing after settling") for p in payments)
    refused = [tried for tried in _deliveries(_history(run)).values() if tried[0].object_id in _picked(run)]
    assert all([a.status for a in tried] == [503] * 3 for tried in refused)  # each schedule ran to its end
    assert _last_second(run), "no refused delivery was sent in the storm's last second"


@pytest.mark.slow
def test_a_receiver_acknowledging_without_applying_still_loses_it(
        storms: StormBatch[Run], request: pytest.FixtureRequest) -> None:
    """Every notification of a picked payment, those of the storm's last second included, is
    acknowledged and never applied: lost, its money never moved, and the payment missing."""
    run = storms.result(f"{request.node.name}/drop")
    keys, payments = _lost_payments(run)
    found = _findings(_scenario(run))
    assert set(found) == {"lost", "counter", "stale"}, found
    assert {k for k, _ in found["lost"]} == keys and keys
    assert all(m == "acknowledged 1 time(s) but not applied by the end of settling" for _, m in found["lost"])
    assert {k for k, _ in found["counter"]} == {k for k in keys if k.startswith(("license:", "refund:"))}  # money
    assert all(m.startswith("moved 0 instead of ") for _, m in found["counter"]), found["counter"]
    assert found["stale"] == sorted((p, "object missing after settling") for p in payments)
    assert _last_second(run), "no dropped delivery was sent in the storm's last second"


@pytest.mark.slow
def test_a_drain_longer_than_a_minute_ends_with_every_worker_s_records(
        storms: StormBatch[Run], request: pytest.FixtureRequest) -> None:
    """Every request about a payment first heard of in the storm's last second goes unanswered
    past the 21 s sender timeout: its deliveries drain for 3 attempts, over a minute, during
    which the Locust worker keeps hearing its master; the storm is whole and loses them."""
    run = storms.result(f"{request.node.name}/hang")
    scenario = _scenario(run)
    report = json.loads((run[0] / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["partial"] is False, scenario.get("reason")
    keys, payments = _lost_payments(run)
    hung = [tried for tried in _deliveries(_history(run)).values() if tried[0].object_id in _picked(run)]
    assert hung and all([a.status for a in tried] == [None] * 3 for tried in hung)  # each schedule ran to its end
    assert max(tried[-1].sent_at for tried in hung) - (_started_at(run) + DURATION_S) > 40.0
    found = _findings(scenario)
    assert set(found) == {"lost", "stale", "ack_latency"}, found
    assert {k for k, _ in found["lost"]} == keys and keys
    assert all(m.startswith("never applied and never acknowledged: every valid delivery went unanswered")
               for _, m in found["lost"]), found["lost"]
    assert found["stale"] == sorted((p, "object missing after settling") for p in payments)
    # the console said what the drain still owed, off a terminal every few seconds
    assert re.search(r"^storm: draining, \d+ s: .*, [1-9]\d* retry\(ies\) or attempt\(s\) owed$", run[1].stderr,
                     flags=re.M), run[1].stderr
