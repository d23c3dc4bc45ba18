"""Lifecycles, event types and business keys of the repository world (pure tables).

Issue states ``open``/``closed``, pull request states ``open``/``closed``/``merged`` and
installation states ``active``/``suspended``/``deleted`` follow GitHub's REST docs (``issues/issues#update-an-issue`` ``state``,
``pulls/pulls#get-a-pull-request`` ``state`` and ``merged``); event names and actions
follow ``webhook-events-and-payloads`` (Octokit's ``<event>.<action>`` naming).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

#: object type -> status -> statuses it may move to (GitHub's issue and PR states).
GITHUB_TRANSITIONS: Mapping[str, Mapping[str, frozenset[str]]] = {
    "issue": {"open": frozenset({"open", "closed"}), "closed": frozenset({"open", "closed"})},
    "pull_request": {"open": frozenset({"open", "closed", "merged"}), "closed": frozenset({"open"}),
                     "merged": frozenset()},
    "installation": {"active": frozenset({"active", "suspended", "deleted"}),
                     "suspended": frozenset({"active", "deleted"}), "deleted": frozenset()},
    # a check run's status (REST "Update a check run": queued, in_progress, completed); the world
    # never resets a completed run: a re-run is a new check run, as GitHub Actions makes one
    "check_run": {"queued": frozenset({"in_progress", "completed"}), "in_progress": frozenset({"completed"}),
                  "completed": frozenset()},
}

def _ci_run(payload: Mapping[str, Any]) -> str | None:
    """A push's CI run, on its new head: none for a deleted ref (``after`` is all zeros) or a
    push of no new commit (a tag, or a branch, created on a commit pushed before)."""
    if payload["deleted"] or not payload["commits"]:
        return None
    return f"ci:{payload['repository']['full_name']}@{payload['after']}"


def _suite(payload: Mapping[str, Any]) -> str:
    """``{full_name}@{head_sha}:{check suite id}``: the App's check suite of one pushed head."""
    suite = payload["check_suite"]
    return f"{payload['repository']['full_name']}@{suite['head_sha']}:{suite['id']}"


def _run(payload: Mapping[str, Any]) -> str:
    """``{full_name}@{head_sha}:{check run id}``: one check run of the App."""
    run = payload["check_run"]
    return f"{payload['repository']['full_name']}@{run['head_sha']}:{run['id']}"


#: Event type -> function of the event's payload giving its business key (None: no effect).
#: The checks' (sent only to an App whose enabled_events lists them, `GITHUB_CHECK_TYPES`): one
#: CI job per requested check suite (``suite:``), one per re-run of the whole suite
#: (``rerun:``, told apart by the suite's ``updated_at``, which each rerequest moves) and one per
#: check run re-run (``rerun-run:``), and the action a user asked of a check run, once per click
#: (``action:``, with its ``requested_action.identifier``, then the delivery: `PER_DELIVERY`).
BUSINESS_KEYS: Mapping[str, Callable[[Mapping[str, Any]], str | None]] = {
    "issues.opened": lambda p: f"comment:{p['repository']['full_name']}#{p['issue']['number']}",
    "issue_comment.created": lambda p: (f"reply:{p['repository']['full_name']}#{p['issue']['number']}:"
                                        f"{p['comment']['id']}"),
    "push": _ci_run,
    "pull_request.opened": lambda p: f"ci:{p['repository']['full_name']}@{p['pull_request']['head']['sha']}",
    "pull_request.synchronize": lambda p: f"ci:{p['repository']['full_name']}@{p['pull_request']['head']['sha']}",
    "installation.created": lambda p: f"install:{p['installation']['id']}",
    "check_suite.requested": lambda p: f"suite:{_suite(p)}",
    "check_suite.rerequested": lambda p: f"rerun:{_suite(p)}:{p['check_suite']['updated_at']}",
    "check_run.rerequested": lambda p: f"rerun-run:{_run(p)}",
    "check_run.requested_action": lambda p: f"action:{_run(p)}:{p['requested_action']['identifier']}",
}

#: The types whose every delivery is a request of its own, so their key ends in the delivery's
#: ``X-GitHub-Delivery`` (``{key}:{delivery}``; a redelivery keeps it): a user's click of a check
#: run's button. docs.github.com "Using the REST API to interact with checks" ("Check runs and
#: requested actions"): "When a user clicks the button, GitHub sends the
#: ``check_run.requested_action`` webhook to your app", which then performs the task the
#: ``requested_action.identifier`` names; the payload names the run and the button only, so two
#: clicks of one button on one run are two deliveries of equal payloads, each owing its action.
PER_DELIVERY: frozenset[str] = frozenset({"check_run.requested_action"})

#: The types whose ``ci:`` job an App sent the checks does not owe: its CI runs once per requested
#: check suite (``suite:``). docs.github.com "Using the REST API to interact with checks": when
#: code is pushed, GitHub creates a check suite and sends ``check_suite`` ``requested`` to the Apps
#: with the checks permission, and the App then creates its check runs; so a checks App subscribed
#: to ``push`` or ``pull_request`` too starts no second CI job on them.
CHECKS_RUN_CI: frozenset[str] = frozenset({"push", "pull_request.opened", "pull_request.synchronize"})

#: Every event type the world emits, in catalog order.
GITHUB_EVENT_TYPES: tuple[str, ...] = (
    "issues.opened", "issues.edited", "issues.closed", "issues.reopened", "issues.labeled", "issues.unlabeled",
    "issue_comment.created", "issue_comment.edited", "issue_comment.deleted", "pull_request.opened",
    "pull_request.edited", "pull_request.synchronize", "pull_request.closed", "pull_request.reopened", "push", "installation.created", "installation.deleted", "installation.suspend",
    "installation.unsuspend", "installation_repositories.added", "installation_repositories.removed", "ping",
)

#: The checks' event types (docs.github.com "Webhook events and payloads": ``check_suite`` and
#: ``check_run``), sent only to an App whose ``target.enabled_events`` lists them (the github
#: profile's `optional_types`; ``check_suite`` or ``check_run`` alone lists every action).
GITHUB_CHECK_TYPES: tuple[str, ...] = (
    "check_suite.requested", "check_suite.rerequested", "check_suite.completed", "check_run.created",
    "check_run.requested_action", "check_run.rerequested", "check_run.completed",
)

#: Object types whose events carry an observable state: issues and pull requests, and the
#: App's installations (``active``, ``suspended``, ``deleted``: docs ``webhook-events-and-payloads``
#: ``installation`` actions ``suspend``/``unsuspend``/``deleted``).
#: Check runs too (``queued``, ``in_progress``, ``completed``: their ``status``).
STATEFUL_TYPES: frozenset[str] = frozenset({"issue", "pull_request", "installation", "check_run"})
#: The stateful types with GitHub's ``state`` field and ISO ``updated_at`` (issues and pull requests).
ISSUE_TYPES: frozenset[str] = frozenset({"issue", "pull_request"})
