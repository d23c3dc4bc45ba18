"""GitHub fidelity: every payload the github profile sends, against GitHub's own schemas.

The oracle is npm ``@octokit/webhooks-schemas`` (the JSON Schemas Octokit publishes for
every webhook event and action), installed with ``npm ci`` in examples/receivers/node
(pinned by its package-lock.json; CI runs it). Every event type of the repository world
is rendered over whole lifecycles and every story the catalog tells, and each body is
validated against the schema of its ``<event>$<action>`` definition with ``jsonschema``.
The delivery headers are checked against GitHub's documented set.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

import jsonschema
import pytest

from hookproof.simulator.delivery.mutations import OVERSIZE_BYTES
from hookproof.simulator.events import Event
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import GITHUB_EVENT_TYPES, GitHubWorld, emit_events, new_world
from tests.support import require_service

NODE_DIR = Path(__file__).resolve().parents[2] / "examples" / "receivers" / "node"
SCHEMA_FILE = NODE_DIR / "node_modules" / "@octokit" / "webhooks-schemas" / "schema.json"
PROFILE = get_profile("github")


@pytest.fixture(scope="module")
def definitions() -> dict[str, Any]:
    if not SCHEMA_FILE.is_file():
        require_service("@octokit/webhooks-schemas", f"run `npm ci` in {NODE_DIR.name}'s folder first")
    found: dict[str, Any] = json.loads(SCHEMA_FILE.read_text())["definitions"]
    # GitHub's REST API description (webhook schemas of version 2026-03-10, which githubkit's
    # parser validates with) requires a label's archived_at and archived_by (null when not
    # archived); the pinned @octokit/webhooks-schemas predates them and allows no other key.
    label = found["label"]
    label["properties"] = {**label["properties"], **LABEL_ARCHIVE}
    label["required"] = [*label["required"], *LABEL_ARCHIVE]
    return found


#: The label fields GitHub's own description adds to the Octokit schema's (see `definitions`).
LABEL_ARCHIVE: dict[str, Any] = {"archived_at": {"type": ["string", "null"], "format": "date-time"},
                                 "archived_by": {"oneOf": [{"$ref": "#/definitions/user"}, {"type": "null"}]}}


def rendered_events() -> Iterator[Event]:
    """Every event of three seeds' lifecycles, the catalog's and the storm's stories (oversized-payload's
    push of many commits among them) and each type's script."""
    for seed in (1, 2, 3):
        world = GitHubWorld(seed)
        world.lifecycle()
        world.effect_story()
        world.state_story()
        world.distinct_story()
        world.repeat_story()
        world.quiet_event()
        if seed == 1:
            world.big_event(OVERSIZE_BYTES)  # oversized-payload's push of many commits
        yield from world.events
    for event_type in GITHUB_EVENT_TYPES:
        yield from emit_events(new_world("github", 7), event_type, 2)


def schema_name(event_type: str) -> str:
    """The schema definition of an Octokit event type: ``issues.opened`` -> ``issues$opened``."""
    name, _, action = event_type.partition(".")
    return f"{name}${action or 'event'}"


def test_every_event_type_is_rendered() -> None:
    assert {e.type for e in rendered_events()} == set(GITHUB_EVENT_TYPES)


def test_every_payload_validates_against_octokit_webhooks_schemas(definitions: dict[str, Any]) -> None:
    checked = 0
    for event in rendered_events():
        schema = {"$ref": f"#/definitions/{schema_name(event.type)}", "definitions": definitions}
        validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
        body = json.loads(PROFILE.envelope(event).body)
        errors = [f"{e.json_path}: {e.message[:200]}" for e in validator.iter_errors(body)]
        assert errors == [], f"{event.type} does not match {schema_name(event.type)}"
        checked += 1
    assert checked > 100


def test_the_unknown_type_is_a_real_github_event(definitions: dict[str, Any]) -> None:
    """The unknown-event-type scenario sends ``star.created``: GitHub's own shape, not a made-up one."""
    event = GitHubWorld(5).unknown_event()
    schema = {"$ref": "#/definitions/star$created", "definitions": definitions}
    jsonschema.validate(json.loads(PROFILE.envelope(event).body), schema)


def test_delivery_headers_are_githubs() -> None:
    world = GitHubWorld(9)
    for event in world.lifecycle():
        envelope = PROFILE.envelope(event)
        headers = envelope.headers
        name = event.type.partition(".")[0]
        assert set(headers) == {"Content-Type", "User-Agent", "X-GitHub-Event", "X-GitHub-Delivery", "X-GitHub-Hook-ID",
                                "X-GitHub-Hook-Installation-Target-Type", "X-GitHub-Hook-Installation-Target-ID"}
        assert headers["X-GitHub-Event"] == name
        assert headers["X-GitHub-Delivery"] == envelope.event_id == event.id
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", event.id)
        assert headers["X-GitHub-Hook-ID"] == str(world.hook_id)
        assert headers["X-GitHub-Hook-Installation-Target-Type"] == "integration"
        assert headers["X-GitHub-Hook-Installation-Target-ID"] == str(world.app_id)
        assert re.fullmatch(r"GitHub-Hookshot/[0-9a-f]{7}", headers["User-Agent"])
        signed = PROFILE.request(envelope, ["s3cret"], 0).headers
        assert signed["X-Hub-Signature-256"].startswith("sha256=") and signed["X-Hub-Signature"].startswith("sha1=")
    assert len({e.id for e in world.events}) == len(world.events)


def test_business_keys_and_states() -> None:
    world = GitHubWorld(4)
    events = world.lifecycle()
    full = world.repository()["full_name"]
    keys = [(e.type, e.business_key) for e in events if e.business_key]
    issue_no = 1
    assert keys[0] == ("issues.opened", f"comment:{full}#{issue_no}")
    kinds = {e.type: (e.business_key or "").split(":")[0] for e in events}
    assert kinds == {
        "ping": "", "issues.opened": "comment", "issues.labeled": "", "issue_comment.created": "reply",
        "issues.edited": "", "issues.closed": "", "issues.reopened": "", "push": "ci", "pull_request.opened": "ci",
        "pull_request.synchronize": "ci", "pull_request.closed": "", "installation.created": "install",
        "installation.deleted": "",
    }
    issue = [e for e in events if e.object_id == f"{full}#{issue_no}"]
    assert [(e.type, e.status, e.version) for e in issue] == [
        ("issues.opened", "open", 1), ("issues.labeled", "open", 2), ("issue_comment.created", "open", 3),
        ("issues.edited", "open", 4), ("issues.closed", "closed", 5), ("issues.reopened", "open", 6)]
    assert all(e.stateful for e in issue)
    stamps = [e.extra["payload"]["issue"]["updated_at"] for e in issue]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)  # updated_at orders the versions
    closed = [e for e in events if e.type == "pull_request.closed"]
    assert [(e.status, e.extra["payload"]["pull_request"]["merged"]) for e in closed] == [("merged", True),
                                                                                        ("closed", False)]
    # Every business key names one of the world's objects after its first colon.
    assert all(e.business_key.split(":")[1] in set(world.objects()) for e in events if e.business_key)


def test_the_world_is_deterministic_from_its_seed() -> None:
    def bodies(seed: int) -> list[bytes]:
        return [PROFILE.envelope(e).body for e in GitHubWorld(seed, start_us=1_700_000_000_000_000).lifecycle()]

    assert bodies(8) == bodies(8)
    assert bodies(8) != bodies(9)


def test_illegal_transitions_are_refused() -> None:
    from hookproof.simulator.errors import WorldError

    world = GitHubWorld(2)
    pr = world.open_pull_request()
    world.close_pull_request(pr, merged=True)
    with pytest.raises(WorldError, match="merged -> closed is not an allowed transition"):
        world.close_pull_request(pr, merged=False)
    with pytest.raises(WorldError, match="is not open"):
        world.synchronize(pr)
    with pytest.raises(WorldError, match="the GitHub profile sends no event 'payment_intent.succeeded'"):
        emit_events(world, "payment_intent.succeeded")


def test_the_hook_and_app_ids_are_the_same_on_every_run() -> None:
    """GitHub sends one App's hook id and App id on every delivery to that hook: two runs
    (two seeds, as two `hookproof send`s draw) carry the same two headers, and the ping's
    ``hook`` and an installation name the same ids."""
    seen = set()
    for seed in (1, 2, 3, 1234):
        world = GitHubWorld(seed)
        for event in world.lifecycle():
            headers = PROFILE.envelope(event).headers
            seen.add((headers["X-GitHub-Hook-ID"], headers["X-GitHub-Hook-Installation-Target-ID"]))
            payload = event.extra["payload"]
            if event.type == "ping":
                assert (payload["hook_id"], payload["hook"]["app_id"]) == (world.hook_id, world.app_id)
            if event.type == "installation.created":
                assert payload["installation"]["app_id"] == world.app_id
    assert seen == {(str(GitHubWorld(0).hook_id), str(GitHubWorld(0).app_id))}


def test_every_label_carries_its_archive_fields_and_default_labels_say_so() -> None:
    """A receiver parsing with githubkit (GitHub's 2026-03-10 description) refused every
    ``issues.labeled`` with 400: its label lacked ``archived_at`` and ``archived_by``. Every
    label in every body now has both (null), and GitHub's default labels (``bug``,
    ``enhancement``) say ``default: true``, a label of the team's own (``triage``) false."""
    labels = []
    for event in rendered_events():
        body = json.loads(PROFILE.envelope(event).body)
        for found in (body.get("label"), *((body.get("issue") or {}).get("labels") or [])):
            if found:
                labels.append(found)
    assert labels and all(lab["archived_at"] is None and lab["archived_by"] is None for lab in labels)
    defaults = {lab["name"]: lab["default"] for lab in labels}
    assert defaults.get("bug") is True and defaults.get("triage", False) is False


def test_the_repeat_story_sends_a_new_delivery_for_each_change_of_one_issue() -> None:
    """Two labels, two comments, closed, reopened and closed again: one issue's number and
    action twice in three pairs; a pull request closed, reopened and merged: two
    ``pull_request.closed`` of one number. Each its own delivery (GUID), each a newer version."""
    world = GitHubWorld(4)
    events = world.repeat_story()
    full = world.repository()["full_name"]
    issue, pull = f"{full}#1", f"{full}#2"
    assert [(e.type, e.object_id, e.status, e.version) for e in events] == [
        ("issues.opened", issue, "open", 1), ("issues.labeled", issue, "open", 2),
        ("issue_comment.created", issue, "open", 3), ("issues.labeled", issue, "open", 4),
        ("issues.closed", issue, "closed", 5), ("issues.reopened", issue, "open", 6),
        ("issue_comment.created", issue, "open", 7), ("issues.closed", issue, "closed", 8),
        ("pull_request.opened", pull, "open", 1), ("pull_request.closed", pull, "closed", 2),
        ("pull_request.reopened", pull, "open", 3), ("pull_request.synchronize", pull, "open", 4),
        ("pull_request.closed", pull, "merged", 5), ("push", f"{full}@{world.head}", None, 1)]
    assert len({e.id for e in events}) == len(events)
    reopened = events[10].extra["payload"]["pull_request"]
    assert (reopened["state"], reopened["closed_at"], reopened["merged"]) == ("open", None, False)
    labels = [e.extra["payload"]["label"]["name"] for e in events if e.type == "issues.labeled"]
    assert labels == ["bug", "enhancement"]
    replies = [e.business_key for e in events if e.type == "issue_comment.created"]
    assert len(set(replies)) == 2 and all(k.startswith(f"reply:{issue}:") for k in replies)  # two effects
    for kind in ("issue", "pull_request"):
        stamps = [e.extra["payload"][kind]["updated_at"] for e in events if e.object_type == kind]
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)  # updated_at orders the versions


def test_the_storm_mix_alternates_the_lifecycle_and_the_repeat_story() -> None:
    mixed, lifecycles, repeats = GitHubWorld(6), GitHubWorld(6), GitHubWorld(6)
    told = [mixed.storm_story(i) for i in range(4)]
    expected = [lifecycles.lifecycle(), lifecycles.repeat_story(), lifecycles.lifecycle(), lifecycles.repeat_story()]
    assert [[(e.id, e.type) for e in story] for story in told] == [[(e.id, e.type) for e in story] for story in expected]
    assert [e.type for e in told[1]] == [e.type for e in repeats.repeat_story()]
