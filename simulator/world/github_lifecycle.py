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
}

def _ci_run(payload: Mapping[str, Any]) -> str | None:
    """A push's CI run, on its new head: none for a deleted ref (``after`` is all zeros) or a
    push of no new commit (a tag, or a branch, created on a commit pushed before)."""
    if payload["deleted"] or not payload["commits"]:
        return None
    return f"ci:{payload['repository']['full_name']}@{payload['after']}"


#: Event type -> function of the event's payload giving its business key (None: no effect).
BUSINESS_KEYS: Mapping[str, Callable[[Mapping[str, Any]], str | None]] = {
    "issues.opened": lambda p: f"comment:{p['repository']['full_name']}#{p['issue']['number']}",
    "issue_comment.created": lambda p: (f"reply:{p['repository']['full_name']}#{p['issue']['number']}:"
                                        f"{p['comment']['id']}"),
    "push": _ci_run,
    "pull_request.opened": lambda p: f"ci:{p['repository']['full_name']}@{p['pull_request']['head']['sha']}",
    "pull_request.synchronize": lambda p: f"ci:{p['repository']['full_name']}@{p['pull_request']['head']['sha']}",
    "installation.created": lambda p: f"install:{p['installation']['id']}",
}

#: Every event type the world emits, in catalog order.
GITHUB_EVENT_TYPES: tuple[str, ...] = (
    "issues.opened", "issues.edited", "issues.closed", "issues.reopened", "issues.labeled", "issues.unlabeled",
    "issue_comment.created", "issue_comment.edited", "issue_comment.deleted", "pull_request.opened",
    "pull_request.edited", "pull_request.synchronize", "pull_request.closed", "pull_request.reopened", "push", "installation.created", "installation.deleted", "installation.suspend",
    "installation.unsuspend", "installation_repositories.added", "installation_repositories.removed", "ping",
)

#: Object types whose events carry an observable state: issues and pull requests, and the
#: App's installations (``active``, ``suspended``, ``deleted``: docs ``webhook-events-and-payloads``
#: ``installation`` actions ``suspend``/``unsuspend``/``deleted``).
STATEFUL_TYPES: frozenset[str] = frozenset({"issue", "pull_request", "installation"})
#: The stateful types with GitHub's ``state`` field and ISO ``updated_at`` (issues and pull requests).
ISSUE_TYPES: frozenset[str] = frozenset({"issue", "pull_request"})
