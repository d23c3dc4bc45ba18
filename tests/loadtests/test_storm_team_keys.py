"""Storms under a team's own `[business_keys]`: templates read the body as the provider sent it.

A storm's records carry slim events (no object snapshot); the team's templates are read
over the body the sender rendered, as certify reads them (`loadtests.team_keys`). The
fast tests check the keys of replayed events against the bodies actually sent, and that
a template no event can fill is a one-line config error before the storm starts; the slow
ones storm the Shopify and Paddle receivers (written from the providers' docs) under their
own keys: the correct receiver passes, its twin without dedupe fails `duplicated`.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hookproof.loadtests.spec import StormSpec
from hookproof.loadtests.stories import StoryBook, process_seed, template_world
from hookproof.loadtests.storm_truth import template_worlds
from hookproof.loadtests.team_keys import KeyCheckError, check_templates, storm_keys
from hookproof.simulator.profiles import get_profile
from tests.loadtests.storm_batch import StormBatch, storm_batch
from tests.loadtests.test_storm_worlds import _config, failing_checks, storm

START_US = 1_790_000_000_000_000

#: The keys each receiver writes (examples/receivers: shopify_app.py's and paddle_billing.py's EFFECTS):
#: a template, or a key rule as (``key``, ``when``): a Paddle refund once Paddle approved it.
TEAM_KEYS: dict[str, dict[str, str | tuple[str, dict[str, list[str]]]]] = {
    "shopify": {"customers/create": "welcome:{id}", "orders/paid": "fulfil:{id}", "refunds/create": "refund:{id}",
                "orders/cancelled": "restock:{id}", "app/uninstalled": "purge:{id}"},
    "paddle": {"transaction.completed": "fulfil:{data.id}", "subscription.created": "provision:{data.id}",
               "subscription.past_due": "dunning:{data.id}:{data.current_billing_period.starts_at}",
               "subscription.canceled": "deprovision:{data.id}",
               "adjustment.updated": ("refund:{data.id}", {"data.status": ["approved"]})},
}


def _spec(profile: str, templates: dict[str, str], seed: int = 5) -> StormSpec:
    types = {v: k for k, v in get_profile(profile).event_types().items()}
    return StormSpec(target_url="http://127.0.0.1:9/webhooks", profile=profile, users=1, rate_per_s=1.0,
                     duration_s=1.0, seed=seed, world_start_us=START_US, out_dir="unused",
                     keys={"builtin": True, "templates": {types.get(t, t): v for t, v in templates.items()},
                           "counters": {}})


def _body_key(profile: str, body: dict[str, object]) -> str:
    return str(body["id"]) if profile == "shopify" else str(body["data"]["id"])  # type: ignore[index]


@pytest.mark.parametrize("profile", ["shopify", "paddle"])
def test_a_replayed_slim_event_is_keyed_over_the_body_its_sender_sent(profile: str) -> None:
    templates = {"shopify": {"orders/paid": "fulfil:{id}"}, "paddle": {"transaction.completed": "grant:{data.id}"}}
    spec = _spec(profile, templates[profile])
    check_templates(spec)
    mapping = storm_keys(spec, template_worlds(spec, 1))
    assert mapping is not None
    prof = get_profile(profile)
    book = StoryBook(template_world(prof.world, process_seed(spec.seed, 0), start_us=START_US), prof, lambda e: True)
    keyed = 0
    for rendered in book.stream(first_copy=3, max_events=60):
        assert rendered.envelope is not None
        if prof.event_types().get(rendered.event.type, rendered.event.type) in templates[profile]:
            body = json.loads(rendered.envelope.body)
            prefix = "fulfil" if profile == "shopify" else "grant"
            assert mapping.key_of(rendered.event) == f"{prefix}:{_body_key(profile, body)}"
            keyed += 1
    assert keyed >= 3


def test_a_template_no_storm_event_can_fill_is_a_key_check_error() -> None:
    with pytest.raises(KeyCheckError) as caught:
        check_templates(_spec("paddle", {"transaction.completed": "grant:{data.nothing}"}))
    assert caught.value.section == "business_keys" and caught.value.event_type == "transaction.completed"
    assert "data.nothing" in str(caught.value)


def test_storm_stops_at_a_bad_template_with_one_config_line(tmp_path: Path) -> None:
    config = _config(tmp_path, "paddle_billing")
    config.write_text(config.read_text() + '\n[business_keys]\n"transaction.completed" = "grant:{data.nothing}"\n')
    # the config's own sample-event check answers first here; `check_templates` (above) covers the storm's events
    result = storm(config, tmp_path / "out")
    assert result.returncode != 0
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and 'business_keys."transaction.completed"' in lines[0], result.stderr
    assert "without a report" not in result.stderr + result.stdout and "Traceback" not in result.stderr


def _team_config(tmp_path: Path, receiver: str) -> Path:
    profile = "shopify" if receiver.startswith("shopify") else "paddle"
    config = _config(tmp_path, receiver)
    keys = "\n".join(f'"{t}" = "{v}"' for t, v in TEAM_KEYS[profile].items() if isinstance(v, str))
    rules = "".join(f'\n[business_keys."{t}"]\nkey = "{v[0]}"\nwhen = {{ '
                    + ", ".join(f'"{path}" = {json.dumps(values)}' for path, values in v[1].items()) + " }\n"
                    for t, v in TEAM_KEYS[profile].items() if not isinstance(v, str))
    config.write_text(config.read_text() + f"\n[business_keys]\n{keys}\n{rules}")
    return config


_CORRECT = ["shopify_app", "paddle_billing"]
_NO_DEDUPE = ["shopify_app_no_dedupe", "paddle_billing_no_dedupe"]
Ran = tuple[Path, subprocess.CompletedProcess[str]]


def _team_storm(receiver: str, *args: str) -> Callable[[Path], Ran]:
    return lambda tmp_path: (tmp_path, storm(_team_config(tmp_path, receiver), tmp_path / "out", *args))


# Each slow test's storm, keyed "<test>/storm": the module's selected ones run side by side
# (tests/loadtests/storm_batch.py), each in its own directory; a test asserts on its own only.
STORMS: dict[str, Callable[[Path], Ran]] = {
    **{f"test_a_storm_under_the_team_s_keys_passes_the_correct_receiver[{r}]/storm": _team_storm(r) for r in _CORRECT},
    **{f"test_a_storm_under_the_team_s_keys_fails_the_twin_without_dedupe[{r}]/storm":
       _team_storm(r, "--duplicates", "0.5") for r in _NO_DEDUPE},
}


@pytest.fixture(scope="module")
def storms(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StormBatch[Ran]]:
    """The selected tests' storms of `STORMS`, started side by side: (its directory, the storm process)."""
    with storm_batch(request, tmp_path_factory, STORMS) as batch:
        yield batch


@pytest.mark.slow
@pytest.mark.parametrize("receiver", _CORRECT)
def test_a_storm_under_the_team_s_keys_passes_the_correct_receiver(storms: StormBatch[Ran],
                                                                   request: pytest.FixtureRequest,
                                                                   receiver: str) -> None:
    tmp_path, result = storms.result(f"{request.node.name}/storm")
    assert "without a report" not in result.stderr, result.stderr
    assert failing_checks(tmp_path / "out") == {}, result.stdout + result.stderr
    assert result.returncode == 0, result.stdout + result.stderr
    # Shopify's "refunds/create" = "refund:{id}" restates the built-in money key: the console's
    # note is in every report file too (the storm rewrites the master's reports with its notes)
    restated = [n for n in json.loads((tmp_path / "out" / "report.json").read_text())["notes"]
                if n.startswith('business_keys "refunds/create" = "refund:{id}" restates')]
    assert len(restated) == (1 if receiver.startswith("shopify") else 0), result.stdout
    if restated:
        assert restated[0] in " ".join(result.stdout.split())
        summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
        assert "restates hookproof's built-in key: as keys of your own" in summary


@pytest.mark.slow
@pytest.mark.parametrize("receiver", _NO_DEDUPE)
def test_a_storm_under_the_team_s_keys_fails_the_twin_without_dedupe(storms: StormBatch[Ran],
                                                                     request: pytest.FixtureRequest,
                                                                     receiver: str) -> None:
    tmp_path, result = storms.result(f"{request.node.name}/storm")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "duplicated" in failing_checks(tmp_path / "out"), result.stdout
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    (scenario,) = report["scenarios"]
    (dup,) = [c for c in scenario["checks"] if c["check_id"] == "duplicated"]
    prefixes = {v if isinstance(v, str) else v[0]
                for v in TEAM_KEYS["shopify" if receiver.startswith("shopify") else "paddle"].values()}
    assert all(any(f["key"].startswith(p.split(":")[0] + ":") for p in prefixes) for f in dup["findings"])
