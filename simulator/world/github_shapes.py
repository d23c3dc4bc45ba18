"""GitHub's object shapes, field for field: users, repositories, issues, pull requests, checks.

Pure builders of the JSON objects GitHub puts in webhook payloads, in GitHub's key
order, with GitHub's URL forms (``https://api.github.com/repos/{owner}/{repo}/...``,
``https://github.com/{owner}/{repo}/...``) and legacy global node ids
(base64 of ``"<len>:<Type><id>"``, e.g. ``MDU6SXNzdWUx`` for issue 1).

Sources: GitHub's docs ``webhook-events-and-payloads`` and the published payload
examples and JSON Schemas of npm ``@octokit/webhooks-examples`` /
``@octokit/webhooks-schemas`` 7.6.1 (``definitions.user``, ``repository``, ``issue``,
``issue-comment``, ``pull-request``, ``commit``, ``installation``, ``organization``,
``ping$event.hook``, ``app``, ``commit-simple`` and the ``check_suite`` and ``check_run`` of
``check_suite$requested`` and ``check_run$created``; key order from Octokit's payload examples
``check_suite/requested.with-organization.payload.json`` and
``check_run/created.with-organization.payload.json``); every payload the GitHub world renders is validated against those
schemas in the tests.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

API = "https://api.github.com"
WEB = "https://github.com"

#: The permissions a code-review/CI GitHub App asks for (installation.permissions).
APP_PERMISSIONS: dict[str, str] = {
    "checks": "write", "contents": "read", "issues": "write", "metadata": "read", "pull_requests": "write",
    "statuses": "write",
}
#: The events the App subscribes to (installation.events; names from the schema's enum).
APP_EVENTS: list[str] = ["issue_comment", "issues", "pull_request", "push"]
#: The App's slug, its id and its webhook's id: one App, so the same in every world
#: (``X-GitHub-Hook-Installation-Target-ID`` and ``X-GitHub-Hook-ID`` of every delivery).
APP_SLUG = "hookproof-ci"
APP_ID = 412_807
HOOK_ID = 455_201_936
#: The App's owner (the organization that registered it) and when it was registered (Unix
#: seconds): one App, so the same in every world (the ``app`` of check suites and check runs).
APP_OWNER_LOGIN = "hookproof-dev"
APP_OWNER_ID = 151_204_377
APP_CREATED = 1_704_067_200


def node_id(type_name: str, number: int) -> str:
    """GitHub's legacy global node id: base64 of ``"<len(type):02d>:<type><number>"``
    (``node_id("Issue", 444500041) == "MDU6SXNzdWU0NDQ1MDAwNDE="``)."""
    raw = f"{len(type_name):02d}:{type_name}{number}"
    return base64.b64encode(raw.encode("ascii")).decode("ascii")


def iso(seconds: int) -> str:
    """Unix seconds as GitHub writes timestamps: ``2019-05-15T15:20:18Z`` (UTC)."""
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def user(login: str, user_id: int, kind: str = "User") -> dict[str, Any]:
    """A ``user`` object (``type`` is ``User``, ``Organization`` or ``Bot``)."""
    url = f"{API}/users/{login}"
    return {
        "login": login, "id": user_id, "node_id": node_id(kind, user_id),
        "avatar_url": f"https://avatars.githubusercontent.com/u/{user_id}?v=4", "gravatar_id": "",
        "url": url, "html_url": f"{WEB}/{login}", "followers_url": f"{url}/followers",
        "following_url": f"{url}/following{{/other_user}}", "gists_url": f"{url}/gists{{/gist_id}}",
        "starred_url": f"{url}/starred{{/owner}}{{/repo}}", "subscriptions_url": f"{url}/subscriptions",
        "organizations_url": f"{url}/orgs", "repos_url": f"{url}/repos", "events_url": f"{url}/events{{/privacy}}",
        "received_events_url": f"{url}/received_events", "type": kind, "site_admin": False,
    }


def organization(login: str, org_id: int) -> dict[str, Any]:
    """An ``organization`` object (the payload's top-level ``organization``)."""
    url = f"{API}/orgs/{login}"
    return {
        "login": login, "id": org_id, "node_id": node_id("Organization", org_id), "url": url,
        "repos_url": f"{url}/repos", "events_url": f"{url}/events", "hooks_url": f"{url}/hooks",
        "issues_url": f"{url}/issues", "members_url": f"{url}/members{{/member}}",
        "public_members_url": f"{url}/public_members{{/member}}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{org_id}?v=4", "description": None,
    }


def repository(owner: dict[str, Any], name: str, repo_id: int, *, created: int, updated: int, pushed: int,
               open_issues: int, default_branch: str = "main", private: bool = True) -> dict[str, Any]:
    """A ``repository`` object owned by `owner` (a `user` object)."""
    full = f"{owner['login']}/{name}"
    url = f"{API}/repos/{full}"
    html = f"{WEB}/{full}"
    return {
        "id": repo_id, "node_id": node_id("Repository", repo_id), "name": name, "full_name": full,
        "private": private, "owner": owner, "html_url": html, "description": None, "fork": False, "url": url,
        "forks_url": f"{url}/forks", "keys_url": f"{url}/keys{{/key_id}}",
        "collaborators_url": f"{url}/collaborators{{/collaborator}}", "teams_url": f"{url}/teams",
        "hooks_url": f"{url}/hooks", "issue_events_url": f"{url}/issues/events{{/number}}",
        "events_url": f"{url}/events", "assignees_url": f"{url}/assignees{{/user}}",
        "branches_url": f"{url}/branches{{/branch}}", "tags_url": f"{url}/tags",
        "blobs_url": f"{url}/git/blobs{{/sha}}", "git_tags_url": f"{url}/git/tags{{/sha}}",
        "git_refs_url": f"{url}/git/refs{{/sha}}", "trees_url": f"{url}/git/trees{{/sha}}",
        "statuses_url": f"{url}/statuses/{{sha}}", "languages_url": f"{url}/languages",
        "stargazers_url": f"{url}/stargazers", "contributors_url": f"{url}/contributors",
        "subscribers_url": f"{url}/subscribers", "subscription_url": f"{url}/subscription",
        "commits_url": f"{url}/commits{{/sha}}", "git_commits_url": f"{url}/git/commits{{/sha}}",
        "comments_url": f"{url}/comments{{/number}}", "issue_comment_url": f"{url}/issues/comments{{/number}}",
        "contents_url": f"{url}/contents/{{+path}}", "compare_url": f"{url}/compare/{{base}}...{{head}}",
        "merges_url": f"{url}/merges", "archive_url": f"{url}/{{archive_format}}{{/ref}}",
        "downloads_url": f"{url}/downloads", "issues_url": f"{url}/issues{{/number}}",
        "pulls_url": f"{url}/pulls{{/number}}", "milestones_url": f"{url}/milestones{{/number}}",
        "notifications_url": f"{url}/notifications{{?since,all,participating}}",
        "labels_url": f"{url}/labels{{/name}}", "releases_url": f"{url}/releases{{/id}}",
        "deployments_url": f"{url}/deployments", "created_at": iso(created), "updated_at": iso(updated),
        "pushed_at": iso(pushed), "git_url": f"git://github.com/{full}.git", "ssh_url": f"git@github.com:{full}.git",
        "clone_url": f"{html}.git", "svn_url": html, "homepage": None, "size": 0, "stargazers_count": 0,
        "watchers_count": 0, "language": "Python", "has_issues": True, "has_projects": True,
        "has_downloads": True, "has_wiki": True, "has_pages": False, "has_discussions": False,
        "forks_count": 0, "mirror_url": None, "archived": False, "disabled": False,
        "open_issues_count": open_issues, "license": None, "allow_forking": False, "is_template": False,
        "web_commit_signoff_required": False, "topics": [], "visibility": "private" if private else "public",
        "forks": 0, "open_issues": open_issues, "watchers": 0, "default_branch": default_branch,
        "custom_properties": {},
    }


def push_repository(repo: dict[str, Any], *, created: int, pushed: int) -> dict[str, Any]:
    """`repo` as a ``push`` payload carries it, in the legacy shape of the push event:
    ``created_at`` and ``pushed_at`` Unix seconds (integers; ``updated_at`` stays ISO 8601),
    ``url`` the repository's web URL, its owner with ``name`` and ``email`` (null for an
    organization), and ``stargazers``, ``master_branch`` and ``organization`` (the owning
    organization's login). Sources: docs ``webhook-events-and-payloads``, the push example
    (``"created_at": 1557933565``, ``"pushed_at": 1557933657``), and push deliveries to
    organization repositories; every other event's repository has ISO strings. The schema
    takes either form of the two times, so only the example tells them apart."""
    owner = repo["owner"]
    out = dict(repo)
    out["owner"] = {"name": owner["login"], "email": None, **owner}
    out["url"] = repo["html_url"]
    out["created_at"], out["pushed_at"] = created, pushed
    out["stargazers"] = repo["stargazers_count"]
    out["master_branch"] = repo["default_branch"]
    if owner["type"] == "Organization":
        out["organization"] = owner["login"]
    return out


#: The labels GitHub gives every new repository (docs.github.com, "Managing labels": default
#: labels); such a label has ``default: true``.
DEFAULT_LABELS = frozenset({"bug", "documentation", "duplicate", "enhancement", "good first issue", "help wanted",
                            "invalid", "question", "wontfix"})


def label(repo: dict[str, Any], name: str, label_id: int, color: str, description: str | None) -> dict[str, Any]:
    """A ``label`` object of `repo`: ``default`` for GitHub's own default labels. Exactly the
    seven fields of the schema's ``label`` (``@octokit/webhooks-schemas`` 7.6.1,
    ``additionalProperties: false``), which ``@octokit/openapi-webhooks-types`` 12.1.0's
    ``webhooks_label`` and the REST ``label`` (``@octokit/openapi-types`` 29.0.1) share. GitHub's
    newer REST description (2026-03-10, as githubkit-schemas models ``webhooks_label``) adds
    ``archived_at`` and ``archived_by``, both nullable; the pinned schema refuses them, so they
    are left out until it accepts them."""
    return {"id": label_id, "node_id": node_id("Label", label_id), "url": f"{repo['url']}/labels/{name}",
            "name": name, "color": color, "default": name in DEFAULT_LABELS, "description": description}


def reactions(url: str) -> dict[str, Any]:
    """An empty ``reactions`` rollup for the object at API `url`."""
    return {"url": f"{url}/reactions", "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0,
            "confused": 0, "heart": 0, "rocket": 0, "eyes": 0}


def issue(repo: dict[str, Any], number: int, issue_id: int, author: dict[str, Any], *, title: str, body: str,
          created: int) -> dict[str, Any]:
    """An open ``issue`` of `repo`, as at creation."""
    url = f"{repo['url']}/issues/{number}"
    return {
        "url": url, "repository_url": repo["url"], "labels_url": f"{url}/labels{{/name}}",
        "comments_url": f"{url}/comments", "events_url": f"{url}/events",
        "html_url": f"{repo['html_url']}/issues/{number}", "id": issue_id, "node_id": node_id("Issue", issue_id),
        "number": number, "title": title, "user": author, "labels": [], "state": "open", "locked": False,
        "assignee": None, "assignees": [], "milestone": None, "comments": 0, "created_at": iso(created),
        "updated_at": iso(created), "closed_at": None, "author_association": "MEMBER",
        "active_lock_reason": None, "body": body, "reactions": reactions(url),
        "timeline_url": f"{url}/timeline", "performed_via_github_app": None, "state_reason": None,
    }


def issue_comment(issue_obj: dict[str, Any], comment_id: int, author: dict[str, Any], *, body: str,
                  created: int) -> dict[str, Any]:
    """An ``issue-comment`` on `issue_obj`."""
    repo_api = issue_obj["repository_url"]
    url = f"{repo_api}/issues/comments/{comment_id}"
    return {
        "url": url, "html_url": f"{issue_obj['html_url']}#issuecomment-{comment_id}", "issue_url": issue_obj["url"],
        "id": comment_id, "node_id": node_id("IssueComment", comment_id), "user": author,
        "created_at": iso(created), "updated_at": iso(created), "author_association": "MEMBER", "body": body,
        "reactions": reactions(url), "performed_via_github_app": None,
    }


def pull_request(repo: dict[str, Any], number: int, pr_id: int, author: dict[str, Any], *, title: str, body: str,
                 head_ref: str, head_sha: str, base_sha: str, created: int) -> dict[str, Any]:
    """An open ``pull-request`` of `repo` from branch `head_ref` into the default branch."""
    url = f"{repo['url']}/pulls/{number}"
    html = f"{repo['html_url']}/pull/{number}"
    issue_url = f"{repo['url']}/issues/{number}"
    owner = repo["owner"]
    return {
        "url": url, "id": pr_id, "node_id": node_id("PullRequest", pr_id), "html_url": html,
        "diff_url": f"{html}.diff", "patch_url": f"{html}.patch", "issue_url": issue_url, "number": number,
        "state": "open", "locked": False, "title": title, "user": author, "body": body,
        "created_at": iso(created), "updated_at": iso(created), "closed_at": None, "merged_at": None,
        "merge_commit_sha": None, "assignee": None, "assignees": [], "requested_reviewers": [],
        "requested_teams": [], "labels": [], "milestone": None, "draft": False,
        "commits_url": f"{url}/commits", "review_comments_url": f"{url}/comments",
        "review_comment_url": f"{repo['url']}/pulls/comments{{/number}}", "comments_url": f"{issue_url}/comments",
        "statuses_url": f"{repo['url']}/statuses/{head_sha}",
        "head": {"label": f"{owner['login']}:{head_ref}", "ref": head_ref, "sha": head_sha, "user": owner,
                 "repo": repo},
        "base": {"label": f"{owner['login']}:{repo['default_branch']}", "ref": repo["default_branch"],
                 "sha": base_sha, "user": owner, "repo": repo},
        "_links": {
            "self": {"href": url}, "html": {"href": html}, "issue": {"href": issue_url},
            "comments": {"href": f"{issue_url}/comments"}, "review_comments": {"href": f"{url}/comments"},
            "review_comment": {"href": f"{repo['url']}/pulls/comments{{/number}}"},
            "commits": {"href": f"{url}/commits"}, "statuses": {"href": f"{repo['url']}/statuses/{head_sha}"},
        },
        "author_association": "MEMBER", "auto_merge": None, "active_lock_reason": None, "merged": False,
        "mergeable": None, "rebaseable": None, "mergeable_state": "unknown", "merged_by": None, "comments": 0,
        "review_comments": 0, "maintainer_can_modify": False, "commits": 1, "additions": 3, "deletions": 1,
        "changed_files": 1,
    }


def commit(repo: dict[str, Any], sha: str, tree_sha: str, author: dict[str, Any], *, message: str, at: int,
           path: str) -> dict[str, Any]:
    """A push payload's ``commit`` (author and committer are `author`, as a ``committer``)."""
    person = {"name": author["login"], "email": f"{author['id']}+{author['login']}@users.noreply.github.com",
              "username": author["login"]}
    return {"id": sha, "tree_id": tree_sha, "distinct": True, "message": message, "timestamp": iso(at),
            "url": f"{repo['html_url']}/commit/{sha}", "author": dict(person), "committer": dict(person),
            "added": [], "removed": [], "modified": [path]}


def installation(installation_id: int, account: dict[str, Any], app_id: int, *, created: int) -> dict[str, Any]:
    """A full ``installation`` object (installation events) of the App on `account`."""
    return {
        "id": installation_id, "account": account, "repository_selection": "selected",
        "access_tokens_url": f"{API}/app/installations/{installation_id}/access_tokens",
        "repositories_url": f"{API}/installation/repositories",
        "html_url": f"{WEB}/organizations/{account['login']}/settings/installations/{installation_id}",
        "app_id": app_id, "app_slug": APP_SLUG, "target_id": account["id"], "target_type": account["type"],
        "permissions": dict(APP_PERMISSIONS), "events": list(APP_EVENTS), "created_at": created,
        "updated_at": created, "single_file_name": None, "has_multiple_single_files": False,
        "single_file_paths": [], "suspended_at": None, "suspended_by": None,
    }


def installation_lite(installation_id: int) -> dict[str, Any]:
    """The ``installation`` every payload sent to a GitHub App carries: id and node id."""
    return {"id": installation_id, "node_id": node_id("IntegrationInstallation", installation_id)}


def hook(hook_id: int, app_id: int, url: str, *, created: int) -> dict[str, Any]:
    """A ping payload's ``hook``: the App's webhook configuration."""
    return {
        "type": "App", "id": hook_id, "name": "web", "active": True, "events": list(APP_EVENTS),
        "config": {"content_type": "json", "insecure_ssl": "0", "url": url},
        "updated_at": iso(created), "created_at": iso(created), "app_id": app_id,
        "deliveries_url": f"{API}/app/hook/deliveries", "url": f"{API}/app/hook",
        "ping_url": f"{API}/app/hook/pings",
    }


def app() -> dict[str, Any]:
    """The App itself (``app`` of a check suite or check run): ``hookproof-ci``, owned by
    `APP_OWNER_LOGIN`, with its permissions and events (the schema's ``app``, the key order of
    Octokit's check payload examples; ``slug``, which the examples leave out and the schema allows,
    after ``id`` as GitHub's ``integration`` in ``@octokit/openapi-webhooks-types`` lists it)."""
    return {
        "id": APP_ID, "slug": APP_SLUG, "node_id": node_id("App", APP_ID),
        "owner": user(APP_OWNER_LOGIN, APP_OWNER_ID, "Organization"), "name": "hookproof CI", "description": "",
        "external_url": f"https://{APP_SLUG}.example.com", "html_url": f"{WEB}/apps/{APP_SLUG}",
        "created_at": iso(APP_CREATED), "updated_at": iso(APP_CREATED), "permissions": dict(APP_PERMISSIONS),
        "events": list(APP_EVENTS),
    }


def commit_simple(commit_obj: dict[str, Any]) -> dict[str, Any]:
    """A check suite's ``head_commit`` (the schema's ``commit-simple``) from a push's `commit_obj`:
    id, tree, message, time, and author and committer as name and email alone."""
    def person(p: dict[str, Any]) -> dict[str, Any]:
        return {"name": p["name"], "email": p["email"]}

    return {"id": commit_obj["id"], "tree_id": commit_obj["tree_id"], "message": commit_obj["message"],
            "timestamp": commit_obj["timestamp"], "author": person(commit_obj["author"]),
            "committer": person(commit_obj["committer"])}


def check_pull_request(pr: dict[str, Any]) -> dict[str, Any]:
    """A pull request as a check suite or run lists it (``check_suite.pull_requests`` and
    ``check_run.pull_requests`` items: ``url``, ``id``, ``number``, ``head`` and ``base`` each
    ``ref``, ``sha`` and ``repo`` ``{id, url, name}``; docs.github.com "Webhook events and payloads",
    ``check_suite``; ``check-run-pull-request`` of ``@octokit/webhooks-schemas``), from `pr` (a
    `pull_request`) as it is now."""
    def ref(side: dict[str, Any]) -> dict[str, Any]:
        repo = side["repo"]
        return {"ref": side["ref"], "sha": side["sha"],
                "repo": {"id": repo["id"], "url": repo["url"], "name": repo["name"]}}
    return {"url": pr["url"], "id": pr["id"], "number": pr["number"], "head": ref(pr["head"]),
            "base": ref(pr["base"])}


def check_suite(repo: dict[str, Any], suite_id: int, *, head_branch: str, before: str, head: dict[str, Any],
                created: int, pull_requests: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The App's ``check_suite`` for a pushed `head` (a push's commit) of `repo`'s `head_branch`,
    as GitHub creates it: ``queued``, no conclusion, no check run yet (``latest_check_runs_count``
    0), ``pull_requests`` the open pull requests whose head is that branch (`check_pull_request`
    items; none for a push to the default branch). ``rerequestable`` and
    ``runs_rerequestable`` are left out: ``check_suite$rerequested`` (7.6.1) refuses them and
    the other actions' schemas do not require them."""
    url = f"{repo['url']}/check-suites/{suite_id}"
    return {
        "id": suite_id, "node_id": node_id("CheckSuite", suite_id), "head_branch": head_branch,
        "head_sha": head["id"], "status": "queued", "conclusion": None, "url": url, "before": before,
        "after": head["id"], "pull_requests": list(pull_requests or []), "app": app(), "created_at": iso(created),
        "updated_at": iso(created), "latest_check_runs_count": 0, "check_runs_url": f"{url}/check-runs",
        "head_commit": commit_simple(head),
    }


#: The fields of a check suite a check run carries (``check_run.check_suite``, whose schema
#: refuses the suite's others: ``latest_check_runs_count``, ``check_runs_url``, ``head_commit``).
RUN_SUITE_FIELDS: tuple[str, ...] = ("id", "node_id", "head_branch", "head_sha", "status", "conclusion", "url",
                                     "before", "after", "pull_requests", "app", "created_at", "updated_at")


def check_run(repo: dict[str, Any], run_id: int, name: str, suite: dict[str, Any], *, status: str,
              started: int) -> dict[str, Any]:
    """A ``check_run`` named `name` the App created in `suite` (a `check_suite`), ``queued`` or
    ``in_progress`` (`status`), started at `started` (GitHub sets ``started_at`` at creation),
    not completed: ``conclusion`` and ``completed_at`` null, an empty output; its ``pull_requests``
    its suite's."""
    url = f"{repo['url']}/check-runs/{run_id}"
    return {
        "id": run_id, "node_id": node_id("CheckRun", run_id), "head_sha": suite["head_sha"],
        "external_id": "", "url": url, "html_url": f"{repo['html_url']}/runs/{run_id}",
        "details_url": f"https://{APP_SLUG}.example.com/runs/{run_id}", "status": status, "conclusion": None,
        "started_at": iso(started), "completed_at": None,
        "output": {"title": None, "summary": None, "text": None, "annotations_count": 0,
                   "annotations_url": f"{url}/annotations"},
        "name": name, "check_suite": {k: suite[k] for k in RUN_SUITE_FIELDS}, "app": app(),
        "pull_requests": copy.deepcopy(suite["pull_requests"]),
    }
