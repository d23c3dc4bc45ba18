"""GitHub fidelity: every payload the github profile sends, against GitHub's own schemas.

The oracle is npm ``@octokit/webhooks-schemas`` (the JSON Schemas Octokit publishes for
every webhook event and action), installed with ``npm ci`` in examples/receivers/node
(pinned by its package-lock.json; CI runs it). Every event type of the repository world
is rendered over whole lifecycles and every story the catalog tells (to an App sent the
checks' ``check_suite`` and ``check_run`` events too), and each body is
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
from hookproof.simulator.world import GITHUB_CHECK_TYPES, GITHUB_EVENT_TYPES, GitHubWorld, emit_events, new_world
from hookproof.simulator.world import github_shapes as gh
from tests.support import require_service

NODE_DIR = Path(__file__).resolve().parents[2] / "examples" / "receivers" / "node"
SCHEMA_FILE = NODE_DIR / "node_modules" / "@octokit" / "webhooks-schemas" / "schema.json"
PROFILE = get_profile("github")


@pytest.fixture(scope="module")
def definitions() -> dict[str, Any]:
    """The schema's definitions exactly as published: nothing added, nothing relaxed (a label's
    ``additionalProperties: false`` and every other one enforced, as ajv enforces them)."""
    if not SCHEMA_FILE.is_file():
        require_service("@octokit/webhooks-schemas", f"run `npm ci` in {NODE_DIR.name}'s folder first")
    return json.loads(SCHEMA_FILE.read_text())["definitions"]  # type: ignore[no-any-return]


def validation_errors(definitions: dict[str, Any], definition: str, body: Any) -> list[str]:
    """Every error of `body` against `definition` (JSON path, message), formats checked."""
    schema = {"$ref": f"#/definitions/{definition}", "definitions": definitions}
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return [f"{e.json_path}: {e.message[:200]}" for e in validator.iter_errors(body)]


def rendered_events() -> Iterator[Event]:
    """Every event of three seeds' lifecycles, the catalog's and the storm's stories (the
    same-second ones too, and oversized-payload's push of many commits) and each type's script."""
    for seed in (1, 2, 3):
        world = GitHubWorld(seed)
        world.lifecycle()
        world.effect_story()
        world.state_story()
        world.distinct_story()
        world.repeat_story()
        world.same_second_story()
        world.pull_request_same_second_story()
        world.quiet_event()
        if seed == 1:
            world.big_event(OVERSIZE_BYTES)  # oversized-payload's push of many commits
        yield from world.events
    for seed in (4, 5):  # to an App sent the checks' events: each push's CI, the re-runs
        world = GitHubWorld(seed)
        world.sent_only(lambda t: True)
        world.lifecycle()
        world.effect_story()
        world.state_story()
        world.check_story()
        yield from world.events
    for event_type in GITHUB_EVENT_TYPES + GITHUB_CHECK_TYPES:
        yield from emit_events(new_world("github", 7), event_type, 2)


def schema_name(event_type: str) -> str:
    """The schema definition of an Octokit event type: ``issues.opened`` -> ``issues$opened``."""
    name, _, action = event_type.partition(".")
    return f"{name}${action or 'event'}"


def test_every_event_type_is_rendered() -> None:
    assert {e.type for e in rendered_events()} == set(GITHUB_EVENT_TYPES + GITHUB_CHECK_TYPES)


#: The one error the pinned schema reports on what GitHub sends: ``installation.created``'s
#: ``requester`` is null when an owner installs the App without an approval request, and
#: ``installation$created`` (7.6.1) allows only a user there: octokit/webhooks#939 shows
#: such a delivery refused by ajv; GitHub's own webhook description allows null
#: (``@octokit/openapi-webhooks-types`` 12.1.0: ``requester?: webhooks_user``, a user or null).
SCHEMA_GAPS: dict[str, list[str]] = {"installation$created": ["$.requester: None is not of type 'object'"]}


def test_every_payload_validates_against_octokit_webhooks_schemas(definitions: dict[str, Any]) -> None:
    checked = 0
    listing: set[str] = set()  # the checks' types validated with a pull request listed
    for event in rendered_events():
        body = json.loads(PROFILE.envelope(event).body)
        name = schema_name(event.type)
        errors = validation_errors(definitions, name, body)
        assert errors == SCHEMA_GAPS.get(name, []), f"{event.type} does not match {name}"
        checked += 1
        obj = body.get("check_suite") or body.get("check_run") or {}
        if obj.get("pull_requests"):
            listing.add(event.type)
    assert checked > 100
    # a pull request's head commit gets its check suite too, its runs listing the pull request
    assert {"check_suite.requested", "check_suite.completed", "check_run.created", "check_run.completed"} <= listing


def test_the_schema_gap_is_the_requester_alone(definitions: dict[str, Any]) -> None:
    """With a user as ``requester`` (a member's request an owner approved), the same body validates."""
    event = GitHubWorld(2).install()
    body = json.loads(PROFILE.envelope(event).body)
    assert body["requester"] is None and list(body) == ["action", "installation", "repositories", "requester",
                                                        "sender"]
    assert validation_errors(definitions, "installation$created", {**body, "requester": body["sender"]}) == []


def test_the_schema_refuses_a_field_github_does_not_send(definitions: dict[str, Any]) -> None:
    """The check has teeth: a label with ``archived_at``/``archived_by`` is refused, as ajv
    refused it in ``issues$labeled`` at ``/issue/labels/0`` and ``/label``. The pinned schema's
    ``label``, ``@octokit/openapi-webhooks-types`` 12.1.0's ``webhooks_label`` and the REST
    API's ``label`` (``@octokit/openapi-types`` 29.0.1) are id, node_id, url, name, description,
    color, default; GitHub's newer REST description (2026-03-10: its ``webhooks_label``, whose
    ``archived_by`` githubkit-schemas 26.10.21 overrides to null or an object) adds the two,
    nullable. The older schema refuses them, so the world leaves them out (`github_shapes.label`)."""
    world = GitHubWorld(3)
    world.label_issue(world.open_issue())
    body = json.loads(PROFILE.envelope(world.events[-1]).body)
    assert validation_errors(definitions, "issues$labeled", body) == []
    archived = {"archived_at": None, "archived_by": None}
    body["label"] = {**body["label"], **archived}
    body["issue"]["labels"][0] = {**body["issue"]["labels"][0], **archived}
    errors = validation_errors(definitions, "issues$labeled", body)
    assert errors == [
        "$.issue.labels[0]: Additional properties are not allowed ('archived_at', 'archived_by' were unexpected)",
        "$.label: Additional properties are not allowed ('archived_at', 'archived_by' were unexpected)"]


def test_the_unknown_type_is_a_real_github_event(definitions: dict[str, Any]) -> None:
    """The unknown-event-type scenario sends ``star.created``: GitHub's own shape, not a made-up one."""
    event = GitHubWorld(5).unknown_event()
    assert validation_errors(definitions, "star$created", json.loads(PROFILE.envelope(event).body)) == []


def test_delivery_headers_are_githubs() -> None:
    world = GitHubWorld(9)
    for event in world.lifecycle():
        envelope = PROFILE.envelope(event)
        headers = envelope.headers
        name = event.type.partition(".")[0]
        assert set(headers) == {"Content-Type", "Accept", "User-Agent", "X-GitHub-Event", "X-GitHub-Delivery", "X-GitHub-Hook-ID",
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
    kinds = {e.type: (e.business_key or "").split(":")[0] for e in events if e.type != "push"}
    assert [(e.business_key or "").split(":")[0] for e in events if e.type == "push"] == [
        "ci", "ci", "", "ci", "ci", ""]  # 3 commits, a new branch, its deletion, a force push, a merge, a tag
    assert kinds == {
        "ping": "", "issues.opened": "comment", "issues.labeled": "", "issue_comment.created": "reply",
        "issues.edited": "", "issues.closed": "", "issues.reopened": "", "pull_request.opened": "ci",
        "pull_request.synchronize": "ci", "pull_request.closed": "", "installation.created": "install",
        "installation.deleted": "", "issues.unlabeled": "", "installation.suspend": "", "installation.unsuspend": "",
        "installation_repositories.added": "", "installation_repositories.removed": "",
        "issue_comment.edited": "", "issue_comment.deleted": "", "pull_request.edited": "",
    }
    issue = [e for e in events if e.object_id == f"{full}#{issue_no}"]
    assert [(e.type, e.status, e.version) for e in issue] == [
        ("issues.opened", "open", 1), ("issues.labeled", "open", 2), ("issue_comment.created", "open", 3),
        ("issues.edited", "open", 4), ("issue_comment.created", "open", 5), ("issue_comment.edited", "open", 6),
        ("issue_comment.deleted", "open", 7), ("issues.unlabeled", "open", 8), ("issues.closed", "closed", 9),
        ("issues.reopened", "open", 10)]
    created, edited, deleted = (e.extra["payload"] for e in issue[4:7])
    assert created["comment"]["id"] == edited["comment"]["id"] == deleted["comment"]["id"]
    assert edited["changes"] == {"body": {"from": created["comment"]["body"]}}
    assert deleted["comment"] == edited["comment"] != created["comment"]
    assert [p["issue"]["comments"] for p in (created, edited, deleted)] == [2, 2, 1]
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


def test_every_label_has_githubs_seven_fields_and_default_labels_say_so() -> None:
    """Every label in every body has exactly the schema's fields (no ``archived_at`` or
    ``archived_by``: the pinned schema refuses them, `test_the_schema_refuses_a_field_github_does_not_send`), and GitHub's default labels
    (``bug``, ``enhancement``) say ``default: true``, a label of the team's own (``triage``) false."""
    labels = []
    for event in rendered_events():
        body = json.loads(PROFILE.envelope(event).body)
        for found in (body.get("label"), *((body.get("issue") or {}).get("labels") or [])):
            if found:
                labels.append(found)
    assert labels and {tuple(lab) for lab in labels} == {
        ("id", "node_id", "url", "name", "color", "default", "description")}
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


def test_a_push_carries_its_repository_in_the_push_events_legacy_shape() -> None:
    """GitHub's push example (docs ``webhook-events-and-payloads``) has the repository's
    ``created_at`` and ``pushed_at`` as Unix integers (``1557933565``), ``updated_at`` ISO,
    ``url`` the web URL, and ``stargazers``/``master_branch``; an organization's repository
    names it in ``organization``. Every other event's repository has ISO strings and the
    API URL. (The schema takes an integer or a date-time string, so it cannot tell.)"""
    world = GitHubWorld(4, start_us=1_700_000_000_000_000)
    events = world.lifecycle()
    pushes = [e.extra["payload"] for e in events if e.type == "push"]
    assert pushes
    for payload in pushes:
        repo = payload["repository"]
        assert type(repo["created_at"]) is int and type(repo["pushed_at"]) is int
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", repo["updated_at"])
        assert repo["pushed_at"] >= repo["created_at"] >= 1_700_000_000
        assert repo["url"] == repo["html_url"] == f"https://github.com/{repo['full_name']}"
        assert (repo["stargazers"], repo["master_branch"]) == (0, "main")
        assert repo["organization"] == repo["owner"]["login"] == payload["organization"]["login"]
        assert (repo["owner"]["name"], repo["owner"]["email"]) == (repo["owner"]["login"], None)
        if payload["commits"]:
            assert payload["head_commit"]["timestamp"] == gh.iso(repo["pushed_at"])
    others = [e.extra["payload"]["repository"] for e in events if e.type != "push" and "repository" in e.extra["payload"]]
    assert others and all(isinstance(r["created_at"], str) and isinstance(r["pushed_at"], str)
                          and r["url"].startswith("https://api.github.com/repos/") and "stargazers" not in r
                          for r in others)


def test_pushes_vary_as_github_sends_them(definitions: dict[str, Any]) -> None:
    """Several commits in one push, a new branch, its deletion, a force push, a merge's push
    and a tag, each in GitHub's push shape (``created``, ``deleted``, ``forced``, ``base_ref``,
    ``compare``, ``commits``, ``head_commit``) and valid against ``push$event``; a CI run is
    owed only where commits were pushed."""
    world = GitHubWorld(4, start_us=1_700_000_000_000_000)
    pushes = [e for e in world.lifecycle() if e.type == "push"]
    full = world.repository()["full_name"]
    web = f"https://github.com/{full}/compare/"
    zero = "0" * 40
    seen = []
    for event in pushes:
        p = event.extra["payload"]
        assert validation_errors(definitions, "push$event", json.loads(PROFILE.envelope(event).body)) == []
        head = p["head_commit"]
        seen.append((p["ref"].rsplit("/", 1)[0], p["created"], p["deleted"], p["forced"], p["base_ref"],
                     len(p["commits"]), None if head is None else head["distinct"], event.business_key is not None))
        if p["commits"]:
            assert [c["id"] for c in p["commits"]][-1] == p["after"] == head["id"]
            assert event.business_key == f"ci:{full}@{p['after']}"
        if p["deleted"]:
            assert (p["after"], head, p["compare"]) == (zero, None, f"{web}{p['before'][:12]}...000000000000")
        elif p["created"]:
            assert p["before"] == zero and p["compare"] == web + p["ref"].rsplit("/", 1)[1]
        else:
            assert p["compare"] == f"{web}{p['before'][:12]}...{p['after'][:12]}"
    assert seen == [
        ("refs/heads", False, False, False, None, 3, True, True),  # three commits at once
        ("refs/heads", True, False, False, None, 1, True, True),  # a new branch with its commit
        ("refs/heads", False, True, False, None, 0, None, False),  # that branch deleted
        ("refs/heads", False, False, True, None, 1, True, True),  # a force push
        ("refs/heads", False, False, False, None, 1, True, True),  # the merge commit
        ("refs/tags", True, False, False, "refs/heads/main", 0, False, False),  # a tag on the head
    ]
    branch, deleted = pushes[1].extra["payload"], pushes[2].extra["payload"]
    assert deleted["ref"] == branch["ref"] and deleted["before"] == branch["after"]
    forced, merged, tag = (pushes[i].extra["payload"] for i in (3, 4, 5))
    assert forced["before"] == pushes[0].extra["payload"]["after"]
    assert tag["after"] == merged["after"] == world.head and tag["ref"] == "refs/tags/v1.1.0"


def test_an_uninstall_names_the_repositories_it_could_access() -> None:
    """``installation.deleted`` carries ``repositories``, as the ``installation.created`` of that
    installation listed them; the home installation's is the world's repository."""
    world = GitHubWorld(5)
    created = world.install()
    deleted = world.uninstall(created.object_id)
    assert deleted.extra["payload"]["repositories"] == created.extra["payload"]["repositories"] != []
    home = world.uninstall(world.account).extra["payload"]["repositories"]
    repo = world.repository()
    assert home == [{"id": repo["id"], "node_id": repo["node_id"], "name": repo["name"],
                     "full_name": repo["full_name"], "private": True}]


def test_an_installation_is_suspended_unsuspended_and_its_repositories_change() -> None:
    """``installation.suspend`` sets ``suspended_at``/``suspended_by`` (the schema's allOf requires
    both), ``unsuspend`` nulls them; ``installation_repositories.added``/``.removed`` list one
    repository each (the other list empty); each a newer version of the installation, its
    status ``active``, ``suspended`` or ``deleted`` (the object kind ``installation``)."""
    world = GitHubWorld(6)
    events = [e for e in world.lifecycle() if e.object_type == "installation" and e.type != "ping"]
    assert [(e.type, e.status, e.version) for e in events] == [
        ("installation.created", "active", 1), ("installation_repositories.added", "active", 2),
        ("installation_repositories.removed", "active", 3), ("installation.suspend", "suspended", 4),
        ("installation.unsuspend", "active", 5), ("installation.deleted", "deleted", 6)]
    created, added, removed, suspend, unsuspend, deleted = (e.extra["payload"] for e in events)
    assert created["installation"]["suspended_at"] is None
    assert suspend["installation"]["suspended_by"] == world.sender
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", suspend["installation"]["suspended_at"])
    assert (unsuspend["installation"]["suspended_at"], unsuspend["installation"]["suspended_by"]) == (None, None)
    assert (added["repositories_removed"], len(added["repositories_added"])) == ([], 1)
    assert (removed["repositories_added"], removed["repositories_removed"]) == ([], added["repositories_added"])
    assert added["repository_selection"] == "selected" and added["requester"] is None
    assert suspend["repositories"] == unsuspend["repositories"] == deleted["repositories"] == created["repositories"]
    assert {e.object_id for e in events} == {str(created["installation"]["id"])}


def test_an_issue_is_unlabeled() -> None:
    """``issues.unlabeled`` carries the removed label; the issue no longer lists it."""
    world = GitHubWorld(6)
    issue = world.open_issue()
    world.label_issue(issue)
    world.label_issue(issue)
    world.unlabel_issue(issue)
    labeled, unlabeled = world.events[-2].extra["payload"], world.events[-1].extra["payload"]
    assert unlabeled["action"] == "unlabeled" and unlabeled["label"] == labeled["label"]
    assert [lab["name"] for lab in unlabeled["issue"]["labels"]] == ["bug"]
