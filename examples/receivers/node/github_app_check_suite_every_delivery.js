// A broken twin of github_app.js: the same GitHub App that starts a requested check suite's CI job
// as soon as check_suite.requested arrives, before claiming the delivery (X-GitHub-Delivery): a
// redelivery of the same check_suite.requested, or a concurrent copy, starts a second job for one
// suite (`duplicated` on its suite:{full_name}@{head_sha}:{suite id}).
//
// Usage: node github_app_check_suite_every_delivery.js  (same WEBHOOK_SECRET, PORT, DATABASE as github_app.js)

import { serve } from "./github_app.js";

serve("github_app_check_suite_every_delivery", { suiteJobs: "every-delivery" });
