"""GitHub's checks: ``check_suite`` and ``check_run``, a CI App's events, sent only to an App listing them.

After a push to the default branch GitHub makes the App's check suite for its head and sends
``check_suite.requested``; the App creates its check runs (``check_run.created``: ``lint`` queued,
``test`` in progress), completes them (``check_run.completed``) and GitHub completes the suite
(``check_suite.completed``); a user may re-run the suite or one run (``rerequested``) or click a
run's button (``check_run.requested_action``) (docs.github.com "Webhook events and payloads",
``check_suite``, ``check_run``; REST "Check suites", "Check runs"). The payloads validate
against ``@octokit/webhooks-schemas`` in `tests/simulator/test_github_fidelity.py`.
"""

from __future__ import annotations

from pathlib import Path

from hookproof.simulator.events import Event
from hookproof.simulator.profiles import get_profile
from hookproof.simulator.world import GITHUB_CHECK_TYPES, GITHUB_EVENT_TYPES, GitHubWorld, emit_events
from hookproof.simulator.world.github_lifecycle import CHECKS_RUN_CI
from hookproof.simulator.world.registry import world_event_types

STORIES = ("lifecycle", "effect_story", "state_story", "distinct_story", "repeat_story", "same_second_story",
           "pull_request_same_second_story")


def told(seed: int, story: str, checks: bool) -> tuple[GitHubWorld, list[Event]]:
    """A world of `seed` (a fixed clock) that told `story` to an App sent the checks or not: the
    world and the story's events."""
    world = GitHubWorld(seed, start_us=1_700_000_000_000_000)
    world.sent_only(lambda t: checks and t in GITHUB_CHECK_TYPES)
    return world, getattr(world, story)()


def facts(events: list[Event], *, checks: bool = False) -> list[tuple[object, ...]]:
    """Each event's id, type, object, version, status and key; with `checks`, the key as an App
    sent the checks is owed it: none for a push's or a pull request's CI (`CHECKS_RUN_CI`)."""
    return [(e.id, e.type, e.object_id, e.version, e.status,
             None if checks and e.type in CHECKS_RUN_CI else e.business_key) for e in events]


def test_an_app_not_sent_the_checks_is_told_what_it_always_was() -> None:
    """The profile sends the checks only to an App subscribed to them; a world not told it sends
    them emits none, and one told so tells every story with the same other events (id, type,
    object, version, status, key, but for the ``ci:`` a push or a pull request owes an App not on
    the checks API): the checks draw their ids from a generator of their own. The
    state story walks one push's check runs besides (a push of its own, after the rest)."""
    assert set(get_profile("github").event_types()) == set(GITHUB_EVENT_TYPES)
    assert set(get_profile("github", subscribed=GITHUB_CHECK_TYPES).event_types()) == {
        *GITHUB_EVENT_TYPES, *GITHUB_CHECK_TYPES}
    assert world_event_types("github") == GITHUB_EVENT_TYPES + GITHUB_CHECK_TYPES
    sent: set[str] = set()
    for seed in (1, 2):
        for story in STORIES:
            (plain, before), (_, after) = told(seed, story, False), told(seed, story, True)
            assert not [e for e in plain.events if e.type in GITHUB_CHECK_TYPES]
            assert facts(before, checks=True) == facts([e for e in after if e.type not in GITHUB_CHECK_TYPES]), story
            assert not [e for e in after if e.type in CHECKS_RUN_CI and e.business_key is not None], story
            sent |= {e.type for e in after if e.type in GITHUB_CHECK_TYPES}
        world, walked = told(seed, "state_story", True)
        runs = [e for e in walked if e.object_type == "check_run"]
        assert [(e.type, e.status) for e in runs] == [("check_run.created", "queued"), ("check_run.created",
                                                      "in_progress"), ("check_run.completed", "completed"),
                                                     ("check_run.completed", "completed")]
    assert sent == set(GITHUB_CHECK_TYPES)


def test_a_push_runs_the_app_s_ci() -> None:
    """A push to the default branch: the suite requested (its key ``suite:``), ``lint`` created
    queued, ``test`` created in progress, ``test`` and ``lint`` completed, the suite completed;
    only the request owes an effect; each run's events carry its status."""
    world = GitHubWorld(3)
    world.sent_only(lambda t: True)
    head = world.push()
    suite = world.suite_of(head)
    assert suite is not None
    lint, test = world.runs_of(suite)
    events = world.events[1:]
    full = world.repository()["full_name"]
    assert [(e.type, e.object_id, e.status, e.business_key) for e in events] == [
        ("check_suite.requested", suite, None, f"suite:{full}@{head}:{suite}"),
        ("check_run.created", lint, "queued", None),
        ("check_run.created", test, "in_progress", None),
        ("check_run.completed", test, "completed", None),
        ("check_run.completed", lint, "completed", None),
        ("check_suite.completed", suite, None, None),
    ]
    bodies = [e.extra["payload"] for e in events]
    assert [b["check_suite"]["status"] if "check_suite" in b and "check_run" not in b else
            b["check_run"]["check_suite"]["status"] for b in bodies] == [
        "queued", "queued", "in_progress", "in_progress", "in_progress", "completed"]
    assert bodies[0]["check_suite"]["head_sha"] == head == bodies[0]["check_suite"]["after"]
    assert bodies[0]["check_suite"]["head_branch"] == "main" and bodies[0]["check_suite"]["conclusion"] is None
    assert bodies[-1]["check_suite"]["conclusion"] == "success"
    assert bodies[-1]["check_suite"]["latest_check_runs_count"] == 2
    completed = bodies[3]["check_run"]
    assert (completed["status"], completed["conclusion"]) == ("completed", "success")
    assert completed["started_at"] < completed["completed_at"]
    assert bodies[1]["check_run"]["completed_at"] is None


def test_an_app_sent_the_checks_owes_its_ci_per_suite_not_per_push() -> None:
    """An App sent the checks runs its CI per requested suite (``suite:``); its push and pull
    request events are still sent, with their states, and owe no ``ci:`` job of their own. The
    same world not told the checks owes the ``ci:`` jobs, as an App on pushes alone."""
    for checks in (True, False):
        world = GitHubWorld(4)
        world.sent_only(lambda t, checks=checks: checks)
        world.push()
        pr = world.open_pull_request()
        world.synchronize(pr)
        keyed = [(e.type, (e.business_key or "").split(":")[0]) for e in world.events if e.business_key]
        ci = [("push", "ci"), ("pull_request.opened", "ci"), ("pull_request.synchronize", "ci")]
        assert keyed == ([("check_suite.requested", "suite")] * 3 if checks else ci)
        assert [e.status for e in world.events if e.type.startswith("pull_request.")] == ["open", "open"]


def test_a_check_suite_is_requested_for_every_branch_s_push_and_lists_its_pull_request() -> None:
    """GitHub makes a check suite for every push to any branch (docs.github.com "Using the REST
    API to interact with checks"): a new branch's push, a pull request's head when it is opened
    and each head a synchronize pushes, each with its own ``suite:`` key (by head sha and suite
    id); the suite's ``head_branch`` is the branch, its ``pull_requests`` (and its runs') the open
    pull request whose head it is, as ``check-run-pull-request`` has it."""
    world = GitHubWorld(4)
    world.sent_only(lambda t: True)
    branch = world.push_branch()
    pr = world.open_pull_request()
    after = world.synchronize(pr)
    full = world.repository()["full_name"]
    requested = [e for e in world.events if e.type == "check_suite.requested"]
    suites = [e.extra["payload"]["check_suite"] for e in requested]
    obj = world.get(pr)
    assert [(s["head_branch"], s["head_sha"]) for s in suites] == [
        (branch, world.event(world.events[0].id).extra["payload"]["after"]),
        (obj["head"]["ref"], world.events[[e.type for e in world.events].index("pull_request.opened")]
         .extra["payload"]["pull_request"]["head"]["sha"]),
        (obj["head"]["ref"], after)]
    assert [e.business_key for e in requested] == [f"suite:{full}@{s['head_sha']}:{s['id']}" for s in suites]
    assert suites[0]["pull_requests"] == [] and suites[0]["before"] == "0" * 40
    repo = {"id": obj["base"]["repo"]["id"], "url": obj["base"]["repo"]["url"], "name": obj["base"]["repo"]["name"]}
    for suite, sha in zip(suites[1:], (suites[1]["head_sha"], after)):
        assert suite["pull_requests"] == [{
            "url": obj["url"], "id": obj["id"], "number": obj["number"],
            "head": {"ref": obj["head"]["ref"], "sha": sha, "repo": repo},
            "base": {"ref": "main", "sha": obj["base"]["sha"], "repo": repo}}]
    assert suites[2]["before"] == suites[1]["head_sha"]
    runs = [e.extra["payload"]["check_run"] for e in world.events if e.type.startswith("check_run.")]
    assert len(runs) == 12 and all(r["pull_requests"] == r["check_suite"]["pull_requests"] for r in runs)
    assert [r["check_suite"]["head_branch"] for r in runs] == [branch] * 4 + [obj["head"]["ref"]] * 8
    # a branch-keyed App meets two suites of one branch: two suite ids, two keys, two jobs owed
    assert len({e.business_key for e in requested[1:]}) == 2


def test_a_pull_request_pushed_to_and_merged_in_one_second_runs_ci_after_it() -> None:
    """`bot_merge`: the synchronize's suite is requested once the second's changes are made,
    listing the pull request as it was pushed (open)."""
    world = GitHubWorld(4)
    world.sent_only(lambda t: True)
    pr = world.open_pull_request()
    start = len(world.events)
    world.bot_merge(pr)
    types = [e.type for e in world.events[start:]]
    assert types[:3] == ["pull_request.synchronize", "pull_request.closed", "push"]
    assert types.count("check_suite.requested") == 2  # the pull request's head's, the merge commit's
    head = world.events[start].extra["payload"]["after"]
    (suite,) = [e.extra["payload"]["check_suite"] for e in world.events[start:]
                if e.type == "check_suite.requested" and e.extra["payload"]["check_suite"]["head_sha"] == head]
    assert [p["number"] for p in suite["pull_requests"]] == [world.get(pr)["number"]]


def test_re_runs_owe_a_job_each_and_make_new_runs() -> None:
    """`check_story`: a push's CI, the whole suite re-run (``rerun:`` told apart by the suite's
    ``updated_at``), new runs, the new ``test`` run re-run alone (``rerun-run:``), a third run
    made, that run re-run again (a second "Re-run" of ``test``: its own ``rerun-run:``, by the
    run's id), an ``autofix`` asked of the new ``lint`` (``action:``), the whole suite re-run a
    second time (its own ``rerun:``: the suite keeps its id, its ``updated_at`` moved); no
    completed run is reset."""
    world = GitHubWorld(4)
    events = world.check_story()
    assert not world.checks_sent  # told as to an App sent them, and left as it was
    ci = ["check_run.created", "check_run.created", "check_run.completed", "check_run.completed",
          "check_suite.completed"]
    one = ["check_run.rerequested", "check_run.created", "check_run.completed", "check_suite.completed"]
    assert [e.type for e in events] == ["push", "check_suite.requested", *ci, "check_suite.rerequested", *ci,
                                        *one, *one, "check_run.requested_action", "check_run.requested_action",
                                        "check_suite.rerequested", *ci]
    suite = events[1].object_id
    runs = world.runs_of(suite)
    assert len(runs) == 8 and len(set(runs)) == 8
    full = world.repository()["full_name"]
    head = events[0].extra["payload"]["after"]
    reruns = [e for e in events if e.type == "check_suite.rerequested"]
    bodies = [e.extra["payload"]["check_suite"] for e in reruns]
    assert [e.business_key for e in reruns] == [f"rerun:{full}@{head}:{suite}:{b['updated_at']}" for b in bodies]
    assert [b["id"] for b in bodies] == [int(suite)] * 2 and bodies[0]["updated_at"] < bodies[1]["updated_at"]
    assert bodies[0]["updated_at"] > events[6].extra["payload"]["check_suite"]["updated_at"]
    assert (events[13].object_id, events[13].status) == (runs[3], "completed")
    assert events[13].business_key == f"rerun-run:{full}@{head}:{runs[3]}"
    assert (events[17].object_id, events[17].status) == (runs[4], "completed")  # the run the first re-run made
    assert events[17].business_key == f"rerun-run:{full}@{head}:{runs[4]}"
    assert {events[13].extra["payload"]["check_run"]["name"], events[17].extra["payload"]["check_run"]["name"]} \
        == {"test"}
    clicks = events[21:23]  # the button clicked twice: two requests, two deliveries, two actions owed
    assert [(e.object_id, e.business_key) for e in clicks] == [
        (runs[2], f"action:{full}@{head}:{runs[2]}:autofix:{e.id}") for e in clicks]
    assert clicks[0].id != clicks[1].id
    assert [e.extra["payload"]["requested_action"] for e in clicks] == [{"identifier": "autofix"}] * 2
    assert clicks[0].extra["payload"] == clicks[1].extra["payload"]  # the payload tells the clicks apart not
    keyed = [e.business_key for e in events if e.business_key]
    assert len(keyed) == len(set(keyed)) == 7  # the suite, its two re-runs, a check's two re-runs, two actions
    for run in runs:  # each run's statuses only move forward, its versions up
        lives = [(e.status, e.version) for e in events if e.object_id == run]
        assert lives[-1][0] == "completed" and [v for _, v in lives] == sorted({v for _, v in lives})


def test_send_makes_each_checks_type() -> None:
    """``hookproof send --event check_run.created`` and the others: a push's CI (two runs: two
    ``check_run.created`` and ``.completed``, one suite requested and completed), or one re-run
    or action after it, whether or not the world was told the App is sent them; the world is
    left as it was told."""
    counts = {"check_suite.requested": 1, "check_suite.completed": 1, "check_run.created": 2,
              "check_run.completed": 2, "check_suite.rerequested": 1, "check_run.rerequested": 1,
              "check_run.requested_action": 1}
    assert set(counts) == set(GITHUB_CHECK_TYPES)
    for event_type, count in counts.items():
        world = GitHubWorld(9)
        made = emit_events(world, event_type)
        assert [e.type for e in made] == [event_type] * count and not world.checks_sent
        assert all(e.extra["payload"]["action"] == event_type.split(".")[1] for e in made)


def test_the_checks_are_the_app_s_own_and_delivered_under_their_event_names() -> None:
    """Every check suite and run names the App itself (`github_shapes.APP_ID`, its slug), as the
    hook's ``X-GitHub-Hook-Installation-Target-ID`` does; ``X-GitHub-Event`` is ``check_suite`` or
    ``check_run``; the installation is the world's."""
    from hookproof.simulator.world import github_shapes as gh

    world = GitHubWorld(6)
    profile = get_profile("github", subscribed=GITHUB_CHECK_TYPES)
    for event in world.check_story()[1:]:
        envelope = profile.envelope(event)
        body = event.extra["payload"]
        obj = body.get("check_run") or body["check_suite"]
        assert envelope.headers["X-GitHub-Event"] == event.type.split(".")[0]
        assert envelope.headers["X-GitHub-Hook-Installation-Target-ID"] == str(obj["app"]["id"]) == str(gh.APP_ID)
        assert obj["app"]["slug"] == gh.APP_SLUG and body["installation"]["id"] == world.installation_id
        assert list(body)[:2] == ["action", event.type.split(".")[0]]


def test_a_github_app_listing_some_actions_of_an_event_is_noted(tmp_path: Path) -> None:
    """A GitHub App subscribes to whole events: ``enabled_events`` listing ``check_suite.requested``
    but not its other actions is accepted (hookproof sends the listed ones) with a note naming the
    events, the actions left unsent and the names to list instead; bare names, or every action
    of an event, get none."""
    from hookproof.config import load_config
    from hookproof.unsent import unmodelled_note

    def note(enabled: list[str]) -> str | None:
        path = tmp_path / "hookproof.toml"
        path.write_text("\n".join([
            "[target]", 'url = "http://127.0.0.1:9/webhooks"', 'profile = "github"', 'secret = "gh_secret_0123"',
            f"enabled_events = [{', '.join(repr(e).replace(chr(39), chr(34)) for e in enabled)}]", "",
            "[observer]", 'kind = "sql"', 'url = "sqlite:///x.sqlite"', 'effects = "SELECT business_key FROM e"', ""]),
            encoding="utf-8")
        return unmodelled_note(load_config(path))

    assert note(["check_suite.requested", "check_run.rerequested", "check_run.requested_action",
                 "check_suite.rerequested"]) == (
        "target.enabled_events lists some actions of check_suite, check_run, but a GitHub App subscribes to whole "
        "events and GitHub sends it every action of them: hookproof sends only the listed ones, so the handling of "
        "check_suite.completed, check_run.created, check_run.completed is not certified (list \"check_suite\", "
        "\"check_run\" in target.enabled_events to be sent every action)")
    assert note(["check_suite", "check_run", "push", "pull_request"]) is None
    assert note([*GITHUB_EVENT_TYPES, *GITHUB_CHECK_TYPES]) is None
