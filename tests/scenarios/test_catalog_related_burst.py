"""certify's `related-burst` over a user's catalog: each new object's events, whose statuses
differ, released together (a new user's trial: a receiver reading a subscription's
``updated_at`` without a lock, comparing in code and writing passed certify, the scenario
being not applicable to catalogs, and was found only by explore and storm).

The catalog world's `related_groups` walks the kind whose types set the most statuses;
the receiver keeping the newest in one transaction passes, its racy twin is found (a race:
in at least one of five seeds, and never anything but a state finding).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookproof.catalog_file import CatalogConfig, CatalogEventConfig, load_catalog
from hookproof.certify import certify
from hookproof.config import load_config
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.simulator.serving import serve_app
from hookproof.simulator.world.user_catalog import UserCatalogWorld
from tests.scenarios.test_catalog_update_status import SECRET, profile, receiver

SCENARIO = "related-burst"


def config_text(port: int, db: Path, seed: int) -> str:
    events = ""
    for name, state in (("subscription.created", "active"), ("subscription.updated", None),
                        ("subscription.canceled", "canceled")):
        example = (f'{{ type = "{name}", timestamp = "2026-12-02T09:00:00Z", data = {{ id = "sub_01JD3X", '
                   f'status = "{state or "past_due"}", plan = "pro", updated_at = "2026-12-02T09:00:00.000000Z" }} }}')
        events += (f'\n[catalog.events."{name}"]\nexample = {example}\nobject_id = "data.id"\n'
                   f'ordering = "data.updated_at"\nstatus = "data.status"\n' + (f'state = "{state}"\n' if state else ""))
    return (f'[target]\nurl = "http://127.0.0.1:{port}/webhooks"\nprofile = "standard-webhooks"\nsecret = "{SECRET}"\n'
            f'\n[observer]\nkind = "sql"\nurl = "sqlite:///{db}"\neffects = "SELECT id AS business_key FROM seen '
            'WHERE 0"\n\n[observer.states]\nsubscription = "SELECT id AS object_id, status FROM subscriptions"\n'
            f'\n[run]\nseed = {seed}\n\n[settle]\nwindow_s = 0.15\n{events}')


def test_each_new_objects_events_carry_two_statuses_and_go_together() -> None:
    world = UserCatalogWorld(3, catalog=profile().catalog)
    plan = CATALOG[SCENARIO].plan(Context(profile=profile()), world)
    assert isinstance(plan, Plan), plan
    assert [[(e.type, e.status) for e in phase.events] for phase in plan.phases] == [
        [("subscription.created", "active"), ("subscription.canceled", "canceled")]] * 2
    assert all(phase.race and phase.together for phase in plan.phases)
    assert len({e.object_id for phase in plan.phases for e in phase.events}) == 2


def test_a_catalog_without_two_statuses_of_one_kind_is_not_applicable(tmp_path: Path) -> None:
    user = load_catalog(CatalogConfig(type_field="type", events={"invoice.paid": CatalogEventConfig(
        example={"type": "invoice.paid", "data": {"id": "in_1", "amount": 100}}, object_id="data.id",
        key="pay:{data.id}")}), tmp_path)
    assert UserCatalogWorld(3, catalog=user).related_groups() == []


def _certify(tmp_path: Path, seed: int, **mode: bool) -> tuple[str, list[str]]:
    folder = tmp_path / f"{seed}-{'-'.join(mode) or 'newest'}"
    folder.mkdir()
    db = folder / "receiver.sqlite"
    with serve_app(receiver(db, **mode)) as server:
        path = folder / "hookproof.toml"
        path.write_text(config_text(server.port, db, seed), encoding="utf-8")
        (scenario,) = certify(load_config(path), scenarios=[SCENARIO], out_dir=folder / "report").report.scenarios
    return scenario.verdict, sorted({f.check_id for f in scenario.findings})


@pytest.mark.slow
def test_the_receiver_keeping_the_newest_passes_and_its_racy_twin_is_found(tmp_path: Path) -> None:
    assert _certify(tmp_path, 1) == ("pass", [])
    # a race: found in at least one of five seeds (three missed twice on a machine at load 5-13)
    verdicts = [_certify(tmp_path, seed, racy=True) for seed in (1, 2, 3, 4, 5)]
    assert any(v[0] == "fail" for v in verdicts), verdicts
    assert all(v == ("pass", []) or set(v[1]) <= {"stale", "regressed"} for v in verdicts), verdicts




def test_a_catalogs_own_names_listed_in_enabled_events_are_sent_as_listed(tmp_path: Path) -> None:
    """A catalog's ``subscription.created`` and ``subscription.updated`` are its own events, though
    the billing world's renaming spells two of Stripe's types alike: listed in enabled_events,
    they are enabled as named (they were taken for ``customer.subscription.*``, and certify,
    explore, storm and ``events`` then never sent them)."""
    from hookproof.commands.events import unsent

    path = tmp_path / "hookproof.toml"
    names = ["subscription.created", "subscription.updated", "subscription.canceled"]
    path.write_text(config_text(9, tmp_path / "r.sqlite", 1).replace(
        'secret = "', f'enabled_events = {names!r}\nsecret = "'.replace("'", '"'), 1), encoding="utf-8")
    config = load_config(path)
    assert config.enabled_types() == set(names)
    assert unsent(None, str(path)) == set()
    world = UserCatalogWorld(3, catalog=profile().catalog)
    plan = CATALOG[SCENARIO].plan(Context(profile=config.profile(), enabled=frozenset(names)), world)
    assert isinstance(plan, Plan), plan
    assert [[e.type for e in phase.events] for phase in plan.phases] == [
        ["subscription.created", "subscription.canceled"]] * 2
    only_created = tmp_path / "created.toml"
    only_created.write_text(path.read_text().replace(
        '"subscription.updated", "subscription.canceled"', '"subscription.updated"'), encoding="utf-8")
    assert unsent(None, str(only_created)) == {"subscription.canceled"}
