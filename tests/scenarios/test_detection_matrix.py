"""The detection matrix: certify every reference receiver over real HTTP on 127.0.0.1.

Correct receivers pass every scenario; each broken one fails exactly the scenarios, with
exactly the checks, that its fault predicts (tests/scenarios/detection_matrix.json). A
scenario whose outcome for a broken receiver depends on which of its concurrent deliveries
the receiver handles last (``race_dependent``) may fail with the checks listed, or pass.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from examples.receivers import BROKEN, CORRECT, RECEIVERS
from examples.receivers import config as receiver_config
from hookproof.certify import certify

MATRIX_FILE = json.loads((Path(__file__).with_name("detection_matrix.json")).read_text())
MATRIX = MATRIX_FILE["receivers"]
#: receiver -> scenario -> the checks it may fail with, depending on thread timing.
RACES = {name: row for name, row in MATRIX_FILE["race_dependent"].items() if name != "_about"}
SECRET = "whsec_matrix_secret_0123456789"
SEED = 4242
#: Receivers certified at a time. A certify run mostly waits (on its receiver process, the
#: settle reads, the scaled retry delays: the pytest process itself sits near 10% of a core),
#: so eight share two cores without changing a verdict.
MATRIX_WORKERS = 8
#: Seconds the whole matrix may take: about 30 receivers, eight at a time, each through the catalog.
MATRIX_TIMEOUT_S = 2400
#: Receiver tuning that keeps the run short without hiding the fault.
#: fulfil_check_then_insert races only its checkout fulfilments, one event of sender-timeout's three:
#: with the default 50 ms fulfilment call a loaded machine's retry came after it once and the run passed;
#: a 300 ms call (a slow fulfilment service) keeps the retry inside its check-then-insert window.
#: check_then_insert alike: its sender-timeout retry once missed the default 50 ms window on a quiet machine.
OPTIONS = {"slow_then_record": {"effect_delay_s": 0.3}, "fulfil_check_then_insert": {"fulfilment_call_s": 0.3},
           "check_then_insert": {"fulfilment_call_s": 0.3}}
#: The longest certify runs, longest first (measured: seconds alone, on a loaded 2-core machine).
#: They start first, so the matrix ends with short runs rather than waiting on a long one that
#: began late: `reserialize_before_verify` (~60 s) rejects every delivery, so each is sent on
#: the whole retry schedule (11 attempts; 4,400 in mass-redelivery-window) and some scenarios
#: wait out the settle deadline; the others (~20-25 s) leave a state or an answer the provider
#: never settles on, or wait on a slow effect.
LONGEST: tuple[str, ...] = ("reserialize_before_verify", "conflict_on_duplicate", "timestamp_seconds_order",
                            "slow_then_record", "fetch_once_by_object", "mark_before_effect", "dedupe_by_object_id",
                            "dedupe_by_type_and_object")


def start_order() -> list[str]:
    """Every receiver once: the `LONGEST` first, in that order, then the rest in name order."""
    return [*LONGEST, *(name for name in RECEIVERS if name not in LONGEST)]


def failures(name: str, out: Path) -> dict[str, list[str]]:
    config = receiver_config(name, out, SECRET, seed=SEED, options=OPTIONS.get(name), settle_window_s=0.15)
    report = certify(config, out_dir=out / name).report
    assert not report.partial
    return {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios
            if s.verdict not in ("pass", "not_applicable")}


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, list[str]]]:
    out = tmp_path_factory.mktemp("matrix")
    with ThreadPoolExecutor(max_workers=MATRIX_WORKERS) as pool:
        names = start_order()
        return dict(zip(names, pool.map(lambda name: failures(name, out), names)))


def test_matrix_covers_every_receiver() -> None:
    assert set(MATRIX) == set(RECEIVERS)
    assert sorted(start_order()) == sorted(RECEIVERS) and set(LONGEST) <= set(RECEIVERS)
    assert all(MATRIX[name] == {} for name in CORRECT)
    assert all(MATRIX[name] or name in ("memory_dedupe", "ack_before_persist") for name in BROKEN)
    assert set(RACES) <= set(BROKEN) and all(not set(RACES[name]) & set(MATRIX[name]) for name in RACES)


@pytest.mark.slow
@pytest.mark.timeout(MATRIX_TIMEOUT_S)  # the first case certifies every receiver (the module fixture)
@pytest.mark.parametrize("name", RECEIVERS)
def test_receiver_fails_exactly_what_its_fault_predicts(observed: dict[str, dict[str, list[str]]], name: str) -> None:
    races = RACES.get(name, {})
    assert {s: checks for s, checks in observed[name].items() if s not in races} == MATRIX[name]
    for scenario, checks in races.items():
        assert set(observed[name].get(scenario, ())) <= set(checks), (scenario, observed[name].get(scenario))
