"""The front door with the github profile: event names, enabled_events, and the commands
whose worlds are the billing one (storm) refusing it in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hookproof.config import parse_config
from hookproof.errors import ConfigError
from hookproof.simulator.world import GITHUB_CHECK_TYPES, GITHUB_EVENT_TYPES
from hookproof.simulator.world.shopify import SHOPIFY_EVENT_TYPES

ROOT = Path(__file__).resolve().parents[2]
CONFIG = """
[target]
url = "http://127.0.0.1:{port}/webhooks"
profile = "github"
secret = "s3cret"
{extra}

[observer]
kind = "sql"
url = "sqlite:///receiver.db"
effects = "SELECT business_key FROM effects"
"""


def hookproof(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hookproof", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env={**os.environ, "COLUMNS": "200"})


def test_events_lists_githubs_own_names() -> None:
    run = hookproof("events", "--profile", "github")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[:len(GITHUB_EVENT_TYPES)] == list(GITHUB_EVENT_TYPES)
    # the checks' events: sent only to an App whose enabled_events lists them
    assert [line.split()[0] for line in lines[len(GITHUB_EVENT_TYPES):]] == list(GITHUB_CHECK_TYPES)
    assert all(line.endswith("sent only to an endpoint listing it (target.enabled_events)")
               for line in lines[len(GITHUB_EVENT_TYPES):])
    as_json = json.loads(hookproof("events", "--profile", "github", "--json").stdout)
    assert as_json[0] == {"event": "issues.opened", "world_type": "issues.opened"}


def test_events_lists_shopifys_own_topics() -> None:
    from hookproof.simulator.world.shopify import SHOPIFY_COMPLIANCE_TOPICS, SHOPIFY_FULFILMENT_TOPICS

    run = hookproof("events", "--profile", "shopify")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[:len(SHOPIFY_EVENT_TYPES)] == list(SHOPIFY_EVENT_TYPES)
    # the mandatory compliance topics and the fulfilment topics: sent only to an app whose config names them
    assert [line.split()[0] for line in lines[len(SHOPIFY_EVENT_TYPES):]] == [
        *SHOPIFY_COMPLIANCE_TOPICS, *SHOPIFY_FULFILMENT_TOPICS]
    assert all(line.endswith("sent only to a config naming it (enabled_events, business_keys)")
               for line in lines[len(SHOPIFY_EVENT_TYPES):])


def test_events_keys_show_the_built_in_keys_of_each_type() -> None:
    """Every built-in key shown is one a world of that profile really gives its events; a type
    whose events never carry one says so."""
    from hookproof.commands.events import example_keys
    from hookproof.simulator.world import new_world

    run = hookproof("events", "--profile", "mercadopago", "--keys")
    assert run.returncode == 0, run.stderr
    rows = {line.split()[0]: line for line in run.stdout.splitlines()}
    assert rows["merchant_order"].endswith("(no effect)")
    kinds = [k.split(":")[0] for k in rows["payment.updated"].split("e.g. ")[1].split(", ")]
    assert kinds == ["license", "refund", "chargeback"]
    shown = example_keys("github")
    assert shown["issues.opened"][0].startswith("comment:") and "issues.closed" not in shown
    world = new_world("github", 1)
    assert {k for e in world.lifecycle() if e.business_key for k in [e.business_key]} >= {
        keys[0] for t, keys in shown.items() if t in ("issues.opened", "push")}
    as_json = json.loads(hookproof("events", "--profile", "stripe", "--keys", "--json").stdout)
    paid = next(r for r in as_json if r["event"] == "invoice.paid")
    assert [k.split(":")[0] for k in paid["keys"]] == ["renewal"]


def test_events_with_an_unknown_profile_is_one_line() -> None:
    run = hookproof("events", "--profile", "gitlab")
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr.strip().startswith("hookproof: --profile: unknown profile 'gitlab' (known: ")
    assert len(run.stderr.strip().splitlines()) == 1


def test_send_with_an_event_github_does_not_send_lists_githubs_names() -> None:
    run = hookproof("send", "--profile", "github", "--url", "http://127.0.0.1:9/webhooks", "--secret", "s",
                    "--event", "invoice.paid")
    assert run.returncode == 2
    assert run.stderr.strip() == ("hookproof: --event: the GitHub profile sends no event 'invoice.paid' (known: "
                                  + ", ".join(sorted(GITHUB_EVENT_TYPES + GITHUB_CHECK_TYPES)) + ")")


def test_enabled_events_take_githubs_names_and_an_unknown_one_lists_them() -> None:
    ok = parse_config(CONFIG.format(port=3000, extra='enabled_events = ["issues.opened", "push"]'), "hookproof.toml")
    assert ok.target.stripe_types() == {"issues.opened", "push"}
    with pytest.raises(ConfigError) as info:
        parse_config(CONFIG.format(port=3000, extra='enabled_events = ["issues.opened", "invoice.paid"]'),
                     "hookproof.toml")
    assert "the GitHub profile sends no event 'invoice.paid' (known: installation.created," in str(info.value)


def test_a_bare_github_event_name_enables_every_action_of_it() -> None:
    """A GitHub App subscribes per event: ``pull_request`` is every pull_request action the
    profile sends; ``push`` and ``ping`` have none; a per-action name beside its event adds
    nothing twice; an unknown bare name is still a config error naming it."""
    cfg = parse_config(CONFIG.format(port=3000, extra='enabled_events = ["pull_request", "installation", "push", '
                                                      '"pull_request.closed"]'), "hookproof.toml")
    assert cfg.target.enabled_events == [
        "pull_request.opened", "pull_request.edited", "pull_request.synchronize", "pull_request.closed",
        "pull_request.reopened", "installation.created", "installation.deleted", "installation.suspend",
        "installation.unsuspend", "push"]
    assert parse_config(CONFIG.format(port=3000, extra='enabled_events = ["issue_comment", "ping"]'),
                        "hookproof.toml").target.enabled_events == [
        "issue_comment.created", "issue_comment.edited", "issue_comment.deleted", "ping"]
    checks = parse_config(CONFIG.format(port=3000, extra='enabled_events = ["push", "check_suite", "check_run"]'),
                          "hookproof.toml")
    assert checks.target.enabled_events == ["push", *GITHUB_CHECK_TYPES]
    assert checks.subscribed_types() == list(GITHUB_CHECK_TYPES)
    assert set(checks.profile().event_types()) == {*GITHUB_EVENT_TYPES, *GITHUB_CHECK_TYPES}
    every = parse_config(CONFIG.format(port=3000, extra='enabled_events = ["*"]'), "hookproof.toml")
    assert every.subscribed_types() == [] and set(every.profile().event_types()) == set(GITHUB_EVENT_TYPES)
    with pytest.raises(ConfigError) as info:
        parse_config(CONFIG.format(port=3000, extra='enabled_events = ["star"]'), "hookproof.toml")
    assert "the GitHub profile sends no event 'star' (known: installation.created," in str(info.value)
    assert str(info.value).count("\n") == 0 and "enabled_events" in str(info.value)


def test_check_run_states_are_read_from_an_app_listing_the_checks() -> None:
    """``[observer.states] check_run``: a kind of the world an App listing the checks is told
    (its check runs are queued, in progress, completed); an App not listing them has none."""
    states = "\n[observer.states]\ncheck_run = \"SELECT object_id, status FROM states WHERE kind = 'check_run'\"\n"
    listed = parse_config(CONFIG.format(port=3000, extra='enabled_events = ["push", "check_suite", "check_run"]')
                          + states, "hookproof.toml")
    assert listed.observer is not None and set(listed.observer.states or {}) == {"check_run"}
    with pytest.raises(ConfigError) as info:
        parse_config(CONFIG.format(port=3000, extra="") + states, "hookproof.toml")
    assert ("hookproof's github profile models no object kind 'check_run' (the kinds it models: commit, hook, "
            "installation, issue, pull_request)") in str(info.value)
