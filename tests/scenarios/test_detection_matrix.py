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
from hookproof.scenarios.catalog import CATALOG

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
#: A receiver certified in parts, side by side, each part a certify of some of the catalog's
#: scenarios (`run.scenarios`; a scenario's world is the one it has in the whole run of the seed:
#: `runner.scenario_seed`), the last part every other scenario: `reserialize_before_verify`
#: rejects every delivery, so each is sent on the whole retry schedule (11 attempts; 4,400 in
#: mass-redelivery-window) and its one certify took 182 s beside the others (85 s alone), the
#: next longest 56 s; as three parts its scenarios run beside the other receivers'.
PARTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "reserialize_before_verify": (("mass-redelivery-window",), ("duplicate-sequential", "mass-redelivery")),
}
#: Receivers refusing every valid delivery with 400 (`reserialize_before_verify`: Stripe's body
#: serialised again never matches its signature), which certify stops after the first scenario
#: (`runner.refused_valid`) unless told to keep going.
KEEP_GOING = frozenset({"reserialize_before_verify"})
#: The longest certify runs, longest first (measured: seconds beside the others, at a load of
#: 15 on 2 cores: 56 s down to 33 s; the others 13-33 s). They start first, after the parts
#: above, so the matrix ends with short runs rather than waiting on a long one that began late:
#: mass-redelivery-window takes 17-31 s of each, and the slowest wait on a slow effect, a queue,
#: a fetch, or a state or an answer the provider never settles on.
LONGEST: tuple[str, ...] = ("mark_before_fetch", "unknown_type_500", "unknown_type_400", "conflict_on_duplicate",
                            "inbox_queue", "lru_dedupe", "memory_dedupe", "check_then_insert", "no_dedupe",
                            "fulfil_check_then_insert", "last_refund_marker", "get_or_create_racy",
                            "slow_then_record", "fulfil_from_both", "get_or_create_atomic")

#: One certify: a receiver and the scenarios it runs (None: the whole catalog).
Unit = tuple[str, tuple[str, ...] | None]


def parts(name: str) -> list[tuple[str, ...] | None]:
    """The scenarios of each certify of `name`: the whole catalog once, or its `PARTS` and
    then every other scenario."""
    if name not in PARTS:
        return [None]
    listed = {scenario for part in PARTS[name] for scenario in part}
    return [*PARTS[name], tuple(scenario for scenario in CATALOG if scenario not in listed)]


def start_order() -> list[Unit]:
    """Every receiver's certify runs: the `PARTS` first, then the `LONGEST` in that order, then
    the rest in name order."""
    names = [*PARTS, *LONGEST, *(name for name in RECEIVERS if name not in LONGEST and name not in PARTS)]
    return [(name, part) for name in names for part in parts(name)]


def failures(name: str, scenarios: tuple[str, ...] | None, out: Path) -> tuple[set[str], dict[str, list[str]]]:
    """The scenarios a certify of `name` reported, and the checks each failed with."""
    if scenarios is not None:  # a part: its own receiver, database and report
        out = out / f"{name}-{scenarios[0]}"
        out.mkdir()
    config = receiver_config(name, out, SECRET, seed=SEED, options=OPTIONS.get(name), settle_window_s=0.15,
                             scenarios=None if scenarios is None else list(scenarios))
    # a receiver refusing every delivery would stop after its first scenario: the matrix wants every verdict
    report = certify(config, out_dir=out / name, keep_going=name in KEEP_GOING).report
    assert not report.partial
    return ({s.id for s in report.scenarios}, {s.id: sorted({f.check_id for f in s.findings}) for s in report.scenarios
                                               if s.verdict not in ("pass", "not_applicable")})


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, list[str]]]:
    """Each receiver's failed scenarios and their checks; a receiver certified in parts, every
    scenario of the catalog reported by exactly one of them."""
    out = tmp_path_factory.mktemp("matrix")
    units = start_order()
    with ThreadPoolExecutor(max_workers=MATRIX_WORKERS) as pool:
        results = list(pool.map(lambda unit: failures(*unit, out), units))
    merged: dict[str, dict[str, list[str]]] = {}
    reported: dict[str, list[str]] = {}
    for (name, _), (ids, failed) in zip(units, results):
        merged.setdefault(name, {}).update(failed)
        reported.setdefault(name, []).extend(ids)
    assert {name: sorted(ids) for name, ids in reported.items()} == {name: sorted(CATALOG) for name in RECEIVERS}
    return merged


def test_matrix_covers_every_receiver() -> None:
    assert set(MATRIX) == set(RECEIVERS)
    assert sorted({name for name, _ in start_order()}) == sorted(RECEIVERS)
    assert set(LONGEST) | set(PARTS) <= set(RECEIVERS) and not set(LONGEST) & set(PARTS)
    for name, listed in PARTS.items():  # every scenario in exactly one part
        scenarios = [scenario for part in parts(name) if part is not None for scenario in part]
        assert sorted(scenarios) == sorted(CATALOG) and set(listed[0]) <= set(CATALOG), name
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
