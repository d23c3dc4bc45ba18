"""A team's own catalog whose membership types only move a counter (`[counters]`): Clerk's seats.

The catalog (svix, Clerk's shapes cut down) keys a welcome per user and declares no key and no
state for ``organizationMembership.created`` and ``.deleted``; `[counters]` counts an
organization's seats from them (+1, -1). certify used to send only the keyed and
status-setting types: the membership types were named in the unsent note, ``counter`` compared
nothing, and a twin counting every redelivered membership event again passed. Now the types
moving a declared counter are effectful (`UserCatalogWorld.effect_story`,
`catalog.effect_events`): sent with duplicates, bursts, timeouts, dropped answers and shuffled
replays, a membership's deletion after its creation. `clerk_seats` (claims the ``svix-id``,
counts once) passes every scenario and ``--chaos``; its ``LEAK`` twin (moves the seats before
it claims the delivery) fails ``counter`` wherever a membership event is delivered twice.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from examples.receivers import PROJECT_ROOT
from hookproof.certify import certify
from hookproof.config import load_config
from hookproof.reports.model import RunReport
from hookproof.scenarios.catalog import CATALOG, Context, Plan
from hookproof.scenarios.chaos import CHAOS_CATALOG
from hookproof.simulator.world import new_world

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MEMBERSHIPS = ("organizationMembership.created", "organizationMembership.deleted")

#: Clerk's users, organizations and memberships, cut down: a membership names its organization
#: and its user (`refs`); only a user's creation owes an effect of its own (a welcome).
CATALOG_TEXT = """
[catalog.events."user.created"]
example = { type = "user.created", timestamp = 1733130000000, data = { id = "user_2abcdefghijklmnopqrstuvwxy", first_name = "Ada", updated_at = 1733130000000 } }
object_type = "user"
ordering = "data.updated_at"
state = "active"
key = "welcome:{data.id}"

[catalog.events."user.deleted"]
example = { type = "user.deleted", timestamp = 1733130000000, data = { id = "user_2abcdefghijklmnopqrstuvwxy", deleted = true } }
object_type = "user"
ordering = "timestamp"
state = "deleted"

[catalog.events."organization.created"]
example = { type = "organization.created", timestamp = 1733130000000, data = { id = "org_2abcdefghijklmnopqrstuvwxy", name = "Acme" } }
object_type = "organization"

[catalog.events."organizationMembership.created"]
example = { type = "organizationMembership.created", timestamp = 1733130000000, data = { id = "orgmem_2abcdefghijklmnopqrstuvw", role = "admin", organization = { id = "org_2abcdefghijklmnopqrstuvwxy", name = "Acme" }, public_user_data = { user_id = "user_2abcdefghijklmnopqrstuvwxy" } } }
object_type = "membership"
refs = { "data.organization.id" = "organization", "data.public_user_data.user_id" = "user" }

[catalog.events."organizationMembership.deleted"]
example = { type = "organizationMembership.deleted", timestamp = 1733130000000, data = { id = "orgmem_2abcdefghijklmnopqrstuvw", role = "admin", organization = { id = "org_2abcdefghijklmnopqrstuvwxy", name = "Acme" }, public_user_data = { user_id = "user_2abcdefghijklmnopqrstuvwxy" } } }
object_type = "membership"
refs = { "data.organization.id" = "organization", "data.public_user_data.user_id" = "user" }
"""

#: An organization's seats: +1 per membership created, -1 per membership deleted.
SEATS = """
[counters."organizationMembership.created"]
key = "{data.organization.id}"
amount = 1

[counters."organizationMembership.deleted"]
key = "{data.organization.id}"
amount = 1
sign = -1
"""


def config_text(db: Path, *, leak: bool = False, counters: bool = True) -> str:
    return f"""[target]
url = "http://127.0.0.1:{{port}}/webhooks"
profile = "svix"
secret = "{SECRET}"

[target.process]
command = "{sys.executable} -m tests.examples.clerk_seats"
env = {{ PORT = "{{port}}", DATABASE = "{db}", WEBHOOK_SECRET = "{{secret}}", LEAK = "{int(leak)}", PYTHONPATH = "{PROJECT_ROOT}" }}

[run]
seed = 4

[observer]
kind = "sql"
url = "sqlite:///{db}"
effects = "SELECT business_key FROM emails"
counter = "SELECT id AS key, seats AS amount FROM orgs"

[observer.states]
user = "SELECT id AS object_id, CASE WHEN deleted = 1 THEN 'deleted' ELSE 'active' END AS status FROM users"
{CATALOG_TEXT}{SEATS if counters else ""}"""


def _plan(tmp_path: Path, scenario: str, *, counters: bool = True) -> list[list[str]]:
    path = tmp_path / "hookproof.toml"
    path.write_text(config_text(tmp_path / "x.sqlite", counters=counters), encoding="utf-8")
    loaded = load_config(path)
    profile = loaded.profile()
    ctx = Context(profile=profile, keys=loaded.key_mapping(), state_kinds=frozenset({"user"}))
    plan = CATALOG[scenario].plan(ctx, new_world(profile.world, 4))
    assert isinstance(plan, Plan), plan
    return [[e.type for e in phase.events] for phase in plan.phases]


def test_the_types_moving_a_declared_counter_are_sent_a_deletion_after_its_creation(tmp_path: Path) -> None:
    """Two memberships of one organization, the second deleted after its creation, beside the
    welcome; the organization first, plainly (a membership names it); `distinct-events-same-object`
    sends one membership created and deleted (two moves of one object: a receiver deduplicating
    by the membership takes no seat back). Without `[counters]` the membership types owe nothing
    and are not sent."""
    created, deleted = MEMBERSHIPS
    assert _plan(tmp_path, "duplicate-sequential") == [
        ["organization.created"], ["user.created", created, created, deleted]]
    assert _plan(tmp_path, "duplicate-concurrent") == [["organization.created"], ["user.created", created, created]]
    assert _plan(tmp_path, "mass-redelivery")[1:] == [["user.created", created, created, deleted, "user.created",
                                                       "user.deleted"]] * 2
    assert _plan(tmp_path, "distinct-events-same-object") == [["user.created", "organization.created"],
                                                               [created, deleted]]  # one membership's two moves
    assert _plan(tmp_path, "duplicate-sequential", counters=False) == [["user.created"]]


def _certify(tmp_path: Path, name: str, *, leak: bool = False, chaos: bool = False) -> RunReport:
    folder = tmp_path / name
    folder.mkdir()
    path = folder / "hookproof.toml"
    path.write_text(config_text(folder / "seats.sqlite", leak=leak), encoding="utf-8")
    return certify(load_config(path), out_dir=folder / "report", chaos=chaos).report


#: The scenarios delivering a membership event more than once, and the seats the twin then shows
#: against the truth's (each scenario's organization: two memberships, one deleted when its
#: story holds the deletion).
LEAKS = {"duplicate-sequential": (3, 1), "duplicate-concurrent": (16, 2), "sender-timeout": (4, 2),
         "dropped-response": (4, 2), "reserialized-retry": (2, 1), "transport-fields-change": (2, 1),
         "mass-redelivery": (2, 1), "mass-redelivery-window": (100, 50)}


@pytest.mark.slow
def test_a_seat_counter_passes_and_its_twin_counting_redeliveries_fails_counter(tmp_path: Path) -> None:
    correct = _certify(tmp_path, "correct")
    verdicts = {s.id: s.verdict for s in correct.scenarios}
    assert set(verdicts.values()) == {"pass", "not_applicable"}, verdicts
    sent = {s.id: {a.event_type for a in s.attempts} for s in correct.scenarios}
    for scenario in LEAKS:
        assert set(MEMBERSHIPS) & sent[scenario], (scenario, sent[scenario])
    assert not any("never sent" in note for note in correct.notes), correct.notes
    twin = _certify(tmp_path, "leak", leak=True)
    failed = {s.id: s for s in twin.scenarios if s.verdict == "fail"}
    assert set(failed) == set(LEAKS), {s.id: s.verdict for s in twin.scenarios}
    for scenario, (shown, truth) in LEAKS.items():
        (finding,) = failed[scenario].findings
        assert finding.check_id == "counter", (scenario, finding)
        assert (finding.actual, finding.expected) == (shown, truth), (scenario, finding.message)
        assert finding.message.startswith(f"counter is {shown}; the provider's truth implies {truth}"), finding.message
    passing = {s.id for s in twin.scenarios if s.verdict == "pass"}
    assert passing == {s for s, v in verdicts.items() if v == "pass"} - set(LEAKS)


@pytest.mark.slow
def test_the_seat_counter_passes_every_chaos_scenario(tmp_path: Path) -> None:
    """Killed, paused, restarted, cut off and run as replicas: each membership counted once."""
    report = _certify(tmp_path, "chaos", chaos=True)
    verdicts = {s.id: s.verdict for s in report.scenarios}
    assert set(verdicts.values()) == {"pass", "not_applicable"}, verdicts
    chaos = {s.id: {a.event_type for a in s.attempts} for s in report.scenarios if s.id in CHAOS_CATALOG}
    assert len(chaos) == 6 and all(set(MEMBERSHIPS) & types for types in chaos.values()), chaos
