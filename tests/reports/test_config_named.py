"""Every report names the hookproof.toml its run read (a team keeps several, one per
receiver or environment), and says nothing of one when the run read none."""

from __future__ import annotations

import json
from dataclasses import replace

from hookproof.reports import RunReport, load_json, render_html, render_json, render_junit, render_markdown

CONFIG = "deploy/staging/hookproof.toml"


def test_each_report_names_the_config(run_report: RunReport) -> None:
    named = replace(run_report, config=CONFIG)
    assert f"· profile `stripe` · config `{CONFIG}` · test mode ·" in render_markdown(named)
    assert f"<dt>Config</dt><dd><code>{CONFIG}</code></dd>" in render_html(named)
    assert render_junit(named).count(f'<property name="config" value="{CONFIG}"') == len(named.scenarios)
    assert json.loads(render_json(named))["config"] == CONFIG
    assert load_json(render_json(named)).config == CONFIG


def test_no_config_no_mention(run_report: RunReport) -> None:
    assert run_report.config is None
    assert "config" not in render_markdown(run_report).split("\n\n")[1]
    assert "<dt>Config</dt>" not in render_html(run_report)
    assert 'name="config"' not in render_junit(run_report)
    assert json.loads(render_json(run_report))["config"] is None
