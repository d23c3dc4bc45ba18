"""A run whose seed was drawn at random names it on the console, with how to repeat it:
certify and explore (``--seed N``), storm (``run.seed``, it has no flag); a seed given is
named plainly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hookproof.terminal import seed_line
from tests.hookproof.test_bad_input import run_in_process

CONFIG = ('[target]\napp = "tests.hookproof.test_explore:always_400"\nprofile = "stripe"\n'
          'secret = "whsec_seed_test"\nenabled_events = ["customer.created"]\n\n'
          '[observer]\nkind = "python"\ncallable = "tests.hookproof.test_explore:no_effects"\n')
RUNS = {"certify": ("certify", "-s", "duplicate-sequential"), "explore": ("explore", "--max-examples", "1")}


@pytest.mark.parametrize("command", list(RUNS))
def test_a_random_seed_is_printed_with_how_to_repeat_the_run(tmp_path: Path, command: str) -> None:
    (tmp_path / "hookproof.toml").write_text(CONFIG, encoding="utf-8")
    run = run_in_process(*RUNS[command], cwd=tmp_path)
    found = re.search(r"^seed (\d+) \(chosen at random; --seed (\d+) repeats this run\)$", run.stdout, re.M)
    assert found and found[1] == found[2], run
    again = run_in_process(*RUNS[command], "--seed", found[1], cwd=tmp_path)
    assert re.search(rf"^seed {found[1]}$", again.stdout, re.M), again  # given: named, nothing to add


def test_storm_names_the_config_field() -> None:
    assert seed_line(7, True, "run.seed = {seed} in the config") == (
        "seed 7 (chosen at random; run.seed = 7 in the config repeats this run)")
    assert seed_line(7, False, "run.seed = {seed} in the config") == "seed 7"
