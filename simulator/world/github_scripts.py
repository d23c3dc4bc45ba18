"""GitHub world scripts: the smallest story that makes the repository world emit an event type."""

from __future__ import annotations

from typing import Callable, Mapping

from hookproof.simulator.errors import WorldError
from hookproof.simulator.events import Event
from hookproof.simulator.world.github import GitHubWorld
from hookproof.simulator.world.github_lifecycle import GITHUB_CHECK_TYPES, GITHUB_EVENT_TYPES


def _reopened(world: GitHubWorld) -> None:
    """An issue opened, closed, then reopened."""
    issue = world.open_issue()
    world.close_issue(issue)
    world.reopen_issue(issue)


def _pull_request_reopened(world: GitHubWorld) -> None:
    """A pull request opened, closed without merging, then reopened."""
    pr = world.open_pull_request()
    world.close_pull_request(pr, merged=False)
    world.reopen_pull_request(pr)


def _unlabeled(world: GitHubWorld) -> None:
    """An issue opened, labeled, then unlabeled."""
    issue = world.open_issue()
    world.label_issue(issue)
    world.unlabel_issue(issue)


def _unsuspended(world: GitHubWorld) -> None:
    """An installation created, suspended, then unsuspended."""
    installation = world.install().object_id
    world.suspend(installation)
    world.unsuspend(installation)


def _repository_removed(world: GitHubWorld) -> None:
    """An installation created, a repository added to it, then removed."""
    installation = world.install().object_id
    world.add_repository(installation)
    world.remove_repository(installation)


def _ci(world: GitHubWorld, then: Callable[[str], object] | None = None) -> None:
    """A push to the default branch and its CI, told as to an App sent the checks' events
    (`GitHubWorld.checks`); then `then` of its check suite's id (a re-run, an action asked)."""
    with world.checks():
        head = world.push()
        suite = world.suite_of(head)
        if suite is None:
            raise WorldError(f"the push of {head} made no check suite", object_id=head)
        if then is not None:
            then(suite)


#: Event type -> a story that makes a fresh world emit it (``hookproof send``).
GITHUB_SCRIPTS: Mapping[str, Callable[[GitHubWorld], object]] = {
    "issues.opened": lambda w: w.open_issue(),
    "issues.edited": lambda w: w.edit_issue(w.open_issue()),
    "issues.closed": lambda w: w.close_issue(w.open_issue()),
    "issues.reopened": lambda w: _reopened(w),
    "issues.labeled": lambda w: w.label_issue(w.open_issue()),
    "issues.unlabeled": _unlabeled,
    "issue_comment.created": lambda w: w.comment(w.open_issue()),
    "issue_comment.edited": lambda w: w.edit_comment(w.comment(w.open_issue())),
    "issue_comment.deleted": lambda w: w.delete_comment(w.comment(w.open_issue())),
    "pull_request.opened": lambda w: w.open_pull_request(),
    "pull_request.edited": lambda w: w.edit_pull_request(w.open_pull_request()),
    "pull_request.synchronize": lambda w: w.synchronize(w.open_pull_request()),
    "pull_request.closed": lambda w: w.close_pull_request(w.open_pull_request(), merged=True),
    "pull_request.reopened": lambda w: _pull_request_reopened(w),
    "push": lambda w: w.push(),
    "installation.created": lambda w: w.install(),
    "installation.deleted": lambda w: w.uninstall(w.install().object_id),
    "installation.suspend": lambda w: w.suspend(w.install().object_id),
    "installation.unsuspend": _unsuspended,
    "installation_repositories.added": lambda w: w.add_repository(w.install().object_id),
    "installation_repositories.removed": _repository_removed,
    "ping": lambda w: w.ping(),
    # the checks' (an App listing them: told as to one, `GitHubWorld.checks`): a push's CI (its
    # suite requested and completed, two runs created and completed), or a re-run after it
    "check_suite.requested": lambda w: _ci(w),
    "check_suite.completed": lambda w: _ci(w),
    "check_run.created": lambda w: _ci(w),
    "check_run.completed": lambda w: _ci(w),
    "check_suite.rerequested": lambda w: _ci(w, lambda suite: w.rerequest_suite(suite)),
    "check_run.rerequested": lambda w: _ci(w, lambda suite: w.rerequest_check_run(w.runs_of(suite)[1])),
    "check_run.requested_action": lambda w: _ci(w, lambda suite: w.request_action(w.runs_of(suite)[0])),
}


def github_events_of_type(world: GitHubWorld, event_type: str, count: int = 1) -> list[Event]:
    """Run the story for `event_type` `count` times; the emitted events of that type.

    Raises WorldError naming the known types for a type the world does not emit.
    """
    script = GITHUB_SCRIPTS.get(event_type)
    if script is None:
        known = ", ".join(GITHUB_EVENT_TYPES + GITHUB_CHECK_TYPES)
        raise WorldError(f"the GitHub profile sends no event {event_type!r} (known: {known})")
    start = len(world.events)
    for _ in range(count):
        script(world)
    return [e for e in world.events[start:] if e.type == event_type]
