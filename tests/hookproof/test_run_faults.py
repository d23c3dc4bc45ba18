"""Faults a new user hit running hookproof, each pinned.

1. `certify --seed N` makes the run's worlds from N (over ``run.seed``) and the report names it.
2. Every usage error is one line with one prefix (``hookproof: certify: No such option: …``).
3. A run stopped by SIGTERM or Ctrl-C says so in its notes and lists the scenarios it did
   not finish as unknown with that reason, as a ``--max-duration`` stop does.
4. certify's progress counts the scenarios finished (never going back) and names those running.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hookproof.cli import app, main
from tests.hookproof.zoo_apps import config_text


def test_certify_seed_overrides_run_seed_and_the_report_names_it(tmp_path: Path) -> None:
    config = tmp_path / "hookproof.toml"
    config.write_text(config_text("inbox_sync", seed=5), encoding="utf-8")
    runs = {}
    for name, extra in (("config", []), ("flag", ["--seed", "4242"])):
        out = tmp_path / name
        result = CliRunner().invoke(app, ["certify", "-c", str(config), "-s", "duplicate-sequential",
                                          "--out", str(out), *extra])
        assert result.exit_code == 0, result.output
        runs[name] = json.loads((out / "report.json").read_text(encoding="utf-8"))
        assert f"seed {runs[name]['seed']}" in (out / "summary.md").read_text(encoding="utf-8")
    assert runs["config"]["seed"] == 5
    assert runs["flag"]["seed"] == 4242
    # the seed makes the worlds: another seed, other event ids
    ids = {name: {a["event_id"] for s in run["scenarios"] for a in s["attempts"]} for name, run in runs.items()}
    assert ids["config"] and ids["flag"] and not ids["config"] & ids["flag"]


@pytest.mark.parametrize(("argv", "line"), [
    (["certify", "--bogus"], "hookproof: certify: No such option: --bogus"),
    (["explore", "--max-examples", "many"], "hookproof: explore: Invalid value for '--max-examples': "
                                            "Input should be a valid integer"),
    (["send", "--nope"], "hookproof: send: No such option: --nope"),
    (["report", "--out"], "hookproof: Option '--out' requires an argument."),  # click: before the command
    (["--bogus"], "hookproof: No such option: --bogus"),
    (["nope"], "hookproof: No such command 'nope'."),
])
def test_a_usage_error_is_one_line_with_one_prefix(argv: list[str], line: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    (printed,) = err.splitlines()
    assert printed.startswith(line), err  # click may add "(Possible options: …)"
    assert printed.count("hookproof") == 1, err
