// A broken twin of github_app.js: the same GitHub App that claims each delivery by the
// event, its action and the issue's or pull request's number (repository included)
// instead of the delivery's GUID (X-GitHub-Delivery). Redeliveries and concurrent copies
// are caught, but GitHub sends a new delivery for every change: an issue closed, reopened
// and closed again sends two `issues.closed`, and the second is taken for a copy of the
// first, so the issue stays open (`stale`); a second comment's `issue_comment.created`
// is dropped the same way, its reply never posted (`lost`).
//
// Usage: node github_app_by_number.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

// `issues.closed:{owner}/{repo}#{number}`; events about no issue or pull request by their delivery.
const byNumber = (id, name, payload) => {
  const number = payload.issue?.number ?? payload.number;
  return number === undefined ? id : `${name}.${payload.action}:${payload.repository.full_name}#${number}`;
};

serve("github_app_by_number", { claimKey: byNumber });
