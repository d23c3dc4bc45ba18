"""Lifecycles, event types and business keys of the repository world (pure tables).

Issue states ``open``/``closed`` and pull request states ``open``/``closed``/``merged``
follow GitHub's REST docs (``issues/issues#update-an-issue`` ``state``,
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
    "installation": {"active": frozenset({"deleted"}), "deleted": frozenset()},
}

#: Event type -> function of the event's payload giving its business key (None: no effect).
BUSINESS_KEYS: Mapping[str, Callable[[Mapping[str, Any]], str]] = {
    "issues.opened": lambda p: f"comment:{p['repository']['full_name']}#{p['issue']['number']}",
    "issue_comment.created": lambda p: (f"reply:{p['repository']['full_name']}#{p['issue']['number']}:"
                                        f"{p['comment']['id']}"),
    "push": lambda p: f"ci:{p['repository']['full_name']}@{p['after']}",
    "pull_request.opened": lambda p: f"ci:{p['repository']['full_name']}@{p['pull_request']['head']['sha']}",
    "pull_request.synchronize": lambda p: f"ci:{p['repository']['full_name']}@{p['pull_request']['head']['sha']}",
    "installation.created": lambda p: f"install:{p['installation']['id']}",
}

#: Every event type the world emits, in catalog order.
GITHUB_EVENT_TYPES: tuple[str, ...] = (
    "issues.opened", "issues.edited", "issues.closed", "issues.reopened", "issues.labeled",
    "issue_comment.created", "pull_request.opened", "pull_request.synchronize", "pull_request.closed",
    "pull_request.reopened", "push", "installation.created", "installation.deleted", "ping",
)

#: Object types whose events carry an observable state.
STATEFUL_TYPES: frozenset[str] = frozenset({"issue", "pull_request"})
