// A broken twin of github_app.js: the same GitHub App that stores each check run's status as its
// delivery arrives (last write wins), without comparing the run's completed_at or started_at: an
// older check_run.created delivered after the run's check_run.completed moves a completed run back
// to queued or in_progress (`stale`, `regressed`).
//
// Usage: node github_app_check_run_overwrite.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_check_run_overwrite", { checkRuns: "arrival" });
