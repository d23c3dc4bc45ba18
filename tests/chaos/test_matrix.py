"""The reference zoo under chaos: broken receivers fail what their fault predicts,
correct ones pass everything, as processes and as containers (tests/chaos/chaos_matrix.json)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.scenarios.chaos import CHAOS_CATALOG
from tests.chaos.rig import load_matrix, outcomes, run_chaos

MATRIX = load_matrix()
CELLS = sorted(MATRIX["tested"].items())


def test_matrix_names_every_chaos_scenario_and_cell() -> None:
    assert MATRIX["scenarios"] == list(CHAOS_CATALOG)
    for receiver, row in MATRIX["expected"].items():
        assert sorted(row) == sorted(CHAOS_CATALOG), receiver
    for receiver, ids in MATRIX["tested"].items():
        assert set(ids) <= set(CHAOS_CATALOG), receiver


@pytest.mark.parametrize(("receiver", "ids"), CELLS, ids=[r for r, _ in CELLS])
def test_chaos_matrix_process(receiver: str, ids: list[str], tmp_path: Path) -> None:
    result = run_chaos(receiver, tmp_path, ids)
    expected = {i: MATRIX["expected"][receiver][i] for i in ids}
    assert outcomes(result) == expected


@pytest.mark.docker
@pytest.mark.parametrize(("receiver", "ids"), CELLS, ids=[r for r, _ in CELLS])
def test_chaos_matrix_docker(receiver: str, ids: list[str], tmp_path: Path, receivers_image: str) -> None:
    result = run_chaos(receiver, tmp_path, ids, backend="docker")
    expected = {i: MATRIX["expected"][receiver][i] for i in ids}
    assert outcomes(result) == expected
