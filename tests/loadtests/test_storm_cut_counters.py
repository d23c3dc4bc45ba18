"""A team's counter whose objects' stories the storm's end cut is unknown, not a finding.

A storm's reorder window draws each next event from a buffer of the next ones: at the storm's
end it may have sent a membership's ``organizationMembership.deleted`` while the
``organizationMembership.created`` before it never went out. The truth counts what was
delivered, so the organization's seats are -1; a correct receiver (`tests.examples.clerk_seats`'s
catalog, a receiver keeping a tombstone for a membership deleted before it was seen) shows 0,
and the storm reported a ``counter`` finding (the workaround was ``--reorder-window 1``). The
range such stories leave a counter in (`ahead.Ahead.counters`) now makes a finding within it
unknown, with a note (`cut.CutStories`); a counter off by more (a membership counted twice
beside the cut one) stays a finding, and a storm whose stories were all sent whole is judged as
before. Deterministic: the storm's history is recorded by hand from its own seeded stories.
"""

from __future__ import annotations

from pathlib import Path

from hookproof.config import load_config
from hookproof.loadtests.ahead import ahead_of
from hookproof.loadtests.cut import CutStories
from hookproof.loadtests.records import make_attempt
from hookproof.loadtests.spec import StormSpec
from hookproof.loadtests.stories import StoryBook, process_seed, storm_sends, template_world
from hookproof.loadtests.storm_truth import template_worlds
from hookproof.loadtests.team_keys import storm_keys
from hookproof.loadtests.verdict import storm_scenario
from hookproof.reports.model import ScenarioReport
from hookproof.scenarios.business_keys import keyed, to_plain
from hookproof.scenarios.findings import Finding
from hookproof.scenarios.observations import Effect, Observation
from hookproof.simulator.events import Event
from hookproof.simulator.world.user_catalog import catalog_to_plain
from tests.examples.test_clerk_seats import config_text

START_US = 1_790_000_000_000_000
CREATED, DELETED = "organizationMembership.created", "organizationMembership.deleted"


def _spec(tmp_path: Path) -> StormSpec:
    path = tmp_path / "hookproof.toml"
    path.write_text(config_text(tmp_path / "x.sqlite").replace("{port}", "9"), encoding="utf-8")
    config = load_config(path)
    mapping = config.key_mapping()
    assert mapping is not None
    return StormSpec(target_url="http://127.0.0.1:9/webhooks", profile="svix", seed=7, world_start_us=START_US,
                     catalog=catalog_to_plain(config.profile().catalog), keys=to_plain(mapping),
                     out_dir=str(tmp_path / "out"), settle_window_s=0.05, settle_deadline_s=1.0,
                     settle_interval_s=0.01)


def _storm(spec: StormSpec, copies: int = 3) -> list[Event]:
    """What one sender of `spec` sends, whole: its stories under `copies` copy numbers."""
    profile = spec.sending_profile()
    book = StoryBook(template_world(profile.world, process_seed(spec.seed, 0), start_us=START_US), profile,
                     storm_sends(profile, None, spec.keys))
    return [item.event for item in book.stream(max_events=copies * sum(map(len, book.templates)))]


def _org(event: Event) -> str:
    return str(event.extra["body"]["data"]["organization"]["id"])


def _seats(sent: list[Event]) -> dict[str, int]:
    """The correct receiver's seats: its memberships, one per ``.created`` not deleted; a
    ``.deleted`` of a membership it never saw kept as a tombstone, taking no seat back."""
    members: dict[str, str] = {}
    gone: set[str] = set()
    for e in sent:
        if e.type == CREATED and e.object_id not in gone:
            members[e.object_id] = _org(e)
        elif e.type == DELETED:
            gone.add(e.object_id)
            members.pop(e.object_id, None)
    seats = {_org(e): 0 for e in sent if e.type in (CREATED, DELETED)}
    for org in members.values():
        seats[org] += 1
    return seats


def _judged(spec: StormSpec, sent: list[Event], seats: dict[str, int]) -> ScenarioReport:
    """The storm's verdict over `sent` (each delivered once, acknowledged), the receiver showing
    every welcome and `seats`, as the storm's end judges it."""
    templates = template_worlds(spec, 1)
    mapping = storm_keys(spec, templates)
    events = list(keyed(sent, mapping))
    profile = spec.sending_profile()
    attempts = [make_attempt(event=e, event_id=e.id, delivery_id=f"dlv_{e.id}_1", attempt=1, tags=(), profile=profile,
                             sent_at=1000.0 + i * 0.01, latency_ms=5.0, status=200) for i, e in enumerate(events)]
    welcomes = tuple(Effect(e.business_key) for e in events if e.business_key is not None)
    return storm_scenario(spec, events, attempts, [Observation(2000.0, welcomes, counters=seats)], settled=True,
                          started_at=1000.0, duration_s=2.0, ahead=ahead_of(events, templates, keys=mapping),
                          mapping=mapping)


def test_a_deletion_sent_without_its_creation_leaves_the_seats_unknown(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    whole = _storm(spec)
    assert [e.type for e in whole].count(CREATED) == [e.type for e in whole].count(DELETED) >= 3
    report = _judged(spec, whole, _seats(whole))  # every story sent whole: a pass
    assert report.verdict == "pass", [(c.check_id, c.detail) for c in report.checks]
    cut = next(e for e in reversed(whole) if e.type == CREATED)  # the last membership's creation never went out
    sent = [e for e in whole if e is not cut]
    org = _org(cut)
    seats = _seats(sent)
    assert seats[org] == 0  # the tombstone: its deletion took nothing back
    report = _judged(spec, sent, seats)
    assert report.verdict == "unknown", [(c.check_id, c.verdict, c.detail) for c in report.checks]
    assert report.findings == ()
    counter = next(c for c in report.checks if c.check_id == "counter")
    assert counter.verdict == "unknown" and counter.findings == ()
    assert counter.detail == (
        f"1 counter(s) off unknown: {CutStories({org: (0, 1)}).note()}; 0 finding(s), 0 advisory(ies)")
    assert counter.detail.startswith("1 counter(s) off unknown: the storm's end cut the stories of objects moving "
                                     "1 counter(s): an event of theirs was delivered while an earlier one")
    assert {c.check_id: c.verdict for c in report.checks if c.check_id != "counter"} == {
        c.check_id: "valid" for c in report.checks if c.check_id != "counter"}
    naive = _judged(spec, sent, {**seats, org: -1})  # a receiver taking the seat back all the same: the truth
    assert naive.verdict == "pass", [(c.check_id, c.detail) for c in naive.checks]


def test_a_counter_off_by_more_than_its_cut_story_stays_a_finding(tmp_path: Path) -> None:
    """The seat of a redelivered membership counted twice beside the cut one: 1 where the truth
    is -1 and the cut explains 0 at most."""
    spec = _spec(tmp_path)
    whole = _storm(spec)
    cut = next(e for e in reversed(whole) if e.type == CREATED)
    sent = [e for e in whole if e is not cut]
    org = _org(cut)
    report = _judged(spec, sent, {**_seats(sent), org: 1})
    assert report.verdict == "fail"
    assert [(f.check_id, f.key, f.expected, f.actual) for f in report.findings] == [("counter", org, -1, 1)]
    assert report.findings[0].message.startswith("counter is 1; the provider's truth implies -1")


def test_the_judge_leaves_unknown_what_the_cut_explains_and_no_more() -> None:
    cut = CutStories({"org_1": (0, 1), "org_2": (-2, 0)})

    def off(key: str, want: int, got: int | None) -> bool:
        return cut.excuses("counter", Finding("counter", key, "m", want, got))

    assert [off("org_1", -1, got) for got in (-2, -1, 0, 1)] == [False, True, True, False]
    assert [off("org_2", 3, got) for got in (0, 1, 2, 3, 4)] == [False, True, True, True, False]
    assert not off("org_3", 0, 1)  # a counter no cut story moves
    assert off("org_1", -1, None)  # a counter the receiver never showed reads 0
    assert not cut.excuses("lost", Finding("lost", "org_1", "m", 1, 0))
    assert not CutStories({})
