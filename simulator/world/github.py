"""The repository world: a GitHub App's view of one organization, deterministic from a seed.

`GitHubWorld(seed)` holds an organization, a repository, the App's installation, issues,
issue comments, pull requests and pushed commits, in GitHub's own shapes
(`simulator.world.github_shapes`). Each operation applies an allowed transition, bumps
the object's version and emits the event GitHub sends to the App's webhook, with the
full payload (``action``, the object, ``repository``, ``organization``, ``installation``,
``sender``) kept in ``Event.extra["payload"]``; the github profile signs and sends it.

Events (``Event.type`` is Octokit's ``<X-GitHub-Event>.<action>``, or the bare event
name for ``push`` and ``ping``, which have no action), from GitHub's docs
``webhook-events-and-payloads``:
``issues.opened|edited|closed|reopened|labeled|unlabeled``, ``issue_comment.created|edited|deleted``,
``pull_request.opened|edited|synchronize|closed|reopened`` (``merged`` true or false), ``push`` (several
commits, a new or deleted branch, a force push, a tag), ``installation.created|deleted|suspend|unsuspend``,
``installation_repositories.added|removed``, ``ping``; and, only to an App told it is sent them
(`sent_only`, an App whose ``target.enabled_events`` lists them), the checks' ``check_suite.requested|
rerequested|completed`` and ``check_run.created|requested_action|rerequested|completed``.

``Event.id`` is the delivery's GUID (``X-GitHub-Delivery``): GitHub documents it as the
identifier of the event, kept on redelivery. ``Event.account`` is the installation id
(digits). Timestamps have GitHub's one-second resolution, and every change moves the
clock by at least a second, so ``updated_at`` orders an object's versions.

Business keys (`github_lifecycle.BUSINESS_KEYS`: the effects a CI/triage GitHub App performs once):
``comment:{full_name}#{number}`` per opened issue (a welcome comment),
``reply:{full_name}#{number}:{comment id}`` per issue comment (a bot reply),
``ci:{full_name}@{sha}`` per pushed head (``push`` of new commits, ``pull_request.opened``,
``pull_request.synchronize``; none for a deleted branch or a pushed tag; none at all for an App
sent the checks, whose CI runs per requested check suite: `github_lifecycle.CHECKS_RUN_CI`) and
``install:{installation id}`` per installation;
the checks' (`github_lifecycle.BUSINESS_KEYS`): one CI job per requested check suite
(``suite:{full_name}@{sha}:{suite id}``), one per re-run of a suite or of a check run, one per
action a user asked of a check run.
Issues (``open``/``closed``), pull requests (``open``/``closed``/``merged``) and
installations (``active``/``suspended``/``deleted``) and check runs (``queued``/``in_progress``/
``completed``) are stateful: their events carry the status the receiver must end in.

The checks (docs.github.com "Webhook events and payloads", ``check_suite`` and ``check_run``;
REST "Check suites" and "Check runs"): told the endpoint is sent them (`sent_only`), each push to
any branch (the default branch, a new branch, a pull request's head when it is opened or
synchronized) makes the App's check suite for its head (``check_suite.requested``, ``head_branch``
the branch, ``pull_requests`` the open pull request whose head it is: `_ci`), and the
App (played by the world) creates two check runs, ``lint`` queued and ``test`` already in
progress (``check_run.created`` each: GitHub sends ``check_run`` only when a run is created,
completed, re-requested or an action requested, so a run moved to ``in_progress`` by an update
sends nothing, and its ``in_progress`` is seen only when created so), completes them
(``check_run.completed``) and GitHub completes the suite (``check_suite.completed``). A re-run of
the suite (``check_suite.rerequested``) or of one run (``check_run.rerequested``) makes new check
runs, as GitHub Actions does: a completed run is never reset. A click of a run's button
(``check_run.requested_action``) is a request of its own: two clicks, two deliveries, two
``action:`` keys (`github_lifecycle.PER_DELIVERY`). Check ids come from a generator of
their own and the check events move the clock only by their own seconds, so an App sent none of
them is told exactly the stories it always was.
Simplification: pushes to a pull request's branch are sent as ``pull_request`` events
only (no separate ``push``), so one head sha is one CI run.
"""

from __future__ import annotations

import copy
import json
import random
import time
import uuid
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping

from faker import Faker

from hookproof.simulator.errors import WorldError
from hookproof.simulator.events import Event
from hookproof.simulator.world import github_shapes as gh
from hookproof.simulator.world.github_lifecycle import (
    BUSINESS_KEYS,
    CHECKS_RUN_CI,
    GITHUB_TRANSITIONS,
    ISSUE_TYPES,
    PER_DELIVERY,
    STATEFUL_TYPES,
)
from hookproof.simulator.world.records import Record, RecordReads

#: ``before`` of a created ref and ``after`` of a deleted one (GitHub's null sha).
_ZERO_SHA = "0" * 40

#: The most commits a push payload lists (docs.github.com "Webhook events and payloads", ``push``:
#: "The array includes a maximum of 2048 commits").
MAX_PUSH_COMMITS = 2048

_LABELS = (("bug", "d73a4a", "Something isn't working"), ("enhancement", "a2eeef", "New feature or request"),
           ("triage", "fbca04", "Needs a first look"))


class GitHubWorld(RecordReads):
    """A GitHub App installed on one organization's repository, deterministic from `seed`.

    Args:
        seed: drives ids, names, shas and the clock's steps.
        livemode: accepted for the engine's sake; GitHub has no test/live flag (ignored).
        account: the installation id as digits (default: drawn from the seed).
        start_us: the clock's start, unix microseconds (default: now, whole second).
        step_us: unused beyond the one-second minimum (kept for the engine's signature).

    Object ids use GitHub's own reference notation: ``{owner}/{repo}#{number}`` for
    issues and pull requests, ``{owner}/{repo}@{sha}`` for pushed commits, the
    installation id (digits) for installations; each business key names one after its
    first colon. ``get``/``version``/``objects`` behave as the billing world's.
    """

    provider = "github"

    def __init__(self, seed: int = 0, *, livemode: bool = False, account: str | None = None,
                 api_version: str = "2022-11-28", start_us: int | None = None, step_us: int = 400_000) -> None:
        self.seed = seed
        self.livemode = False
        self.api_version = api_version
        self._rng = random.Random(seed)
        self._fake = Faker("en_US")
        self._fake.seed_instance(seed * 7919 + 17)
        self._now = (start_us // 1_000_000) if start_us is not None else int(time.time())
        self._in_second = -1  # inside `same_second`: the events emitted in it so far; else -1
        self._objects: dict[str, Record] = {}
        self._comments: dict[int, tuple[str, dict[str, Any]]] = {}  # comment id -> (issue, comment as now)
        self.events: list[Event] = []
        self._event_index: dict[str, Event] = {}
        # One App (``hookproof-ci``) with one webhook: its ids are the same in every world and
        # on every `hookproof send`, as GitHub's are for one App's hook. The two draws stay so
        # every other id of a seed is what it was.
        self._rng.randint(100_000, 999_999)
        self._rng.randint(400_000_000, 499_999_999)
        self.app_id = gh.APP_ID
        self.hook_id = gh.HOOK_ID
        org_id = self._rng.randint(100_000_000, 199_999_999)
        login = f"{self._fake.word()}-{self._fake.word()}-{self._rng.randrange(16**4):04x}"
        self.org = gh.organization(login, org_id)
        self.owner = gh.user(login, org_id, "Organization")
        self.sender = gh.user(self._fake.user_name().replace("_", "-"), self._rng.randint(10_000_000, 99_999_999))
        self.installation_id = int(account) if account and account.isdigit() else self._rng.randint(10_000_000, 99_999_999)
        self.account = str(self.installation_id)
        self._create(str(self.installation_id), "installation",
                     {**gh.installation(self.installation_id, self.owner, self.app_id, created=self._now),
                      "status": "active"})
        created = self._tick()
        self._repo_id = self._rng.randint(600_000_000, 899_999_999)
        self._repo_name = f"{self._fake.word()}-{self._fake.word()}"
        #: installation id -> the repositories it can access (``repositories`` of its events).
        self._installed: dict[str, list[dict[str, Any]]] = {self.account: [{
            "id": self._repo_id, "node_id": gh.node_id("Repository", self._repo_id), "name": self._repo_name,
            "full_name": f"{login}/{self._repo_name}", "private": True}]}
        self._repo_created = created
        self._pushed = created
        self._next_number = 1
        self.head = self._sha()
        self._branches: dict[str, str] = {}
        self._tags = 0
        #: whether the App is sent the checks' events (`sent_only`): then each push to any
        #: branch, a pull request's head too, runs the App's CI (`_ci`)
        self.checks_sent = False
        self._check_rng = random.Random(seed * 7927 + 29)  # the checks' ids, apart from every other id
        self._suites: dict[str, str] = {}  # head sha -> its check suite's id
        self._runs: dict[str, list[str]] = {}  # check suite id -> its check runs' ids, oldest first
        #: (before, after, branch or None, the check suite's pull requests) of pushes made inside `same_second`
        self._pending_ci: list[tuple[str, str, str | None, list[dict[str, Any]]]] = []

    def repository(self) -> dict[str, Any]:
        """The repository object as of now (``open_issues_count`` and ``pushed_at`` current)."""
        open_count = sum(1 for oid in self.objects() if self._objects[oid].object_type in ISSUE_TYPES
                         and self._objects[oid].current["state"] == "open")
        return gh.repository(self.owner, self._repo_name, self._repo_id, created=self._repo_created,
                             updated=self._pushed, pushed=self._pushed, open_issues=open_count)

    def find(self, full_name: str, number: int) -> str | None:
        """The id of issue or pull request `number` of repository `full_name`
        (case-insensitive, as GitHub's URLs), or None."""
        if full_name.lower() != self.repository()["full_name"].lower():
            return None
        oid = f"{self.repository()['full_name']}#{number}"
        return oid if oid in self._objects else None

    # ---- operations ---------------------------------------------------------------
    def ping(self) -> Event:
        """The App's webhook was created (or pinged): emits ``ping``, about the webhook alone
        (object type ``hook``, its id the hook id; no record): its body is ``zen``, ``hook_id``
        and ``hook``, no ``installation`` (docs.github.com "Webhook events and payloads", ``ping``;
        githubkit's ``WebhookPing``), so no receiver can tell which installation it concerns, and
        it owes no state of any object (``status`` None) and no effect."""
        hook = gh.hook(self.hook_id, self.app_id, "https://example.invalid/webhooks", created=self._now)
        body = {"zen": "Design for failure.", "hook_id": self.hook_id, "hook": hook}
        return self._event("ping", str(self.hook_id), body, kind="hook", snapshot=hook)

    def install(self) -> Event:
        """Another organization installs the App: emits ``installation.created``."""
        inst_id = self._rng.randint(10_000_000, 99_999_999)
        org_id = self._rng.randint(100_000_000, 199_999_999)
        login = f"{self._fake.word()}-{self._rng.randrange(16**6):06x}"
        account = gh.user(login, org_id, "Organization")
        oid = str(inst_id)
        self._create(oid, "installation", {**gh.installation(inst_id, account, self.app_id, created=self._tick()),
                                           "status": "active"})
        repo_id = self._rng.randint(600_000_000, 899_999_999)
        name = f"{self._fake.word()}-{self._fake.word()}"
        repos = [{"id": repo_id, "node_id": gh.node_id("Repository", repo_id), "name": name,
                  "full_name": f"{login}/{name}", "private": True}]
        self._installed[oid] = repos
        # ``requester``: null when an owner installs the App (no approval request), as GitHub
        # sends it; the user who asked, when an owner approves a member's request.
        return self._emit("installation.created", oid, {"installation": self._public(oid), "repositories": repos,
                                                        "requester": None, "sender": self.sender},
                          lite=False, account=str(inst_id))

    def uninstall(self, installation: str) -> Event:
        """The App is uninstalled: emits ``installation.deleted`` with the repositories it could access."""
        self._transition(installation, "deleted", {"updated_at": self._tick()})
        inst = self._public(installation)
        repos = self._installed.get(installation, [])
        return self._emit("installation.deleted", installation,
                          {"installation": inst, "repositories": repos, "sender": self.sender},
                          lite=False, account=str(inst["id"]))

    def suspend(self, installation: str) -> Event:
        """An owner suspends the App's installation: emits ``installation.suspend`` (the
        installation's ``suspended_at`` and ``suspended_by`` set; ``requester`` null)."""
        at = self._tick()
        self._transition(installation, "suspended", {"suspended_at": gh.iso(at), "suspended_by": self.sender,
                                                     "updated_at": at}, at=at)
        return self._installation_event("installation.suspend", installation)

    def unsuspend(self, installation: str) -> Event:
        """The suspended installation is resumed: emits ``installation.unsuspend`` (both null again)."""
        at = self._tick()
        self._transition(installation, "active", {"suspended_at": None, "suspended_by": None, "updated_at": at},
                         at=at)
        return self._installation_event("installation.unsuspend", installation)

    def add_repository(self, installation: str) -> Event:
        """A repository added to an active installation's selection: emits
        ``installation_repositories.added`` (``repositories_removed`` empty, ``requester`` null)."""
        if self._typed(installation, "installation")["status"] != "active":
            raise WorldError(f"installation {installation} is not active", object_id=installation)
        repo_id = self._rng.randint(600_000_000, 899_999_999)
        name = f"{self._fake.word()}-{self._fake.word()}"
        login = self._typed(installation, "installation")["account"]["login"]
        added = {"id": repo_id, "node_id": gh.node_id("Repository", repo_id), "name": name,
                 "full_name": f"{login}/{name}", "private": True}
        self._update(installation, {})
        self._installed.setdefault(installation, []).append(added)
        return self._repositories_event("installation_repositories.added", installation, [added], [])

    def remove_repository(self, installation: str) -> Event:
        """The last repository added to an installation's selection removed from it (one always
        stays): emits ``installation_repositories.removed``."""
        repos = self._installed.get(installation, [])
        if len(repos) < 2 or self._typed(installation, "installation")["status"] != "active":
            raise WorldError(f"installation {installation} has no repository to remove", object_id=installation)
        self._update(installation, {})
        removed = repos.pop()
        return self._repositories_event("installation_repositories.removed", installation, [], [removed])

    def open_issue(self) -> str:
        """A new issue: emits ``issues.opened``. Returns its node id."""
        number = self._number()
        issue_id = self._rng.randint(2_000_000_000, 2_999_999_999)
        title = self._fake.sentence(nb_words=6).rstrip(".")
        obj = gh.issue(self.repository(), number, issue_id, self.sender, title=title,
                       body=self._fake.paragraph(nb_sentences=2), created=self._tick())
        oid = f"{self.repository()['full_name']}#{number}"
        self._create(oid, "issue", obj)
        self._emit("issues.opened", oid, {"issue": obj})
        return oid

    def edit_pull_request(self, pull_request: str) -> None:
        """Retitle a pull request: emits ``pull_request.edited`` with ``changes.title.from``."""
        pr = self._typed(pull_request, "pull_request")
        self._update(pull_request, {"title": self._fake.sentence(nb_words=5).rstrip(".")})
        self._emit("pull_request.edited", pull_request, {"number": pr["number"], "changes": {"title": {"from": pr["title"]}},
                                                         "pull_request": None})

    def edit_issue(self, issue: str) -> None:
        """Retitle an issue: emits ``issues.edited`` with ``changes.title.from``."""
        old = self._typed(issue, "issue")["title"]
        self._update(issue, {"title": self._fake.sentence(nb_words=5).rstrip(".")})
        self._emit("issues.edited", issue, {"issue": None, "changes": {"title": {"from": old}}})

    def label_issue(self, issue: str) -> None:
        """Add a label: emits ``issues.labeled`` with the ``label``."""
        current = self._typed(issue, "issue")
        name, color, description = _LABELS[len(current["labels"]) % len(_LABELS)]
        lab = gh.label(self.repository(), name, self._rng.randint(5_000_000_000, 5_999_999_999), color, description)
        self._update(issue, {"labels": [*current["labels"], lab]})
        self._emit("issues.labeled", issue, {"issue": None, "label": lab})

    def unlabel_issue(self, issue: str) -> None:
        """Remove the issue's last label: emits ``issues.unlabeled`` with the removed ``label``."""
        current = self._typed(issue, "issue")
        if not current["labels"]:
            raise WorldError(f"issue {issue} has no label", object_id=issue)
        removed = current["labels"][-1]
        self._update(issue, {"labels": current["labels"][:-1]})
        self._emit("issues.unlabeled", issue, {"issue": None, "label": removed})

    def close_issue(self, issue: str) -> None:
        """Close an issue as completed: emits ``issues.closed``."""
        at = self._tick()
        self._transition(issue, "closed", {"closed_at": gh.iso(at), "state_reason": "completed"}, at=at)
        self._emit("issues.closed", issue, {"issue": None})

    def reopen_issue(self, issue: str) -> None:
        """Reopen a closed issue: emits ``issues.reopened``."""
        if self._typed(issue, "issue")["state"] != "closed":
            raise WorldError(f"issue {issue} is not closed", object_id=issue)
        self._transition(issue, "open", {"closed_at": None, "state_reason": "reopened"})
        self._emit("issues.reopened", issue, {"issue": None})

    def comment(self, issue: str) -> int:
        """Comment on an issue: emits ``issue_comment.created``. Returns the comment id."""
        current = self._typed(issue, "issue")
        self._update(issue, {"comments": current["comments"] + 1})
        comment_id = self._rng.randint(1_000_000_000, 1_999_999_999)
        body = gh.issue_comment(self.get(issue), comment_id, self.sender, body=self._fake.sentence(),
                                created=self._now)
        self._comments[comment_id] = (issue, body)
        self._emit("issue_comment.created", issue, {"issue": None, "comment": body})
        return comment_id

    def edit_comment(self, comment_id: int) -> None:
        """Edit a comment's body: emits ``issue_comment.edited`` with ``changes.body.from`` and
        the comment's new body and ``updated_at`` (the issue's own ``updated_at`` moves too)."""
        issue, old = self._comment(comment_id)
        at = self._tick()
        self._update(issue, {}, at=at)
        edited = {**old, "body": self._fake.sentence(), "updated_at": gh.iso(at)}
        self._comments[comment_id] = (issue, edited)
        self._emit("issue_comment.edited", issue, {"issue": None, "comment": edited,
                                                   "changes": {"body": {"from": old["body"]}}})

    def delete_comment(self, comment_id: int) -> None:
        """Delete a comment: emits ``issue_comment.deleted`` with the comment as it was (the
        issue's ``comments`` one fewer). Raises WorldError for a comment deleted already."""
        issue, body = self._comment(comment_id)
        self._update(issue, {"comments": self._typed(issue, "issue")["comments"] - 1})
        del self._comments[comment_id]
        self._emit("issue_comment.deleted", issue, {"issue": None, "comment": body})

    def comments_of(self, issue: str) -> list[int]:
        """The ids of `issue`'s comments not deleted, oldest first."""
        return [cid for cid, (on, _) in self._comments.items() if on == issue]

    def push(self, commits: int = 1) -> str:
        """`commits` commits (at least one) pushed to the default branch together: emits one
        ``push`` listing them, the last its ``head_commit``. Returns the new head sha."""
        shas = [self._sha() for _ in range(max(1, commits))]
        return self._push(self.head, shas, [self._fake.sentence(nb_words=4).rstrip(".") for _ in shas])

    def force_push(self) -> str:
        """The default branch's head rewritten (an amended commit force-pushed): emits ``push``
        with ``forced`` true, ``before`` the replaced head. Returns the new head sha."""
        return self._push(self.head, [self._sha()], [self._fake.sentence(nb_words=4).rstrip(".")], forced=True)

    def push_branch(self) -> str:
        """A new branch pushed for the first time with a commit of its own: emits ``push`` with
        ``created`` true, ``before`` all zeros and the compare view of the branch. Returns the
        branch's name (the default branch's head does not move)."""
        branch = f"{self._fake.word()}-{self._fake.word()}"
        at = self._tick()
        sha = self._sha()
        oid, head = self._commit(sha, self._fake.sentence(nb_words=4).rstrip("."), at)
        self._branches[branch] = sha
        self._emit_push(oid, f"refs/heads/{branch}", _ZERO_SHA, sha, [head], head, at=at, created=True,
                        compare=branch)
        self._ci(_ZERO_SHA, sha, branch)
        return branch

    def delete_branch(self, branch: str) -> None:
        """Branch `branch` deleted (after a merge): emits ``push`` with ``deleted`` true, ``after``
        all zeros, no commits and a null ``head_commit`` (no effect: no commit was pushed)."""
        sha = self._branches.pop(branch, None)
        if sha is None:
            raise WorldError(f"no branch {branch!r} to delete", object_id=branch)
        self._emit_push(f"{self.repository()['full_name']}@{sha}", f"refs/heads/{branch}", sha, _ZERO_SHA, [], None,
                        at=self._tick(), deleted=True)

    def push_tag(self) -> str:
        """A lightweight tag pushed on the default branch's head: emits ``push`` with ``ref``
        ``refs/tags/v…``, ``created`` true, ``base_ref`` the default branch, no commits (the
        commit was pushed before: ``head_commit.distinct`` false); no effect. Returns the tag."""
        self._tags += 1
        tag = f"v1.{self._tags}.0"
        oid = f"{self.repository()['full_name']}@{self.head}"
        head = {**self._typed(oid, "commit"), "distinct": False}
        self._emit_push(oid, f"refs/tags/{tag}", _ZERO_SHA, self.head, [], head, at=self._tick(), created=True,
                        base_ref=f"refs/heads/{self.repository()['default_branch']}", compare=tag)
        return tag

    def open_pull_request(self) -> str:
        """A pull request from a new branch: emits ``pull_request.opened``. Returns its node id."""
        number = self._number()
        pr_id = self._rng.randint(1_000_000_000, 1_999_999_999)
        branch = f"{self._fake.word()}-{self._fake.word()}"
        obj = gh.pull_request(self.repository(), number, pr_id, self.sender,
                              title=self._fake.sentence(nb_words=5).rstrip("."), body=self._fake.sentence(),
                              head_ref=branch, head_sha=self._sha(), base_sha=self.head, created=self._tick())
        oid = f"{self.repository()['full_name']}#{number}"
        self._create(oid, "pull_request", {**obj, "hookproof_status": "open"})
        self._commit(obj["head"]["sha"], obj["title"])
        self._emit("pull_request.opened", oid, {"number": number, "pull_request": None})
        self._ci(_ZERO_SHA, obj["head"]["sha"], branch, oid)
        return oid

    def synchronize(self, pull_request: str) -> str:
        """Push a new commit to a pull request's branch: emits ``pull_request.synchronize``."""
        pr = self._typed(pull_request, "pull_request")
        if pr["state"] != "open":
            raise WorldError(f"pull request {pull_request} is not open", object_id=pull_request)
        before, after = pr["head"]["sha"], self._sha()
        head = {**pr["head"], "sha": after}
        statuses = f"{pr['base']['repo']['url']}/statuses/{after}"
        links = {**pr["_links"], "statuses": {"href": statuses}}
        self._transition(pull_request, "open", {"head": head, "statuses_url": statuses, "_links": links,
                                                "commits": pr["commits"] + 1})
        self._commit(after, self._fake.sentence(nb_words=4).rstrip("."))
        self._emit("pull_request.synchronize", pull_request,
                   {"number": pr["number"], "before": before, "after": after, "pull_request": None})
        self._ci(before, after, head["ref"], pull_request)
        return after

    def close_pull_request(self, pull_request: str, *, merged: bool) -> None:
        """Close a pull request, merged or not: emits ``pull_request.closed`` (and, when
        merged, the ``push`` of the merge commit to the default branch)."""
        pr = self._typed(pull_request, "pull_request")
        at = self._tick()
        changes: dict[str, Any] = {"closed_at": gh.iso(at), "merged": merged}
        merge_sha = self._sha() if merged else None
        if merged:
            changes.update(merged_at=gh.iso(at), merge_commit_sha=merge_sha, merged_by=self.sender,
                           mergeable=True, rebaseable=True, mergeable_state="clean")
        self._transition(pull_request, "merged" if merged else "closed", changes, at=at)
        self._emit("pull_request.closed", pull_request, {"number": pr["number"], "pull_request": None})
        if merge_sha is not None:
            self._push(self.head, [merge_sha], [f"Merge pull request #{pr['number']} from {pr['head']['label']}"])

    def reopen_pull_request(self, pull_request: str) -> None:
        """Reopen a pull request closed without merging: emits ``pull_request.reopened``."""
        pr = self._typed(pull_request, "pull_request")
        if pr["hookproof_status"] != "closed":
            raise WorldError(f"pull request {pull_request} is not closed unmerged", object_id=pull_request)
        self._transition(pull_request, "open", {"closed_at": None})
        self._emit("pull_request.reopened", pull_request, {"number": pr["number"], "pull_request": None})

    # ---- checks (sent only to an App listing them: `sent_only`) ---------------------------
    def sent_only(self, sends: Callable[[str], bool]) -> None:
        """The App is sent the checks' events when `sends` accepts ``check_suite.requested`` (an App
        whose ``target.enabled_events`` lists ``check_suite``: `GITHUB_CHECK_TYPES`): then each push
        to any branch, a pull request's head too, runs its CI (`_ci`, `run_ci`), the stories re-run checks, and a ``push`` or
        ``pull_request.opened|synchronize`` owes no ``ci:`` job of its own (`CHECKS_RUN_CI`: the
        App's CI runs per requested suite, ``suite:``; those events are still sent, with their
        states). Call before the stories are played; an App sent none is told the stories it
        always was."""
        self.checks_sent = sends("check_suite.requested")

    @contextmanager
    def checks(self) -> Iterator[None]:
        """The block's stories told as to an App sent the checks' events (`checks_sent`), whatever
        it is told after (`hookproof send --event check_run.created`)."""
        sent, self.checks_sent = self.checks_sent, True
        try:
            yield
        finally:
            self.checks_sent = sent

    def request_checks(self, before: str, after: str, branch: str | None = None,
                       pull_requests: list[dict[str, Any]] | None = None) -> str:
        """GitHub makes the App's check suite for head `after` pushed to `branch` (None: the
        default branch) over `before`: emits ``check_suite.requested`` (``queued``, no conclusion,
        no run; ``head_branch`` the branch, ``pull_requests`` the open pull requests whose head it
        is, `gh.check_pull_request` items). Returns the suite's id (digits). Raises WorldError for
        a head no push made."""
        repo = self.repository()
        head = self._typed(f"{repo['full_name']}@{after}", "commit")
        suite_id = self._check_rng.randint(20_000_000_000, 29_999_999_999)
        suite = gh.check_suite(repo, suite_id, head_branch=branch or repo["default_branch"], before=before,
                               head=head, created=self._now + 1, pull_requests=pull_requests)
        oid = str(suite_id)
        self._create(oid, "check_suite", suite)
        self._suites[after] = oid
        self._runs[oid] = []
        self._emit("check_suite.requested", oid, {"check_suite": None})
        return oid

    def create_check_run(self, suite: str, name: str, *, in_progress: bool = False) -> str:
        """The App creates check run `name` in `suite`, ``queued`` or (`in_progress`) already
        ``in_progress``: emits ``check_run.created``; the suite's status follows (``in_progress``
        once a run is). Returns the run's id (digits)."""
        current = self._typed(suite, "check_suite")
        run_id = self._check_rng.randint(30_000_000_000, 39_999_999_999)
        oid = str(run_id)
        self._runs[suite].append(oid)
        status = current["status"] if current["status"] == "in_progress" else (
            "in_progress" if in_progress else "queued")
        latest = len({self._typed(r, "check_run")["name"] for r in self._runs[suite][:-1]} | {name})
        self._suite_update(suite, {"status": status, "conclusion": None, "latest_check_runs_count": latest})
        run = gh.check_run(self.repository(), run_id, name, copy.deepcopy(self._typed(suite, "check_suite")),
                           status="in_progress" if in_progress else "queued", started=self._now + 1)
        self._create(oid, "check_run", run)
        self._emit("check_run.created", oid, {"check_run": None})
        return oid

    def complete_check_run(self, run: str, conclusion: str = "success") -> None:
        """The App completes check run `run` with `conclusion`: emits ``check_run.completed``
        (``completed_at`` set). The suite stays as it is until `complete_suite`."""
        at = self._now + 1
        self._transition(run, "completed", {"conclusion": conclusion, "completed_at": gh.iso(at),
                                            "check_suite": self._run_suite(run)}, at=at)
        self._emit("check_run.completed", run, {"check_run": None})

    def complete_suite(self, suite: str) -> None:
        """Every run of `suite` completed: GitHub completes it with their worst conclusion (of the
        latest run of each name; ``failure`` over ``success``): emits ``check_suite.completed``."""
        latest: dict[str, str] = {}
        for run in self._runs[suite]:
            obj = self._typed(run, "check_run")
            if obj["status"] != "completed":
                raise WorldError(f"check run {run} of suite {suite} is not completed", object_id=suite)
            latest[obj["name"]] = obj["conclusion"]
        conclusion = "failure" if "failure" in latest.values() else "success"
        self._suite_update(suite, {"status": "completed", "conclusion": conclusion})
        self._emit("check_suite.completed", suite, {"check_suite": None})

    def run_ci(self, suite: str, *, failing: str | None = None) -> list[str]:
        """The App's CI on a requested suite: ``lint`` created queued and ``test`` created in
        progress (``check_run.created`` each), ``test`` then ``lint`` completed (the run named
        `failing` with ``failure``, the others ``success``), then the suite completed. Returns the
        two runs' ids, ``lint`` first."""
        lint = self.create_check_run(suite, "lint")
        test = self.create_check_run(suite, "test", in_progress=True)
        self.complete_check_run(test, "failure" if failing == "test" else "success")
        self.complete_check_run(lint, "failure" if failing == "lint" else "success")
        self.complete_suite(suite)
        return [lint, test]

    def rerequest_suite(self, suite: str) -> list[str]:
        """A user re-runs the whole completed suite ("Re-run all checks"): emits
        ``check_suite.rerequested`` (the suite as it was, its ``updated_at`` moved, as Octokit's
        ``check_suite/rerequested`` example), then the App's CI again on new runs (`run_ci`).
        Returns the new runs' ids."""
        if self._typed(suite, "check_suite")["status"] != "completed":
            raise WorldError(f"check suite {suite} is not completed", object_id=suite)
        self._suite_update(suite, {})
        self._emit("check_suite.rerequested", suite, {"check_suite": None})
        return self.run_ci(suite)

    def rerequest_check_run(self, run: str) -> str:
        """A user re-runs one completed check run: emits ``check_run.rerequested`` (the run as it
        is: REST "Rerequest a check run", "The check run itself is not updated"), then the App
        creates a new run of that name, completes it, and the suite completes again. Returns the
        new run's id."""
        obj = self._typed(run, "check_run")
        if obj["status"] != "completed":
            raise WorldError(f"check run {run} is not completed", object_id=run)
        self._update(run, {"check_suite": self._run_suite(run)}, at=self._now + 1)
        self._emit("check_run.rerequested", run, {"check_run": None})
        suite = str(obj["check_suite"]["id"])
        again = self.create_check_run(suite, obj["name"])
        self.complete_check_run(again)
        self.complete_suite(suite)
        return again

    def request_action(self, run: str, identifier: str = "autofix") -> None:
        """A user clicks the App's button `identifier` on completed check run `run`: emits
        ``check_run.requested_action`` with ``requested_action.identifier`` (the run unchanged)."""
        if self._typed(run, "check_run")["status"] != "completed":
            raise WorldError(f"check run {run} is not completed", object_id=run)
        self._update(run, {"check_suite": self._run_suite(run)}, at=self._now + 1)
        self._emit("check_run.requested_action", run, {"check_run": None,
                                                       "requested_action": {"identifier": identifier}})

    def rerun_checks(self, head_sha: str) -> list[str]:
        """A user re-runs the completed CI of pushed head `head_sha`: the whole suite
        (`rerequest_suite`), then the new ``test`` run alone (`rerequest_check_run`) and ``test``
        again (the run that re-run made: a second "Re-run" of one check, a run of its own), then
        asks the new ``lint`` run for its ``autofix`` action twice (`request_action`: each click
        its own request, its own ``action:`` key), then re-runs the
        whole suite a second time. Each re-run owes its own job: a suite keeps its id, so its
        re-runs are told apart by the suite's ``updated_at``, which each re-request moves
        (``rerun:``); a check run's re-runs by the id of the run re-requested, each re-run making a
        new run (``rerun-run:``). Returns the ids of the suite's runs made by the re-runs. Raises
        WorldError for a head without a suite."""
        suite = self.suite_of(head_sha)
        if suite is None:
            raise WorldError(f"no check suite for {head_sha}", object_id=head_sha)
        lint, test = self.rerequest_suite(suite)
        again = self.rerequest_check_run(test)
        third = self.rerequest_check_run(again)
        self.request_action(lint)
        self.request_action(lint)  # clicked again: a new request, its own delivery and action
        return [lint, test, again, third, *self.rerequest_suite(suite)]

    def check_story(self) -> list[Event]:
        """A push's CI and its re-runs, told as to an App sent the checks' events (`checks`): the
        push, ``check_suite.requested``, ``lint`` and ``test`` created, completed, the suite
        completed (`run_ci`); then the suite re-run, a run re-run and an action asked
        (`rerun_checks`). Returns its events."""
        start = len(self.events)
        with self.checks():
            self.rerun_checks(self.push())
        return self.events[start:]

    def suite_of(self, head_sha: str) -> str | None:
        """The id of the App's check suite of pushed head `head_sha`, or None."""
        return self._suites.get(head_sha)

    def runs_of(self, suite: str) -> list[str]:
        """The ids of `suite`'s check runs, oldest first."""
        return list(self._runs.get(suite, []))

    def _suite_update(self, suite: str, changes: Mapping[str, Any]) -> None:
        """`suite` changed (its ``updated_at`` moved to the next event's second)."""
        self._update(suite, {**changes, "updated_at": gh.iso(self._now + 1)}, at=self._now + 1)

    def _run_suite(self, run: str) -> dict[str, Any]:
        """The ``check_suite`` a check run carries, as its suite is now."""
        suite = self._typed(run, "check_run")["check_suite"]["id"]
        current = self._typed(str(suite), "check_suite")
        return {k: copy.deepcopy(current[k]) for k in gh.RUN_SUITE_FIELDS}

    @contextmanager
    def same_second(self) -> Iterator[None]:
        """Changes made inside share one new second: their ``updated_at`` ties (GitHub's counts
        whole seconds), as when a bot labels and closes an issue, or an Action closes and
        reopens it, at once. Their events carry times a tenth of a second apart within it
        (GitHub sends none; the times order the world's own truth)."""
        if self._in_second >= 0:
            raise WorldError("same_second: already inside one")
        self._now += 1
        self._in_second = 0
        try:
            yield
        finally:
            self._in_second = -1
        pending, self._pending_ci = self._pending_ci, []
        for before, after, branch, prs in pending:  # the CI of a push made in that second, after it
            self.run_ci(self.request_checks(before, after, branch, prs))

    def advance(self, seconds: int) -> None:
        """Move the clock forward `seconds` (>= 0)."""
        self._now += max(0, seconds)

    # ---- stories ------------------------------------------------------------------
    def lifecycle(self) -> list[Event]:
        """One repository's working day: every event type, in a legal order. Returns its events."""
        start = len(self.events)
        self.ping()
        issue = self.open_issue()
        self.label_issue(issue)
        self.comment(issue)
        self.edit_issue(issue)
        self._comment_edited_and_deleted(issue)
        self.unlabel_issue(issue)
        self.close_issue(issue)
        self.reopen_issue(issue)
        self.push(commits=3)
        self.delete_branch(self.push_branch())
        self.force_push()
        pr = self.open_pull_request()
        self.edit_pull_request(pr)
        self.synchronize(pr)
        self.close_pull_request(pr, merged=True)
        self.push_tag()
        other = self.open_pull_request()
        self.close_pull_request(other, merged=False)
        installation = self.event(self.install().id).object_id
        self.add_repository(installation)
        self.remove_repository(installation)
        self.suspend(installation)
        self.unsuspend(installation)
        self.uninstall(installation)
        return self.events[start:]

    def effect_story(self) -> list[Event]:
        """The App's webhook pinged, then one event of each effectful type: an opened issue, a
        push, an opened and a synchronized pull request, a comment (later edited, then deleted:
        ``issue_comment.edited|deleted`` owe no effect; the bot's reply stays owed), a new installation; then
        that pull request merged and another closed without merging (effects of a team's own
        keys); then the new installation's life as an App meets it: a repository added to its
        selection and removed, the installation suspended, unsuspended and deleted
        (``installation_repositories.added|removed``, ``installation.suspend|unsuspend|deleted``:
        no effect, sent beside the installation's effectful ``installation.created``). To an App
        sent the checks' events (`checks_sent`), the push's CI (`run_ci`; the pull requests' heads
        run theirs too), then its suite re-run,
        a run of that re-run re-run alone and an action asked of the other twice (`rerun_checks`). The
        story's every event, effectful or not: the catalog sends those the receiver's keys
        make effectful, the other events of their objects, and the ping (`companion_objects`)."""
        start = len(self.events)
        self.ping()
        issue = self.open_issue()
        head = self.push()
        if self.checks_sent:  # its CI ran (`run_ci`); then re-run by hand
            self.rerun_checks(head)
        pr = self.open_pull_request()
        comment = self.comment(issue)
        self.synchronize(pr)
        self.edit_comment(comment)
        self.delete_comment(comment)
        installation = self.install().object_id
        self.close_pull_request(pr, merged=True)
        self.close_pull_request(self.open_pull_request(), merged=False)
        self.add_repository(installation)
        self.remove_repository(installation)
        self.suspend(installation)
        self.unsuspend(installation)
        self.uninstall(installation)
        return self.events[start:]

    def _comment_edited_and_deleted(self, issue: str) -> None:
        """A comment on `issue` posted, its body edited, then deleted: ``issue_comment.created``,
        ``.edited``, ``.deleted`` (a comment counter moves up once and back down once)."""
        comment_id = self.comment(issue)
        self.edit_comment(comment_id)
        self.delete_comment(comment_id)

    def companion_objects(self, objects: set[str]) -> set[str]:
        """The App's webhook (the hook id), whose ``ping`` (the webhook created) comes before
        any installation's events, when any of `objects` is an installation other than the
        App's own: the catalog sends its events with a story's effectful ones
        (`scenarios.catalog.effect_events`). A ping owes nothing: it only has to be answered."""
        others = set(self.objects("installation")) - {self.account}
        return {str(self.hook_id)} if objects & others else set()

    def state_story(self) -> list[Event]:
        """An issue's life: opened, labeled, closed, reopened, closed again; a pull request's:
        opened, retitled, closed without merging, reopened (a contributor's second thought), synchronized,
        merged; an installation's: created, suspended, unsuspended, deleted (stateful events); to an
        App sent the checks' events (`checks_sent`), a push's check runs: ``lint`` created queued,
        ``test`` created in progress, each completed."""
        start = len(self.events)
        issue = self.open_issue()
        self.label_issue(issue)
        self.close_issue(issue)
        self.reopen_issue(issue)
        self.close_issue(issue)
        pr = self.open_pull_request()
        self.edit_pull_request(pr)
        self.close_pull_request(pr, merged=False)
        self.reopen_pull_request(pr)
        self.synchronize(pr)
        self.close_pull_request(pr, merged=True)
        installation = self.install().object_id
        self.suspend(installation)
        self.unsuspend(installation)
        self.uninstall(installation)
        walked = {issue, pr, installation}
        if self.checks_sent:  # a push's CI: its check runs queued or in progress, then completed
            walked.update(self.runs_of(self.suite_of(self.push()) or ""))
        return [e for e in self.events[start:] if e.object_id in walked]

    def distinct_story(self) -> list[Event]:
        """Several effects of one object: two comments on one issue, two pushes to one pull request;
        to an App sent the checks' events (`checks_sent`), a check suite requested and re-run twice
        (``suite:`` and two ``rerun:``, one suite id: `rerun_checks`)."""
        start = len(self.events)
        issue = self.open_issue()
        self.comment(issue)
        self.comment(issue)
        pr = self.open_pull_request()
        self.synchronize(pr)
        self.synchronize(pr)
        types = ["issue_comment.created", "pull_request.synchronize"]
        suite = None
        if self.checks_sent:  # the pushed head's suite alone (the pull request's heads have theirs)
            head = self.push()
            suite = self.suite_of(head)
            self.rerun_checks(head)
        return [e for e in self.events[start:] if e.type in types
                or (e.type in ("check_suite.requested", "check_suite.rerequested") and e.object_id == suite)]

    def repeat_story(self) -> list[Event]:
        """The repeated lifecycles GitHub sends about one object, each change its own delivery:
        an issue opened, labeled, commented on, labeled again, closed, reopened, commented on
        again and closed again (two ``issues.labeled``, two ``issue_comment.created`` and two
        ``issues.closed`` with one issue's number, each with its own ``X-GitHub-Delivery``);
        then a pull request opened, closed without merging, reopened, pushed to and merged
        (two ``pull_request.closed`` with one number). A receiver deduplicating on the event,
        its action and the number, not the delivery, leaves the issue open, loses its second
        reply and leaves the pull request open, never merged. Returns its events (the merge's
        ``push`` among them)."""
        start = len(self.events)
        issue = self.open_issue()
        self.label_issue(issue)
        self.comment(issue)
        self.label_issue(issue)
        self.close_issue(issue)
        self.reopen_issue(issue)
        self.comment(issue)
        self.close_issue(issue)
        pr = self.open_pull_request()
        self.close_pull_request(pr, merged=False)
        self.reopen_pull_request(pr)
        self.synchronize(pr)
        self.close_pull_request(pr, merged=True)
        return self.events[start:]

    def same_second_story(self) -> list[Event]:
        """An issue opened, then a triage bot labels it, replies and closes it in one second
        (`same_second`): ``issues.opened`` (open), then ``issues.labeled`` (open),
        ``issue_comment.created`` (open) and ``issues.closed`` (closed), the last three with one
        ``updated_at``. The catalog's `stale-after-newer` sends the comment after the close:
        ordering by ``updated_at`` with ``>`` drops the close (the issue stays open), with ``>=``
        the late comment reopens it; only the REST API's issue tells. Returns its events."""
        start = len(self.events)
        self.triage(self.open_issue())
        return self.events[start:]

    def triage(self, issue: str) -> None:
        """A triage bot labels an open issue, replies and closes it in one second (`same_second`):
        ``issues.labeled``, ``issue_comment.created`` and ``issues.closed`` with one ``updated_at``."""
        if self._typed(issue, "issue")["state"] != "open":
            raise WorldError(f"issue {issue} is not open", object_id=issue)
        with self.same_second():
            self.label_issue(issue)
            self.comment(issue)
            self.close_issue(issue)

    def pull_request_same_second_story(self) -> list[Event]:
        """Two pull requests each changed twice in one second (`same_second`), each change its
        own delivery with one ``updated_at``: the first opened, then closed and reopened at once
        by a workflow re-running CI (`rerun_ci`): ``pull_request.opened`` (open), ``.closed``
        (closed), ``.reopened`` (open); the second opened, then pushed to and merged at once by a
        merge bot (`bot_merge`): ``pull_request.opened`` (open), ``.synchronize`` (open),
        ``.closed`` (merged), with the merge commit's ``push``. The catalog's `stale-after-newer`
        sends the first's in order (ordering by ``updated_at`` with ``>`` keeps it closed) and
        the second's synchronize after the merge (with ``>=`` it reopens it); only the REST API's
        pull request tells. Returns its events."""
        start = len(self.events)
        self.rerun_ci(self.open_pull_request())
        self.bot_merge(self.open_pull_request())
        return self.events[start:]

    def rerun_ci(self, pull_request: str) -> None:
        """An open pull request closed and reopened in one second (`same_second`), as a workflow
        does to re-run CI on a branch it pushed with ``GITHUB_TOKEN`` (whose pushes start no
        workflow: GitHub Actions docs "Triggering a workflow from a workflow"):
        ``pull_request.closed`` (unmerged) and ``pull_request.reopened`` with one ``updated_at``."""
        if self._typed(pull_request, "pull_request")["state"] != "open":
            raise WorldError(f"pull request {pull_request} is not open", object_id=pull_request)
        with self.same_second():
            self.close_pull_request(pull_request, merged=False)
            self.reopen_pull_request(pull_request)

    def bot_merge(self, pull_request: str) -> None:
        """A merge bot updates an open pull request's branch and merges it in one second
        (`same_second`): ``pull_request.synchronize`` and ``pull_request.closed`` (merged) with one
        ``updated_at``, then the merge commit's ``push``."""
        if self._typed(pull_request, "pull_request")["state"] != "open":
            raise WorldError(f"pull request {pull_request} is not open", object_id=pull_request)
        with self.same_second():
            self.synchronize(pull_request)
            self.close_pull_request(pull_request, merged=True)

    def repositories_of(self, installation: str) -> list[dict[str, Any]]:
        """The repositories `installation` can access (its events' ``repositories``)."""
        return [dict(r) for r in self._installed.get(installation, [])]

    def storm_story(self, index: int) -> list[Event]:
        """Story `index` of a storm's mix: the lifecycle, then the repeated lifecycles
        (`repeat_story`), in turn; to an App sent the checks' events (`checks_sent`), the
        lifecycle's last push's CI re-run by hand after it (`rerun_checks`: the suite re-run twice,
        ``test`` re-run twice, ``autofix`` clicked twice). Returns its events."""
        if index % 2:
            return self.repeat_story()
        start = len(self.events)
        self.lifecycle()
        if self.checks_sent:
            self.rerun_checks(self.head)
        return self.events[start:]

    def unknown_event(self) -> Event:
        """A ``star.created`` event (GitHub sends it; a CI App handles no such thing), about the
        repository (object type ``repository``, its full name; no record): no effect, no state."""
        repo = self.repository()
        body = {"action": "created", "starred_at": gh.iso(self._tick()), "repository": repo,
                "organization": self.org, "sender": self.sender,
                "installation": gh.installation_lite(self.installation_id)}
        return self._event("star.created", repo["full_name"], body, record=False, kind="repository", snapshot=repo)

    def big_event(self, size_bytes: int) -> Event:
        """A push to the default branch of as many commits as a payload of at least `size_bytes`
        needs, each modifying a few dozen files (a large merge or import): emits ``push``, whose
        ``ci:`` key owes a run like any push. GitHub lists at most 2048 commits in a push payload
        and caps payloads at 25 MB (docs.github.com "Webhook events and payloads": ``push``,
        "Payload cap"), so a payload of a few megabytes grows through these fields alone."""
        before = self.head
        repo = self.repository()
        folders = [f"{self._fake.word()}/{self._fake.word()}" for _ in range(16)]
        names = [self._fake.word() for _ in range(64)]
        commits: list[dict[str, Any]] = []
        size = 2_000  # the payload around the commits: repository, pusher, sender, installation
        at = self._now
        while size < size_bytes:
            if len(commits) == MAX_PUSH_COMMITS:
                raise WorldError(f"a push of {MAX_PUSH_COMMITS} commits stays under {size_bytes} bytes")
            at += 1
            sha = self._sha()
            files = sorted({f"{self._rng.choice(folders)}/{self._rng.choice(names)}_{self._rng.randrange(100)}.py"
                            for _ in range(40)})
            commit = gh.commit(repo, sha, self._sha(), self.sender, at=at, path=files[0],
                               message=f"Update {len(files)} modules of {files[0].split('/')[0]}")
            commit["modified"] = files
            commits.append(commit)
            size += len(json.dumps(commit, separators=(",", ":"))) + 1
        self._now = at
        after = commits[-1]["id"]
        self._pushed = self._tick()
        self.head = after
        oid = f"{repo['full_name']}@{after}"
        self._create(oid, "commit", commits[-1])
        body = {"ref": f"refs/heads/{repo['default_branch']}", "before": before, "after": after, "repository": None,
                "pusher": {"name": self.sender["login"], "email": commits[-1]["author"]["email"]}, "created": False,
                "deleted": False, "forced": False, "base_ref": None,
                "compare": f"{repo['html_url']}/compare/{before[:12]}...{after[:12]}",
                "commits": commits, "head_commit": commits[-1]}
        return self._emit("push", oid, body)

    def quiet_event(self) -> Event:
        """A stateless, effectless event of the catalog (``ping``), e.g. to oversize."""
        return self.ping()

    # ---- internals ----------------------------------------------------------------
    def _push(self, before: str, shas: list[str], messages: list[str], *, forced: bool = False) -> str:
        """Commits `shas` pushed to the default branch after `before`: one ``push``."""
        at = self._tick()
        self._pushed = at
        after = shas[-1]
        self.head = after
        commits = [self._commit(sha, message, at)[1] for sha, message in zip(shas, messages)]
        self._emit_push(f"{self.repository()['full_name']}@{after}", f"refs/heads/{self.repository()['default_branch']}",
                        before, after, commits, commits[-1], at=at, forced=forced)
        self._ci(before, after)
        return after

    def _ci(self, before: str, after: str, branch: str | None = None, pull_request: str | None = None) -> None:
        """To an App sent the checks (`checks_sent`), the CI of head `after` pushed to `branch`
        (None: the default branch) over `before`: GitHub makes a check suite for every push to any
        branch, a pull request's head commit too (docs.github.com "Using the REST API to interact
        with checks": "GitHub creates check suites ... when code is pushed to a repository"), its
        ``pull_requests`` the open `pull_request` whose head it is, as it is now (`request_checks`,
        `run_ci`; inside `same_second`, once the second's changes are made)."""
        if not self.checks_sent:
            return
        prs = [gh.check_pull_request(self._public(pull_request))] if pull_request is not None else []
        if self._in_second >= 0:  # its CI runs once the second's changes are made
            self._pending_ci.append((before, after, branch, prs))
        else:
            self.run_ci(self.request_checks(before, after, branch, prs))

    def _emit_push(self, oid: str, ref: str, before: str, after: str, commits: list[dict[str, Any]],
                   head: dict[str, Any] | None, *, at: int, created: bool = False, deleted: bool = False,
                   forced: bool = False, base_ref: str | None = None, compare: str | None = None) -> None:
        """Emit a ``push`` of `ref` from `before` to `after` about commit record `oid`. GitHub's
        ``compare``: the view of a new ref by its name, else ``before...after`` (12 hex each)."""
        self._pushed = at
        repo = self.repository()
        view = compare if compare is not None else f"{before[:12]}...{after[:12]}"
        body = {"ref": ref, "before": before, "after": after,
                "repository": gh.push_repository(repo, created=self._repo_created, pushed=at),
                "pusher": {"name": self.sender["login"], "email": _email(self.sender)}, "created": created,
                "deleted": deleted, "forced": forced, "base_ref": base_ref, "compare": f"{repo['html_url']}/compare/{view}",
                "commits": commits, "head_commit": head}
        self._emit("push", oid, body)

    def _commit(self, sha: str, message: str, at: int | None = None) -> tuple[str, dict[str, Any]]:
        """Record commit `sha` (a push's head or a pull request's head); its id and object."""
        repo = self.repository()
        head = gh.commit(repo, sha, self._sha(), self.sender, message=message, at=at or self._now, path="README.md")
        oid = f"{repo['full_name']}@{sha}"
        self._create(oid, "commit", head)
        return oid, head

    def _installation_event(self, event_type: str, installation: str) -> Event:
        """An ``installation`` event about `installation` as it is now, with its repositories."""
        inst = self._public(installation)
        return self._emit(event_type, installation, {"installation": inst,
                                                     "repositories": self._installed.get(installation, []),
                                                     "requester": None, "sender": self.sender},
                          lite=False, account=str(inst["id"]))

    def _repositories_event(self, event_type: str, installation: str, added: list[dict[str, Any]],
                            removed: list[dict[str, Any]]) -> Event:
        """An ``installation_repositories`` event of `installation`."""
        inst = self._public(installation)
        return self._emit(event_type, installation, {
            "installation": inst, "repository_selection": inst["repository_selection"], "repositories_added": added,
            "repositories_removed": removed, "requester": None, "sender": self.sender},
            lite=False, account=str(inst["id"]))

    def _comment(self, comment_id: int) -> tuple[str, dict[str, Any]]:
        """(issue id, the comment as it is now) of comment `comment_id`; WorldError if none."""
        found = self._comments.get(comment_id)
        if found is None:
            raise WorldError(f"no comment {comment_id}", object_id=str(comment_id))
        return found[0], copy.deepcopy(found[1])

    def _public(self, object_id: str) -> dict[str, Any]:
        """The snapshot without the world's own bookkeeping fields."""
        obj = self.get(object_id)
        if self._record(object_id).object_type == "installation":  # the world's own; a check's is GitHub's
            obj.pop("status", None)
        obj.pop("hookproof_status", None)
        return obj

    def _number(self) -> int:
        number = self._next_number
        self._next_number += 1
        return number

    def _sha(self) -> str:
        return "%040x" % self._rng.getrandbits(160)

    def _tick(self) -> int:
        step = self._rng.randint(1, 3)
        if self._in_second < 0:
            self._now += step
        return self._now

    def _create(self, object_id: str, object_type: str, snapshot: dict[str, Any]) -> None:
        self._objects[object_id] = Record(object_type, [snapshot])

    def _update(self, object_id: str, changes: Mapping[str, Any], *, at: int | None = None) -> None:
        rec = self._record(object_id)
        at = at if at is not None else self._tick()
        snap = copy.deepcopy(rec.current)
        snap.update(copy.deepcopy(dict(changes)))
        if "updated_at" in snap and rec.object_type in ISSUE_TYPES:
            snap["updated_at"] = gh.iso(at)
        rec.versions.append(snap)

    def _transition(self, object_id: str, status: str, changes: Mapping[str, Any], *, at: int | None = None) -> None:
        rec = self._record(object_id)
        old = _status(rec.object_type, rec.current)
        allowed = GITHUB_TRANSITIONS.get(rec.object_type, {}).get(old)
        if allowed is None or status not in allowed:
            raise WorldError(f"{rec.object_type} {object_id}: {old} -> {status} is not an allowed transition",
                             object_id=object_id)
        extra: dict[str, Any] = {}
        if rec.object_type == "issue":
            extra["state"] = status
        elif rec.object_type == "pull_request":
            extra = {"state": "open" if status == "open" else "closed", "hookproof_status": status}
        else:
            extra["status"] = status
        self._update(object_id, {**changes, **extra}, at=at)

    def _emit(self, event_type: str, object_id: str, body: dict[str, Any], *, lite: bool = True,
              account: str | None = None) -> Event:
        """Fill the payload's object and envelope fields, then record the event."""
        self._record(object_id)  # raises WorldError for an unknown object
        snapshot = self._public(object_id)
        name, _, action = event_type.partition(".")
        payload: dict[str, Any] = {"action": action} if action else {}
        for key, value in body.items():
            if value is None and key in ("issue", "pull_request", "check_suite", "check_run"):
                value = snapshot
            elif value is None and key == "repository":
                value = self.repository()
            payload[key] = value
        if "repository" not in payload and lite:
            payload["repository"] = self.repository()
        if lite:
            payload["organization"] = self.org
            payload["sender"] = self.sender
            payload["installation"] = gh.installation_lite(self.installation_id)
        return self._event(event_type, object_id, payload, account=account)

    def _event(self, event_type: str, object_id: str, payload: dict[str, Any], *, account: str | None = None,
               record: bool = True, kind: str = "installation", snapshot: dict[str, Any] | None = None) -> Event:
        """The event of `event_type` about object `object_id`, recorded in `events` unless
        `record` is False. An object the world keeps a record of gives the event its type,
        version, snapshot and (a stateful type's) status; any other (a ping's hook) is of
        object type `kind`, version 1, `snapshot` its object, and carries no status."""
        if self._in_second < 0:
            self._now += 1
            created_us = self._now * 1_000_000
        elif self._in_second < 10:
            created_us = self._now * 1_000_000 + self._in_second * 100_000
            self._in_second += 1
        else:
            raise WorldError("same_second: more changes than one second holds")
        ids = self._check_rng if event_type.startswith(("check_suite.", "check_run.")) else self._rng  # see checks
        delivery = str(uuid.UUID(int=ids.getrandbits(128), version=4))
        rec = self._objects.get(object_id)
        key_fn = None if self.checks_sent and event_type in CHECKS_RUN_CI else BUSINESS_KEYS.get(event_type)
        key = key_fn(payload) if key_fn else None
        if key is not None and event_type in PER_DELIVERY:  # each click its own request
            key = f"{key}:{delivery}"
        stateful = rec is not None and rec.object_type in STATEFUL_TYPES
        event = Event(
            id=delivery, type=event_type, created=self._now,
            created_us=created_us, object_type=rec.object_type if rec else kind,
            object_id=object_id, version=len(rec.versions) if rec else 1,
            object=self._public(object_id) if rec else copy.deepcopy(snapshot or {}),
            previous_attributes=payload.get("changes"), business_key=key,
            status=_status(rec.object_type, rec.current) if stateful and rec else None,
            livemode=False, account=account or self.account, api_version=self.api_version,
            extra={"payload": payload, "hook_id": self.hook_id, "app_id": self.app_id},
        )
        if record:
            self.events.append(event)
            self._event_index[event.id] = event
        return event


def _email(person: Mapping[str, Any]) -> str:
    """A user's commit email as GitHub writes it for a private address (noreply)."""
    return f"{person['id']}+{person['login']}@users.noreply.github.com"


def _status(object_type: str, snapshot: Mapping[str, Any]) -> str:
    if object_type == "pull_request":
        return str(snapshot.get("hookproof_status", snapshot["state"]))
    if object_type == "issue":
        return str(snapshot["state"])
    return str(snapshot.get("status", "active"))
