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
from hookproof.scenarios.runner import Runner
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


def test_progress_counts_scenarios_done_and_names_those_running_as_they_overlap() -> None:
    """Side by side, scenarios start out of catalog order (9, 2, 23, …): the count is of those
    finished, never going back, and the line names every scenario running."""
    from hookproof.run_progress import ScenarioProgress

    where = ScenarioProgress(27)
    assert where.line("certify") == "certify: 0/27 scenario(s) done, starting"
    seen = []
    for event, sid, index in [("start", "reorder", 8), ("start", "dropped-response", 1), ("finish", "reorder", 8),
                              ("start", "related-burst", 22), ("finish", "related-burst", 22),
                              ("finish", "dropped-response", 1), ("finish", "dropped-response", 1)]:
        if event == "start":
            where.start(sid, index, 27)
        else:
            where.finish(sid)
        seen.append(where.line("certify", "3 s"))
    assert seen == [
        "certify: 0/27 scenario(s) done, running reorder, 3 s",
        "certify: 0/27 scenario(s) done, running reorder, dropped-response, 3 s",
        "certify: 1/27 scenario(s) done, running dropped-response, 3 s",
        "certify: 1/27 scenario(s) done, running dropped-response, related-burst, 3 s",
        "certify: 2/27 scenario(s) done, running dropped-response, 3 s",
        "certify: 3/27 scenario(s) done, 3 s",
        "certify: 3/27 scenario(s) done, 3 s",  # an end told twice counts once
    ]


def _stopped_runner(notes: list[str], stopped_by: str | None) -> Runner:
    from hookproof.simulator.delivery import History

    runner = Runner.__new__(Runner)  # only what `unfinished` reads
    runner.notes = notes
    runner.stopped_by = (lambda: stopped_by)
    runner.history = History()  # no attempt made: the reasons say nothing of them
    return runner


@pytest.mark.parametrize(("notes", "by", "reason", "noted"), [
    ([], "SIGTERM", "not finished: the run was stopped by SIGTERM",
     "stopped by SIGTERM; the 2 scenario(s) not finished by then are unknown (reorder, mass-redelivery)"),
    ([], None, "not finished: the run was interrupted",
     "stopped: interrupted; the 2 scenario(s) not finished by then are unknown (reorder, mass-redelivery)"),
    (["stopped: the run reached its maximum duration (5 s, --max-duration or run.max_duration_s); the scenarios "
      "after that did not run"], "SIGINT", "not finished: the run reached its maximum duration", None),
])
def test_a_stopped_run_lists_every_scenario_it_did_not_finish_as_unknown(notes: list[str], by: str | None,
                                                                         reason: str, noted: str | None) -> None:
    from hookproof.reports.model import ScenarioReport
    from hookproof.scenarios.catalog import CATALOG

    order = [CATALOG[s] for s in ("duplicate-sequential", "reorder", "mass-redelivery")]
    runner = _stopped_runner(list(notes), by)
    first = order[0]
    runner.results = [ScenarioReport(first.id, first.title, first.description, "pass", first.checklist)]
    runner.unfinished(order)
    results = runner.results
    assert [(r.id, r.verdict, r.reason) for r in results] == [
        ("duplicate-sequential", "pass", None), ("reorder", "unknown", reason), ("mass-redelivery", "unknown", reason)]
    assert runner.notes == (notes + [noted] if noted else notes)


def test_report_in_place_refuses_to_drop_a_log_the_saved_history_does_not_hold(tmp_path: Path) -> None:
    """A history saved before the log was linked (older versions) re-rendered over its run's
    reports would drop the log and every quoted tail: refused in place, rendered with --out."""
    from dataclasses import replace

    from hookproof.reports import render_json
    from hookproof.scenarios.report_views import REPORT_META_KEY
    from hookproof.simulator.delivery.history import History
    from tests.reports.sample import sample_report

    run = tmp_path / "run"
    run.mkdir()
    saved = replace(sample_report(), receiver_log=None)
    history = History(run / "history.sqlite")
    history.set_meta(REPORT_META_KEY, json.loads(render_json(saved)))
    history.close()
    written = render_json(replace(saved, receiver_log="receiver.log"))
    (run / "report.json").write_text(written, encoding="utf-8")
    refused = CliRunner().invoke(app, ["report", "--history", str(run)])
    assert refused.exit_code == 2, refused.output
    assert (run / "report.json").read_text(encoding="utf-8") == written  # untouched
    elsewhere = CliRunner().invoke(app, ["report", "--history", str(run), "--out", str(tmp_path / "again")])
    assert elsewhere.exit_code == 0, elsewhere.output
    # a history that holds what the reports hold is re-rendered in place
    (run / "report.json").write_text(render_json(saved), encoding="utf-8")
    assert CliRunner().invoke(app, ["report", "--history", str(run)]).exit_code == 0
