// A broken twin of github_app.js: the same GitHub App that keys a re-run by what stays the same
// across re-runs, a suite's re-run by the suite's id and a check run's by its suite and name, so a
// user's second "Re-run all checks", or second "Re-run" of one check, is answered 200 and starts
// no job (`lost` on the second `rerun:` and `rerun-run:` keys).
//
// Usage: node github_app_rerun_once.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_rerun_once", { reruns: "once" });
