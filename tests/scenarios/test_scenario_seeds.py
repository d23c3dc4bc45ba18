"""A scenario's world depends on the run's seed and the scenario's id, not its place in the run.

`certify provider-api-transient --seed 1` must rebuild the world that scenario had in the whole
`--seed 1` run (as `--seed`'s help says: the same seed makes the same worlds again), and the
scenarios of one run must still get distinct worlds (distinct ids: they may overlap).
"""

from __future__ import annotations

from pathlib import Path

from examples.receivers import config as receiver_config
from hookproof.certify import certify
from hookproof.scenarios.catalog import CATALOG
from hookproof.scenarios.chaos import CHAOS_CATALOG
from hookproof.scenarios.runner import scenario_seed

SECRET = "whsec_scenario_seeds_" + "0" * 19
SCENARIOS = ["duplicate-sequential", "reorder", "provider-api-transient"]


def test_every_scenario_of_a_run_gets_a_seed_of_its_own() -> None:
    ids = [*CATALOG, *CHAOS_CATALOG]
    for seed in (0, 1, 4242):
        seeds = [scenario_seed(seed, sid) for sid in ids]
        assert len(set(seeds)) == len(ids)
    assert scenario_seed(1, "reorder") == scenario_seed(1, "reorder") != scenario_seed(2, "reorder")


def _event_ids(tmp_path: Path, scenarios: list[str]) -> dict[str, list[str]]:
    tmp_path.mkdir()
    cfg = receiver_config("fetch_state", tmp_path, SECRET, seed=1, scenarios=scenarios)
    report = certify(cfg, out_dir=tmp_path / "report").report
    return {s.id: sorted({a.event_id for a in s.attempts}) for s in report.scenarios}


def test_a_scenario_run_alone_gets_the_world_it_had_in_the_whole_run(tmp_path: Path) -> None:
    whole = _event_ids(tmp_path / "whole", SCENARIOS)
    alone = _event_ids(tmp_path / "alone", ["provider-api-transient"])
    assert alone["provider-api-transient"] and alone["provider-api-transient"] == whole["provider-api-transient"]
    assert not set(whole["duplicate-sequential"]) & set(whole["provider-api-transient"])
