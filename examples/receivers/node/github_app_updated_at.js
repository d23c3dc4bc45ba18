// A broken twin of github_app.js: the same GitHub App that stores the payload's issue and
// pull request state instead of fetching it, when its updated_at is not older than the
// stored one (>=). Out-of-order deliveries of different seconds are kept in order, but
// updated_at counts whole seconds: a bot labels, comments on and closes an issue in one
// second, and the comment delivered after the close reopens it (`stale`, `regressed`).
// With > instead, the close itself would be dropped. GitHub sends no event time to break
// the tie: only the issue fetched from the REST API tells (github_app.js).
//
// Usage: node github_app_updated_at.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_updated_at", { order: "payload" });
