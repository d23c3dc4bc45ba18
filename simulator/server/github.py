"""GitHub's REST API for the repository world: issues and pull requests, from the same truth.

Routes (GitHub REST, docs.github.com/rest ``issues/issues#get-an-issue`` and
``pulls/pulls#get-a-pull-request``):

- ``GET /repos/{owner}/{repo}/issues/{issue_number}``: the issue, as the webhook payloads
  carry it; for a pull request's number, the issue view of it (GitHub's issues API
  lists pull requests as issues with a ``pull_request`` link object).
- ``GET /repos/{owner}/{repo}/pulls/{pull_number}``: the pull request; 404 for an issue.

Each object is served at the version the provider has when the deliveries so far were
sent (`simulator.server.clock`), from the served `GitHubWorld`s, newest first; owner and
repository names match case-insensitively, as GitHub's do.

Auth: ``Authorization: Bearer <token>`` or ``token <token>`` (Octokit's form), the token
being one of the server's API keys; none answers 401 ``Requires authentication``, a
wrong one 401 ``Bad credentials``. Errors are GitHub's ``{"message",
"documentation_url", "status"}``. The switches (`simulator.server.state`, keyed by the
object id ``{owner}/{repo}#{number}``) apply as to every provider: 404 not yet visible,
an error status, slow, stale (the previous version), and 429 with ``Retry-After`` (a
secondary rate limit). Answers carry ``X-GitHub-Api-Version-Selected`` and
``X-GitHub-Request-Id``.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from hookproof.simulator.errors import WorldError
from hookproof.simulator.server import clock
from hookproof.simulator.server.holds import answer_late
from hookproof.simulator.server.models import PROVIDER_ERRORS
from hookproof.simulator.server.state import ServerState, bearer_token
from hookproof.simulator.world.github import GitHubWorld

#: The REST API version the simulator answers at (GitHub's current calendar version).
API_VERSION = "2022-11-28"
#: The object types this API serves (what a receiver can fetch; `scenarios.world_plans`).
SERVED_TYPES: frozenset[str] = frozenset({"issue", "pull_request"})

_DOCS = {
    "issue": "https://docs.github.com/rest/issues/issues#get-an-issue",
    "pull_request": "https://docs.github.com/rest/pulls/pulls#get-a-pull-request",
}


def github_error(status: int, message: str, docs: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """An error in GitHub's REST shape."""
    return JSONResponse({"message": message, "documentation_url": docs, "status": str(status)}, status_code=status,
                        headers={**_headers(), **(headers or {})})


def _headers() -> dict[str, str]:
    return {"X-GitHub-Api-Version-Selected": API_VERSION, "X-GitHub-Request-Id": uuid.uuid4().hex[:20].upper()}


def issue_view(pull: dict[str, Any]) -> dict[str, Any]:
    """The issues API's view of a pull request: issue fields, plus a ``pull_request`` link object."""
    issue_url = pull["issue_url"]
    return {
        "url": issue_url, "repository_url": pull["base"]["repo"]["url"], "labels_url": f"{issue_url}/labels{{/name}}",
        "comments_url": f"{issue_url}/comments", "events_url": f"{issue_url}/events", "html_url": pull["html_url"],
        "id": pull["id"], "node_id": pull["node_id"], "number": pull["number"], "title": pull["title"],
        "user": pull["user"], "labels": pull["labels"], "state": pull["state"], "locked": pull["locked"],
        "assignee": pull["assignee"], "assignees": pull["assignees"], "milestone": pull["milestone"],
        "comments": pull["comments"], "created_at": pull["created_at"], "updated_at": pull["updated_at"],
        "closed_at": pull["closed_at"], "author_association": pull["author_association"],
        "active_lock_reason": pull["active_lock_reason"], "draft": pull["draft"],
        "pull_request": {"url": pull["url"], "html_url": pull["html_url"], "diff_url": pull["diff_url"],
                         "patch_url": pull["patch_url"], "merged_at": pull["merged_at"]},
        "body": pull["body"], "timeline_url": f"{issue_url}/timeline", "performed_via_github_app": None,
        "state_reason": None,
    }


def find(state: ServerState, owner: str, repo: str, number: int, *,
         stale: bool) -> tuple[str, str, dict[str, Any]] | None:
    """``(object id, object type, snapshot)`` of issue or pull request `number` of
    `owner/repo`, at the served version (the one before it when `stale`), or None."""
    for world in state.iter_worlds_newest_first():
        if not isinstance(world, GitHubWorld):
            continue
        object_id = world.find(f"{owner}/{repo}", number)
        if object_id is None:
            continue
        try:
            snapshot = clock.served_snapshot(world, object_id, stale=stale)
            kind = world.object_type(object_id)
        except WorldError:
            return None
        return object_id, kind, snapshot
    return None


def github_router(state: ServerState) -> APIRouter:
    """The GitHub REST routes over `state`'s served worlds (see the module docstring)."""
    router = APIRouter(tags=["github"])

    async def answer(request: Request, owner: str, repo: str, number: int, wanted: str) -> JSONResponse:
        docs = _DOCS[wanted]
        token = bearer_token(request.headers.get("authorization", ""), ("bearer", "token"))
        if token is None:
            return github_error(401, "Requires authentication", docs)
        if not state.accepts(token):
            return github_error(401, "Bad credentials", docs)
        decision = state.switches.decide(f"{owner}/{repo}#{number}")
        if decision.retry_after_s is not None:
            return github_error(429, "You have exceeded a secondary rate limit. Please wait a few minutes before you "
                                     "try again.", docs, {"Retry-After": str(decision.retry_after_s),
                                                          "X-RateLimit-Remaining": "0"})
        if decision.slow_s > 0:
            await asyncio.sleep(decision.slow_s)
        if decision.status is not None:
            return github_error(decision.status, "Server Error" if decision.status >= 500 else "Injected error", docs)
        with state.lock:
            found = None if decision.not_found else find(state, owner, repo, number, stale=decision.stale)
        if found is None:
            return github_error(404, "Not Found", docs)
        object_id, kind, snapshot = found
        status = snapshot.pop("hookproof_status", None) or snapshot.get("state")  # a pull request's: merged too
        if wanted == "pull_request" and kind != "pull_request":
            return github_error(404, "Not Found", docs)
        state.served.add(object_id, status)  # what a fetching receiver decided on
        body = issue_view(snapshot) if wanted == "issue" and kind == "pull_request" else snapshot
        await answer_late(state.holds, f"{owner}/{repo}#{number}")  # read on arrival, answered late
        return JSONResponse(body, headers=_headers())

    @router.get("/repos/{owner}/{repo}/issues/{issue_number}", operation_id="github_get_issue", responses=PROVIDER_ERRORS)
    async def get_issue(request: Request, owner: str, repo: str, issue_number: int) -> JSONResponse:
        """An issue (or the issue view of a pull request) of the repository world."""
        return await answer(request, owner, repo, issue_number, "issue")

    @router.get("/repos/{owner}/{repo}/pulls/{pull_number}", operation_id="github_get_pull_request", responses=PROVIDER_ERRORS)
    async def get_pull(request: Request, owner: str, repo: str, pull_number: int) -> JSONResponse:
        """A pull request of the repository world."""
        return await answer(request, owner, repo, pull_number, "pull_request")

    return router
