"""The provider API's GitHub REST routes, over real HTTP on 127.0.0.1.

``GET /repos/{owner}/{repo}/issues/{n}`` and ``/pulls/{n}`` serve the repository world's
issues and pull requests from the same truth the webhooks were rendered from, at the
version the deliveries so far announce, with the provider API's switches.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from hookproof.simulator.profiles import get_profile
from hookproof.simulator.server import ServerState, clock, run_server
from hookproof.simulator.server.state import DEFAULT_API_KEY
from hookproof.simulator.world import GitHubWorld, World

AUTH = {"Authorization": f"token {DEFAULT_API_KEY}"}


@pytest.fixture
def served() -> Iterator[tuple[GitHubWorld, ServerState, str]]:
    world = GitHubWorld(21)
    world.lifecycle()
    billing = World(3)
    billing.lifecycle()
    state = ServerState([billing, world])
    with run_server(state) as handle:
        yield world, state, handle.url


def get(base: str, path: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.get(base + path, headers=AUTH if headers is None else headers, timeout=5.0)


def test_issue_and_pull_request_are_the_webhooks_objects(served: tuple[GitHubWorld, ServerState, str]) -> None:
    world, _, base = served
    full = world.repository()["full_name"]
    profile = get_profile("github")
    last_issue = [e for e in world.events if e.type.startswith("issues.")][-1]
    answer = get(base, f"/repos/{full}/issues/1")
    assert answer.status_code == 200
    assert answer.headers["x-github-api-version-selected"] == "2022-11-28"
    assert answer.json() == profile.payload(last_issue)["issue"]
    last_pull = [e for e in world.events if e.type == "pull_request.closed"][0]
    pull = get(base, f"/repos/{full}/pulls/2").json()
    assert pull == profile.payload(last_pull)["pull_request"]
    assert pull["merged"] is True and pull["state"] == "closed"
    as_issue = get(base, f"/repos/{full.upper()}/issues/2").json()  # names match case-insensitively
    assert as_issue["pull_request"]["merged_at"] == pull["merged_at"] and as_issue["number"] == 2


def test_not_found_and_auth_in_githubs_shape(served: tuple[GitHubWorld, ServerState, str]) -> None:
    world, _, base = served
    full = world.repository()["full_name"]
    missing = get(base, f"/repos/{full}/pulls/1")  # number 1 is an issue, not a pull request
    assert (missing.status_code, missing.json()) == (404, {
        "message": "Not Found", "documentation_url": "https://docs.github.com/rest/pulls/pulls#get-a-pull-request",
        "status": "404"})
    assert get(base, f"/repos/{full}/issues/99").status_code == 404
    assert get(base, f"/repos/other/{full.split('/')[1]}/issues/1").status_code == 404
    assert get(base, f"/repos/{full}/issues/1", {}).json()["message"] == "Requires authentication"
    bad = get(base, f"/repos/{full}/issues/1", {"Authorization": "Bearer ghs_wrong"})
    assert (bad.status_code, bad.json()["message"]) == (401, "Bad credentials")
    assert get(base, f"/repos/{full}/issues/1", {"Authorization": f"Bearer {DEFAULT_API_KEY}"}).status_code == 200


def test_served_as_of_the_deliveries_made(served: tuple[GitHubWorld, ServerState, str]) -> None:
    world, _, base = served
    full = world.repository()["full_name"]
    issue = [e for e in world.events if e.object_id == f"{full}#1"]
    closed = next(e for e in issue if e.type == "issues.closed")
    clock.advance(world, [closed])  # reopened not delivered yet: the provider has it closed
    body = get(base, f"/repos/{full}/issues/1").json()
    assert (body["state"], body["updated_at"]) == ("closed", closed.extra["payload"]["issue"]["updated_at"])
    clock.advance(world, [world.events[-1]])
    assert get(base, f"/repos/{full}/issues/1").json()["state"] == "open"


def test_switches(served: tuple[GitHubWorld, ServerState, str]) -> None:
    world, state, base = served
    full = world.repository()["full_name"]
    path = f"/repos/{full}/issues/1"
    key = f"{full}#1"
    state.switches.set(key, not_found=True, times=1)
    assert [get(base, path).status_code for _ in range(2)] == [404, 200]
    state.switches.set(key, status=502, times=1)
    first = get(base, path)
    assert (first.status_code, first.json()["message"]) == (502, "Server Error")
    state.switches.set(key, rate_limit_per_s=1, times=None)
    answers = [get(base, path) for _ in range(2)]
    assert [a.status_code for a in answers] == [200, 429]
    assert int(answers[1].headers["retry-after"]) >= 1
    state.switches.clear(key)
    state.switches.set(key, stale=True, times=1)
    stale: dict[str, Any] = get(base, path).json()
    current: dict[str, Any] = get(base, path).json()
    assert stale["updated_at"] < current["updated_at"]
