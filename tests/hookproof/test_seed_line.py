"""A run whose seed was drawn at random names it on the console, with how to repeat it:
certify, explore and storm (``--seed N``); a seed given is named plainly."""

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


def test_storm_takes_seed_as_certify_and_explore_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """storm said 'run.seed = N in the config repeats this run' and had no --seed: it has one
    now, over run.seed as the others', named the same way (the storm's own run is
    tests/loadtests/test_storm_command.py's)."""
    from typer.testing import CliRunner

    from hookproof.cli import app
    from hookproof.commands.storm import build_spec
    from hookproof.config import load_config

    path = tmp_path / "hookproof.toml"

    def spec_seed(run_seed: str, flag: int | None) -> int:
        path.write_text('[target]\nurl = "http://127.0.0.1:9/webhooks"\nprofile = "stripe"\nsecret = "whsec_seed"\n'
                        '[observer]\nkind = "python"\ncallable = "tests.hookproof.test_explore:no_effects"\n'
                        f"[run]\n{run_seed}\n", encoding="utf-8")
        return build_spec(load_config(path), users=1, rate=1.0, duration_s=1.0, shape="steady", duplicates=0.2,
                          burst=2, reorder_window=2, waves=0, out=tmp_path / "out", sink_url=None, progress_path=None,
                          seed=flag).seed

    assert spec_seed("seed = 5", None) == 5
    assert spec_seed("seed = 5", 4242) == 4242  # the flag over the config
    assert spec_seed("", 4242) == 4242
    drawn = {spec_seed("", None) for _ in range(3)}
    assert len(drawn) > 1  # none given: a random one
    monkeypatch.setenv("COLUMNS", "200")
    shown = CliRunner().invoke(app, ["storm", "--help"]).output
    assert "--seed" in shown and "run.seed" in shown
    import inspect

    import hookproof.commands.storm as storm

    assert '"--seed {seed}"' in inspect.getsource(storm) and "in the config" not in inspect.getsource(storm)
    assert seed_line(7, True, "--seed {seed}") == "seed 7 (chosen at random; --seed 7 repeats this run)"
