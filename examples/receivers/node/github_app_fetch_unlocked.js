// A broken twin of github_app.js: the same GitHub App, fetching each issue and pull request from
// the REST API as it does, but without its per-object lock: each answer is written when its
// updated_at is not older than the stored one (>=). updated_at counts whole seconds: a triage bot
// labels and closes an issue in one second, the label's fetch is answered late (read before the
// close, answered after it), and its answer, of the same updated_at as the close's, lands last:
// the issue stays open (`fetch-overtaken` -> stale). No comparison of updated_at breaks that tie
// (with > an in-order tie keeps the older answer: `stale-after-newer`); one fetch-and-write at a
// time per object does (github_app.js).
//
// Usage: node github_app_fetch_unlocked.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_fetch_unlocked", { order: "fetch-unlocked" });
