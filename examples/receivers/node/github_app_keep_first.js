// A broken twin of github_app.js: the same GitHub App that stores the payload's issue and
// pull request state instead of fetching it, when its updated_at is newer than the stored
// one (>): on a tie the state that arrived first is kept. updated_at counts whole seconds:
// a workflow closes and reopens a pull request in one second to re-run CI, and the reopen,
// of the same updated_at as the close, is dropped (the pull request stays closed); a bot
// labels and closes an issue in one second, and the close is dropped (`stale`). With >=
// instead (github_app_updated_at.js), the last arrival wins the tie. GitHub sends no event
// time to break it: only the object fetched from the REST API tells (github_app.js).
//
// Usage: node github_app_keep_first.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_keep_first", { order: "payload-strict" });
