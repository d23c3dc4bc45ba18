// A broken twin of github_app.js: the same GitHub App that keys a requested check suite's CI job
// by the suite's branch (its head_branch), as if a branch had one CI run, so the suite GitHub
// requests for a pull request's next head (pull_request.synchronize), or for the default branch's
// next push, is answered 200 and starts no job (`lost` on those `suite:` keys).
//
// Usage: node github_app_suite_by_branch.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_suite_by_branch", { suites: "by-branch" });
